use super::fixed::{Fields, FixedLayout};
use super::policy::put;
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

    /// Writes the state into a VelocityLedger's `data` in place, at the offsets above (see
    /// `PolicyAccount::write_counters`).
    pub fn write_state(data: &mut [u8], s: &VelocityState) {
        put(data, state_at::CUMULATIVE, s.cumulative.to_le_bytes());
        put(data, state_at::WINDOW_START, s.window_start.to_le_bytes());
        put(data, state_at::LAST_COMMIT, s.last_commit.to_le_bytes());
    }
}

impl FixedLayout for VelocityLedger {
    const FIELDS_LEN: usize = 61;

    fn read_fields(data: &[u8]) -> Option<VelocityLedger> {
        let f = &mut Fields::new(data, Self::FIELDS_LEN)?;
        Some(VelocityLedger {
            asset: f.key(),
            policy_id: f.u32(),
            cumulative: f.u64(),
            window_start: f.i64(),
            last_commit: f.i64(),
            bump: f.u8(),
        })
    }
}

/// Where Borsh keeps a VelocityLedger's state in its data (a unit test holds them to the
/// serialization).
pub mod state_at {
    pub const CUMULATIVE: usize = 44;
    pub const WINDOW_START: usize = 52;
    pub const LAST_COMMIT: usize = 60;
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::{AccountDeserialize, AccountSerialize};

    #[test]
    fn state_written_in_place_is_what_borsh_would_store() {
        let mut expected = VelocityLedger {
            asset: Pubkey::new_unique(),
            policy_id: 3,
            cumulative: 1,
            window_start: 2,
            last_commit: 3,
            bump: 4,
        };
        let mut data = Vec::new();
        expected.try_serialize(&mut data).unwrap();
        let s = VelocityState {
            cumulative: u64::MAX,
            window_start: -5,
            last_commit: 1 << 33,
        };
        VelocityLedger::write_state(&mut data, &s);
        expected.store(s);
        let mut again = Vec::new();
        expected.try_serialize(&mut again).unwrap();
        assert_eq!(data, again);
        let read = VelocityLedger::try_deserialize(&mut &data[..]).unwrap();
        assert_eq!(read.state(), s);
    }
}
