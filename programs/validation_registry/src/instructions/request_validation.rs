use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

use crate::constants::MAX_DEADLINE_SLOTS;
use crate::errors::ValidationRegistryError;
use crate::events::ValidationRequested;
use crate::state::{seeds, CapabilityNamespace, ValidationRequest};

/// The arguments of `request_validation`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestValidationArgs {
    /// The agent (its MPL Core asset) to be validated.
    pub subject_asset: Pubkey,
    /// The capability, by its namespace hash (`sha256(name)`); the namespace must exist.
    pub capability_hash: [u8; 32],
    /// A hash of the URI of the claim to validate.
    pub claim_uri_hash: [u8; 32],
    /// The slot by which the requester wants an answer: after the current slot and at most
    /// `MAX_DEADLINE_SLOTS` ahead.
    pub deadline_slot: u64,
}

#[derive(Accounts)]
#[instruction(args: RequestValidationArgs)]
pub struct RequestValidation<'info> {
    /// Asks for the validation and pays for the request account.
    #[account(mut)]
    pub requester: Signer<'info>,
    /// The capability's namespace, which must already be registered.
    #[account(
        seeds = [seeds::CAPABILITY, args.capability_hash.as_ref()],
        bump = namespace.bump,
    )]
    pub namespace: Account<'info, CapabilityNamespace>,
    /// The new request at `["request", subject, capability, requester]`.
    /// Created by the handler (not `init`), so lamports sent to the address in
    /// advance cannot block it; see `trust_gate_program_common::pda_account`.
    /// CHECK: verified as described above.
    #[account(
        mut,
        seeds = [
            seeds::REQUEST,
            args.subject_asset.as_ref(),
            args.capability_hash.as_ref(),
            requester.key().as_ref(),
        ],
        bump,
    )]
    pub request: UncheckedAccount<'info>,
    /// Creates the request account.
    pub system_program: Program<'info, System>,
}

impl RequestValidation<'_> {
    fn validate(current_slot: u64, deadline_slot: u64) -> Result<()> {
        let ahead = deadline_slot
            .checked_sub(current_slot)
            .filter(|ahead| *ahead > 0)
            .ok_or(ValidationRegistryError::DeadlineInPast)?;
        require!(
            ahead <= MAX_DEADLINE_SLOTS,
            ValidationRegistryError::DeadlineTooFar
        );
        Ok(())
    }

    pub fn handler(ctx: Context<Self>, args: RequestValidationArgs) -> Result<()> {
        let RequestValidationArgs {
            subject_asset,
            capability_hash,
            claim_uri_hash,
            deadline_slot,
        } = args;
        let slot = Clock::get()?.slot;
        Self::validate(slot, deadline_slot)?;
        let requester = ctx.accounts.requester.key();

        let bump = ctx.bumps.request;
        let request = &ctx.accounts.request;
        pda_account::init(
            &ctx.accounts.requester,
            request,
            8 + ValidationRequest::INIT_SPACE,
            &[
                seeds::REQUEST,
                subject_asset.as_ref(),
                capability_hash.as_ref(),
                requester.as_ref(),
                &[bump],
            ],
            &ValidationRequest {
                subject: subject_asset,
                capability: capability_hash,
                requester,
                claim_uri_hash,
                deadline_slot,
                created_slot: slot,
                bump,
            },
        )?;

        runtime::emit(&ValidationRequested {
            request: request.key(),
            subject: subject_asset,
            capability: capability_hash,
            requester,
            claim_uri_hash,
            deadline_slot,
            slot,
        });
        Ok(())
    }
}
