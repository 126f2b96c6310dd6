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
//!
//! A request can be completed only for as long again as it waited: from `effective_at` to
//! `effective_at` plus its delay. Past that it has lapsed (an old request must not take
//! effect at once when its new owner holds the asset again months later): anyone closes it,
//! its rent going to whoever paid it, and the owner asks again. A hand-over (completed or
//! accepted) resets the guard to the default delay without a recovery key, which were the
//! earlier members' choice, and voids the payment approvals given before it (see
//! [`crate::state::approval`]).

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
    /// What a hand-over leaves: the default delay and no recovery key, until the new
    /// authority's threshold sets its own.
    pub fn reset(&mut self) {
        self.take_over_delay_secs = DEFAULT_TAKE_OVER_DELAY_SECS;
        self.recovery = Pubkey::default();
    }

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
/// until it is completed, accepted, cancelled or closed once lapsed, even while the asset is
/// elsewhere (it applies only while `new_owner` owns the asset, and only until it lapses: see
/// [`TakeOverRequest::lapses_after`]).
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

impl TakeOverRequest {
    /// The last second at which the request may be completed or accepted: `effective_at`
    /// plus its delay (`effective_at - requested_at`, the delay in force when it was made).
    pub fn lapses_after(&self) -> i64 {
        self.effective_at
            .saturating_add(self.effective_at.saturating_sub(self.requested_at))
    }

    /// Whether the request has lapsed at unix time `now`: it can no longer take effect.
    pub fn has_lapsed(&self, now: i64) -> bool {
        now > self.lapses_after()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_lapses_one_delay_after_it_takes_effect() {
        let r = TakeOverRequest {
            asset: Pubkey::new_unique(),
            bump: 255,
            new_owner: Pubkey::new_unique(),
            rent_payer: Pubkey::new_unique(),
            requested_at: 1_000,
            effective_at: 4_600,
            threshold: 1,
            members: vec![Pubkey::new_unique()],
        };
        assert_eq!(r.lapses_after(), 8_200);
        assert!(!r.has_lapsed(4_600));
        assert!(!r.has_lapsed(8_200));
        assert!(r.has_lapsed(8_201));
    }

    #[test]
    fn a_reset_guard_has_the_default_delay_and_no_recovery_key() {
        let mut g = AuthorityGuard {
            asset: Pubkey::new_unique(),
            bump: 254,
            take_over_delay_secs: MAX_TAKE_OVER_DELAY_SECS,
            recovery: Pubkey::new_unique(),
        };
        let asset = g.asset;
        g.reset();
        assert_eq!(
            (g.asset, g.bump, g.take_over_delay_secs, g.recovery()),
            (asset, 254, DEFAULT_TAKE_OVER_DELAY_SECS, None)
        );
    }
}
