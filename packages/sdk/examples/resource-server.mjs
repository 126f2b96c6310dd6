// An Express resource server that sells GET /report through trust-gate: @x402/express's
// paymentMiddleware with the trust-gate server scheme, settled by a trust-gate facilitator.
//
//   node examples/resource-server.mjs SERVICE_KEYPAIR_FILE PAYEE_AGENT_ASSET PAY_TO MINT AMOUNT POLICY_ID
//
// SERVICE_KEYPAIR_FILE signs the challenges; the facilitator must trust it
// (TRUSTED_SERVICE_KEYS; `trust-gate up` trusts `trust-gate demo-key service-key`).
// FACILITATOR_URL defaults to http://127.0.0.1:4020, PORT to 4030 (0: any free port).

import express from 'express';
import { readFileSync } from 'node:fs';
import { address, createKeyPairSignerFromBytes } from '@solana/kit';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { TrustGateServerScheme } from '@trust-gate/sdk/x402';
import { gateDecision } from '@trust-gate/sdk/express';

const [keyFile, payee, payTo, mint, amount, policyId] = process.argv.slice(2);
if (!policyId) {
  console.error('usage: node examples/resource-server.mjs SERVICE_KEYPAIR_FILE PAYEE_AGENT_ASSET PAY_TO MINT AMOUNT POLICY_ID');
  process.exit(2);
}
const facilitatorUrl = process.env.FACILITATOR_URL ?? 'http://127.0.0.1:4020';
const serviceKey = await createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(keyFile, 'utf8'))));
const { kinds } = await fetch(`${facilitatorUrl}/supported`).then((r) => r.json());
const network = kinds.find((k) => k.scheme === 'trust-gate').network;

const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
  network,
  new TrustGateServerScheme({ serviceKey, payeeAgentAsset: address(payee), policyId: Number(policyId) }),
);
const app = express();
// A payer the gate refuses gets 402 with the decision headers, and no challenge.
app.use(gateDecision({ facilitatorUrl, payeeAgentAsset: address(payee), mint: address(mint), amount: BigInt(amount), policyId: Number(policyId) }));
app.use(
  paymentMiddleware(
    {
      'GET /report': {
        accepts: { scheme: 'trust-gate', price: { amount, asset: mint }, network, payTo },
        description: 'a report priced per request',
        mimeType: 'application/json',
      },
    },
    server,
  ),
);
app.get('/report', (_req, res) => res.json({ report: 'paid through the trust gate' }));
const listener = app.listen(Number(process.env.PORT ?? 4030), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${listener.address().port}/report`);
});
