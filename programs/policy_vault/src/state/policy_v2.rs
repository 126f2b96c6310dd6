//! A v2 spending policy: a v1 policy's fields, then the rules and counters a v1 policy does
//! not have (validity window, payee list, monthly, lifetime and per-payee daily caps). Both
//! versions live at the same PDA (`["policy", asset, policy_id]`) and are told apart by their
//! discriminators; a v1 account is read unchanged and keeps working (see [`AnyPolicy`]).

use super::fixed::FixedLayout;
use super::policy::{put, PolicyAccount};
use super::rules::PolicyRules;
use crate::engine::{
    ExtendedCounters, ExtendedUpdate, PayeeDay, PayeeSlot as EnginePayeeSlot, PAYEE_SLOTS,
};
use anchor_lang::prelude::*;
use anchor_lang::Discriminator;
use trust_gate_program_common::{keys, pda_account};

/// One payee's spending of the day under the per-payee daily cap (default payee = empty).
#[derive(
    AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub struct PayeeSlot {
    pub payee: Pubkey,
    pub spent: u64,
}

/// A v2 spending policy.
///
/// Offsets: 8..304 the v1 fields at the v1 offsets (see [`PolicyAccount`]; the counters are
/// written in place there as for v1), 304 rules (mode 304, payees 305..433, payee_list
/// 433..465, not_before 465, not_after 473, monthly 481, lifetime 489, payee_daily 497),
/// 505 month_index, 513 month_spent, 521 lifetime_spent, 529 payee_day, 537..1177 the 16
/// payee slots (payee 32, spent 8 each), 1177 vault, 1209 approval_threshold (added last: an
/// account created before it, 1 209 bytes long, reads as 0, no approvals).
#[account]
#[derive(InitSpace, Debug)]
pub struct PolicyAccountV2 {
    /// Everything a v1 policy holds, laid out as in a v1 account.
    pub base: PolicyAccount,
    pub rules: PolicyRules,
    /// Calendar months since 1970-01 (UTC) that `month_spent` counts.
    pub month_index: i64,
    pub month_spent: u64,
    /// Everything paid under the policy (saturating).
    pub lifetime_spent: u64,
    /// The UTC day (days since the epoch) that `payee_slots` count.
    pub payee_day: i64,
    pub payee_slots: [PayeeSlot; PAYEE_SLOTS],
    /// The agent's vault for `base.params.mint` (`["vault", asset, mint]`, bump
    /// `base.vault_bump`) when the policy is vault-funded, derived once at creation so that a
    /// settlement compares it rather than derives it (about 350 compute units); the default
    /// key otherwise.
    pub vault: Pubkey,
    /// A payment (or a gated channel's deposit) of more than this needs the authority's
    /// approval of its terms (`approve_payment`); 0 = none.
    pub approval_threshold: u64,
}

/// Where Borsh keeps a PolicyAccountV2's fields after the v1 ones (a unit test holds them to
/// the serialization).
pub mod extended_at {
    pub const RULES: usize = 304;
    pub const MONTH_INDEX: usize = 505;
    pub const MONTH_SPENT: usize = 513;
    pub const LIFETIME_SPENT: usize = 521;
    pub const PAYEE_DAY: usize = 529;
    pub const PAYEE_SLOTS: usize = 537;
    pub const SLOT_LEN: usize = 40;
    pub const SLOTS_END: usize = PAYEE_SLOTS + super::PAYEE_SLOTS * SLOT_LEN;
    pub const VAULT: usize = SLOTS_END;
    /// The end of an account created before `approval_threshold` was added.
    pub const VAULT_END: usize = VAULT + 32;
    pub const APPROVAL_THRESHOLD: usize = VAULT_END;
    pub const END: usize = APPROVAL_THRESHOLD + 8;
}

fn i64_at(data: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(data[at..at + 8].try_into().unwrap_or_default())
}

fn u64_at(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().unwrap_or_default())
}

impl PolicyAccountV2 {
    pub fn counters(&self) -> ExtendedCounters {
        ExtendedCounters {
            month_index: self.month_index,
            month_spent: self.month_spent,
            lifetime_spent: self.lifetime_spent,
        }
    }

