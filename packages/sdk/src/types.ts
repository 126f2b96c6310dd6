// @trust-gate/sdk/types: the SDK's types, for type-only imports.

export type { Decision, DenyReasonName } from './decision.js';
export type { AgentView, Funding, LookupTable, RawAccount, Rule, TokenProgramId, TrustGateRpc } from './chain.js';
export type { Network, ProgramIds } from './ids.js';
export type { Attestations, ComputeBudget, FeedbackArgs, PaymentArgs, RegistrationAccounts, VaultRelease } from './instructions.js';
export type { Dispute, Feedback, Lifetime, Settlement, SettleOptions } from './settle.js';
export type { SignerLike } from './signer.js';
export type { Connection } from './rpc.js';
export type { Idl, IdlSource, Program } from './loaders.js';
export type { Claim } from './validation-registry.js';
export type { EngineReputation } from './reputation.js';
export type { GatePaymentRequest } from './simulate.js';
export type { GateExtension, PaymentRequirements } from './x402/wire.js';
