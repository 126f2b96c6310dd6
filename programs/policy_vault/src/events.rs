//! Events, one per state change (and one per evaluation). Emitted through
//! `trust_gate_program_common::runtime::emit` so they also appear natively.

use anchor_lang::prelude::*;

#[event]
pub struct AuthorityInitialized {
    pub asset: Pubkey,
    pub members: Vec<Pubkey>,
    pub threshold: u8,
    pub initialized_by: Pubkey,
}

#[event]
pub struct AuthorityTakenOver {
    pub asset: Pubkey,
    pub previous_owner: Pubkey,
    pub owner: Pubkey,
    pub members: Vec<Pubkey>,
    pub threshold: u8,
}

/// The asset's live owner asked to take the authority over; it may take effect from
/// `effective_at` unless the members cancel it first.
#[event]
pub struct TakeOverRequested {
    pub asset: Pubkey,
    /// The authority's owner now.
    pub owner: Pubkey,
    pub new_owner: Pubkey,
    pub members: Vec<Pubkey>,
    pub threshold: u8,
    pub effective_at: i64,
}

/// The members in force cancelled a pending take-over.
#[event]
pub struct TakeOverCancelled {
    pub asset: Pubkey,
    pub new_owner: Pubkey,
    pub by: Pubkey,
    pub signers: u8,
}

/// Anyone closed a take-over request that had lapsed (it could be completed up to
/// `lapsed_after`); its rent went back to `rent_payer`.
#[event]
pub struct TakeOverLapsedClosed {
    pub asset: Pubkey,
    pub new_owner: Pubkey,
    pub rent_payer: Pubkey,
    pub lapsed_after: i64,
}

/// The authority's threshold set the take-over delay and the recovery key.
#[event]
pub struct AuthorityGuardSet {
    pub asset: Pubkey,
    pub take_over_delay_secs: u32,
    pub recovery: Pubkey,
    pub by: Pubkey,
    pub signers: u8,
}

#[event]
pub struct AuthorityRotated {
    pub asset: Pubkey,
    pub members: Vec<Pubkey>,
    pub threshold: u8,
    pub signers: u8,
}

#[event]
pub struct KillSwitchInitialized {
    pub asset: Pubkey,
}

#[event]
pub struct KillSwitchSet {
    pub asset: Pubkey,
    pub paused: bool,
    pub by: Pubkey,
    pub at: i64,
    pub signers: u8,
}

#[event]
pub struct PolicyCreated {
    pub asset: Pubkey,
    pub policy_id: u32,
    pub kinds: u8,
    pub mint: Pubkey,
    /// `PolicyParams::funding`: 0 the payer's wallet, 1 the agent's vault.
    pub funding: u8,
    pub created_by: Pubkey,
    /// Distinct member signatures (at least the authority's threshold).
    pub signers: u8,
    /// A payment of more needs an approval (0 = none).
    pub approval_threshold: u64,
    /// Whether the policy sets limit rules (list, window, monthly, lifetime, per-payee).
    pub limits: bool,
}

/// The authority's members approved one payment's terms (`approve_payment`).
#[event]
pub struct PaymentApproved {
    pub approval: Pubkey,
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    pub policy_id: u32,
    pub expires_at: i64,
    pub by: Pubkey,
    /// Distinct member signatures (at least the threshold in force).
    pub signers: u8,
}

/// A payment approval ended: consumed by the payment it approved, or closed unused.
#[event]
pub struct ApprovalClosed {
    pub approval: Pubkey,
    pub payer_asset: Pubkey,
    /// Whether a payment consumed it (else it was closed unused).
    pub consumed: bool,
}

/// The authority's threshold edited a policy's payee list.
#[event]
pub struct PayeeListEdited {
    pub asset: Pubkey,
    pub policy_id: u32,
    pub added: u16,
    pub removed: u16,
    /// Entries after the edit.
    pub entries: u16,
    pub by: Pubkey,
    pub signers: u8,
}

#[event]
pub struct PolicyRetired {
    pub asset: Pubkey,
    pub policy_id: u32,
    pub retired_at: i64,
    pub by: Pubkey,
    pub signers: u8,
}

#[event]
pub struct VaultSpenderSet {
    pub asset: Pubkey,
    pub policy_id: u32,
    pub spender: Pubkey,
    pub by: Pubkey,
    pub signers: u8,
}

#[event]
pub struct AcceptancePolicySet {
    pub asset: Pubkey,
    pub min_payer_tier: u8,
    pub required_capability: [u8; 32],
    pub replaced: bool,
}

/// The agent's vault for `mint` was opened (by the authority's threshold).
#[event]
pub struct VaultOpened {
    pub asset: Pubkey,
    pub mint: Pubkey,
    pub vault: Pubkey,
    pub opened_by: Pubkey,
    pub signers: u8,
}

/// The authority's threshold moved `amount` out of the vault to `destination`.
#[event]
pub struct VaultWithdrawn {
    pub asset: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    pub destination: Pubkey,
    pub by: Pubkey,
    pub signers: u8,
}
