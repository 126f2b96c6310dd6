use anchor_lang::prelude::*;

/// One per facilitator. Its PDA is the registry "client" that signs feedback, so feedback
/// from a facilitator is attributable and cannot be forged by others.
///
/// Offsets: 8 facilitator, 40 feedback_count, 48 settled_count, 56 dispute_count,
/// 64 created_slot, 72 bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct GateAuthority {
    pub facilitator: Pubkey,
    /// Feedback emissions (settled or standalone).
    pub feedback_count: u64,
    /// Emissions made inside an atomic settlement.
    pub settled_count: u64,
    pub dispute_count: u64,
    pub created_slot: u64,
    pub bump: u8,
}

impl GateAuthority {
    /// Whether this is `facilitator`'s authority. The gate creates a GateAuthority only at
    /// the canonical PDA of the facilitator it stores, so for an account the gate owns this
    /// is the seeds check without hashing.
    pub fn is_for(&self, facilitator: &Pubkey) -> bool {
        self.facilitator == *facilitator
    }
}
