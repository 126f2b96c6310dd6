// The README's examples, run as a user would run them (child processes with keypair files as
// `trust-gate demo-key` prints them) against the Rust services started by
// tests/tests/services/ts_x402.rs: examples/pay.mjs pays the Rust demo and
// examples/resource-server.mjs, which refuses a tier-1 payer with the decision headers.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixture } from './helpers.mjs';

const f = fixture();
const pkg = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'trust-gate-examples-'));
const children = [];
after(() => {
  children.forEach((c) => c.kill());
  rmSync(dir, { recursive: true, force: true });
});

/** A keypair file of a demo key, as `trust-gate demo-key <label>` prints it. */
function keyFile(label) {
  const path = join(dir, `${label.replace('/', '_')}.json`);
  writeFileSync(path, JSON.stringify(f.keys[label]));
  return path;
}

const env = { ...process.env, RPC_URL: f.rpcUrl, FACILITATOR_URL: f.facilitatorUrl };

function run(script, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(pkg, 'examples', script), ...args], { cwd: pkg, env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

const payer = (name) => f.world.payers.find((p) => p.name === name).asset;

test('examples/pay.mjs pays the Rust demo', async () => {
  const r = await run('pay.mjs', [`${f.demoUrl}/protected`, keyFile('payer-tier-3'), payer('payer-tier-3'), '--header', f.demoPayerHeader]);
  assert.equal(r.code, 0, r.out + r.err);
  const got = JSON.parse(r.out);
  assert.equal(got.status, 200);
  assert.ok(got.transaction);
  assert.equal(got.body.transaction, got.transaction);
});

test('examples/resource-server.mjs sells through the facilitator; examples/pay.mjs pays it; tier 1 is denied', async () => {
  const server = spawn(
    process.execPath,
    [join(pkg, 'examples', 'resource-server.mjs'), keyFile('service-key'), f.world.service.asset, f.payTo, f.world.mint, String(f.world.price), String(f.world.policyId)],
    { cwd: pkg, env: { ...env, PORT: '0' } },
  );
  children.push(server);
  const url = await new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.stderr.on('data', (d) => (err += d));
    server.on('close', (code) => reject(new Error(`resource server exited ${code}: ${out}${err}`)));
  });
  const paid = await run('pay.mjs', [url, keyFile('payer-tier-3'), payer('payer-tier-3')]);
  assert.equal(paid.code, 0, paid.out + paid.err);
  assert.deepEqual(JSON.parse(paid.out).body, { report: 'paid through the trust gate' });
  const denied = await run('pay.mjs', [url, keyFile('payer-tier-1'), payer('payer-tier-1')]);
  assert.equal(denied.code, 1, denied.out + denied.err);
  assert.match(denied.out, /^402 /);
  assert.match(denied.out, /"x-gate-decision":"Deny"/);
  assert.match(denied.out, /"x-payment-reason-code":"6"/);
  assert.match(denied.out, /CounterpartyTierBelowMin/);
});
