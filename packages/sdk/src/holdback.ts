// The holdback as clients meet it (docs/holdback.md): the terms a settlement carries, and a
// held payment's share as its log records it. The Rust SDK's `trust_gate_client::holdback`
// (tests/tests/localnet/ts_sdk.rs holds the two to the same bytes).

import {
  address,
  fixDecoderSize,
  getAddressDecoder,
  getBytesDecoder,
  getI64Decoder,
  getStructDecoder,
  getU64Decoder,
  getU8Decoder,
  type Address,
  type ReadonlyUint8Array,
} from '@solana/kit';
import { FEEDBACK_LOG_DISCRIMINATOR, getFeedbackLogDecoder } from './generated/gate/accounts/index.js';

/**
 * The holdback a settlement carries under a payer policy with a holdback schedule (the Rust
 * SDK's `HoldbackQuote`): the payee tier its terms were quoted for and, when the term holds
 * back a share of this amount, that share and the escrow it goes to.
 */
export interface HoldbackQuote {
  /** 0..=4, or 5 for a payee without engine stats. */
  tier: number;
  /** The share held back, in the mint's units (0n: nothing at this amount; one transfer). */
  held: bigint;
  /** The payee's escrow in the payment's mint (`Pdas.holdbackEscrow`). */
  escrow: Address;
}

/** How long an arbiter has to decide a dispute of a held payment, from the dispute: 7 days. */
export const ARBITRATION_SECS = 604_800n;

/** Where a held share stands, by the gate's `HoldState` variant order (the byte in the log). */
export const HOLD_STATES = ['held', 'disputed', 'released', 'refunded', 'upheld', 'rejected', 'lapsed'] as const;
export type HoldStateName = (typeof HOLD_STATES)[number];

/** A held payment, as the moves of its share need it (the Rust SDK's `HeldPayment`). */
export interface HeldPayment {
  facilitator: Address;
  paymentIdHash: Uint8Array;
  payeeAsset: Address;
  payerWallet: Address;
  mint: Address;
  /** The escrow's token program. */
  tokenProgram: Address;
  escrow: Address;
  /** The payee's recipient at settlement: a share paid to the payee goes to a token account
   * of the mint it owns. */
  recipient: Address;
  /** A key, an arbiter set's address, or the default key (`11111111111111111111111111111111`) for none. */
  arbiter: Address;
  held: bigint;
  /** Unix seconds from which the share may be released. */
  holdUntil: bigint;
  state: HoldStateName;
  /** Whether the share is disputed (a move then answers the dispute's feedback). */
  disputed: boolean;
  /** Unix seconds the arbitration of its dispute ends (0 until disputed). */
  arbitrationEnds: bigint;
}

/** Where the held share starts in a log's data: right after the log's own 202 bytes. */
export const HELD_SHARE_AT = 202;
/** A held payment's log: the log, then its 193-byte held share. */
export const HELD_LOG_SIZE = 395;

/** The gate's `HeldShare`, in its Borsh layout. */
function heldShareDecoder() {
  return getStructDecoder([
    ['escrow', getAddressDecoder()],
    ['recipient', getAddressDecoder()],
    ['arbiter', getAddressDecoder()],
    ['payerOther', getAddressDecoder()],
    ['held', getU64Decoder()],
    ['holdUntil', getI64Decoder()],
    ['state', getU8Decoder()],
    ['arbitrationEnds', getI64Decoder()],
    ['disputeFeedbackIndex', getU64Decoder()],
    ['disputeSealHash', fixDecoderSize(getBytesDecoder(), 32)],
  ]);
}

/**
 * The held payment a payment log's account `data` records; null for anything else (a payment
 * that held nothing among them). `tokenProgram` is the escrow account's owner.
 */
export function heldPaymentFromLogData(data: ReadonlyUint8Array, tokenProgram: Address): HeldPayment | null {
  if (data.length < HELD_LOG_SIZE) return null;
  if (!FEEDBACK_LOG_DISCRIMINATOR.every((b, i) => data[i] === b)) return null;
  const log = getFeedbackLogDecoder().decode(data);
  const h = heldShareDecoder().decode(data, HELD_SHARE_AT);
  // Borsh refuses a variant byte past the enum's, and the Rust SDK then reads no share.
  const state = HOLD_STATES[h.state];
  if (state === undefined) return null;
  return {
    facilitator: log.facilitator,
    paymentIdHash: Uint8Array.from(log.paymentIdHash),
    payeeAsset: log.payeeAsset,
    payerWallet: log.payerWallet,
    mint: log.mint,
    tokenProgram,
    escrow: h.escrow,
    recipient: h.recipient,
    arbiter: h.arbiter,
    held: h.held,
    holdUntil: h.holdUntil,
    state,
    disputed: state === 'disputed',
    arbitrationEnds: h.arbitrationEnds,
  };
}

/**
 * Whether anyone may release `p`'s share at unix time `now` (`releaseHoldback`): its hold is
 * over, or the arbitration of its dispute ended undecided.
 */
export function releasableAt(p: HeldPayment, now: bigint): boolean {
  if (p.state === 'held') return now >= p.holdUntil;
  if (p.state === 'disputed') return now >= p.arbitrationEnds;
  return false;
}

/** The default key: a schedule without an arbiter names it. */
const NO_ARBITER = address('11111111111111111111111111111111');

/** A payment's held share as a receipt shows it (the Rust SDK's `HoldbackView`, JSON). */
export interface HoldbackView {
  /** The amount held back, base units (a decimal string). */
  held: string;
  escrow: Address;
  recipient: Address;
  /** A key or an arbiter set; null for none. */
  arbiter: Address | null;
  /** Unix seconds from which anyone may release it to the payee. */
  holdUntil: number;
  state: HoldStateName;
  /** Unix seconds the arbitration of its dispute ends; null until disputed. */
  arbitrationEnds: number | null;
}

/** The held share of a payment log's account `data` as a receipt shows it; null for a log that held nothing. */
export function holdbackViewFromLogData(data: ReadonlyUint8Array): HoldbackView | null {
  // The escrow's token program is not in the log; the view does not name it.
  const p = heldPaymentFromLogData(data, NO_ARBITER);
  if (!p) return null;
  return {
    held: p.held.toString(),
    escrow: p.escrow,
    recipient: p.recipient,
    arbiter: p.arbiter === NO_ARBITER ? null : p.arbiter,
    holdUntil: Number(p.holdUntil),
    state: p.state,
    arbitrationEnds: p.arbitrationEnds === 0n ? null : Number(p.arbitrationEnds),
  };
}
