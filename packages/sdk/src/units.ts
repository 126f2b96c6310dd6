// The compute-unit limit a settlement asks for: the Rust SDK's `trust_gate_client::units`,
// the same measurements and the same sum (tests/tests/localnet/ts_sdk.rs holds the two to the
// same numbers).
//
// The block scheduler reserves the limit a transaction requests before running it (200 000
// per instruction without a ComputeBudget limit, 600 000 for a settlement), and all the
// settlements of one payee share 12 000 000 units a block: a limit just above what the
// settlement uses is what lets a payee be paid often. Below its use a transaction fails.
//
// The registry's and engine's part was measured on builds of theirs that are not the
// deployed ones, so a client with an RPC sizes its limit by simulating the settlement
// (measureUnits, then limitForUse); settlementUnitLimit keeps a margin in proportion to that
// external part for a client without one.

import {
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getProgramDerivedAddress,
  type Address,
  type Instruction,
  type ReadonlyUint8Array,
  type Transaction,
} from '@solana/kit';
import { TOKEN_2022_PROGRAM, type Funding, type LookupTable, type TokenProgramId, type TrustGateRpc } from './chain.js';
import { TransactionFailedError } from './errors.js';
import type { ProgramIds } from './ids.js';
import { compileV0Message } from './message.js';
import { SEEDS } from './pda.js';

/** One more bump tried by an on-chain PDA search. */
export const PDA_TRY = 340;
/**
 * Our programs' part of a settlement when every search succeeds at bump 255, the largest shape
 * measured (a policy with every limit included); the Rust SDK's `units` has the same figures.
 */
export const OURS_WALLET = 25_400;
export const OURS_VAULT = 28_900;
/** A vault's release: the token program's TransferChecked inside the settlement. */
export const RELEASE = 6_200;
/**
 * What holding a share back adds to our part (the second transfer's checks, the terms in the
 * decision, the accounts emit_feedback reads, the longer log). The held share's own
 * TransferChecked is counted as the payment's.
 */
export const HELD = 4_000;
/** The payment's TransferChecked, by token program. */
export const TRANSFER_SPL_TOKEN = 6_200;
export const TRANSFER_TOKEN_2022 = 3_000;
/** The registry's give_feedback when its own search for the payee's stats succeeds at bump
 * 255: for a payee without engine stats, and with them (the engine's update_stats included). */
export const REGISTRY_UNRATED = 24_000;
export const REGISTRY_RATED = 54_500;
/** One more bump tried by the registry's own search for the payee's stats (the runtime's
 * find_program_address). */
export const REGISTRY_PDA_TRY = 1_550;
/** Headroom for what varies with the data rather than the shape. */
export const MARGIN = 4_000;
/** Headroom on the registry's and engine's measured part, in percent, for builds of theirs
 * that cost more than the ones measured. */
export const EXTERNAL_HEADROOM_PERCENT = 15;
/** The most a transaction may ask for: what a settlement is simulated with. */
export const MAX_UNIT_LIMIT = 1_400_000;
/** Headroom on a simulated use: a tenth, at least this much. */
export const MIN_SIMULATED_HEADROOM = 2_000;

/** What a settlement's compute units depend on. */
export interface SettlementShape {
  funding: Funding;
  tokenProgram: TokenProgramId;
  /** The payee has engine stats, so the registry's give_feedback calls the engine. */
  payeeRated: boolean;
  /** A share is held back: a second TransferChecked, to the payee's escrow. */
  held: boolean;
  /** The keys that fix the PDA searches' bumps. */
  payerAsset: Address;
  payeeAsset: Address;
  facilitator: Address;
  paymentIdHash: ReadonlyUint8Array;
}

const text = (s: string) => new TextEncoder().encode(s);
const key = (a: Address) => getAddressEncoder().encode(a);

/** The bumps past the first that the settlement's PDA searches try, in this order: the payer's
 * engine stats, the payee's (which the registry searches for too), the payee's acceptance
 * policy, the feedback log. */
