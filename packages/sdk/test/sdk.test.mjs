// The TypeScript SDK's builders and loaders against the Rust SDK and a live localnet
// (started by tests/tests/services/ts_x402.rs): validation-registry, registration and
// payment-channel builders equal to the Rust ones, real transactions of a new attestor whose
// attestations the SDK finds as the Rust facilitator does, and IDLs read from the chain with
// the bundled fallback.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { address, generateKeyPairSigner, signBytes } from '@solana/kit';
import {
  attestationMessage,
  bundledIdl,
  engineReputation,
  gatePayment,
  SYSTEM_PROGRAM,
  Builder,
  capabilityHash,
  channelAddress,
  channelEventAuthority,
  channelOf,
  channelPaymentIdHash,
  decodeChannel,
  distributeInstruction,
  distributionHash,
  distributionOf,
  distributionPreimage,
  ed25519Verify,
  escrowOf,
  openInstruction,
  reclaimInstruction,
  requestCloseInstruction,
  sealInstruction,
  settleAndSealInstruction,
  settleInstruction,
  signVoucher,
  topUpInstruction,
  voucherInstruction,
  voucherMessage,
  withdrawPayerInstruction,
  CHANNEL_TREASURY_OWNER,
  PAYMENT_CHANNELS_PROGRAM,
  TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
  IdlMissingError,
  loadIdl,
  programIds,
  sendAndConfirm,
  setAgentWallet,
  transaction,
  ValidationRegistryBuilder,
  appendApproval,
  compose,
} from '../dist/index.js';
import { getValidationAttestationDecoder } from '../dist/generated/validation_registry/accounts/index.js';
import { getChannelRecordDecoder } from '../dist/generated/gate/accounts/index.js';
import { getSetAcceptancePolicyInstruction } from '../dist/generated/policy_vault/instructions/index.js';
import { fixture, instructionJson, rpcOf, signerOf } from './helpers.mjs';

const f = fixture();
const rpc = rpcOf(f);
const ids = programIds('solana-localnet');

test('validation-registry, registration and agent-wallet builders equal the Rust SDK builders', async () => {
  const x = f.builders;
  const owner = await signerOf(f, x.owner);
  const attestor = await signerOf(f, x.attestor);
  const newAsset = await signerOf(f, x.newAsset);
  const v = new ValidationRegistryBuilder(ids);
  const capability = capabilityHash('kyc.tier-1.v1');
  const claim = {
    subject: address(x.subject),
    capability,
    payloadHash: new Uint8Array(32).fill(1),
    uriHash: new Uint8Array(32).fill(2),
    expiresAtSlot: 1_000_000n,
  };
  const got = [
    await v.registerNamespace(owner, 'trust-gate.example.v1', '1', 'https://schema.example/v1'),
    await v.registerAttestor(attestor, 'https://attestor.example'),
    await v.requestValidation(owner, address(x.subject), capability, new Uint8Array(32).fill(2), 500_000n),
    await ed25519Verify(attestor, attestationMessage(claim)),
    await v.respondToValidation(attestor, claim),
    await v.revokeValidation(attestor, address(x.subject), capability, new Uint8Array(32).fill(3)),
    await new Builder(ids).registerAgentViaCpi(owner, newAsset, address(x.collection), 'https://agent.example'),
    ...(await setAgentWallet(ids, owner.address, address(x.subject), attestor, 1_700_000_000n)),
    ...(await policyBuilders(x, owner, attestor)),
  ];
  assert.equal(got.length, x.instructions.length);
  got.forEach((ix, i) => assert.deepEqual(instructionJson(ix), x.instructions[i], `builder ${i}`));
  const r = await new Builder(ids).registrationAccounts(address(x.collection), newAsset.address);
  assert.deepEqual(Object.fromEntries(Object.entries(r).map(([k, a]) => [k, String(a)])), x.registrationAccounts);
});

