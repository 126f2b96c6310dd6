// Exactly once, as the official x402 packages see it (started by the Rust test
// `paid_once_the_official_x402_packages_are_served_once`, tests/tests/services/paid_once.rs):
//
// - `@x402/extensions` 2.27's payment-identifier on an @x402/fetch client (the id comes from its
//   `appendPaymentIdentifierToExtensions`, registered as a client extension in place of the
//   SDK's own), paying the Rust demo through a loopback proxy that loses the first paid answer:
//   the SDK's `resendPaid` sends the same bytes again and the resend is served without paying
//   again, checked on chain, for `exact`, `upto`, a session's deposit and a session's voucher;
// - two identical requests at once: one settlement;
// - a stock @x402/core resource server (@x402/express's paymentMiddleware with the trust-gate
//   server scheme for `exact` and @x402/svm's `upto` server scheme, behind the SDK's
//   `paidOnce`; the upto payer is the SDK's client of the stock wire, since @x402/svm's own
//   client pays only on mainnet, devnet and testnet) in front of a facilitator that confirms for
//   300 ms, whose signature statuses the Rust side hides and shows on request: served exactly
//   once when the transaction lands within the server's one retry of a pending settlement, and
//   when it does not, the client's resend with the same id is served without paying again.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import express from 'express';
import { address } from '@solana/kit';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';
import { UptoSvmScheme as StockUptoServerScheme } from '@x402/svm/upto/server';
import { appendPaymentIdentifierToExtensions, generatePaymentId, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { associatedTokenAccount, TOKEN_2022_PROGRAM, PAYMENT_REQUIRED, PAYMENT_RESPONSE, PAYMENT_SIGNATURE } from '../dist/index.js';
import {
  PaidOnce,
  registerTrustGateBatchScheme,
  registerTrustGateScheme,
  registerTrustGateUptoScheme,
  resendPaid,
  SCHEME_GATED_BATCH,
  SCHEME_GATED_UPTO,
  SCHEME_UPTO,
  TrustGateBatchClientScheme,
  TrustGateUptoClientScheme,
  X_PAYER_AGENT,
} from '../dist/x402/index.js';
import { paidOnce } from '../dist/express.js';
import { closeServers, fixture, landed, listen, recordingFetch, reportRoute, rpcOf, signerOf, spendControlled, tokenBalance, trustGateServerScheme } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const world = f.world;
const tier3 = world.payers.find((p) => p.name === 'payer-tier-3');
const payer = await signerOf(f, 'payer-tier-3');
/** The prefix of the ids the official extension makes here: the SDK's own start `pay_`. */
const OFFICIAL = 'official_';
const proxy = await droppingProxy(f.demoUrl);
after(() => {
  closeServers();
  proxy.server.closeAllConnections();
  proxy.server.close();
});

/** `@x402/extensions`' payment-identifier as a client extension of an x402Client. */
const officialPaymentIds = {
  key: PAYMENT_IDENTIFIER,
  async enrichPaymentPayload(payload, required) {
    const extensions = appendPaymentIdentifierToExtensions(structuredClone(required.extensions ?? {}), generatePaymentId(OFFICIAL));
    return { ...payload, extensions: { ...payload.extensions, ...extensions } };
  },
};

/** The payer's token balance of `mint` (its associated account of the mint's token program). */
async function balance(mint) {
  const { value } = await rpc.getAccountInfo(address(mint), { encoding: 'base64' }).send();
  return tokenBalance(rpc, await associatedTokenAccount(payer.address, address(mint), value.owner));
}

/**
 * A loopback proxy in front of `upstream` that forwards every request and, while `drop` is
 * above zero, loses the answer of a paid request (PAYMENT-SIGNATURE): once the upstream
 * answered, the connection closes unanswered. Counts the paid requests it forwarded.
 */
function droppingProxy(upstream) {
  const state = { drop: 0, paid: 0 };
  const server = createServer(async (req, res) => {
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (!['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
    const r = await fetch(`${upstream}${req.url}`, { method: req.method, headers });
    const body = Buffer.from(await r.arrayBuffer());
    if (req.headers['payment-signature']) {
      state.paid += 1;
      if (state.drop > 0) {
        state.drop -= 1;
        req.socket.destroy(); // the answer is lost
        return;
      }
    }
    const out = {};
    r.headers.forEach((v, k) => {
      if (!['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding'].includes(k)) out[k] = v;
    });
    res.writeHead(r.status, out);
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, state, url: `http://127.0.0.1:${server.address().port}` })));
}

/** Pays `url` once with `client`, the first paid answer lost: the answer, and the paid
 * requests the client sent (decoded). */
async function payLosingTheFirstAnswer(client, url, init) {
  proxy.state.drop = 1;
  const paidBefore = proxy.state.paid;
  const { fetch: seeing, payments } = recordingFetch();
  const res = await wrapFetchWithPayment(resendPaid(seeing), client)(url, init);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.equal(proxy.state.drop, 0, 'an answer was lost');
  assert.equal(proxy.state.paid - paidBefore, 2, 'the paid request, then its resend');
  assert.equal(payments.length, 2);
  assert.deepEqual(payments[1], payments[0], 'the resend is the same payment');
  const id = payments[0].extensions[PAYMENT_IDENTIFIER].info.id;
  assert.ok(id.startsWith(OFFICIAL), id);
  return { res, body: JSON.parse(text), payment: payments[0], settlement: decodePaymentResponseHeader(res.headers.get(PAYMENT_RESPONSE)) };
}

test('exact: the first answer lost, the resend with the same id is served and paid once', async () => {
  const before = await balance(world.mint);
  const client = registerTrustGateScheme(spendControlled(f), { signer: payer, rpcUrl: f.rpcUrl }).registerExtension(officialPaymentIds);
  const { body, settlement } = await payLosingTheFirstAnswer(client, `${proxy.url}/protected`, { headers: { [f.demoPayerHeader]: tier3.asset } });
  assert.equal(settlement.success, true, JSON.stringify(settlement));
  assert.match(body.report, /the gate allowed this payment/);
  assert.equal(body.transaction, settlement.transaction);
  await landed(rpc, settlement.transaction);
  assert.equal(await balance(world.mint), before - BigInt(world.price), 'paid once');
});

test('upto: the first answer lost, the resend with the same id is served and charged once', async () => {
  const units = 3n;
  const unitPrice = 100_000n;
  const before = await balance(f.meteredMint);
  const scheme = new TrustGateUptoClientScheme({ signer: payer, rpcUrl: f.rpcUrl });
  const client = registerTrustGateUptoScheme(spendControlled(f, f.meteredMint, String(20n * unitPrice)), scheme).registerExtension(officialPaymentIds);
  const { body, payment, settlement } = await payLosingTheFirstAnswer(client, `${proxy.url}/metered?units=${units}`);
  assert.equal(payment.accepted.scheme, SCHEME_GATED_UPTO);
  assert.equal(body.units, Number(units));
  assert.equal(settlement.success, true, JSON.stringify(settlement));
  assert.equal(settlement.amount, String(units * unitPrice));
  await landed(rpc, settlement.transaction);
  assert.equal(await balance(f.meteredMint), before - units * unitPrice, 'the charge moved once; the rest came back');
});

test("a session: its deposit's and a voucher's answers lost, each resend served and paid once", async () => {
  const url = `${proxy.url}/session`;
  const challenge = await fetch(url);
  assert.equal(challenge.status, 402);
  const offer = decodePaymentRequiredHeader(challenge.headers.get(PAYMENT_REQUIRED)).accepts.find((o) => o.scheme === SCHEME_GATED_BATCH);
  const price = BigInt(offer.amount);
  const before = await balance(offer.asset);
  const scheme = new TrustGateBatchClientScheme({ signer: payer, rpcUrl: f.rpcUrl, requestsPerDeposit: 5 });
  const client = registerTrustGateBatchScheme(spendControlled(f, offer.asset, offer.amount), scheme).registerExtension(officialPaymentIds);

  const deposit = await payLosingTheFirstAnswer(client, url);
  assert.equal(deposit.body.payment, 'deposit');
  assert.equal(deposit.body.channelState.chargedCumulativeAmount, String(price));
  await landed(rpc, deposit.settlement.transaction);
  assert.equal(await balance(offer.asset), before - 5n * price, 'one deposit escrowed');

  const voucher = await payLosingTheFirstAnswer(client, url);
  assert.equal(voucher.body.payment, 'voucher');
  assert.equal(voucher.body.channelState.chargedCumulativeAmount, String(2n * price), 'charged once');

  // The next request pays the third request only; the refund returns the rest.
  const next = await wrapFetchWithPayment(fetch, client)(url);
  const nextBody = await next.json();
  assert.equal(nextBody.channelState.chargedCumulativeAmount, String(3n * price), JSON.stringify(nextBody));
  const required = decodePaymentRequiredHeader((await fetch(url)).headers.get(PAYMENT_REQUIRED));
  const fresh = required.accepts.find((o) => o.scheme === SCHEME_GATED_BATCH);
  const [refund] = await scheme.refund(fresh);
  const closed = await fetch(url, { headers: { [PAYMENT_SIGNATURE]: encodePaymentSignatureHeader({ x402Version: 2, resource: required.resource, accepted: fresh, payload: refund.payload }) } });
  assert.equal(closed.status, 200, await closed.clone().text());
  await landed(rpc, decodePaymentResponseHeader(closed.headers.get(PAYMENT_RESPONSE)).transaction);
  assert.equal(await balance(offer.asset), before - 3n * price, 'three requests paid, each once');
});

test('two identical requests at once: one settlement, one answer', async () => {
  const before = await balance(world.mint);
  const client = registerTrustGateScheme(spendControlled(f), { signer: payer, rpcUrl: f.rpcUrl }).registerExtension(officialPaymentIds);
  const url = `${f.demoUrl}/protected`;
  const headers = { [f.demoPayerHeader]: tier3.asset };
  const first = await fetch(url, { headers });
  assert.equal(first.status, 402);
  const payload = await client.createPaymentPayload(decodePaymentRequiredHeader(first.headers.get(PAYMENT_REQUIRED)));
  const signature = encodePaymentSignatureHeader(payload);
  const answers = await Promise.all([0, 1].map(() => fetch(url, { headers: { ...headers, [PAYMENT_SIGNATURE]: signature } })));
  const [a, b] = await Promise.all(answers.map(async (r) => ({ status: r.status, response: r.headers.get(PAYMENT_RESPONSE), body: await r.text() })));
  assert.equal(a.status, 200, a.body);
  assert.deepEqual(b, a, 'the same answer');
  await landed(rpc, decodePaymentResponseHeader(a.response).transaction);
  assert.equal(await balance(world.mint), before - BigInt(world.price), 'paid once');
});

/**
 * A stock resource server: `paidOnce`, then @x402/express's paymentMiddleware with an
 * @x402/core x402ResourceServer and the trust-gate server scheme, settling through the
 * facilitator at `f.lateFacilitatorUrl` behind a counting proxy that can show the statuses
 * when it sees the n-th /settle. Counts the handler's runs.
 */
async function stockServer() {
  const seen = { settles: [], handled: 0, showAt: Infinity };
  const counting = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (req.url === '/settle') {
      seen.settles.push(req.url);
      if (seen.settles.length === seen.showAt) await control('show');
    }
    const r = await fetch(`${f.lateFacilitatorUrl}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: req.method === 'GET' ? undefined : Buffer.concat(chunks) });
    const body = Buffer.from(await r.arrayBuffer());
    if (req.url === '/settle') seen.settles[seen.settles.length - 1] = { status: r.status, body: JSON.parse(body.toString()) };
    res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
    res.end(body);
  });
  const facilitatorUrl = await new Promise((resolve) => counting.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${counting.address().port}`)));
  after(() => {
    counting.closeAllConnections();
    counting.close();
  });
  const ids = new PaidOnce();
  const scheme = await trustGateServerScheme(f);
  // x402's stock upto server scheme signs the claim's voucher itself (the facilitator names
  // no receiverAuthorizer); the mint is given with its token program, so it needs no lookup
  // of a known stablecoin by network.
  const upto = new StockUptoServerScheme({ receiverAuthorizerSigner: await signerOf(f, 'service-key') });
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(f.network, scheme).register(f.network, upto);
  const app = express();
  app.use(paidOnce(ids));
  app.use(
    paymentMiddleware(
      {
        'GET /report': reportRoute(f, { extensions: ids.declaration() }),
        'GET /metered': {
          accepts: {
            scheme: SCHEME_UPTO,
            price: { amount: String(UPTO_CEILING), asset: f.meteredMint, extra: { tokenProgram: TOKEN_2022_PROGRAM } },
            network: f.network,
            payTo: f.payTo,
          },
          description: 'metered: charged for the units used, up to the ceiling',
          mimeType: 'application/json',
          extensions: ids.declaration(),
        },
      },
      server,
    ),
  );
  app.get('/report', (_req, res) => {
    seen.handled += 1;
    res.json({ report: 'paid through the trust gate' });
  });
  app.get('/metered', (_req, res) => {
    seen.handled += 1;
    setSettlementOverrides(res, { amount: String(UPTO_CHARGE) });
    res.json({ report: 'metered', charged: String(UPTO_CHARGE) });
  });
  const base = await listen(app);
  return { url: `${base}/report`, metered: `${base}/metered`, seen };
}

