use anchor_lang::prelude::*;

/// The receipt of one payment's feedback, keyed by the payment id hash. Init-only: a
/// payment's feedback is recorded once.
///
/// Offsets: 8 facilitator, 40 payment_id_hash, 72 payee_asset, 104 payer_asset, 136 mint,
/// 168 amount, 176 score, 177 value, 185 value_decimals, 186 slot, 194 created_at,
/// 202 settled_atomically, 203 payer_wallet, 235 bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct FeedbackEmissionLog {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    /// From the settlement's gate instruction; default when not settled atomically.
    pub payer_asset: Pubkey,
    /// From the settlement's gate instruction; default when not settled atomically.
    pub mint: Pubkey,
    /// From the settlement's gate instruction; 0 when not settled atomically.
    pub amount: u64,
    pub score: u8,
    pub value: u64,
    pub value_decimals: u8,
    pub slot: u64,
    pub created_at: i64,
    /// True only when emitted as the last instruction of [gate_payment_strict,
    /// TransferChecked, emit_feedback] for the same payee, i.e. the money moved.
    pub settled_atomically: bool,
    /// The settlement's transfer authority (the payer's wallet): the only key that may
    /// dispute the payment. Default when not settled atomically.
    pub payer_wallet: Pubkey,
    pub bump: u8,
}

impl FeedbackEmissionLog {
    /// Whether this is the log of `facilitator`'s payment `payment_id_hash`. The gate
    /// creates a log only at the canonical PDA of the two it stores, so for an account the
    /// gate owns this is the seeds check without hashing.
    pub fn is_for(&self, facilitator: &Pubkey, payment_id_hash: &[u8; 32]) -> bool {
        self.facilitator == *facilitator && self.payment_id_hash == *payment_id_hash
    }
}
