// Solana's payment-channels program, the program behind x402's `upto` and
// `batch-settlement` schemes on Solana: its id, a channel's address and account layout, its
// vouchers and its instructions' wire format, byte for byte as the Rust SDK's `channels`
// module builds them.
//
// A channel's life: the payer `open`s it with a deposit (escrowed in the channel's associated
// token account) and a distribution (who gets the settled amount, in basis points; the payee
// gets the rest); the authorized signer signs cumulative vouchers off chain; anyone `settle`s
// the latest one (an Ed25519 precompile instruction right before it); the payee
// `settle_and_seal`s it (or the payer `request_close`s, and after the grace period anyone
// `seal`s); anyone `distribute`s a sealed channel; anyone `reclaim`s what is left once the
// open slot is old.

import { createHash } from 'node:crypto';
import {
  AccountRole,
  address,
  getAddressDecoder,
  getAddressEncoder,
  getProgramDerivedAddress,
  signBytes,
  type AccountMeta,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type ProgramDerivedAddress,
  type ReadonlyUint8Array,
} from '@solana/kit';
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda } from '@solana-program/token';
import { INSTRUCTIONS_SYSVAR, SYSTEM_PROGRAM, type TokenProgramId } from './chain.js';
import { ed25519Instruction } from './ed25519.js';
import { TrustGateInputError } from './errors.js';
import { addressOf, canSign, type SignerLike } from './signer.js';

/** The program's id (mainnet and devnet). */
export const PAYMENT_CHANNELS_PROGRAM = address('CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX');
/** The owner of the treasury token accounts that receive rounding dust and forfeited shares. */
export const CHANNEL_TREASURY_OWNER = address('Cs2zdfUNonRdRGsiZUQQLdTxzxVvJZmgiX2mpLYKuEqP');
/** `open` takes an `openSlot` at most this many slots old; `reclaim` waits until it is older. */
export const CHANNEL_OPEN_SLOT_WINDOW = 1_500n;
/** A channel account's size. */
export const CHANNEL_LEN = 256;
/** Basis points of a whole distribution. */
export const CHANNEL_ALL_BPS = 10_000;
/** Most recipients a distribution may name. */
export const CHANNEL_MAX_RECIPIENTS = 32;

/** The instruction tags (the first data byte). */
export const CHANNEL_TAGS = {
  open: 1,
  settle: 2,
  topUp: 3,
  settleAndSeal: 4,
  requestClose: 5,
  seal: 6,
  distribute: 7,
  withdrawPayer: 8,
  reclaim: 9,
} as const;

/** The program's own errors (`Custom(n)`) that callers act on. */
export const CHANNEL_ERRORS = {
  invalidChannelStatus: 2,
  voucherWatermarkNotMonotonic: 234,
  voucherOverDeposit: 235,
  voucherSignerMismatch: 237,
  channelCloseTooEarly: 2414,
} as const;

const RENT_SYSVAR_ID = address('SysvarRent111111111111111111111111111111111');
const PAYMENT_ID_DOMAIN = 'trust-gate:channel:';

const key = (a: Address) => getAddressEncoder().encode(a);
const u16 = (v: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return b;
};
const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
};
const u64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
};
const i64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(v);
  return b;
};
const bytes = (...parts: (Uint8Array | ReadonlyUint8Array | number[])[]) =>
  Uint8Array.from(Buffer.concat(parts.map((p) => Uint8Array.from(p))));

const writable = (a: Address): AccountMeta => ({ address: a, role: AccountRole.WRITABLE });
const readonly = (a: Address): AccountMeta => ({ address: a, role: AccountRole.READONLY });
/** A signing account: the signer itself is attached when one was given. */
function signing(s: SignerLike, isWritable: boolean): AccountMeta {
  const role = isWritable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER;
  return canSign(s) ? ({ address: s.address, role, signer: s } as AccountMeta) : { address: s, role };
}

function ix(accounts: AccountMeta[], data: Uint8Array): Instruction {
  return { programAddress: PAYMENT_CHANNELS_PROGRAM, accounts, data };
}

async function ata(owner: Address, mint: Address, tokenProgram: TokenProgramId): Promise<Address> {
  return (await findAssociatedTokenPda({ owner, mint, tokenProgram }))[0];
}

