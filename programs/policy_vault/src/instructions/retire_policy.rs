use crate::errors::PolicyVaultError;
use crate::events::PolicyRetired;
use crate::state::{seeds, PolicyAccount, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(asset: Pubkey, policy_id: u32)]
pub struct RetirePolicy<'info> {
    /// A member; further member signers follow as remaining accounts.
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    #[account(
        mut,
        seeds = [seeds::POLICY, asset.as_ref(), &policy_id.to_le_bytes()],
        bump = policy.bump,
    )]
    pub policy: Account<'info, PolicyAccount>,
    /// The agent's MPL Core asset: its live owner must be the authority's owner (a sale on
    /// MPL Core ends the seller's authority; the buyer takes it over).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// Switches a policy off for good; needs `threshold` distinct members. Policies are otherwise
/// immutable, so this is how an owner withdraws limits it no longer wants a payer to use.
pub fn retire_policy(ctx: Context<RetirePolicy>, asset: Pubkey, policy_id: u32) -> Result<()> {
    let lead = ctx.accounts.member.key();
    let signers = ctx.accounts.authority.require_threshold(
        &ctx.accounts.agent_asset,
        &lead,
        ctx.remaining_accounts,
    )?;
    let policy = &mut ctx.accounts.policy;
    require!(!policy.is_retired(), PolicyVaultError::PolicyRetired);
    // A cluster's clock is never 0; `max` keeps "retired" distinct from "in force" anyway.
    let now = Clock::get()?.unix_timestamp.max(1);
    policy.retired_at = now;
    runtime::emit(&PolicyRetired {
        asset,
        policy_id,
        retired_at: now,
        by: lead,
        signers,
    });
    Ok(())
}