/** The Rust fixture's policy builders (tests/tests/services/ts_x402.rs), with the same inputs. */
async function policyBuilders(x, owner, attestor) {
  const b = new Builder(ids);
  const asset = address(x.subject);
  const none = SYSTEM_PROGRAM;
  const params = {
    kinds: 3,
    gateMode: 1,
    mint: address(x.mint),
    perTxCap: 1n,
    dailyCap: 2n,
    weeklyCap: 3n,
    velocityWindowSecs: 0n,
    velocityMaxInWindow: 0n,
    tier0DecayBps: 0,
    minCounterpartyTier: 0,
    maxCounterpartyRisk: 255,
    minCounterpartyConfidence: 0,
    unratedTreatment: 1,
    requiredCapability: new Uint8Array(32),
    acceptedAttestors: [none, none],
    funding: 0,
  };
  // An approval of 42 to the service under policy 9, then its close.
  const terms = { payerAsset: asset, payeeAsset: address(x.service), mint: address(x.mint), amount: 42n, policyId: 9 };
  const rules = await b.payeeListRules(asset, 9, {
    payeeListMode: 1,
    payees: [address(x.service), none, none, none],
    payeeList: none,
    notBefore: 10n,
    notAfter: 20n,
    monthlyCap: 4n,
    lifetimeCap: 5n,
    payeeDailyCap: 6n,
  });
  return [
    await b.initPolicy(owner, [attestor], asset, 8, params),
    await b.initPolicy(owner, [attestor], asset, 9, params, rules, 7n),
    await b.editPayeeList(owner, [attestor], asset, 9, [address(x.service)], [address(x.removed)]),
    await b.approvePayment(owner, [attestor], terms, 1_800_000_000n),
    b.closeApproval(attestor, await b.pda.approval(terms), owner.address),
  ];
}

