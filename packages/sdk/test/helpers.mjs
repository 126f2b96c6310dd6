// Shared by the tests that run against the Rust services: the fixture the Rust driver writes
// (tests/tests/services/ts_x402.rs) and small readers.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { address, createKeyPairSignerFromBytes, createSolanaRpc, getBase58Encoder } from '@solana/kit';
import { x402Client } from '@x402/fetch';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { Builder, lookupTables, programIds, TOKEN_2022_PROGRAM } from '../dist/index.js';
import { TrustGateServerScheme } from '../dist/x402/index.js';

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

/** Serves `app` (an Express app) on a free loopback port until the test process's end; its URL. */
const servers = [];
export function listen(app) {
  return new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${s.address().port}`));
    servers.push(s);
  });
}

/** Closes what `listen` served (call it in `after`). */
export function closeServers() {
  servers.splice(0).forEach((s) => s.close());
}

export function rpcOf(f) {
  return createSolanaRpc(f.rpcUrl);
}

/** Whether an error is the SDK's input error naming `field` (for assert.throws / rejects). */
export const isInput = (field) => (e) => e.name === 'TrustGateInputError' && e.field === field;

/** The terms of a channel's open that the batch and upto parity cases share (the Rust fixture's
 * inputs), with the facilitator's lookup tables of `feePayer`. */
export async function parityOpenTerms(f, rpc, c, feePayer) {
  const tables = await lookupTables(rpc, address(feePayer));
  assert.ok(tables.length > 0, "the facilitator's lookup tables");
  return {
    builder: new Builder(programIds('solana-localnet')),
    mint: address(c.mint),
    tokenProgram: TOKEN_2022_PROGRAM,
    payTo: address(c.payTo),
    payer: await signerOf(f, c.payer),
    salt: BigInt(c.salt),
    openSlot: BigInt(c.openSlot),
    gate: c.gated ? { payerAsset: address(c.gate.payerAsset), payeeAsset: address(c.gate.payeeAsset), policyId: c.gate.policyId } : undefined,
    tables,
    lifetime: { blockhash: c.blockhash, lastValidBlockHeight: 0n },
  };
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

/** A counting fetch that also keeps the decoded PAYMENT-SIGNATURE of each paid request. */
export function recordingFetch() {
  const payments = [];
  const counted = countingFetch();
  const f = async (input, init) => {
    const req = new Request(input, init);
    const h = req.headers.get('PAYMENT-SIGNATURE');
    if (h) payments.push(decodePaymentSignatureHeader(h));
    return counted.fetch(req);
  };
  return { fetch: f, seen: counted.seen, payments };
}

/** An x402Client whose spend controls allow `asset` (by default the demo mint), up to `max` a
 * payment (by default 1.00): x402Client pays only the assets its spend controls allow. */
export function spendControlled(f, asset = f.world.mint, max = '1000000') {
  return new x402Client().setSpendControls({ allowedAssets: [{ network: f.network, asset, maxAmountPerPayment: max }] });
}

/** A landed, successful transaction, its account keys (loaded ones included) and the program
 * of each instruction. */
export async function landed(rpc, signature) {
  const tx = await rpc.getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send();
  assert.ok(tx, `${signature} is on chain`);
  assert.equal(tx.meta.err, null);
  const keys = [...tx.transaction.message.accountKeys, ...(tx.meta.loadedAddresses?.writable ?? []), ...(tx.meta.loadedAddresses?.readonly ?? [])];
  const programs = tx.transaction.message.instructions.map((i) => keys[i.programIdIndex]);
  return { tx, keys, programs };
}

/** The payment id hash a settlement's emit_feedback carries (its data 8..40). */
export function paymentIdOf(tx) {
  return Buffer.from(getBase58Encoder().encode(tx.transaction.message.instructions.at(-1).data)).subarray(8, 40);
}

/** The trust-gate server scheme of the demo's service (its key, agent and policy). */
export async function trustGateServerScheme(f) {
  return new TrustGateServerScheme({
    serviceKey: await signerOf(f, 'service-key'),
    payeeAgentAsset: address(f.world.service.asset),
    policyId: f.world.policyId,
  });
}

/** An @x402/express route of the trust-gate scheme at the demo's price, paid to its service
 * (`extra`: more of the route's config, such as `extensions`). */
export function reportRoute(f, extra = {}) {
  return {
    accepts: { scheme: 'trust-gate', price: { amount: String(f.world.price), asset: f.world.mint }, network: f.network, payTo: f.payTo },
    description: 'a report priced per request',
    mimeType: 'application/json',
    ...extra,
  };
}
