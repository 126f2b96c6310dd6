use super::fixed::{Fields, FixedLayout};
use anchor_lang::prelude::*;
use trust_gate_program_common::pda_account;

/// An agent's emergency stop. While `paused`, every payment of the agent is denied with
/// reason 1 (KillSwitchEngaged), whatever its policies say.
///
/// It also counts the hand-overs of the agent's authority (`authority_generation`), because
/// every evaluation reads it: a payment approval counts only under the generation it was
/// given in (see [`super::PaymentApproval`]).
///
/// Offsets: 8 asset, 40 paused, 41 paused_at, 49 paused_by, 81 unpaused_at, 89 bump,
/// 90 authority_generation (u32 LE).
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
    /// How many times the authority changed hands (a take-over completed or accepted) since
    /// the kill switch was created.
    pub authority_generation: u32,
}

impl FixedLayout for KillSwitchState {
    const FIELDS_LEN: usize = 86;

    fn read_fields(data: &[u8]) -> Option<KillSwitchState> {
        let f = &mut Fields::new(data, Self::FIELDS_LEN)?;
        Some(KillSwitchState {
            asset: f.key(),
            paused: f.bool()?,
            paused_at: f.i64(),
            paused_by: f.key(),
            unpaused_at: f.i64(),
            bump: f.u8(),
            authority_generation: f.u32(),
        })
    }
}

/// Where the fields after the discriminator keep `paused` and `authority_generation`.
const PAUSED_AT: usize = 32;
const GENERATION_AT: usize = KillSwitchState::FIELDS_LEN - 4;

impl KillSwitchState {
    /// Whether the kill switch at `info`, checked as an `Account` is (owner, discriminator,
    /// layout: the same errors as [`super::fixed::read`]) and to be `asset`'s
    /// (`ConstraintSeeds`), is paused. An evaluation reads only this, in place: every
    /// settlement reads the kill switch.
    pub fn paused_in(info: &AccountInfo, asset: &Pubkey) -> Result<bool> {
        pda_account::check_owner(info, &crate::ID)?;
        let data = info.try_borrow_data()?;
        let fields: &[u8; Self::FIELDS_LEN] = super::fixed::fields_of::<Self>(&data)?
            .first_chunk()
            .ok_or(ErrorCode::AccountDidNotDeserialize)?;
        let paused = match fields[PAUSED_AT] {
            0 => false,
            1 => true,
            _ => return err!(ErrorCode::AccountDidNotDeserialize),
        };
        require!(
            fields[..PAUSED_AT] == asset.to_bytes(),
            ErrorCode::ConstraintSeeds
        );
        Ok(paused)
    }

    /// The authority generation of the kill switch whose data is `data` (checked by
    /// [`Self::paused_in`]): read only for a payment with an approval.
    pub fn authority_generation_in(data: &[u8]) -> Option<u32> {
        let at = 8 + GENERATION_AT;
        data.get(at..at + 4)
            .and_then(|g| g.try_into().ok())
            .map(u32::from_le_bytes)
    }

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
            authority_generation: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::AccountSerialize;

    /// An account of policy_vault's holding `data`.
    fn with_account<R>(data: &mut [u8], f: impl FnOnce(&AccountInfo) -> R) -> R {
        let key = Pubkey::new_unique();
        let mut lamports = 1_000_000;
        let owner = crate::ID;
        let info = AccountInfo::new(&key, false, false, &mut lamports, data, &owner, false);
        f(&info)
    }

    #[test]
    fn an_evaluation_reads_what_borsh_stores() {
        let asset = Pubkey::new_unique();
        let mut ks = KillSwitchState::new(asset, 253);
        ks.authority_generation = 7;
        for paused in [false, true] {
            ks.paused = paused;
            let mut data = Vec::new();
            ks.try_serialize(&mut data).unwrap();
            assert_eq!(data.len(), 8 + KillSwitchState::INIT_SPACE);
            assert_eq!(KillSwitchState::authority_generation_in(&data), Some(7));
            let read = with_account(&mut data, |i| KillSwitchState::paused_in(i, &asset));
            assert_eq!(read.unwrap(), paused);
            let other = Pubkey::new_unique();
            let read = with_account(&mut data, |i| KillSwitchState::paused_in(i, &other));
            assert_eq!(read.unwrap_err(), ErrorCode::ConstraintSeeds.into());
        }
        let mut data = Vec::new();
        ks.try_serialize(&mut data).unwrap();
        data[8 + PAUSED_AT] = 2;
        let read = with_account(&mut data, |i| KillSwitchState::paused_in(i, &asset));
        assert_eq!(
            read.unwrap_err(),
            ErrorCode::AccountDidNotDeserialize.into()
        );
        let short = &mut data[..8 + KillSwitchState::FIELDS_LEN - 1].to_vec();
        let read = with_account(short, |i| KillSwitchState::paused_in(i, &asset));
        assert_eq!(
            read.unwrap_err(),
            ErrorCode::AccountDidNotDeserialize.into()
        );
        assert_eq!(KillSwitchState::authority_generation_in(short), None);
        data[0] ^= 1;
        let read = with_account(&mut data, |i| KillSwitchState::paused_in(i, &asset));
        assert_eq!(
            read.unwrap_err(),
            ErrorCode::AccountDiscriminatorMismatch.into()
        );
    }
}
