//! The members' approval of one payment above a policy's approval threshold, and its close
//! when it goes unused (a payment that passes against it closes it itself: see `evaluate`).

use crate::errors::PolicyVaultError;
use crate::events::{ApprovalClosed, PaymentApproved};
use crate::state::{
    seeds, ApprovalTerms, KillSwitchState, PaymentApproval, PolicyAuthority, MAX_APPROVAL_SECS,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
#[instruction(terms: ApprovalTerms)]
pub struct ApprovePayment<'info> {
    /// A member, who pays the approval's rent (back when a payment consumes it or when it is
    /// closed unused); further member signers follow as remaining accounts.
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, terms.payer_asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The payer agent's MPL Core asset: the members in force approve (the authority's own
    /// until a take-over takes effect, as for the kill switch).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold_in_force`.
    pub agent_asset: UncheckedAccount<'info>,
    /// The payer's kill switch (it must exist, as for any payment): the approval records its
    /// authority generation, and a hand-over (which bumps it) voids the approval.
    #[account(seeds = [seeds::KILLSWITCH, terms.payer_asset.as_ref()], bump = killswitch.bump)]
    pub killswitch: Account<'info, KillSwitchState>,
    /// The approval of `terms`, created here (`AccountAlreadyInitialized` while one of the
    /// same terms stands).
    /// CHECK: its address is the seeds'; created by the handler.
    #[account(
        mut,
        seeds = [
            seeds::APPROVAL,
            terms.payer_asset.as_ref(),
            terms.payee_asset.as_ref(),
            terms.mint.as_ref(),
            &terms.amount.to_le_bytes(),
            &terms.policy_id.to_le_bytes(),
        ],
        bump,
    )]
    pub approval: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Approves one payment of exactly `terms` until `expires_at` (after now, at most a week
/// ahead) or until the authority's next hand-over; needs `threshold` distinct members of the
/// authority in force.
pub fn approve_payment(
    ctx: Context<ApprovePayment>,
    terms: ApprovalTerms,
    expires_at: i64,
) -> Result<()> {
    require!(terms.amount > 0, PolicyVaultError::ApprovalAmountZero);
    require!(
        terms.payee_asset != terms.payer_asset
            && terms.payee_asset != Pubkey::default()
            && terms.mint != Pubkey::default(),
        PolicyVaultError::ApprovalTermsInvalid
    );
    let now = Clock::get()?.unix_timestamp;
    require!(
        expires_at > now && expires_at <= now.saturating_add(MAX_APPROVAL_SECS),
        PolicyVaultError::ApprovalExpiryInvalid
    );
    let a = &ctx.accounts;
    let lead = a.member.key();
    let (signers, _) =
        a.authority
            .require_threshold_in_force(&a.agent_asset, &lead, ctx.remaining_accounts)?;
    let bump = ctx.bumps.approval;
    let amount = terms.amount.to_le_bytes();
    let policy_id = terms.policy_id.to_le_bytes();
    pda_account::init(
        &a.member,
        &a.approval,
        8 + PaymentApproval::INIT_SPACE,
        &[
            seeds::APPROVAL,
            terms.payer_asset.as_ref(),
            terms.payee_asset.as_ref(),
            terms.mint.as_ref(),
            &amount,
            &policy_id,
            &[bump],
        ],
        &PaymentApproval {
            payer_asset: terms.payer_asset,
            payee_asset: terms.payee_asset,
            mint: terms.mint,
            amount: terms.amount,
            policy_id: terms.policy_id,
            expires_at,
            approved_at: now,
            rent_payer: lead,
            signers,
            bump,
            authority_generation: a.killswitch.authority_generation,
        },
    )?;
    runtime::emit(&PaymentApproved {
        approval: a.approval.key(),
        payer_asset: terms.payer_asset,
        payee_asset: terms.payee_asset,
        mint: terms.mint,
        amount: terms.amount,
        policy_id: terms.policy_id,
        expires_at,
        by: lead,
        signers,
    });
    Ok(())
}

#[derive(Accounts)]
pub struct CloseApproval<'info> {
    /// The approval's rent payer at any time; anyone once it has expired.
    pub closer: Signer<'info>,
    #[account(
        mut,
        close = rent_payer,
        has_one = rent_payer @ PolicyVaultError::ApprovalRentPayerMismatch,
    )]
    pub approval: Account<'info, PaymentApproval>,
    /// The approval's rent payer, who gets its rent back.
    /// CHECK: the one the approval stores (`has_one`).
    #[account(mut)]
    pub rent_payer: UncheckedAccount<'info>,
}

/// Closes an unused approval to its rent payer: withdrawn by the member who sent it, or
/// cleaned up by anyone after it expired.
pub fn close_approval(ctx: Context<CloseApproval>) -> Result<()> {
    let a = &ctx.accounts;
    let approval = &a.approval;
    let now = Clock::get()?.unix_timestamp;
    require!(
        a.closer.key() == approval.rent_payer || now > approval.expires_at,
        PolicyVaultError::ApprovalNotExpired
    );
    // Closed to the rent payer by the `close` constraint, once the handler has returned.
    runtime::emit(&ApprovalClosed {
        approval: a.approval.key(),
        payer_asset: approval.payer_asset,
        consumed: false,
    });
    Ok(())
}
