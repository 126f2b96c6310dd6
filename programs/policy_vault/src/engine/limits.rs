//! A policy's limit rules: validity window, payee list, monthly and lifetime caps, and the
//! per-payee daily cap with its bounded set of slots.

use super::config::{LimitRules, ListMode};
use super::decision::DenyReason;
use super::time::{day_index, month_index};
use anchor_lang::prelude::Pubkey;

/// How many payees one policy can pay in one UTC day while it has a per-payee daily cap.
/// The slots live in the policy account, which every settlement already writes; a payee
/// beyond them is denied (`PayeeSlotsFull`) until the next UTC day frees them all.
pub const PAYEE_SLOTS: usize = 16;

/// What one payee was paid on the slots' day under the per-payee daily cap. An empty slot
/// has the default (all zero) payee, which is no agent's asset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PayeeSlot {
    pub payee: Pubkey,
    pub spent: u64,
}

/// The month and lifetime counters of a policy's limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimitCounters {
    /// [`month_index`] that `month_spent` counts.
    pub month_index: i64,
    pub month_spent: u64,
    /// Everything the policy ever paid (saturating).
    pub lifetime_spent: u64,
}

/// What the payee's slots say about one payee: read by the caller from the policy's slots
/// (see [`PayeeDay::of`]), so that a decision copies 16 bytes rather than the slots' 640.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PayeeDay {
    /// The UTC day the slots count.
    pub day: i64,
    /// The payee's slot on that day and what it holds.
    pub held: Option<(usize, u64)>,
    /// The first empty slot, when the payee holds none.
    pub free: Option<usize>,
}

impl PayeeDay {
    /// The view of `payee` in `slots`, which count `day`. Slots fill in order from the first
    /// (a new day empties them all and [`payee_slot`] writes the payee's slot, else the first
    /// empty one), so the first empty slot ends the day's payees and the scan.
    pub fn of(slots: &[PayeeSlot], day: i64, payee: &Pubkey) -> PayeeDay {
        let mut d = PayeeDay {
            day,
            ..PayeeDay::default()
        };
        for (i, s) in slots.iter().enumerate() {
            if s.payee == Pubkey::default() {
                d.free = Some(i);
                break;
            }
            if s.payee == *payee {
                d.held = Some((i, s.spent));
                break;
            }
        }
        d
    }
}

/// A policy's limit state as one evaluation needs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimitState {
    pub counters: LimitCounters,
    /// Read only when the policy has a per-payee cap.
    pub payee_day: PayeeDay,
}

/// The one slot an Allow under a per-payee cap writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotWrite {
    /// The day the slots count from now on.
    pub day: i64,
    pub index: usize,
    pub payee: Pubkey,
    pub spent: u64,
    /// A new day: every other slot is emptied.
    pub evict: bool,
}

impl SlotWrite {
    /// Applies the write to the slots and their day (what the program does in place).
    pub fn apply(&self, slots: &mut [PayeeSlot; PAYEE_SLOTS], day: &mut i64) {
        if self.evict {
            *slots = [PayeeSlot::default(); PAYEE_SLOTS];
        }
        *day = self.day;
        slots[self.index] = PayeeSlot {
            payee: self.payee,
            spent: self.spent,
        };
    }
}

/// What an Allow under a policy with limits stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitUpdate {
    pub counters: LimitCounters,
    /// `None` without a per-payee cap.
    pub slot: Option<SlotWrite>,
}

/// The validity window: `not_before ≤ now ≤ not_after`, either bound 0 = none.
pub fn check_validity(r: &LimitRules, now: i64) -> Result<(), DenyReason> {
    if r.not_before != 0 && now < r.not_before {
        return Err(DenyReason::PolicyNotYetValid);
    }
    if r.not_after != 0 && now > r.not_after {
        return Err(DenyReason::PolicyExpired);
    }
    Ok(())
}

/// The payee list, given whether the payee is on it.
pub fn check_list(mode: ListMode, listed: bool) -> Result<(), DenyReason> {
    match mode {
        ListMode::Allow if !listed => Err(DenyReason::PayeeNotAllowed),
        ListMode::Deny if listed => Err(DenyReason::PayeeDenied),
        _ => Ok(()),
    }
}

