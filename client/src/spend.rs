//! A payer's spend at a glance: what a policy's counters mean at a moment, against every cap
//! (day, week, month, lifetime, per payee), the velocity window's use and when each window
//! starts over. Pure: the caller reads the accounts (MCP's `gate_get_spend`).
//!
//! The counters on chain are written only when a payment commits, so a counter of a window
//! that has passed still holds its old sum: here, as in the engine, it counts 0 once its day,
//! week or month is over, and the velocity window 0 once it has run out.

use crate::decode::{PolicyAccount, VelocityLedger};
use crate::json;
use anchor_lang::prelude::Pubkey;
use policy_vault::engine::time::{day_index, month_index, week_index, SECONDS_PER_DAY};
use schemars::JsonSchema;
use serde::Serialize;

/// One cap and its window's spend (atomic units, as decimal strings in JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    /// The cap; 0: no cap.
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub cap: u64,
    /// Spent in the current window.
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub spent: u64,
    /// `cap - spent`, when there is a cap (null: no cap).
    #[serde(with = "json::amount_opt")]
    #[schemars(with = "Option<json::Amount>")]
    pub remaining: Option<u64>,
    /// Unix seconds when the window starts over (none for the lifetime).
    pub resets_at: Option<i64>,
}

impl Window {
    fn new(cap: u64, spent: u64, resets_at: Option<i64>) -> Window {
        Window {
            cap,
            spent,
            remaining: (cap != 0).then(|| cap.saturating_sub(spent)),
            resets_at,
        }
    }
}

/// One payee's spend today under a per-payee cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayeeSpend {
    /// The payee agent.
    #[serde(with = "json::key")]
    #[schemars(with = "json::Key")]
    pub payee: Pubkey,
    /// Paid to it today.
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub spent: u64,
    /// Left for it today.
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub remaining: u64,
}

/// A policy's per-payee daily cap and today's payees (16 slots a day).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerPayee {
    /// The cap per payee per UTC day.
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub cap: u64,
    /// Today's payees.
    pub payees: Vec<PayeeSpend>,
    /// Slots left today for payees not yet paid (a 17th payee is denied: PayeeSlotsFull).
    pub slots_free: usize,
    /// Unix seconds when the day starts over.
    pub resets_at: i64,
}

/// The velocity rule and its window's use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Velocity {
    /// The window's length in seconds.
    pub window_secs: u64,
    /// The cap for a payer of immediate tier 1 and up; a tier-0 or unrated payer gets
    /// `tier0DecayBps` of it.
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub max_in_window: u64,
    /// Share of the cap (basis points) a tier-0 or unrated payer gets.
    pub tier0_decay_bps: u16,
    /// Used in the current window.
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub used: u64,
    /// When the current window ends (none while no window runs).
    pub resets_at: Option<i64>,
}

/// A policy's spend at `now`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Spend {
    /// The cluster's clock, unix seconds: what the windows are counted at.
    pub now: i64,
    /// Whether the policy is retired.
    pub retired: bool,
    /// Whether the Spending kind is on (else the caps are not checked).
    pub spending_enforced: bool,
    /// Whether the Velocity kind is on.
    pub velocity_enforced: bool,
    /// Largest single payment; 0: no cap.
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub per_transaction_cap: u64,
    /// Today's cap (UTC day).
    pub day: Window,
    /// This week's cap (from Monday 00:00 UTC).
    pub week: Window,
    /// The monthly cap (null for a policy without limits).
    pub month: Option<Window>,
    /// The lifetime cap (null for a policy without limits).
    pub lifetime: Option<Window>,
    /// The per-payee daily cap and today's payees (null when there is none).
    pub per_payee: Option<PerPayee>,
    /// The velocity rule and its window's use (null when the ledger does not exist).
    pub velocity: Option<Velocity>,
    /// Above this a payment needs an approval (0: never).
    #[serde(with = "json::amount")]
    #[schemars(with = "json::Amount")]
    pub approval_threshold: u64,
}