/** The program's event-authority PDA (`["event_authority"]`), which `open` and `distribute` take. */
export async function channelEventAuthority(): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: PAYMENT_CHANNELS_PROGRAM,
    seeds: [new TextEncoder().encode('event_authority')],
  });
  return pda;
}

/**
 * A channel's address and bump: `["channel", payer, payee, mint, authorized_signer, salt,
 * open_slot]` (integers u64 little-endian). The open slot gives every opening a new address.
 */
export async function channelAddress(
  payer: Address,
  payee: Address,
  mint: Address,
  authorizedSigner: Address,
  salt: bigint,
  openSlot: bigint,
): Promise<ProgramDerivedAddress> {
  return getProgramDerivedAddress({
    programAddress: PAYMENT_CHANNELS_PROGRAM,
    seeds: [new TextEncoder().encode('channel'), key(payer), key(payee), key(mint), key(authorizedSigner), u64(salt), u64(openSlot)],
  });
}

/** One share of a distribution: `bps` of the settled amount to `recipient`'s associated token account. */
export interface Split {
  recipient: Address;
  /** Basis points, 0..=10 000 (u16). */
  bps: number;
}

/** The distribution as the program hashes and parses it: a u32 count, then per share the recipient and its basis points (u16), little-endian. */
export function distributionPreimage(splits: readonly Split[]): Uint8Array {
  return bytes(u32(splits.length), ...splits.flatMap((s) => [key(s.recipient), u16(s.bps)]));
}

/** What a channel stores of its distribution: the SHA-256 of `distributionPreimage`. */
export function distributionHash(splits: readonly Split[]): Uint8Array {
  return Uint8Array.from(createHash('sha256').update(distributionPreimage(splits)).digest());
}

/** An `open`: who, what and how much, with the distribution. */
export interface OpenChannel {
  /** Signs; the deposit comes from its associated token account, refunds go back there. */
  payer: SignerLike;
  /** Signs; pays the channel's and the escrow's rent, and gets it back. */
  rentPayer: SignerLike;
  /** Seals the channel; gets what the shares leave. */
  payee: Address;
  mint: Address;
  tokenProgram: TokenProgramId;
  /** The key whose vouchers the channel accepts. */
  authorizedSigner: Address;
  salt: bigint;
  deposit: bigint;
  /** Seconds between the payer's `request_close` and the moment anyone may `seal` (u32). */
  gracePeriod: number;
  /** A recent slot (at most `CHANNEL_OPEN_SLOT_WINDOW` old): part of the address. */
  openSlot: bigint;
  splits: readonly Split[];
}

/** The channel `o` opens. */
export async function channelOf(o: OpenChannel): Promise<Address> {
  const [channel] = await channelAddress(addressOf(o.payer), o.payee, o.mint, o.authorizedSigner, o.salt, o.openSlot);
  return channel;
}

/** The escrow of the channel `o` opens: the channel's associated token account. */
export async function escrowOf(o: OpenChannel): Promise<Address> {
  return ata(await channelOf(o), o.mint, o.tokenProgram);
}

/** The `open` instruction (14 accounts, as the program's IDL lists them). */
export async function openInstruction(o: OpenChannel): Promise<Instruction> {
  const payer = addressOf(o.payer);
  const channel = await channelOf(o);
  const [payerToken, escrow, eventAuthority] = await Promise.all([
    ata(payer, o.mint, o.tokenProgram),
    ata(channel, o.mint, o.tokenProgram),
    channelEventAuthority(),
  ]);
  const data = bytes(
    [CHANNEL_TAGS.open],
    u64(o.salt),
    u64(o.deposit),
    u32(o.gracePeriod),
    u64(o.openSlot),
    distributionPreimage(o.splits),
  );
  return ix(
    [
      signing(o.payer, true),
      signing(o.rentPayer, true),
      readonly(o.payee),
      readonly(o.mint),
      readonly(o.authorizedSigner),
      writable(channel),
      writable(payerToken),
      writable(escrow),
      readonly(o.tokenProgram),
      readonly(SYSTEM_PROGRAM),
      readonly(RENT_SYSVAR_ID),
      readonly(ASSOCIATED_TOKEN_PROGRAM_ADDRESS),
      readonly(eventAuthority),
      readonly(PAYMENT_CHANNELS_PROGRAM),
    ],
    data,
  );
}

