//! PDA seed prefixes (the SDK derives the same addresses).

/// `["capability", sha256(name)]` -> [`crate::state::CapabilityNamespace`]
pub const CAPABILITY: &[u8] = b"capability";
/// `["attestor", attestor]` -> [`crate::state::AttestorProfile`]
pub const ATTESTOR: &[u8] = b"attestor";
/// `["request", subject, capability_hash, requester]` -> [`crate::state::ValidationRequest`]
pub const REQUEST: &[u8] = b"request";
/// `["attestation", subject, capability_hash, attestor]` -> [`crate::state::ValidationAttestation`]
pub const ATTESTATION: &[u8] = b"attestation";
