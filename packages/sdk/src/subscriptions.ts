// Solana's Subscriptions & Allowances program (program v0.4.0), the recurring delegations a
// gated subscription pulls (docs/subscriptions.md): its id, its addresses, a
// `RecurringDelegation` as the gate reads it, a pull's payment id, and the instructions a
// delegator sends to it directly, byte for byte as the Rust SDK's `subscriptions` module
// builds them. The gate's own instructions (`subscribe`, `gate_pull`, `unsubscribe`) are
// `Builder`'s.
//
// The program is Pinocchio: one-byte instruction tags, packed little-endian data, one-byte
// account discriminators.

import { createHash } from 'node:crypto';
import {
  AccountRole,
  address,
  getAddressDecoder,
  getAddressEncoder,
  getI64Encoder,
  getProgramDerivedAddress,
  getU64Encoder,
  mergeBytes,
  type AccountMeta,
  type Address,
  type Instruction,
  type ReadonlyUint8Array,
} from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { SYSTEM_PROGRAM, type TokenProgramId } from './chain.js';
import { TrustGateInputError } from './errors.js';
import type { SubscribeInstructionData } from './generated/gate/instructions/index.js';
import { addressOf, canSign, type SignerLike } from './signer.js';

/** The program's id (mainnet and devnet alike). */
export const SUBSCRIPTIONS_PROGRAM = address('De1egAFMkMWZSN5rYXRj9CAdheBamobVNubTsi9avR44');
/** Its event authority, the PDA `["event_authority"]` its event self-CPI names. */
export const SUBSCRIPTIONS_EVENT_AUTHORITY = address('3Hnj4BYoDgtpBuqXfiy7Y8cNa3jXaNd4oqgSXBzkMcH7');

/** The instruction tags (the first data byte). */
export const SUBSCRIPTION_TAGS = {
  initSubscriptionAuthority: 0,
  createRecurringDelegation: 2,
  revokeDelegation: 3,
  transferRecurring: 5,
  closeSubscriptionAuthority: 6,
  revokeSubscriptionAuthority: 14,
} as const;

/** The program's refusals (`Custom(n)`) of a recurring pull, in the order it checks them. */
export const SUBSCRIPTION_ERRORS = {
  /** The SubscriptionAuthority is not open (closed, or not at its PDA). */
  invalidSubscriptionAuthorityPda: 103,
  /** The delegator's token account is not its associated token account. */
  invalidAssociatedTokenAccount: 108,
  /** `now > expiry_ts`. */
  delegationExpired: 128,
  invalidAmount: 129,
  /** Another delegator or delegatee than the delegation's. */
  unauthorized: 130,
  /** The SubscriptionAuthority was closed and initialized again in a later slot. */
  staleSubscriptionAuthority: 136,
  /** More than what is left of the period's amount. */
  amountExceedsPeriodLimit: 400,
  /** Before the delegation's start. */
  delegationNotStarted: 407,
} as const;

/** The longest period a recurring delegation may have (365 days). */
export const MAX_PERIOD_SECS = 31_536_000n;
/** A `RecurringDelegation` account's size. */
export const RECURRING_DELEGATION_LEN = 211;
/** A `SubscriptionAuthority` account's size. */
export const SUBSCRIPTION_AUTHORITY_LEN = 106;

/** The account discriminators (the first byte). */
const DISCRIMINATOR = { subscriptionAuthority: 0, recurringDelegation: 3 } as const;
const PULL_ID_DOMAIN = 'trust-gate:pull:';
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

const text = (s: string) => new TextEncoder().encode(s);
const key = (a: Address) => getAddressEncoder().encode(a);
const u64 = (v: bigint) => getU64Encoder().encode(v);
const i64 = (v: bigint) => getI64Encoder().encode(v);
const bytes = (...parts: (ReadonlyUint8Array | number[])[]) => mergeBytes(parts.map((p) => Uint8Array.from(p)));

const writable = (a: Address): AccountMeta => ({ address: a, role: AccountRole.WRITABLE });
const readonly = (a: Address): AccountMeta => ({ address: a, role: AccountRole.READONLY });
/** A signing account: the signer itself is attached when one was given. */
function signing(s: SignerLike, isWritable: boolean): AccountMeta {
  const role = isWritable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER;
  return canSign(s) ? ({ address: s.address, role, signer: s } as AccountMeta) : { address: s, role };
}

