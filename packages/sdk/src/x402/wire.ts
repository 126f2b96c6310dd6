// The x402 v2 pieces trust-gate adds: `extra.gate` (the payment's trust context, signed by
// the service that issued the challenge), the canonical bytes that signature covers, the
// payment id hash of a memo, and header encoding. The same bytes as the Rust SDK's `x402`.

import { createHash, randomBytes } from 'node:crypto';
import { address, getBase58Decoder, getBase58Encoder, signBytes, verifySignature, getPublicKeyFromAddress, type Address, type SignatureBytes } from '@solana/kit';
import { TrustGateInputError } from '../errors.js';
import { GATE_EXTENSION } from '../headers.js';
import type { HoldbackQuote } from '../holdback.js';

/** One entry of `accepts` (x402 v2). */
export interface PaymentRequirements {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

/** `extra.gate`. */
export interface GateExtension {
  payerAgentAsset: string;
  payeeAgentAsset: string;
  /** The wallet that receives the payment; must equal `payTo`. */
  payeeRecipient: string;
  policyId: number;
  /** Unix seconds. */
  issuedAt: number;
  /** The holdback the payer's policy takes of this payment, when it takes one. */
  holdback?: HoldbackTerms;
  /** Base58 Ed25519 signature of the service key over `challengeMessage`. */
  serviceSignature: string;
}

/**
 * `extra.gate.holdback`: the terms the payer's policy and the payee's acceptance imply for
 * this payment, as the gate decided them when the challenge was issued (docs/holdback.md).
 * Signed with the rest of the challenge; the settlement must carry exactly these.
 */
export interface HoldbackTerms {
  /** The payee's tier the terms were quoted for: 0..=4, or 5 for a payee without engine stats. */
  payeeTier: number;
  /** The tier's share, in basis points of the amount. */
  shareBps: number;
  /** How long the share is held after settlement. */
  holdSeconds: number;
  /** The share of this amount held back, in base units (a decimal string, as `amount`); "0"
   * when it rounds down to nothing (the settlement then has one transfer). */
  held: string;
  /** The payee's escrow token account in the payment's mint. */
  escrow: string;
  /** Who decides a dispute: a key or an arbiter set; absent for none. */
  arbiter?: string;
}

const GATE_FIELDS = ['payerAgentAsset', 'payeeAgentAsset', 'payeeRecipient', 'policyId', 'issuedAt', 'holdback', 'serviceSignature'] as const;
const HOLDBACK_FIELDS = ['payeeTier', 'shareBps', 'holdSeconds', 'held', 'escrow', 'arbiter'] as const;
const HOLDBACK_BOUNDS = { payeeTier: 0xff, shareBps: 0xffff, holdSeconds: 0xffff_ffff } as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads holdback terms `v` as the Rust SDK's `HoldbackTerms` does (unknown fields refused, the
 * numbers in their integer ranges, a null arbiter none); `field` names them in errors.
 */
export function holdbackTermsOf(v: unknown, field: string): HoldbackTerms {
  if (!isObject(v)) throw new TrustGateInputError(field, 'must be an object');
  for (const k of Object.keys(v)) {
    if (!(HOLDBACK_FIELDS as readonly string[]).includes(k)) throw new TrustGateInputError(`${field}.${k}`, 'unknown field');
  }
  for (const [k, max] of Object.entries(HOLDBACK_BOUNDS)) {
    const n = v[k];
    if (!Number.isSafeInteger(n) || (n as number) < 0 || (n as number) > max) throw new TrustGateInputError(`${field}.${k}`, `an integer 0..=${max} expected`);
  }
  for (const k of ['held', 'escrow'] as const) {
    if (typeof v[k] !== 'string') throw new TrustGateInputError(`${field}.${k}`, 'a string expected');
  }
  if (v.arbiter !== undefined && v.arbiter !== null && typeof v.arbiter !== 'string') {
    throw new TrustGateInputError(`${field}.arbiter`, 'a string expected');
  }
  const { arbiter, ...rest } = v as unknown as HoldbackTerms & { arbiter?: string | null };
  return typeof arbiter === 'string' ? { ...rest, arbiter } : rest;
}

/**
 * The quote a settlement carries of terms `t` (the Rust SDK's `HoldbackTerms::quote`);
 * `field` names them in errors.
 */
export function holdbackQuoteOf(t: HoldbackTerms, field: string): HoldbackQuote {
  if (!/^\d+$/.test(t.held) || BigInt(t.held) > 0xffffffffffffffffn) throw new TrustGateInputError(`${field}.held`, 'not a u64');
  let escrow: Address;
  try {
    escrow = address(t.escrow);
  } catch {
    throw new TrustGateInputError(`${field}.escrow`, 'not a public key');
  }
  return { tier: t.payeeTier, held: BigInt(t.held), escrow };
}

