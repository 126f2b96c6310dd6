// Pure parts of the Subscriptions module, no chain needed: a RecurringDelegation and a
// SubscriptionAuthority read at the program's offsets, the period a pull counts in (the Rust
// SDK's unit test of `period_at`, and its edges), the instruction data, a pull's payment id,
// and the builders' refusals of a signer that is not the account's. The same builders against
// the Rust SDK's, byte for byte: test/pda.test.mjs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { generateKeyPairSigner, getAddressEncoder, getProgramDerivedAddress } from '@solana/kit';
import {
  availableAt,
  Builder,
  createRecurringDelegationData,
  decodeRecurringDelegation,
  decodeSubscriptionAuthority,
  periodAt,
  programIds,
  pullPaymentIdHash,
  RECURRING_DELEGATION_LEN,
  SUBSCRIPTION_AUTHORITY_LEN,
  SUBSCRIPTIONS_EVENT_AUTHORITY,
  SUBSCRIPTIONS_PROGRAM,
  TOKEN_PROGRAM,
  transferRecurringData,
  transferRecurringInstruction,
} from '../dist/index.js';

const isInput = (field) => (e) => e.name === 'TrustGateInputError' && e.field === field;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const U64_MAX = 2n ** 64n - 1n;
const le64 = (v) => {
  const b = Buffer.alloc(8);
  v < 0n ? b.writeBigInt64LE(v) : b.writeBigUInt64LE(v);
  return b;
};

async function keys(n) {
  return Promise.all(Array.from({ length: n }, async () => (await generateKeyPairSigner()).address));
}

/** A delegation as the Rust unit test's `delegation(start, length, pulled)`. */
async function delegation(start, length, pulled) {
  const [delegator, delegatee, payer, subscriptionAuthority, mint] = await keys(5);
  return {
    delegator,
    delegatee,
    payer,
    initId: 7n,
    subscriptionAuthority,
    mint,
    currentPeriodStartTs: start,
    periodLengthS: length,
    expiryTs: 0n,
    amountPerPeriod: 100n,
    amountPulledInPeriod: pulled,
  };
}

/** `d`'s account data, written at the program's offsets (the Rust unit test's layout). */
function delegationBytes(d) {
  const data = Buffer.alloc(RECURRING_DELEGATION_LEN);
  data[0] = 3;
  const put = (at, bytes) => Buffer.from(bytes).copy(data, at);
  const enc = getAddressEncoder();
  put(3, enc.encode(d.delegator));
  put(35, enc.encode(d.delegatee));
  put(67, enc.encode(d.payer));
  put(99, le64(d.initId));
  put(107, enc.encode(d.subscriptionAuthority));
  put(139, enc.encode(d.mint));
  put(171, le64(d.currentPeriodStartTs));
  put(179, le64(d.periodLengthS));
  put(187, le64(d.expiryTs));
  put(195, le64(d.amountPerPeriod));
  put(203, le64(d.amountPulledInPeriod));
  return data;
}

const period = (start, pulled) => ({ start, pulled });

test('the event authority is the program\'s ["event_authority"] PDA', async () => {
  const [pda] = await getProgramDerivedAddress({ programAddress: SUBSCRIPTIONS_PROGRAM, seeds: [new TextEncoder().encode('event_authority')] });
  assert.equal(SUBSCRIPTIONS_EVENT_AUTHORITY, pda);
});

test('a delegation is read at the program\'s offsets; another discriminator or size is none', async () => {
  // Amounts past 2^53 and negative times, so that a sign or a precision slip shows.
  const d = { ...(await delegation(-1_000n, U64_MAX, 2n ** 60n + 1n)), initId: I64_MIN, expiryTs: I64_MAX, amountPerPeriod: 2n ** 63n };
  const data = delegationBytes(d);
  assert.deepEqual(decodeRecurringDelegation(data), d);
  const other = Buffer.from(data);
  other[0] = 2;
  assert.equal(decodeRecurringDelegation(other), null);
  assert.equal(decodeRecurringDelegation(data.subarray(0, 210)), null);
  assert.equal(decodeRecurringDelegation(Buffer.concat([data, Buffer.alloc(1)])), null);
});

test('a subscription authority is read at the program\'s offsets; another discriminator or size is none', async () => {
  const [user, mint, payer] = await keys(3);
  const data = Buffer.alloc(SUBSCRIPTION_AUTHORITY_LEN);
  const enc = getAddressEncoder();
  Buffer.from(enc.encode(user)).copy(data, 1);
  Buffer.from(enc.encode(mint)).copy(data, 33);
  Buffer.from(enc.encode(payer)).copy(data, 65);
  data[97] = 254; // the bump
  le64(345_678_901n).copy(data, 98);
  assert.deepEqual(decodeSubscriptionAuthority(data), { user, mint, payer, initId: 345_678_901n });
  const other = Buffer.from(data);
  other[0] = 3;
  assert.equal(decodeSubscriptionAuthority(other), null);
  assert.equal(decodeSubscriptionAuthority(data.subarray(1)), null);
});

