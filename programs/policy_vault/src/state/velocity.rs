use crate::engine::VelocityState;
use anchor_lang::prelude::*;

/// Amount committed in the current velocity window of one policy. Only `evaluate` with
/// commit (reachable only through the gate's strict, atomic settlement) changes it.
///
/// Offsets: 8 asset, 40 policy_id, 44 cumulative, 52 window_start, 60 last_commit, 68 bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct VelocityLedger {
    pub asset: Pubkey,
    pub policy_id: u32,
    pub cumulative: u64,
    /// Unix seconds.
    pub window_start: i64,
    /// Unix seconds of the latest committed payment (0 = none).
    pub last_commit: i64,
    pub bump: u8,
}

impl VelocityLedger {
    /// Whether this is the ledger of `asset`'s policy `policy_id` (the seeds check for an
    /// account policy_vault owns, as [`super::PolicyAccount::is_for`]).
    pub fn is_for(&self, asset: &Pubkey, policy_id: u32) -> bool {
        self.asset == *asset && self.policy_id == policy_id
    }

    pub fn state(&self) -> VelocityState {
        VelocityState {
            cumulative: self.cumulative,
            window_start: self.window_start,
            last_commit: self.last_commit,
        }
    }

    pub fn store(&mut self, s: VelocityState) {
        self.cumulative = s.cumulative;
        self.window_start = s.window_start;
        self.last_commit = s.last_commit;
    }
}
