use crate::events::AuthorityRotated;
use crate::state::{seeds, validate_members, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct RotateAuthority<'info> {
    /// A current member; further member signers follow as remaining accounts.
    pub member: Signer<'info>,
    #[account(
        mut,
        seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()],
        bump = authority.bump,
    )]
    pub authority: Account<'info, PolicyAuthority>,
    /// The agent's MPL Core asset: its live owner must be the authority's owner (a sale on
    /// MPL Core ends the seller's authority; the buyer takes it over).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// Replaces the member list and threshold; needs `threshold` distinct current members.
pub fn rotate_authority(
    ctx: Context<RotateAuthority>,
    asset: Pubkey,
    members: Vec<Pubkey>,
    threshold: u8,
) -> Result<()> {
    validate_members(&members, threshold)?;
    let authority = &mut ctx.accounts.authority;
    let lead = ctx.accounts.member.key();
    let signers =
        authority.require_threshold(&ctx.accounts.agent_asset, &lead, ctx.remaining_accounts)?;
    authority.members = members.clone();
    authority.threshold = threshold;
    runtime::emit(&AuthorityRotated {
        asset,
        members,
        threshold,
        signers,
    });
    Ok(())
}
