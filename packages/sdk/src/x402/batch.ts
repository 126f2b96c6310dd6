// x402's `batch-settlement` scheme on Solana, the payer's side in its client mode (the payer's
// key signs every voucher), plain and trust-gate's gated variant: the wire types, the channel's
// open and the vouchers of a session byte for byte as the Rust SDK's `batch` and `session`
// modules build them, and a `SchemeNetworkClient` for @x402/core that keeps one session per
// offer. `@x402/svm` 2.27 ships no batch-settlement code: the wire follows the scheme's SVM
// specification, as the facilitator reads it.
//
// A session: the first paid request carries the open (the "deposit") with the voucher of its
// price; each further request carries a voucher alone, its cumulative amount the price more.
// The facilitator checks vouchers off chain and redeems the latest on chain; the client's
// refund ends the session (sealed at the latest voucher, the rest back to the payer).

import { createHash, randomBytes } from 'node:crypto';
import {
  generateKeyPairSigner,
  getAddressEncoder,
  getBase58Decoder,
  getBase58Encoder,
  signBytes,
  verifySignature,
  type Address,
  type KeyPairSigner,
  type SignatureBytes,
  type Transaction,
  type TransactionSigner,
} from '@solana/kit';
import type { x402Client } from '@x402/core/client';
import type { PaymentPayloadContext, PaymentPayloadResult, PaymentRequirements, SchemeClientHooks, SchemeNetworkClient } from '@x402/core/types';
import type { LookupTable, TokenProgramId, TrustGateRpc } from '../chain.js';
import { PAYMENT_CHANNELS_PROGRAM, voucherMessage } from '../channels.js';
import { TrustGateInputError } from '../errors.js';
import type { Builder } from '../instructions.js';
import { rpcOf } from '../rpc.js';
import { toBase64, type Lifetime } from '../settle.js';
import { addressField, gatedOpen, offerAccounts, offerAmount, openChannel, openContext, optionalString, registerOn, requiredString, schemeOf, tokenProgramOf, u64Field, type ChannelClientOptions, type SessionGate } from './channel.js';

// Shared with upto.ts, and public from here as before.
export { MEMO_PROGRAM, OPEN_UNIT_LIMIT, tokenProgramOf, type SessionGate } from './channel.js';

/** The stock scheme's name. */
export const SCHEME_BATCH = 'batch-settlement';
/** trust-gate's gated variant: the payer's policy decides the deposit at the open. */
export const SCHEME_GATED_BATCH = 'trust-gate-batch-settlement';
/** The only flow the scheme knows (`extra.paymentFlow`, when present). */
export const PAYMENT_FLOW_AUTHORIZATION = 'authorization';
/** The range of `extra.withdrawDelay` (the channel's grace period, seconds). */
export const MIN_WITHDRAW_DELAY = 900;
export const MAX_WITHDRAW_DELAY = 2_592_000;
/** The Memo that binds the receiver's authorizer into a channel at its open. */
export const BINDING_MEMO_PREFIX = 'x402:batch-settlement:svm:rcvauth:v1:';
/** The most channels one claim or settle transaction carries. */
export const MAX_CHANNELS_PER_TRANSACTION = 4;
/** The payload types of the specification this facilitator does not serve (server mode's). */
export const UNSERVED_TYPES = ['authorization'] as const;
/** The domain of a close authorization's digest (the Rust SDK's `batch::CLOSE_DOMAIN`). */
export const CLOSE_DOMAIN = 'x402:batch-settlement:svm:close:v1';

/** The binding Memo's text for `receiverAuthorizer`. */
export function bindingMemo(receiverAuthorizer: string): string {
  return `${BINDING_MEMO_PREFIX}${receiverAuthorizer}`;
}

/**
 * The facilitator's reason strings for `batch-settlement` (the specification's), and its own
 * for what it adds: the same strings as the Rust SDK's `batch::reason`.
 */