/// Adds `amount` to `spent` under `cap` (0 = no cap); overflow counts as exceeded.
fn add_capped(spent: u64, amount: u64, cap: u64, over: DenyReason) -> Result<u64, DenyReason> {
    match spent.checked_add(amount) {
        Some(total) if cap == 0 || total <= cap => Ok(total),
        Some(_) => Err(over),
        // Only reachable without a cap: the counter saturates.
        None if cap == 0 => Ok(u64::MAX),
        None => Err(over),
    }
}

/// The monthly, lifetime and per-payee daily caps: what to store after paying `amount` to
/// `payee` at `now`, or the first cap it breaks (in that order).
pub fn check_caps(
    r: &LimitRules,
    state: &LimitState,
    payee: &Pubkey,
    amount: u64,
    now: i64,
) -> Result<LimitUpdate, DenyReason> {
    let c = &state.counters;
    let month = month_index(now);
    let month_spent = if c.month_index == month {
        c.month_spent
    } else {
        0
    };
    let counters = LimitCounters {
        month_index: month,
        month_spent: add_capped(
            month_spent,
            amount,
            r.monthly_cap,
            DenyReason::SpendingMonthlyExceeded,
        )?,
        lifetime_spent: add_capped(
            c.lifetime_spent,
            amount,
            r.lifetime_cap,
            DenyReason::SpendingLifetimeExceeded,
        )?,
    };
    let slot = if r.payee_daily_cap == 0 {
        None
    } else {
        Some(payee_slot(
            r.payee_daily_cap,
            &state.payee_day,
            payee,
            amount,
            now,
        )?)
    };
    Ok(LimitUpdate { counters, slot })
}