test('the period rolls over as the program rolls it (the Rust unit test)', async () => {
  const d = await delegation(1_000n, 100n, 60n);
  assert.deepEqual(periodAt(d, 1_000n), period(1_000n, 60n));
  assert.deepEqual(periodAt(d, 1_099n), period(1_000n, 60n));
  assert.equal(availableAt(d, 1_099n), 40n);
  assert.deepEqual(periodAt(d, 1_100n), period(1_100n, 0n));
  assert.deepEqual(periodAt(d, 1_350n), period(1_300n, 0n));
  assert.equal(availableAt(d, 1_350n), 100n);
  // With an expiry at 1 250, the last period billed starts at 1 200.
  assert.deepEqual(periodAt({ ...d, expiryTs: 1_250n }, 1_300n), period(1_200n, 0n));
  assert.deepEqual(periodAt({ ...d, expiryTs: 1_100n }, 1_100n), period(1_000n, 60n));
});

test('the period at its edges: before the start, a zero or huge length, the ends of i64, more pulled than allowed', async () => {
  const d = await delegation(1_000n, 100n, 60n);
  assert.deepEqual(periodAt(d, 0n), period(1_000n, 60n), 'before the start: the current period');
  assert.deepEqual(periodAt(d, I64_MIN), period(1_000n, 60n), 'now - start saturates');
  assert.deepEqual(periodAt(d, I64_MAX), period(1_000n + ((I64_MAX - 1_000n) / 100n) * 100n, 0n));
  // A zero length counts as one second; a length past i64 as i64::MAX.
  assert.deepEqual(periodAt({ ...d, periodLengthS: 0n }, 1_005n), period(1_005n, 0n));
  assert.deepEqual(periodAt({ ...d, periodLengthS: U64_MAX }, I64_MAX), period(1_000n, 60n));
  assert.deepEqual(periodAt({ ...d, currentPeriodStartTs: -1n, periodLengthS: U64_MAX }, I64_MAX), period(I64_MAX - 1n, 0n));
  // An expiry at or before the start keeps the current period (nothing later is billed).
  assert.deepEqual(periodAt({ ...d, expiryTs: 900n }, 1_500n), period(1_000n, 60n));
  assert.deepEqual(periodAt({ ...d, expiryTs: 1_101n }, 1_500n), period(1_100n, 0n));
  // An expiry at the far end of i64 saturates as the Rust SDK's arithmetic does.
  assert.deepEqual(periodAt({ ...d, expiryTs: I64_MIN }, 1_100n), period(1_000n, 60n));
  assert.deepEqual(periodAt({ ...d, expiryTs: I64_MIN + 1n }, 1_100n), period(1_000n, 60n));
  assert.equal(availableAt({ ...d, amountPulledInPeriod: 150n }, 1_050n), 0n, 'never below nothing');
});

test('instruction data is packed little-endian (the Rust unit test)', async () => {
  const terms = { nonce: 1n, amountPerPeriod: 2n, periodLengthS: 3n, startTs: 4n, expiryTs: 5n };
  const data = createRecurringDelegationData(terms, -6n);
  assert.equal(data.length, 49);
  assert.equal(data[0], 2);
  assert.deepEqual(Buffer.from(data), Buffer.concat([Buffer.of(2), ...[1n, 2n, 3n, 4n, 5n, -6n].map(le64)]));
  const [d, m] = await keys(2);
  const t = transferRecurringData(9n, d, m);
  assert.equal(t.length, 73);
  const enc = getAddressEncoder();
  assert.deepEqual(Buffer.from(t), Buffer.concat([Buffer.of(5), le64(9n), Buffer.from(enc.encode(d)), Buffer.from(enc.encode(m))]));
  assert.throws(() => transferRecurringData(-1n, d, m), /./, 'an amount below u64 is refused');
});

test('a pull\'s payment id is sha256 of the domain, the delegation and the period\'s state before it', async () => {
  const [address] = await keys(1);
  const d = { currentPeriodStartTs: -2n, amountPulledInPeriod: 2n ** 64n - 1n };
  const want = createHash('sha256')
    .update('trust-gate:pull:')
    .update(getAddressEncoder().encode(address))
    .update(le64(-2n))
    .update(le64(2n ** 64n - 1n))
    .digest();
  assert.deepEqual(Buffer.from(pullPaymentIdHash(address, d)), want);
  // Each pull moves the state on, so its next pull has another id.
  assert.notDeepEqual(pullPaymentIdHash(address, { ...d, amountPulledInPeriod: 0n }), pullPaymentIdHash(address, d));
});

test('a builder refuses a signer that is not the account\'s, by name, and attaches the one that is', async () => {
  const b = new Builder(programIds('solana-localnet'));
  const d = await delegation(1_000n, 100n, 0n);
  const [payerAsset, payeeAsset, collection, destination] = await keys(4);
  const [stranger, facilitator, delegator] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner()]);
  const record = { payerAsset, payeeAsset, facilitator: facilitator.address, delegation: d.subscriptionAuthority, delegator: delegator.address, policyId: 1 };
  const feedback = { score: 90, tag1: '', tag2: '', endpoint: '', feedbackUri: '' };
  const pull = (signer) => b.gatePull(record, d, destination, TOKEN_PROGRAM, collection, 1n, feedback, {}, signer);
  await assert.rejects(pull(stranger), isInput('facilitator'));
  assert.equal((await pull(facilitator)).accounts[11].signer, facilitator);
  await assert.rejects(b.unsubscribe(record, stranger), isInput('delegator'));
  assert.equal((await b.unsubscribe(record, delegator)).accounts[0].signer, delegator);
  await assert.rejects(transferRecurringInstruction(record.delegation, d, destination, TOKEN_PROGRAM, 1n, stranger), isInput('delegatee'));
});
