// x402's `upto` scheme on Solana, the payer's side, plain and trust-gate's gated variant
// (`trust-gate-upto`): the open and the payload byte for byte as the Rust SDK's
// `session::UptoTerms::payload` builds them (the wire types of its `upto` module), and a
// `SchemeNetworkClient` for @x402/core's `x402Client` / @x402/fetch.
//
// `upto` pays for metered use: the payer escrows the offer's amount (the ceiling) in a payment
// channel it opens, whose voucher key is the server's (`extra.receiverAuthorizer`); the server
// serves, then charges what was used with its own voucher, and the rest goes back to the
// payer. The payer signs the open only, never a voucher. The gated variant puts the gate's
// `gate_channel_open` before the program's `open`: the payer's policy runs on the ceiling.

import { randomBytes } from 'node:crypto';
import type { Address, Transaction, TransactionSigner } from '@solana/kit';
import type { x402Client } from '@x402/core/client';
import type { PaymentPayloadContext, PaymentPayloadResult, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import { mint as mintOf, type LookupTable, type TokenProgramId, type TrustGateRpc } from '../chain.js';
import { TrustGateInputError } from '../errors.js';
import type { Builder } from '../instructions.js';
import { rpcOf } from '../rpc.js';
import { toBase64, type Lifetime } from '../settle.js';
import { nowUnix } from '../simulate.js';
import { addressField, gatedOpen, offerAccounts, offerAmount, openChannel, openContext, optionalString, registerOn, requiredString, schemeOf, tokenProgramOf, u64Field, type ChannelClientOptions, type SessionGate } from './channel.js';

/** The stock scheme's name. */
export const SCHEME_UPTO = 'upto';
/** trust-gate's gated variant: the payer's policy decides the ceiling at the open. */
export const SCHEME_GATED_UPTO = 'trust-gate-upto';
/** The channel's flow as x402 names it (`extra.paymentFlow`, when present). */
export const PAYMENT_FLOW_ESCROW = 'escrow';
/** The memo a seller may ask for, in UTF-8 bytes. */
export const MAX_UPTO_MEMO_BYTES = 256;

/** `extra` of an `upto` offer (the Rust SDK's `upto::UptoExtra`). */
export interface UptoExtra {
  /** The facilitator's sponsor: fee payer, the channel's rent payer and zero-share payee. */
  feePayer: string;
  /** The channel's voucher key: the server's. */
  receiverAuthorizer: string;
  /** The channel's grace period (seconds, > 0). */
  withdrawDelay: number;
  tokenProgram?: string;
  paymentFlow?: string;
  /** The seller's memo: the open carries exactly one Memo of it (none when empty). */
  memo?: string;
  recentBlockhash?: string;
  /** A decimal string (2.27's) or a number. */
  lastValidBlockHeight?: string;
  recentSlot?: string;
  validAfter?: number;
}

/** The payer's `upto` payload (`paymentPayload.payload`, the Rust SDK's `upto::UptoPayload`). */
export interface UptoPayload {
  /** The payer's wallet: the open's first account. */
  from: string;
  /** The ceiling: the deposit. */
  maxAmount: string;
  /** Unix seconds: the claim's voucher expires then. */
  expiresAt: number;
  validAfter: number;
  /** The open's salt, a decimal u64. */
  nonce: string;
  /** The open's slot, a decimal string. */
  openSlot: string;
  /** The channel's address. */
  channelId: string;
  /** The deposit, equal to `maxAmount`. */
  deposit: string;
  /** The channel's voucher key, equal to `extra.receiverAuthorizer`. */
  authorizedSigner: string;
  /** Base64 of the payer-signed open transaction, the fee payer's signature empty. */
  openTransaction: string;
}

const U32_MAX = 0xffffffff;

/**
 * Reads `extra` of an `upto` offer and refuses what this client cannot pay (a flow other than
 * `escrow`, a grace period that is not a u32 above 0, a memo over 256 bytes, a token program
 * other than SPL Token and Token-2022). Errors name the field.
 */
export function uptoExtraOf(r: Pick<PaymentRequirements, 'extra'>): UptoExtra {
  const o = (r.extra ?? {}) as Record<string, unknown>;
  const withdrawDelay = o.withdrawDelay;
  if (typeof withdrawDelay !== 'number' || !Number.isInteger(withdrawDelay) || withdrawDelay <= 0 || withdrawDelay > U32_MAX) {
    throw new TrustGateInputError('extra.withdrawDelay', 'a whole number of seconds above 0 expected');
  }
  const extra: UptoExtra = {
    feePayer: requiredString(o, 'feePayer'),
    receiverAuthorizer: requiredString(o, 'receiverAuthorizer'),
    withdrawDelay,
  };
  addressField('extra.feePayer', extra.feePayer);
  addressField('extra.receiverAuthorizer', extra.receiverAuthorizer);
  for (const k of ['tokenProgram', 'paymentFlow', 'memo', 'recentBlockhash'] as const) {
    const v = optionalString(o, k);
    if (v !== undefined) extra[k] = v;
  }
  for (const k of ['lastValidBlockHeight', 'recentSlot'] as const) {
    if (o[k] !== undefined && o[k] !== null) extra[k] = u64Field(`extra.${k}`, o[k]).toString();
  }
  if (o.validAfter !== undefined && o.validAfter !== null) {
    if (typeof o.validAfter !== 'number' || !Number.isSafeInteger(o.validAfter)) throw new TrustGateInputError('extra.validAfter', 'unix seconds expected');
    extra.validAfter = o.validAfter;
  }
  if (extra.paymentFlow !== undefined && extra.paymentFlow !== PAYMENT_FLOW_ESCROW) {
    throw new TrustGateInputError('extra.paymentFlow', `${JSON.stringify(extra.paymentFlow)}: only "${PAYMENT_FLOW_ESCROW}" is known`);
  }
  if (extra.memo !== undefined && new TextEncoder().encode(extra.memo).length > MAX_UPTO_MEMO_BYTES) {
    throw new TrustGateInputError('extra.memo', `longer than ${MAX_UPTO_MEMO_BYTES} bytes`);
  }
  if (extra.tokenProgram !== undefined) tokenProgramOf({ tokenProgram: extra.tokenProgram });
  return extra;
}

/** What an `upto` payment's channel is opened with (the Rust SDK's `UptoTerms`). */
export interface UptoTerms {
  /** Builds the gate's `gate_channel_open`; needed only when `gate` is set. */
  builder?: Builder;
  extra: UptoExtra;
  mint: Address;
  tokenProgram: TokenProgramId;
  payTo: Address;
  /** The payer's wallet (gated: the payer agent's signer), which signs the open. */
  payer: TransactionSigner;
  /** The offer's amount: the ceiling escrowed. */
  ceiling: bigint;
  salt: bigint;
  /** A recent slot of the cluster. */
  openSlot: bigint;
  /** Unix seconds: the claim must come before `expiresAt`. */
  validAfter: number;
  expiresAt: number;
  gate?: SessionGate;
  /** The facilitator's lookup tables, used only when gated. */
  tables?: readonly LookupTable[];
  lifetime: Lifetime;
}

/** An `upto` payment's open: the transaction (the payer's signature in, the fee payer's slot empty) and the payload. */
export interface UptoOpened {
  transaction: Transaction;
  payload: UptoPayload;
}

/**
 * The open and the payload (the Rust SDK's `UptoTerms::payload`): a compute-unit limit, the
 * gate's `gate_channel_open` when gated, the program's `open` of the ceiling (the fee payer as
 * rent payer and payee, `extra.receiverAuthorizer` its voucher key, 100 % to `payTo`), a Memo
 * of `extra.memo` when not empty; a v0 transaction paid by `extra.feePayer` (loading from the
 * facilitator's tables only when gated), signed by the payer alone.
 */
export async function uptoOpen(t: UptoTerms): Promise<UptoOpened> {
  const feePayer = addressField('extra.feePayer', t.extra.feePayer);
  const voucherKey = addressField('extra.receiverAuthorizer', t.extra.receiverAuthorizer);
  u64Field('ceiling', t.ceiling);
  u64Field('salt', t.salt);
  u64Field('openSlot', t.openSlot);
  const { transaction: tx, channel } = await openChannel({
    ...t,
    feePayer,
    voucherKey,
    deposit: t.ceiling,
    withdrawDelay: t.extra.withdrawDelay,
    memos: [t.extra.memo],
  });
  const payload: UptoPayload = {
    from: t.payer.address,
    maxAmount: t.ceiling.toString(),
    expiresAt: t.expiresAt,
    validAfter: t.validAfter,
    nonce: t.salt.toString(),
    openSlot: t.openSlot.toString(),
    channelId: channel,
    deposit: t.ceiling.toString(),
    authorizedSigner: voucherKey,
    openTransaction: toBase64(tx),
  };
  return { transaction: tx, payload };
}

export interface TrustGateUptoClientOptions extends ChannelClientOptions {
  /** `trust-gate-upto` (the default) or the stock `upto`. */
  scheme?: typeof SCHEME_GATED_UPTO | typeof SCHEME_UPTO;
}

/**
 * The payer's side of `trust-gate-upto` (or, with `scheme: 'upto'`, the stock scheme) for
 * @x402/core's `x402Client`: each payment opens a channel escrowing the offer's amount (the
 * ceiling), from which the server charges what the request used.
 */
export class TrustGateUptoClientScheme implements SchemeNetworkClient {
  readonly scheme: string;
  /** The CAIP-2 networks (patterns) `registerTrustGateUptoScheme` registers it for. */
  readonly networks: readonly string[];
  private readonly rpc: TrustGateRpc;

  constructor(private readonly options: TrustGateUptoClientOptions) {
    this.scheme = schemeOf(options.scheme, SCHEME_GATED_UPTO, SCHEME_UPTO);
    this.networks = options.networks ?? ['solana:*'];
    this.rpc = rpcOf(options);
  }

  private get gated(): boolean {
    return this.scheme === SCHEME_GATED_UPTO;
  }

  async createPaymentPayload(
    x402Version: number,
    requirements: PaymentRequirements,
    context?: PaymentPayloadContext,
  ): Promise<PaymentPayloadResult> {
    const ceiling = offerAmount(this.scheme, x402Version, requirements, context, 'the ceiling is above 0');
    const extra = uptoExtraOf(requirements);
    const { mint, payTo, feePayer } = offerAccounts(requirements, extra);
    const timeout = requirements.maxTimeoutSeconds;
    if (!Number.isSafeInteger(timeout) || timeout <= 0) throw new TrustGateInputError('maxTimeoutSeconds', 'a whole number of seconds above 0 expected');
    const [m, gated, { slot, lifetime }] = await Promise.all([
      mintOf(this.rpc, 'asset', mint),
      this.gated ? gatedOpen(this.rpc, requirements, this.options.programIds, mint, feePayer, ceiling) : undefined,
      openContext(this.rpc),
    ]);
    if (!m) throw new TrustGateInputError('asset', `mint ${mint} does not exist`);
    if (extra.tokenProgram !== undefined && extra.tokenProgram !== m.tokenProgram) {
      throw new TrustGateInputError('extra.tokenProgram', `${extra.tokenProgram} is not the mint's token program ${m.tokenProgram}`);
    }
    const now = Number(nowUnix());
    const { payload } = await uptoOpen({
      builder: gated?.builder,
      extra,
      mint,
      tokenProgram: m.tokenProgram,
      payTo,
      payer: this.options.signer,
      ceiling,
      salt: randomBytes(8).readBigUInt64LE(),
      openSlot: slot,
      validAfter: now - 1,
      expiresAt: now + timeout,
      gate: gated?.gate,
      tables: gated?.tables ?? [],
      lifetime,
    });
    return { x402Version: 2, payload: payload as unknown as Record<string, unknown> };
  }
}

/**
 * Registers an `upto` scheme on an @x402/core `x402Client` (for every Solana network unless
 * `networks` says otherwise) and returns the client.
 */
export function registerTrustGateUptoScheme(
  client: x402Client,
  schemeOrOptions: TrustGateUptoClientScheme | TrustGateUptoClientOptions,
): x402Client {
  const scheme = schemeOrOptions instanceof TrustGateUptoClientScheme ? schemeOrOptions : new TrustGateUptoClientScheme(schemeOrOptions);
  return registerOn(client, scheme);
}
