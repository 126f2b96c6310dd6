// The payer's side of x402's `batch-settlement` in the TypeScript SDK (src/x402/batch.ts),
// against what the Rust client SDK builds and the Rust facilitator accepts (started by
// tests/tests/services/ts_batch.rs): the same opens, vouchers and payloads byte for byte for
// the same inputs, the scheme's sessions (a deposit, vouchers, a new session past the deposit,
// one call at a time), its errors naming the field, and a gated session paid through /settle.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import express from 'express';
import { address, createKeyPairSignerFromBytes } from '@solana/kit';
import { wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { mountTrustGate } from '../dist/express.js';
import {
  BATCH_REASONS,
  batchExtraOf,
  bindingMemo,
  closeDigest,
  correctiveState,
  openSession,
  signCloseAuthorization,
  registerTrustGateBatchScheme,
  SCHEME_BATCH,
  SCHEME_GATED_BATCH,
  TrustGateBatchClientScheme,
} from '../dist/x402/index.js';
import { closeServers, fixture, isInput, landed, listen, parityOpenTerms, recordingFetch, rpcOf, signerOf, spendControlled } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const [gatedCase, plainCase] = f.parity;
after(closeServers);

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
    assert.deepEqual(await session.refundPayload(), c.refundPayload);
    // The same refusal past the deposit, and the session unchanged by it.
    const charged = session.charged;
    await assert.rejects(session.voucher(BigInt(c.deposit)), (e) => isInput('amount')(e) && `invalid ${e.message}` === c.overDeposit);
    assert.equal(session.charged, charged);
  });
}

test('a close authorization is the Rust SDK\'s digest and signature, byte for byte', async () => {
  const c = f.closeAuthorization;
  const terms = { network: c.network, feePayer: c.feePayer, channel: c.channel, maxClaimable: BigInt(c.maxClaimable), validBefore: BigInt(c.validBefore) };
  assert.equal(Buffer.from(closeDigest(terms)).toString('hex'), c.digestHex);
  const key = await createKeyPairSignerFromBytes(Uint8Array.from(c.key));
  assert.deepEqual(await signCloseAuthorization(key, terms), c.authorization);
  // Another amount is another digest.
  assert.notEqual(Buffer.from(closeDigest({ ...terms, maxClaimable: terms.maxClaimable + 1n })).toString('hex'), c.digestHex);
});