/** Reads `extra.gate` of a requirement; every error names the field. */
export function gateExtensionOf(r: PaymentRequirements): GateExtension {
  const g = r.extra?.[GATE_EXTENSION];
  if (g === undefined) throw new TrustGateInputError('extra.gate', 'missing');
  if (typeof g !== 'object' || g === null || Array.isArray(g)) throw new TrustGateInputError('extra.gate', 'must be an object');
  const o = { ...(g as Record<string, unknown>) };
  for (const k of Object.keys(o)) {
    if (!(GATE_FIELDS as readonly string[]).includes(k)) throw new TrustGateInputError(`extra.gate.${k}`, 'unknown field');
  }
  // Absent and null are the same: a payment nothing is held back of.
  if (o.holdback === undefined || o.holdback === null) delete o.holdback;
  else o.holdback = holdbackTermsOf(o.holdback, 'extra.gate.holdback');
  for (const k of ['payerAgentAsset', 'payeeAgentAsset', 'payeeRecipient', 'serviceSignature'] as const) {
    if (typeof o[k] !== 'string') throw new TrustGateInputError(`extra.gate.${k}`, 'a string expected');
  }
  for (const k of ['policyId', 'issuedAt'] as const) {
    if (!Number.isSafeInteger(o[k])) throw new TrustGateInputError(`extra.gate.${k}`, 'an integer expected');
  }
  return o as unknown as GateExtension;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * The canonical bytes a service signs: every requirement field and every gate field except
 * the signature, one `name=value` line each, in a fixed order.
 */
export function challengeMessage(r: PaymentRequirements, resourceUrl: string, g: Omit<GateExtension, 'serviceSignature'>): Uint8Array {
  const lines: [string, string][] = [
    ['x402', 'trust-gate-challenge-v1'],
    ['scheme', r.scheme],
    ['network', r.network],
    ['amount', r.amount],
    ['asset', r.asset],
    ['payTo', r.payTo],
    ['maxTimeoutSeconds', String(r.maxTimeoutSeconds)],
    ['resource', resourceUrl],
    ['memo', str(r.extra?.memo)],
    ['feePayer', str(r.extra?.feePayer)],
    ['payerAgentAsset', g.payerAgentAsset],
    ['payeeAgentAsset', g.payeeAgentAsset],
    ['payeeRecipient', g.payeeRecipient],
    ['policyId', String(g.policyId)],
    ['issuedAt', String(g.issuedAt)],
  ];
  // Only a held payment's challenge has these lines: others sign what they always did.
  const h = g.holdback;
  if (h) {
    lines.push(
      ['holdbackPayeeTier', String(h.payeeTier)],
      ['holdbackShareBps', String(h.shareBps)],
      ['holdbackHoldSeconds', String(h.holdSeconds)],
      ['holdbackHeld', h.held],
      ['holdbackEscrow', h.escrow],
      ['holdbackArbiter', h.arbiter ?? ''],
    );
  }
  return new TextEncoder().encode(lines.map(([k, v]) => `${k}=${v}\n`).join(''));
}

/** Signs a challenge as the service: the base58 signature over `challengeMessage`. */
export async function signChallenge(
  servicePrivateKey: Parameters<typeof signBytes>[0],
  r: PaymentRequirements,
  resourceUrl: string,
  g: Omit<GateExtension, 'serviceSignature'>,
): Promise<string> {
  const sig = await signBytes(servicePrivateKey, challengeMessage(r, resourceUrl, g));
  return getBase58Decoder().decode(sig);
}

/** Whether `g.serviceSignature` is `service`'s signature over this challenge. */
export async function challengeSignedBy(service: Address, r: PaymentRequirements, resourceUrl: string, g: GateExtension): Promise<boolean> {
  let sig: Uint8Array;
  try {
    sig = Uint8Array.from(getBase58Encoder().encode(g.serviceSignature));
  } catch {
    return false;
  }
  if (sig.length !== 64) return false;
  const key = await getPublicKeyFromAddress(service);
  return verifySignature(key, sig as SignatureBytes, challengeMessage(r, resourceUrl, g));
}

/**
 * A challenge's expiry and so its payment's deadline (the strict gate's argument): its
 * `issuedAt` plus the requirements' `maxTimeoutSeconds`. Both are signed by the service, so
 * the facilitator derives the same deadline and refuses any other.
 */
export function challengeDeadline(r: PaymentRequirements): bigint {
  return BigInt(gateExtensionOf(r).issuedAt) + BigInt(r.maxTimeoutSeconds);
}

/** A fresh memo: 32 random bytes as 64 hex characters (its own payment id hash). */
export function freshMemo(): string {
  return randomBytes(32).toString('hex');
}

/** The payment id hash of a memo: the bytes themselves when it is 64 hex characters, else sha256 of its UTF-8. */
export function paymentIdHash(memo: string): Uint8Array {
  if (/^[0-9a-fA-F]{64}$/.test(memo)) return Uint8Array.from(Buffer.from(memo, 'hex'));
  return Uint8Array.from(createHash('sha256').update(memo, 'utf8').digest());
}

/** Standard base64 of the JSON of `v` (header encoding). */
export function encodeHeader(v: unknown): string {
  return Buffer.from(JSON.stringify(v), 'utf8').toString('base64');
}

/** Decodes a base64 JSON header; `header` names it in the error. */
export function decodeHeader<T>(header: string, value: string): T {
  const s = value.trim();
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) {
    throw new TrustGateInputError(header, 'not standard base64');
  }
  try {
    return JSON.parse(Buffer.from(s, 'base64').toString('utf8')) as T;
  } catch (e) {
    throw new TrustGateInputError(header, `not the expected JSON: ${(e as Error).message}`);
  }
}
