// Reputation helpers: an agent's reputation block from the external engine's AtomStats
// account, read with the same canaries as the gate (owner, size, discriminator, schema
// version, tier range) and the Rust SDK's `decode::engine_reputation`.

import type { Address } from '@solana/kit';
import { account, type RawAccount, type TrustGateRpc } from './chain.js';
import type { ProgramIds } from './ids.js';
import { Pdas } from './pda.js';

/** The engine's reputation block of an agent. */
export interface EngineReputation {
  /** The tier the engine holds now, vested or not: the higher of the trust tier (byte 551,
   * which the real engine keeps equal to the confirmed tier) and the candidate tier (552).
   * Gate mode immediate compares it. */
  tierImmediate: number;
  tierConfirmed: number;
  /** 0..=255, lower is better. */
  riskScore: number;
  /** Basis points, 0..=10000. */
  confidence: number;
  schemaVersion: number;
}

/** Why a stats account is not a reputation block; `code` is the stable name tools report. */
export class ReputationError extends Error {
  constructor(
    readonly code: 'unrated' | 'wrong_owner' | 'size_mismatch' | 'schema_mismatch',
    message: string,
  ) {
    super(message);
    this.name = 'ReputationError';
  }
}

/** The engine's AtomStats layout (as `programs/common`'s `atom_stats`). */
export const ATOM_STATS = {
  len: 561,
  discriminator: [190, 187, 50, 59, 203, 39, 136, 244],
  riskScore: 549,
  tierImmediate: 551,
  tierCandidate: 552,
  tierConfirmed: 555,
  confidence: 557,
  schemaVersion: 560,
  supportedSchema: 1,
  maxTier: 4,
} as const;

/** Reads an AtomStats account (null: none); throws ReputationError when it is not usable. */
export function decodeReputation(engine: Address, acc: RawAccount | null): EngineReputation {
  const s = ATOM_STATS;
  if (!acc || acc.lamports === 0n || acc.data.length === 0) {
    throw new ReputationError('unrated', 'no stats account: the agent is unrated');
  }
  if (acc.owner !== engine) {
    throw new ReputationError('wrong_owner', `the stats account is owned by ${acc.owner}, not the reputation engine ${engine}`);
  }
  const d = acc.data;
  if (d.length !== s.len) throw new ReputationError('size_mismatch', `the stats account is ${d.length} bytes, expected ${s.len}`);
  if (!s.discriminator.every((b, i) => d[i] === b)) throw new ReputationError('schema_mismatch', 'schema mismatch: not an AtomStats discriminator');
  const schemaVersion = d[s.schemaVersion];
  if (schemaVersion !== s.supportedSchema) {
    throw new ReputationError('schema_mismatch', `schema mismatch: schema version ${schemaVersion}, expected ${s.supportedSchema}`);
  }
  const [trust, candidate, tierConfirmed] = [d[s.tierImmediate], d[s.tierCandidate], d[s.tierConfirmed]];
  if (trust > s.maxTier || candidate > s.maxTier || tierConfirmed > s.maxTier) {
    throw new ReputationError(
      'schema_mismatch',
      `schema mismatch: tier out of range 0..=${s.maxTier}: trust ${trust}, candidate ${candidate}, confirmed ${tierConfirmed}`,
    );
  }
  return {
    tierImmediate: Math.max(trust, candidate),
    tierConfirmed,
    riskScore: d[s.riskScore],
    confidence: d[s.confidence] | (d[s.confidence + 1] << 8),
    schemaVersion,
  };
}

/** An agent's reputation from the engine; throws ReputationError (`unrated`, ...). */
export async function engineReputation(rpc: TrustGateRpc, ids: ProgramIds, asset: Address): Promise<EngineReputation> {
  return decodeReputation(ids.reputationEngine, await account(rpc, await new Pdas(ids).atomStats(asset)));
}