/** The stock upto route's ceiling and what its handler charges (metered mint units). */
const UPTO_CEILING = 2_000_000n;
const UPTO_CHARGE = 300_000n;

async function control(what) {
  const r = await fetch(`${f.statusControlUrl}/${what}`, { method: 'POST' });
  assert.equal(r.status, 200);
}

/** `stockPayment` with the facilitator's statuses hidden until it answers (or until the
 * stock server's `showAt`-th /settle). */
async function payWhileHidden(stock, scheme = 'exact') {
  await control('hide');
  try {
    return await stockPayment(scheme === 'exact' ? stock.url : stock.metered, scheme);
  } finally {
    await control('show');
  }
}

/** A client's payment of the stock server (the official ids), as the header it sent: the
 * trust-gate scheme for `exact`, the SDK's client of the stock `upto` wire for `upto`. */
async function stockPayment(url, scheme) {
  const client =
    scheme === 'exact'
      ? registerTrustGateScheme(spendControlled(f), { signer: payer, rpcUrl: f.rpcUrl })
      : registerTrustGateUptoScheme(spendControlled(f, f.meteredMint, String(UPTO_CEILING)), new TrustGateUptoClientScheme({ signer: payer, rpcUrl: f.rpcUrl, scheme: SCHEME_UPTO }));
  client.registerExtension(officialPaymentIds);
  const { fetch: seeing, payments } = recordingFetch();
  const res = await wrapFetchWithPayment(seeing, client)(url, { headers: { [X_PAYER_AGENT]: tier3.asset } });
  assert.equal(payments.length, 1);
  return { res, body: await res.text(), header: encodePaymentSignatureHeader(payments[0]) };
}

