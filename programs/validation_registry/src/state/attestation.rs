use anchor_lang::prelude::*;

/// An attestor's statement that `subject` holds `capability`. One per
/// (subject, capability, attestor); responding again renews it.
///
/// Expiry is kept in both clocks: the instruction takes a slot (as the tools do) and the
/// registry converts it to unix seconds at 400 ms per slot when it writes the account, so the
/// policy engine, which works in unix time, and slot-based readers agree.
#[account]
#[derive(InitSpace, Debug)]
pub struct ValidationAttestation {
    /// The agent asset the attestation is about.
    pub subject: Pubkey,
    /// sha256 of the capability namespace name.
    pub capability: [u8; 32],
    /// The attestor that signed the response.
    pub attestor: Pubkey,
    /// Hash of the claim payload the attestor vouches for.
    pub claim_payload_hash: [u8; 32],
    /// Hash of the off-chain claim document's URI.
    pub claim_uri_hash: [u8; 32],
    /// Slot and unix time of the latest (re)issue.
    pub issued_slot: u64,
    pub issued_at: i64,
    /// Expiry as given by the attestor (slot) and as converted to unix seconds.
    pub expires_at_slot: u64,
    pub expires_at: i64,
    pub revoked: bool,
    /// Unix time of the revocation (0 when not revoked).
    pub revoked_at: i64,
    pub revocation_reason_hash: [u8; 32],
    /// How many times the attestation was renewed after its first issue.
    pub renewals: u32,
    /// Whether the latest response carried an Ed25519 signature verified on chain.
    pub signature_verified: bool,
    pub bump: u8,
}

impl ValidationAttestation {
    /// Expired at `now` (unix seconds)? An `expires_at` of 0 never expires.
    pub fn is_expired(&self, now: i64) -> bool {
        self.expires_at != 0 && now >= self.expires_at
    }
}
