// @trust-gate/sdk/x402: the trust-gate x402 scheme for the official JS packages (@x402/core,
// @x402/fetch, @x402/express) and the wire pieces it adds to x402 v2.

export * from './wire.js';
export * from './prepare.js';
export * from './client.js';
export * from '../headers.js';
export * from './server.js';