test('a stock resource server: the transaction lands within its one retry of a pending settlement, served once', async () => {
  const before = await balance(world.mint);
  const stock = await stockServer();
  // The statuses stay hidden through the first /settle (pending after 300 ms) and are shown
  // when the server's retry arrives.
  stock.seen.showAt = 2;
  const paid = await payWhileHidden(stock);
  assert.equal(paid.res.status, 200, paid.body);
  assert.equal(stock.seen.settles.length, 2, JSON.stringify(stock.seen.settles));
  const [pending, outcome] = stock.seen.settles;
  assert.equal(pending.body.errorReason, 'settlement_pending', JSON.stringify(pending));
  assert.equal(outcome.body.success, true, JSON.stringify(outcome));
  assert.equal(outcome.body.transaction, pending.body.transaction, 'the retry answered its own transaction');
  assert.equal(stock.seen.handled, 1);
  const settlement = decodePaymentResponseHeader(paid.res.headers.get(PAYMENT_RESPONSE));
  assert.equal(settlement.transaction, pending.body.transaction);
  await landed(rpc, settlement.transaction);
  assert.equal(await balance(world.mint), before - BigInt(world.price), 'paid once');
});

test("a stock resource server: the transaction lands after its retry, the client's resend with the same id is served without paying again", async () => {
  const before = await balance(world.mint);
  const stock = await stockServer();
  const paid = await payWhileHidden(stock);
  // Both /settle answers pending: the stock server answers 402 with the pending settlement.
  assert.equal(paid.res.status, 402, paid.body);
  assert.equal(stock.seen.settles.length, 2, JSON.stringify(stock.seen.settles));
  const signature = stock.seen.settles[0].body.transaction;
  assert.ok(stock.seen.settles.every((s) => s.body.errorReason === 'settlement_pending' && s.body.transaction === signature), JSON.stringify(stock.seen.settles));
  assert.equal(decodePaymentResponseHeader(paid.res.headers.get(PAYMENT_RESPONSE)).errorReason, 'settlement_pending');

  // The client sends the same payment again (same id, same bytes): the settlement it started
  // has landed since, and that is what is served.
  const resend = () => fetch(stock.url, { headers: { [X_PAYER_AGENT]: tier3.asset, [PAYMENT_SIGNATURE]: paid.header } });
  const served = await resend();
  const servedBody = await served.text();
  assert.equal(served.status, 200, servedBody);
  assert.deepEqual(JSON.parse(servedBody), { report: 'paid through the trust gate' });
  const settlement = decodePaymentResponseHeader(served.headers.get(PAYMENT_RESPONSE));
  assert.equal(settlement.transaction, signature);
  await landed(rpc, signature);
  assert.equal(await balance(world.mint), before - BigInt(world.price), 'paid once');
  // Once more: the kept answer, no further settlement asked for.
  const settles = stock.seen.settles.length;
  const again = await resend();
  assert.equal(again.status, 200);
  assert.equal(await again.text(), servedBody);
  assert.equal(again.headers.get(PAYMENT_RESPONSE), served.headers.get(PAYMENT_RESPONSE));
  assert.equal(stock.seen.settles.length, settles);
  assert.ok(decodePaymentSignatureHeader(paid.header).extensions[PAYMENT_IDENTIFIER].info.id.startsWith(OFFICIAL));
});

