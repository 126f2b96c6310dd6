use crate::errors::PolicyVaultError;
use crate::events::AuthorityInitialized;
use crate::state::{seeds, validate_members, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::external::{agent_account, ids, seeds as ext_seeds};
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct InitAuthority<'info> {
    /// The agent's owner as recorded in the registry's AgentAccount; pays for the account.
    #[account(mut)]
    pub owner: Signer<'info>,
    /// CHECK: the registry's AgentAccount of `asset`: PDA under the registry and owned by it
    /// (constraints); discriminator, asset and owner fields are checked in the handler.
    #[account(
        seeds = [ext_seeds::AGENT, asset.as_ref()],
        bump,
        seeds::program = ids::AGENT_REGISTRY,
        owner = ids::AGENT_REGISTRY @ PolicyVaultError::AgentAccountInvalid,
    )]
    pub agent_account: UncheckedAccount<'info>,
    /// The new authority.
    #[account(
        init,
        payer = owner,
        space = 8 + PolicyAuthority::INIT_SPACE,
        seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()],
        bump,
    )]
    pub authority: Account<'info, PolicyAuthority>,
    pub system_program: Program<'info, System>,
}

/// Only the asset's owner can create its authority: this closes the bootstrap race where
/// anyone could claim any agent's policies first.
pub fn init_authority(
    ctx: Context<InitAuthority>,
    asset: Pubkey,
    members: Vec<Pubkey>,
    threshold: u8,
) -> Result<()> {
    validate_members(&members, threshold)?;
    let view = {
        let data = ctx.accounts.agent_account.try_borrow_data()?;
        agent_account::read(&data).ok_or(PolicyVaultError::AgentAccountInvalid)?
    };
    require_keys_eq!(view.asset, asset, PolicyVaultError::AgentAccountInvalid);
    require_keys_eq!(
        view.owner,
        ctx.accounts.owner.key(),
        PolicyVaultError::NotAgentOwner
    );

    let authority = &mut ctx.accounts.authority;
    authority.asset = asset;
    authority.threshold = threshold;
    authority.bump = ctx.bumps.authority;
    authority.members = members.clone();
    runtime::emit(&AuthorityInitialized {
        asset,
        members,
        threshold,
        initialized_by: ctx.accounts.owner.key(),
    });
    Ok(())
}
