use crate::events::AuthorityGuardSet;
use crate::state::{load_guard, seeds, validate_delay, AuthorityGuard, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct SetAuthorityGuard<'info> {
    /// A member; pays for the guard's account the first time. Further member signers follow
    /// as remaining accounts.
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The guard's PDA; created the first time, rewritten after.
    /// CHECK: address enforced by seeds; created or read by the handler.
    #[account(mut, seeds = [seeds::AUTHORITY_GUARD, asset.as_ref()], bump)]
    pub authority_guard: UncheckedAccount<'info>,
    /// The agent's MPL Core asset: its live owner must be the authority's owner (nothing
    /// about a hand-over changes while one may be under way).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold`.
    pub agent_asset: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Sets how long a take-over waits and the recovery key (the default key: none); needs
/// `threshold` members of a current authority.
pub fn set_authority_guard(
    ctx: Context<SetAuthorityGuard>,
    asset: Pubkey,
    take_over_delay_secs: u32,
    recovery: Pubkey,
) -> Result<()> {
    validate_delay(take_over_delay_secs)?;
    let a = &ctx.accounts;
    let signers =
        a.authority
            .require_threshold(&a.agent_asset, &a.member.key(), ctx.remaining_accounts)?;
    let bump = ctx.bumps.authority_guard;
    let guard = AuthorityGuard {
        asset,
        bump,
        take_over_delay_secs,
        recovery,
    };
    if load_guard(&a.authority_guard)?.is_some() {
        pda_account::store(&a.authority_guard, &guard)?;
    } else {
        pda_account::init(
            &a.member,
            &a.authority_guard,
            8 + AuthorityGuard::INIT_SPACE,
            &[seeds::AUTHORITY_GUARD, asset.as_ref(), &[bump]],
            &guard,
        )?;
    }
    runtime::emit(&AuthorityGuardSet {
        asset,
        take_over_delay_secs,
        recovery,
        by: a.member.key(),
        signers,
    });
    Ok(())
}
