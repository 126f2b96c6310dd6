// Pure parts of the SDK, no chain needed: the validation registry's devnet rule, the x402
// header encoding and payment ids, the atomicity guard, decision bytes, the rules of
// `PaidOnce` (x402's payment-identifier on a resource server), holdback terms in a challenge
// and the packet limit of a transaction.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { address, generateKeyPairSigner, getAddressEncoder } from '@solana/kit';
import { assertAtomicityEnforced, Builder, decisionFromWire, denyCodeOfError, programIds, strictErrorCode, summarizeLogs, validationRegistryId, ValidationRegistryBuilder } from '../dist/index.js';
import { decodeHeader, encodeHeader, MAX_KEPT_BYTES, MemoryPaidOnceStore, PaidOnce, payloadDigest, paymentIdHash, TrustGateServerScheme } from '../dist/x402/index.js';
import { encodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { VALIDATION_REGISTRY_PROGRAM_ADDRESS } from '../dist/generated/validation_registry/programs/index.js';
import { ATOM_STATS, decodeReputation } from '../dist/reputation.js';
import { MPL_CORE_PROGRAM, readAgent, readAssetOwner, recipientOf, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, transferHookProgram } from '../dist/chain.js';

const isInput = (field) => (e) => e.name === 'TrustGateInputError' && e.field === field;

/** Serves `app` on a free loopback port (closed through `servers`); its URL. */
const servers = [];
function serve(app) {
  return new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${s.address().port}`));
    servers.push(s);
  });
}

test('the validation registry default id applies only to devnet and local RPC URLs', () => {
  for (const url of ['https://api.devnet.solana.com', 'http://127.0.0.1:8899', 'http://localhost:8899']) {
    assert.equal(validationRegistryId(url), VALIDATION_REGISTRY_PROGRAM_ADDRESS);
  }
  assert.throws(() => validationRegistryId('https://api.mainnet-beta.solana.com'), /VALIDATION_REGISTRY_PROGRAM_ID/);
  const mine = address('9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin');
  assert.equal(validationRegistryId('https://rpc.example', mine), mine);
});

test('x402 headers are standard base64 of the JSON; payment ids follow the memo rule', () => {
  const v = { x402Version: 2, accepts: [{ scheme: 'trust-gate', amount: '1000' }] };
  const h = encodeHeader(v);
  assert.match(h, /^[A-Za-z0-9+/]+=*$/);
  assert.deepEqual(decodeHeader('PAYMENT-REQUIRED', h), v);
  assert.throws(() => decodeHeader('PAYMENT-SIGNATURE', '***'), /PAYMENT-SIGNATURE: not standard base64/);
  assert.throws(() => decodeHeader('PAYMENT-SIGNATURE', Buffer.from('{').toString('base64')), /PAYMENT-SIGNATURE: not the expected JSON/);
  assert.deepEqual(paymentIdHash('ab'.repeat(32)), new Uint8Array(32).fill(0xab));
  assert.deepEqual(paymentIdHash('order-7'), Uint8Array.from(createHash('sha256').update('order-7').digest()));
});

test('the atomicity guard: only the boolean true passes', () => {
  assert.equal(assertAtomicityEnforced(true), true);
  for (const bad of [false, 'true', 1, null, undefined, {}, [true]]) {
    assert.throws(() => assertAtomicityEnforced(bad), (e) => e.name === 'AtomicityNotEnforcedError' && /must be the boolean true/.test(e.message));
  }
});

test('decision bytes: kinds (RequireApproval too), deny codes 1..27 and subjects; anything else is not a decision', () => {
  const wire = (kind, code = 0, subject = 0) => Uint8Array.from([kind, code, subject, ...new Array(32).fill(7)]);
  assert.deepEqual(decisionFromWire(wire(0)), { kind: 'Allow' });
  assert.deepEqual(decisionFromWire(wire(1, 6)), { kind: 'Deny', reasonCode: 6, reasonName: 'CounterpartyTierBelowMin' });
  assert.deepEqual(decisionFromWire(wire(1, 15)), { kind: 'Deny', reasonCode: 15, reasonName: 'UnratedTreatmentDeny' });
  assert.deepEqual(decisionFromWire(wire(1, 16)), { kind: 'Deny', reasonCode: 16, reasonName: 'PolicyNotYetValid' });
  assert.deepEqual(decisionFromWire(wire(1, 23)), { kind: 'Deny', reasonCode: 23, reasonName: 'PayeeSlotsFull' });
  assert.deepEqual(decisionFromWire(wire(1, 27)), { kind: 'Deny', reasonCode: 27, reasonName: 'HoldbackArbiterNotAccepted' });
  assert.deepEqual(decisionFromWire(wire(2, 0, 1)), { kind: 'RequireValidation', capabilityHash: '07'.repeat(32), subject: 'payee' });
  assert.deepEqual(decisionFromWire(wire(3)), { kind: 'RequireApproval' });
  for (const bad of [wire(1, 0), wire(1, 28), wire(2, 0, 2), wire(4), new Uint8Array(34)]) assert.equal(decisionFromWire(bad), undefined);
  // The strict gate's errors: 6000 + code to 15, 6100 + code from 16.
  assert.equal(strictErrorCode(15), 6015);
  assert.equal(strictErrorCode(16), 6116);
  for (let code = 1; code <= 27; code++) assert.equal(denyCodeOfError(strictErrorCode(code)), code);
  for (const other of [6000, 6016, 6100, 6115, 6128]) assert.equal(denyCodeOfError(other), undefined);
});

test('reputation: immediate is the higher of the trust tier and a pending candidacy, as the gate reads it', () => {
  const engine = address('AToMufS4QD6hEXvcvBDg9m1AHeCLpmZQsyfYa5h9MwAF');
  const stats = (trust, candidate, confirmed) => {
    const data = new Uint8Array(ATOM_STATS.len);
    data.set(ATOM_STATS.discriminator, 0);
    data[ATOM_STATS.tierImmediate] = trust;
    data[ATOM_STATS.tierCandidate] = candidate;
    data[ATOM_STATS.tierConfirmed] = confirmed;
    data[ATOM_STATS.riskScore] = 12;
    data[ATOM_STATS.confidence] = 7_500 & 0xff;
    data[ATOM_STATS.confidence + 1] = 7_500 >> 8;
    data[ATOM_STATS.schemaVersion] = 1;
    return { lamports: 1n, owner: engine, data };
  };
  // As the real engine writes them: trust tier = confirmed tier, a candidacy for 3 pending.
  assert.deepEqual(decodeReputation(engine, stats(1, 3, 1)), { tierImmediate: 3, tierConfirmed: 1, riskScore: 12, confidence: 7_500, schemaVersion: 1 });
  assert.equal(decodeReputation(engine, stats(2, 0, 1)).tierImmediate, 2);
  assert.throws(() => decodeReputation(engine, stats(1, 5, 1)), { code: 'schema_mismatch' });
});

test('an agent is paid and acts by its asset\'s live owner; the wallet only while that owner set it', async () => {
  const [owner, wallet, buyer] = await Promise.all([0, 1, 2].map(() => generateKeyPairSigner().then((k) => k.address)));
  const bytes = (a) => new Uint8Array(getAddressEncoder().encode(a));
  const asset = (who) => {
    const data = new Uint8Array(80);
    data[0] = 1;
    data.set(bytes(who), 1);
    return { lamports: 1n, owner: MPL_CORE_PROGRAM, data };
  };
  assert.equal(readAssetOwner(asset(owner)), owner);
  assert.equal(readAssetOwner({ ...asset(owner), owner: wallet }), null);
  assert.equal(readAssetOwner({ ...asset(owner), data: asset(owner).data.subarray(0, 32) }), null);
  const data = new Uint8Array(171);
  data.set([241, 119, 69, 140, 233, 9, 112, 50], 0);
  data.set(bytes(owner), 72);
  data[138] = 1;
  data.set(bytes(wallet), 139);
  const view = readAgent(data);
  assert.equal(recipientOf(view, owner), wallet);
  // Sold on MPL Core without sync_owner: the cached owner and its wallet are the seller's.
  assert.equal(recipientOf(view, buyer), buyer);
});

test('log summaries keep the last lines that fit, without success and consumed lines', () => {
  const logs = Array.from({ length: 100 }, (_, i) => `line ${i}`).concat(['Program X consumed 5 of 10 compute units', 'Program X success']);
  const s = summarizeLogs(logs, 400);
  assert.ok(s.length <= 400);
  assert.ok(s.endsWith('line 99'));
  assert.equal(summarizeLogs([], 400), '(no logs)');
});

test('every subpath the package exports loads by the package name', async () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const subpaths = Object.keys(pkg.exports);
  for (const want of ['.', './x402', './express', './atomicity', './chain', './emit-feedback', './onchain-validator', './reputation', './spl', './types', './validation-registry', './facilitator']) {
    assert.ok(subpaths.includes(want), `exports ${want}`);
  }
  for (const sub of subpaths) {
    const m = await import(sub === '.' ? '@trust-gate/sdk' : `@trust-gate/sdk/${sub.slice(2)}`);
    if (sub !== './types') assert.ok(Object.keys(m).length > 0, `${sub} exports something`);
  }
  const x402 = await import('@trust-gate/sdk/x402');
  assert.equal(typeof x402.registerTrustGateScheme, 'function');
  assert.equal(typeof (await import('@trust-gate/sdk/express')).mountTrustGate, 'function');
});

test('on mainnet trust-gate program ids must be given: builders refuse the sentinel by name', () => {
  const ids = programIds('solana-mainnet');
  assert.throws(() => new Builder(ids), /programIds\.policyVault: .*POLICY_VAULT_PROGRAM_ID/);
  assert.throws(() => new ValidationRegistryBuilder(ids), /VALIDATION_REGISTRY_PROGRAM_ID/);
  const devnet = programIds('solana-devnet');
  const given = { ...ids, policyVault: devnet.policyVault, gate: devnet.gate, validationRegistry: devnet.validationRegistry };
  assert.ok(new Builder(given));
  assert.notEqual(ids.agentRegistry, devnet.agentRegistry, 'the registry has its real mainnet id');
});

test('the server scheme prices in base units, or in money with the configured asset', async () => {
  const mint = address('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
  const s = new TrustGateServerScheme({ serviceKey: await generateKeyPairSigner(), payeeAgentAsset: mint, policyId: 1, asset: { mint, decimals: 6 } });
  assert.deepEqual(await s.parsePrice({ amount: '5', asset: mint }, 'solana:x'), { amount: '5', asset: mint });
  assert.deepEqual(await s.parsePrice('$0.10', 'solana:x'), { amount: '100000', asset: mint });
  assert.deepEqual(await s.parsePrice('2', 'solana:x'), { amount: '2000000', asset: mint });
  await assert.rejects(s.parsePrice('$0.1234567', 'solana:x'), /price: .* at most 6 decimals/);
  await assert.rejects(s.parsePrice({ amount: '1.5', asset: mint }, 'solana:x'), /price\.amount/);
  const bare = new TrustGateServerScheme({ serviceKey: await generateKeyPairSigner(), payeeAgentAsset: mint, policyId: 1 });
  await assert.rejects(bare.parsePrice('$1', 'solana:x'), /price: a money price needs config\.asset/);
});

test('a Token-2022 mint names its transfer hook program, as the Rust SDK reads it', () => {
  const hook = address('9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin');
  // Base mint and padding to 165 bytes, account type 1 (mint), then TLV entries.
  const mint = (entries) => {
    const parts = [new Uint8Array(165), Uint8Array.of(1)];
    for (const [kind, value] of entries) parts.push(Uint8Array.of(kind & 0xff, kind >> 8, value.length & 0xff, value.length >> 8), value);
    return Uint8Array.from(parts.flatMap((p) => Array.from(p)));
  };
  const hookValue = (program) => Uint8Array.from([...new Uint8Array(32), ...program]);
  const closeAuthority = [3, new Uint8Array(32).fill(7)];
  const program = Uint8Array.from(getAddressEncoder().encode(hook));
  const acc = (owner, data) => ({ owner, data, lamports: 1n, executable: false });
  assert.equal(transferHookProgram(acc(TOKEN_2022_PROGRAM, mint([closeAuthority, [14, hookValue(program)]]))), hook);
  assert.equal(transferHookProgram(acc(TOKEN_2022_PROGRAM, mint([[14, hookValue(new Uint8Array(32))]]))), null, 'no program');
  assert.equal(transferHookProgram(acc(TOKEN_2022_PROGRAM, mint([closeAuthority]))), null, 'no hook');
  assert.equal(transferHookProgram(acc(TOKEN_PROGRAM, mint([[14, hookValue(program)]]))), null, 'SPL Token');
  assert.equal(transferHookProgram(acc(TOKEN_2022_PROGRAM, new Uint8Array(82))), null, 'no extensions');
});

test('policies decode at the documented offsets, with and without limits; PaymentApproval decodes at its offsets', async () => {
  const { decodePolicy, policyRules, approvalThresholdOf, needsApproval, decodePaymentApproval } = await import('../dist/chain.js');
  const { POLICY_ACCOUNT_DISCRIMINATOR, getPaymentApprovalEncoder } = await import('../dist/generated/policy_vault/accounts/index.js');
  // No limits: the head (345 bytes), then three absent sections (limits, slots, holdback).
  const policy = new Uint8Array(348);
  policy.set(POLICY_ACCOUNT_DISCRIMINATOR, 0);
  new DataView(policy.buffer).setBigUint64(336, 500n, true);
  policy[344] = 1;
  const p = decodePolicy(policy);
  assert.equal(p.version, 1);
  assert.equal(policyRules(p), null);
  assert.equal(approvalThresholdOf(p), 500n);
  assert.equal(needsApproval(p, 500n), false, 'at the threshold: no approval');
  assert.equal(needsApproval(p, 501n), true);
  // Limits without a per-payee cap: the rules at 346 (monthly cap at 523), no slots.
  const limited = new Uint8Array(573);
  limited.set(policy, 0);
  limited[345] = 1;
  new DataView(limited.buffer).setBigUint64(523, 4_000n, true);
  new DataView(limited.buffer).setBigUint64(336, 0n, true);
  const l = decodePolicy(limited);
  assert.equal(policyRules(l).monthlyCap, 4_000n);
  assert.equal(l.payeeDay.__option, 'None');
  assert.equal(needsApproval(l, 2n ** 64n - 1n), false, 'threshold 0: none');

  const [payer, payee, mint, member] = await Promise.all([0, 1, 2, 3].map(() => generateKeyPairSigner().then((k) => k.address)));
  const bytes = new Uint8Array(getPaymentApprovalEncoder().encode({
    payerAsset: payer, payeeAsset: payee, mint, amount: 7_000_000n, policyId: 9, expiresAt: 1_800_000_000n, approvedAt: 1_700_000_000n, rentPayer: member, signers: 2, bump: 254, authorityGeneration: 3,
  }));
  assert.equal(bytes.length, 170);
  const key = (a) => Uint8Array.from(getAddressEncoder().encode(a));
  assert.deepEqual(bytes.subarray(132, 164), key(member), 'rent payer at 132');
  assert.equal(bytes[164], 2, 'signers at 164');
  assert.equal(new DataView(bytes.buffer).getBigUint64(104, true), 7_000_000n, 'amount at 104');
  const a = decodePaymentApproval(bytes);
  assert.equal(a.rentPayer, member);
  assert.equal(a.amount, 7_000_000n);
  assert.equal(a.policyId, 9);
  assert.equal(decodePaymentApproval(bytes.subarray(0, 169)), null, 'short');
  assert.equal(decodePaymentApproval(policy), null, 'another account');
});

test('approvals: a settlement and a gated open end their gate instruction with [approval, rent payer] writable; decisions pass the approval read-only', async () => {
  const { AccountRole } = await import('@solana/kit');
  const { appendApproval, compose, decisionInstruction, checkApproval, settlementApprovalTerms } = await import('../dist/index.js');
  const { openChannel } = await import('../dist/x402/channel.js');
  const b = new Builder(programIds('solana-localnet'));
  const [payerSigner, facilitator, voucherKey] = await Promise.all([0, 1, 2].map(() => generateKeyPairSigner()));
  const [payerAsset, payeeAsset, mint, source, destination, collection, member] = await Promise.all(
    [0, 1, 2, 3, 4, 5, 6].map(() => generateKeyPairSigner().then((k) => k.address)),
  );
  const s = {
    facilitator, payerSigner, payerAsset, payeeAsset, policyId: 9, deadline: 1_800_000_000n, mint, decimals: 6,
    tokenProgram: TOKEN_PROGRAM, amount: 7_000_000n, sourceToken: source, destinationToken: destination, collection, attestations: {},
    feedback: { paymentIdHash: new Uint8Array(32).fill(4), score: 90, tag1: 'x402', tag2: '', endpoint: 'https://api.example', feedbackUri: '' },
    funding: 'wallet',
  };
  const terms = settlementApprovalTerms(s);
  const approval = { address: await b.pda.approval(terms), rentPayer: member };
  const plain = await compose(b, s, true);
  const approved = await compose(b, { ...s, approval }, true);
  assert.equal(approved.length, plain.length);
  const gate = approved[0];
  assert.deepEqual(gate.accounts.slice(0, -2), plain[0].accounts, 'the gate\'s own accounts first, unchanged');
  assert.deepEqual(gate.accounts.slice(-2), [
    { address: approval.address, role: AccountRole.WRITABLE },
    { address: member, role: AccountRole.WRITABLE },
  ]);
  assert.deepEqual(approved.slice(1), plain.slice(1), 'the transfer and the feedback as without');
  assert.deepEqual(gate.data, plain[0].data);
  await assert.rejects(compose(b, { ...s, approval: { address: member, rentPayer: member } }, true), (e) => e.name === 'TrustGateInputError' && e.field === 'approval');
  await assert.rejects(checkApproval(b, approval, { ...terms, amount: terms.amount + 1n }), /approval: .* is not the approval of this payment's terms/);
  assert.deepEqual(appendApproval(plain[0], approval), gate);

  // The read-only decision: the approval of the query's terms, read-only, after the evaluation.
  const p = { payerAsset, payeeAsset, amount: 7_000_000n, mint, policyId: 9 };
  const decision = await decisionInstruction(b, p);
  const bare = await b.gatePayment(p);
  assert.deepEqual(decision.accounts.slice(0, -1), bare.accounts);
  assert.deepEqual(decision.accounts.at(-1), { address: approval.address, role: AccountRole.READONLY });

  // A gated open: the approval of the deposit's terms is checked, then appended.
  const pdas = await Promise.all([b.pda.policy(payerAsset, 9), b.pda.agentAccount(payerAsset), b.pda.agentAccount(payeeAsset)]);
  const open = (gateApproval) =>
    openChannel({
      builder: b, payer: payerSigner, feePayer: facilitator.address, voucherKey: voucherKey.address, mint, tokenProgram: TOKEN_PROGRAM,
      payTo: destination, deposit: 7_000_000n, salt: 1n, openSlot: 100n, withdrawDelay: 900,
      gate: { payerAsset, payeeAsset, policyId: 9, ...(gateApproval ? { approval: gateApproval } : {}) },
      // Without a table the gated open is above a packet's 1232 bytes, which `transaction` refuses.
      tables: [{ key: collection, addresses: [mint, destination, payerAsset, payeeAsset, ...pdas] }],
      lifetime: { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 0n }, memos: [],
    });
  const [without, withApproval] = await Promise.all([open(), open(approval)]);
  assert.ok(withApproval.transaction.messageBytes.length === without.transaction.messageBytes.length + 64 + 2, 'two more keys, two more account indexes');
  await assert.rejects(open({ ...approval, address: member }), (e) => e.name === 'TrustGateInputError' && e.field === 'approval');
});

test('holdback: a held settlement splits the transfer and reads five more accounts; a share that leaves the payee nothing is refused by name', async () => {
  const { AccountRole } = await import('@solana/kit');
  const { compose, heldPaymentFromLogData, sortAddresses } = await import('../dist/index.js');
  const b = new Builder(programIds('solana-localnet'));
  const [payerSigner, facilitator, payerAsset, payeeAsset, mint, source, destination, collection] = await Promise.all(
    [0, 1, 2, 3, 4, 5, 6, 7].map(() => generateKeyPairSigner().then((k) => k.address)),
  );
  const escrow = await b.pda.holdbackEscrow(payeeAsset, mint);
  const s = {
    facilitator, payerSigner, payerAsset, payeeAsset, policyId: 9, deadline: 1_800_000_000n, mint, decimals: 6,
    tokenProgram: TOKEN_PROGRAM, amount: 1_000n, sourceToken: source, destinationToken: destination, collection, attestations: {},
    feedback: { paymentIdHash: new Uint8Array(32).fill(4), score: 90, tag1: 'x402', tag2: '', endpoint: 'https://api.example', feedbackUri: '' },
    funding: 'wallet',
  };
  // Address-only signers become a fresh no-op signer per compose: compare what goes on the wire.
  const wire = (ix) => ({ program: ix.programAddress, accounts: ix.accounts.map(({ address, role }) => ({ address, role })), data: [...ix.data] });
  const plain = (await compose(b, s, true)).map(wire);
  const held = (await compose(b, { ...s, holdback: { tier: 2, held: 250n, escrow } }, true)).map(wire);
  assert.equal(held.length, plain.length + 1);
  const amountOf = (ix) => Buffer.from(ix.data).readBigUInt64LE(1);
  assert.equal(amountOf(held[1]), 750n);
  assert.equal(amountOf(held[2]), 250n);
  assert.equal(held[2].accounts[2].address, escrow);
  // The tier is the strict gate's last argument: Some(2) where the plain settlement has None.
  assert.deepEqual([...held[0].data.slice(-2)], [1, 2]);
  assert.equal(plain[0].data.at(-1), 0);
  const policy = await b.pda.policy(payerAsset, 9);
  const payerAgent = await b.pda.agentAccount(payerAsset);
  assert.deepEqual(held[3].accounts.slice(-5), [policy, escrow, destination, payerAgent, payerAsset].map((address) => ({ address, role: AccountRole.READONLY })));
  assert.deepEqual(held[3].accounts.slice(0, -5), plain[2].accounts);
  // A quote that holds nothing at this amount passes its tier and pays in one transfer.
  const none = (await compose(b, { ...s, holdback: { tier: 4, held: 0n, escrow } }, true)).map(wire);
  assert.equal(none.length, plain.length);
  assert.deepEqual(none.slice(1), plain.slice(1));
  const refused = (holdback, field) =>
    assert.rejects(compose(b, { ...s, holdback }, true), (e) => e.name === 'TrustGateInputError' && e.field === field, JSON.stringify(holdback, (_, v) => (typeof v === 'bigint' ? String(v) : v)));
  await refused({ tier: 2, held: 1_000n, escrow }, 'holdback.held');
  await refused({ tier: 2, held: 1_001n, escrow }, 'holdback.held');
  await refused({ tier: 2, held: -1n, escrow }, 'holdback.held');
  await refused({ tier: 2, held: 250, escrow }, 'holdback.held');
  await refused({ tier: 256, held: 250n, escrow }, 'holdback.tier');
  await refused({ tier: 1.5, held: 250n, escrow }, 'holdback.tier');
  // Nothing but a held payment's log reads as a held payment.
  assert.equal(heldPaymentFromLogData(new Uint8Array(0), TOKEN_PROGRAM), null);
  assert.equal(heldPaymentFromLogData(new Uint8Array(395), TOKEN_PROGRAM), null);
  // An arbiter set's members go in the order of their bytes, not of their base58 text.
  const small = address('11111111111111111111111111111112');
  const large = address('AToMufS4QD6hEXvcvBDg9m1AHeCLpmZQsyfYa5h9MwAF');
  const ab = address('9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin');
  assert.deepEqual(sortAddresses([large, ab, small]), [small, ab, large]);
  const set = await b.createArbiterSet(facilitator, 2, [large, small]);
  assert.equal(set.accounts[1].address, await b.pda.arbiterSet(2, [small, large]));
});

test('approvals: X-Gate-Approval-Id comes with RequireApproval, in the headers and the /verify body', async () => {
  const { decisionAnswer, decisionHeaders, readDecisionHeaders, DECISION_HEADERS, X_GATE_APPROVAL_ID } = await import('../dist/index.js');
  assert.equal(X_GATE_APPROVAL_ID, 'X-Gate-Approval-Id');
  assert.ok(DECISION_HEADERS.includes(X_GATE_APPROVAL_ID));
  const id = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
  assert.deepEqual(decisionHeaders({ kind: 'RequireApproval' }, 'solana-localnet', id), {
    'X-Gate-Decision': 'RequireApproval',
    'X-Payment-Required': 'approval',
    'X-Gate-Approval-Id': id,
    'X-Payment-Network': 'solana-localnet',
  });
  assert.equal(decisionHeaders({ kind: 'Allow' }, 'n', id)[X_GATE_APPROVAL_ID], undefined, 'only with RequireApproval');
  const a = decisionAnswer({ kind: 'RequireApproval' }, 'solana-localnet', undefined, { id, pending: null });
  assert.equal(a.status, 402);
  assert.deepEqual(a.body, { isValid: false, decision: { kind: 'RequireApproval' }, invalidReason: 'RequireApproval', approval: { id, pending: null } });
  assert.equal(a.headers[X_GATE_APPROVAL_ID], id);
  const h = new Headers(a.headers);
  assert.deepEqual(readDecisionHeaders(h), { decision: 'RequireApproval', paymentRequired: 'approval', approvalId: id, network: 'solana-localnet' });
  assert.deepEqual(readDecisionHeaders((n) => ({ 'X-Gate-Decision': 'Deny', 'X-Payment-Reason-Code': '6' })[n]), { decision: 'Deny', reasonCode: 6 });
});

test('PaidOnce answers an id once, bound to its payload, and leaves a non-final answer open', async () => {
  const p = new PaidOnce({ waitMs: 50 });
  const payment = (id, transaction = 'tx-1') =>
    encodePaymentSignatureHeader({
      x402Version: 2,
      accepted: { scheme: 'trust-gate' },
      payload: { transaction },
      ...(id === undefined ? {} : { extensions: { 'payment-identifier': { info: { required: false, id } } } }),
    });
  const body = (a) => JSON.parse(Buffer.from(a.body, 'base64').toString());
  const ok = { status: 200, headers: [['content-type', 'application/json']], body: Buffer.from('{"served":1}').toString('base64') };

  assert.deepEqual(await p.begin('GET', '/r', undefined), { kind: 'pass' }, 'no payment');
  assert.deepEqual(await p.begin('GET', '/r', payment(undefined)), { kind: 'pass' }, 'no id, none required');
  const required = await new PaidOnce({ required: true }).begin('GET', '/r', payment(undefined));
  assert.equal(required.answer.status, 400);
  assert.equal(body(required.answer).error, 'payment_identifier_required');
  const malformed = await p.begin('GET', '/r', payment('short'));
  assert.equal(malformed.answer.status, 400);
  assert.match(body(malformed.answer).message, /^extensions\["payment-identifier"\]\.info\.id: 16 to 128/);

  // A new id runs; while it runs the same payment waits, then is told to retry.
  const id = 'pay_0123456789abcdef';
  const first = await p.begin('GET', '/r', payment(id));
  assert.deepEqual([first.kind, first.resumed], ['run', false]);
  const waiting = await p.begin('GET', '/r', payment(id));
  assert.equal(waiting.answer.status, 503);
  assert.ok(waiting.answer.headers.some(([k, v]) => k === 'retry-after' && v === '1'));
  assert.equal(body(waiting.answer).error, 'payment_in_progress');
  // Its final answer is kept: the same payment gets it back; another payload is 409; the
  // same id on another route is another payment.
  await first.finish(ok);
  assert.deepEqual(await p.begin('GET', '/r', payment(id)), { kind: 'answer', answer: ok });
  const conflict = await p.begin('GET', '/r', payment(id, 'tx-2'));
  assert.equal(conflict.answer.status, 409);
  assert.equal(body(conflict.answer).error, 'payment_identifier_conflict');
  assert.equal((await p.begin('GET', '/other', payment(id))).kind, 'run');

  // Not final: a 5xx, a pending settlement, an answer too large to keep. Each leaves the id
  // open: the next resend runs again, resumed.
  const pending = encodePaymentResponseHeader({ success: false, errorReason: 'settlement_pending', transaction: 'sig', network: 'solana:x' });
  const notFinal = [
    { status: 502, headers: [], body: '' },
    { status: 402, headers: [['payment-response', pending]], body: '' },
    { status: 200, headers: [], body: Buffer.alloc(MAX_KEPT_BYTES + 1).toString('base64') },
  ];
  const other = 'pay_fedcba9876543210';
  let run = await p.begin('GET', '/r', payment(other));
  for (const answer of notFinal) {
    await run.finish(answer);
    run = await p.begin('GET', '/r', payment(other));
    assert.deepEqual([run.kind, run.resumed], ['run', true], String(answer.status));
  }
  await run.finish(ok);
  assert.deepEqual(await p.begin('GET', '/r', payment(other)), { kind: 'answer', answer: ok });
  // The digest ignores the order of keys.
  assert.equal(payloadDigest({ a: 1, b: { c: 2, d: [3] } }), payloadDigest({ b: { d: [3], c: 2 }, a: 1 }));
  assert.notEqual(payloadDigest({ a: 1 }), payloadDigest({ a: 2 }));
});

test('MemoryPaidOnceStore: an expired id is claimed over, and expired ids do not pile up', async () => {
  const store = new MemoryPaidOnceStore();
  assert.equal(await store.claim('a', '1', 0), undefined);
  assert.equal(await store.replaceIf('a', '1', '2', 60_000), false, 'expired: nothing to replace');
  assert.equal(await store.claim('a', '2', 60_000), undefined, 'expired: claimed over');
  assert.equal(await store.claim('a', '3', 60_000), '2');
  assert.equal(await store.replaceIf('a', '2', '4', 60_000), true);
  for (let i = 0; i < 1000; i++) await store.claim(`k${i}`, 'v', 0);
  // TypeScript's `private` is not enforced at run time: the map's size, read directly.
  assert.ok(store.entries.size <= 3, String(store.entries.size));
});

test('holdback terms in extra.gate: read as the Rust SDK reads them, and signed as six more lines only when present', async () => {
  const { challengeMessage, gateExtensionOf, holdbackQuoteOf } = await import('../dist/x402/index.js');
  const escrow = (await generateKeyPairSigner()).address;
  const terms = { payeeTier: 1, shareBps: 1000, holdSeconds: 120, held: '10000', escrow, arbiter: escrow };
  const gate = { payerAgentAsset: 'a', payeeAgentAsset: 'b', payeeRecipient: 'c', policyId: 3, issuedAt: 1, serviceSignature: 's' };
  const r = (g) => ({ scheme: 'trust-gate', network: 'solana:x', amount: '100000', asset: 'm', payTo: 'c', maxTimeoutSeconds: 60, extra: { gate: g } });
  const lines = (g) => new TextDecoder().decode(challengeMessage(r(g), 'https://r', g)).split('\n');
  const plain = lines(gate);
  assert.deepEqual(lines({ ...gate, holdback: terms }), [
    ...plain.slice(0, -1),
    'holdbackPayeeTier=1',
    'holdbackShareBps=1000',
    'holdbackHoldSeconds=120',
    'holdbackHeld=10000',
    `holdbackEscrow=${escrow}`,
    `holdbackArbiter=${escrow}`,
    '',
  ]);
  const { arbiter: _, ...noArbiter } = terms;
  assert.equal(lines({ ...gate, holdback: noArbiter }).at(-2), 'holdbackArbiter=');
  // Absent and null are no holdback; a null arbiter is none.
  assert.deepEqual(gateExtensionOf(r({ ...gate, holdback: null })), gate);
  assert.deepEqual(gateExtensionOf(r({ ...gate, holdback: { ...terms, arbiter: null } })).holdback, noArbiter);
  assert.deepEqual(gateExtensionOf(r({ ...gate, holdback: terms })).holdback, terms);
  const refused = (holdback, field) => assert.throws(() => gateExtensionOf(r({ ...gate, holdback })), isInput(field), JSON.stringify(holdback));
  refused({ ...terms, more: 1 }, 'extra.gate.holdback.more');
  refused({ ...terms, payeeTier: 256 }, 'extra.gate.holdback.payeeTier');
  refused({ ...terms, shareBps: -1 }, 'extra.gate.holdback.shareBps');
  refused({ ...terms, holdSeconds: 2 ** 32 }, 'extra.gate.holdback.holdSeconds');
  refused({ ...terms, held: 10000 }, 'extra.gate.holdback.held');
  refused({ ...terms, escrow: undefined }, 'extra.gate.holdback.escrow');
  refused({ ...terms, arbiter: 7 }, 'extra.gate.holdback.arbiter');
  refused([], 'extra.gate.holdback');
  assert.throws(() => gateExtensionOf(r({ ...gate, more: 1 })), isInput('extra.gate.more'));
  // The quote a settlement carries.
  assert.deepEqual(holdbackQuoteOf(terms, 'f'), { tier: 1, held: 10000n, escrow });
  assert.throws(() => holdbackQuoteOf({ ...terms, held: '18446744073709551616' }, 'f'), isInput('f.held'));
  assert.throws(() => holdbackQuoteOf({ ...terms, held: '1e3' }, 'f'), isInput('f.held'));
  assert.throws(() => holdbackQuoteOf({ ...terms, escrow: 'nope' }, 'f'), isInput('f.escrow'));
});

test('transaction refuses one above a packet\'s 1232 bytes signed, naming its size', async () => {
  const { AccountRole } = await import('@solana/kit');
  const { transaction, PACKET_LIMIT } = await import('../dist/index.js');
  const payer = await generateKeyPairSigner();
  const keys = await Promise.all(Array.from({ length: 40 }, () => generateKeyPairSigner().then((k) => k.address)));
  const lifetime = { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 0n };
  const ix = (n) => ({ programAddress: MPL_CORE_PROGRAM, accounts: keys.slice(0, n).map((address) => ({ address, role: AccountRole.READONLY })), data: new Uint8Array() });
  // The message's size grows 33 bytes a key (the key and its index): find the most that fit.
  const signed = async (n) => {
    const tx = await transaction(payer, [ix(n)], [], lifetime);
    return tx.messageBytes.length + 1 + 64;
  };
  let n = 1;
  while ((await signed(n)) + 33 <= PACKET_LIMIT) n++;
  const fits = await signed(n);
  assert.ok(fits <= PACKET_LIMIT && fits + 33 > PACKET_LIMIT, String(fits));
  await assert.rejects(
    transaction(payer, [ix(n + 1)], [], lifetime),
    (e) => isInput('transaction')(e) && e.message.startsWith(`transaction: ${fits + 33} bytes, above the 1232 a transaction may have`),
  );
  assert.equal(PACKET_LIMIT, 1232);
});

test('gateDecision hands the decision\'s holdback terms to the server scheme, which signs them into the challenge of that payment only', async () => {
  const express = (await import('express')).default;
  const { gateDecision } = await import('../dist/express.js');
  const { challengeSignedBy, gateExtensionOf, X_GATE_DECIDED_HOLDBACK } = await import('../dist/x402/index.js');
  const [serviceKey, payerKey, payeeKey, mintKey, escrowKey] = await Promise.all([0, 1, 2, 3, 4].map(() => generateKeyPairSigner()));
  const [payer, payee, mint, escrow] = [payerKey, payeeKey, mintKey, escrowKey].map((k) => k.address);
  const terms = { payeeTier: 1, shareBps: 1000, holdSeconds: 120, held: '10', escrow };
  // A facilitator whose decision states `answer`'s holdback.
  let answer = { isValid: true, decision: { kind: 'Allow' }, holdback: terms };
  const facilitator = express().post('/verify', (_req, res) => res.json(answer));
  const scheme = new TrustGateServerScheme({ serviceKey, payeeAgentAsset: payee, policyId: 3 });
  const offer = (amount) => ({ scheme: 'trust-gate', network: 'solana:x', amount, asset: mint, payTo: payee, maxTimeoutSeconds: 60, extra: { feePayer: payee } });
  // What @x402/express does after gateDecision: the scheme signs the offers, reading the request's headers.
  const app = express().use(gateDecision({ facilitatorUrl: await serve(facilitator), payeeAgentAsset: payee, mint, amount: 100n, policyId: 3 }));
  app.get('/r', async (req, res) => {
    const ctx = {
      requirements: [offer('100'), offer('101')],
      resourceInfo: { url: 'https://r' },
      transportContext: { request: { adapter: { getHeader: (n) => req.get(n) } } },
    };
    res.json(await scheme.enrichPaymentRequiredResponse(ctx));
  });
  const url = await serve(app);
  const offers = async (headers = {}) => {
    const res = await fetch(`${url}/r`, { headers: { 'X-Payer-Agent': payer, ...headers } });
    return { status: res.status, body: await res.json() };
  };
  const { status, body } = await offers();
  assert.equal(status, 200, JSON.stringify(body));
  const [decided, other] = body.map(gateExtensionOf);
  assert.deepEqual(decided.holdback, terms);
  assert.equal(await challengeSignedBy(serviceKey.address, body[0], 'https://r', decided), true);
  assert.equal(other.holdback, undefined, 'terms quoted for 100 are not those of 101');
  // A client cannot name a decision itself.
  answer = { isValid: true, decision: { kind: 'Allow' } };
  const forged = await offers({ [X_GATE_DECIDED_HOLDBACK]: 'ab'.repeat(16) });
  assert.equal(gateExtensionOf(forged.body[0]).holdback, undefined);
  // Terms the SDK cannot read are the facilitator's fault: 502, no challenge.
  answer = { isValid: true, decision: { kind: 'Allow' }, holdback: { ...terms, payeeTier: 'one' } };
  const unreadable = await offers();
  assert.equal(unreadable.status, 502);
  assert.equal(unreadable.body.error, 'facilitator_unexpected');
  assert.match(unreadable.body.message, /holdback\.payeeTier/);
  servers.splice(0).forEach((s) => s.close());
});