export const BATCH_REASONS = {
  unsupportedScheme: 'unsupported_scheme',
  unsupportedPayloadType: 'unsupported_payload_type',
  networkMismatch: 'network_mismatch',
  payloadType: 'invalid_batch_settlement_svm_payload_type',
  paymentFlow: 'invalid_batch_settlement_svm_payment_flow',
  tokenProgram: 'invalid_batch_settlement_svm_token_program',
  voucherSignature: 'invalid_batch_settlement_svm_voucher_signature',
  channelIdMismatch: 'invalid_batch_settlement_svm_channel_id_mismatch',
  feePayerMismatch: 'invalid_batch_settlement_svm_fee_payer_mismatch',
  receiverAuthorizerMismatch: 'invalid_batch_settlement_svm_receiver_authorizer_mismatch',
  closeState: 'invalid_batch_settlement_svm_close_state',
  channelClosing: 'invalid_batch_settlement_svm_channel_closing',
  withdrawDelayMismatch: 'invalid_batch_settlement_svm_withdraw_delay_mismatch',
  withdrawDelayOutOfRange: 'invalid_batch_settlement_svm_withdraw_delay_out_of_range',
  cumulativeAmountMismatch: 'invalid_batch_settlement_svm_cumulative_amount_mismatch',
  cumulativeExceedsDeposit: 'invalid_batch_settlement_svm_cumulative_exceeds_deposit',
  voucherExpiry: 'invalid_batch_settlement_svm_voucher_expiry',
  setupTransaction: 'invalid_batch_settlement_svm_setup_transaction',
  settlementSimulation: 'invalid_batch_settlement_svm_settlement_simulation',
  channelState: 'invalid_batch_settlement_svm_channel_state',
  duplicateSettlement: 'duplicate_settlement',
  settlementPending: 'settlement_pending',
  transactionFailed: 'transaction_failed',
  invalidRequirements: 'invalid_batch_settlement_svm_payment_requirements',
  serverModeUnsupported: 'invalid_batch_settlement_svm_server_mode_unsupported',
  priceOverPerPaymentCap: 'price_over_per_payment_cap',
  payerPaused: 'payer_kill_switch_paused',
  overGatedDeposit: 'voucher_over_gated_deposit',
  unknownChannel: 'invalid_batch_settlement_svm_unknown_channel',
  closeAuthorization: 'invalid_batch_settlement_svm_close_authorization',
  receiverBindingUnavailable: 'invalid_batch_settlement_svm_receiver_binding_unavailable',
  closeAmountUnsupported: 'invalid_batch_settlement_svm_close_amount_unsupported',
  refundTransaction: 'invalid_batch_settlement_svm_refund_transaction',
  serviceUnauthenticated: 'service_unauthenticated',
  depositUnconfirmed: 'deposit_unconfirmed',
} as const;

/** `extra` of a `batch-settlement` offer. */
export interface BatchExtra {
  /** The facilitator's sponsor: fee payer, the channel's rent payer and zero-share payee. */
  feePayer: string;
  /** The key bound into each channel by the open's binding Memo. */
  receiverAuthorizer: string;
  /** The channel's grace period, `MIN_WITHDRAW_DELAY`..=`MAX_WITHDRAW_DELAY` seconds. */
  withdrawDelay: number;
  /** The mint's token program. */
  tokenProgram: string;
  paymentFlow?: string;
  /** `client` (the default) or `server`: only `client` is served. */
  voucherSigner?: string;
  operator?: string;
  memo?: string;
  recentBlockhash?: string;
  /** A number, or a decimal string. */
  recentSlot?: number | string;
  minDeposit?: string;
  maxIdleSecs?: number;
}

/** The channel a payload is about, as the client describes it (its address follows). */
export interface ChannelConfig {
  /** The payer's wallet: the open's payer. */
  payer: string;
  /** The channel's voucher key. */
  payerAuthorizer: string;
  /** `payTo`: 100 % of the distribution. */
  receiver: string;
  receiverAuthorizer: string;
  /** The mint. */
  token: string;
  withdrawDelay: number;
  /** The open's salt, a decimal u64. */
  salt: string;
  /** A JSON number, as the specification has it. */
  openSlot: number;
  voucherSigner?: string;
}

