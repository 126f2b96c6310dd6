// Every PDA deriver equals the Rust SDK's for the same keys. The expected addresses come from
// the Rust test that runs this file (tests/tests/localnet/ts_sdk.rs), in the JSON file that
// TRUST_GATE_FIXTURE names.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { address } from '@solana/kit';
import { Pdas, programIds, extraBumpTries, limitForUse, settlementUnitLimit } from '../dist/index.js';

function fixture() {
  const path = process.env.TRUST_GATE_FIXTURE;
  assert.ok(path, 'TRUST_GATE_FIXTURE must name the Rust SDK fixture: run `cargo test --workspace` (tests/tests/localnet/ts_sdk.rs)');
  return JSON.parse(readFileSync(path, 'utf8'));
}

const hex = (s) => Uint8Array.from(Buffer.from(s, 'hex'));

test('every PDA equals the Rust SDK one', async () => {
  const f = fixture();
  const k = Object.fromEntries(Object.entries(f.keys).map(([name, v]) => [name, address(v)]));
  const ids = programIds(f.network);
  assert.deepEqual(Object.fromEntries(Object.entries(ids).map(([n, v]) => [n, String(v)])), f.programIds);
  const p = new Pdas(ids);
  const cap = hex(f.capabilityHash);
  const pay = hex(f.paymentIdHash);
  const got = {
    policyAuthority: await p.policyAuthority(k.asset),
    policy: await p.policy(k.asset, f.policyId),
    velocity: await p.velocity(k.asset, f.policyId),
    payeeList: await p.payeeList(k.asset, f.policyId),
    killswitch: await p.killswitch(k.asset),
    acceptance: await p.acceptance(k.asset),
    vault: await p.vault(k.asset, k.mint),
    authorityGuard: await p.authorityGuard(k.asset),
    takeOverRequest: await p.takeOverRequest(k.asset),
    evaluateSigner: await p.evaluateSigner(),
    gateAuthority: await p.gateAuthority(k.facilitator),
    feedbackLog: await p.feedbackLog(k.facilitator, pay),
    dispute: await p.dispute(k.facilitator, pay),
    namespace: await p.namespace(cap),
    attestorProfile: await p.attestorProfile(k.attestor),
    validationRequest: await p.validationRequest(k.asset, cap, k.requester),
    attestation: await p.attestation(k.asset, cap, k.attestor),
    rootConfig: await p.rootConfig(),
    registryConfig: await p.registryConfig(k.collection),
    agentAccount: await p.agentAccount(k.asset),
    registryCpiAuthority: await p.registryCpiAuthority(),
    atomConfig: await p.atomConfig(),
    atomStats: await p.atomStats(k.asset),
  };
  assert.deepEqual(Object.keys(got).sort(), Object.keys(f.pdas).sort(), 'the same derivers on both sides');
  for (const [name, want] of Object.entries(f.pdas)) {
    assert.equal(String(got[name]), want, name);
  }
});

test('a 32-byte seed of another length is refused by name', async () => {
  const p = new Pdas(programIds('solana-devnet'));
  await assert.rejects(p.namespace(new Uint8Array(31)), /capabilityHash: 32 bytes expected, got 31/);
});

test('a settlement\'s compute-unit limit equals the Rust SDK one', async () => {
  const f = fixture();
  const k = Object.fromEntries(Object.entries(f.keys).map(([name, v]) => [name, address(v)]));
  const ids = programIds(f.network);
  assert.ok(f.unitLimits.length > 0);
  for (const u of f.unitLimits) {
    const shape = {
      funding: u.funding,
      tokenProgram: address(u.tokenProgram),
      payeeRated: u.payeeRated,
      payerAsset: k.asset,
      payeeAsset: k.requester,
      facilitator: k.facilitator,
      paymentIdHash: hex(f.paymentIdHash),
    };
    assert.deepEqual(await extraBumpTries(shape, ids), u.extraBumpTries, JSON.stringify(u));
    assert.equal(await settlementUnitLimit(shape, ids), u.limit, JSON.stringify(u));
  }
  assert.ok(f.limitsForUse.length > 0);
  for (const [used, limit] of f.limitsForUse) {
    assert.equal(limitForUse(BigInt(used)), limit, `a simulated use of ${used}`);
  }
});
