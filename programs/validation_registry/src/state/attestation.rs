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

    /// The account's length, its discriminator included.
    pub const LEN: usize = 8 + Self::INIT_SPACE;
}

/// Where Borsh keeps the fields a policy evaluation reads (a unit test holds them to the
/// serialization).
pub mod offsets {
    pub const SUBJECT: usize = 8;
    pub const CAPABILITY: usize = 40;
    pub const ATTESTOR: usize = 72;
    pub const EXPIRES_AT: usize = 192;
    pub const REVOKED: usize = 200;
}

/// The fields of an attestation that a policy evaluation reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttestationFields {
    pub subject: Pubkey,
    pub capability: [u8; 32],
    pub attestor: Pubkey,
    pub revoked: bool,
    pub expires_at: i64,
}

/// Reads those fields from an attestation's data in place (deserializing the whole account
/// cost policy_vault about 400 compute units per attestation); `None` unless `data` is a
/// ValidationAttestation's (discriminator and length; the caller checks the owner).
pub fn fields(data: &[u8]) -> Option<AttestationFields> {
    if data.len() != ValidationAttestation::LEN
        || !data.starts_with(ValidationAttestation::DISCRIMINATOR)
    {
        return None;
    }
    let bytes = |at: usize| -> [u8; 32] { data[at..at + 32].try_into().unwrap_or_default() };
    Some(AttestationFields {
        subject: Pubkey::new_from_array(bytes(offsets::SUBJECT)),
        capability: bytes(offsets::CAPABILITY),
        attestor: Pubkey::new_from_array(bytes(offsets::ATTESTOR)),
        revoked: data[offsets::REVOKED] != 0,
        expires_at: i64::from_le_bytes(
            data[offsets::EXPIRES_AT..offsets::EXPIRES_AT + 8]
                .try_into()
                .unwrap_or_default(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::AccountSerialize;

    #[test]
    fn the_fields_read_in_place_are_the_serialized_ones() {
        let a = ValidationAttestation {
            subject: Pubkey::new_unique(),
            capability: [7; 32],
            attestor: Pubkey::new_unique(),
            claim_payload_hash: [1; 32],
            claim_uri_hash: [2; 32],
            issued_slot: 3,
            issued_at: 4,
            expires_at_slot: 5,
            expires_at: -6,
            revoked: true,
            revoked_at: 8,
            revocation_reason_hash: [9; 32],
            renewals: 10,
            signature_verified: true,
            bump: 254,
        };
        let mut data = Vec::new();
        a.try_serialize(&mut data).unwrap();
        assert_eq!(data.len(), ValidationAttestation::LEN);
        let f = fields(&data).unwrap();
        assert_eq!(
            (f.subject, f.capability, f.attestor, f.revoked, f.expires_at),
            (a.subject, a.capability, a.attestor, a.revoked, a.expires_at)
        );
        data[0] ^= 1;
        assert_eq!(fields(&data), None);
        data[0] ^= 1;
        assert_eq!(fields(&data[..data.len() - 1]), None);
    }
}