/** A voucher on the wire: the cumulative amount the channel may pay, never expiring. */
export interface BatchVoucher {
  channelId: string;
  maxClaimableAmount: string;
  /** Always 0 in this scheme. */
  expiresAt: number;
  /** Base58 of the voucher key's Ed25519 signature of the program's voucher message. */
  signature: string;
}

/** The deposit a first request carries: the open, signed by the payer. */
export interface DepositTx {
  amount: string;
  /** Base64 of the open transaction, the fee payer's signature empty. */
  transaction: string;
}

/** One channel of a server's `claim`. */
export interface Claim {
  channelId: string;
  channelConfig: ChannelConfig;
  voucher: BatchVoucher;
}

/** One channel of a server's `settle`. */
export interface SettleChannel {
  channelId: string;
  channelConfig: ChannelConfig;
}

export interface DepositPayload {
  type: 'deposit';
  channelConfig: ChannelConfig;
  voucher: BatchVoucher;
  deposit: DepositTx;
}
export interface VoucherPayload {
  type: 'voucher';
  channelConfig: ChannelConfig;
  voucher: BatchVoucher;
}
/**
 * The receiver authorizer's consent to one cooperative close (a refund or a seal): its Ed25519
 * signature of `closeDigest`, good strictly before `validBefore` (unix seconds).
 */
export interface CloseAuthorization {
  validBefore: number;
  signature?: string;
}

/**
 * The client ends the session with its latest voucher (the amount the server accepted); the
 * server adds its `closeAuthorization` before forwarding it, and the facilitator seals there.
 */
export interface RefundPayload {
  type: 'refund';
  channelConfig: ChannelConfig;
  voucher: BatchVoucher;
  closeAuthorization?: CloseAuthorization;
}
/** The server collects a channel its payer moved to `Closing`, within the grace period. */
export interface SealPayload {
  type: 'seal';
  channelId: string;
  channelConfig: ChannelConfig;
  voucher: BatchVoucher;
  closeAuthorization: CloseAuthorization;
}
export interface ClaimPayload {
  type: 'claim';
  claims: Claim[];
}
export interface SettlePayload {
  type: 'settle';
  channels: SettleChannel[];
}
/** `paymentPayload.payload`, by its `type`. */
export type BatchPayload = DepositPayload | VoucherPayload | RefundPayload | ClaimPayload | SettlePayload | SealPayload;

/** A channel's state as the scheme's answers (and a corrective 402's offer) carry it. */
export interface ChannelState {
  channelId: string;
  /** The deposit. */
  balance: string;
  /** What was applied on chain. */
  totalClaimed: string;
  /** When the payer's `request_close` started the grace period (0: it did not). */
  withdrawRequestedAt: number;
  /** The latest voucher's cumulative amount the facilitator accepted. */
  chargedCumulativeAmount: string;
}

/** The payer's own voucher of the amount the server accepted, in a corrective 402. */
export interface VoucherState {
  signedMaxClaimable: string;
  expiresAt: number;
  signature: string;
}

/** What a close authorization binds (specification section 4.2). */
export interface CloseTerms {
  /** The CAIP-2 network of the offer. */
  network: string;
  /** The facilitator (`extra.feePayer`). */
  feePayer: Address;
  channel: Address;
  maxClaimable: bigint;
  validBefore: bigint;
}

/**
 * What the receiver authorizer signs: SHA-256 of `domain || 0x00 || u16(len(network)).le ||
 * network || programId || feePayer || channelId || u64(maxClaimableAmount).le ||
 * i64(voucherExpiresAt = 0).le || i64(validBefore).le` (the Rust SDK's `CloseTerms::digest`).
 */
