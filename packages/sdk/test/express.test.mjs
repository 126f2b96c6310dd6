// An Express resource server built from the official x402 packages (@x402/express's
// paymentMiddleware, @x402/core's HTTPFacilitatorClient) with the trust-gate server scheme,
// settling through the Rust facilitator and paid by @x402/fetch with the trust-gate client
// scheme; and the Express mount of /verify and /receipt answering as the Rust facilitator
// does. The servers come from tests/tests/services/ts_x402.rs.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import { address, generateKeyPairSigner } from '@solana/kit';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { Builder, compose, programIds, sendAndConfirm, toBase64, transaction, DECISION_HEADERS, PAYMENT_REQUIRED, PAYMENT_RESPONSE, X_GATE_DECISION, X_PAYMENT_REASON_CODE, X_PAYMENT_REASON_NAME } from '../dist/index.js';
import { prepare, registerTrustGateScheme, X_PAYER_AGENT } from '../dist/x402/index.js';
import { gateDecision, mountTrustGate } from '../dist/express.js';
import { getFeedbackLogDecoder, getFeedbackLogEncoder } from '../dist/generated/gate/accounts/index.js';
import { closeServers, countingFetch, fixture, landed, listen, paymentIdOf, reportRoute, rpcOf, signerOf, spendControlled, trustGateServerScheme } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const world = f.world;
const payer = (name) => world.payers.find((p) => p.name === name);
after(closeServers);

async function resourceServer() {
  const scheme = await trustGateServerScheme(f);
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: f.facilitatorUrl })).register(f.network, scheme);
  const app = express();
  app.use(
    gateDecision({
      facilitatorUrl: f.facilitatorUrl,
      payeeAgentAsset: address(world.service.asset),
      mint: address(world.mint),
      amount: BigInt(world.price),
      policyId: world.policyId,
    }),
  );
  app.use(
    paymentMiddleware(
      {
        'GET /report': reportRoute(f),
      },
      server,
    ),
  );
  app.get('/report', (_req, res) => res.json({ report: 'paid through the trust gate' }));
  return listen(app);
}

let paidTransaction;

test('@x402/express with the trust-gate server scheme, paid by @x402/fetch with the client scheme: 200 and a settlement on chain', async () => {
  const url = await resourceServer();
  const client = registerTrustGateScheme(spendControlled(f), { signer: await signerOf(f, 'payer-tier-3'), rpcUrl: f.rpcUrl });
  const counted = countingFetch();
  const pay = wrapFetchWithPayment(counted.fetch, client);
  const res = await pay(`${url}/report`, { headers: { [X_PAYER_AGENT]: payer('payer-tier-3').asset } });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(body, { report: 'paid through the trust gate' });
  assert.deepEqual(counted.seen, { requests: 2, paid: 1 });
  const settled = decodePaymentResponseHeader(res.headers.get(PAYMENT_RESPONSE));
  assert.equal(settled.success, true, JSON.stringify(settled));
  const { tx, programs } = await landed(rpc, settled.transaction);
  // The client SDK's compute-unit limit, then the settlement's three instructions.
  const budget = 'ComputeBudget111111111111111111111111111111';
  const [gate, token] = f.composed[0].instructions.filter((ix) => ix.programId !== budget).map((ix) => ix.programId);
  assert.deepEqual(programs, [budget, gate, token, gate]);
  paidTransaction = tx;
});

test('the same server answers a tier-1 payer 402 Deny 6 with the decision headers, and no challenge', async () => {
  const url = await resourceServer();
  const res = await fetch(`${url}/report`, { headers: { [X_PAYER_AGENT]: payer('payer-tier-1').asset } });
  assert.equal(res.status, 402);
  assert.equal(res.headers.get(X_GATE_DECISION), 'Deny');
  assert.equal(res.headers.get(X_PAYMENT_REASON_CODE), '6');
  assert.equal(res.headers.get(X_PAYMENT_REASON_NAME), 'CounterpartyTierBelowMin');
  assert.equal(res.headers.get(PAYMENT_REQUIRED), null, 'no challenge for a denied payer');
  const body = await res.json();
  assert.deepEqual(body.decision, { kind: 'Deny', reasonCode: 6, reasonName: 'CounterpartyTierBelowMin' });
  // A request that names no payer agent is refused by name.
  const anonymous = await fetch(`${url}/report`);
  assert.equal(anonymous.status, 400);
  assert.match((await anonymous.json()).message, /X-Payer-Agent: missing/);
});

