// The x402 v2 header names, trust-gate's decision headers and scheme names: the same strings
// as the Rust SDK's `x402` module.

/** Response header of a 402: the base64 `PaymentRequired`. */
export const PAYMENT_REQUIRED = 'PAYMENT-REQUIRED';
/** Request header of a paid retry: the base64 `PaymentPayload`. */
export const PAYMENT_SIGNATURE = 'PAYMENT-SIGNATURE';
/** Response header after settlement: the base64 `SettlementResponse`. */
export const PAYMENT_RESPONSE = 'PAYMENT-RESPONSE';
/** trust-gate's decision headers. */
export const X_GATE_DECISION = 'X-Gate-Decision';
export const X_PAYMENT_REQUIRED = 'X-Payment-Required';
export const X_PAYMENT_REASON_CODE = 'X-Payment-Reason-Code';
export const X_PAYMENT_REASON_NAME = 'X-Payment-Reason-Name';
export const X_CAPABILITY_REQUIRED = 'X-Capability-Required';
export const X_CAPABILITY_SUBJECT = 'X-Capability-Subject';
export const X_PAYMENT_NETWORK = 'X-Payment-Network';
export const X_PAYMENT_RECEIPT = 'X-Payment-Receipt';

/** Every decision header, in the order the facilitator sets them. */
export const DECISION_HEADERS = [
  X_GATE_DECISION,
  X_PAYMENT_REQUIRED,
  X_PAYMENT_REASON_CODE,
  X_PAYMENT_REASON_NAME,
  X_CAPABILITY_REQUIRED,
  X_CAPABILITY_SUBJECT,
  X_PAYMENT_NETWORK,
] as const;

export const X402_VERSION = 2;
/**
 * The x402 scheme of a trust-gate settlement: one transaction of [gate_payment_strict,
 * TransferChecked, emit_feedback] (after at most a ComputeBudget unit limit and unit price),
 * with `extra.feePayer`, `extra.memo` and `extra.gate` in the requirements. It is not `exact`,
 * whose transaction is [ComputeBudget x2, TransferChecked, Memo].
 */
export const SCHEME_TRUST_GATE = 'trust-gate';
/** The standard Solana scheme, which a trust-gate facilitator does not settle. */
export const SCHEME_EXACT = 'exact';
/** The key trust-gate adds to `extra` and lists in `/supported`. */
export const GATE_EXTENSION = 'gate';
