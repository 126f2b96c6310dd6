// @trust-gate/sdk/onchain-validator: the gate's decision by simulation of gate_payment, with
// the attestation accounts a real gate would see.

export { attestationsFor, gatePayment, nowUnix, type GatePaymentRequest } from './simulate.js';
export { decisionFromWire, denyName, DENY_REASONS, type Decision } from './decision.js';
