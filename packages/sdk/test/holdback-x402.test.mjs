// A payment the payer's policy holds a share of (docs/holdback.md), over x402, against the Rust
// services (tests/tests/services/ts_x402.rs, which also starts the demo of the low-tier payee):
// challenge messages with holdback terms equal to the Rust SDK's, the held settlement composed
// from that demo's challenge as the Rust SDK composes it, refusals of terms that are not the
// payee's, then @x402/fetch paying that demo and an @x402/express server whose challenges state
// the facilitator's decision: each time the held share lands in the payee's escrow.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import { address } from '@solana/kit';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { associatedTokenAccount, compose, transaction, PAYMENT_REQUIRED, PAYMENT_RESPONSE, TOKEN_PROGRAM } from '../dist/index.js';
import {
  challengeMessage,
  challengeSignedBy,
  decodeHeader,
  gateExtensionOf,
  prepare,
  registerTrustGateScheme,
  signChallenge,
  TrustGateServerScheme,
  X_PAYER_AGENT,
} from '../dist/x402/index.js';
import { gateDecision } from '../dist/express.js';
import { closeServers, countingFetch, fixture, instructionJson, isInput, landed, listen, rpcOf, signerOf, spendControlled, tokenBalance } from './helpers.mjs';

const f = fixture();
const h = f.holdback;
const rpc = rpcOf(f);
const world = f.world;
const payer = world.payers.find((p) => p.name === h.payer);
const hex = (b) => Buffer.from(b).toString('hex');
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
after(closeServers);

test('challenge messages with holdback terms are the Rust SDK\'s bytes, and so are the service\'s signatures', async () => {
  const service = await signerOf(f, 'service-key');
  assert.deepEqual(h.challenges.map((c) => c.label), ['plain', 'held', 'held without an arbiter', 'held at the largest numbers']);
  for (const c of h.challenges) {
    const gate = gateExtensionOf(c.requirements);
    assert.deepEqual(gate, c.gate, c.label);
    assert.equal(hex(challengeMessage(c.requirements, c.resourceUrl, gate)), c.message, c.label);
    const { serviceSignature, ...unsigned } = gate;
    assert.equal(await signChallenge(service.keyPair.privateKey, c.requirements, c.resourceUrl, unsigned), serviceSignature, c.label);
    assert.equal(await challengeSignedBy(service.address, c.requirements, c.resourceUrl, gate), true, c.label);
  }
  // The terms are signed: a challenge stating other terms, or none, is not the service's.
  const held = h.challenges[1];
  const gate = gateExtensionOf(held.requirements);
  for (const other of [{ ...gate, holdback: { ...gate.holdback, held: '10001' } }, { ...gate, holdback: { ...gate.holdback, arbiter: undefined } }, { ...gate, holdback: undefined }]) {
    assert.equal(await challengeSignedBy(service.address, held.requirements, held.resourceUrl, other), false);
  }
  // The held demo's own challenge: the gate's terms, signed over the Rust SDK's bytes.
  const c = h.challenge;
  const demoGate = gateExtensionOf(c.requirements);
  assert.deepEqual(demoGate.holdback, h.terms);
  assert.equal(hex(challengeMessage(c.requirements, c.resourceUrl, demoGate)), c.message);
  assert.equal(await challengeSignedBy(service.address, c.requirements, c.resourceUrl, demoGate), true);
});

test('prepare composes the held settlement of the demo\'s challenge exactly as the Rust SDK does', async () => {
  const c = h.composed;
  const p = await prepare(rpc, c.requirements, c.resourceUrl, await signerOf(f, c.label));
  assert.deepEqual(p.settlement.holdback, { tier: 1, held: BigInt(h.held), escrow: h.escrow });
  const ixs = await compose(p.builder, p.settlement, true);
  assert.deepEqual(ixs.map(instructionJson), c.instructions);
  const tx = await transaction(p.feePayer, ixs, p.tables, { blockhash: c.blockhash, lastValidBlockHeight: 0n });
  assert.equal(hex(tx.messageBytes), c.message, 'v0 message bytes');
  // A challenge without terms composes a settlement without a holdback.
  const plain = await prepare(rpc, f.composed[0].requirements, f.composed[0].resourceUrl, await signerOf(f, f.composed[0].label));
  assert.equal(plain.settlement.holdback, undefined);
});

test('prepare refuses terms that send the share elsewhere than the payee\'s escrow, or hold back all of it, by name', async () => {
  const c = h.composed;
  const signer = await signerOf(f, c.label);
  const gate = c.requirements.extra.gate;
  const stating = (holdback) => ({ ...c.requirements, extra: { ...c.requirements.extra, gate: { ...gate, holdback: { ...gate.holdback, ...holdback } } } });
  const refused = (holdback, field, message) =>
    assert.rejects(prepare(rpc, stating(holdback), c.resourceUrl, signer), (e) => isInput(field)(e) && message.test(e.message), JSON.stringify(holdback));
  // The main demo's payee's escrow is an escrow of the gate, but not this payee's.
  const b = (await prepare(rpc, c.requirements, c.resourceUrl, signer)).builder;
  const other = await b.pda.holdbackEscrow(address(world.service.asset), address(world.mint));
  await refused({ escrow: other }, 'extra.gate.holdback.escrow', new RegExp(`${other} is not the payee's escrow ${h.escrow}`));
  await refused({ escrow: 'nope' }, 'extra.gate.holdback.escrow', /not a public key/);
  await refused({ held: String(world.price) }, 'extra.gate.holdback.held', new RegExp(`${world.price} is not below the amount ${world.price}`));
  await refused({ held: '-1' }, 'extra.gate.holdback.held', /not a u64/);
  await refused({ more: 1 }, 'extra.gate.holdback.more', /unknown field/);
  await refused({ payeeTier: 256 }, 'extra.gate.holdback.payeeTier', /0\.\.=255/);
});