function ix(accounts: AccountMeta[], data: Uint8Array): Instruction {
  return { programAddress: SUBSCRIPTIONS_PROGRAM, accounts, data };
}

async function find(seeds: ReadonlyUint8Array[]): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({ programAddress: SUBSCRIPTIONS_PROGRAM, seeds });
  return pda;
}

/** `["SubscriptionAuthority", user, mint]`: the user's one SPL delegate for the mint. */
export async function subscriptionAuthorityAddress(user: Address, mint: Address): Promise<Address> {
  return find([text('SubscriptionAuthority'), key(user), key(mint)]);
}

/**
 * `["delegation", subscription_authority, delegator, delegatee, nonce u64 LE]`: a delegation
 * of `delegator`'s authority for `mint` to `delegatee`.
 */
export async function delegationAddress(delegator: Address, mint: Address, delegatee: Address, nonce: bigint): Promise<Address> {
  const authority = await subscriptionAuthorityAddress(delegator, mint);
  return find([text('delegation'), key(authority), key(delegator), key(delegatee), u64(nonce)]);
}

/** The delegator's associated token account of the mint: the one its authority is the delegate of, which pulls debit. */
export async function delegatorToken(delegator: Address, mint: Address, tokenProgram: TokenProgramId): Promise<Address> {
  return (await findAssociatedTokenPda({ owner: delegator, mint, tokenProgram }))[0];
}

/**
 * The terms of a recurring delegation, as `create_recurring_delegation` and the gate's
 * `subscribe` take them (the Rust SDK's `RecurringTerms`).
 */
export type RecurringTerms = Pick<SubscribeInstructionData, 'nonce' | 'amountPerPeriod' | 'periodLengthS' | 'startTs' | 'expiryTs'>;

/** A `RecurringDelegation` account, read (amounts and times as bigints). */
export interface RecurringDelegation {
  delegator: Address;
  delegatee: Address;
  /** Who paid its rent (and gets it back when it is revoked). */
  payer: Address;
  /** The SubscriptionAuthority's `init_id` when the delegation was created. */
  initId: bigint;
  subscriptionAuthority: Address;
  mint: Address;
  currentPeriodStartTs: bigint;
  periodLengthS: bigint;
  /** 0: never. */
  expiryTs: bigint;
  amountPerPeriod: bigint;
  amountPulledInPeriod: bigint;
}

/**
 * A `RecurringDelegation`'s data (211 bytes: at 0 the discriminator 3, 1 the version, 2 the
 * bump, then the fields at the offsets below); null for anything else (the caller checks the
 * owning program).
 */
export function decodeRecurringDelegation(data: ReadonlyUint8Array): RecurringDelegation | null {
  if (data.length !== RECURRING_DELEGATION_LEN || data[0] !== DISCRIMINATOR.recurringDelegation) return null;
  const b = Buffer.from(data);
  const keyAt = (at: number) => getAddressDecoder().decode(b.subarray(at, at + 32));
  return {
    delegator: keyAt(3),
    delegatee: keyAt(35),
    payer: keyAt(67),
    initId: b.readBigInt64LE(99),
    subscriptionAuthority: keyAt(107),
    mint: keyAt(139),
    currentPeriodStartTs: b.readBigInt64LE(171),
    periodLengthS: b.readBigUInt64LE(179),
    expiryTs: b.readBigInt64LE(187),
    amountPerPeriod: b.readBigUInt64LE(195),
    amountPulledInPeriod: b.readBigUInt64LE(203),
  };
}

/** A `SubscriptionAuthority` account, read. */
export interface SubscriptionAuthority {
  user: Address;
  mint: Address;
  payer: Address;
  /** The slot it was initialized in: delegations made under another `init_id` are stale. */
  initId: bigint;
}

/**
 * A `SubscriptionAuthority`'s data (106 bytes: 0 discriminator 0, 1 user, 33 mint, 65 payer,
 * 97 bump, 98 init_id); null for anything else. Its `initId` is what
 * `createRecurringDelegationInstruction` consents to.
 */
