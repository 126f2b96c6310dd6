use anchor_lang::prelude::*;

/// A request that an attestor validate `subject` for `capability`.
#[account]
#[derive(InitSpace, Debug)]
pub struct ValidationRequest {
    pub subject: Pubkey,
    pub capability: [u8; 32],
    pub requester: Pubkey,
    pub claim_uri_hash: [u8; 32],
    /// The slot by which the requester wants an answer.
    pub deadline_slot: u64,
    pub created_slot: u64,
    pub bump: u8,
}