test('a session resumes from a corrective state only when it is its own voucher', async () => {
  const { transaction, session } = await openCase(plainCase);
  const price = BigInt(plainCase.price);
  const first = (await session.depositPayload(transaction, price)).voucher;
  await session.voucherPayload(price);
  const state = (charged) => ({ channelId: session.channel, balance: plainCase.deposit, totalClaimed: '0', withdrawRequestedAt: 0, chargedCumulativeAmount: String(charged) });
  const proof = (v) => ({ signedMaxClaimable: v.maxClaimableAmount, expiresAt: 0, signature: v.signature });
  assert.equal(await session.resync(state(price), proof(first)), price);
  assert.equal(session.charged, price);
  const other = await openCase(gatedCase);
  const foreign = (await other.session.depositPayload(other.transaction, price)).voucher;
  await assert.rejects(session.resync(state(price), { ...proof(foreign), signedMaxClaimable: String(price) }), isInput('voucherState.signature'));
  await assert.rejects(session.resync(state(2n * price), proof(first)), isInput('channelState.chargedCumulativeAmount'));
  await assert.rejects(session.resync({ ...state(price), channelId: other.session.channel }, proof(first)), isInput('channelState.channelId'));
  assert.equal(session.charged, price, 'a refused state changes nothing');
  // What a corrective 402 carries, read back; any other 402 carries none.
  const required = { error: BATCH_REASONS.cumulativeAmountMismatch, accepts: [{ extra: { channelState: state(price), voucherState: proof(first) } }] };
  assert.deepEqual(correctiveState(required), { channelState: state(price), voucherState: proof(first) });
  assert.equal(correctiveState({ ...required, error: 'Payment required' }), undefined);
});

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
  const refunds = await scheme.refund(offer);
  assert.deepEqual(
    refunds.map((r) => [r.x402Version, r.payload.type, r.payload.channelConfig.salt]),
    [
      [2, 'refund', payloads[0].channelConfig.salt],
      [2, 'refund', payloads[2].channelConfig.salt],
    ],
  );
  assert.deepEqual(await scheme.refund(offer), []);
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

  // The last payment sent again, identically: it carries the payment id the scheme attached
  // (the demo's 402 declares payment-identifier), so the demo answers it with its first
  // answer, and charges nothing more.
  const last = payments[payments.length - 1];
  assert.match(last.extensions['payment-identifier'].info.id, /^pay_[0-9a-f]{32}$/);
  const again = await fetch(resourceUrl, { headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(last) } });
  const againText = await again.text();
  assert.equal(again.status, 200, againText);
  assert.equal(JSON.parse(againText).channelState.chargedCumulativeAmount, String(BigInt(s.requests) * price), againText);
  // Without its id, the same voucher serves nothing (it was accepted once): the corrective
  // 402; and the Express mount's /verify refuses it as the facilitator does.
  const { ['payment-identifier']: _id, ...otherExtensions } = last.extensions;
  const anonymous = { ...last, extensions: otherExtensions };
  const stale = await fetch(resourceUrl, { headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(anonymous) } });
  const staleText = await stale.text();
  assert.equal(stale.status, 402, staleText);
  assert.ok(!staleText.includes('report'), staleText);
  assert.deepEqual(correctiveState(decodePaymentRequiredHeader(stale.headers.get('PAYMENT-REQUIRED'))).channelState.chargedCumulativeAmount, String(BigInt(s.requests) * price));
  const app = express();
  mountTrustGate(app, { rpcUrl: f.rpcUrl, facilitator: address(f.facilitator), facilitatorUrl: f.facilitatorUrl, atomicityEnforced: true });
  const mount = await listen(app);
  const verify = await fetch(`${mount}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ x402Version: 2, paymentPayload: last, paymentRequirements: last.accepted }),
  });
  const verified = await verify.json();
  assert.equal(verified.isValid, false, JSON.stringify(verified));
  assert.equal(verified.invalidReason, BATCH_REASONS.cumulativeAmountMismatch);
  // A lost answer: the client counts its last voucher as not accepted. Its next request is
  // refused with the corrective 402, from which the scheme resumes, and @x402/fetch pays again.
  scheme.session(s.offer).charged -= price;
  const resumed = await pay(resourceUrl);
  const resumedText = await resumed.text();
  assert.equal(resumed.status, 200, resumedText);
  const served = BigInt(s.requests) + 1n;
  assert.equal(JSON.parse(resumedText).channelState.chargedCumulativeAmount, String(served * price), resumedText);

  // The refund, through the same route: the gated offer of a fresh 402, the SDK's payload.
  const challenge = await fetch(resourceUrl);
  assert.equal(challenge.status, 402);
  const required = decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED'));
  const offer = required.accepts.find((o) => o.scheme === SCHEME_GATED_BATCH);
  const [refund, ...more] = await scheme.refund(offer);
  assert.equal(more.length, 0);
  assert.equal(refund.payload.type, 'refund');
  const header = encodePaymentSignatureHeader({ x402Version: 2, resource: required.resource, accepted: offer, payload: refund.payload });
  const closed = await fetch(resourceUrl, { headers: { 'PAYMENT-SIGNATURE': header } });
  const closedText = await closed.text();
  assert.equal(closed.status, 200, closedText);
  // The session ends; no resource is served for a refund.
  assert.equal(JSON.parse(closedText).session, 'closed', closedText);
  assert.ok(!closedText.includes('report'), closedText);
  const settlement = decodePaymentResponseHeader(closed.headers.get('PAYMENT-RESPONSE'));
  assert.equal(settlement.success, true, JSON.stringify(settlement));
  assert.equal(settlement.amount, String(deposit - served * price), 'the rest back to the payer');
  await landed(rpc, settlement.transaction);
  writeFileSync(s.report, JSON.stringify({ channel, voucherKey: payments[0].payload.channelConfig.payerAuthorizer }));
});
