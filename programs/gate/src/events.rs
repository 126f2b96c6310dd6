//! Events, one per state change and one per decision. Emitted through
//! `trust_gate_program_common::runtime::emit` so they also appear natively.

use crate::holdback::HoldState;
use anchor_lang::prelude::*;

/// A gate decision, logged by gate_payment. `kind`/`reason_code`/`subject`/`capability`
/// follow the 35-byte decision wire format (`policy_vault::engine::Decision::to_wire`). A
/// settlement's gate_payment_strict logs none: its decision is Allow or the transaction
/// fails, and emit_feedback's FeedbackEmitted records the payment.
#[event]
pub struct GateDecision {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub amount: u64,
    pub mint: Pubkey,
    pub policy_id: u32,
    pub kind: u8,
    pub reason_code: u8,
    pub subject: u8,
    pub capability: [u8; 32],
    /// Always false now (gate_payment_strict logged its decisions with true before it
    /// stopped logging them); kept so that every GateDecision decodes alike.
    pub strict: bool,
}

#[event]
pub struct GateAuthorityInitialized {
    pub facilitator: Pubkey,
    pub gate_authority: Pubkey,
}

#[event]
pub struct FeedbackEmitted {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    pub payer_asset: Pubkey,
    pub amount: u64,
    pub score: u8,
    /// The payment's deadline: its log closes after it and the dispute window.
    pub deadline: i64,
}

/// A payment's log (and its dispute record, if any) closed, the rent returned.
#[event]
pub struct PaymentRecordsClosed {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    /// Lamports returned to the facilitator (the log's rent).
    pub log_lamports: u64,
    /// Lamports returned to the dispute record's rent payer; 0 when it was not disputed.
    pub dispute_lamports: u64,
}

#[event]
pub struct PaymentDisputed {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    pub reason_hash: [u8; 32],
    pub disputed_by: Pubkey,
    /// Whether the dispute froze the payment's held share (a dispute within its hold).
    pub holdback_frozen: bool,
}

#[event]
pub struct AgentRegistered {
    pub asset: Pubkey,
    pub owner: Pubkey,
    pub agent_account: Pubkey,
}

/// A channel the gate let open closed through it (`gate_channel_close`).
#[event]
pub struct ChannelClosed {
    pub channel: Pubkey,
    pub facilitator: Pubkey,
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    /// What the gated open counted.
    pub deposit: u64,
    /// The channel's final settled amount (above `deposit` after an ungated top-up).
    pub settled: u64,
    /// Given back to the payer's policy: `deposit − min(settled, deposit)`.
    pub refunded: u64,
    /// The receipt's payment id (`channel::payment_id_hash`).
    pub payment_id_hash: [u8; 32],
    /// Whether a feedback and a receipt were written (settled > 0).
    pub feedback: bool,
}

/// The record of a channel the program deleted before the gate saw it sealed, closed
/// without feedback and without giving anything back (`close_channel_record`).
#[event]
pub struct ChannelRecordClosed {
    pub channel: Pubkey,
    pub facilitator: Pubkey,
    /// The deposit the gated open counted, which stays counted.
    pub deposit: u64,
}

/// A held share left the escrow (docs/holdback.md).
#[event]
pub struct HoldbackPaidOut {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    /// The token account paid.
    pub to: Pubkey,
    pub amount: u64,
    /// Released, Refunded, Upheld, Rejected or Lapsed.
    pub outcome: HoldState,
}

/// A gated subscription: its record, the delegation it pulls and its terms.
#[event]
pub struct Subscribed {
    pub gated_subscription: Pubkey,
    pub delegation: Pubkey,
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub facilitator: Pubkey,
    pub delegator: Pubkey,
    pub mint: Pubkey,
    pub policy_id: u32,
    pub amount_per_period: u64,
    pub period_length_s: u64,
}

/// One pull of a gated subscription: its receipt is the FeedbackLog of `payment_id_hash`.
#[event]
pub struct Pulled {
    pub delegation: Pubkey,
    pub facilitator: Pubkey,
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub amount: u64,
    pub payment_id_hash: [u8; 32],
    pub score: u8,
}

/// A gated subscription ended; `revoked`: its delegation was still open and was revoked.
#[event]
pub struct Unsubscribed {
    pub gated_subscription: Pubkey,
    pub delegation: Pubkey,
    pub delegator: Pubkey,
    pub revoked: bool,
}
