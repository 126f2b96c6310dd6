// @trust-gate/sdk/atomicity: the guard that keeps settlement in one transaction.

export { AtomicityNotEnforcedError, assertAtomicityEnforced } from './errors.js';
