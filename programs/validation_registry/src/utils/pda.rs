//! Addresses of the registry's accounts, as the SDK derives them.

use crate::state::seeds;
use anchor_lang::prelude::Pubkey;

/// `["capability", capability_hash]`
pub fn namespace(capability_hash: &[u8; 32]) -> (Pubkey, u8) {
    Pubkey::find_program_address(&[seeds::CAPABILITY, capability_hash], &crate::ID)
}

/// `["attestor", attestor]`
pub fn attestor_profile(attestor: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(&[seeds::ATTESTOR, attestor.as_ref()], &crate::ID)
}

/// `["request", subject, capability_hash, requester]`
pub fn request(subject: &Pubkey, capability_hash: &[u8; 32], requester: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(
        &[
            seeds::REQUEST,
            subject.as_ref(),
            capability_hash,
            requester.as_ref(),
        ],
        &crate::ID,
    )
}

/// `["attestation", subject, capability_hash, attestor]`
pub fn attestation(
    subject: &Pubkey,
    capability_hash: &[u8; 32],
    attestor: &Pubkey,
) -> (Pubkey, u8) {
    Pubkey::find_program_address(
        &[
            seeds::ATTESTATION,
            subject.as_ref(),
            capability_hash,
            attestor.as_ref(),
        ],
        &crate::ID,
    )
}
