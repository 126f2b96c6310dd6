use anchor_lang::prelude::*;

/// A dispute of a settled payment. Separate from the feedback log so that a settled payment
/// can be disputed, once.
///
/// Offsets: 8 facilitator, 40 payment_id_hash, 72 payee_asset, 104 reason_hash, 136 slot,
/// 144 created_at, 152 disputed_by, 184 bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct DisputeRecord {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    pub reason_hash: [u8; 32],
    pub slot: u64,
    pub created_at: i64,
    /// The payer's wallet that signed the dispute.
    pub disputed_by: Pubkey,
    pub bump: u8,
}