/**
 * The 50 bytes a voucher signs: `0x56 0x01`, the channel, the cumulative amount (u64) and its
 * expiry (unix seconds, i64; 0 = none), little-endian.
 */
export function voucherMessage(channel: Address, cumulative: bigint, expiresAt: bigint): Uint8Array {
  return bytes([0x56, 0x01], key(channel), u64(cumulative), i64(expiresAt));
}

/**
 * The voucher as the program reads it: the Ed25519 precompile instruction (one signature, its
 * key, signature and message inline) that must come right before `settle` or
 * `settleAndSeal(…, true)`. `signature` is `authorizedSigner`'s 64-byte signature of
 * `voucherMessage(channel, cumulative, expiresAt)`.
 */
export function voucherInstruction(
  authorizedSigner: Address,
  signature: ReadonlyUint8Array,
  channel: Address,
  cumulative: bigint,
  expiresAt: bigint,
): Instruction {
  return ed25519Instruction(authorizedSigner, signature, voucherMessage(channel, cumulative, expiresAt));
}

/** Signs a voucher with the authorized signer's key pair and returns its Ed25519 precompile instruction. */
export async function signVoucher(signer: KeyPairSigner, channel: Address, cumulative: bigint, expiresAt: bigint): Promise<Instruction> {
  const signature = await signBytes(signer.keyPair.privateKey, voucherMessage(channel, cumulative, expiresAt));
  return voucherInstruction(signer.address, signature, channel, cumulative, expiresAt);
}

/** Applies the voucher before it (permissionless): the channel's settled amount becomes its cumulative amount. */
export function settleInstruction(channel: Address): Instruction {
  return ix([writable(channel), readonly(INSTRUCTIONS_SYSVAR)], Uint8Array.of(CHANNEL_TAGS.settle));
}

/** The payee seals the channel, applying the voucher before it when `withVoucher`. */
export function settleAndSealInstruction(payee: SignerLike, channel: Address, withVoucher: boolean): Instruction {
  return ix(
    [signing(payee, false), writable(channel), readonly(INSTRUCTIONS_SYSVAR)],
    Uint8Array.of(CHANNEL_TAGS.settleAndSeal, withVoucher ? 1 : 0),
  );
}

/** The payer adds `amount` to the deposit. */
export async function topUpInstruction(
  payer: SignerLike,
  channel: Address,
  mint: Address,
  tokenProgram: TokenProgramId,
  amount: bigint,
): Promise<Instruction> {
  const [payerToken, escrow] = await Promise.all([ata(addressOf(payer), mint, tokenProgram), ata(channel, mint, tokenProgram)]);
  return ix(
    [signing(payer, true), writable(channel), writable(payerToken), writable(escrow), readonly(mint), readonly(tokenProgram)],
    bytes([CHANNEL_TAGS.topUp], u64(amount)),
  );
}

/** The payer starts the grace period after which anyone may `seal`. */
export function requestCloseInstruction(payer: SignerLike, channel: Address): Instruction {
  return ix([signing(payer, false), writable(channel)], Uint8Array.of(CHANNEL_TAGS.requestClose));
}

/** Seals a closing channel once its grace period has passed (permissionless). */
export function sealInstruction(channel: Address): Instruction {
  return ix([writable(channel)], Uint8Array.of(CHANNEL_TAGS.seal));
}

/** A `distribute` of a channel (permissionless): its parties, and the distribution it was opened with (the program compares its hash). */
export interface DistributeChannel {
  channel: Address;
  payer: Address;
  rentPayer: Address;
  payee: Address;
  mint: Address;
  tokenProgram: TokenProgramId;
  splits: readonly Split[];
}

/** The parties of the channel `o` opens. */
export async function distributionOf(o: OpenChannel): Promise<DistributeChannel> {
  return {
    channel: await channelOf(o),
    payer: addressOf(o.payer),
    rentPayer: addressOf(o.rentPayer),
    payee: o.payee,
    mint: o.mint,
    tokenProgram: o.tokenProgram,
    splits: [...o.splits],
  };
}

