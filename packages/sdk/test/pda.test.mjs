// Every PDA deriver, unit limit, held settlement, holdback instruction, held payment's log
// decoding, and gated subscription (its addresses, a delegation read, its periods and payment
// ids, the gate's and the Subscriptions program's instructions) equals the Rust SDK's for the
// same inputs. The expected values come from the Rust
// test that runs this file (tests/tests/localnet/ts_sdk.rs), in the JSON file that
// TRUST_GATE_FIXTURE names.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { address, createNoopSigner } from '@solana/kit';
import {
  appendApproval,
  availableAt,
  Builder,
  closeSubscriptionAuthorityInstruction,
  compose,
  createRecurringDelegationInstruction,
  decodeRecurringDelegation,
  delegationAddress,
  extraBumpTries,
  heldPaymentFromLogData,
  holdbackViewFromLogData,
  releasableAt,
  initSubscriptionAuthorityInstruction,
  limitForUse,
  Pdas,
  periodAt,
  programIds,
  pullPaymentIdHash,
  revokeDelegationInstruction,
  revokeSubscriptionAuthorityInstruction,
  settlementUnitLimit,
  subscriptionAuthorityAddress,
  SUBSCRIPTIONS_EVENT_AUTHORITY,
  SUBSCRIPTIONS_PROGRAM,
  transferRecurringInstruction,
} from '../dist/index.js';
import { getGatedSubscriptionDecoder } from '../dist/generated/gate/accounts/index.js';
import { instructionJson } from './helpers.mjs';

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
    holdbackEscrow: await p.holdbackEscrow(k.requester, k.mint),
    holdbackAuthority: await p.holdbackAuthority(),
    arbiterSet: await p.arbiterSet(f.arbiterSet.threshold, f.arbiterSet.members.map(address)),
    gatedSubscription: await p.gatedSubscription(k.collection),
    pullDelegate: await p.pullDelegate(k.asset, k.requester, k.facilitator),
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
  assert.ok(f.unitLimits.some((u) => u.held) && f.unitLimits.some((u) => !u.held));
  for (const u of f.unitLimits) {
    const shape = {
      funding: u.funding,
      tokenProgram: address(u.tokenProgram),
      payeeRated: u.payeeRated,
      held: u.held,
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

/** The settlement of a Rust fixture entry, every signer an address. */
function settlementOf(r) {
  const opt = (a) => (a == null ? undefined : address(a));
  const budget = r.computeBudget;
  return {
    facilitator: address(r.facilitator),
    payerSigner: address(r.payerSigner),
    payerAsset: address(r.payerAsset),
    payeeAsset: address(r.payeeAsset),
    policyId: r.policyId,
    deadline: BigInt(r.deadline),
    mint: address(r.mint),
    decimals: r.decimals,
    tokenProgram: address(r.tokenProgram),
    amount: BigInt(r.amount),
    sourceToken: address(r.sourceToken),
    destinationToken: address(r.destinationToken),
    collection: address(r.collection),
    attestations: { payer: opt(r.attestations.payer), payee: opt(r.attestations.payee), payeeList: opt(r.attestations.payeeList) },
    feedback: {
      paymentIdHash: hex(r.paymentIdHash),
      score: r.score,
      tag1: r.tag1,
      tag2: r.tag2,
      endpoint: r.endpoint,
      feedbackUri: r.feedbackUri,
    },
    computeBudget: {
      ...(budget.unitLimit != null ? { unitLimit: budget.unitLimit } : {}),
      ...(budget.unitPriceMicroLamports != null ? { unitPriceMicroLamports: BigInt(budget.unitPriceMicroLamports) } : {}),
    },
    funding: r.funding,
    ...(r.approval ? { approval: { address: address(r.approval.address), rentPayer: address(r.approval.rentPayer) } } : {}),
    ...(r.holdback ? { holdback: { tier: r.holdback.tier, held: BigInt(r.holdback.held), escrow: address(r.holdback.escrow) } } : {}),
  };
}

test('a held settlement composes byte for byte as the Rust SDK composes it', async () => {
  const f = fixture();
  const b = new Builder(programIds(f.network));
  const x = f.heldSettlements;
  assert.ok(x.settlements.some((r) => r.holdback && r.holdback.held !== '0' && r.funding === 'vault' && r.approval));
  assert.ok(x.settlements.some((r) => r.holdback?.held === '0'));
  for (const [i, r] of x.settlements.entries()) {
    const got = await compose(b, settlementOf(r), true);
    assert.equal(got.length, r.instructions.length, `settlement ${i}`);
    got.forEach((ix, j) => assert.deepEqual(instructionJson(ix), r.instructions[j], `settlement ${i} instruction ${j}`));
  }
  assert.ok(x.refused.length > 0);
  for (const r of x.refused) {
    const s = settlementOf(x.settlements[r.settlement]);
    await assert.rejects(
      compose(b, { ...s, holdback: { ...s.holdback, held: BigInt(r.held) } }, true),
      (e) => e.name === 'TrustGateInputError' && e.field === r.field,
      `a share of ${r.held}`,
    );
  }
});

/** A held payment as the Rust fixture writes it. */
function heldJson(h) {
  return (
    h && {
      ...h,
      paymentIdHash: Buffer.from(h.paymentIdHash).toString('hex'),
      held: String(h.held),
      holdUntil: String(h.holdUntil),
      arbitrationEnds: String(h.arbitrationEnds),
      releasable: [0n, h.holdUntil, h.arbitrationEnds, 2n ** 63n - 1n].map((now) => [String(now), releasableAt(h, now)]),
    }
  );
}

test('a payment log decodes to the held payment the Rust SDK reads, or to none', () => {
  const f = fixture();
  const logs = f.holdback.logs;
  assert.ok(logs.some((l) => l.held) && logs.some((l) => !l.held));
  for (const [i, l] of logs.entries()) {
    assert.deepEqual(heldJson(heldPaymentFromLogData(hex(l.data), address(l.tokenProgram))), l.held, `log ${i}`);
    assert.deepEqual(holdbackViewFromLogData(hex(l.data)), l.view, `log ${i}: the receipt's view`);
  }
});

test('every holdback instruction equals the Rust SDK one byte for byte', async () => {
  const f = fixture();
  const b = new Builder(programIds(f.network));
  const held = f.holdback.logs.map((l) => heldPaymentFromLogData(hex(l.data), address(l.tokenProgram)));
  const noop = (a) => createNoopSigner(address(a));
  const build = (o) => {
    switch (o.op) {
      case 'openHoldbackEscrow':
        return b.openHoldbackEscrow(address(o.payer), address(o.payeeAsset), address(o.mint), address(o.tokenProgram));
      case 'releaseHoldback':
        return b.releaseHoldback(held[o.log], address(o.to));
      case 'refundHoldback':
        return b.refundHoldback(address(o.payeeSigner), held[o.log], address(o.to));
      case 'arbitrateHoldback':
        return b.arbitrateHoldback(held[o.log], o.uphold, address(o.to), o.members.map(address));
      case 'createArbiterSet':
        return b.createArbiterSet(address(o.payer), o.threshold, o.members.map(address));
      case 'disputePayment':
        return b.disputePayment(
          noop(o.rentPayer),
          address(o.facilitator),
          noop(o.payer),
          address(o.collection),
          hex(o.paymentIdHash),
          address(o.payeeAsset),
          hex(o.reasonHash),
          o.feedbackUri,
        );
      default:
        throw new Error(`no such builder: ${o.op}`);
    }
  };
  const ops = f.holdback.instructions;
  for (const op of ['openHoldbackEscrow', 'releaseHoldback', 'refundHoldback', 'arbitrateHoldback', 'createArbiterSet', 'disputePayment']) {
    assert.ok(ops.some((x) => x.inputs.op === op), op);
  }
  for (const [i, x] of ops.entries()) {
    assert.deepEqual(instructionJson(await build(x.inputs)), x.instruction, `${i}: ${x.inputs.op}`);
  }
  // A key arbiter's decision takes its signer only for that key.
  await assert.rejects(b.arbitrateHoldback(held[1], true, held[1].payerWallet, [], held[1].payerWallet), (e) => e.field === 'arbiter');
});

/** Recurring terms as the Rust fixture writes them. */
function termsOf(t) {
  return {
    nonce: BigInt(t.nonce),
    amountPerPeriod: BigInt(t.amountPerPeriod),
    periodLengthS: BigInt(t.periodLengthS),
    startTs: BigInt(t.startTs),
    expiryTs: BigInt(t.expiryTs),
  };
}

/** The subscription of a Rust fixture entry, the delegator an address. */
function subscriptionOf(s) {
  return {
    delegator: address(s.delegator),
    payerAsset: address(s.payerAsset),
    payeeAsset: address(s.payeeAsset),
    facilitator: address(s.facilitator),
    mint: address(s.mint),
    tokenProgram: address(s.tokenProgram),
    policyId: s.policyId,
    terms: termsOf(s.terms),
  };
}

/** A delegation as the Rust fixture writes it (integers as decimal strings). */
const delegationJson = (d) => Object.fromEntries(Object.entries(d).map(([name, v]) => [name, String(v)]));

test('a gated subscription\'s addresses, delegations and periods equal the Rust SDK ones', async () => {
  const f = fixture();
  const x = f.subscriptions;
  const b = new Builder(programIds(f.network));
  assert.equal(SUBSCRIPTIONS_PROGRAM, x.programId);
  assert.equal(SUBSCRIPTIONS_EVENT_AUTHORITY, x.eventAuthority);
  const s = subscriptionOf(x.subscription);
  assert.equal(await subscriptionAuthorityAddress(s.delegator, s.mint), x.subscriptionAuthority);
  assert.equal(await b.subscriptionDelegate(s), x.delegate);
  assert.equal(await b.subscriptionDelegation(s), x.delegation);
  assert.equal(await delegationAddress(s.delegator, s.mint, address(x.delegate), s.terms.nonce), x.delegation);
  const record = getGatedSubscriptionDecoder().decode(hex(x.record));
  assert.equal(record.delegation, x.delegation);
  assert.ok(x.delegations.length > 0);
  for (const [i, e] of x.delegations.entries()) {
    const d = decodeRecurringDelegation(hex(e.data));
    assert.deepEqual(delegationJson(d), e.read, `delegation ${i}`);
    assert.equal(Buffer.from(pullPaymentIdHash(record.delegation, d)).toString('hex'), e.paymentIdHash, `delegation ${i}: the pull's payment id`);
    for (const [now, start, pulled, available] of e.periods) {
      const p = periodAt(d, BigInt(now));
      assert.deepEqual([String(p.start), String(p.pulled), String(availableAt(d, BigInt(now)))], [start, pulled, available], `delegation ${i} at ${now}`);
    }
  }
});

test('every subscription instruction equals the Rust SDK one byte for byte', async () => {
  const f = fixture();
  const x = f.subscriptions;
  const b = new Builder(programIds(f.network));
  const record = getGatedSubscriptionDecoder().decode(hex(x.record));
  const delegations = x.delegations.map((e) => decodeRecurringDelegation(hex(e.data)));
  const opt = (a) => (a == null ? undefined : address(a));
  const pull = async (o) => {
    const att = { payer: opt(o.attestations.payer), payee: opt(o.attestations.payee), payeeList: opt(o.attestations.payeeList) };
    const d = delegations[o.delegation];
    const ix = await b.gatePull(record, d, address(o.destination), address(o.tokenProgram), address(o.collection), BigInt(o.amount), x.feedback, att);
    return o.approval ? appendApproval(ix, { address: address(o.approval.address), rentPayer: address(o.approval.rentPayer) }) : ix;
  };
  const build = (o) => {
    switch (o.op) {
      case 'subscribe':
        return b.subscribe(subscriptionOf(o.subscription));
      case 'gatePull':
        return pull(o);
      case 'unsubscribe':
        return b.unsubscribe(record);
      case 'initSubscriptionAuthority':
        return initSubscriptionAuthorityInstruction(address(o.user), address(o.mint), address(o.tokenProgram));
      case 'createRecurringDelegation':
        return createRecurringDelegationInstruction(address(o.delegator), address(o.mint), address(o.delegatee), termsOf(o.terms), BigInt(o.initId));
      case 'transferRecurring':
        return transferRecurringInstruction(address(o.address), delegations[o.delegation], address(o.receiver), address(o.tokenProgram), BigInt(o.amount));
      case 'revokeDelegation':
        return revokeDelegationInstruction(address(o.delegator), address(o.address));
      case 'revokeSubscriptionAuthority':
        return revokeSubscriptionAuthorityInstruction(address(o.user), address(o.mint), address(o.tokenProgram));
      case 'closeSubscriptionAuthority':
        return closeSubscriptionAuthorityInstruction(address(o.user), address(o.mint));
      default:
        throw new Error(`no such builder: ${o.op}`);
    }
  };
  const ops = x.instructions;
  for (const op of [
    'subscribe',
    'gatePull',
    'unsubscribe',
    'initSubscriptionAuthority',
    'createRecurringDelegation',
    'transferRecurring',
    'revokeDelegation',
    'revokeSubscriptionAuthority',
    'closeSubscriptionAuthority',
  ]) {
    assert.ok(ops.some((o) => o.inputs.op === op), op);
  }
  for (const [i, o] of ops.entries()) {
    assert.deepEqual(instructionJson(await build(o.inputs)), o.instruction, `${i}: ${o.inputs.op}`);
  }
});
