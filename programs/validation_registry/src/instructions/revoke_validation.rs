use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

use crate::errors::ValidationRegistryError;
use crate::events::ValidationRevoked;
use crate::state::{seeds, AttestorProfile, ValidationAttestation};

#[derive(Accounts)]
#[instruction(subject_asset: Pubkey, capability_hash: [u8; 32])]
pub struct RevokeValidation<'info> {
    /// The attestor that issued the attestation; nobody else can revoke it.
    pub attestor: Signer<'info>,
    /// The attestor's profile, whose revocation count goes up.
    #[account(
        mut,
        seeds = [seeds::ATTESTOR, attestor.key().as_ref()],
        bump = attestor_profile.bump,
        has_one = attestor,
    )]
    pub attestor_profile: Account<'info, AttestorProfile>,
    /// The attestation, derived from the signer: another attestor's attestation fails the
    /// seeds check.
    #[account(
        mut,
        seeds = [
            seeds::ATTESTATION,
            subject_asset.as_ref(),
            capability_hash.as_ref(),
            attestor.key().as_ref(),
        ],
        bump = attestation.bump,
        has_one = attestor,
    )]
    pub attestation: Account<'info, ValidationAttestation>,
}

impl RevokeValidation<'_> {
    fn validate(&self) -> Result<()> {
        require!(
            !self.attestation.revoked,
            ValidationRegistryError::AlreadyRevoked
        );
        Ok(())
    }

    pub fn handler(
        ctx: Context<Self>,
        subject_asset: Pubkey,
        capability_hash: [u8; 32],
        reason_hash: [u8; 32],
    ) -> Result<()> {
        ctx.accounts.validate()?;
        let clock = Clock::get()?;

        let profile = &mut ctx.accounts.attestor_profile;
        profile.revocations = profile
            .revocations
            .checked_add(1)
            .ok_or(ValidationRegistryError::CounterOverflow)?;

        let attestation = &mut ctx.accounts.attestation;
        attestation.revoked = true;
        attestation.revoked_at = clock.unix_timestamp;
        attestation.revocation_reason_hash = reason_hash;

        runtime::emit(&ValidationRevoked {
            attestation: attestation.key(),
            subject: subject_asset,
            capability: capability_hash,
            attestor: attestation.attestor,
            reason_hash,
            revoked_at: clock.unix_timestamp,
            slot: clock.slot,
        });
        Ok(())
    }
}
