//! The holdback's terms as accounts store them: a payer policy's schedule (its last section)
//! and what a payee's acceptance policy accepts. The engine's `holdback` module decides with
//! them; docs/holdback.md has the rules.

use super::fixed::Fields;
use crate::engine::{self, AcceptedHoldback, HoldTerm, HoldbackConfigError, HoldbackRule};
use crate::errors::PolicyVaultError;
use anchor_lang::prelude::*;

/// One term: hold back `share_bps` (0..=10 000) of the amount for `hold_secs` (at most 30
/// days). Both zero: nothing held.
#[derive(
    AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub struct HoldbackTerm {
    pub share_bps: u16,
    pub hold_secs: u32,
}

/// A payer policy's holdback schedule, immutable with the policy.
#[derive(
    AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub struct HoldbackSchedule {
    /// By the payee's tier 0..=4 (as the policy's `gate_mode` reads it), then the term for a
    /// payee without engine stats. A better tier never holds more or longer.
    pub terms: [HoldbackTerm; engine::holdback::TERMS],
    /// Who decides a dispute of a held payment: a key, or the address of a gate arbiter set
    /// (k of n keys); never the payer's own wallet or owner (the gate refuses the settlement).
    /// The default key: no arbiter; a dispute then ends in the payee's favour unless it
    /// refunds within the arbitration period.
    pub arbiter: Pubkey,
}

/// The holdback a payee accepts, in its acceptance policy. All zero: none, so a payer
/// whose policy would hold back a share is refused (`HoldbackNotAccepted`).
#[derive(
    AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub struct HoldbackAcceptance {
    /// The largest share held back, 0..=10 000 bps.
    pub max_share_bps: u16,
    /// The longest hold, at most 30 days; given with the share.
    pub max_hold_secs: u32,
    /// Up to two arbiters accepted (keys or arbiter sets); default keys are empty slots.
    pub arbiters: [Pubkey; 2],
}

impl HoldbackSchedule {
    pub fn to_rule(&self) -> HoldbackRule {
        HoldbackRule {
            terms: self.terms.map(|t| HoldTerm {
                share_bps: t.share_bps,
                hold_secs: t.hold_secs,
            }),
            arbiter: self.arbiter,
        }
    }

    pub fn validate(&self) -> Result<()> {
        self.to_rule().validate().map_err(holdback_error)
    }

    /// Reads a schedule from `f` in Borsh's order.
    pub(crate) fn read_from(f: &mut Fields) -> HoldbackRule {
        HoldbackRule {
            terms: core::array::from_fn(|_| HoldTerm {
                share_bps: f.u16(),
                hold_secs: f.u32(),
            }),
            arbiter: f.key(),
        }
    }
}

impl HoldbackAcceptance {
    pub fn to_accepted(&self) -> AcceptedHoldback {
        AcceptedHoldback {
            max_share_bps: self.max_share_bps,
            max_hold_secs: self.max_hold_secs,
            arbiters: self.arbiters,
        }
    }

    pub(crate) fn read_from(f: &mut Fields) -> HoldbackAcceptance {
        HoldbackAcceptance {
            max_share_bps: f.u16(),
            max_hold_secs: f.u32(),
            arbiters: [f.key(), f.key()],
        }
    }
}

/// Maps the engine's holdback configuration errors 1:1 to program errors.
pub(crate) fn holdback_error(e: HoldbackConfigError) -> Error {
    error!(match e {
        HoldbackConfigError::ShareOutOfRange => PolicyVaultError::HoldbackShareOutOfRange,
        HoldbackConfigError::HoldOutOfRange => PolicyVaultError::HoldbackHoldOutOfRange,
        HoldbackConfigError::TermIncomplete => PolicyVaultError::HoldbackTermIncomplete,
        HoldbackConfigError::NotDecreasing => PolicyVaultError::HoldbackNotDecreasing,
        HoldbackConfigError::Empty => PolicyVaultError::HoldbackScheduleEmpty,
        HoldbackConfigError::DuplicateArbiter => PolicyVaultError::DuplicateArbiter,
    })
}