    /// The slots as the engine sees them.
    pub fn slots(&self) -> [EnginePayeeSlot; PAYEE_SLOTS] {
        self.payee_slots.map(|s| EnginePayeeSlot {
            payee: s.payee,
            spent: s.spent,
        })
    }

    /// Stores an Allow's update (what [`PolicyAccountV2::write_extended`] does in place).
    pub fn store_extended(&mut self, u: &ExtendedUpdate) {
        self.month_index = u.counters.month_index;
        self.month_spent = u.counters.month_spent;
        self.lifetime_spent = u.counters.lifetime_spent;
        if let Some(w) = &u.slot {
            let mut slots = self.slots();
            w.apply(&mut slots, &mut self.payee_day);
            self.payee_slots = slots.map(|s| PayeeSlot {
                payee: s.payee,
                spent: s.spent,
            });
        }
    }

    /// The month and lifetime counters in a PolicyAccountV2's `data`, read in place (its
    /// length was checked by [`AnyPolicy::from_data`]).
    pub fn counters_in(data: &[u8]) -> ExtendedCounters {
        ExtendedCounters {
            month_index: i64_at(data, extended_at::MONTH_INDEX),
            month_spent: u64_at(data, extended_at::MONTH_SPENT),
            lifetime_spent: u64_at(data, extended_at::LIFETIME_SPENT),
        }
    }

    /// What the slots in `data` say about `payee`, read in place: a settlement compares up
    /// to 16 keys rather than deserializing 640 bytes. Slots fill in order, so the scan stops
    /// at the payee's slot or the first empty one; a held payee's `free` is not needed and
    /// stays `None`.
    pub fn payee_day_in(data: &[u8], payee: &Pubkey) -> PayeeDay {
        let mut day = PayeeDay::default();
        let Some(slots) = data.get(extended_at::PAYEE_SLOTS..extended_at::SLOTS_END) else {
            return day;
        };
        day.day = i64_at(data, extended_at::PAYEE_DAY);
        let payee = payee.as_array();
        for (i, slot) in slots.chunks_exact(extended_at::SLOT_LEN).enumerate() {
            let (Some(key), Some(spent)) = (slot.first_chunk::<32>(), slot.last_chunk::<8>())
            else {
                break;
            };
            if keys::is_zero(key) {
                // Slots fill in order from the first (a new day empties them all and writes
                // the first), so the first empty one ends the day's payees.
                day.free = Some(i);
                break;
            }
            if keys::eq(key, payee) {
                day.held = Some((i, u64::from_le_bytes(*spent)));
                break;
            }
        }
        day
    }

    /// Writes an Allow's update into a PolicyAccountV2's `data` in place (see
    /// `PolicyAccount::write_counters`): the counters, and under a per-payee cap the one
    /// slot (all of them emptied first on a new day).
    pub fn write_extended(data: &mut [u8], u: &ExtendedUpdate) {
        let c = &u.counters;
        put(data, extended_at::MONTH_INDEX, c.month_index.to_le_bytes());
        put(data, extended_at::MONTH_SPENT, c.month_spent.to_le_bytes());
        put(
            data,
            extended_at::LIFETIME_SPENT,
            c.lifetime_spent.to_le_bytes(),
        );
        let Some(w) = &u.slot else { return };
        if w.evict {
            data[extended_at::PAYEE_SLOTS..extended_at::SLOTS_END].fill(0);
        }
        put(data, extended_at::PAYEE_DAY, w.day.to_le_bytes());
        let at = extended_at::PAYEE_SLOTS + w.index * extended_at::SLOT_LEN;
        put(data, at, w.payee.to_bytes());
        put(data, at + 32, w.spent.to_le_bytes());
    }
}

/// What an evaluation reads of a v2 policy: its v1 fields and rules, deserialized, and its
/// counters read in place (the slots only under a per-payee cap, see
/// [`PolicyAccountV2::payee_day_in`]).
#[derive(Debug)]
pub struct PolicyV2 {
    pub base: PolicyAccount,
    pub rules: PolicyRules,
    pub counters: ExtendedCounters,
    /// See [`PolicyAccountV2::vault`].
    pub vault: Pubkey,
    /// See [`PolicyAccountV2::approval_threshold`].
    pub approval_threshold: u64,
}

