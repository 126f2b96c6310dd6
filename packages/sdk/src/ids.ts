// Program ids per network, as the Rust SDK's `ProgramIds::for_network` gives them.

import { address, type Address } from '@solana/kit';
import { GATE_PROGRAM_ADDRESS } from './generated/gate/programs/index.js';
import { POLICY_VAULT_PROGRAM_ADDRESS } from './generated/policy_vault/programs/index.js';
import { VALIDATION_REGISTRY_PROGRAM_ADDRESS } from './generated/validation_registry/programs/index.js';

export type Network = 'solana-localnet' | 'solana-devnet' | 'solana-mainnet';

/** The programs trust-gate talks to. */
export interface ProgramIds {
  policyVault: Address;
  gate: Address;
  validationRegistry: Address;
  /** The external agent registry. */
  agentRegistry: Address;
  /** The external reputation engine. */
  reputationEngine: Address;
}

/** On mainnet trust-gate's own programs have no default id: the system program stands in. */
export const SENTINEL = address('11111111111111111111111111111111');

const DEVNET_AGENT_REGISTRY = address('8oo4J9tBB3Hna1jRQ3rWvJjojqM5DYTDJo5cejUuJy3C');
const DEVNET_REPUTATION_ENGINE = address('AToMufS4QD6hEXvcvBDg9m1AHeCLpmZQsyfYa5h9MwAF');
const MAINNET_AGENT_REGISTRY = address('8oo4dC4JvBLwy5tGgiH3WwK4B9PWxL9Z4XjA2jzkQMbQ');
const MAINNET_REPUTATION_ENGINE = address('AToMw53aiPQ8j7iHVb4fGt6nzUNxUhcPc3tbPBZuzVVb');

/** The default ids of `network` (the localnet's stand-ins sit at the devnet ids). */
export function programIds(network: Network): ProgramIds {
  if (network === 'solana-mainnet') {
    return {
      policyVault: SENTINEL,
      gate: SENTINEL,
      validationRegistry: SENTINEL,
      agentRegistry: MAINNET_AGENT_REGISTRY,
      reputationEngine: MAINNET_REPUTATION_ENGINE,
    };
  }
  return {
    policyVault: POLICY_VAULT_PROGRAM_ADDRESS,
    gate: GATE_PROGRAM_ADDRESS,
    validationRegistry: VALIDATION_REGISTRY_PROGRAM_ADDRESS,
    agentRegistry: DEVNET_AGENT_REGISTRY,
    reputationEngine: DEVNET_REPUTATION_ENGINE,
  };
}

/** The variable that overrides each of trust-gate's program ids (as the Rust SDK names them). */
export const PROGRAM_ID_VARIABLES = {
  policyVault: 'POLICY_VAULT_PROGRAM_ID',
  gate: 'GATE_PROGRAM_ID',
  validationRegistry: 'VALIDATION_REGISTRY_PROGRAM_ID',
} as const;

/**
 * Refuses the mainnet sentinel: trust-gate's programs have no default mainnet id, so a call
 * that needs one must be given it (the external registry and engine ids are real everywhere).
 */
export function requireProgramIds(ids: ProgramIds, programs: (keyof typeof PROGRAM_ID_VARIABLES)[]): ProgramIds {
  for (const p of programs) {
    if (ids[p] === SENTINEL) {
      throw new Error(`programIds.${p}: no id is configured on this network (the mainnet sentinel); pass programIds.${p} or set ${PROGRAM_ID_VARIABLES[p]}`);
    }
  }
  return ids;
}
