// Pays an x402 resource protected by trust-gate with @x402/fetch and the trust-gate scheme.
//
//   node examples/pay.mjs URL KEYPAIR_FILE PAYER_AGENT_ASSET [--header NAME]
//
// KEYPAIR_FILE: the payer agent's owner or agent wallet, as `trust-gate demo-key` prints it.
// The payer agent is named in the X-Payer-Agent header (the trust-gate demo reads
// X-Demo-Payer-Agent: pass --header X-Demo-Payer-Agent). RPC_URL defaults to the localnet;
// MAX_AMOUNT caps one payment (base units, default 1000000).

import { readFileSync } from 'node:fs';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { x402Client, wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { registerTrustGateScheme } from '@trust-gate/sdk/x402';

const [url, keypairFile, payerAgent, ...rest] = process.argv.slice(2);
if (!url || !keypairFile || !payerAgent) {
  console.error('usage: node examples/pay.mjs URL KEYPAIR_FILE PAYER_AGENT_ASSET [--header NAME]');
  process.exit(2);
}
const header = rest[0] === '--header' && rest[1] ? rest[1] : 'X-Payer-Agent';
const rpcUrl = process.env.RPC_URL ?? 'http://127.0.0.1:8899';
const signer = await createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(keypairFile, 'utf8'))));

// The offer names the network and the asset; x402Client pays only assets its spend
// controls allow, so allow the one this resource asks for, up to MAX_AMOUNT.
const offer = await fetch(url, { headers: { [header]: payerAgent } });
const required = offer.headers.get('PAYMENT-REQUIRED');
if (offer.status !== 402 || !required) {
  console.log(offer.status, JSON.stringify(Object.fromEntries([...offer.headers].filter(([k]) => k.startsWith('x-')))), await offer.text());
  process.exit(offer.status === 402 ? 1 : 0);
}
const { accepts } = JSON.parse(Buffer.from(required, 'base64').toString('utf8'));
const allowedAssets = accepts.map((a) => ({ network: a.network, asset: a.asset, maxAmountPerPayment: process.env.MAX_AMOUNT ?? '1000000' }));

const client = registerTrustGateScheme(new x402Client().setSpendControls({ allowedAssets }), { signer, rpcUrl });
const pay = wrapFetchWithPayment(fetch, client);
const res = await pay(url, { headers: { [header]: payerAgent } });
const settled = res.headers.get('PAYMENT-RESPONSE');
console.log(
  JSON.stringify({
    status: res.status,
    transaction: settled ? decodePaymentResponseHeader(settled).transaction : null,
    body: await res.json().catch(() => null),
  }),
);
process.exit(res.status === 200 ? 0 : 1);
