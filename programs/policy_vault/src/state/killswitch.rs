use super::fixed::{Fields, FixedLayout};
use anchor_lang::prelude::*;

/// An agent's emergency stop. While `paused`, every payment of the agent is denied with
/// reason 1 (KillSwitchEngaged), whatever its policies say.
///
/// Offsets: 8 asset, 40 paused, 41 paused_at, 49 paused_by, 81 unpaused_at, 89 bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct KillSwitchState {
    pub asset: Pubkey,
    pub paused: bool,
    /// Unix time of the latest pause (0 = never paused).
    pub paused_at: i64,
    /// The member that led the latest pause.
    pub paused_by: Pubkey,
    /// Unix time of the latest unpause (0 = never).
    pub unpaused_at: i64,
    pub bump: u8,
}

impl FixedLayout for KillSwitchState {
    const FIELDS_LEN: usize = 82;

    fn read_fields(data: &[u8]) -> Option<KillSwitchState> {
        let f = &mut Fields::new(data, Self::FIELDS_LEN)?;
        Some(KillSwitchState {
            asset: f.key(),
            paused: f.bool()?,
            paused_at: f.i64(),
            paused_by: f.key(),
            unpaused_at: f.i64(),
            bump: f.u8(),
        })
    }
}

impl KillSwitchState {
    /// Whether this is `asset`'s kill switch (the seeds check for an account policy_vault
    /// owns, as [`super::PolicyAccount::is_for`]).
    pub fn is_for(&self, asset: &Pubkey) -> bool {
        self.asset == *asset
    }

    /// A new, unpaused kill switch.
    pub fn new(asset: Pubkey, bump: u8) -> Self {
        KillSwitchState {
            asset,
            paused: false,
            paused_at: 0,
            paused_by: Pubkey::default(),
            unpaused_at: 0,
            bump,
        }
    }
}
