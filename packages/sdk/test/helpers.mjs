// Shared by the tests that run against the Rust services: the fixture the Rust driver writes
// (tests/tests/services/ts_x402.rs) and small readers.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createKeyPairSignerFromBytes, createSolanaRpc } from '@solana/kit';

export function fixture() {
  const path = process.env.TRUST_GATE_FIXTURE;
  assert.ok(path, 'TRUST_GATE_FIXTURE must name the Rust fixture: run `cargo test --workspace` (tests/tests/services/ts_x402.rs)');
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The demo key with `label` as a @solana/kit signer (the bytes `trust-gate demo-key` prints). */
export function signerOf(f, label) {
  const bytes = f.keys[label];
  assert.ok(bytes, `no demo key ${label}`);
  return createKeyPairSignerFromBytes(Uint8Array.from(bytes));
}

export function rpcOf(f) {
  return createSolanaRpc(f.rpcUrl);
}

/** The token balance of an SPL token account (amount at bytes 64..72), 0 when absent. */
export async function tokenBalance(rpc, account) {
  const { value } = await rpc.getAccountInfo(account, { encoding: 'base64', commitment: 'confirmed' }).send();
  if (!value) return 0n;
  return Buffer.from(value.data[0], 'base64').readBigUInt64LE(64);
}

/** An instruction as the Rust fixture writes it. */
export function instructionJson(ix) {
  return {
    programId: ix.programAddress,
    accounts: (ix.accounts ?? []).map((m) => ({ pubkey: m.address, isSigner: m.role >= 2, isWritable: (m.role & 1) === 1 })),
    data: Buffer.from(ix.data ?? []).toString('hex'),
  };
}

/** A fetch that counts its requests and those that carried a payment. */
export function countingFetch() {
  const seen = { requests: 0, paid: 0 };
  const f = async (input, init) => {
    const req = new Request(input, init);
    seen.requests += 1;
    if (req.headers.has('PAYMENT-SIGNATURE') || req.headers.has('X-PAYMENT')) seen.paid += 1;
    return fetch(req);
  };
  return { fetch: f, seen };
}