/** Pays a sealed channel out: the recipients, then the payee, the payer the rest; the rent back to the rent payer. */
export async function distributeInstruction(d: DistributeChannel): Promise<Instruction> {
  const of = (owner: Address) => ata(owner, d.mint, d.tokenProgram);
  const [escrow, payerToken, payeeToken, treasuryToken, eventAuthority, ...recipients] = await Promise.all([
    of(d.channel),
    of(d.payer),
    of(d.payee),
    of(CHANNEL_TREASURY_OWNER),
    channelEventAuthority(),
    ...d.splits.map((s) => of(s.recipient)),
  ]);
  return ix(
    [
      writable(d.channel),
      writable(d.payer),
      writable(d.rentPayer),
      writable(escrow),
      writable(payerToken),
      writable(payeeToken),
      writable(treasuryToken),
      readonly(d.mint),
      readonly(d.tokenProgram),
      readonly(eventAuthority),
      readonly(PAYMENT_CHANNELS_PROGRAM),
      ...recipients.map(writable),
    ],
    bytes([CHANNEL_TAGS.distribute], distributionPreimage(d.splits)),
  );
}

/** The payer takes the unsettled deposit of a sealed channel back before it is distributed. */
export async function withdrawPayerInstruction(
  payer: SignerLike,
  channel: Address,
  mint: Address,
  tokenProgram: TokenProgramId,
): Promise<Instruction> {
  const [escrow, payerToken] = await Promise.all([ata(channel, mint, tokenProgram), ata(addressOf(payer), mint, tokenProgram)]);
  return ix(
    [signing(payer, false), writable(channel), writable(escrow), writable(payerToken), readonly(mint), readonly(tokenProgram)],
    Uint8Array.of(CHANNEL_TAGS.withdrawPayer),
  );
}

/** Closes a distributed channel whose open slot is old, its lamports to the rent payer (permissionless). */
export function reclaimInstruction(channel: Address, rentPayer: Address): Instruction {
  return ix([writable(channel), writable(rentPayer)], Uint8Array.of(CHANNEL_TAGS.reclaim));
}

/** Where a channel is in its life. */
export type ChannelStatus = 'Open' | 'Sealed' | 'Closing' | 'Distributed';
const STATUSES: readonly ChannelStatus[] = ['Open', 'Sealed', 'Closing', 'Distributed'];

/** A channel account, read. */
export interface ChannelAccount {
  bump: number;
  status: ChannelStatus;
  salt: bigint;
  deposit: bigint;
  /** The cumulative amount of the latest voucher applied. */
  settled: bigint;
  /** How much of `settled` has been paid out. */
  payoutWatermark: bigint;
  closureStartedAt: bigint;
  payerWithdrawnAt: bigint;
  gracePeriod: number;
  distributionHash: Uint8Array;
  payer: Address;
  payee: Address;
  authorizedSigner: Address;
  mint: Address;
  rentPayer: Address;
  openSlot: bigint;
}

/** A channel account's data (256 bytes, version 1); null for anything else. */
export function decodeChannel(data: ReadonlyUint8Array): ChannelAccount | null {
  if (data.length !== CHANNEL_LEN || data[0] !== 1 || data[1] !== 1) return null;
  const status = STATUSES[data[3]];
  if (status === undefined) return null;
  const b = Buffer.from(data);
  const keyAt = (at: number) => getAddressDecoder().decode(b.subarray(at, at + 32));
  return {
    bump: b[2],
    status,
    salt: b.readBigUInt64LE(4),
    deposit: b.readBigUInt64LE(12),
    settled: b.readBigUInt64LE(20),
    payoutWatermark: b.readBigUInt64LE(28),
    closureStartedAt: b.readBigInt64LE(36),
    payerWithdrawnAt: b.readBigInt64LE(44),
    gracePeriod: b.readUInt32LE(52),
    distributionHash: Uint8Array.from(b.subarray(56, 88)),
    payer: keyAt(88),
    payee: keyAt(120),
    authorizedSigner: keyAt(152),
    mint: keyAt(184),
    rentPayer: keyAt(216),
    openSlot: b.readBigUInt64LE(248),
  };
}

/**
 * The payment id of a gated channel's receipt (its FeedbackLog, which `disputePayment` and
 * `closePaymentRecords` take as a payment's): `sha256("trust-gate:channel:" ‖ channel)`.
 */
export function channelPaymentIdHash(channel: Address): Uint8Array {
  return Uint8Array.from(createHash('sha256').update(PAYMENT_ID_DOMAIN).update(Uint8Array.from(key(channel))).digest());
}