/// The per-payee daily cap: the payee's slot of the day, else the first empty one; a new day
/// evicts every slot.
fn payee_slot(
    cap: u64,
    d: &PayeeDay,
    payee: &Pubkey,
    amount: u64,
    now: i64,
) -> Result<SlotWrite, DenyReason> {
    let day = day_index(now);
    let evict = d.day != day;
    let (index, spent) = match (evict, d.held, d.free) {
        (true, ..) => (0, 0),
        (false, Some(held), _) => held,
        (false, None, Some(free)) => (free, 0),
        (false, None, None) => return Err(DenyReason::PayeeSlotsFull),
    };
    Ok(SlotWrite {
        day,
        index,
        payee: *payee,
        spent: add_capped(spent, amount, cap, DenyReason::PayeeDailyExceeded)?,
        evict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-30 23:59:59 UTC: the last second of a day and of a month.
    const END_OF_NOVEMBER: i64 = 1_796_083_199;
    /// 2026-12-31 23:59:59 UTC.
    const END_OF_YEAR: i64 = 1_798_761_599;

    fn key(n: u8) -> Pubkey {
        Pubkey::new_from_array([n; 32])
    }

    /// A policy's limit counters and slots, paid into as the program does: read the payee's
    /// view of the slots, decide, store on Allow.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    struct Ledger {
        counters: LimitCounters,
        day: i64,
        slots: [PayeeSlot; PAYEE_SLOTS],
    }

    impl Ledger {
        fn pay(
            &mut self,
            r: &LimitRules,
            payee: u8,
            amount: u64,
            now: i64,
        ) -> Result<(), DenyReason> {
            let payee = key(payee);
            let state = LimitState {
                counters: self.counters,
                payee_day: PayeeDay::of(&self.slots, self.day, &payee),
            };
            let update = check_caps(r, &state, &payee, amount, now)?;
            self.counters = update.counters;
            if let Some(w) = update.slot {
                w.apply(&mut self.slots, &mut self.day);
            }
            Ok(())
        }

        fn spent(&self, payee: u8) -> Option<u64> {
            self.slots
                .iter()
                .find(|s| s.payee == key(payee))
                .map(|s| s.spent)
        }
    }

    fn rules() -> LimitRules {
        LimitRules {
            monthly_cap: 500,
            lifetime_cap: 5_000,
            payee_daily_cap: 20,
            ..LimitRules::OFF
        }
    }

    #[test]
    fn validity_window_includes_its_first_and_last_second() {
        let r = LimitRules {
            not_before: 1_000,
            not_after: 2_000,
            ..LimitRules::OFF
        };
        assert_eq!(check_validity(&r, 999), Err(DenyReason::PolicyNotYetValid));
        assert_eq!(check_validity(&r, 1_000), Ok(()));
        assert_eq!(check_validity(&r, 2_000), Ok(()));
        assert_eq!(check_validity(&r, 2_001), Err(DenyReason::PolicyExpired));
        // Open-ended on either side.
        assert_eq!(check_validity(&LimitRules::OFF, i64::MIN), Ok(()));
        assert_eq!(check_validity(&LimitRules::OFF, i64::MAX), Ok(()));
    }

    #[test]
    fn lists() {
        assert_eq!(check_list(ListMode::Off, false), Ok(()));
        assert_eq!(check_list(ListMode::Off, true), Ok(()));
        assert_eq!(check_list(ListMode::Allow, true), Ok(()));
        assert_eq!(
            check_list(ListMode::Allow, false),
            Err(DenyReason::PayeeNotAllowed)
        );
        assert_eq!(check_list(ListMode::Deny, false), Ok(()));
        assert_eq!(
            check_list(ListMode::Deny, true),
            Err(DenyReason::PayeeDenied)
        );
    }

    #[test]
    fn monthly_cap_one_unit_under_and_over_and_its_reset_at_the_month_turn() {
        let r = LimitRules {
            monthly_cap: 500,
            ..LimitRules::OFF
        };
        let mut l = Ledger::default();
        l.pay(&r, 1, 499, END_OF_NOVEMBER).unwrap();
        assert_eq!(l.counters.month_spent, 499);
        l.pay(&r, 1, 1, END_OF_NOVEMBER).unwrap();
        assert_eq!(l.counters.month_spent, 500);
        let full = l.clone();
        assert_eq!(
            l.pay(&r, 1, 1, END_OF_NOVEMBER),
            Err(DenyReason::SpendingMonthlyExceeded)
        );
        assert_eq!(l, full, "a deny stores nothing");
        // The first second of December starts a new month.
        l.pay(&r, 1, 500, END_OF_NOVEMBER + 1).unwrap();
        assert_eq!(l.counters.month_spent, 500);
        assert_eq!(l.counters.month_index, full.counters.month_index + 1);
        // And the year's last second → the first second of January.
        let mut l = Ledger {
            counters: LimitCounters {
                month_index: month_index(END_OF_YEAR),
                month_spent: 500,
                lifetime_spent: 0,
            },
            ..Ledger::default()
        };
        assert_eq!(
            l.pay(&r, 1, 1, END_OF_YEAR),
            Err(DenyReason::SpendingMonthlyExceeded)
        );
        l.pay(&r, 1, 1, END_OF_YEAR + 1).unwrap();
        assert_eq!(l.counters.month_spent, 1);
    }

    #[test]
    fn lifetime_cap_never_resets() {
        let r = LimitRules {
            lifetime_cap: 5_000,
            ..LimitRules::OFF
        };
        let mut l = Ledger::default();
        l.counters.lifetime_spent = 4_999;
        let mut over = l.clone();
        assert_eq!(
            over.pay(&r, 1, 2, END_OF_YEAR),
            Err(DenyReason::SpendingLifetimeExceeded)
        );
        l.pay(&r, 1, 1, END_OF_YEAR).unwrap();
        assert_eq!(l.counters.lifetime_spent, 5_000);
        for later in [END_OF_YEAR, END_OF_YEAR + 1, END_OF_YEAR + 400 * 86_400] {
            assert_eq!(
                l.pay(&r, 1, 1, later),
                Err(DenyReason::SpendingLifetimeExceeded)
            );
        }
    }

    #[test]
    fn caps_off_count_and_saturate() {
        let mut l = Ledger {
            counters: LimitCounters {
                month_index: month_index(END_OF_YEAR),
                month_spent: u64::MAX,
                lifetime_spent: u64::MAX - 1,
            },
            ..Ledger::default()
        };
        let mut capped = l.clone();
        l.pay(&LimitRules::OFF, 1, 10, END_OF_YEAR).unwrap();
        assert_eq!(l.counters.lifetime_spent, u64::MAX);
        assert_eq!(l.counters.month_spent, u64::MAX);
        // No per-payee cap: the slots are not touched.
        assert_eq!(l.spent(1), None);
        // A cap and an overflow: exceeded.
        let r = LimitRules {
            lifetime_cap: u64::MAX,
            ..LimitRules::OFF
        };
        assert_eq!(
            capped.pay(&r, 1, 10, END_OF_YEAR),
            Err(DenyReason::SpendingLifetimeExceeded)
        );
    }

    #[test]
    fn per_payee_daily_cap_one_unit_under_and_over() {
        let r = rules();
        let mut l = Ledger::default();
        l.pay(&r, 1, 19, END_OF_NOVEMBER).unwrap();
        l.pay(&r, 1, 1, END_OF_NOVEMBER).unwrap();
        assert_eq!(
            l.slots[0],
            PayeeSlot {
                payee: key(1),
                spent: 20
            }
        );
        assert_eq!(
            l.pay(&r, 1, 1, END_OF_NOVEMBER),
            Err(DenyReason::PayeeDailyExceeded)
        );
        // Another payee has its own 20.
        l.pay(&r, 2, 20, END_OF_NOVEMBER).unwrap();
        assert_eq!(
            l.slots[1],
            PayeeSlot {
                payee: key(2),
                spent: 20
            }
        );
        // The next UTC day evicts every slot.
        l.pay(&r, 2, 20, END_OF_NOVEMBER + 1).unwrap();
        assert_eq!(
            l.slots[0],
            PayeeSlot {
                payee: key(2),
                spent: 20
            }
        );
        assert_eq!(l.spent(1), None);
        assert_eq!(l.day, day_index(END_OF_NOVEMBER + 1));
    }

    #[test]
    fn a_full_slot_set_denies_a_new_payee_but_not_one_it_holds() {
        let r = rules();
        let mut l = Ledger::default();
        for n in 1..=PAYEE_SLOTS as u8 {
            l.pay(&r, n, 1, END_OF_NOVEMBER).unwrap();
        }
        assert!(l.slots.iter().all(|s| s.payee != Pubkey::default()));
        let extra = PAYEE_SLOTS as u8 + 1;
        assert_eq!(
            l.pay(&r, extra, 1, END_OF_NOVEMBER),
            Err(DenyReason::PayeeSlotsFull)
        );
        l.pay(&r, PAYEE_SLOTS as u8, 1, END_OF_NOVEMBER).unwrap();
        assert_eq!(l.spent(PAYEE_SLOTS as u8), Some(2));
        // The first second of the next day frees them.
        l.pay(&r, extra, 1, END_OF_NOVEMBER + 1).unwrap();
        assert_eq!(l.spent(extra), Some(1));
        assert_eq!(l.spent(1), None);
    }

    #[test]
    fn caps_are_checked_monthly_then_lifetime_then_per_payee() {
        let r = LimitRules {
            monthly_cap: 10,
            lifetime_cap: 10,
            payee_daily_cap: 10,
            ..LimitRules::OFF
        };
        let mut l = Ledger::default();
        assert_eq!(
            l.pay(&r, 1, 11, END_OF_NOVEMBER),
            Err(DenyReason::SpendingMonthlyExceeded)
        );
        let r2 = LimitRules {
            monthly_cap: 0,
            ..r
        };
        assert_eq!(
            l.pay(&r2, 1, 11, END_OF_NOVEMBER),
            Err(DenyReason::SpendingLifetimeExceeded)
        );
        let r3 = LimitRules {
            lifetime_cap: 0,
            ..r2
        };
        assert_eq!(
            l.pay(&r3, 1, 11, END_OF_NOVEMBER),
            Err(DenyReason::PayeeDailyExceeded)
        );
    }

    proptest::proptest! {
        /// Whatever the payments, the slots stay filled in order from the first, and no
        /// payee holds two: what lets a settlement stop its scan at the first empty slot.
        #[test]
        fn slots_fill_in_order_and_hold_a_payee_once(
            payments in proptest::collection::vec((1u8..24, 1u64..8, 0i64..3), 1..80),
        ) {
            let r = rules();
            let mut l = Ledger::default();
            let mut now = END_OF_NOVEMBER - 2 * 86_400;
            for (payee, amount, days_later) in payments {
                now += days_later * 86_400;
                let _ = l.pay(&r, payee, amount, now);
                let filled = l.slots.iter().take_while(|s| s.payee != Pubkey::default()).count();
                proptest::prop_assert!(l.slots[filled..].iter().all(|s| *s == PayeeSlot::default()));
                for (i, s) in l.slots[..filled].iter().enumerate() {
                    proptest::prop_assert!(!l.slots[..i].iter().any(|o| o.payee == s.payee));
                }
            }
        }
    }
}
