use anchor_lang::prelude::*;

/// One per facilitator. Its PDA is the registry "client" that signs feedback, so feedback
/// from a facilitator is attributable and cannot be forged by others.
///
/// Offsets: 8 facilitator, 40 feedback_count, 48 settled_count, 56 dispute_count,
/// 64 created_slot, 72 bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct GateAuthority {
    pub facilitator: Pubkey,
    /// Feedback emissions (settled or standalone).
    pub feedback_count: u64,
    /// Emissions made inside an atomic settlement.
    pub settled_count: u64,
    pub dispute_count: u64,
    pub created_slot: u64,
    pub bump: u8,
}

impl GateAuthority {
    /// Whether this is `facilitator`'s authority. The gate creates a GateAuthority only at
    /// the canonical PDA of the facilitator it stores, so for an account the gate owns this
    /// is the seeds check without hashing.
    pub fn is_for(&self, facilitator: &Pubkey) -> bool {
        self.facilitator == *facilitator
    }

    /// Writes the three counters into a GateAuthority's `data` in place, at the offsets
    /// above: emit_feedback changes nothing else, and Anchor serializing the whole account
    /// again on exit cost about 500 compute units. `data` is an account
    /// `pda_account::read` accepted.
    pub fn write_counters(&self, data: &mut [u8]) {
        for (at, value) in [
            (40, self.feedback_count),
            (48, self.settled_count),
            (56, self.dispute_count),
        ] {
            data[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
    }

    /// Counts one feedback given for money that moved (a settlement's, a channel's close)
    /// and writes the counters into `info`'s data in place (see [`Self::write_counters`]).
    pub fn count_settled_feedback(&mut self, info: &AccountInfo) -> Result<()> {
        let overflow = || error!(crate::errors::GateError::CounterOverflow);
        self.feedback_count = self.feedback_count.checked_add(1).ok_or_else(overflow)?;
        self.settled_count = self.settled_count.checked_add(1).ok_or_else(overflow)?;
        self.write_counters(&mut info.try_borrow_mut_data()?);
        Ok(())
    }

    /// Reads the facilitator's authority from `info` (as an `Account` would: owner,
    /// discriminator) and checks that it is `facilitator`'s (`ConstraintSeeds` otherwise).
    pub fn read_for(info: &AccountInfo, facilitator: &Pubkey) -> Result<GateAuthority> {
        let authority: GateAuthority = trust_gate_program_common::pda_account::read(info)?;
        require!(authority.is_for(facilitator), ErrorCode::ConstraintSeeds);
        Ok(authority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::AccountSerialize;

    #[test]
    fn counters_written_in_place_are_what_borsh_would_store() {
        let mut a = GateAuthority {
            facilitator: Pubkey::new_unique(),
            feedback_count: 1,
            settled_count: 2,
            dispute_count: 3,
            created_slot: 4,
            bump: 5,
        };
        let mut data = Vec::new();
        a.try_serialize(&mut data).unwrap();
        (a.feedback_count, a.settled_count, a.dispute_count) = (u64::MAX, 1 << 40, 7);
        a.write_counters(&mut data);
        let mut again = Vec::new();
        a.try_serialize(&mut again).unwrap();
        assert_eq!(data, again);
    }
}
