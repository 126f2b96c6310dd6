use crate::errors::PolicyVaultError;
use crate::events::VaultSpenderSet;
use crate::state::{seeds, PolicyAccount, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(asset: Pubkey, policy_id: u32)]
pub struct SetVaultSpender<'info> {
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

/// Names the one key that may pay from the vault under a vault-funded policy (its releases
/// credit only that key's token account); needs `threshold` distinct members, for the first
/// spender as for every change.
pub fn set_vault_spender(
    ctx: Context<SetVaultSpender>,
    asset: Pubkey,
    policy_id: u32,
    spender: Pubkey,
) -> Result<()> {
    require_keys_neq!(spender, Pubkey::default(), PolicyVaultError::InvalidSpender);
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
    require!(
        policy.params.is_vault_funded(),
        PolicyVaultError::PolicyNotVaultFunded
    );
    PolicyAccount::write_spender(&mut info.try_borrow_mut_data()?, &spender);
    runtime::emit(&VaultSpenderSet {
        asset,
        policy_id,
        spender,
        by: lead,
        signers,
    });
    Ok(())
}