export async function extraBumpTries(shape: SettlementShape, ids: ProgramIds): Promise<number[]> {
  const searches: [Address, ReadonlyUint8Array[]][] = [
    [ids.reputationEngine, [text(SEEDS.atomStats), key(shape.payerAsset)]],
    [ids.reputationEngine, [text(SEEDS.atomStats), key(shape.payeeAsset)]],
    [ids.policyVault, [text(SEEDS.acceptance), key(shape.payeeAsset)]],
    [ids.gate, [text(SEEDS.feedbackLog), key(shape.facilitator), shape.paymentIdHash]],
  ];
  const tries: number[] = [];
  for (const [programAddress, seeds] of searches) {
    const [, bump] = await getProgramDerivedAddress({ programAddress, seeds });
    tries.push(255 - bump);
  }
  return tries;
}

/** The compute-unit limit for a settlement of this shape: what it uses at most. */
export async function settlementUnitLimit(shape: SettlementShape, ids: ProgramIds): Promise<number> {
  const ours = shape.funding === 'vault' ? OURS_VAULT + RELEASE : OURS_WALLET;
  const transfer = shape.tokenProgram === TOKEN_2022_PROGRAM ? TRANSFER_TOKEN_2022 : TRANSFER_SPL_TOKEN;
  const measured = shape.payeeRated ? REGISTRY_RATED : REGISTRY_UNRATED;
  const registry = measured + Math.floor((measured * EXTERNAL_HEADROOM_PERCENT) / 100);
  const [mine, transfers] = shape.held ? [ours + HELD, transfer * 2] : [ours, transfer];
  const tries = await extraBumpTries(shape, ids);
  const all = tries.reduce((a, b) => a + b, 0);
  return mine + transfers + registry + PDA_TRY * all + REGISTRY_PDA_TRY * tries[1] + MARGIN;
}

/** The limit to ask for a settlement that a simulation saw use `used` units: a tenth more, at
 * least MIN_SIMULATED_HEADROOM, rounded up to a thousand, at most MAX_UNIT_LIMIT (the Rust
 * SDK's `units::limit_for_use`). */
export function limitForUse(used: bigint | number): number {
  const u = BigInt(used);
  const tenth = u / 10n;
  const headroom = tenth > BigInt(MIN_SIMULATED_HEADROOM) ? tenth : BigInt(MIN_SIMULATED_HEADROOM);
  const limit = ((u + headroom + 999n) / 1_000n) * 1_000n;
  return limit > BigInt(MAX_UNIT_LIMIT) ? MAX_UNIT_LIMIT : Number(limit);
}

/** The compute units the settlement `ixs` (composed with a unit limit of MAX_UNIT_LIMIT, or
 * none) uses, by one simulation paid by `feePayer` with its lookup `tables`: unsigned, on the
 * cluster's latest blockhash, nothing charged. Throws TransactionFailedError when the
 * simulation fails (the settlement would fail too). */
export async function measureUnits(
  rpc: TrustGateRpc,
  feePayer: Address,
  ixs: readonly Instruction[],
  tables: readonly LookupTable[],
): Promise<bigint> {
  const compiled = compileV0Message(feePayer, ixs, tables, '11111111111111111111111111111111');
  const signatures = Object.fromEntries(compiled.signers.map((a) => [a, null]));
  const tx = { messageBytes: compiled.bytes, signatures } as unknown as Transaction;
  const sim = (
    await rpc
      .simulateTransaction(getBase64EncodedWireTransaction(tx), {
        encoding: 'base64',
        sigVerify: false,
        replaceRecentBlockhash: true,
        commitment: 'confirmed',
      })
      .send()
  ).value;
  if (sim.err) throw new TransactionFailedError('settlement simulation', sim.err, sim.logs ?? []);
  if (sim.unitsConsumed === undefined || sim.unitsConsumed === null) {
    throw new Error('simulateTransaction: no unitsConsumed in the answer');
  }
  return BigInt(sim.unitsConsumed);
}