/// The first second of the calendar month after the one holding `now` (UTC).
fn next_month_start(now: i64) -> i64 {
    let month = month_index(now);
    let mut day = day_index(now) + 1;
    // At most 31 days ahead.
    while month_index(day * SECONDS_PER_DAY) == month {
        day += 1;
    }
    day * SECONDS_PER_DAY
}

/// What `policy` (and its velocity `ledger`, when read) has spent at `now`.
pub fn spend(policy: &PolicyAccount, ledger: Option<&VelocityLedger>, now: i64) -> Spend {
    use policy_vault::engine::config::kinds;
    let base = policy;
    let p = &base.params;
    let today = day_index(now);
    let this_week = week_index(now);
    let current = |index: i64, at: i64, spent: u64| if index == at { spent } else { 0 };
    let tomorrow = (today + 1) * SECONDS_PER_DAY;
    // Weeks start on Monday: week w's first day is 7w - 3.
    let next_monday = ((this_week + 1) * 7 - 3) * SECONDS_PER_DAY;
    let (month, lifetime, per_payee) = match &policy.limits {
        None => (None, None, None),
        Some(limits) => {
            let r = &limits.rules;
            let month = Window::new(
                r.monthly_cap,
                current(limits.month_index, month_index(now), limits.month_spent),
                Some(next_month_start(now)),
            );
            let lifetime = Window::new(r.lifetime_cap, limits.lifetime_spent, None);
            let per_payee = policy.payee_day.as_ref().map(|day| {
                let slots: Vec<_> = if day.day == today {
                    day.slots
                        .iter()
                        .filter(|s| s.payee != Pubkey::default())
                        .collect()
                } else {
                    Vec::new()
                };
                PerPayee {
                    cap: r.payee_daily_cap,
                    payees: slots
                        .iter()
                        .map(|s| PayeeSpend {
                            payee: s.payee,
                            spent: s.spent,
                            remaining: r.payee_daily_cap.saturating_sub(s.spent),
                        })
                        .collect(),
                    slots_free: day.slots.len() - slots.len(),
                    resets_at: tomorrow,
                }
            });
            (Some(month), Some(lifetime), per_payee)
        }
    };
    let velocity = ledger.map(|l| {
        let window = i64::try_from(p.velocity_window_secs).unwrap_or(i64::MAX);
        let end = l.window_start.saturating_add(window);
        let running = l.window_start != 0 && now >= l.window_start && now < end;
        Velocity {
            window_secs: p.velocity_window_secs,
            max_in_window: p.velocity_max_in_window,
            tier0_decay_bps: p.tier0_decay_bps,
            used: if running { l.cumulative } else { 0 },
            resets_at: running.then_some(end),
        }
    });
    Spend {
        now,
        retired: base.is_retired(),
        spending_enforced: p.kinds & kinds::SPENDING != 0,
        velocity_enforced: p.kinds & kinds::VELOCITY != 0,
        per_transaction_cap: p.per_tx_cap,
        day: Window::new(
            p.daily_cap,
            current(base.day_index, today, base.day_spent),
            Some(tomorrow),
        ),
        week: Window::new(
            p.weekly_cap,
            current(base.week_index, this_week, base.week_spent),
            Some(next_monday),
        ),
        month,
        lifetime,
        per_payee,
        velocity,
        approval_threshold: policy.approval_threshold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{PayeeDaySlots, PolicyLimits, PolicyRules};
    use policy_vault::engine::config::kinds;
    use policy_vault::engine::PAYEE_SLOTS;
    use policy_vault::state::{PayeeSlot, PolicyParams};

    /// Wednesday 2026-11-25 12:00 UTC.
    const NOW: i64 = 1_795_608_000;

    fn base() -> PolicyAccount {
        PolicyAccount {
            asset: Pubkey::new_unique(),
            policy_id: 1,
            params: PolicyParams {
                kinds: kinds::SPENDING | kinds::VELOCITY,
                gate_mode: 0,
                mint: Pubkey::new_unique(),
                per_tx_cap: 50,
                daily_cap: 100,
                weekly_cap: 500,
                velocity_window_secs: 60,
                velocity_max_in_window: 80,
                tier0_decay_bps: 10_000,
                min_counterparty_tier: 0,
                max_counterparty_risk: 255,
                min_counterparty_confidence: 0,
                unrated_treatment: 1,
                required_capability: [0; 32],
                accepted_attestors: [Pubkey::default(); 2],
                funding: 0,
            },
            day_index: day_index(NOW),
            day_spent: 30,
            week_index: week_index(NOW),
            week_spent: 130,
            created_at: NOW - 1_000,
            retired_at: 0,
            bump: 255,
            vault_bump: 0,
            spender: Pubkey::default(),
            vault: Pubkey::default(),
            approval_threshold: 0,
            version: 1,
            limits: None,
            payee_day: None,
            holdback: None,
        }
    }

    fn ledger(cumulative: u64, window_start: i64) -> VelocityLedger {
        VelocityLedger {
            asset: Pubkey::new_unique(),
            policy_id: 1,
            cumulative,
            window_start,
            last_commit: window_start,
            bump: 255,
        }
    }

    #[test]
    fn the_windows_count_todays_spend_and_start_over_on_time() {
        let ledger = ledger(25, NOW - 10);
        let s = spend(&base(), Some(&ledger), NOW);
        assert_eq!(s.day, Window::new(100, 30, Some(1_795_651_200)));
        assert_eq!(s.day.remaining, Some(70));
        // The next Monday: 2026-11-30 00:00 UTC.
        assert_eq!(s.week.resets_at, Some(1_795_996_800));
        assert_eq!(s.week.spent, 130);
        let v = s.velocity.unwrap();
        assert_eq!((v.used, v.resets_at), (25, Some(NOW + 50)));
        assert!(s.month.is_none() && s.per_payee.is_none());

        // Tomorrow (Thursday): the day starts over, the week does not; the velocity window
        // has run out.
        let later = NOW + SECONDS_PER_DAY;
        let s = spend(&base(), Some(&ledger), later);
        assert_eq!((s.day.spent, s.week.spent), (0, 130));
        assert_eq!(s.velocity.unwrap().used, 0);
        // The next Monday: the week too.
        let s = spend(&base(), None, 1_795_996_800);
        assert_eq!((s.day.spent, s.week.spent), (0, 0));
        assert!(s.velocity.is_none());
    }

    #[test]
    fn limits_add_the_month_the_lifetime_and_todays_payees() {
        let payee = Pubkey::new_unique();
        let mut slots = [PayeeSlot::default(); PAYEE_SLOTS];
        slots[0] = PayeeSlot { payee, spent: 12 };
        let policy = PolicyAccount {
            limits: Some(PolicyLimits {
                rules: PolicyRules {
                    monthly_cap: 1_000,
                    lifetime_cap: 5_000,
                    payee_daily_cap: 20,
                    ..PolicyRules::default()
                },
                month_index: month_index(NOW),
                month_spent: 400,
                lifetime_spent: 900,
            }),
            payee_day: Some(PayeeDaySlots {
                day: day_index(NOW),
                slots,
            }),
            approval_threshold: 40,
            ..base()
        };
        let s = spend(&policy, None, NOW);
        // 2026-12-01 00:00 UTC.
        assert_eq!(s.month, Some(Window::new(1_000, 400, Some(1_796_083_200))));
        assert_eq!(s.lifetime, Some(Window::new(5_000, 900, None)));
        let pp = s.per_payee.clone().unwrap();
        assert_eq!(
            pp.payees,
            vec![PayeeSpend {
                payee,
                spent: 12,
                remaining: 8
            }]
        );
        assert_eq!(pp.slots_free, PAYEE_SLOTS - 1);
        assert_eq!(s.approval_threshold, 40);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["month"]["remaining"], "600");
        assert_eq!(json["lifetime"]["resetsAt"], serde_json::Value::Null);
        // December: the month and today's payees start over, the lifetime never does.
        let december = 1_796_083_200 + 3_600;
        let s = spend(&policy, None, december);
        assert_eq!(s.month.unwrap().spent, 0);
        assert_eq!(s.lifetime.unwrap().spent, 900);
        assert!(s.per_payee.unwrap().payees.is_empty());
    }
}
