//! The asset's new owner takes the authority over: a request, then, after the delay, its
//! completion; meanwhile the members in force may cancel it or accept it at once. Why it is
//! never at once: [`crate::state::take_over`].

use crate::errors::PolicyVaultError;
use crate::events::{AuthorityTakenOver, TakeOverCancelled, TakeOverRequested};
use crate::state::{
    live_owner, load_guard, seeds, take_over_delay, validate_members, PolicyAuthority,
    TakeOverRequest,
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
    /// The request's PDA; created, or rewritten when it holds a request of an earlier owner.
    /// CHECK: address enforced by seeds; created or read by the handler.
    #[account(mut, seeds = [seeds::TAKE_OVER, asset.as_ref()], bump)]
    pub take_over_request: UncheckedAccount<'info>,
    /// The agent's MPL Core asset.
    /// CHECK: address and owner checked by `live_owner`.
    pub agent_asset: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// The asset's live owner asks to take over the authority its previous owner created, with
/// new members and threshold. It takes effect no sooner than the guard's delay from now.
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
            // One owner's request runs its full delay: asking again would not restart it.
            require_keys_neq!(
                earlier.new_owner,
                owner,
                PolicyVaultError::TakeOverAlreadyRequested
            );
            // An earlier owner's request, which can never apply while this owner holds the
            // asset: replaced, its rent still owed to whoever paid it.
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
    /// CHECK: address and owner checked by `live_owner`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// Anyone completes a take-over whose delay has passed while its new owner still owns the
/// asset: the authority is the new owner's, with the requested members and threshold.
pub fn complete_take_over(ctx: Context<CompleteTakeOver>, asset: Pubkey) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    require!(
        now >= ctx.accounts.take_over_request.effective_at,
        PolicyVaultError::TakeOverNotYetEffective
    );
    hand_over(
        &mut ctx.accounts.authority,
        &ctx.accounts.take_over_request,
        &ctx.accounts.agent_asset,
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
    /// CHECK: address and owner checked by `live_owner`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// The members in force agree to a pending take-over (a sale they made): it takes effect at
/// once; needs `threshold` members.
pub fn accept_take_over(ctx: Context<AcceptTakeOver>, asset: Pubkey) -> Result<()> {
    let a = &ctx.accounts;
    a.authority.require_threshold_in_force(
        &a.agent_asset,
        &a.member.key(),
        ctx.remaining_accounts,
    )?;
    hand_over(
        &mut ctx.accounts.authority,
        &ctx.accounts.take_over_request,
        &ctx.accounts.agent_asset,
        asset,
    )
}

/// Applies `request` to `authority`, if its new owner still owns the asset.
fn hand_over(
    authority: &mut PolicyAuthority,
    request: &TakeOverRequest,
    agent_asset: &AccountInfo,
    asset: Pubkey,
) -> Result<()> {
    require_keys_eq!(
        live_owner(agent_asset, &asset)?,
        request.new_owner,
        PolicyVaultError::TakeOverStale
    );
    let previous_owner = authority.owner;
    authority.owner = request.new_owner;
    authority.members = request.members.clone();
    authority.threshold = request.threshold;
    runtime::emit(&AuthorityTakenOver {
        asset,
        previous_owner,
        owner: request.new_owner,
        members: request.members.clone(),
        threshold: request.threshold,
    });
    Ok(())
}