/** The escrow's, the payee's and the payer's token balances. */
async function balances() {
  const mint = address(world.mint);
  const [payee, payerToken] = await Promise.all([
    associatedTokenAccount(address(world.heldService.owner), mint, TOKEN_PROGRAM),
    associatedTokenAccount(address(payer.owner), mint, TOKEN_PROGRAM),
  ]);
  const [escrow, toPayee, fromPayer] = await Promise.all([tokenBalance(rpc, h.escrow), tokenBalance(rpc, payee), tokenBalance(rpc, payerToken)]);
  return { escrow, payee: toPayee, payer: fromPayer };
}

/** Checks that one payment of the price moved from the payer: the held share to the escrow, the rest to the payee. */
async function paidWithHoldback(before, receipt) {
  const price = BigInt(world.price);
  const held = BigInt(h.held);
  assert.ok(held > 0n && held < price);
  assert.deepEqual(await balances(), { escrow: before.escrow + held, payee: before.payee + price - held, payer: before.payer - price });
  // One transaction: the unit limit, the strict gate, the two transfers, the feedback.
  const { programs } = await landed(rpc, receipt);
  const [gate, token] = h.composed.instructions.filter((ix) => ix.programId !== COMPUTE_BUDGET_PROGRAM).map((ix) => ix.programId);
  assert.deepEqual(programs, [COMPUTE_BUDGET_PROGRAM, gate, token, token, gate]);
}

test('@x402/fetch with the trust-gate scheme pays the low-tier payee\'s Rust demo: its share held back in the escrow', async () => {
  const client = registerTrustGateScheme(spendControlled(f), { signer: await signerOf(f, h.payer), rpcUrl: f.rpcUrl });
  const counted = countingFetch();
  const pay = wrapFetchWithPayment(counted.fetch, client);
  const before = await balances();
  const res = await pay(`${h.demoUrl}/protected`, { headers: { [f.demoPayerHeader]: payer.asset } });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(counted.seen, { requests: 2, paid: 1 });
  const settled = decodePaymentResponseHeader(res.headers.get(PAYMENT_RESPONSE));
  assert.equal(settled.success, true, JSON.stringify(settled));
  await paidWithHoldback(before, settled.transaction);
});

test('@x402/express behind gateDecision states the decision\'s holdback terms in its signed challenge, and is paid with them', async () => {
  const service = await signerOf(f, 'service-key');
  const scheme = new TrustGateServerScheme({ serviceKey: service, payeeAgentAsset: address(world.heldService.asset), policyId: world.holdbackPolicyId });
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: f.facilitatorUrl })).register(f.network, scheme);
  const app = express();
  app.use(
    gateDecision({
      facilitatorUrl: f.facilitatorUrl,
      payeeAgentAsset: address(world.heldService.asset),
      mint: address(world.mint),
      amount: BigInt(world.price),
      policyId: world.holdbackPolicyId,
    }),
  );
  const route = {
    accepts: { scheme: 'trust-gate', price: { amount: String(world.price), asset: world.mint }, network: f.network, payTo: world.heldService.owner },
    description: 'a report held back in part',
    mimeType: 'application/json',
  };
  app.use(paymentMiddleware({ 'GET /report': route }, server));
  app.get('/report', (_req, res) => res.json({ report: 'paid with a holdback' }));
  const url = await listen(app);

  const unpaid = await fetch(`${url}/report`, { headers: { [X_PAYER_AGENT]: payer.asset } });
  assert.equal(unpaid.status, 402);
  const required = decodeHeader(PAYMENT_REQUIRED, unpaid.headers.get(PAYMENT_REQUIRED));
  const [offer] = required.accepts;
  const gate = gateExtensionOf(offer);
  assert.deepEqual(gate.holdback, h.terms);
  assert.equal(await challengeSignedBy(service.address, offer, required.resource.url, gate), true);

  const client = registerTrustGateScheme(spendControlled(f), { signer: await signerOf(f, h.payer), rpcUrl: f.rpcUrl });
  const pay = wrapFetchWithPayment(fetch, client);
  const before = await balances();
  const res = await pay(`${url}/report`, { headers: { [X_PAYER_AGENT]: payer.asset } });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(body, { report: 'paid with a holdback' });
  const settled = decodePaymentResponseHeader(res.headers.get(PAYMENT_RESPONSE));
  assert.equal(settled.success, true, JSON.stringify(settled));
  await paidWithHoldback(before, settled.transaction);
});
