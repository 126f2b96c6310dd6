//! Giving back part of a reservation: an amount the engine counted when it allowed it (a
//! payment channel's deposit, counted whole at the gated open) that was in the end not spent
//! (what the sealed channel refunds to the payer).
//!
//! Each counter is credited only while it still counts the window the reservation was
//! counted in: a refund on Tuesday of Monday's deposit gives nothing back to Tuesday's day
//! (Monday's is gone), but does to the week and the month that hold Monday. Nothing goes
//! below zero (a counter already restarted holds less than the reservation).

use super::{LimitCounters, PayeeDay, SlotWrite, SpendingCounters, VelocityState};
use anchor_lang::prelude::Pubkey;

/// Where and when an amount was counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    pub payee: Pubkey,
    /// The UTC day, week and month indexes (`super::time`) of the counting.
    pub day_index: i64,
    pub week_index: i64,
    pub month_index: i64,
    /// Unix seconds of the counting (for the velocity window).
    pub reserved_at: i64,
}

/// The counters after a credit, for the program to store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credited {
    pub spending: SpendingCounters,
    /// The month and lifetime counters of a policy with limits.
    pub limits: Option<LimitCounters>,
    /// The payee's per-payee slot, when it still counts the reservation's day.
    pub slot: Option<SlotWrite>,
    pub velocity: VelocityState,
}

/// The policy's counters as they stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted {
    pub spending: SpendingCounters,
    pub limits: Option<LimitCounters>,
    /// What the slots say about the reservation's payee (see `PayeeDay::of`).
    pub payee_day: PayeeDay,
    pub velocity: VelocityState,
}