test('payment-channel and gated-channel builders equal the Rust SDK builders byte for byte', async () => {
  const x = f.channels;
  const payer = await signerOf(f, x.payer);
  const facilitator = await signerOf(f, x.facilitator);
  const authorizedSigner = await signerOf(f, x.authorizedSigner);
  const mint = address(x.mint);
  const hex = (b) => Buffer.from(b).toString('hex');
  const splits = x.splits.map((s) => ({ recipient: address(s.recipient), bps: s.bps }));
  const open = {
    payer,
    rentPayer: facilitator,
    payee: facilitator.address,
    mint,
    tokenProgram: TOKEN_PROGRAM,
    authorizedSigner: authorizedSigner.address,
    salt: 7n,
    deposit: 1_000_000n,
    gracePeriod: 600,
    openSlot: 123_456n,
    splits,
  };

  assert.equal(PAYMENT_CHANNELS_PROGRAM, x.programId);
  assert.equal(CHANNEL_TREASURY_OWNER, x.treasuryOwner);
  assert.equal(await channelEventAuthority(), x.eventAuthority);
  const [channel, bump] = await channelAddress(payer.address, facilitator.address, mint, authorizedSigner.address, 7n, 123_456n);
  assert.equal(channel, x.channel);
  assert.equal(bump, x.bump);
  assert.equal(await channelOf(open), x.channel);
  assert.equal(await escrowOf(open), x.escrow);
  assert.equal(await new Builder(ids).pda.channelRecord(channel), x.channelRecord);
  assert.equal(hex(channelPaymentIdHash(channel)), x.paymentIdHash);
  assert.equal(hex(distributionPreimage(splits)), x.distributionPreimage);
  assert.equal(hex(distributionHash(splits)), x.distributionHash);
  assert.equal(hex(voucherMessage(channel, 250_000n, 1_700_000_600n)), x.voucherMessage);

  const b = new Builder(ids);
  const record = getChannelRecordDecoder().decode(Buffer.from(x.record, 'hex'));
  assert.equal(record.channel, channel);
  const att = { payer: address(x.attestations.payer), payee: address(x.attestations.payee), payeeList: address(x.attestations.payeeList) };
  const gateOpen = (a) => b.gateChannelOpen(payer, address(x.payerAsset), address(x.service), facilitator, mint, 1_000_000n, x.policyId, channel, a);
  // The second voucher from a signature made outside the SDK, the first signed by it.
  const maxVoucher = voucherMessage(channel, 2n ** 64n - 1n, -1n);
  const signature = await signBytes(authorizedSigner.keyPair.privateKey, maxVoucher);
  const got = [
    await gateOpen(),
    await gateOpen(att),
    await openInstruction(open),
    await signVoucher(authorizedSigner, channel, 250_000n, 1_700_000_600n),
    voucherInstruction(authorizedSigner.address, signature, channel, 2n ** 64n - 1n, -1n),
    settleInstruction(channel),
    settleAndSealInstruction(facilitator, channel, true),
    settleAndSealInstruction(facilitator.address, channel, false),
    await topUpInstruction(payer.address, channel, mint, TOKEN_PROGRAM, 2n ** 64n - 2n),
    requestCloseInstruction(payer, channel),
    sealInstruction(channel),
    await distributeInstruction(await distributionOf(open)),
    await withdrawPayerInstruction(payer, channel, mint, TOKEN_2022_PROGRAM),
    reclaimInstruction(channel, facilitator.address),
    await b.gateChannelClose(record, address(x.collection), { score: 80, tag1: 'channel', tag2: 'x402', endpoint: 'https://api.example/v1', feedbackUri: 'https://feedback.example/1' }, facilitator),
    await b.closeChannelRecord(channel, facilitator.address),
  ];
  assert.equal(got.length, x.instructions.length);
  got.forEach((ix, i) => assert.deepEqual(instructionJson(ix), x.instructions[i], `channel builder ${i}`));
  // The signers given are attached to their accounts, for signing the transaction.
  assert.equal(got[2].accounts[0].signer, payer);
  assert.equal(got[14].accounts[0].signer, facilitator);
  assert.throws(() => voucherInstruction(authorizedSigner.address, signature.subarray(1), channel, 1n, 0n), /signature: 64 bytes/);
  await assert.rejects(b.gateChannelClose(record, address(x.collection), { score: 0, tag1: '', tag2: '', endpoint: '', feedbackUri: '' }, payer), /facilitator/);

  const data = Buffer.from(x.account, 'hex');
  const c = decodeChannel(data);
  assert.deepEqual(
    Object.fromEntries(Object.entries(c).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? hex(v) : v])),
    x.decoded,
  );
  assert.equal(decodeChannel(data.subarray(1)), null, 'a short account');
  const unknown = Buffer.from(data);
  unknown[3] = 4;
  assert.equal(decodeChannel(unknown), null, 'an unknown status');
  const version = Buffer.from(data);
  version[1] = 2;
  assert.equal(decodeChannel(version), null, 'another version');
});