export function decodeSubscriptionAuthority(data: ReadonlyUint8Array): SubscriptionAuthority | null {
  if (data.length !== SUBSCRIPTION_AUTHORITY_LEN || data[0] !== DISCRIMINATOR.subscriptionAuthority) return null;
  const b = Buffer.from(data);
  const keyAt = (at: number) => getAddressDecoder().decode(b.subarray(at, at + 32));
  return { user: keyAt(1), mint: keyAt(33), payer: keyAt(65), initId: b.readBigInt64LE(98) };
}

/** The period a pull counts in: its start (unix seconds) and what was already pulled in it. */
export interface RecurringPeriod {
  start: bigint;
  pulled: bigint;
}

/** `v` clamped to i64, as Rust's saturating arithmetic leaves it. */
const saturating = (v: bigint) => (v < I64_MIN ? I64_MIN : v > I64_MAX ? I64_MAX : v);

/**
 * The period a pull at `now` (unix seconds) counts in, as the program rolls it over: its
 * start and what was pulled in it (nothing when a new period began since the last pull).
 * With an expiry, the period never moves to a start at or after it: the last one before it
 * is the last billed. The Rust SDK's `RecurringDelegation::period_at`, in i64 arithmetic.
 */
export function periodAt(d: RecurringDelegation, now: bigint): RecurringPeriod {
  const start = d.currentPeriodStartTs;
  // The Rust SDK's bounds: a length past i64 counts as i64::MAX, and a zero length as one
  // second (no division by zero).
  const length = d.periodLengthS > I64_MAX ? I64_MAX : d.periodLengthS < 1n ? 1n : d.periodLengthS;
  const since = saturating(now - start);
  if (since < length) return { start, pulled: d.amountPulledInPeriod };
  const moved = saturating(start + (since / length) * length);
  if (d.expiryTs === 0n || moved < d.expiryTs) return { start: moved, pulled: 0n };
  // BigInt division truncates toward zero, as Rust's does.
  const beforeExpiry = saturating(saturating(d.expiryTs - 1n) - start);
  const last = saturating(start + (beforeExpiry / length) * length);
  return last > start ? { start: last, pulled: 0n } : { start, pulled: d.amountPulledInPeriod };
}

/** What may still be pulled in the period `now` falls in. */
export function availableAt(d: RecurringDelegation, now: bigint): bigint {
  const left = d.amountPerPeriod - periodAt(d, now).pulled;
  return left > 0n ? left : 0n;
}

/**
 * The payment id of a gated pull, its receipt's key (the gate's
 * `subscription::payment_id_hash`): `sha256("trust-gate:pull:" ‖ delegation ‖
 * current_period_start_ts i64 LE ‖ amount_pulled_in_period u64 LE)`, as the delegation
 * (at `delegation`) holds them before the pull. Every pull moves them forward, so a pull
 * built from one reading of the delegation lands once.
 */
export function pullPaymentIdHash(
  delegation: Address,
  d: Pick<RecurringDelegation, 'currentPeriodStartTs' | 'amountPulledInPeriod'>,
): Uint8Array {
  return Uint8Array.from(
    createHash('sha256')
      .update(PULL_ID_DOMAIN)
      .update(Uint8Array.from(key(delegation)))
      .update(Uint8Array.from(i64(d.currentPeriodStartTs)))
      .update(Uint8Array.from(u64(d.amountPulledInPeriod)))
      .digest(),
  );
}

/**
 * `create_recurring_delegation`'s data (49 bytes): the tag, the terms and the
 * SubscriptionAuthority `init_id` the delegator consents to.
 */
export function createRecurringDelegationData(terms: RecurringTerms, initId: bigint): Uint8Array {
  return bytes(
    [SUBSCRIPTION_TAGS.createRecurringDelegation],
    u64(terms.nonce),
    u64(terms.amountPerPeriod),
    u64(terms.periodLengthS),
    i64(terms.startTs),
    i64(terms.expiryTs),
    i64(initId),
  );
}

/** `transfer_recurring`'s data (73 bytes): the tag, the amount, the delegator and the mint. */
export function transferRecurringData(amount: bigint, delegator: Address, mint: Address): Uint8Array {
  return bytes([SUBSCRIPTION_TAGS.transferRecurring], u64(amount), key(delegator), key(mint));
}

/**
 * `initialize_subscription_authority`: creates (or, when it exists, refreshes the SPL
 * approval of) `user`'s authority for `mint`; the user signs and pays its rent.
 */
