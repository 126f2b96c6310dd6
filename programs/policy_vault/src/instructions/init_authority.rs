use crate::errors::PolicyVaultError;
use crate::events::AuthorityInitialized;
use crate::state::{live_owner, seeds, validate_members, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::external::{agent_account, ids, seeds as ext_seeds};
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct InitAuthority<'info> {
    /// The live owner of the agent's MPL Core asset; pays for the account.
    #[account(mut)]
    pub owner: Signer<'info>,
    /// The registry's AgentAccount of `asset`: PDA under the registry and owned by it
    /// (constraints); discriminator, asset and owner fields are checked in the handler.
    /// CHECK: verified as described above.
    #[account(
        seeds = [ext_seeds::AGENT, asset.as_ref()],
        bump,
        seeds::program = ids::AGENT_REGISTRY,
        owner = ids::AGENT_REGISTRY @ PolicyVaultError::AgentAccountInvalid,
    )]
    pub agent_account: UncheckedAccount<'info>,
    /// The new PolicyAuthority's PDA (seeds enforced); created by the handler so that
    /// lamports sent to the address in advance cannot block it (see `pda_account`).
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump)]
    pub authority: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
    /// The agent's MPL Core asset, whose live owner must sign.
    /// CHECK: address and owner checked by `live_owner`.
    pub agent_asset: UncheckedAccount<'info>,
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
    // The live owner, not the registry's cached one, which a sale on MPL Core leaves stale.
    let owner = ctx.accounts.owner.key();
    require_keys_eq!(
        live_owner(&ctx.accounts.agent_asset, &asset)?,
        owner,
        PolicyVaultError::NotAgentOwner
    );

    let bump = ctx.bumps.authority;
    pda_account::init(
        &ctx.accounts.owner,
        &ctx.accounts.authority,
        8 + PolicyAuthority::INIT_SPACE,
        &[seeds::POLICY_AUTHORITY, asset.as_ref(), &[bump]],
        &PolicyAuthority {
            asset,
            threshold,
            bump,
            owner,
            members: members.clone(),
        },
    )?;
    runtime::emit(&AuthorityInitialized {
        asset,
        members,
        threshold,
        initialized_by: ctx.accounts.owner.key(),
    });
    Ok(())
}
