// x402's `payment-identifier` extension (`specs/extensions/payment_identifier.md` at spec
// revision 0ce3e9c, as `@x402/extensions` 2.27 implements it): a client's idempotency key for
// one payment. The wire for both sides, as the Rust SDK's `payment_identifier` module has it:
//
// - a resource server declares it in its 402 (`extensions["payment-identifier"]`, `info.required`);
// - a client echoes the declaration with `info.id` (16 to 128 of `[A-Za-z0-9_-]`) in its
//   payment payload, and sends that same payload again when it lost the answer;
// - the server looks the id up before it verifies anything, bound to the payload's `digest`.
//
// The server's side of the lookup is `PaidOnce` (./paid-once.ts); its Express glue `paidOnce`.

import { createHash, randomBytes } from 'node:crypto';
import type { ClientExtension } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { TrustGateInputError } from '../errors.js';

/** The extension's key in `extensions`. */
export const PAYMENT_IDENTIFIER = 'payment-identifier';
export const PAYMENT_ID_MIN_LENGTH = 16;
export const PAYMENT_ID_MAX_LENGTH = 128;
const PATTERN = /^[a-zA-Z0-9_-]+$/;

/** The extension's JSON Schema of `info`, as the specification gives it. */
export const paymentIdentifierSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    required: { type: 'boolean' },
    id: { type: 'string', minLength: PAYMENT_ID_MIN_LENGTH, maxLength: PAYMENT_ID_MAX_LENGTH, pattern: PATTERN.source },
  },
  required: ['required'],
} as const;

/** A 402's declaration of the extension (`extensions["payment-identifier"]`). */
export function declarePaymentIdentifier(required = false): { info: { required: boolean }; schema: typeof paymentIdentifierSchema } {
  return { info: { required }, schema: paymentIdentifierSchema };
}

export function isValidPaymentId(id: unknown): id is string {
  return typeof id === 'string' && id.length >= PAYMENT_ID_MIN_LENGTH && id.length <= PAYMENT_ID_MAX_LENGTH && PATTERN.test(id);
}

/** A fresh id: `pay_` and 32 random hex digits (as the extension's `generatePaymentId`). */
export function newPaymentId(): string {
  return `pay_${randomBytes(16).toString('hex')}`;
}

const FIELD = `extensions["${PAYMENT_IDENTIFIER}"].info.id`;

/**
 * The id a payment payload carries: undefined without the extension or its `info.id`; a
 * TrustGateInputError naming the field when it is there but malformed.
 */
export function paymentIdOf(payload: { extensions?: Record<string, unknown> } | unknown): string | undefined {
  const extensions = (payload as { extensions?: unknown } | null)?.extensions;
  const extension = extensions && typeof extensions === 'object' ? (extensions as Record<string, unknown>)[PAYMENT_IDENTIFIER] : undefined;
  if (!extension || typeof extension !== 'object') return undefined;
  const id = (extension as { info?: { id?: unknown } }).info?.id;
  if (id === undefined || id === null) return undefined;
  if (typeof id !== 'string') throw new TrustGateInputError(FIELD, 'not a string');
  if (!isValidPaymentId(id)) throw new TrustGateInputError(FIELD, `${PAYMENT_ID_MIN_LENGTH} to ${PAYMENT_ID_MAX_LENGTH} letters, digits, '-' or '_'`);
  return id;
}

/**
 * The digest of a payment payload that binds its id (hex): SHA-256 of its JSON with every
 * object's keys sorted, so that the same payload re-encoded by another client library gives
 * the same digest (the Rust SDK's `payment_identifier::digest` gives the same bytes), and any
 * other payload (another transaction, another offer, another id) another.
 */
export function payloadDigest(payload: unknown): string {
  return createHash('sha256').update(sorted(payload)).digest('hex');
}

function sorted(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sorted).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sorted(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The client side, as an @x402/core `x402Client` extension: a payment of a 402 that declares
 * the extension carries a fresh id. `registerTrustGateScheme` and the channel schemes'
 * register functions install it; a client sending a payload again (see `resendPaid`) sends
 * the same bytes, hence the same id.
 */
export const paymentIdentifierClient: ClientExtension = {
  key: PAYMENT_IDENTIFIER,
  async enrichPaymentPayload(payload: PaymentPayload, required: PaymentRequired): Promise<PaymentPayload> {
    const declared = required.extensions?.[PAYMENT_IDENTIFIER] as { info?: { required?: unknown } } | undefined;
    if (typeof declared?.info?.required !== 'boolean') return payload;
    const echoed = { ...declared, info: { ...declared.info, id: newPaymentId() } };
    return { ...payload, extensions: { ...payload.extensions, [PAYMENT_IDENTIFIER]: echoed } };
  },
};
