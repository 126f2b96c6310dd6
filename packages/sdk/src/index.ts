// @trust-gate/sdk: the TypeScript SDK of trust-gate.

export * from './ids.js';
export * from './pda.js';
export * from './headers.js';
export * from './errors.js';
export * from './signer.js';
export * from './decision.js';
export * from './chain.js';
export * from './rpc.js';
export * from './instructions.js';
export * from './simulate.js';
export * from './units.js';
export * from './settle.js';
export * from './holdback.js';
export * from './message.js';
export * from './loaders.js';
export * from './validation-registry.js';
export * from './channels.js';
export * from './subscriptions.js';
export * from './registry.js';
export * from './reputation.js';
export * from './facilitator.js';
// The argument types of `Builder.initPolicy`.
export type { PolicyParamsArgs, PolicyRulesArgs } from './generated/policy_vault/types/index.js';
