// The external agent registry's instructions that trust-gate's tools send to it, in the real
// registry's format (the localnet's stand-in takes the same), as the Rust SDK's
// `instructions::registry`: setting an agent wallet, which the new wallet proves it holds by
// signing a message checked by the Ed25519 precompile in the instruction right before.

import { AccountRole, getAddressEncoder, type Address, type Instruction, type KeyPairSigner } from '@solana/kit';
import type { ProgramIds } from './ids.js';
import { INSTRUCTIONS_SYSVAR } from './instructions.js';
import { Pdas } from './pda.js';
import { ed25519Verify } from './validation-registry.js';

/** `global:set_agent_wallet`. */
const SET_AGENT_WALLET = [154, 87, 251, 23, 51, 12, 4, 150];

/** The domain prefix of the message an agent wallet signs. */
export const WALLET_SET_PREFIX = new TextEncoder().encode('8004_WALLET_SET:');

/** How far ahead of the cluster's clock the signed deadline may be, in seconds. */
export const MAX_WALLET_DEADLINE_SECS = 300n;

const i64le = (v: bigint) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, v, true);
  return b;
};

/** What the new wallet signs: the prefix, the asset, the wallet, the owner sending the
 * instruction and the deadline (unix seconds, i64 little-endian): 120 bytes. */
export function walletSetMessage(asset: Address, wallet: Address, owner: Address, deadline: bigint): Uint8Array {
  const enc = getAddressEncoder();
  const parts = [WALLET_SET_PREFIX, enc.encode(asset), enc.encode(wallet), enc.encode(owner), i64le(deadline)];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Sets `wallet` as the agent wallet of `asset`: the Ed25519 check of the wallet's signature
 * over {@link walletSetMessage}, then the registry's `set_agent_wallet(wallet, deadline)`,
 * signed by `owner` (the asset's owner). Send both, in this order, in one transaction, before
 * `deadline` and at most {@link MAX_WALLET_DEADLINE_SECS} before it by the cluster's clock.
 */
export async function setAgentWallet(
  ids: ProgramIds,
  owner: Address,
  asset: Address,
  wallet: KeyPairSigner,
  deadline: bigint,
): Promise<[Instruction, Instruction]> {
  const message = walletSetMessage(asset, wallet.address, owner, deadline);
  const data = new Uint8Array([...SET_AGENT_WALLET, ...getAddressEncoder().encode(wallet.address), ...i64le(deadline)]);
  return [
    await ed25519Verify(wallet, message),
    {
      programAddress: ids.agentRegistry,
      accounts: [
        { address: owner, role: AccountRole.READONLY_SIGNER },
        { address: await new Pdas(ids).agentAccount(asset), role: AccountRole.WRITABLE },
        { address: asset, role: AccountRole.READONLY },
        { address: INSTRUCTIONS_SYSVAR, role: AccountRole.READONLY },
      ],
      data,
    },
  ];
}
