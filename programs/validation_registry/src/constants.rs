//! Protocol constants of the validation registry.

/// Nominal slot duration used to convert an attestation's expiry slot to unix seconds.
pub const SLOT_DURATION_MS: u64 = 400;

/// The farthest a validation request's deadline may lie ahead of the current slot:
/// 30 days at 400 ms per slot.
pub const MAX_DEADLINE_SLOTS: u64 = 6_480_000;

/// Domain tag that starts every message an attestor signs with Ed25519 (see
/// [`crate::attestation_message`]).
pub const ATTESTATION_MESSAGE_DOMAIN: &[u8] = b"trust-gate/attestation/v1";
