//! Events, one per state change, logged as `Program data: <base64>` (Anchor's event format).

use anchor_lang::prelude::*;

/// A capability namespace was registered.
#[event]
pub struct NamespaceRegistered {
    pub namespace: Pubkey,
    /// sha256(name), the capability hash.
    pub hash: [u8; 32],
    pub name: String,
    pub version: String,
    pub schema_uri: String,
    pub registrant: Pubkey,
    pub slot: u64,
}

/// An attestor registered its profile.
#[event]
pub struct AttestorRegistered {
    pub profile: Pubkey,
    pub attestor: Pubkey,
    pub display_name_uri: String,
    pub slot: u64,
}

/// A validation was requested.
#[event]
pub struct ValidationRequested {
    pub request: Pubkey,
    pub subject: Pubkey,
    pub capability: [u8; 32],
    pub requester: Pubkey,
    pub claim_uri_hash: [u8; 32],
    pub deadline_slot: u64,
    pub slot: u64,
}

/// An attestor issued (first response) or renewed an attestation.
#[event]
pub struct ValidationResponded {
    pub attestation: Pubkey,
    pub subject: Pubkey,
    pub capability: [u8; 32],
    pub attestor: Pubkey,
    pub claim_payload_hash: [u8; 32],
    pub claim_uri_hash: [u8; 32],
    pub expires_at_slot: u64,
    pub expires_at: i64,
    /// True when this response renewed an existing attestation.
    pub renewal: bool,
    /// True when a revoked attestation was reinstated by this renewal.
    pub cleared_revocation: bool,
    pub renewals: u32,
    pub signature_verified: bool,
    pub slot: u64,
}

/// An attestor revoked its attestation.
#[event]
pub struct ValidationRevoked {
    pub attestation: Pubkey,
    pub subject: Pubkey,
    pub capability: [u8; 32],
    pub attestor: Pubkey,
    pub reason_hash: [u8; 32],
    pub revoked_at: i64,
    pub slot: u64,
}