export function closeDigest(t: CloseTerms): Uint8Array {
  const enc = (a: Address) => Uint8Array.from(getAddressEncoder().encode(a));
  const network = Buffer.from(t.network, 'utf8');
  const le = (n: bigint, signed: boolean) => {
    const b = Buffer.alloc(8);
    if (signed) b.writeBigInt64LE(n);
    else b.writeBigUInt64LE(u64Field('maxClaimable', n));
    return b;
  };
  const len = Buffer.alloc(2);
  len.writeUInt16LE(Math.min(network.length, 0xffff));
  return Uint8Array.from(
    createHash('sha256')
      .update(Buffer.from(CLOSE_DOMAIN, 'utf8'))
      .update(Buffer.from([0]))
      .update(len)
      .update(network)
      .update(enc(PAYMENT_CHANNELS_PROGRAM))
      .update(enc(t.feePayer))
      .update(enc(t.channel))
      .update(le(t.maxClaimable, false))
      .update(le(0n, true))
      .update(le(t.validBefore, true))
      .digest(),
  );
}

/**
 * A resource server's close authorization, signed by its receiver authorizer (`extra.receiverAuthorizer`):
 * what it adds to a client's refund before forwarding it to the facilitator.
 */
export async function signCloseAuthorization(receiverAuthorizer: KeyPairSigner, t: CloseTerms): Promise<CloseAuthorization> {
  const signature = await signBytes(receiverAuthorizer.keyPair.privateKey, closeDigest(t));
  return { validBefore: Number(t.validBefore), signature: getBase58Decoder().decode(signature) };
}

/**
 * The session's state a corrective 402 carries (`error` is
 * `invalid_batch_settlement_svm_cumulative_amount_mismatch`, an offer's `extra` holds
 * `channelState` and `voucherState`; specification section 4.6), or undefined.
 */
export function correctiveState(required: { error?: string; accepts?: readonly { extra?: Record<string, unknown> }[] } | undefined): { channelState: ChannelState; voucherState: VoucherState } | undefined {
  if (required?.error !== BATCH_REASONS.cumulativeAmountMismatch) return undefined;
  for (const offer of required.accepts ?? []) {
    const c = offer.extra?.channelState as ChannelState | undefined;
    const v = offer.extra?.voucherState as VoucherState | undefined;
    if (c && typeof c === 'object' && v && typeof v === 'object') return { channelState: c, voucherState: v };
  }
  return undefined;
}

/**
 * Reads `extra` of a `batch-settlement` offer and refuses what this client cannot pay: a flow
 * other than `authorization`, server mode, a grace period out of the scheme's range, a token
 * program other than SPL Token and Token-2022. Errors name the field.
 */
export function batchExtraOf(r: Pick<PaymentRequirements, 'extra'>): BatchExtra {
  const o = (r.extra ?? {}) as Record<string, unknown>;
  const withdrawDelay = o.withdrawDelay;
  if (typeof withdrawDelay !== 'number' || !Number.isInteger(withdrawDelay)) {
    throw new TrustGateInputError('extra.withdrawDelay', 'an integer number of seconds expected');
  }
  if (withdrawDelay < MIN_WITHDRAW_DELAY || withdrawDelay > MAX_WITHDRAW_DELAY) {
    throw new TrustGateInputError('extra.withdrawDelay', `${withdrawDelay} is outside ${MIN_WITHDRAW_DELAY}..=${MAX_WITHDRAW_DELAY}`);
  }
  const extra: BatchExtra = {
    feePayer: requiredString(o, 'feePayer'),
    receiverAuthorizer: requiredString(o, 'receiverAuthorizer'),
    withdrawDelay,
    tokenProgram: requiredString(o, 'tokenProgram'),
  };
  for (const k of ['paymentFlow', 'voucherSigner', 'operator', 'memo', 'recentBlockhash', 'minDeposit'] as const) {
    const v = optionalString(o, k);
    if (v !== undefined) extra[k] = v;
  }
  if (o.recentSlot !== undefined) extra.recentSlot = Number(u64Field('extra.recentSlot', o.recentSlot));
  if (o.maxIdleSecs !== undefined) extra.maxIdleSecs = Number(u64Field('extra.maxIdleSecs', o.maxIdleSecs));
  if (extra.minDeposit !== undefined) u64Field('extra.minDeposit', extra.minDeposit);
  if (extra.paymentFlow !== undefined && extra.paymentFlow !== PAYMENT_FLOW_AUTHORIZATION) {
    throw new TrustGateInputError('extra.paymentFlow', `${JSON.stringify(extra.paymentFlow)}: only "${PAYMENT_FLOW_AUTHORIZATION}" is known`);
  }
  // Server mode (the server's key signs the vouchers) is a different protocol, not served.
  if (extra.voucherSigner !== undefined && extra.voucherSigner !== 'client') {
    throw new TrustGateInputError('extra.voucherSigner', `${JSON.stringify(extra.voucherSigner)}: only client mode is paid`);
  }
  if (extra.operator !== undefined) throw new TrustGateInputError('extra.operator', "is server mode's; only client mode is paid");
  tokenProgramOf(extra);
  return extra;
}