/// A policy account of either version, on the heap: moving a v1 policy's 304 bytes through
/// the results that carry it cost more than the allocation.
#[derive(Debug)]
pub enum AnyPolicy {
    V1(Box<PolicyAccount>),
    V2(Box<PolicyV2>),
}

impl AnyPolicy {
    /// Reads a policy account as an Anchor `Account` of either type would be read: owner,
    /// then discriminator (`AccountDiscriminatorMismatch` for anything else), then Borsh.
    pub fn read(info: &AccountInfo) -> Result<AnyPolicy> {
        pda_account::check_owner(info, &crate::ID)?;
        let data = info.try_borrow_data()?;
        Self::from_data(&data)
    }

    /// Either version's fields are read in place (see [`super::fixed`]), a v2 account's
    /// counters too, its slots only when asked (see [`PolicyAccountV2::payee_day_in`]).
    pub fn from_data(data: &[u8]) -> Result<AnyPolicy> {
        let bad = || error!(ErrorCode::AccountDidNotDeserialize);
        let fields = data.get(8..).unwrap_or_default();
        if data.starts_with(PolicyAccount::DISCRIMINATOR) {
            let base = PolicyAccount::read_fields(fields).ok_or_else(bad)?;
            return Ok(AnyPolicy::V1(Box::new(base)));
        }
        if !data.starts_with(PolicyAccountV2::DISCRIMINATOR) {
            return err!(ErrorCode::AccountDiscriminatorMismatch);
        }
        if data.len() < extended_at::VAULT_END {
            return Err(bad());
        }
        let base = PolicyAccount::read_fields(fields).ok_or_else(bad)?;
        let rules = PolicyRules::read_fields(&data[extended_at::RULES..]).ok_or_else(bad)?;
        Ok(AnyPolicy::V2(Box::new(PolicyV2 {
            base,
            rules,
            counters: PolicyAccountV2::counters_in(data),
            vault: Pubkey::new_from_array(
                data[extended_at::VAULT..extended_at::VAULT_END]
                    .try_into()
                    .unwrap_or_default(),
            ),
            approval_threshold: data
                .get(extended_at::APPROVAL_THRESHOLD..extended_at::END)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default())),
        })))
    }

    /// The fields both versions have.
    pub fn base(&self) -> &PolicyAccount {
        match self {
            AnyPolicy::V1(p) => p,
            AnyPolicy::V2(p) => &p.base,
        }
    }

    pub fn rules(&self) -> Option<&PolicyRules> {
        match self {
            AnyPolicy::V1(_) => None,
            AnyPolicy::V2(p) => Some(&p.rules),
        }
    }

    /// A v2 policy's approval threshold (0: none, and always for v1).
    pub fn approval_threshold(&self) -> u64 {
        match self {
            AnyPolicy::V1(_) => 0,
            AnyPolicy::V2(p) => p.approval_threshold,
        }
    }

    /// The vault address a v2 policy stores (`None` for v1, which stores only its bump).
    pub fn vault(&self) -> Option<Pubkey> {
        match self {
            AnyPolicy::V1(_) => None,
            AnyPolicy::V2(p) => Some(p.vault),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SlotWrite;
    use crate::state::policy::counters_at;
    use crate::state::rules::INLINE_PAYEES;
    use anchor_lang::AccountSerialize;

    fn account() -> PolicyAccountV2 {
        PolicyAccountV2 {
            base: crate::state::policy::tests::account(),
            rules: PolicyRules {
                payee_list_mode: 1,
                payees: [Pubkey::new_unique(); INLINE_PAYEES],
                payee_list: Pubkey::new_unique(),
                not_before: 1,
                not_after: 2,
                monthly_cap: 3,
                lifetime_cap: 4,
                payee_daily_cap: 5,
            },
            month_index: 6,
            month_spent: 7,
            lifetime_spent: 8,
            payee_day: 9,
            payee_slots: [PayeeSlot {
                payee: Pubkey::new_unique(),
                spent: 10,
            }; PAYEE_SLOTS],
            vault: Pubkey::new_unique(),
            approval_threshold: 11,
        }
    }

    #[test]
    fn the_v1_fields_keep_their_v1_offsets() {
        let v2 = account();
        let mut data2 = Vec::new();
        v2.try_serialize(&mut data2).unwrap();
        let mut data1 = Vec::new();
        v2.base.try_serialize(&mut data1).unwrap();
        assert_eq!(data1.len(), 304);
        assert_eq!(data2.len(), 8 + PolicyAccountV2::INIT_SPACE);
        assert_eq!(data2.len(), 1217);
        assert_eq!(data2.len(), extended_at::END);
        assert_eq!(data1[8..], data2[8..304]);
        assert_eq!(counters_at::WEEK_SPENT, 246);
        match AnyPolicy::from_data(&data2).unwrap() {
            AnyPolicy::V2(p) => {
                assert_eq!(p.rules, v2.rules);
                assert_eq!(p.base.spender, v2.base.spender);
                assert_eq!(p.counters, v2.counters());
                assert_eq!(p.vault, v2.vault);
                assert_eq!(p.approval_threshold, 11);
            }
            other => panic!("{other:?}"),
        }
        // An account created before the approval threshold: read as none.
        match AnyPolicy::from_data(&data2[..extended_at::VAULT_END]).unwrap() {
            AnyPolicy::V2(p) => {
                assert_eq!(p.vault, v2.vault);
                assert_eq!(p.approval_threshold, 0);
            }
            other => panic!("{other:?}"),
        }
        assert!(AnyPolicy::from_data(&data2[..1176]).is_err());
        match AnyPolicy::from_data(&data1).unwrap() {
            AnyPolicy::V1(p) => assert_eq!(p.asset, v2.base.asset),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn updates_written_in_place_are_what_borsh_would_store() {
        let payee = Pubkey::new_unique();
        let counters = ExtendedCounters {
            month_index: -4,
            month_spent: u64::MAX,
            lifetime_spent: 1 << 50,
        };
        let write = |day, index, evict| SlotWrite {
            day,
            index,
            payee,
            spent: 99,
            evict,
        };
        let updates = [
            ExtendedUpdate {
                counters,
                slot: None,
            },
            ExtendedUpdate {
                counters,
                slot: Some(write(77, 15, false)),
            },
            ExtendedUpdate {
                counters,
                slot: Some(write(78, 0, true)),
            },
        ];
        for u in updates {
            let mut expected = account();
            let mut data = Vec::new();
            expected.try_serialize(&mut data).unwrap();
            PolicyAccountV2::write_extended(&mut data, &u);
            expected.store_extended(&u);
            let mut again = Vec::new();
            expected.try_serialize(&mut again).unwrap();
            assert_eq!(data, again, "{u:?}");
            assert_eq!(PolicyAccountV2::counters_in(&data), counters);
        }
    }

    #[test]
    fn the_payee_view_read_in_place_is_the_engines() {
        let mut v2 = account();
        let payee = Pubkey::new_unique();
        v2.payee_slots[3] = PayeeSlot { payee, spent: 7 };
        // Slots fill in order: 0..9 hold payees of the day, 9.. are empty.
        for slot in &mut v2.payee_slots[9..] {
            *slot = PayeeSlot::default();
        }
        let mut data = Vec::new();
        v2.try_serialize(&mut data).unwrap();
        let other = Pubkey::new_unique();
        for key in [payee, other, v2.payee_slots[8].payee] {
            assert_eq!(
                PolicyAccountV2::payee_day_in(&data, &key),
                PayeeDay::of(&v2.slots(), v2.payee_day, &key)
            );
        }
        let at = |held, free| PayeeDay {
            day: v2.payee_day,
            held,
            free,
        };
        assert_eq!(
            PolicyAccountV2::payee_day_in(&data, &payee),
            at(Some((3, 7)), None)
        );
        assert_eq!(
            PolicyAccountV2::payee_day_in(&data, &other),
            at(None, Some(9))
        );
        // Every slot taken: neither held nor free (PayeeSlotsFull).
        let full = account();
        let mut data = Vec::new();
        full.try_serialize(&mut data).unwrap();
        assert_eq!(PolicyAccountV2::payee_day_in(&data, &other), at(None, None));
    }
}