/** Status, decision headers and JSON body of an answer. */
async function answer(res) {
  const headers = Object.fromEntries(DECISION_HEADERS.map((h) => [h, res.headers.get(h)]).filter(([, v]) => v !== null));
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, contentType: res.headers.get('content-type')?.split(';')[0], headers, body };
}

test('the Express mount answers /verify and /receipt exactly as the Rust facilitator does', async () => {
  assert.ok(paidTransaction, 'the payment test ran first');
  const app = express();
  mountTrustGate(app, {
    rpcUrl: f.rpcUrl,
    facilitator: address(world.facilitator),
    networkName: f.networkName,
    facilitatorUrl: f.facilitatorUrl,
    atomicityEnforced: true,
  });
  const mount = await listen(app);
  const ctx = (p, extra = {}) => ({ payerAgentAsset: p, payeeAgentAsset: world.service.asset, amount: String(world.price), mint: world.mint, policyId: world.policyId, ...extra });
  const bodies = [
    ctx(payer('payer-tier-3').asset),
    ctx(payer('payer-tier-1').asset),
    ctx(payer('payer-tier-0').asset),
    ctx(payer('payer-tier-3-vault').asset),
    ctx(payer('payer-tier-3').asset, { policyId: 4242 }),
    ctx(payer('payer-tier-3').asset, { mint: world.service.asset }),
    ctx(payer('payer-tier-3').asset, { amount: '5x' }),
    ctx(payer('payer-tier-3').asset, { amount: 5 }),
    ctx(payer('payer-tier-3').asset, { amount: '18446744073709551616' }),
    ctx(payer('payer-tier-3').asset, { mint: '0OIl' }),
    ctx(payer('payer-tier-3').asset, { policyId: -1 }),
    ctx(payer('payer-tier-3').asset, { extra: 2 }),
    { payeeAgentAsset: world.service.asset, amount: '1', mint: world.mint, policyId: 1 },
    { payerAgentAsset: world.service.asset, payeeAgentAsset: world.service.asset, amount: '1', mint: world.mint },
  ].map((b) => JSON.stringify(b));
  bodies.push('[1]', '"text"');
  // x402 requests: a payment the SDK composed for a fresh demo challenge, and the same offer
  // relabelled as the exact scheme.
  const x402 = await x402Request('payer-tier-3');
  bodies.push(JSON.stringify(x402));
  const exact = structuredClone(x402);
  exact.paymentRequirements.scheme = 'exact';
  exact.paymentPayload.accepted.scheme = 'exact';
  bodies.push(JSON.stringify(exact));
  const decisions = new Set();
  const answers = new Map();
  for (const body of bodies) {
    const req = () => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const want = await answer(await fetch(`${f.facilitatorUrl}/verify`, req()));
    const got = await answer(await fetch(`${mount}/verify`, req()));
    assert.deepEqual(got, want, `POST /verify ${body}`);
    decisions.add(want.status);
    answers.set(body, want);
  }
  const paid = answers.get(JSON.stringify(x402));
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  assert.equal(paid.body.payer, (await signerOf(f, 'payer-tier-3')).address, 'the facilitator read the transaction');
  assert.equal(answers.get(JSON.stringify(exact)).body.invalidReason, 'unsupported_scheme');
  assert.deepEqual([...decisions].sort(), [200, 400, 402, 404, 422], 'every kind of answer was compared');
  // The receipt of the payment just settled, of a payment never made, and a bad hash.
  const paymentId = paymentIdOf(paidTransaction).toString('hex');
  // The mount keeps no records: the settlement's transaction and payer agent, which the
  // facilitator server knows from its own, are null there; everything the log holds is equal.
  const fromLog = (a) => {
    const c = structuredClone(a);
    if (c.body && typeof c.body === 'object') {
      delete c.body.transaction;
      delete c.body.payer;
    }
    return c;
  };
  for (const hash of [paymentId, '00'.repeat(32), 'zz', 'g'.repeat(64)]) {
    const want = await answer(await fetch(`${f.facilitatorUrl}/receipt/${hash}`));
    const got = await answer(await fetch(`${mount}/receipt/${hash}`));
    assert.deepEqual(fromLog(got), fromLog(want), `GET /receipt/${hash}`);
    if (hash === paymentId) {
      assert.equal(want.body.exists, true);
      assert.equal(typeof want.body.transaction, 'string', 'the facilitator knows its settlement');
      assert.equal(got.body.transaction, null);
    }
  }
  // Once the payment's log is closed, the mount passes the facilitator's receipt through
  // (it keeps the records, else reads the chain's history). The log is made a week and more
  // old (localnet_setAccount), then closed with the SDK's builder, paid by another key.
  const builder = new Builder(programIds(f.network));
  const logKey = await builder.pda.feedbackLog(address(world.facilitator), Buffer.from(paymentId, 'hex'));
  const { value: logAcc } = await rpc.getAccountInfo(logKey, { encoding: 'base64' }).send();
  const log = getFeedbackLogDecoder().decode(Buffer.from(logAcc.data[0], 'base64'));
  const aged = { ...log, createdAt: log.createdAt - 605_000n, deadline: log.deadline - 605_000n };
  const set = await fetch(f.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'localnet_setAccount',
      params: [logKey, { lamports: Number(logAcc.lamports), owner: logAcc.owner, data: [Buffer.from(getFeedbackLogEncoder().encode(aged)).toString('base64'), 'base64'] }],
    }),
  });
  assert.equal((await set.json()).error, undefined);
  const closer = await generateKeyPairSigner();
  const airdrop = await rpc.requestAirdrop(closer.address, 1_000_000_000n).send();
  await landed(rpc, airdrop);
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  const close = await builder.closePaymentRecords(address(world.facilitator), Buffer.from(paymentId, 'hex'));
  await sendAndConfirm(rpc, await transaction(closer, [close], [], lifetime));
  assert.equal((await rpc.getAccountInfo(logKey, { encoding: 'base64' }).send()).value, null, 'the log is closed');
  const closedWant = await answer(await fetch(`${f.facilitatorUrl}/receipt/${paymentId}`));
  const closedGot = await answer(await fetch(`${mount}/receipt/${paymentId}`));
  assert.deepEqual(closedGot, closedWant);
  assert.equal(closedWant.body.closed, true, JSON.stringify(closedWant.body));
  assert.equal(closedWant.body.value, String(world.price));
  // Without a facilitator to forward to, an x402 request is refused by name.
  const bare = express();
  mountTrustGate(bare, { rpcUrl: f.rpcUrl, facilitator: address(world.facilitator), atomicityEnforced: true });
  const refused = await fetch(`${await listen(bare)}/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(x402) });
  assert.equal(refused.status, 400);
  assert.match((await refused.json()).message, /^paymentPayload: .*no facilitatorUrl/);
  assert.throws(() => mountTrustGate(express(), { rpcUrl: f.rpcUrl, facilitator: address(world.facilitator), atomicityEnforced: 'true' }), /AtomicityNotEnforced|boolean true/);
});

/** An x402 /verify request paying a fresh demo challenge, composed and signed by `label`. */
async function x402Request(label) {
  const res = await fetch(`${f.demoUrl}/protected`, { headers: { [f.demoPayerHeader]: payer(label).asset } });
  assert.equal(res.status, 402);
  const required = JSON.parse(Buffer.from(res.headers.get(PAYMENT_REQUIRED), 'base64').toString('utf8'));
  const accepted = required.accepts[0];
  const p = await prepare(rpc, accepted, required.resource.url, await signerOf(f, label));
  const ixs = await compose(p.builder, p.settlement, true);
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  const tx = await transaction(p.feePayer, ixs, p.tables, lifetime);
  const paymentPayload = { x402Version: 2, resource: required.resource, accepted, payload: { transaction: toBase64(tx) } };
  return { x402Version: 2, paymentPayload, paymentRequirements: accepted };
}