test('a settlement and a gated channel open with an approval on chain equal the Rust SDK\'s byte for byte', async () => {
  const x = f.approvals;
  const b = new Builder(ids);
  const payer = await signerOf(f, x.payer);
  assert.ok(x.settlements.length >= 2);
  for (const [i, r] of x.settlements.entries()) {
    assert.equal(r.payerSigner, payer.address);
    const budget = r.computeBudget;
    const settlement = {
      facilitator: address(r.facilitator),
      payerSigner: payer,
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
      attestations: {},
      feedback: {
        paymentIdHash: Uint8Array.from(Buffer.from(r.paymentIdHash, 'hex')),
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
      approval: { address: address(r.approval.address), rentPayer: address(r.approval.rentPayer) },
    };
    assert.equal(await b.pda.approval(settlement), r.approval.address, `settlement ${i}: the approval of its terms`);
    const got = await compose(b, settlement, true);
    assert.equal(got.length, r.instructions.length, `settlement ${i}`);
    got.forEach((ix, j) => assert.deepEqual(instructionJson(ix), r.instructions[j], `settlement ${i} instruction ${j}`));
    // Another address than the terms' approval is refused by name.
    await assert.rejects(compose(b, { ...settlement, approval: { ...settlement.approval, address: address(x.member) } }, true), (e) => e.field === 'approval');
  }
  const o = x.gatedOpen;
  const facilitator = await signerOf(f, 'facilitator');
  const approval = { address: address(o.approval.address), rentPayer: address(o.approval.rentPayer) };
  const terms = { payerAsset: address(o.payerAsset), payeeAsset: address(o.payeeAsset), mint: address(o.mint), amount: BigInt(o.deposit), policyId: o.policyId };
  assert.equal(await b.pda.approval(terms), o.approval.address);
  const open = await b.gateChannelOpen(payer, terms.payerAsset, terms.payeeAsset, facilitator, terms.mint, terms.amount, terms.policyId, address(o.channel));
  assert.deepEqual(instructionJson(appendApproval(open, approval)), o.instruction);
});

async function funded() {
  const k = await generateKeyPairSigner();
  const sig = await rpc.requestAirdrop(k.address, 2_000_000_000n).send();
  for (let i = 0; i < 100; i++) {
    const [s] = (await rpc.getSignatureStatuses([sig]).send()).value;
    if (s?.confirmationStatus === 'confirmed' || s?.confirmationStatus === 'finalized') return k;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('airdrop not confirmed');
}

async function send(feePayer, ixs) {
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  return sendAndConfirm(rpc, await transaction(feePayer, ixs, [], lifetime));
}

/** The decision for tier 3 paying tier 0: the SDK's, checked equal to the Rust facilitator's. */
async function decideAsRust() {
  const q = {
    payerAgentAsset: f.world.payers.find((p) => p.name === 'payer-tier-3').asset,
    payeeAgentAsset: f.world.payers.find((p) => p.name === 'payer-tier-0').asset,
    amount: String(f.world.price),
    mint: f.world.mint,
    policyId: f.world.policyId,
  };
  const rust = await (await fetch(`${f.facilitatorUrl}/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(q) })).json();
  const ours = await gatePayment({
    rpc,
    caller: address(f.world.facilitator),
    payerAgentAsset: address(q.payerAgentAsset),
    payeeAgentAsset: address(q.payeeAgentAsset),
    amount: BigInt(q.amount),
    mint: address(q.mint),
    policyId: q.policyId,
  });
  assert.deepEqual(ours, rust.decision);
  return ours;
}

test('attestations: a new attestor attests (Ed25519-verified) and revokes in real transactions, and the SDK finds them as the Rust facilitator does', async () => {
  const attestor = await funded();
  const v = new ValidationRegistryBuilder(ids);
  await send(attestor, [await v.registerAttestor(attestor, 'https://attestor.example/ts')]);
  const capability = capabilityHash(f.world.namespaces[0]);
  const payer = address(f.world.payers.find((p) => p.name === 'payer-tier-3').asset);
  const payee = address(f.world.payers.find((p) => p.name === 'payer-tier-0').asset);
  // The tier-0 agent now accepts payers with that capability only, attested by `attestors`.
  const accept = async (attestors) => {
    const owner = await signerOf(f, 'payer-tier-0');
    const pda = new Builder(ids).pda;
    const ix = getSetAcceptancePolicyInstruction(
      {
        member: owner,
        authority: await pda.policyAuthority(payee),
        acceptance: await pda.acceptance(payee),
        systemProgram: SYSTEM_PROGRAM,
        agentAsset: payee,
        asset: payee,
        minPayerTier: 0,
        gateMode: 0,
        maxPayerRisk: 255,
        minPayerConfidence: 0,
        unratedTreatment: 1,
        requiredCapability: capability,
        acceptedAttestors: attestors,
        holdback: { maxShareBps: 0, maxHoldSecs: 0, arbiters: [SYSTEM_PROGRAM, SYSTEM_PROGRAM] },
      },
      { programAddress: ids.policyVault },
    );
    await send(attestor, [ix]);
  };
  await accept([attestor.address, SYSTEM_PROGRAM]);
  assert.notEqual((await decideAsRust()).kind, 'Allow', 'no attestation yet');

  const { value: slot } = { value: await rpc.getSlot().send() };
  const claim = {
    subject: payer,
    capability,
    payloadHash: createHash('sha256').update('claim').digest(),
    uriHash: createHash('sha256').update('https://claims.example/1').digest(),
    expiresAtSlot: slot + 1_000_000n,
  };
  await send(attestor, [await ed25519Verify(attestor, attestationMessage(claim)), await v.respondToValidation(attestor, claim)]);
  const key = await v.pda.attestation(payer, capability, attestor.address);
  const read = async () => {
    const { value } = await rpc.getAccountInfo(key, { encoding: 'base64', commitment: 'confirmed' }).send();
    return getValidationAttestationDecoder().decode(Buffer.from(value.data[0], 'base64'));
  };
  const a = await read();
  assert.equal(a.attestor, attestor.address);
  assert.equal(a.signatureVerified, true);
  assert.deepEqual(await decideAsRust(), { kind: 'Allow' }, 'the named attestor\'s attestation is found');
  await accept([SYSTEM_PROGRAM, SYSTEM_PROGRAM]);
  assert.deepEqual(await decideAsRust(), { kind: 'Allow' }, 'any attestor: found by the program-accounts scan');

  await send(attestor, [await v.revokeValidation(attestor, payer, capability, createHash('sha256').update('withdrawn').digest())]);
  assert.equal((await read()).revoked, true);
  assert.deepEqual(await decideAsRust(), { kind: 'Deny', reasonCode: 13, reasonName: 'AttestationRevoked' });
  await accept([attestor.address, SYSTEM_PROGRAM]);
  assert.deepEqual(await decideAsRust(), { kind: 'Deny', reasonCode: 13, reasonName: 'AttestationRevoked' });
});

test('loaders: the IDL on chain first, an explicit one over it, the bundled one as the fallback', async () => {
  for (const program of ['policyVault', 'gate', 'validationRegistry']) {
    const got = await loadIdl({ rpc, programIds: ids, program });
    assert.equal(got.source, 'chain', program);
    assert.deepEqual(got.idl, bundledIdl(program), `${program}: the published IDL is the bundled one`);
  }
  const mine = { address: 'x', metadata: { name: 'gate' } };
  assert.deepEqual(await loadIdl({ rpc, programIds: ids, program: 'gate', idl: mine }), { idl: mine, source: 'explicit' });
  // A program id with no IDL account: the bundled fallback, or the remediation when it is off.
  const elsewhere = { ...ids, gate: (await generateKeyPairSigner()).address };
  assert.equal((await loadIdl({ rpc, programIds: elsewhere, program: 'gate' })).source, 'bundled');
  await assert.rejects(loadIdl({ rpc, programIds: elsewhere, program: 'gate', allowBundled: false }), (e) => {
    assert.ok(e instanceof IdlMissingError);
    assert.match(e.message, /anchor idl init --filepath idl\/gate\.json/);
    assert.match(e.message, /the `idl` argument/);
    return true;
  });
});

test('reputation blocks read as the Rust SDK reads them, errors by their stable codes', async () => {
  assert.ok(f.reputations.some((r) => r.reputation) && f.reputations.some((r) => r.error));
  for (const r of f.reputations) {
    if (r.reputation) {
      assert.deepEqual(await engineReputation(rpc, ids, address(r.asset)), r.reputation, r.asset);
    } else {
      await assert.rejects(engineReputation(rpc, ids, address(r.asset)), (e) => e.code === r.error && e.message === r.message);
    }
  }
});
