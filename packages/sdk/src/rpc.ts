// Where a call reads the chain and which program ids it uses.

import { createSolanaRpc } from '@solana/kit';
import type { TrustGateRpc } from './chain.js';
import { programIds, type Network, type ProgramIds } from './ids.js';

/** How a call reaches the cluster: an RPC URL or a @solana/kit RPC client, and the ids. */
export interface Connection {
  /** The cluster's JSON-RPC URL (ignored when `rpc` is given). */
  rpcUrl?: string;
  rpc?: TrustGateRpc;
  /** The network whose default ids apply (default `solana-devnet`, whose ids the localnet shares). */
  network?: Network;
  /** Explicit ids; any id given here wins over the network's default. */
  programIds?: Partial<ProgramIds>;
}

export function rpcOf(c: Connection): TrustGateRpc {
  if (c.rpc) return c.rpc;
  if (!c.rpcUrl) throw new Error('rpcUrl: missing (or pass rpc, a @solana/kit RPC client)');
  return createSolanaRpc(c.rpcUrl);
}

/** The ids a call uses: the network's defaults, with `programIds` over them. */
export function idsOf(c: Connection): ProgramIds {
  return { ...programIds(c.network ?? 'solana-devnet'), ...(c.programIds ?? {}) } as ProgramIds;
}