test('a stock resource server with the stock upto scheme: the deposit lands within its one retry, served and charged once', async () => {
  const before = await balance(f.meteredMint);
  const stock = await stockServer();
  stock.seen.showAt = 2;
  const paid = await payWhileHidden(stock, 'upto');
  assert.equal(paid.res.status, 200, paid.body);
  assert.deepEqual(JSON.parse(paid.body), { report: 'metered', charged: String(UPTO_CHARGE) });
  // The deposit pending, its retry landed (the same open), then the claim.
  const [pending, opened, claimed] = stock.seen.settles;
  assert.equal(stock.seen.settles.length, 3, JSON.stringify(stock.seen.settles));
  assert.equal(pending.body.errorReason, 'settlement_pending', JSON.stringify(pending));
  assert.equal(opened.body.success, true, JSON.stringify(opened));
  assert.equal(opened.body.transaction, pending.body.transaction, 'the retry answered its own open');
  assert.equal(claimed.body.success, true, JSON.stringify(claimed));
  assert.equal(claimed.body.amount, String(UPTO_CHARGE));
  assert.equal(stock.seen.handled, 1);
  await landed(rpc, claimed.body.transaction);
  assert.equal(await balance(f.meteredMint), before - UPTO_CHARGE, 'the charge moved once; the rest came back');
});

