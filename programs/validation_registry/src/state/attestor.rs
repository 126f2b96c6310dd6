use anchor_lang::prelude::*;

pub const MAX_DISPLAY_NAME_URI_LEN: usize = 100;

/// A registered attestor. Required before the attestor can respond to validations.
#[account]
#[derive(InitSpace, Debug)]
pub struct AttestorProfile {
    pub attestor: Pubkey,
    #[max_len(MAX_DISPLAY_NAME_URI_LEN)]
    pub display_name_uri: String,
    /// Responses (first issues and renewals) made by this attestor.
    pub attestations_issued: u64,
    pub revocations: u64,
    pub created_slot: u64,
    pub bump: u8,
}
