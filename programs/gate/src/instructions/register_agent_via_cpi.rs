use crate::errors::GateError;
use crate::events::AgentRegistered;
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::program::invoke;
use trust_gate_program_common::external::instructions::{
    initialize_stats_data, register_with_options_data, RegisterWithOptionsArgs, MAX_URI_LEN,
};
use trust_gate_program_common::external::{addresses, ids, seeds as ext_seeds};
use trust_gate_program_common::runtime;

#[derive(Accounts)]
pub struct RegisterAgentViaCpi<'info> {
    /// The new agent's owner; pays for the registry and engine accounts.
    #[account(mut)]
    pub owner: Signer<'info>,
    /// A fresh keypair: the new agent asset.
    #[account(mut)]
    pub asset: Signer<'info>,
    /// CHECK: the AgentAccount PDA the registry creates (address enforced).
    #[account(
        mut,
        seeds = [ext_seeds::AGENT, asset.key().as_ref()],
        bump,
        seeds::program = ids::AGENT_REGISTRY,
    )]
    pub agent_account: UncheckedAccount<'info>,
    /// CHECK: the registry's RootConfig PDA (address enforced).
    #[account(address = addresses::ROOT_CONFIG)]
    pub root_config: UncheckedAccount<'info>,
    /// CHECK: the registry's config of `collection` (address enforced).
    #[account(
        seeds = [ext_seeds::REGISTRY_CONFIG, collection.key().as_ref()],
        bump,
        seeds::program = ids::AGENT_REGISTRY,
    )]
    pub registry_config: UncheckedAccount<'info>,
    /// CHECK: the registry's base collection (the registry checks it against RootConfig).
    #[account(mut)]
    pub collection: UncheckedAccount<'info>,
    /// CHECK: the engine's AtomConfig PDA (address enforced).
    #[account(address = addresses::ATOM_CONFIG)]
    pub atom_config: UncheckedAccount<'info>,
    /// CHECK: the AtomStats PDA the engine creates (address enforced).
    #[account(
        mut,
        seeds = [ext_seeds::ATOM_STATS, asset.key().as_ref()],
        bump,
        seeds::program = ids::REPUTATION_ENGINE,
    )]
    pub atom_stats: UncheckedAccount<'info>,
    /// CHECK: MPL Core (address enforced).
    #[account(address = ids::MPL_CORE)]
    pub mpl_core_program: UncheckedAccount<'info>,
    /// CHECK: the agent registry (address enforced).
    #[account(address = ids::AGENT_REGISTRY)]
    pub registry_program: UncheckedAccount<'info>,
    /// CHECK: the reputation engine (address enforced).
    #[account(address = ids::REPUTATION_ENGINE)]
    pub engine_program: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Registers a new reputation-enabled agent for `owner` and initializes its engine stats.
pub fn register_agent_via_cpi(
    ctx: Context<RegisterAgentViaCpi>,
    metadata_uri: String,
) -> Result<()> {
    require!(
        metadata_uri.len() <= MAX_URI_LEN,
        GateError::MetadataUriTooLong
    );
    let a = &ctx.accounts;
    let register = Instruction {
        program_id: ids::AGENT_REGISTRY,
        accounts: vec![
            AccountMeta::new_readonly(a.root_config.key(), false),
            AccountMeta::new_readonly(a.registry_config.key(), false),
            AccountMeta::new(a.agent_account.key(), false),
            AccountMeta::new(a.asset.key(), true),
            AccountMeta::new(a.collection.key(), false),
            AccountMeta::new(a.owner.key(), true),
            AccountMeta::new_readonly(a.system_program.key(), false),
            AccountMeta::new_readonly(a.mpl_core_program.key(), false),
        ],
        data: register_with_options_data(&RegisterWithOptionsArgs {
            agent_uri: metadata_uri,
            atom_enabled: true,
        }),
    };
    invoke(
        &register,
        &[
            a.root_config.to_account_info(),
            a.registry_config.to_account_info(),
            a.agent_account.to_account_info(),
            a.asset.to_account_info(),
            a.collection.to_account_info(),
            a.owner.to_account_info(),
            a.system_program.to_account_info(),
            a.mpl_core_program.to_account_info(),
            a.registry_program.to_account_info(),
        ],
    )?;

    let init_stats = Instruction {
        program_id: ids::REPUTATION_ENGINE,
        accounts: vec![
            AccountMeta::new(a.owner.key(), true),
            AccountMeta::new_readonly(a.asset.key(), false),
            AccountMeta::new_readonly(a.collection.key(), false),
            AccountMeta::new_readonly(a.atom_config.key(), false),
            AccountMeta::new(a.atom_stats.key(), false),
            AccountMeta::new_readonly(a.system_program.key(), false),
        ],
        data: initialize_stats_data(),
    };
    invoke(
        &init_stats,
        &[
            a.owner.to_account_info(),
            a.asset.to_account_info(),
            a.collection.to_account_info(),
            a.atom_config.to_account_info(),
            a.atom_stats.to_account_info(),
            a.system_program.to_account_info(),
            a.engine_program.to_account_info(),
        ],
    )?;
    runtime::emit(&AgentRegistered {
        asset: a.asset.key(),
        owner: a.owner.key(),
        agent_account: a.agent_account.key(),
    });
    Ok(())
}
