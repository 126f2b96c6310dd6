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
    /// The policy (read by the handler: owner, discriminator, and the asset and
    /// id it stores, which stand for its seeds); the field changes in place.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub policy: UncheckedAccount<'info>,
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
    let info = &ctx.accounts.policy;
    let policy = PolicyAccount::read(info)?;
    require!(policy.is_for(&asset, policy_id), ErrorCode::ConstraintSeeds);
    require!(!policy.is_retired(), PolicyVaultError::PolicyRetired);
    // A cluster's clock is never 0; `max` keeps "retired" distinct from "in force" anyway.
    let now = Clock::get()?.unix_timestamp.max(1);
    PolicyAccount::write_retired_at(&mut info.try_borrow_mut_data()?, now);
    runtime::emit(&PolicyRetired {
        asset,
        policy_id,
        retired_at: now,
        by: lead,
        signers,
    });
    Ok(())
}
