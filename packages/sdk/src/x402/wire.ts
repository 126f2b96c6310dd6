// The x402 v2 pieces trust-gate adds: `extra.gate` (the payment's trust context, signed by
// the service that issued the challenge), the canonical bytes that signature covers, the
// payment id hash of a memo, and header encoding. The same bytes as the Rust SDK's `x402`.

import { createHash, randomBytes } from 'node:crypto';
import { getBase58Decoder, getBase58Encoder, signBytes, verifySignature, getPublicKeyFromAddress, type Address, type SignatureBytes } from '@solana/kit';
import { TrustGateInputError } from '../errors.js';
import { GATE_EXTENSION } from '../headers.js';

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
  /** Base58 Ed25519 signature of the service key over `challengeMessage`. */
  serviceSignature: string;
}

const GATE_FIELDS = ['payerAgentAsset', 'payeeAgentAsset', 'payeeRecipient', 'policyId', 'issuedAt', 'serviceSignature'] as const;

/** Reads `extra.gate` of a requirement; every error names the field. */
export function gateExtensionOf(r: PaymentRequirements): GateExtension {
  const g = r.extra?.[GATE_EXTENSION];
  if (g === undefined) throw new TrustGateInputError('extra.gate', 'missing');
  if (typeof g !== 'object' || g === null || Array.isArray(g)) throw new TrustGateInputError('extra.gate', 'must be an object');
  const o = g as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!(GATE_FIELDS as readonly string[]).includes(k)) throw new TrustGateInputError(`extra.gate.${k}`, 'unknown field');
  }
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
