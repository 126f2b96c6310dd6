// The gate's decision: the 35-byte wire form `gate_payment` returns (kind, reason code,
// subject, capability hash) and the JSON view the facilitator answers with.

/**
 * Deny reason codes 1..27 and their stable names (policy_vault's `DenyReason`); 16 to 23 are
 * a policy's limits, 24 to 27 its holdback (docs/holdback.md).
 */
export const DENY_REASONS = [
  'KillSwitchEngaged',
  'SpendingPerTxExceeded',
  'SpendingDailyExceeded',
  'SpendingWeeklyExceeded',
  'VelocityWindowExceeded',
  'CounterpartyTierBelowMin',
  'CounterpartyRiskAboveMax',
  'CounterpartyConfidenceBelow',
  'AtomStatsWrongOwner',
  'AtomStatsSchemaMismatch',
  'AttestationMissing',
  'AttestationExpired',
  'AttestationRevoked',
  'AttestationAttestorRejected',
  'UnratedTreatmentDeny',
  'PolicyNotYetValid',
  'PolicyExpired',
  'PayeeNotAllowed',
  'PayeeDenied',
  'SpendingMonthlyExceeded',
  'SpendingLifetimeExceeded',
  'PayeeDailyExceeded',
  'PayeeSlotsFull',
  'HoldbackNotAccepted',
  'HoldbackShareNotAccepted',
  'HoldbackHoldNotAccepted',
  'HoldbackArbiterNotAccepted',
] as const;

/**
 * The strict gate's error code for deny code `code`: 6000 + code for 1..15, 6100 + code from 16
 * (the gate's own errors had taken 6016 and up).
 */
export function strictErrorCode(code: number): number {
  return code <= 15 ? 6000 + code : 6100 + code;
}

/** The deny code a strict-gate error code stands for, or undefined. */
export function denyCodeOfError(error: number): number | undefined {
  const code = error >= 6001 && error <= 6015 ? error - 6000 : error >= 6116 && error <= 6199 ? error - 6100 : 0;
  return denyName(code) ? code : undefined;
}

export type DenyReasonName = (typeof DENY_REASONS)[number];

/**
 * A decision as the facilitator's JSON has it: `{kind: 'Allow'}`,
 * `{kind: 'Deny', reasonCode: 6, reasonName: 'CounterpartyTierBelowMin'}` or
 * `{kind: 'RequireValidation', capabilityHash: '<hex>', subject: 'payer' | 'payee'}` or
 * `{kind: 'RequireApproval'}` (the amount is above the payer policy's approval threshold and
 * no approval of the payment's terms was given).
 */
export type Decision =
  | { kind: 'Allow' }
  | { kind: 'Deny'; reasonCode: number; reasonName: DenyReasonName }
  | { kind: 'RequireValidation'; capabilityHash: string; subject: 'payer' | 'payee' }
  | { kind: 'RequireApproval' };

export const DECISION_WIRE_LEN = 35;

/** The name of deny code `code` (1..27), or undefined. */
export function denyName(code: number): DenyReasonName | undefined {
  return Number.isInteger(code) && code >= 1 ? DENY_REASONS[code - 1] : undefined;
}

/** The decision in 35 bytes of return data; undefined when the bytes are not one. */
export function decisionFromWire(bytes: Uint8Array): Decision | undefined {
  if (bytes.length !== DECISION_WIRE_LEN) return undefined;
  switch (bytes[0]) {
    case 0:
      return { kind: 'Allow' };
    case 1: {
      const reasonName = denyName(bytes[1]);
      return reasonName ? { kind: 'Deny', reasonCode: bytes[1], reasonName } : undefined;
    }
    case 2: {
      const subject = bytes[2] === 0 ? 'payer' : bytes[2] === 1 ? 'payee' : undefined;
      if (!subject) return undefined;
      return { kind: 'RequireValidation', capabilityHash: toHex(bytes.subarray(3)), subject };
    }
    case 3:
      return { kind: 'RequireApproval' };
    default:
      return undefined;
  }
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

/** 32 bytes from 64 hex characters; `field` names the input in the error. */
export function fromHex32(field: string, s: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(s)) throw new Error(`${field}: 64 hex characters expected`);
  return Uint8Array.from(Buffer.from(s, 'hex'));
}
