// The TypeScript SDK against the Rust services (started by tests/tests/services/ts_x402.rs):
// decisions and settlements equal to the Rust SDK's, @x402/fetch paying the Rust demo with the
// trust-gate scheme, and a stock exact-scheme client refused before it sends anything.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { address } from '@solana/kit';
import { wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { registerExactSvmScheme } from '@x402/svm/exact/client';
import {
  baseCollection,
  Builder,
  compose,
  dispute,
  disputeAlone,
  gatePayment,
  programIds,
  sendAndConfirm,
  settle,
  toBase64,
  transaction,
  PAYMENT_RESPONSE,
  X_PAYMENT_RECEIPT,
} from '../dist/index.js';
import { prepare, registerTrustGateScheme } from '../dist/x402/index.js';
import { countingFetch, fixture, instructionJson, landed, paymentIdOf, rpcOf, signerOf, spendControlled, tokenBalance } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const world = f.world;
const payerNamed = (name) => world.payers.find((p) => p.name === name);
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** A composed settlement's payment part: [gate_payment_strict, TransferChecked, emit_feedback]. */
const paymentPart = (c) => c.instructions.filter((ix) => ix.programId !== COMPUTE_BUDGET_PROGRAM);

test('gatePayment decides as the Rust SDK for every demo payer (tiers 0, 1, 3, the vault-funded 3 and the subscriber)', async () => {
  assert.equal(f.decisions.length, 5);
  for (const d of f.decisions) {
    const got = await gatePayment({
      rpcUrl: f.rpcUrl,
      caller: address(world.facilitator),
      payerAgentAsset: address(d.asset),
      payeeAgentAsset: address(world.service.asset),
      amount: BigInt(world.price),
      mint: address(world.mint),
      policyId: world.policyId,
    });
    assert.deepEqual(got, d.decision, d.name);
  }
  // The tier-1 payer is denied 6, CounterpartyTierBelowMin; a signing caller decides the same.
  const tier1 = f.decisions.find((d) => d.tier === 1);
  assert.deepEqual(tier1.decision, { kind: 'Deny', reasonCode: 6, reasonName: 'CounterpartyTierBelowMin' });
  const signed = await gatePayment({
    rpcUrl: f.rpcUrl,
    caller: await signerOf(f, 'payer-tier-1'),
    payerAgentAsset: address(tier1.asset),
    payeeAgentAsset: address(world.service.asset),
    amount: BigInt(world.price),
    mint: address(world.mint),
    policyId: world.policyId,
  });
  assert.deepEqual(signed, tier1.decision);
});

test('a decision that cannot be made names why: a missing policy fails the simulation with its logs', async () => {
  await assert.rejects(
    gatePayment({
      rpcUrl: f.rpcUrl,
      caller: address(world.facilitator),
      payerAgentAsset: address(payerNamed('payer-tier-3').asset),
      payeeAgentAsset: address(world.service.asset),
      amount: 1n,
      mint: address(world.mint),
      policyId: 4242,
    }),
    (e) => e.name === 'TransactionFailedError' && /AccountNotInitialized|3012/.test(e.message),
  );
  await assert.rejects(
    gatePayment({ rpcUrl: f.rpcUrl, caller: address(world.facilitator), payerAgentAsset: address(world.mint), payeeAgentAsset: address(world.mint), amount: 1, mint: address(world.mint), policyId: 1 }),
    /amount: a bigint/,
  );
});

test('compose builds exactly the Rust SDK settlement: the same instructions and the same v0 message bytes', async () => {
  for (const c of f.composed) {
    const signer = await signerOf(f, c.label);
    const budget = {
      unitLimit: c.computeBudget.unitLimit ?? undefined,
      unitPriceMicroLamports: c.computeBudget.unitPriceMicroLamports ? BigInt(c.computeBudget.unitPriceMicroLamports) : undefined,
    };
    const p = await prepare(rpc, c.requirements, c.resourceUrl, signer, {}, budget);
    const ixs = await compose(p.builder, p.settlement, true);
    assert.deepEqual(ixs.map(instructionJson), c.instructions, c.label);
    const tx = await transaction(p.feePayer, ixs, p.tables, { blockhash: c.blockhash, lastValidBlockHeight: 0n });
    assert.equal(Buffer.from(tx.messageBytes).toString('hex'), c.message, `${c.label}: v0 message bytes`);
  }
});

test('the atomicity guard accepts only the boolean true', async () => {
  const c = f.composed[0];
  const p = await prepare(rpc, c.requirements, c.resourceUrl, await signerOf(f, c.label));
  for (const bad of [false, 'true', 1, null, undefined, {}]) {
    await assert.rejects(compose(p.builder, p.settlement, bad), (e) => e.name === 'AtomicityNotEnforcedError' && /boolean true/.test(e.message));
  }
});

const paid = [];

async function payDemo(label, payerAsset) {
  const client = registerTrustGateScheme(spendControlled(f), { signer: await signerOf(f, label), rpcUrl: f.rpcUrl });
  const counted = countingFetch();
  const pay = wrapFetchWithPayment(counted.fetch, client);
  const res = await pay(`${f.demoUrl}/protected`, { headers: { [f.demoPayerHeader]: payerAsset } });
  return { res, seen: counted.seen };
}

test('@x402/fetch with the trust-gate scheme pays the Rust demo: 200, a receipt, and the settlement layout on chain', async () => {
  for (const [label, name] of [['payer-tier-3', 'payer-tier-3'], ['payer-tier-3-vault/hot-key', 'payer-tier-3-vault']]) {
    const { res, seen } = await payDemo(label, payerNamed(name).asset);
    const body = await res.json();
    assert.equal(res.status, 200, `${label}: ${JSON.stringify(body)}`);
    assert.deepEqual(seen, { requests: 2, paid: 1 });
    const receipt = res.headers.get(X_PAYMENT_RECEIPT);
    assert.ok(receipt, 'X-Payment-Receipt');
    const settled = decodePaymentResponseHeader(res.headers.get(PAYMENT_RESPONSE));
    assert.equal(settled.success, true);
    assert.equal(settled.transaction, receipt);
    assert.equal(body.transaction, receipt);
    // The transaction as the cluster holds it: the SDK's compute-unit limit, then the three
    // instructions of a settlement.
    const { tx, keys, programs } = await landed(rpc, receipt);
    const [gate, token] = paymentPart(f.composed[0]).map((ix) => ix.programId);
    assert.deepEqual(programs, [COMPUTE_BUDGET_PROGRAM, gate, token, gate], label);
    assert.equal(keys[0], world.facilitator, 'the facilitator pays the fee');
    paid.push({ label, tx });
  }
});

test('dispute: the payer disputes a settled payment through the facilitator, which co-signs', async () => {
  assert.ok(paid.length, 'the payment test ran first');
  const { label, tx } = paid[0];
  const paymentIdHash = paymentIdOf(tx);
  const b = new Builder(programIds('solana-localnet'));
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  const disputeTx = await dispute(b, address(world.facilitator), await signerOf(f, label), {
    collection: await baseCollection(rpc, b.ids),
    paymentIdHash,
    payeeAsset: address(world.service.asset),
    reasonHash: createHash('sha256').update('the report never arrived').digest(),
    feedbackUri: '',
  }, lifetime);
  const res = await fetch(`${f.facilitatorUrl}/dispute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transaction: toBase64(disputeTx) }) });
  assert.equal(res.status, 200, await res.clone().text());
  const receipt = await (await fetch(`${f.facilitatorUrl}/receipt/${paymentIdHash.toString('hex')}`)).json();
  assert.equal(receipt.exists, true);
  assert.equal(receipt.disputed, true);
});

test('settle holding both keys: one transaction, recorded as settled atomically', async () => {
  const b = new Builder(programIds('solana-localnet'));
  const payerSigner = await signerOf(f, 'payer-tier-3');
  const facilitator = await signerOf(f, 'facilitator');
  const c = f.composed[0];
  const p = await prepare(rpc, c.requirements, c.resourceUrl, payerSigner);
  const paymentIdHash = createHash('sha256').update(`settle-${Date.now()}`).digest();
  const signature = await settle({
    rpc,
    builder: b,
    settlement: { ...p.settlement, facilitator, feedback: { ...p.settlement.feedback, paymentIdHash } },
    tables: p.tables,
    atomicityEnforced: true,
  });
  assert.ok(signature);
  const receipt = await (await fetch(`${f.facilitatorUrl}/receipt/${paymentIdHash.toString('hex')}`)).json();
  assert.equal(receipt.exists, true);
  assert.equal(receipt.settledAtomically, true);
  assert.equal(receipt.payerWallet, payerSigner.address);
  // The same payment again: refused in the send's preflight, with the program logs.
  await assert.rejects(
    settle({ rpc, builder: b, settlement: { ...p.settlement, facilitator, feedback: { ...p.settlement.feedback, paymentIdHash } }, tables: p.tables, atomicityEnforced: true }),
    (e) => e.name === 'TransactionFailedError' && e.logs.length > 0,
  );
  await assert.rejects(
    settle({ rpc, builder: b, settlement: { ...p.settlement, facilitator }, tables: p.tables, atomicityEnforced: false }),
    (e) => e.name === 'AtomicityNotEnforcedError',
  );
  // The payer disputes it alone: it signs and pays, the facilitator does not sign.
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  const alone = await disputeAlone(b, facilitator.address, payerSigner, {
    collection: await baseCollection(rpc, b.ids),
    paymentIdHash,
    payeeAsset: p.settlement.payeeAsset,
    reasonHash: createHash('sha256').update('disputed without the facilitator').digest(),
    feedbackUri: '',
  }, lifetime);
  await sendAndConfirm(rpc, alone);
  const disputed = await (await fetch(`${f.facilitatorUrl}/receipt/${paymentIdHash.toString('hex')}`)).json();
  assert.equal(disputed.disputed, true);
});

test('a stock @x402/fetch client with only the exact scheme fails cleanly and sends no payment', async () => {
  const signer = await signerOf(f, 'payer-tier-3');
  const client = registerExactSvmScheme(spendControlled(f), { signer });
  const counted = countingFetch();
  const pay = wrapFetchWithPayment(counted.fetch, client);
  const source = paymentPart(f.composed[0])[1].accounts[0].pubkey;
  const before = await tokenBalance(rpc, source);
  await assert.rejects(
    pay(`${f.demoUrl}/protected`, { headers: { [f.demoPayerHeader]: payerNamed('payer-tier-3').asset } }),
    (e) => {
      // x402Client finds no registered scheme for the only offer, `trust-gate`.
      assert.match(e.message, /Failed to create payment payload: No network\/scheme registered .*"scheme":"trust-gate"/);
      return true;
    },
  );
  assert.deepEqual(counted.seen, { requests: 1, paid: 0 }, 'only the unpaid request left the client');
  assert.equal(await tokenBalance(rpc, source), before, 'the payer paid nothing');
});
