use anchor_lang::compat::solana_instructions_sysvar::{
    self as instructions_sysvar, load_current_index_checked, load_instruction_at_checked,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

use crate::constants::SLOT_DURATION_MS;
use crate::errors::ValidationRegistryError;
use crate::events::ValidationResponded;
use crate::state::{seeds, AttestorProfile, CapabilityNamespace, ValidationAttestation};
use crate::utils::attestation_message;
use crate::utils::ed25519::{parse_single_inline, ED25519_PROGRAM_ID};

/// The arguments of `respond_to_validation`: the claim the attestor vouches for (an optional
/// Ed25519 signature by the attestor covers them all: `attestation_message`).
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct RespondToValidationArgs {
    /// The agent (its MPL Core asset) the attestation is about.
    pub subject_asset: Pubkey,
    /// The capability, by its namespace hash (`sha256(name)`); the namespace must exist.
    pub capability_hash: [u8; 32],
    /// A hash of the claim's payload.
    pub claim_payload_hash: [u8; 32],
    /// A hash of the claim's URI.
    pub claim_uri_hash: [u8; 32],
    /// The slot the attestation expires at: after the current slot (stored in unix time
    /// too, at `SLOT_DURATION_MS` per slot).
    pub expires_at_slot: u64,
}

#[derive(Accounts)]
#[instruction(args: RespondToValidationArgs)]
pub struct RespondToValidation<'info> {
    /// The attestor vouching for the subject; pays for the attestation on first issue.
    #[account(mut)]
    pub attestor: Signer<'info>,
    /// The attestor's profile: only registered attestors may respond.
    #[account(
        mut,
        seeds = [seeds::ATTESTOR, attestor.key().as_ref()],
        bump = attestor_profile.bump,
        has_one = attestor,
    )]
    pub attestor_profile: Account<'info, AttestorProfile>,
    /// The capability's namespace, which must already be registered.
    #[account(
        seeds = [seeds::CAPABILITY, args.capability_hash.as_ref()],
        bump = namespace.bump,
    )]
    pub namespace: Account<'info, CapabilityNamespace>,
    /// The attestation at `["attestation", subject, capability, attestor]`, created on the
    /// first response and renewed by later ones. The signer is part of the seeds, so an
    /// attestor can only ever write its own attestation.
    /// Created by the handler on first issue (not `init_if_needed`, so lamports sent
    /// to the address in advance cannot block it; see `trust_gate_program_common::pda_account`).
    /// CHECK: verified as described above.
    #[account(
        mut,
        seeds = [
            seeds::ATTESTATION,
            args.subject_asset.as_ref(),
            args.capability_hash.as_ref(),
            attestor.key().as_ref(),
        ],
        bump,
    )]
    pub attestation: UncheckedAccount<'info>,
    /// The instructions sysvar, pinned by address; read only through the checked
    /// loaders to find an Ed25519 instruction right before this one.
    /// CHECK: verified as described above.
    #[account(address = instructions_sysvar::ID)]
    pub instructions: UncheckedAccount<'info>,
    /// Creates the attestation account on first issue.
    pub system_program: Program<'info, System>,
}

