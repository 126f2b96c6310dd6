//! Instruction builders for the registry and engine stand-ins.
//!
//! `register_with_options`, `initialize_stats`, `give_feedback` and `append_response` are
//! byte-compatible with the real programs' instructions; the others exist only on the
//! localnet.

use super::layout::{args, discriminators};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::{instruction::Instruction, system_program};
use trust_gate_program_common::external::{
    agent_account_pda, atom_config_pda,
    atom_stats::Stats,
    atom_stats_pda, ids,
    instructions::{
        append_response_data, give_feedback_data, initialize_stats_data,
        register_with_options_data, AppendResponseArgs, GiveFeedbackArgs, RegisterWithOptionsArgs,
    },
    registry_config_pda, registry_cpi_authority_pda, root_config_pda,
};

fn data(discriminator: [u8; 8], args: &impl AnchorSerialize) -> Vec<u8> {
    let mut data = discriminator.to_vec();
    // Writing into a Vec cannot fail.
    args.serialize(&mut data).expect("serialize into Vec");
    data
}

/// The client hash the registry forwards to the engine: keccak256 of the client's key.
pub fn client_hash(client: &Pubkey) -> [u8; 32] {
    solana_keccak_hasher::hash(client.as_ref()).to_bytes()
}

/// Registry `initialize`: creates the root config, the registry config of `collection` and the
/// `collection` account itself (which must sign: it is a fresh keypair), paid by `payer`.
pub fn initialize_registry(payer: &Pubkey, collection: &Pubkey) -> Instruction {
    Instruction {
        program_id: ids::AGENT_REGISTRY,
        accounts: vec![
            AccountMeta::new(*payer, true),
            AccountMeta::new(root_config_pda().0, false),
            AccountMeta::new(registry_config_pda(collection).0, false),
            AccountMeta::new(*collection, true),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data: data(
            discriminators::INITIALIZE,
            &args::InitializeArgs {
                base_collection: *collection,
            },
        ),
    }
}

/// Engine `initialize_config`: creates the AtomConfig with `authority` as the `set_stats`
/// admin.
pub fn initialize_engine(payer: &Pubkey, authority: &Pubkey) -> Instruction {
    Instruction {
        program_id: ids::REPUTATION_ENGINE,
        accounts: vec![
            AccountMeta::new(*payer, true),
            AccountMeta::new(atom_config_pda().0, false),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data: data(
            discriminators::INITIALIZE_CONFIG,
            &args::InitializeConfigArgs {
                authority: *authority,
            },
        ),
    }
}

/// Registry `register_with_options`; `owner` pays and signs, `asset` is a fresh keypair that
/// signs.
pub fn register_with_options(
    owner: &Pubkey,
    asset: &Pubkey,
    collection: &Pubkey,
    agent_uri: &str,
    atom_enabled: bool,
) -> Instruction {
    Instruction {
        program_id: ids::AGENT_REGISTRY,
        accounts: vec![
            AccountMeta::new_readonly(root_config_pda().0, false),
            AccountMeta::new_readonly(registry_config_pda(collection).0, false),
            AccountMeta::new(agent_account_pda(asset).0, false),
            AccountMeta::new(*asset, true),
            AccountMeta::new(*collection, false),
            AccountMeta::new(*owner, true),
            AccountMeta::new_readonly(system_program::ID, false),
            AccountMeta::new_readonly(ids::MPL_CORE, false),
        ],
        data: register_with_options_data(&RegisterWithOptionsArgs {
            agent_uri: agent_uri.to_string(),
            atom_enabled,
        }),
    }
}

/// Engine `initialize_stats`; `owner` (the asset's owner) pays and signs.
pub fn initialize_stats(owner: &Pubkey, asset: &Pubkey, collection: &Pubkey) -> Instruction {
    Instruction {
        program_id: ids::REPUTATION_ENGINE,
        accounts: vec![
            AccountMeta::new(*owner, true),
            AccountMeta::new_readonly(*asset, false),
            AccountMeta::new_readonly(*collection, false),
            AccountMeta::new_readonly(atom_config_pda().0, false),
            AccountMeta::new(atom_stats_pda(asset).0, false),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data: initialize_stats_data(),
    }
}

/// Engine `set_stats` (localnet-only): `authority` is the AtomConfig authority.
pub fn set_stats(authority: &Pubkey, asset: &Pubkey, stats: &Stats) -> Instruction {
    Instruction {
        program_id: ids::REPUTATION_ENGINE,
        accounts: vec![
            AccountMeta::new_readonly(*authority, true),
            AccountMeta::new_readonly(atom_config_pda().0, false),
            AccountMeta::new(atom_stats_pda(asset).0, false),
        ],
        data: data(
            discriminators::SET_STATS,
            &args::SetStatsArgs {
                tier_immediate: stats.tier_immediate,
                tier_confirmed: stats.tier_confirmed,
                risk_score: stats.risk_score,
                confidence: stats.confidence,
            },
        ),
    }
}

/// Registry `give_feedback`, with its four engine accounts (atom_config, atom_stats, engine
/// program, registry CPI authority) when `with_engine`, else the four as absent (each the
/// registry's own id, Anchor's encoding of a `None` optional account).
pub fn give_feedback(
    client: &Pubkey,
    asset: &Pubkey,
    collection: &Pubkey,
    args: &GiveFeedbackArgs,
    with_engine: bool,
) -> Instruction {
    let mut accounts = vec![
        AccountMeta::new(*client, true),
        AccountMeta::new(agent_account_pda(asset).0, false),
        AccountMeta::new_readonly(*asset, false),
        AccountMeta::new_readonly(*collection, false),
        AccountMeta::new_readonly(system_program::ID, false),
    ];
    if with_engine {
        accounts.extend([
            AccountMeta::new_readonly(atom_config_pda().0, false),
            AccountMeta::new(atom_stats_pda(asset).0, false),
            AccountMeta::new_readonly(ids::REPUTATION_ENGINE, false),
            AccountMeta::new_readonly(registry_cpi_authority_pda().0, false),
        ]);
    } else {
        accounts.extend((0..4).map(|_| AccountMeta::new_readonly(ids::AGENT_REGISTRY, false)));
    }
    Instruction {
        program_id: ids::AGENT_REGISTRY,
        accounts,
        data: give_feedback_data(args),
    }
}

/// Registry `append_response`: `responder` (any key; it signs) responds to the feedback
/// `args.feedback_index` of the agent of `asset`. Accounts: responder (signer), the agent's
/// AgentAccount (writable), the asset.
pub fn append_response(
    responder: &Pubkey,
    asset: &Pubkey,
    args: &AppendResponseArgs,
) -> Instruction {
    Instruction {
        program_id: ids::AGENT_REGISTRY,
        accounts: vec![
            AccountMeta::new_readonly(*responder, true),
            AccountMeta::new(agent_account_pda(asset).0, false),
            AccountMeta::new_readonly(*asset, false),
        ],
        data: append_response_data(args),
    }
}

/// Engine `update_stats` as a top-level instruction. The engine only accepts it through the
/// registry's CPI (signed by the registry's CPI authority PDA), so on its own this builder
/// only serves to show that direct calls are rejected. `payer` signs; `authority` signs when
/// `sign` is set.
pub fn update_stats(
    payer: &Pubkey,
    collection: &Pubkey,
    authority: &Pubkey,
    sign: bool,
    asset: &Pubkey,
    client_hash: [u8; 32],
    score: u8,
) -> Instruction {
    Instruction {
        program_id: ids::REPUTATION_ENGINE,
        accounts: vec![
            AccountMeta::new(*payer, true),
            AccountMeta::new_readonly(*asset, false),
            AccountMeta::new_readonly(*collection, false),
            AccountMeta::new_readonly(atom_config_pda().0, false),
            AccountMeta::new(atom_stats_pda(asset).0, false),
            AccountMeta::new_readonly(*authority, sign),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data: data(
            discriminators::UPDATE_STATS,
            &args::UpdateStatsArgs { client_hash, score },
        ),
    }
}
