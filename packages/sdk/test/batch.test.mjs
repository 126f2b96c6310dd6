// The payer's side of x402's `batch-settlement` in the TypeScript SDK (src/x402/batch.ts),
// against what the Rust client SDK builds and the Rust facilitator accepts (started by
// tests/tests/services/ts_batch.rs): the same opens, vouchers and payloads byte for byte for
// the same inputs, the scheme's sessions (a deposit, vouchers, a new session past the deposit,
// one call at a time), its errors naming the field, and a gated session paid through /settle.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import {
  batchExtraOf,
  bindingMemo,
  openSession,
  registerTrustGateBatchScheme,
  SCHEME_BATCH,
  SCHEME_GATED_BATCH,
  TrustGateBatchClientScheme,
} from '../dist/x402/index.js';
import { fixture, isInput, landed, parityOpenTerms, recordingFetch, rpcOf, signerOf, spendControlled } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const [gatedCase, plainCase] = f.parity;

/** The TypeScript SDK's session for a parity case's inputs. */
async function openCase(c) {
  const extra = batchExtraOf({ extra: c.extra });
  return openSession({
    ...(await parityOpenTerms(f, rpc, c, extra.feePayer)),
    extra,
    voucherKey: await createKeyPairSignerFromBytes(Uint8Array.from(c.voucherKey)),
    deposit: BigInt(c.deposit),
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

test('@x402/fetch pays the demo\'s gated session route: a deposit, five vouchers, then the refund', async () => {
  const s = f.session;
  const { resourceUrl } = s;
  const price = BigInt(s.price);
  const deposit = BigInt(s.requestsPerDeposit) * price;
  assert.equal(s.offer.scheme, SCHEME_GATED_BATCH);
  const scheme = new TrustGateBatchClientScheme({ signer: await signerOf(f, s.payer), rpcUrl: f.rpcUrl, requestsPerDeposit: s.requestsPerDeposit });
  const client = registerTrustGateBatchScheme(spendControlled(f, s.offer.asset, s.price), scheme);
  const { fetch: seeing, seen, payments } = recordingFetch();
  const pay = wrapFetchWithPayment(seeing, client);
  for (let i = 1n; i <= BigInt(s.requests); i++) {
    const res = await pay(resourceUrl);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const body = JSON.parse(text);
    assert.equal(body.payment, i === 1n ? 'deposit' : 'voucher', text);
    assert.equal(body.channelState.chargedCumulativeAmount, String(i * price), text);
    const settlement = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE'));
    assert.equal(settlement.success, true, JSON.stringify(settlement));
    // The deposit is sent on chain (the open lands); a voucher sends nothing.
    if (i === 1n) {
      assert.equal(settlement.amount, String(deposit));
      await landed(rpc, settlement.transaction);
    } else {
      assert.equal(settlement.transaction, '');
    }
  }
  // Each request: its 402 (the gated offer first), then the paid request.
  assert.deepEqual(seen, { requests: 2 * s.requests, paid: s.requests });
  assert.deepEqual([...new Set(payments.map((p) => p.accepted.scheme))], [SCHEME_GATED_BATCH]);
  const channel = payments[0].payload.voucher.channelId;
  assert.deepEqual([...new Set(payments.map((p) => p.payload.voucher.channelId))], [channel]);
  assert.equal(scheme.session(s.offer).channel, channel);

  // The refund, through the same route: the gated offer of a fresh 402, the SDK's payload.
  const challenge = await fetch(resourceUrl);
  assert.equal(challenge.status, 402);
  const required = decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED'));
  const offer = required.accepts.find((o) => o.scheme === SCHEME_GATED_BATCH);
  const [refund, ...more] = scheme.refund(offer);
  assert.equal(more.length, 0);
  assert.equal(refund.payload.type, 'refund');
  const header = encodePaymentSignatureHeader({ x402Version: 2, resource: required.resource, accepted: offer, payload: refund.payload });
  const closed = await fetch(resourceUrl, { headers: { 'PAYMENT-SIGNATURE': header } });
  const closedText = await closed.text();
  assert.equal(closed.status, 200, closedText);
  assert.equal(JSON.parse(closedText).payment, 'refund');
  const settlement = decodePaymentResponseHeader(closed.headers.get('PAYMENT-RESPONSE'));
  assert.equal(settlement.success, true, JSON.stringify(settlement));
  assert.equal(settlement.amount, String(deposit - BigInt(s.requests) * price), 'the rest back to the payer');
  await landed(rpc, settlement.transaction);
  writeFileSync(s.report, JSON.stringify({ channel, voucherKey: payments[0].payload.channelConfig.payerAuthorizer }));
});