/** What a session's channel is opened with (the Rust SDK's `SessionTerms`). */
export interface SessionTerms {
  /** Builds the gate's `gate_channel_open`; needed only when `gate` is set. */
  builder?: Builder;
  /** The offer's `extra` (its `feePayer`, `receiverAuthorizer`, `withdrawDelay`, memo). */
  extra: BatchExtra;
  mint: Address;
  tokenProgram: TokenProgramId;
  payTo: Address;
  /** The payer's wallet (gated: the payer agent's signer), which signs the open. */
  payer: TransactionSigner;
  /** The channel's voucher key (`payerAuthorizer`): the payer's own key or a session key. */
  voucherKey: KeyPairSigner;
  deposit: bigint;
  salt: bigint;
  /** A recent slot of the cluster. */
  openSlot: bigint;
  gate?: SessionGate;
  /** The facilitator's lookup tables, used only when gated (the gated open fits a packet with them). */
  tables?: readonly LookupTable[];
  lifetime: Lifetime;
}

/** An opened session: the open transaction (the payer's signature in, the fee payer's slot empty) and its state. */
export interface OpenedSession {
  transaction: Transaction;
  session: PayerSession;
}

function checkTerms(t: SessionTerms): Address {
  const feePayer = addressField('extra.feePayer', t.extra.feePayer);
  if (typeof t.deposit !== 'bigint' || t.deposit <= 0n) throw new TrustGateInputError('deposit', "a session's deposit is above 0");
  u64Field('deposit', t.deposit);
  u64Field('salt', t.salt);
  // The channel config carries the open slot as a JSON number.
  if (u64Field('openSlot', t.openSlot) > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new TrustGateInputError('openSlot', 'above 2^53: not a JSON number');
  }
  return feePayer;
}

/**
 * The channel's open and the session (the Rust SDK's `SessionTerms::open`): a compute-unit
 * limit, the gate's `gate_channel_open` when gated, the program's `open` (the fee payer as rent
 * payer and payee, 100 % to `payTo`), `extra.memo` when not empty, the binding Memo; a v0
 * transaction paid by `extra.feePayer`, signed by the payer alone.
 */
export async function openSession(t: SessionTerms): Promise<OpenedSession> {
  const feePayer = checkTerms(t);
  const { transaction: tx, channel } = await openChannel({
    ...t,
    feePayer,
    voucherKey: t.voucherKey.address,
    withdrawDelay: t.extra.withdrawDelay,
    memos: [t.extra.memo, bindingMemo(t.extra.receiverAuthorizer)],
  });
  const config: ChannelConfig = {
    payer: t.payer.address,
    payerAuthorizer: t.voucherKey.address,
    receiver: t.payTo,
    receiverAuthorizer: t.extra.receiverAuthorizer,
    token: t.mint,
    withdrawDelay: t.extra.withdrawDelay,
    salt: t.salt.toString(),
    openSlot: Number(t.openSlot),
  };
  return { transaction: tx, session: new PayerSession(config, channel, t.deposit, t.voucherKey) };
}