export async function initSubscriptionAuthorityInstruction(
  user: SignerLike,
  mint: Address,
  tokenProgram: TokenProgramId,
): Promise<Instruction> {
  const u = addressOf(user);
  const [authority, token] = await Promise.all([subscriptionAuthorityAddress(u, mint), delegatorToken(u, mint, tokenProgram)]);
  return ix(
    [signing(user, true), writable(authority), readonly(mint), writable(token), readonly(SYSTEM_PROGRAM), readonly(tokenProgram)],
    Uint8Array.of(SUBSCRIPTION_TAGS.initSubscriptionAuthority),
  );
}

/**
 * `create_recurring_delegation` of `terms` to `delegatee`, under the authority's `initId`
 * (`decodeSubscriptionAuthority`); the delegator signs and pays its rent.
 */
export async function createRecurringDelegationInstruction(
  delegator: SignerLike,
  mint: Address,
  delegatee: Address,
  terms: RecurringTerms,
  initId: bigint,
): Promise<Instruction> {
  const d = addressOf(delegator);
  const [authority, delegation] = await Promise.all([
    subscriptionAuthorityAddress(d, mint),
    delegationAddress(d, mint, delegatee, terms.nonce),
  ]);
  return ix(
    [signing(delegator, true), readonly(authority), writable(delegation), readonly(delegatee), readonly(SYSTEM_PROGRAM)],
    createRecurringDelegationData(terms, initId),
  );
}

/**
 * `transfer_recurring` of `amount` from `d`'s delegator to `receiver`, signed by `d`'s
 * delegatee (pass its signer as `delegatee`, else its signature slot is left empty). A gated
 * subscription's delegatee is the gate's PDA: pull it with `Builder.gatePull`.
 */
export async function transferRecurringInstruction(
  delegation: Address,
  d: RecurringDelegation,
  receiver: Address,
  tokenProgram: TokenProgramId,
  amount: bigint,
  delegatee: SignerLike = d.delegatee,
): Promise<Instruction> {
  if (addressOf(delegatee) !== d.delegatee) {
    throw new TrustGateInputError('delegatee', `is not the delegation's delegatee ${d.delegatee}`);
  }
  return ix(
    [
      writable(delegation),
      readonly(d.subscriptionAuthority),
      writable(await delegatorToken(d.delegator, d.mint, tokenProgram)),
      writable(receiver),
      readonly(d.mint),
      readonly(tokenProgram),
      signing(delegatee, false),
      readonly(SUBSCRIPTIONS_EVENT_AUTHORITY),
      readonly(SUBSCRIPTIONS_PROGRAM),
    ],
    transferRecurringData(amount, d.delegator, d.mint),
  );
}

/** `revoke_delegation`: the delegator closes a delegation, its rent back to it. */
export function revokeDelegationInstruction(delegator: SignerLike, delegation: Address): Instruction {
  return ix([signing(delegator, true), writable(delegation)], Uint8Array.of(SUBSCRIPTION_TAGS.revokeDelegation));
}

/**
 * `revoke_subscription_authority`: clears the authority's SPL approval on `user`'s associated
 * token account and closes it (its rent back to the user, who paid it): every delegation
 * under it stops.
 */
export async function revokeSubscriptionAuthorityInstruction(
  user: SignerLike,
  mint: Address,
  tokenProgram: TokenProgramId,
): Promise<Instruction> {
  const u = addressOf(user);
  const [token, authority] = await Promise.all([delegatorToken(u, mint, tokenProgram), subscriptionAuthorityAddress(u, mint)]);
  return ix(
    [signing(user, true), writable(token), readonly(mint), readonly(tokenProgram), writable(authority)],
    Uint8Array.of(SUBSCRIPTION_TAGS.revokeSubscriptionAuthority),
  );
}

/**
 * `close_subscription_authority`: closes `user`'s authority for `mint` (its rent back to the
 * user, who paid it), leaving the SPL approval in place.
 */
export async function closeSubscriptionAuthorityInstruction(user: SignerLike, mint: Address): Promise<Instruction> {
  return ix(
    [signing(user, true), writable(await subscriptionAuthorityAddress(addressOf(user), mint))],
    Uint8Array.of(SUBSCRIPTION_TAGS.closeSubscriptionAuthority),
  );
}
