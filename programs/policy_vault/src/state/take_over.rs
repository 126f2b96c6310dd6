//! The hand-over of an agent's policy authority to the asset's new owner: never at once.
//!
//! An agent is its MPL Core asset, and the asset can change hands without the authority
//! taking part. Were the asset's new owner to take the authority over at once, the owner
//! could walk around the threshold in one transaction: move the asset to a second key of its
//! own, take the authority over as that key alone, and empty the vault. So a take-over is a
//! request ([`TakeOverRequest`]) that takes effect only after the delay the authority's
//! threshold chose ([`AuthorityGuard`], or [`DEFAULT_TAKE_OVER_DELAY_SECS`]). Until it does,
//! the old members and threshold stay in force for what protects the agent: they pause it,
//! cancel the request, accept it at once (a sale they agree to), or withdraw the vault to the
//! recovery key they named before.

use super::authority::MAX_MEMBERS;
use crate::errors::PolicyVaultError;
use anchor_lang::prelude::*;
use trust_gate_program_common::pda_account;

/// The delay when the authority names none: long enough for members to notice a request
/// (the `TakeOverRequested` event, the account at `["take_over", asset]`) and answer it.
pub const DEFAULT_TAKE_OVER_DELAY_SECS: u32 = 3 * 24 * 3600;
/// Shorter would leave members no time to answer; the threshold may choose within this range.
pub const MIN_TAKE_OVER_DELAY_SECS: u32 = 3600;
pub const MAX_TAKE_OVER_DELAY_SECS: u32 = 90 * 24 * 3600;

/// What the authority's threshold set for a hand-over of the agent. Absent: the default delay
/// and no recovery key.
///
/// Offsets: 8 asset, 40 bump, 41 take_over_delay_secs (u32 LE), 45 recovery.
#[account]
#[derive(InitSpace, Debug)]
pub struct AuthorityGuard {
    pub asset: Pubkey,
    pub bump: u8,
    /// Seconds between a take-over request and the moment it may take effect.
    pub take_over_delay_secs: u32,
    /// The key whose token accounts the members may withdraw the vault to while the asset
    /// is with another owner; the default (all-zero) key: none.
    pub recovery: Pubkey,
}

impl AuthorityGuard {
    /// The recovery key, when one is named.
    pub fn recovery(&self) -> Option<Pubkey> {
        (self.recovery != Pubkey::default()).then_some(self.recovery)
    }
}

/// The guard stored at `info` (its address checked by the caller's seeds), or `None` when the
/// authority never set one.
pub fn load_guard(info: &AccountInfo) -> Result<Option<AuthorityGuard>> {
    pda_account::load::<AuthorityGuard>(info)
}

/// The take-over delay in force for a guard account.
pub fn take_over_delay(guard: Option<&AuthorityGuard>) -> u32 {
    guard.map_or(DEFAULT_TAKE_OVER_DELAY_SECS, |g| g.take_over_delay_secs)
}

pub fn validate_delay(secs: u32) -> Result<()> {
    require!(
        (MIN_TAKE_OVER_DELAY_SECS..=MAX_TAKE_OVER_DELAY_SECS).contains(&secs),
        PolicyVaultError::TakeOverDelayOutOfRange
    );
    Ok(())
}

/// A live owner's request to take the authority over, pending until `effective_at`. It stands
/// until it is completed, accepted or cancelled, even while the asset is elsewhere (it applies
/// only while `new_owner` owns the asset).
///
/// Offsets: 8 asset, 40 bump, 41 new_owner, 73 rent_payer, 105 requested_at (i64 LE),
/// 113 effective_at (i64 LE), 121 threshold, 122 members (Borsh Vec, at most 7).
#[account]
#[derive(InitSpace, Debug)]
pub struct TakeOverRequest {
    pub asset: Pubkey,
    pub bump: u8,
    /// The asset's live owner when it asked: the authority's owner to be.
    pub new_owner: Pubkey,
    /// Who paid the account's rent; it gets the lamports back when the request closes.
    pub rent_payer: Pubkey,
    pub requested_at: i64,
    /// Unix time from which the request may be completed.
    pub effective_at: i64,
    pub threshold: u8,
    #[max_len(MAX_MEMBERS)]
    pub members: Vec<Pubkey>,
}
