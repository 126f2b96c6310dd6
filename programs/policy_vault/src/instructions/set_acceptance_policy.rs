use crate::errors::PolicyVaultError;
use crate::events::AcceptancePolicySet;
use crate::state::{seeds, AcceptanceParams, AcceptancePolicy, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct SetAcceptancePolicy<'info> {
    /// A member (pays when the account is created); further member signers follow as
    /// remaining accounts.
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    #[account(
        init_if_needed,
        payer = member,
        space = 8 + AcceptancePolicy::INIT_SPACE,
        seeds = [seeds::ACCEPTANCE, asset.as_ref()],
        bump,
    )]
    pub acceptance: Account<'info, AcceptancePolicy>,
    pub system_program: Program<'info, System>,
}

/// Creates or replaces the agent's acceptance policy; needs the authority's threshold.
pub fn set_acceptance_policy(
    ctx: Context<SetAcceptancePolicy>,
    asset: Pubkey,
    params: AcceptanceParams,
) -> Result<()> {
    params.validate()?;
    let authority = &ctx.accounts.authority;
    let lead = ctx.accounts.member.key();
    require!(
        authority.is_member(&lead),
        PolicyVaultError::NotAuthorityMember
    );
    let signers = authority.count_member_signers(&lead, ctx.remaining_accounts);
    require!(
        signers >= usize::from(authority.threshold),
        PolicyVaultError::InsufficientSigners
    );
    let acc = &mut ctx.accounts.acceptance;
    let replaced = acc.asset != Pubkey::default();
    acc.asset = asset;
    acc.updated_at = Clock::get()?.unix_timestamp;
    acc.bump = ctx.bumps.acceptance;
    runtime::emit(&AcceptancePolicySet {
        asset,
        min_payer_tier: params.min_payer_tier,
        required_capability: params.required_capability,
        replaced,
    });
    acc.params = params;
    Ok(())
}
