//! The asset's new owner takes the authority over: a request, then, after the delay and
//! before it lapses, its completion; meanwhile the members in force may cancel it or accept
//! it at once; once lapsed, anyone closes it. Why it is never at once:
//! [`crate::state::take_over`].

use crate::errors::PolicyVaultError;
use crate::events::{
    AuthorityTakenOver, TakeOverCancelled, TakeOverLapsedClosed, TakeOverRequested,
};
use crate::state::{
    live_owner, live_owner_unless_burned, load_guard, seeds, take_over_delay, validate_members,
    KillSwitchState, PolicyAuthority, TakeOverRequest,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct RequestTakeOver<'info> {
    /// The live owner of the agent's MPL Core asset; pays for the request (refunded when it
    /// closes).
    #[account(mut)]
    pub owner: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The authority's guard, when its threshold set one (the delay); else the default delay.
    /// CHECK: address enforced by seeds; read only when policy_vault owns it.
    #[account(seeds = [seeds::AUTHORITY_GUARD, asset.as_ref()], bump)]
    pub authority_guard: UncheckedAccount<'info>,
    /// The request's PDA; created, or rewritten when it holds a request of an earlier owner
    /// or one that lapsed.
    /// CHECK: address enforced by seeds; created or read by the handler.
    #[account(mut, seeds = [seeds::TAKE_OVER, asset.as_ref()], bump)]
    pub take_over_request: UncheckedAccount<'info>,
    /// The agent's MPL Core asset.
    /// CHECK: address and owner checked by `live_owner`.
    pub agent_asset: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// The asset's live owner asks to take over the authority its previous owner created, with
/// new members and threshold. It takes effect no sooner than the guard's delay from now, and
/// lapses the same delay after that.
pub fn request_take_over(
    ctx: Context<RequestTakeOver>,
    asset: Pubkey,
    members: Vec<Pubkey>,
    threshold: u8,
) -> Result<()> {
    validate_members(&members, threshold)?;
    let owner = ctx.accounts.owner.key();
    require_keys_eq!(
        live_owner(&ctx.accounts.agent_asset, &asset)?,
        owner,
        PolicyVaultError::NotAgentOwner
    );
    let authority = &ctx.accounts.authority;
    require_keys_neq!(authority.owner, owner, PolicyVaultError::AuthorityCurrent);
    let now = Clock::get()?.unix_timestamp;
    let delay = take_over_delay(load_guard(&ctx.accounts.authority_guard)?.as_ref());
    // A u32 of seconds after the cluster's clock cannot reach i64's end.
    let effective_at = now.saturating_add(i64::from(delay));
    let bump = ctx.bumps.take_over_request;
    let mut request = TakeOverRequest {
        asset,
        bump,
        new_owner: owner,
        rent_payer: owner,
        requested_at: now,
        effective_at,
        threshold,
        members: members.clone(),
    };
    match pda_account::load::<TakeOverRequest>(&ctx.accounts.take_over_request)? {
        None => pda_account::init(
            &ctx.accounts.owner,
            &ctx.accounts.take_over_request,
            8 + TakeOverRequest::INIT_SPACE,
            &[seeds::TAKE_OVER, asset.as_ref(), &[bump]],
            &request,
        )?,
        Some(earlier) => {
            // One owner's request runs its full delay: asking again would not restart it,
            // unless it lapsed (it can then never apply).
            require!(
                earlier.new_owner != owner || earlier.has_lapsed(now),
                PolicyVaultError::TakeOverAlreadyRequested
            );
            // An earlier owner's request, which can never apply while this owner holds the
            // asset, or a lapsed one: replaced, its rent still owed to whoever paid it.
            request.rent_payer = earlier.rent_payer;
            pda_account::store(&ctx.accounts.take_over_request, &request)?;
        }
    }
    runtime::emit(&TakeOverRequested {
        asset,
        owner: authority.owner,
        new_owner: owner,
        members,
        threshold,
        effective_at,
    });
    Ok(())
}

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct CancelTakeOver<'info> {
    /// A member of the authority in force; further member signers follow as remaining
    /// accounts.
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    #[account(
        mut,
        seeds = [seeds::TAKE_OVER, asset.as_ref()],
        bump = take_over_request.bump,
        close = rent_payer,
    )]
    pub take_over_request: Account<'info, TakeOverRequest>,
    /// Who paid the request's rent, refunded.
    /// CHECK: must be the request's recorded rent payer.
    #[account(mut, address = take_over_request.rent_payer @ PolicyVaultError::RentPayerMismatch)]
    pub rent_payer: UncheckedAccount<'info>,
    /// The agent's MPL Core asset.
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold_in_force`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// The members in force (the authority's own, whoever owns the asset now) cancel a pending
/// take-over; needs `threshold` members.
pub fn cancel_take_over(ctx: Context<CancelTakeOver>, asset: Pubkey) -> Result<()> {
    let a = &ctx.accounts;
    let (signers, _) = a.authority.require_threshold_in_force(
        &a.agent_asset,
        &a.member.key(),
        ctx.remaining_accounts,
    )?;
    runtime::emit(&TakeOverCancelled {
        asset,
        new_owner: a.take_over_request.new_owner,
        by: a.member.key(),
        signers,
    });
    Ok(())
}

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct CompleteTakeOver<'info> {
    #[account(mut, seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    #[account(
        mut,
        seeds = [seeds::TAKE_OVER, asset.as_ref()],
        bump = take_over_request.bump,
        close = rent_payer,
    )]
    pub take_over_request: Account<'info, TakeOverRequest>,
    /// Who paid the request's rent, refunded.
    /// CHECK: must be the request's recorded rent payer.
    #[account(mut, address = take_over_request.rent_payer @ PolicyVaultError::RentPayerMismatch)]
    pub rent_payer: UncheckedAccount<'info>,
    /// The agent's MPL Core asset, whose live owner must still be the request's new owner.
    /// CHECK: address and owner checked by `live_owner_unless_burned`.
    pub agent_asset: UncheckedAccount<'info>,
    /// The authority's guard, reset by the hand-over when the earlier threshold set one.
    /// CHECK: address enforced by seeds; rewritten only when policy_vault owns it.
    #[account(mut, seeds = [seeds::AUTHORITY_GUARD, asset.as_ref()], bump)]
    pub authority_guard: UncheckedAccount<'info>,
    /// The agent's kill switch, whose authority generation the hand-over bumps (voiding the
    /// earlier members' payment approvals), when it exists.
    /// CHECK: address enforced by seeds; rewritten only when policy_vault owns it.
    #[account(mut, seeds = [seeds::KILLSWITCH, asset.as_ref()], bump)]
    pub killswitch: UncheckedAccount<'info>,
}

/// Anyone completes a take-over whose delay has passed, and which has not lapsed, while its
/// new owner still owns the asset: the authority is the new owner's, with the requested
/// members and threshold.
pub fn complete_take_over(ctx: Context<CompleteTakeOver>, asset: Pubkey) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let a = ctx.accounts;
    require!(
        now >= a.take_over_request.effective_at,
        PolicyVaultError::TakeOverNotYetEffective
    );
    require!(
        !a.take_over_request.has_lapsed(now),
        PolicyVaultError::TakeOverLapsed
    );
    hand_over(
        &mut a.authority,
        &a.take_over_request,
        &HandOverAccounts {
            agent_asset: &a.agent_asset,
            authority_guard: &a.authority_guard,
            killswitch: &a.killswitch,
        },
        asset,
    )
}

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct AcceptTakeOver<'info> {
    /// A member of the authority in force; further member signers follow as remaining
    /// accounts.
    pub member: Signer<'info>,
    #[account(mut, seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    #[account(
        mut,
        seeds = [seeds::TAKE_OVER, asset.as_ref()],
        bump = take_over_request.bump,
        close = rent_payer,
    )]
    pub take_over_request: Account<'info, TakeOverRequest>,
    /// Who paid the request's rent, refunded.
    /// CHECK: must be the request's recorded rent payer.
    #[account(mut, address = take_over_request.rent_payer @ PolicyVaultError::RentPayerMismatch)]
    pub rent_payer: UncheckedAccount<'info>,
    /// The agent's MPL Core asset, whose live owner must be the request's new owner.
    /// CHECK: address and owner checked by `live_owner_unless_burned`.
    pub agent_asset: UncheckedAccount<'info>,
    /// As in [`CompleteTakeOver`].
    /// CHECK: address enforced by seeds; rewritten only when policy_vault owns it.
    #[account(mut, seeds = [seeds::AUTHORITY_GUARD, asset.as_ref()], bump)]
    pub authority_guard: UncheckedAccount<'info>,
    /// As in [`CompleteTakeOver`].
    /// CHECK: address enforced by seeds; rewritten only when policy_vault owns it.
    #[account(mut, seeds = [seeds::KILLSWITCH, asset.as_ref()], bump)]
    pub killswitch: UncheckedAccount<'info>,
}

/// The members in force agree to a pending take-over that has not lapsed (a sale they made):
/// it takes effect at once; needs `threshold` members.
pub fn accept_take_over(ctx: Context<AcceptTakeOver>, asset: Pubkey) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let remaining = ctx.remaining_accounts;
    let a = ctx.accounts;
    a.authority
        .require_threshold_in_force(&a.agent_asset, &a.member.key(), remaining)?;
    require!(
        !a.take_over_request.has_lapsed(now),
        PolicyVaultError::TakeOverLapsed
    );
    hand_over(
        &mut a.authority,
        &a.take_over_request,
        &HandOverAccounts {
            agent_asset: &a.agent_asset,
            authority_guard: &a.authority_guard,
            killswitch: &a.killswitch,
        },
        asset,
    )
}

/// What a hand-over reads and rewrites besides the authority and the request.
struct HandOverAccounts<'a, 'info> {
    agent_asset: &'a AccountInfo<'info>,
    authority_guard: &'a AccountInfo<'info>,
    killswitch: &'a AccountInfo<'info>,
}

/// Applies `request` to `authority`, if its new owner still owns the asset (not if it was
/// burned): the new owner, members and threshold; the guard back to the default delay
/// without a recovery key (the earlier members' choice); the kill switch's authority
/// generation bumped, which voids the earlier members' payment approvals.
fn hand_over(
    authority: &mut PolicyAuthority,
    request: &TakeOverRequest,
    accounts: &HandOverAccounts,
    asset: Pubkey,
) -> Result<()> {
    require!(
        live_owner_unless_burned(accounts.agent_asset, &asset)? == Some(request.new_owner),
        PolicyVaultError::TakeOverStale
    );
    let previous_owner = authority.owner;
    authority.owner = request.new_owner;
    authority.members = request.members.clone();
    authority.threshold = request.threshold;
    if let Some(mut guard) = load_guard(accounts.authority_guard)? {
        guard.reset();
        pda_account::store(accounts.authority_guard, &guard)?;
    }
    if let Some(mut killswitch) = pda_account::load::<KillSwitchState>(accounts.killswitch)? {
        killswitch.authority_generation = killswitch.authority_generation.wrapping_add(1);
        pda_account::store(accounts.killswitch, &killswitch)?;
    }
    runtime::emit(&AuthorityTakenOver {
        asset,
        previous_owner,
        owner: request.new_owner,
        members: request.members.clone(),
        threshold: request.threshold,
    });
    Ok(())
}

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct CloseLapsedTakeOver<'info> {
    #[account(
        mut,
        seeds = [seeds::TAKE_OVER, asset.as_ref()],
        bump = take_over_request.bump,
        close = rent_payer,
    )]
    pub take_over_request: Account<'info, TakeOverRequest>,
    /// Who paid the request's rent, refunded.
    /// CHECK: must be the request's recorded rent payer.
    #[account(mut, address = take_over_request.rent_payer @ PolicyVaultError::RentPayerMismatch)]
    pub rent_payer: UncheckedAccount<'info>,
}

/// Anyone closes a take-over request that has lapsed (past `effective_at` plus its delay, it
/// can never take effect); its rent goes back to whoever paid it.
pub fn close_lapsed_take_over(ctx: Context<CloseLapsedTakeOver>, asset: Pubkey) -> Result<()> {
    let request = &ctx.accounts.take_over_request;
    let now = Clock::get()?.unix_timestamp;
    require!(request.has_lapsed(now), PolicyVaultError::TakeOverNotLapsed);
    // Closed to the rent payer by the `close` constraint, once the handler has returned.
    runtime::emit(&TakeOverLapsedClosed {
        asset,
        new_owner: request.new_owner,
        rent_payer: request.rent_payer,
        lapsed_after: request.lapses_after(),
    });
    Ok(())
}
