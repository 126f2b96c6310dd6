//! The real registry's and engine's one-time and admin instructions: only their upgrade
//! authority (the registry's `initialize`, the engine's `initialize_config`) or the engine's
//! config authority (`update_config`) may send them, so only a chain where we hold those keys
//! (the localnet, the tests) ever does. Data and accounts as the programs' IDLs
//! (`shared/fixtures/8004/idl`) give them.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
use solana_loader_v3_interface::get_program_data_address;
use trust_gate_program_common::external::{
    atom_config_pda, ids, registry_config_pda, root_config_pda,
};

const INITIALIZE: [u8; 8] = [175, 175, 109, 31, 13, 152, 155, 237];
const INITIALIZE_CONFIG: [u8; 8] = [208, 127, 21, 1, 194, 190, 196, 70];
const UPDATE_CONFIG: [u8; 8] = [29, 158, 252, 191, 10, 83, 219, 99];

/// Registry `initialize`: creates RootConfig, RegistryConfig and the base collection (an MPL
/// Core collection whose update authority is RegistryConfig). `authority` must be the
/// registry's upgrade authority; `collection` is a fresh keypair that signs.
pub fn initialize_registry(authority: &Pubkey, collection: &Pubkey) -> Instruction {
    Instruction {
        program_id: ids::AGENT_REGISTRY,
        accounts: vec![
            AccountMeta::new(root_config_pda().0, false),
            AccountMeta::new(registry_config_pda(collection).0, false),
            AccountMeta::new(*collection, true),
            AccountMeta::new(*authority, true),
            AccountMeta::new_readonly(get_program_data_address(&ids::AGENT_REGISTRY), false),
            AccountMeta::new_readonly(system_program::ID, false),
            AccountMeta::new_readonly(ids::MPL_CORE, false),
        ],
        data: INITIALIZE.to_vec(),
    }
}

/// Engine `initialize_config(agent_registry_program)`: creates AtomConfig, whose authority
/// becomes `authority` (the engine's upgrade authority), and names the registry whose CPI
/// authority alone may update stats.
pub fn initialize_engine(authority: &Pubkey) -> Instruction {
    let mut data = INITIALIZE_CONFIG.to_vec();
    data.extend_from_slice(ids::AGENT_REGISTRY.as_ref());
    Instruction {
        program_id: ids::REPUTATION_ENGINE,
        accounts: vec![
            AccountMeta::new(*authority, true),
            AccountMeta::new(atom_config_pda().0, false),
            AccountMeta::new_readonly(get_program_data_address(&ids::REPUTATION_ENGINE), false),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data,
    }
}

/// Engine `update_config` that only pauses or resumes it (fourteen `None`s, then
/// `Some(paused)`): while paused, every `update_stats`, so every registry feedback to an agent
/// with stats, fails. `authority` is AtomConfig's authority.
pub fn set_engine_paused(authority: &Pubkey, paused: bool) -> Instruction {
    let mut data = UPDATE_CONFIG.to_vec();
    data.extend_from_slice(&[0; 14]);
    data.extend_from_slice(&[1, paused as u8]);
    Instruction {
        program_id: ids::REPUTATION_ENGINE,
        accounts: vec![
            AccountMeta::new_readonly(*authority, true),
            AccountMeta::new(atom_config_pda().0, false),
        ],
        data,
    }
}