/** A payer's open session: its channel, and what it signed so far (the Rust SDK's `PayerSession`). */
export class PayerSession {
  /** The cumulative amount of the latest voucher signed. */
  charged = 0n;

  constructor(
    readonly config: ChannelConfig,
    readonly channel: Address,
    readonly deposit: bigint,
    private readonly voucherKey: KeyPairSigner,
  ) {}

  /** What the deposit still covers. */
  get remaining(): bigint {
    return this.deposit - this.charged;
  }

  /** The voucher that pays `price` more; refused past the deposit (open another session). */
  async voucher(price: bigint): Promise<BatchVoucher> {
    const cumulative = this.charged + u64Field('amount', price);
    if (cumulative > this.deposit) {
      throw new TrustGateInputError('amount', `${price} more than the ${this.charged} paid would pass the session's deposit ${this.deposit}`);
    }
    // Taken before the signature's await, so that two vouchers never sign the same charge.
    const before = this.charged;
    this.charged = cumulative;
    try {
      const signature = await signBytes(this.voucherKey.keyPair.privateKey, voucherMessage(this.channel, cumulative, 0n));
      return { channelId: this.channel, maxClaimableAmount: cumulative.toString(), expiresAt: 0, signature: getBase58Decoder().decode(signature) };
    } catch (e) {
      this.charged = before;
      throw e;
    }
  }

  /** A first request's payload: the open and the voucher of its price. */
  async depositPayload(open: Transaction, price: bigint): Promise<DepositPayload> {
    const tx = toBase64(open);
    return {
      type: 'deposit',
      channelConfig: { ...this.config },
      voucher: await this.voucher(price),
      deposit: { amount: this.deposit.toString(), transaction: tx },
    };
  }

  /** A further request's payload. */
  async voucherPayload(price: bigint): Promise<VoucherPayload> {
    return { type: 'voucher', channelConfig: { ...this.config }, voucher: await this.voucher(price) };
  }

  /**
   * The payload that ends the session: its latest voucher (the amount the server accepted, at
   * which the facilitator seals), to which the server adds its close authorization.
   */
  async refundPayload(): Promise<RefundPayload> {
    return { type: 'refund', channelConfig: { ...this.config }, voucher: await this.signed(this.charged) };
  }

  private async signed(cumulative: bigint): Promise<BatchVoucher> {
    const signature = await signBytes(this.voucherKey.keyPair.privateKey, voucherMessage(this.channel, cumulative, 0n));
    return { channelId: this.channel, maxClaimableAmount: cumulative.toString(), expiresAt: 0, signature: getBase58Decoder().decode(signature) };
  }

  /**
   * Resumes from a server's corrective state (a voucher it accepted whose answer was lost, or
   * the other way round; the Rust SDK's `PayerSession::resync`): adopted only when
   * `voucherState` is this session's own signature of this channel and the amount charged is
   * at most what it signs and the deposit. Returns the new base; throws naming the field.
   */
  async resync(channelState: ChannelState, voucherState: VoucherState): Promise<bigint> {
    if (channelState.channelId !== this.channel) {
      throw new TrustGateInputError('channelState.channelId', `${channelState.channelId} is not this session's channel ${this.channel}`);
    }
    const charged = u64Field('channelState.chargedCumulativeAmount', channelState.chargedCumulativeAmount);
    const signed = u64Field('voucherState.signedMaxClaimable', voucherState.signedMaxClaimable);
    let sig: Uint8Array;
    try {
      sig = Uint8Array.from(getBase58Encoder().encode(voucherState.signature));
    } catch {
      throw new TrustGateInputError('voucherState.signature', 'not base58');
    }
    const mine =
      voucherState.expiresAt === 0 &&
      sig.length === 64 &&
      (await verifySignature(this.voucherKey.keyPair.publicKey, sig as SignatureBytes, voucherMessage(this.channel, signed, 0n)));
    if (!mine) throw new TrustGateInputError('voucherState.signature', "not this session's own voucher of the channel: the corrective state is refused");
    if (charged > signed || charged > this.deposit) {
      throw new TrustGateInputError('channelState.chargedCumulativeAmount', `${charged} is above the voucher signed (${signed}) or the deposit (${this.deposit})`);
    }
    this.charged = charged;
    return charged;
  }
}

