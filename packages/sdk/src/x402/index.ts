// @trust-gate/sdk/x402: the trust-gate x402 scheme for the official JS packages (@x402/core,
// @x402/fetch, @x402/express) and the wire pieces it adds to x402 v2; the payer's side of
// x402's `batch-settlement` sessions and of its `upto` payments, plain and gated; and x402's
// `payment-identifier` extension on both sides (an id per payment, answered once).

export * from './wire.js';
export * from './prepare.js';
export * from './client.js';
export * from '../headers.js';
export * from './server.js';
export * from './batch.js';
export * from './upto.js';
export * from './payment-identifier.js';
export * from './paid-once.js';
