// The payer's side of x402's `batch-settlement` in the TypeScript SDK (src/x402/batch.ts),
// against what the Rust client SDK builds and the Rust facilitator accepts (started by
// tests/tests/services/ts_batch.rs): the same opens, vouchers and payloads byte for byte for
// the same inputs, the scheme's sessions (a deposit, vouchers, a new session past the deposit,
// one call at a time), its errors naming the field, and a gated session paid through /settle.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { address, createKeyPairSignerFromBytes } from '@solana/kit';
import { x402Client } from '@x402/fetch';
import { Builder, lookupTables, programIds, TOKEN_2022_PROGRAM } from '../dist/index.js';
import {
  batchExtraOf,
  bindingMemo,
  openSession,
  registerTrustGateBatchScheme,
  SCHEME_BATCH,
  SCHEME_GATED_BATCH,
  TrustGateBatchClientScheme,
} from '../dist/x402/index.js';
import { fixture, rpcOf, signerOf } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const [gatedCase, plainCase] = f.parity;
const isInput = (field) => (e) => e.name === 'TrustGateInputError' && e.field === field;

/** The TypeScript SDK's session for a parity case's inputs. */
async function openCase(c) {
  const extra = batchExtraOf({ extra: c.extra });
  const tables = await lookupTables(rpc, address(extra.feePayer));
  assert.ok(tables.length > 0, "the facilitator's lookup tables");
  return openSession({
    builder: new Builder(programIds('solana-localnet')),
    extra,
    mint: address(c.mint),
    tokenProgram: TOKEN_2022_PROGRAM,
    payTo: address(c.payTo),
    payer: await signerOf(f, c.payer),
    voucherKey: await createKeyPairSignerFromBytes(Uint8Array.from(c.voucherKey)),
    deposit: BigInt(c.deposit),
    salt: BigInt(c.salt),
    openSlot: BigInt(c.openSlot),
    gate: c.gated ? { payerAsset: address(c.gate.payerAsset), payeeAsset: address(c.gate.payeeAsset), policyId: c.gate.policyId } : undefined,
    tables,
    lifetime: { blockhash: c.blockhash, lastValidBlockHeight: 0n },
  });
}

for (const c of f.parity) {
  test(`a ${c.label} open, its vouchers and its refund are the Rust SDK's, byte for byte`, async () => {
    const { transaction, session } = await openCase(c);
    assert.equal(session.channel, c.channel);
    const deposit = await session.depositPayload(transaction, BigInt(c.price));
    // The open's bytes first, for a readable failure; then every field of every payload.
    assert.equal(deposit.deposit.transaction, c.depositPayload.deposit.transaction);
    assert.equal(deposit.voucher.signature, c.depositPayload.voucher.signature);
    assert.deepEqual(deposit, c.depositPayload);
    const voucher = await session.voucherPayload(BigInt(c.secondPrice));
    assert.equal(voucher.voucher.signature, c.voucherPayload.voucher.signature);
    assert.deepEqual(voucher, c.voucherPayload);
    assert.deepEqual(session.refundPayload(), c.refundPayload);
    // The same refusal past the deposit, and the session unchanged by it.
    const charged = session.charged;
    await assert.rejects(session.voucher(BigInt(c.deposit)), (e) => isInput('amount')(e) && `invalid ${e.message}` === c.overDeposit);
    assert.equal(session.charged, charged);
  });
}

test('the open carries the binding Memo, and the offer\'s memo only when it has one', async () => {
  for (const c of f.parity) {
    const bytes = Buffer.from(c.depositPayload.deposit.transaction, 'base64');
    const binding = Buffer.from(bindingMemo(c.extra.receiverAuthorizer));
    assert.ok(bytes.includes(binding), c.label);
    assert.equal(bytes.includes(Buffer.from('session-1')), c.extra.memo === 'session-1', c.label);
  }
  assert.equal(bindingMemo('K'), 'x402:batch-settlement:svm:rcvauth:v1:K');
});

test('the scheme refuses what it cannot pay, naming the field', async () => {
  const signer = await signerOf(f, 'payer-tier-3');
  const offer = plainCase.offer;
  const plain = new TrustGateBatchClientScheme({ signer, rpc, scheme: SCHEME_BATCH });
  const with_ = (extra) => ({ ...offer, extra: { ...offer.extra, ...extra } });
  const cases = [
    [plain.createPaymentPayload(1, offer), 'x402Version'],
    [plain.createPaymentPayload(2, gatedCase.offer), 'scheme'],
    [plain.createPaymentPayload(2, { ...offer, amount: '1.5' }), 'amount'],
    [plain.createPaymentPayload(2, offer, { maxAmountPerPayment: '999' }), 'amount'],
    [plain.createPaymentPayload(2, with_({ withdrawDelay: 60 })), 'extra.withdrawDelay'],
    [plain.createPaymentPayload(2, with_({ voucherSigner: 'server' })), 'extra.voucherSigner'],
    [plain.createPaymentPayload(2, with_({ paymentFlow: 'permit' })), 'extra.paymentFlow'],
    [plain.createPaymentPayload(2, with_({ tokenProgram: signer.address })), 'extra.tokenProgram'],
    [plain.createPaymentPayload(2, with_({ feePayer: 'nope' })), 'extra.feePayer'],
    [new TrustGateBatchClientScheme({ signer, rpc, scheme: SCHEME_BATCH, depositAmount: 999n }).createPaymentPayload(2, offer), 'depositAmount'],
    [new TrustGateBatchClientScheme({ signer, rpc }).createPaymentPayload(2, { ...gatedCase.offer, extra: { ...gatedCase.offer.extra, gate: undefined } }), 'extra.gate'],
  ];
  for (const [p, field] of cases) await assert.rejects(p, isInput(field), field);
  assert.throws(() => new TrustGateBatchClientScheme({ signer, rpc, requestsPerDeposit: 0 }), isInput('requestsPerDeposit'));
  assert.throws(() => new TrustGateBatchClientScheme({ signer, rpc, scheme: 'exact' }), isInput('scheme'));
  assert.equal(plain.session(offer), undefined, 'nothing opened by a refused call');
});

