// The compute-unit limit a settlement asks for: the Rust SDK's `trust_gate_client::units`,
// the same measurements and the same sum (tests/tests/localnet/ts_sdk.rs holds the two to the
// same numbers).
//
// The block scheduler reserves the limit a transaction requests before running it (200 000
// per instruction without a ComputeBudget limit, 600 000 for a settlement), and all the
// settlements of one payee share 12 000 000 units a block: a limit just above what the
// settlement uses is what lets a payee be paid often. Below its use a transaction fails.

import { getAddressEncoder, getProgramDerivedAddress, type Address, type ReadonlyUint8Array } from '@solana/kit';
import { TOKEN_2022_PROGRAM, type Funding, type TokenProgramId } from './chain.js';
import type { ProgramIds } from './ids.js';
import { SEEDS } from './pda.js';

/** One more bump tried by an on-chain PDA search. */
export const PDA_TRY = 340;
/** Our programs' part of a settlement when every search succeeds at bump 255. */
export const OURS_WALLET = 28_500;
export const OURS_VAULT = 34_500;
/** A vault's release: the token program's TransferChecked inside the settlement. */
export const RELEASE = 6_200;
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

/** What a settlement's compute units depend on. */
export interface SettlementShape {
  funding: Funding;
  tokenProgram: TokenProgramId;
  /** The payee has engine stats, so the registry's give_feedback calls the engine. */
  payeeRated: boolean;
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
  const registry = shape.payeeRated ? REGISTRY_RATED : REGISTRY_UNRATED;
  const tries = await extraBumpTries(shape, ids);
  const all = tries.reduce((a, b) => a + b, 0);
  return ours + transfer + registry + PDA_TRY * all + REGISTRY_PDA_TRY * tries[1] + MARGIN;
}