test("a stock resource server with the stock upto scheme: the deposit lands after its retry, the client's resend is served and charged once", async () => {
  const before = await balance(f.meteredMint);
  const stock = await stockServer();
  const paid = await payWhileHidden(stock, 'upto');
  assert.equal(paid.res.status, 402, paid.body);
  assert.equal(stock.seen.settles.length, 2, JSON.stringify(stock.seen.settles));
  const open = stock.seen.settles[0].body.transaction;
  assert.ok(stock.seen.settles.every((s) => s.body.errorReason === 'settlement_pending' && s.body.transaction === open), JSON.stringify(stock.seen.settles));
  assert.equal(stock.seen.handled, 0, 'the handler never ran for an unpaid deposit');

  const served = await fetch(stock.metered, { headers: { [PAYMENT_SIGNATURE]: paid.header } });
  const servedBody = await served.text();
  assert.equal(served.status, 200, servedBody);
  assert.deepEqual(JSON.parse(servedBody), { report: 'metered', charged: String(UPTO_CHARGE) });
  // The deposit again answered its own open (nothing escrowed twice), then the claim.
  const [, , opened, claimed] = stock.seen.settles;
  assert.equal(opened.body.success, true, JSON.stringify(opened));
  assert.equal(opened.body.transaction, open);
  assert.equal(claimed.body.success, true, JSON.stringify(claimed));
  await landed(rpc, claimed.body.transaction);
  assert.equal(await balance(f.meteredMint), before - UPTO_CHARGE, 'the charge moved once; the rest came back');
});
