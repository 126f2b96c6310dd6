// The payer's side of x402's `upto` in the TypeScript SDK (src/x402/upto.ts), against what the
// Rust client SDK builds and the Rust demo and facilitator accept (started by
// tests/tests/services/ts_upto.rs): the same opens and payloads byte for byte for the same
// inputs, its errors naming the field, and the demo's metered route paid through @x402/fetch
// with the gated scheme (the Rust side checks the chain afterwards).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import {
  registerTrustGateUptoScheme,
  SCHEME_GATED_UPTO,
  SCHEME_UPTO,
  TrustGateUptoClientScheme,
  uptoExtraOf,
  uptoOpen,
} from '../dist/x402/index.js';
import { fixture, isInput, landed, parityOpenTerms, recordingFetch, rpcOf, signerOf, spendControlled } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const [gatedCase, plainCase] = f.parity;

/** The TypeScript SDK's open for a parity case's inputs. */
async function openCase(c) {
  const extra = uptoExtraOf(c.offer);
  return uptoOpen({
    ...(await parityOpenTerms(f, rpc, c, extra.feePayer)),
    extra,
    ceiling: BigInt(c.ceiling),
    validAfter: c.validAfter,
    expiresAt: c.expiresAt,
  });
}

for (const c of f.parity) {
  test(`a ${c.label} upto open and its payload are the Rust SDK's, byte for byte`, async () => {
    assert.equal(c.offer.scheme, c.gated ? SCHEME_GATED_UPTO : SCHEME_UPTO);
    const { payload } = await openCase(c);
    // The open's bytes first, for a readable failure; then every field of the payload.
    assert.equal(payload.openTransaction, c.payload.openTransaction);
    assert.deepEqual(payload, c.payload);
    // Decimal strings, exactly the fixture's (the gated salt and the plain slot pass 2^53).
    assert.equal(typeof payload.openSlot, 'string');
    assert.equal(payload.openSlot, c.openSlot);
    assert.equal(payload.nonce, c.salt);
    assert.equal(payload.maxAmount, c.ceiling);
    assert.equal(payload.deposit, c.ceiling);
    assert.equal(payload.authorizedSigner, c.offer.extra.receiverAuthorizer);
  });
}

test("the open carries the offer's memo only when it is not empty, and no binding Memo", () => {
  for (const c of f.parity) {
    const bytes = Buffer.from(c.payload.openTransaction, 'base64');
    assert.equal(bytes.includes(Buffer.from('metered-1')), c.offer.extra.memo === 'metered-1', c.label);
    assert.ok(!bytes.includes(Buffer.from('x402:batch-settlement')), c.label);
  }
  assert.equal(gatedCase.offer.extra.memo, 'metered-1');
  assert.equal(plainCase.offer.extra.memo, '');
});

test('the scheme refuses what it cannot pay, naming the field', async () => {
  const signer = await signerOf(f, 'payer-tier-3');
  const offer = plainCase.offer;
  const plain = new TrustGateUptoClientScheme({ signer, rpc, scheme: SCHEME_UPTO });
  const with_ = (extra) => ({ ...offer, extra: { ...offer.extra, ...extra } });
  const cases = [
    [plain.createPaymentPayload(1, offer), 'x402Version'],
    [plain.createPaymentPayload(2, gatedCase.offer), 'scheme'],
    [plain.createPaymentPayload(2, { ...offer, amount: '1.5' }), 'amount'],
    [plain.createPaymentPayload(2, { ...offer, amount: '0' }), 'amount'],
    [plain.createPaymentPayload(2, offer, { maxAmountPerPayment: '999' }), 'amount'],
    [plain.createPaymentPayload(2, with_({ withdrawDelay: 0 })), 'extra.withdrawDelay'],
    [plain.createPaymentPayload(2, with_({ paymentFlow: 'authorization' })), 'extra.paymentFlow'],
    [plain.createPaymentPayload(2, with_({ tokenProgram: signer.address })), 'extra.tokenProgram'],
    [plain.createPaymentPayload(2, with_({ feePayer: 'nope' })), 'extra.feePayer'],
    [plain.createPaymentPayload(2, with_({ memo: 'x'.repeat(257) })), 'extra.memo'],
    [new TrustGateUptoClientScheme({ signer, rpc }).createPaymentPayload(2, { ...gatedCase.offer, extra: { ...gatedCase.offer.extra, gate: undefined } }), 'extra.gate'],
  ];
  for (const [p, field] of cases) await assert.rejects(p, isInput(field), field);
  assert.throws(() => new TrustGateUptoClientScheme({ signer, rpc, scheme: 'exact' }), isInput('scheme'));
});

