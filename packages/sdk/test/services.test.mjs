// The TypeScript SDK against the Rust services (started by tests/tests/services/ts_x402.rs):
// decisions and settlements equal to the Rust SDK's, @x402/fetch paying the Rust demo with the
// trust-gate scheme, and a stock exact-scheme client refused before it sends anything.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { address } from '@solana/kit';
import { x402Client, wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { registerExactSvmScheme } from '@x402/svm/exact/client';
import { compose, gatePayment, transaction, X_PAYMENT_RECEIPT, PAYMENT_RESPONSE } from '../dist/index.js';
import { prepare, registerTrustGateScheme } from '../dist/x402/index.js';
import { countingFetch, fixture, instructionJson, rpcOf, signerOf, tokenBalance } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const world = f.world;
const payerNamed = (name) => world.payers.find((p) => p.name === name);

test('gatePayment decides as the Rust SDK for every demo payer (tiers 0, 1, 3 and the vault-funded 3)', async () => {
  assert.equal(f.decisions.length, 4);
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

async function payDemo(label, payerAsset) {
  // x402Client pays only assets its spend controls allow: the demo mint, up to 1.00.
  const client = registerTrustGateScheme(
    new x402Client().setSpendControls({ allowedAssets: [{ network: f.network, asset: world.mint, maxAmountPerPayment: '1000000' }] }),
    { signer: await signerOf(f, label), rpcUrl: f.rpcUrl },
  );
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
    // The transaction as the cluster holds it: the three instructions of a settlement.
    const tx = await rpc.getTransaction(receipt, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send();
    assert.ok(tx, 'the settlement is on chain');
    assert.equal(tx.meta.err, null);
    const keys = [...tx.transaction.message.accountKeys, ...(tx.meta.loadedAddresses?.writable ?? []), ...(tx.meta.loadedAddresses?.readonly ?? [])];
    const programs = tx.transaction.message.instructions.map((i) => keys[i.programIdIndex]);
    const gate = f.composed[0].instructions[0].programId;
    const token = f.composed[0].instructions[1].programId;
    assert.deepEqual(programs, [gate, token, gate], label);
    assert.equal(keys[0], world.facilitator, 'the facilitator pays the fee');
  }
});

test('a stock @x402/fetch client with only the exact scheme fails cleanly and sends no payment', async () => {
  const signer = await signerOf(f, 'payer-tier-3');
  const client = registerExactSvmScheme(
    new x402Client().setSpendControls({ allowedAssets: [{ network: f.network, asset: world.mint, maxAmountPerPayment: '1000000' }] }),
    { signer },
  );
  const counted = countingFetch();
  const pay = wrapFetchWithPayment(counted.fetch, client);
  const source = f.composed[0].instructions[1].accounts[0].pubkey;
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