impl RespondToValidation<'_> {
    /// Validates `expires_at_slot` and converts it to unix seconds at [`SLOT_DURATION_MS`] per
    /// slot, rounding up so that an attestation is never expired in unix time while still
    /// live in slots.
    fn expiry_unix_time(clock: &Clock, expires_at_slot: u64) -> Result<i64> {
        let ahead = expires_at_slot
            .checked_sub(clock.slot)
            .filter(|ahead| *ahead > 0)
            .ok_or(ValidationRegistryError::ExpiryInPast)?;
        ahead
            .checked_mul(SLOT_DURATION_MS)
            .map(|ms| ms.div_ceil(1_000))
            .and_then(|seconds| i64::try_from(seconds).ok())
            .and_then(|seconds| clock.unix_timestamp.checked_add(seconds))
            .ok_or_else(|| error!(ValidationRegistryError::ExpiryOverflow))
    }

    /// Whether the instruction right before this one is an Ed25519 signature by `attestor`
    /// over `message`. No Ed25519 instruction there: `false`. One that signs anything else, or
    /// by anyone else: an error (a client that attaches a signature means it to be checked).
    fn verify_attestor_signature(
        instructions: &AccountInfo,
        attestor: &Pubkey,
        message: &[u8],
    ) -> Result<bool> {
        let current = load_current_index_checked(instructions)?;
        let Some(previous) = current.checked_sub(1) else {
            return Ok(false);
        };
        let instruction = load_instruction_at_checked(usize::from(previous), instructions)?;
        if instruction.program_id != ED25519_PROGRAM_ID {
            return Ok(false);
        }
        let signed = parse_single_inline(&instruction.data)
            .ok_or(ValidationRegistryError::Ed25519InstructionMalformed)?;
        require_keys_eq!(
            signed.public_key,
            *attestor,
            ValidationRegistryError::SignaturePublicKeyMismatch
        );
        require!(
            signed.message == message,
            ValidationRegistryError::SignatureMessageMismatch
        );
        Ok(true)
    }

    pub fn handler(ctx: Context<Self>, args: RespondToValidationArgs) -> Result<()> {
        let RespondToValidationArgs {
            subject_asset,
            capability_hash,
            claim_payload_hash,
            claim_uri_hash,
            expires_at_slot,
        } = args;
        let clock = Clock::get()?;
        let expires_at = Self::expiry_unix_time(&clock, expires_at_slot)?;
        let attestor = ctx.accounts.attestor.key();
        let message = attestation_message(
            &subject_asset,
            &capability_hash,
            &claim_payload_hash,
            &claim_uri_hash,
            expires_at_slot,
        );
        let signature_verified =
            Self::verify_attestor_signature(&ctx.accounts.instructions, &attestor, &message)?;

        let profile = &mut ctx.accounts.attestor_profile;
        profile.attestations_issued = profile
            .attestations_issued
            .checked_add(1)
            .ok_or(ValidationRegistryError::CounterOverflow)?;

        let existing = pda_account::load::<ValidationAttestation>(&ctx.accounts.attestation)?;
        let renewal = existing.is_some();
        let cleared_revocation = existing.as_ref().is_some_and(|a| a.revoked);
        let renewals = match &existing {
            Some(a) => a
                .renewals
                .checked_add(1)
                .ok_or(ValidationRegistryError::CounterOverflow)?,
            None => 0,
        };
        let bump = ctx.bumps.attestation;
        let value = ValidationAttestation {
            subject: subject_asset,
            capability: capability_hash,
            attestor,
            claim_payload_hash,
            claim_uri_hash,
            issued_slot: clock.slot,
            issued_at: clock.unix_timestamp,
            expires_at_slot,
            expires_at,
            revoked: false,
            revoked_at: 0,
            revocation_reason_hash: [0; 32],
            renewals,
            signature_verified,
            bump,
        };
        let attestation = &ctx.accounts.attestation;
        if renewal {
            pda_account::store(attestation, &value)?;
        } else {
            pda_account::init(
                &ctx.accounts.attestor,
                attestation,
                8 + ValidationAttestation::INIT_SPACE,
                &[
                    seeds::ATTESTATION,
                    subject_asset.as_ref(),
                    capability_hash.as_ref(),
                    attestor.as_ref(),
                    &[bump],
                ],
                &value,
            )?;
        }

        runtime::emit(&ValidationResponded {
            attestation: attestation.key(),
            subject: subject_asset,
            capability: capability_hash,
            attestor,
            claim_payload_hash,
            claim_uri_hash,
            expires_at_slot,
            expires_at,
            renewal,
            cleared_revocation,
            renewals,
            signature_verified,
            slot: clock.slot,
        });
        Ok(())
    }
}
