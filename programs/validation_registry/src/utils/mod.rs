//! Pure helpers shared by the instructions and by clients.

pub mod ed25519;
pub mod pda;

use crate::constants::ATTESTATION_MESSAGE_DOMAIN;
use anchor_lang::prelude::Pubkey;

/// The message an attestor signs with Ed25519 to vouch for a response:
/// `"trust-gate/attestation/v1" || subject (32) || capability (32) || claim_payload_hash (32)
/// || claim_uri_hash (32) || expires_at_slot (u64 little endian)`.
pub fn attestation_message(
    subject: &Pubkey,
    capability: &[u8; 32],
    claim_payload_hash: &[u8; 32],
    claim_uri_hash: &[u8; 32],
    expires_at_slot: u64,
) -> Vec<u8> {
    let mut message = Vec::with_capacity(ATTESTATION_MESSAGE_DOMAIN.len() + 4 * 32 + 8);
    message.extend_from_slice(ATTESTATION_MESSAGE_DOMAIN);
    message.extend_from_slice(subject.as_ref());
    message.extend_from_slice(capability);
    message.extend_from_slice(claim_payload_hash);
    message.extend_from_slice(claim_uri_hash);
    message.extend_from_slice(&expires_at_slot.to_le_bytes());
    message
}