test('a payload of the scheme: a fresh salt, the cluster\'s slot, the offer\'s timeout', async () => {
  const signer = await signerOf(f, 'payer-tier-3');
  const scheme = new TrustGateUptoClientScheme({ signer, rpc, scheme: SCHEME_UPTO });
  const before = Math.floor(Date.now() / 1000);
  const slot = await rpc.getSlot({ commitment: 'confirmed' }).send();
  const [a, b] = await Promise.all([scheme.createPaymentPayload(2, plainCase.offer), scheme.createPaymentPayload(2, plainCase.offer)]);
  const after = Math.floor(Date.now() / 1000);
  for (const { x402Version, payload } of [a, b]) {
    assert.equal(x402Version, 2);
    assert.equal(payload.from, signer.address);
    assert.equal(payload.maxAmount, plainCase.offer.amount);
    assert.equal(payload.deposit, plainCase.offer.amount);
    assert.equal(typeof payload.openSlot, 'string');
    assert.ok(BigInt(payload.openSlot) >= slot, `${payload.openSlot} >= ${slot}`);
    assert.ok(payload.validAfter >= before - 1 && payload.validAfter <= after - 1, String(payload.validAfter));
    assert.equal(payload.expiresAt - payload.validAfter, plainCase.offer.maxTimeoutSeconds + 1);
  }
  assert.notEqual(a.payload.nonce, b.payload.nonce);
  assert.notEqual(a.payload.channelId, b.payload.channelId);
});

test('the gated scheme pays the demo\'s metered route through @x402/fetch', async () => {
  const m = f.metered;
  const scheme = new TrustGateUptoClientScheme({ signer: await signerOf(f, m.payer), rpcUrl: f.rpcUrl });
  const client = registerTrustGateUptoScheme(spendControlled(f, m.mint, m.ceiling), scheme);
  const { fetch: seeing, seen, payments } = recordingFetch();
  const pay = wrapFetchWithPayment(seeing, client);
  const res = await pay(m.url);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.deepEqual(seen, { requests: 2, paid: 1 }, 'one 402, one paid request');

  // The payment: the gated offer (offered first), the ceiling escrowed.
  assert.equal(payments.length, 1);
  const [p] = payments;
  assert.equal(p.accepted.scheme, SCHEME_GATED_UPTO);
  assert.equal(p.payload.maxAmount, m.ceiling);
  assert.equal(p.payload.deposit, m.ceiling);

  // The demo's body: the units served and their charge.
  const body = JSON.parse(text);
  assert.equal(body.units, m.units);
  assert.equal(body.charged, m.charged);
  assert.equal(body.charged, '500000');

  // PAYMENT-RESPONSE: the claim's settlement, the charge, landed.
  const header = res.headers.get('PAYMENT-RESPONSE');
  assert.ok(header, 'a PAYMENT-RESPONSE');
  const settlement = decodePaymentResponseHeader(header);
  assert.equal(settlement.success, true, JSON.stringify(settlement));
  assert.equal(settlement.amount, '500000');
  assert.equal(settlement.network, f.network);
  await landed(rpc, settlement.transaction);
  writeFileSync(m.report, JSON.stringify({ scheme: p.accepted.scheme, channelId: p.payload.channelId }));
});
