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