export interface TrustGateBatchClientOptions extends ChannelClientOptions {
  /** `trust-gate-batch-settlement` (the default) or the stock `batch-settlement`. */
  scheme?: typeof SCHEME_GATED_BATCH | typeof SCHEME_BATCH;
  /** A session's deposit in requests: this many times the price (default 100). */
  requestsPerDeposit?: number;
  /** A session's deposit in atomic units; wins over `requestsPerDeposit`. */
  depositAmount?: bigint;
  /** The voucher key of every session; default a fresh key per session. */
  voucherKey?: KeyPairSigner;
}

const DEFAULT_REQUESTS_PER_DEPOSIT = 100;

/** A session of one offer, with the sessions it replaced when their deposit ran out. */
interface Held {
  current: PayerSession;
  drained: PayerSession[];
}

/**
 * The payer's side of `trust-gate-batch-settlement` (or, with `scheme: 'batch-settlement'`,
 * the stock scheme) for @x402/core's `x402Client`: one session per network, asset, `payTo`
 * and receiver's authorizer. The first request of an offer opens a channel (a deposit
 * payload), the next ones pay with vouchers, and one that the deposit no longer covers opens
 * a new channel. `refund` gives the payloads that end an offer's sessions.
 */
export class TrustGateBatchClientScheme implements SchemeNetworkClient {
  readonly scheme: string;
  /**
   * @x402/core's hook after a paid request: a corrective 402 (the server accepted a voucher
   * whose answer this client lost, or not one it counted) resumes the session it names from
   * the server's state once checked as the session's own voucher, and asks the transport
   * (`@x402/fetch`) to pay again with a fresh payload.
   */
  readonly schemeHooks: SchemeClientHooks = {
    onPaymentResponse: async (ctx) => {
      const state = correctiveState(ctx.paymentRequired);
      if (!state) return;
      for (const held of this.sessions.values()) {
        if (held.current.channel !== state.channelState.channelId) continue;
        await held.current.resync(state.channelState, state.voucherState);
        return { recovered: true };
      }
    },
  };
  /** The CAIP-2 networks (patterns) `registerTrustGateBatchScheme` registers it for. */
  readonly networks: readonly string[];
  private readonly rpc: TrustGateRpc;
  private readonly sessions = new Map<string, Held>();
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(private readonly options: TrustGateBatchClientOptions) {
    this.scheme = schemeOf(options.scheme, SCHEME_GATED_BATCH, SCHEME_BATCH);
    const n = options.requestsPerDeposit;
    if (n !== undefined && (!Number.isSafeInteger(n) || n < 1)) throw new TrustGateInputError('requestsPerDeposit', 'a whole number of requests, at least 1');
    if (options.depositAmount !== undefined) u64Field('depositAmount', options.depositAmount);
    this.networks = options.networks ?? ['solana:*'];
    this.rpc = rpcOf(options);
  }

  private get gated(): boolean {
    return this.scheme === SCHEME_GATED_BATCH;
  }

  async createPaymentPayload(
    x402Version: number,
    requirements: PaymentRequirements,
    context?: PaymentPayloadContext,
  ): Promise<PaymentPayloadResult> {
    const price = offerAmount(this.scheme, x402Version, requirements, context);
    const extra = batchExtraOf(requirements);
    const key = sessionKey(requirements, extra);
    const payload = await this.inTurn(key, () => this.pay(key, requirements, extra, price));
    return { x402Version: 2, payload: payload as unknown as Record<string, unknown> };
  }

  /** The open session of an offer, if any. */
  session(requirements: PaymentRequirements): PayerSession | undefined {
    return this.sessions.get(sessionKey(requirements, batchExtraOf(requirements)))?.current;
  }

