//! Reading the fixed-size accounts a settlement reads (a policy's head and rules, the kill
//! switch, the velocity ledger, an acceptance policy) field by field from their data, in
//! Borsh's order: one length check, then plain loads. Borsh's reader checks the length and moves its cursor at every field; over a
//! policy's 296 bytes that cost several hundred compute units per settlement. Unit tests hold
//! each reader to Borsh's serialization.

use anchor_lang::prelude::*;
use anchor_lang::Discriminator;
use trust_gate_program_common::pda_account;

/// An account of policy_vault's whose fields all have a fixed size, read in place.
pub trait FixedLayout: Discriminator + Owner + Sized {
    /// Bytes of the fields after the discriminator.
    const FIELDS_LEN: usize;

    /// The fields in `data` (after the discriminator) as Borsh would deserialize them;
    /// `None` when `data` is shorter or a field's value is not valid Borsh.
    fn read_fields(data: &[u8]) -> Option<Self>;
}

/// The account of type `T` at `info`, checked as Anchor's `Account::try_from` checks it (the
/// same errors, in the same order: not initialized, owned by another program, no or another
/// discriminator, not deserializable), its fields read in place.
pub fn read<T: FixedLayout>(info: &AccountInfo) -> Result<T> {
    pda_account::check_owner(info, &T::owner())?;
    let data = info.try_borrow_data()?;
    from_data(&data)
}

/// [`read`] for an account's data whose owner was checked.
pub fn from_data<T: FixedLayout>(data: &[u8]) -> Result<T> {
    T::read_fields(fields_of::<T>(data)?).ok_or_else(|| error!(ErrorCode::AccountDidNotDeserialize))
}

/// The fields of an account of type `T` in `data`: what follows `T`'s discriminator (the
/// errors Anchor gives for none or another).
pub fn fields_of<T: Discriminator>(data: &[u8]) -> Result<&[u8]> {
    data.strip_prefix(T::DISCRIMINATOR).ok_or_else(|| {
        if data.len() < T::DISCRIMINATOR.len() {
            ErrorCode::AccountDiscriminatorNotFound
        } else {
            ErrorCode::AccountDiscriminatorMismatch
        }
        .into()
    })
}

/// A cursor over data whose length the caller checked (`Fields::new` takes exactly the
/// bytes the fields fill); reading past the end yields zeros rather than panicking.
pub struct Fields<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    /// `data` must hold at least `len` bytes.
    pub fn new(data: &'a [u8], len: usize) -> Option<Self> {
        Some(Fields {
            data: data.get(..len)?,
            at: 0,
        })
    }

    pub fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let v = self
            .data
            .get(self.at..)
            .and_then(|d| d.first_chunk::<N>())
            .copied()
            .unwrap_or([0; N]);
        self.at += N;
        v
    }

    pub fn u8(&mut self) -> u8 {
        self.bytes::<1>()[0]
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.bytes())
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.bytes())
    }

    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.bytes())
    }

    pub fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.bytes())
    }

    /// A Borsh bool: 0 or 1, anything else invalid.
    pub fn bool(&mut self) -> Option<bool> {
        match self.u8() {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    pub fn key(&mut self) -> Pubkey {
        Pubkey::new_from_array(self.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::super::VelocityLedger;
    use super::super::{AcceptancePolicy, KillSwitchState, PolicyAccount, PolicyRules};
    use super::{Fields, FixedLayout};
    use anchor_lang::AnchorSerialize;
    use proptest::prelude::*;

    /// `read` gives back the value Borsh deserializes from `bytes` (each of these types is
    /// fixed-size and every byte string of its length is valid Borsh): serializing it again
    /// yields `bytes`, and a shorter input is refused.
    fn reads_as_borsh<T: AnchorSerialize>(bytes: &[u8], read: fn(&[u8]) -> Option<T>) {
        let value = read(bytes).expect("the full length reads");
        let mut again = Vec::new();
        value.serialize(&mut again).unwrap();
        assert_eq!(again, bytes);
        assert!(read(&bytes[..bytes.len() - 1]).is_none());
    }

    proptest! {
        #[test]
        fn the_readers_read_what_borsh_reads(bytes in proptest::collection::vec(any::<u8>(), 296)) {
            reads_as_borsh(&bytes[..PolicyRules::LEN], |d| Fields::new(d, PolicyRules::LEN).map(|f| PolicyRules::read_from(&mut {f})));
            reads_as_borsh(&bytes[..AcceptancePolicy::FIELDS_LEN], AcceptancePolicy::read_fields);
            reads_as_borsh(&bytes[..VelocityLedger::FIELDS_LEN], VelocityLedger::read_fields);
        }

        #[test]
        fn a_kill_switch_reads_as_borsh(mut bytes in proptest::collection::vec(any::<u8>(), KillSwitchState::FIELDS_LEN), paused in 0u8..4) {
            bytes[32] = paused;
            if paused < 2 {
                reads_as_borsh(&bytes, KillSwitchState::read_fields);
            } else {
                // Borsh refuses a bool other than 0 or 1; so does the reader.
                let borsh = <KillSwitchState as anchor_lang::AnchorDeserialize>::deserialize(&mut &bytes[..]);
                prop_assert!(borsh.is_err());
            }
            prop_assert_eq!(KillSwitchState::read_fields(&bytes).is_some(), paused < 2);
        }
    }

    #[test]
    fn an_account_is_checked_as_anchor_checks_it() {
        use anchor_lang::error::ErrorCode;
        use anchor_lang::{AccountSerialize, Discriminator};
        let code = |r: anchor_lang::Result<VelocityLedger>| match r.unwrap_err() {
            anchor_lang::error::Error::AnchorError(e) => e.error_code_number,
            e => panic!("{e:?}"),
        };
        let ledger = VelocityLedger {
            asset: anchor_lang::prelude::Pubkey::new_unique(),
            policy_id: 2,
            cumulative: 3,
            window_start: 4,
            last_commit: 5,
            bump: 6,
        };
        let mut data = Vec::new();
        ledger.try_serialize(&mut data).unwrap();
        let read: VelocityLedger = super::from_data(&data).unwrap();
        assert_eq!(
            (read.asset, read.cumulative, read.bump),
            (ledger.asset, 3, 6)
        );
        assert_eq!(
            code(super::from_data(&data[..7])),
            ErrorCode::AccountDiscriminatorNotFound as u32
        );
        let mut other = data.clone();
        other[..8].copy_from_slice(PolicyAccount::DISCRIMINATOR);
        assert_eq!(
            code(super::from_data(&other)),
            ErrorCode::AccountDiscriminatorMismatch as u32
        );
        assert_eq!(
            code(super::from_data(&data[..data.len() - 1])),
            ErrorCode::AccountDidNotDeserialize as u32
        );
    }
}
