// @trust-gate/sdk: the TypeScript SDK of trust-gate.

export * from './ids.js';
export * from './pda.js';
