// The x402 resource-server side: a `SchemeNetworkServer` of the `trust-gate` scheme for
// @x402/core's `x402ResourceServer` (and so @x402/express's `paymentMiddleware`). It turns a
// route's price into trust-gate requirements: `extra.feePayer` from the facilitator's
// /supported, a fresh `extra.memo` (the payment's id) and `extra.gate`, the payment's trust
// context signed by the service key, which the facilitator checks before it settles; with the
// holdback terms of the facilitator's decision for the request (`gateDecision` in front).

import { randomBytes } from 'node:crypto';
import { address, type Address, type KeyPairSigner } from '@solana/kit';
import type {
  AssetAmount,
  Network,
  PaymentRequirements,
  Price,
  SchemePaymentRequiredContext,
  SchemeNetworkServer,
  SupportedKind,
} from '@x402/core/types';
import { TrustGateInputError } from '../errors.js';
import { GATE_EXTENSION, PAYMENT_SIGNATURE, SCHEME_TRUST_GATE } from '../headers.js';
import { challengeSignedBy, decodeHeader, freshMemo, gateExtensionOf, signChallenge, type GateExtension, type HoldbackTerms } from './wire.js';

/** The request header a paying agent names itself with (its agent asset), by default. */
export const X_PAYER_AGENT = 'X-Payer-Agent';

/** Reads a request header (case-insensitive). */
export type HeaderReader = (name: string) => string | undefined;

export interface TrustGateServerConfig {
  /** The key that signs challenges; the facilitator must trust it (TRUSTED_SERVICE_KEYS). */
  serviceKey: KeyPairSigner;
  /** The agent being paid (this service's agent asset). */
  payeeAgentAsset: Address;
  /** The payer's spending policy the payments are gated by. */
  policyId: number;
  /** The payer agent of a request; default: the `X-Payer-Agent` header, else `defaultPayerAgent`. */
  payerAgent?: (header: HeaderReader) => string | undefined;
  defaultPayerAgent?: Address;
  /** Needed only for money prices ("$0.10"): the mint and its decimals. */
  asset?: { mint: Address; decimals: number };
}

/** The payer agent a request names, by `config`'s rule; throws naming the header when none. */
export function payerAgentOf(config: Pick<TrustGateServerConfig, 'payerAgent' | 'defaultPayerAgent'>, header: HeaderReader): Address {
  const named = config.payerAgent ? config.payerAgent(header) : header(X_PAYER_AGENT);
  const value = named?.trim() || config.defaultPayerAgent;
  if (!value) throw new TrustGateInputError(X_PAYER_AGENT, 'missing: the request must name the paying agent');
  try {
    return address(value);
  } catch {
    throw new TrustGateInputError(X_PAYER_AGENT, `${JSON.stringify(value)} is not a base58 public key`);
  }
}

/**
 * A decision's holdback terms (the facilitator's decision answer's `holdback`) for the payment
 * it decided: what a decision middleware in front (`gateDecision`) hands to the challenge of
 * the same request.
 */
export interface DecidedHoldback {
  payerAgentAsset: Address;
  payeeAgentAsset: Address;
  mint: Address;
  /** Base units. */
  amount: string;
  policyId: number;
  terms: HoldbackTerms;
}

/**
 * The request header that names a decision's holdback terms to the server scheme: a token of
 * `keepDecidedHoldback`, never the terms themselves, so that a client cannot state terms the
 * service would sign (an unknown token names nothing).
 */
export const X_GATE_DECIDED_HOLDBACK = 'X-Trust-Gate-Decided-Holdback';

const decisions = new Map<string, DecidedHoldback>();

/**
 * Keeps `d` for the challenge of one request: set the returned token as the request's
 * X_GATE_DECIDED_HOLDBACK header, and call `drop` once the request is answered.
 */
export function keepDecidedHoldback(d: DecidedHoldback): { token: string; drop: () => void } {
  const token = randomBytes(16).toString('hex');
  decisions.set(token, d);
  return { token, drop: () => decisions.delete(token) };
}

/** The decision `token` names, while its request is being answered. */
export function decidedHoldbackOf(token: string | undefined): DecidedHoldback | undefined {
  return token ? decisions.get(token.trim()) : undefined;
}

function headerReaderOf(transportContext: unknown): HeaderReader | undefined {
  const adapter = (transportContext as { request?: { adapter?: { getHeader(n: string): string | undefined } } })?.request?.adapter;
  return adapter ? (n) => adapter.getHeader(n) ?? adapter.getHeader(n.toLowerCase()) : undefined;
}

export class TrustGateServerScheme implements SchemeNetworkServer {
  readonly scheme = SCHEME_TRUST_GATE;
  readonly defaultAssetTransferMethod = 'default';
  // Verify before the handler, settle after it: the facilitator decides at /verify and
  // settles the one transaction at /settle.
  readonly paymentFlows = { default: { supported: ['authorization'] as const, default: 'authorization' as const } };
  // Fresh in every challenge: the requirement a payment answered is matched without them,
  // and the facilitator authenticates them by the service signature.
  readonly dynamicExtraFields = ['memo', GATE_EXTENSION];

  constructor(private readonly config: TrustGateServerConfig) {}

