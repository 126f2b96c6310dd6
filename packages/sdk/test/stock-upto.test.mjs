// The official `@x402/svm` 2.27 `upto` client (UptoSvmScheme on an @x402/fetch x402Client,
// paying with wrapFetchWithPayment) pays the Rust demo's ungated metered route through the
// trust-gate facilitator on the embedded localnet (started by tests/tests/services/stock_upto.rs,
// which checks the chain afterwards).
//
// The stock client pays only on mainnet, devnet and testnet: its network lookup
// (`normalizeNetwork`, behind the spend controls' `findDefaultAsset` and behind
// `createRpcClient`, `rpcUrl` or not) throws "Unsupported SVM network" for any other CAIP-2 id,
// and the localnet's id (from its genesis hash) is none of them (the first test shows it). So the paid run goes through a test-only HTTP
// shim between the client and the demo that translates the CAIP-2 network id and nothing else:
//
// - in the demo's 402, the `PAYMENT-REQUIRED` header's `accepts[].network`, the localnet's id,
//   becomes the devnet id (the client then builds with `rpcUrl` = the localnet's RPC: its
//   blockhash, its slot; the mint is the demo's, named by the offer);
// - in the client's `PAYMENT-SIGNATURE`, `accepted.network`, the devnet id, becomes the
//   localnet's id again. The open transaction names no network: its bytes and signatures, and
//   every other field of the payment, pass through untouched (checked below).
//
// Everything else passes as is both ways: the 402's JSON body (the v2 client reads the header
// only), the paid answer's body and its `PAYMENT-RESPONSE` (which names the localnet's id).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { wrapFetchWithPayment, decodePaymentResponseHeader, x402Client } from '@x402/fetch';
import {
  decodePaymentRequiredHeader,
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import { UptoSvmScheme } from '@x402/svm/upto/client';
import { countingFetch, fixture, landed, rpcOf } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const LOCALNET = f.network;
const DEVNET = SOLANA_DEVNET_CAIP2;
const payer = await createKeyPairSignerFromBytes(Uint8Array.from(f.payerSecretKey));

/** The stock client: only `upto` registered, the demo's metered mint allowed up to the route's
 * ceiling (spend controls pay default stablecoins only unless a mint is allowed). */
function stockClient(network) {
  return new x402Client()
    .register('solana:*', new UptoSvmScheme(payer, { rpcUrl: f.rpcUrl }))
    .setSpendControls({ allowedAssets: [{ network, asset: f.meteredMint, maxAmountPerPayment: f.ceiling }] });
}

/** The test-only shim in front of the demo (see the header comment): what it saw, by request. */
function startShim() {
  const seen = { challenges: [], payments: [] };
  const server = createServer(async (req, res) => {
    try {
      const headers = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (!['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(k)) headers[k] = v;
      }
      const signature = req.headers['payment-signature'];
      if (signature) {
        const original = decodePaymentSignatureHeader(signature);
        assert.equal(original.accepted.network, DEVNET, 'the client accepted the translated offer');
        const forwarded = { ...original, accepted: { ...original.accepted, network: LOCALNET } };
        headers['payment-signature'] = encodePaymentSignatureHeader(forwarded);
        seen.payments.push({ original, forwarded });
      }
      const r = await fetch(`${f.demoUrl}${req.url}`, { method: req.method, headers });
      const body = Buffer.from(await r.arrayBuffer());
      const out = {};
      r.headers.forEach((v, k) => {
        if (!['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding'].includes(k)) out[k] = v;
      });
      const required = r.headers.get('payment-required');
      if (required) {
        const demo = decodePaymentRequiredHeader(required);
        assert.ok(demo.accepts.every((a) => a.network === LOCALNET), "the demo offers on the localnet's id");
        const shown = { ...demo, accepts: demo.accepts.map((a) => ({ ...a, network: DEVNET })) };
        out['payment-required'] = encodePaymentRequiredHeader(shown);
        seen.challenges.push({ demo, shown });
      }
      res.writeHead(r.status, out);
      res.end(body);
    } catch (e) {
      res.writeHead(599, { 'content-type': 'text/plain' });
      res.end(`shim: ${e.stack ?? e}`);
    }
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, seen, url: `http://127.0.0.1:${server.address().port}` }));
  });
}

const shim = await startShim();
after(() => {
  shim.server.closeAllConnections();
  shim.server.close();
});

test('the stock upto client refuses the localnet CAIP-2 id before it sends a payment', async () => {
  const counted = countingFetch();
  const pay = wrapFetchWithPayment(counted.fetch, stockClient(LOCALNET));
  await assert.rejects(pay(`${f.demoUrl}/metered?units=${f.units}`), (e) => {
    assert.match(e.message, /Failed to create payment payload: Unsupported SVM network: solana:/);
    assert.ok(e.message.includes(LOCALNET), e.message);
    return true;
  });
  assert.deepEqual(counted.seen, { requests: 1, paid: 0 }, 'only the unpaid request left the client');
});

test('the stock upto client pays the metered route through the facilitator: only the network id translated', async () => {
  const counted = countingFetch();
  const pay = wrapFetchWithPayment(counted.fetch, stockClient(DEVNET));
  const res = await pay(`${shim.url}/metered?units=${f.units}`);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.deepEqual(counted.seen, { requests: 2, paid: 1 }, 'one 402, one paid request');

  // The demo's body: the units served and their charge out of the ceiling.
  const body = JSON.parse(text);
  assert.equal(body.report, 'trust-gate demo: metered');
  assert.equal(body.units, f.units);
  assert.equal(body.charged, f.charged);
  assert.equal(body.ceiling, f.ceiling);

  // PAYMENT-RESPONSE: the claim's settlement, the charge, on the localnet, landed.
  const header = res.headers.get('PAYMENT-RESPONSE');
  assert.ok(header, 'a PAYMENT-RESPONSE');
  const settlement = decodePaymentResponseHeader(header);
  assert.equal(settlement.success, true, JSON.stringify(settlement));
  assert.equal(settlement.amount, f.charged);
  assert.equal(settlement.network, LOCALNET);
  assert.equal(settlement.payer, payer.address);
  assert.equal(settlement.transaction, body.transaction);
  await landed(rpc, settlement.transaction);

  // The shim: one challenge shown, one payment forwarded; only the network id differs.
  assert.equal(shim.seen.challenges.length, 1);
  assert.equal(shim.seen.payments.length, 1);
  const [{ demo, shown }] = shim.seen.challenges;
  assert.deepEqual(shown, { ...demo, accepts: demo.accepts.map((a) => ({ ...a, network: DEVNET })) });
  const [{ original, forwarded }] = shim.seen.payments;
  assert.deepEqual({ ...forwarded, accepted: { ...forwarded.accepted, network: DEVNET } }, original);
  assert.equal(forwarded.payload.openTransaction, original.payload.openTransaction);
  // The client paid the stock `upto` offer, which reaches the demo exactly as the demo made it.
  const offer = demo.accepts.find((a) => a.scheme === 'upto');
  assert.deepEqual(forwarded.accepted, offer);
  assert.equal(original.accepted.scheme, 'upto');
  assert.equal(original.payload.from, payer.address);
  assert.equal(original.payload.maxAmount, f.ceiling);

  writeFileSync(f.report, JSON.stringify({
    channel: original.payload.channelId,
    openTransaction: original.payload.openTransaction,
    settlement,
  }));
});