/// Credits `amount` of `r` back to the counters of `c` that still count its windows.
pub fn credit(r: &Reservation, amount: u64, c: &Counted) -> Credited {
    let back = |same_window: bool, spent: u64| {
        if same_window {
            spent.saturating_sub(amount)
        } else {
            spent
        }
    };
    let s = c.spending;
    let spending = SpendingCounters {
        day_spent: back(s.day_index == r.day_index, s.day_spent),
        week_spent: back(s.week_index == r.week_index, s.week_spent),
        ..s
    };
    let limits = c.limits.map(|e| LimitCounters {
        month_spent: back(e.month_index == r.month_index, e.month_spent),
        // Everything the policy ever paid: the refund was never paid.
        lifetime_spent: e.lifetime_spent.saturating_sub(amount),
        ..e
    });
    let slot = match c.payee_day.held {
        Some((index, spent)) if c.payee_day.day == r.day_index => Some(SlotWrite {
            day: r.day_index,
            index,
            payee: r.payee,
            spent: spent.saturating_sub(amount),
            evict: false,
        }),
        _ => None,
    };
    // The ledger's window holds the reservation when it began no later than it: a window
    // that began after it restarted at a later commit and never counted it.
    let v = c.velocity;
    let velocity = VelocityState {
        cumulative: back(v.window_start <= r.reserved_at, v.cumulative),
        ..v
    };
    Credited {
        spending,
        limits,
        slot,
        velocity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::{day_index, month_index, week_index, SECONDS_PER_DAY};

    // Monday 2026-11-23 12:00 UTC.
    const MONDAY: i64 = 1_795_435_200;

    fn reservation(at: i64) -> Reservation {
        Reservation {
            payee: Pubkey::new_from_array([7; 32]),
            day_index: day_index(at),
            week_index: week_index(at),
            month_index: month_index(at),
            reserved_at: at,
        }
    }

    /// The counters right after `amount` was counted at `at` over `before` of the same
    /// windows, then moved on to `now` by a commit of `later` (0 = none).
    fn counted(at: i64, before: u64, amount: u64, now: i64, later: u64) -> Counted {
        let (d, w, m) = (day_index(now), week_index(now), month_index(now));
        let in_window = |same: bool| if same { before + amount + later } else { later };
        Counted {
            spending: SpendingCounters {
                day_index: d,
                day_spent: in_window(d == day_index(at)),
                week_index: w,
                week_spent: in_window(w == week_index(at)),
            },
            limits: Some(LimitCounters {
                month_index: m,
                month_spent: in_window(m == month_index(at)),
                lifetime_spent: before + amount + later,
            }),
            payee_day: PayeeDay {
                day: d,
                held: Some((3, in_window(d == day_index(at)))),
                free: None,
            },
            velocity: VelocityState {
                cumulative: before + amount,
                window_start: at - 10,
                last_commit: at,
            },
        }
    }

    #[test]
    fn the_same_day_gets_everything_back() {
        assert_eq!(week_index(MONDAY), week_index(MONDAY + 3 * SECONDS_PER_DAY));
        let r = reservation(MONDAY);
        let c = counted(MONDAY, 100, 1_000, MONDAY + 60, 0);
        let out = credit(&r, 400, &c);
        assert_eq!(out.spending.day_spent, 700);
        assert_eq!(out.spending.week_spent, 700);
        let e = out.limits.unwrap();
        assert_eq!((e.month_spent, e.lifetime_spent), (700, 700));
        let slot = out.slot.unwrap();
        assert_eq!((slot.index, slot.spent, slot.evict), (3, 700, false));
        assert_eq!(slot.payee, r.payee);
        assert_eq!(out.velocity.cumulative, 700);
        // Indexes and timestamps are kept.
        assert_eq!(out.spending.day_index, c.spending.day_index);
        assert_eq!(out.velocity.window_start, c.velocity.window_start);
    }

    #[test]
    fn a_new_day_keeps_its_own_count_and_the_week_and_month_get_it_back() {
        let r = reservation(MONDAY);
        let tuesday = MONDAY + SECONDS_PER_DAY;
        let c = counted(MONDAY, 0, 1_000, tuesday, 50);
        let out = credit(&r, 600, &c);
        assert_eq!(
            out.spending.day_spent, 50,
            "Tuesday never counted Monday's deposit"
        );
        assert_eq!(out.spending.week_spent, 450);
        assert_eq!(out.limits.unwrap().month_spent, 450);
        assert_eq!(out.slot, None, "the slots count Tuesday");
    }

    #[test]
    fn a_new_week_and_a_new_month_keep_theirs() {
        // Monday 2026-11-30 to Tuesday 2026-12-01: a new day and month, the same week.
        let month_end = MONDAY + 7 * SECONDS_PER_DAY;
        let r = reservation(month_end);
        let december = month_end + SECONDS_PER_DAY;
        assert_ne!(month_index(december), month_index(month_end));
        let out = credit(&r, 600, &counted(month_end, 0, 1_000, december, 70));
        assert_eq!(out.spending.week_spent, 470);
        assert_eq!(out.limits.unwrap().month_spent, 70);
        // The next Monday: a new week, the same month.
        let r = reservation(MONDAY);
        let next_week = MONDAY + 7 * SECONDS_PER_DAY;
        assert_eq!(month_index(next_week), month_index(MONDAY));
        let out = credit(&r, 600, &counted(MONDAY, 0, 1_000, next_week, 70));
        assert_eq!(out.limits.unwrap().month_spent, 470);
        assert_eq!(out.spending.week_spent, 70);
        assert_eq!(out.spending.day_spent, 70);
        assert_eq!(out.limits.unwrap().lifetime_spent, 470);
    }

    #[test]
    fn nothing_goes_below_zero() {
        let r = reservation(MONDAY);
        let mut c = counted(MONDAY, 0, 1_000, MONDAY + 1, 0);
        c.spending.day_spent = 10;
        c.velocity.cumulative = 5;
        let out = credit(&r, 1_000, &c);
        assert_eq!(out.spending.day_spent, 0);
        assert_eq!(out.velocity.cumulative, 0);
        assert_eq!(out.spending.week_spent, 0);
    }

    #[test]
    fn a_velocity_window_begun_after_the_reservation_keeps_its_count() {
        let r = reservation(MONDAY);
        let mut c = counted(MONDAY, 0, 1_000, MONDAY + 7_200, 0);
        c.velocity = VelocityState {
            cumulative: 30,
            window_start: MONDAY + 3_600,
            last_commit: MONDAY + 3_600,
        };
        assert_eq!(credit(&r, 500, &c).velocity, c.velocity);
        // The window the reservation started still counts it.
        c.velocity.window_start = MONDAY;
        c.velocity.cumulative = 1_030;
        assert_eq!(credit(&r, 500, &c).velocity.cumulative, 530);
    }

    #[test]
    fn a_policy_without_limits_and_a_payee_without_a_slot() {
        let r = reservation(MONDAY);
        let mut c = counted(MONDAY, 0, 1_000, MONDAY + 1, 0);
        c.limits = None;
        c.payee_day.held = None;
        let out = credit(&r, 1, &c);
        assert_eq!(out.limits, None);
        assert_eq!(out.slot, None);
        assert_eq!(out.spending.day_spent, 999);
    }
}