  async parsePrice(price: Price, _network: Network): Promise<AssetAmount> {
    if (typeof price === 'object' && price !== null && 'amount' in price) {
      if (!/^\d+$/.test(price.amount)) throw new TrustGateInputError('price.amount', `${JSON.stringify(price.amount)} is not base units`);
      return { amount: price.amount, asset: price.asset };
    }
    const a = this.config.asset;
    if (!a) throw new TrustGateInputError('price', 'a money price needs config.asset (the mint and its decimals)');
    const m = /^\$?(\d+)(?:\.(\d+))?$/.exec(String(price).trim());
    if (!m || (m[2] ?? '').length > a.decimals) throw new TrustGateInputError('price', `${JSON.stringify(price)} is not an amount of at most ${a.decimals} decimals`);
    const units = BigInt(m[1]) * 10n ** BigInt(a.decimals) + BigInt((m[2] ?? '').padEnd(a.decimals, '0') || '0');
    return { amount: units.toString(), asset: a.mint };
  }

  async enhancePaymentRequirements(r: PaymentRequirements, kind: SupportedKind): Promise<PaymentRequirements> {
    const feePayer = kind.extra?.feePayer;
    if (typeof feePayer !== 'string') throw new Error(`the facilitator's ${SCHEME_TRUST_GATE} kind has no extra.feePayer`);
    return { ...r, extra: { ...r.extra, feePayer } };
  }

  /** Signs every trust-gate offer of a 402 for the requesting payer agent. */
  readonly enrichPaymentRequiredResponse = async (ctx: SchemePaymentRequiredContext): Promise<PaymentRequirements[]> => {
    const header = headerReaderOf(ctx.transportContext) ?? (() => undefined);
    const url = ctx.resourceInfo.url;
    const paid = this.answered(header);
    const decided = decidedHoldbackOf(header(X_GATE_DECIDED_HOLDBACK));
    const out: PaymentRequirements[] = [];
    for (const r of ctx.requirements) {
      if (r.scheme !== SCHEME_TRUST_GATE) {
        out.push(r);
        continue;
      }
      // A payment answering one of our own challenges keeps that challenge's memo and
      // signature, so that the requirement it is verified against is the one it accepted.
      const reused = paid && (await this.ownChallenge(r, url, paid));
      if (reused) {
        out.push(reused);
        continue;
      }
      // Without a payer agent the offer goes out unsigned: no trust-gate client can pay it
      // (it says extra.gate is missing), and the 402 is still an answer, not a failure.
      // `gateDecision` in front refuses such a request with 400 naming the header.
      let payer: Address;
      try {
        payer = payerAgentOf(this.config, header);
      } catch {
        out.push(r);
        continue;
      }
      out.push(await this.challenge(r, url, payer, decided));
    }
    return out;
  };

  private answered(header: HeaderReader): PaymentRequirements | undefined {
    const v = header(PAYMENT_SIGNATURE) ?? header('X-PAYMENT');
    if (!v) return undefined;
    try {
      return decodeHeader<{ accepted?: PaymentRequirements }>(PAYMENT_SIGNATURE, v).accepted;
    } catch {
      return undefined;
    }
  }

  private async ownChallenge(r: PaymentRequirements, url: string, accepted: PaymentRequirements): Promise<PaymentRequirements | undefined> {
    let gate: GateExtension;
    try {
      gate = gateExtensionOf(accepted);
    } catch {
      return undefined;
    }
    const memo = accepted.extra?.memo;
    if (typeof memo !== 'string') return undefined;
    const candidate = { ...r, extra: { ...r.extra, memo, [GATE_EXTENSION]: gate } };
    const ours =
      gate.payeeAgentAsset === this.config.payeeAgentAsset &&
      gate.policyId === this.config.policyId &&
      (await challengeSignedBy(this.config.serviceKey.address, candidate, url, gate));
    return ours ? candidate : undefined;
  }

  /**
   * A fresh challenge of `r` for `payer`, stating the holdback terms of `decided` when it
   * decided this very payment (terms quoted for another amount, mint, payee or policy would
   * hold back the wrong share, and the facilitator would refuse the settlement).
   */
  private async challenge(r: PaymentRequirements, url: string, payer: Address, decided?: DecidedHoldback): Promise<PaymentRequirements> {
    const withMemo = { ...r, extra: { ...r.extra, memo: freshMemo() } };
    const ours =
      decided &&
      decided.payerAgentAsset === payer &&
      decided.payeeAgentAsset === this.config.payeeAgentAsset &&
      decided.mint === r.asset &&
      decided.amount === r.amount &&
      decided.policyId === this.config.policyId;
    const unsigned = {
      payerAgentAsset: payer,
      payeeAgentAsset: this.config.payeeAgentAsset,
      payeeRecipient: r.payTo,
      policyId: this.config.policyId,
      issuedAt: Math.floor(Date.now() / 1000),
      ...(ours ? { holdback: decided.terms } : {}),
    };
    const serviceSignature = await signChallenge(this.config.serviceKey.keyPair.privateKey, withMemo, url, unsigned);
    return { ...withMemo, extra: { ...withMemo.extra, [GATE_EXTENSION]: { ...unsigned, serviceSignature } } };
  }
}