test('past its deposit the scheme opens a new session; refund ends every session of the offer', async () => {
  const signer = await signerOf(f, 'payer-tier-3');
  const offer = plainCase.offer;
  const price = BigInt(offer.amount);
  const scheme = new TrustGateBatchClientScheme({ signer, rpc, scheme: SCHEME_BATCH, requestsPerDeposit: 2 });
  const payloads = [];
  for (let i = 0; i < 3; i++) payloads.push((await scheme.createPaymentPayload(2, offer)).payload);
  assert.deepEqual(
    payloads.map((p) => [p.type, p.voucher.maxClaimableAmount]),
    [
      ['deposit', String(price)],
      ['voucher', String(2n * price)],
      ['deposit', String(price)],
    ],
  );
  assert.equal(payloads[0].deposit.amount, String(2n * price));
  assert.equal(payloads[1].voucher.channelId, payloads[0].voucher.channelId);
  assert.notEqual(payloads[2].voucher.channelId, payloads[0].voucher.channelId);
  // A fresh voucher key and salt per session.
  assert.notEqual(payloads[2].channelConfig.payerAuthorizer, payloads[0].channelConfig.payerAuthorizer);
  assert.notEqual(payloads[2].channelConfig.salt, payloads[0].channelConfig.salt);
  assert.equal(scheme.session(offer).channel, payloads[2].voucher.channelId);
  const refunds = scheme.refund(offer);
  assert.deepEqual(
    refunds.map((r) => [r.x402Version, r.payload.type, r.payload.channelConfig.salt]),
    [
      [2, 'refund', payloads[0].channelConfig.salt],
      [2, 'refund', payloads[2].channelConfig.salt],
    ],
  );
  assert.deepEqual(scheme.refund(offer), []);
  assert.equal(scheme.session(offer), undefined);
  // A minimum deposit of the offer above the chosen one wins.
  const floored = await scheme.createPaymentPayload(2, { ...offer, extra: { ...offer.extra, minDeposit: String(7n * price) } });
  assert.equal(floored.payload.deposit.amount, String(7n * price));
});

test('concurrent first requests of one offer open one channel', async () => {
  const signer = await signerOf(f, 'payer-tier-3');
  const scheme = new TrustGateBatchClientScheme({ signer, rpc, scheme: SCHEME_BATCH });
  const [a, b] = await Promise.all([scheme.createPaymentPayload(2, plainCase.offer), scheme.createPaymentPayload(2, plainCase.offer)]);
  assert.deepEqual([a.payload.type, b.payload.type], ['deposit', 'voucher']);
  assert.equal(b.payload.voucher.channelId, a.payload.voucher.channelId);
});

async function settle(resourceUrl, accepted, payload) {
  const body = {
    x402Version: 2,
    paymentPayload: { x402Version: 2, resource: { url: resourceUrl }, accepted, payload },
    paymentRequirements: accepted,
  };
  const r = await fetch(`${f.facilitatorUrl}/settle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await r.json();
  assert.equal(r.status, 200, JSON.stringify(json));
  assert.equal(json.success, true, JSON.stringify(json));
  return json;
}

test('a gated session paid through the facilitator: a deposit, five vouchers, the refund', async () => {
  const s = f.session;
  const { offer, resourceUrl } = s;
  const price = BigInt(s.price);
  const deposit = BigInt(s.requestsPerDeposit) * price;
  assert.equal(offer.scheme, SCHEME_GATED_BATCH);
  const scheme = new TrustGateBatchClientScheme({ signer: await signerOf(f, s.payer), rpcUrl: f.rpcUrl, requestsPerDeposit: s.requestsPerDeposit });
  // The first payload through @x402/core's client, as @x402/fetch creates it.
  const client = registerTrustGateBatchScheme(
    new x402Client().setSpendControls({ allowedAssets: [{ network: f.network, asset: offer.asset, maxAmountPerPayment: s.price }] }),
    scheme,
  );
  const first = await client.createPaymentPayload({ x402Version: 2, resource: { url: resourceUrl }, accepts: [offer] });
  assert.equal(first.payload.type, 'deposit');
  assert.deepEqual(first.accepted, offer);
  const opened = await settle(resourceUrl, offer, first.payload);
  assert.equal(opened.amount, String(deposit));
  assert.equal(opened.extra.channelState.chargedCumulativeAmount, String(price));
  const channel = first.payload.voucher.channelId;
  assert.equal(scheme.session(offer).channel, channel);

  for (let i = 2n; i <= BigInt(s.requests); i++) {
    const { payload } = await scheme.createPaymentPayload(2, offer);
    assert.equal(payload.type, 'voucher');
    const r = await settle(resourceUrl, offer, payload);
    assert.equal(r.transaction, '', 'a voucher sends nothing');
    assert.equal(r.extra.channelState.chargedCumulativeAmount, String(i * price));
    assert.equal(r.extra.commitmentId, `${channel}:${i * price}`);
  }

  const [refund, ...more] = scheme.refund(offer);
  assert.equal(more.length, 0);
  const closed = await settle(resourceUrl, offer, refund.payload);
  assert.equal(closed.amount, String(deposit - BigInt(s.requests) * price), 'the rest back to the payer');
  writeFileSync(s.report, JSON.stringify({ channel, voucherKey: first.payload.channelConfig.payerAuthorizer }));
});
