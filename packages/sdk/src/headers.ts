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
/**
 * With `X-Gate-Decision: RequireApproval`: the pending approval's id, which is the address of
 * the payment's approval on chain (`Pdas.approval` of its terms).
 */
export const X_GATE_APPROVAL_ID = 'X-Gate-Approval-Id';
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
  X_GATE_APPROVAL_ID,
  X_PAYMENT_NETWORK,
] as const;

/** Reads headers by name (a fetch `Headers`, or a lookup of your own). */
export type HeaderLookup = { get(name: string): string | null | undefined } | ((name: string) => string | null | undefined);

/**
 * The decision headers of a response (a facilitator's or a gated resource's 402), each
 * absent one undefined. `approvalId` comes with `decision: 'RequireApproval'`: the pending
 * approval's id, the address of the payment's approval on chain, which the payer agent's
 * members create with `Builder.approvePayment` before the same payment is tried again.
 */
export interface DecisionHeaders {
  decision?: string;
  paymentRequired?: string;
  reasonCode?: number;
  reasonName?: string;
  capabilityRequired?: string;
  capabilitySubject?: string;
  approvalId?: string;
  network?: string;
}

/** The decision headers `h` carries (see `DecisionHeaders`). */
export function readDecisionHeaders(h: HeaderLookup): DecisionHeaders {
  const get = (name: string) => (typeof h === 'function' ? h(name) : h.get(name)) ?? undefined;
  const code = get(X_PAYMENT_REASON_CODE);
  const out: DecisionHeaders = {
    decision: get(X_GATE_DECISION),
    paymentRequired: get(X_PAYMENT_REQUIRED),
    reasonCode: code !== undefined && /^\d+$/.test(code) ? Number(code) : undefined,
    reasonName: get(X_PAYMENT_REASON_NAME),
    capabilityRequired: get(X_CAPABILITY_REQUIRED),
    capabilitySubject: get(X_CAPABILITY_SUBJECT),
    approvalId: get(X_GATE_APPROVAL_ID),
    network: get(X_PAYMENT_NETWORK),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as DecisionHeaders;
}

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