  /**
   * The payloads that end every session of the offer this client holds (the current one and
   * those whose deposit ran out), oldest first, and forgets them: the next request opens a
   * new session. Send each as a payment payload of the offer.
   */
  async refund(requirements: PaymentRequirements): Promise<PaymentPayloadResult[]> {
    const key = sessionKey(requirements, batchExtraOf(requirements));
    const held = this.sessions.get(key);
    this.sessions.delete(key);
    if (!held) return [];
    const payloads = await Promise.all([...held.drained, held.current].map((s) => s.refundPayload()));
    return payloads.map((p) => ({ x402Version: 2, payload: p as unknown as Record<string, unknown> }));
  }

  private async pay(key: string, r: PaymentRequirements, extra: BatchExtra, price: bigint): Promise<BatchPayload> {
    const held = this.sessions.get(key);
    if (held && held.current.remaining >= price) return held.current.voucherPayload(price);
    const { transaction: tx, session } = await this.open(r, extra, price);
    const payload = await session.depositPayload(tx, price);
    this.sessions.set(key, { current: session, drained: held ? [...held.drained, held.current] : [] });
    return payload;
  }

  // One call of an offer at a time: two first requests would otherwise open two channels.
  private inTurn<T>(key: string, f: () => Promise<T>): Promise<T> {
    const next = (this.turns.get(key) ?? Promise.resolve()).then(f, f);
    this.turns.set(key, next.catch(() => undefined));
    return next;
  }

  private depositFor(price: bigint, extra: BatchExtra): bigint {
    const chosen = this.options.depositAmount ?? BigInt(this.options.requestsPerDeposit ?? DEFAULT_REQUESTS_PER_DEPOSIT) * price;
    // The server's floor wins over a smaller choice: below it the offer is not served.
    const floor = extra.minDeposit === undefined ? 0n : BigInt(extra.minDeposit);
    const deposit = chosen > floor ? chosen : floor;
    if (deposit < price || deposit === 0n) {
      throw new TrustGateInputError('depositAmount', `${deposit} does not cover one request of ${price}`);
    }
    return u64Field('depositAmount', deposit);
  }

  private async open(r: PaymentRequirements, extra: BatchExtra, price: bigint): Promise<OpenedSession> {
    const { mint, payTo, feePayer } = offerAccounts(r, extra);
    const deposit = this.depositFor(price, extra);
    const [gated, { slot, lifetime }, voucherKey] = await Promise.all([
      this.gated ? gatedOpen(this.rpc, r, this.options.programIds, mint, feePayer, deposit) : undefined,
      openContext(this.rpc),
      // A fresh key per session: a leaked voucher key signs for one channel only.
      this.options.voucherKey ?? generateKeyPairSigner(),
    ]);
    return openSession({
      builder: gated?.builder,
      extra,
      mint,
      tokenProgram: tokenProgramOf(extra),
      payTo,
      payer: this.options.signer,
      voucherKey,
      deposit,
      salt: randomBytes(8).readBigUInt64LE(),
      openSlot: slot,
      gate: gated?.gate,
      tables: gated?.tables ?? [],
      lifetime,
    });
  }
}

/** Which session pays an offer: one per network, asset, `payTo` and receiver's authorizer. */
function sessionKey(r: PaymentRequirements, extra: BatchExtra): string {
  return [r.network, r.asset, r.payTo, extra.receiverAuthorizer].join('|');
}

/**
 * Registers a batch-settlement scheme on an @x402/core `x402Client` (for every Solana network
 * unless `networks` says otherwise) and returns the client. Pass a scheme built with `new
 * TrustGateBatchClientScheme(options)` to keep it at hand for `refund`.
 */
export function registerTrustGateBatchScheme(
  client: x402Client,
  schemeOrOptions: TrustGateBatchClientScheme | TrustGateBatchClientOptions,
): x402Client {
  const scheme = schemeOrOptions instanceof TrustGateBatchClientScheme ? schemeOrOptions : new TrustGateBatchClientScheme(schemeOrOptions);
  return registerOn(client, scheme);
}
