//! What an agent's page shows, as plain data (read by [`crate::gather`], drawn by
//! [`crate::pages`]), and the pure helpers the page needs: amounts with decimals, UTC times,
//! the spend per day of the chart.

use solana_sdk::pubkey::Pubkey;
use std::collections::HashMap;
use trust_gate_client::approvals::PendingApproval;
use trust_gate_client::decode::EngineReputation;
use trust_gate_client::holdback::{HoldStatus, HoldbackView};
use trust_gate_client::pulls::SubscriptionListing;
use trust_gate_client::spend::Spend;

pub const SECONDS_PER_DAY: i64 = 86_400;
/// The days the chart shows, today last, when the facilitator's records (90 days) are read.
pub const CHART_DAYS: usize = 14;
/// The days it shows from the chain's open payment logs alone (they close after a week).
pub const CHART_DAYS_CHAIN: usize = 7;
/// The most settlements read and shown: the newest.
pub const SETTLEMENTS_MAX: usize = 200;

/// One policy of the agent, with its spend now.
#[derive(Clone, Debug)]
pub struct PolicyView {
    pub address: Pubkey,
    pub id: u32,
    pub mint: Pubkey,
    /// The mint's decimals (amounts are shown with them), when the mint was read.
    pub decimals: Option<u8>,
    pub spend: Spend,
    pub vault: Option<VaultView>,
    /// What could not be read of it (its velocity ledger, its vault, its mint): the page
    /// says so rather than show a zero.
    pub problems: Vec<String>,
}

/// A vault-funded policy's vault.
#[derive(Clone, Debug)]
pub struct VaultView {
    pub address: Pubkey,
    /// None: not opened yet.
    pub balance: Option<u64>,
    /// The one key that may pay from it (none yet: the default key).
    pub spender: Option<Pubkey>,
}

/// A payment the agent made, from its payment log on chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettlementRow {
    pub log: Pubkey,
    pub payment_id_hash: String,
    pub facilitator: Pubkey,
    pub payee: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    pub created_at: i64,
    /// The payment's deadline: its log closes once this and the dispute window (7 days from
    /// `created_at`) have passed.
    pub deadline: i64,
    /// Whether the payer disputed it (its dispute record exists).
    pub disputed: bool,
    /// Its log has closed: what it held comes from the facilitator's record.
    pub closed: bool,
    /// The share its payer's policy held back, and where it stands (docs/holdback.md).
    pub holdback: Option<HoldbackView>,
}

impl SettlementRow {
    /// The row of the payment log at `log`.
    pub fn of_log(log: Pubkey, l: &gate::state::FeedbackLog) -> SettlementRow {
        SettlementRow {
            log,
            payment_id_hash: trust_gate_client::decode::hex(&l.payment_id_hash),
            facilitator: l.facilitator,
            payee: l.payee_asset,
            mint: l.mint,
            amount: l.amount,
            created_at: l.created_at,
            deadline: l.deadline,
            disputed: false,
            closed: false,
            holdback: None,
        }
    }
}

/// A payment of which the payer's policy held a share back in the payee's escrow
/// (docs/holdback.md), from its open payment log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldRow {
    pub log: Pubkey,
    pub payment_id_hash: String,
    pub payee: Pubkey,
    /// The wallet that paid: a refund or an upheld dispute pays the share back to it.
    pub payer_wallet: Pubkey,
    pub mint: Pubkey,
    /// The whole amount paid, the share included.
    pub amount: u64,
    pub created_at: i64,
    pub holdback: HoldbackView,
}

impl HeldRow {
    /// The row of a held payment the SDK listed.
    pub fn of(l: &trust_gate_client::held::HeldListing) -> Option<HeldRow> {
        let r = &l.receipt;
        Some(HeldRow {
            log: l.log,
            payment_id_hash: trust_gate_client::decode::hex(&r.payment_id_hash),
            payee: r.payee_asset,
            payer_wallet: r.payer_wallet,
            mint: r.mint,
            amount: r.amount,
            created_at: r.created_at,
            holdback: r.holdback.clone()?,
        })
    }
}

/// A held share's state as a person reads it: its name, whether it is settled for good
/// (paid out) or still waits (held, disputed), and what comes next or what became of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoldReading {
    /// held, disputed, released, refunded, upheld, rejected or lapsed.
    pub state: &'static str,
    /// Still in the escrow.
    pub open: bool,
    pub note: String,
}

/// What `h` says at `now`.
pub fn hold_reading(h: &HoldbackView, now: i64) -> HoldReading {
    let (state, open, note) = match h.state {
        HoldStatus::Held if now >= h.hold_until => (
            "held",
            true,
            format!(
                "hold over since {}: anyone releases it to the payee (the facilitator's crank does)",
                utc(h.hold_until)
            ),
        ),
        HoldStatus::Held => (
            "held",
            true,
            format!(
                "released to the payee from {} ({}); the payer may dispute until then",
                utc(h.hold_until),
                until(h.hold_until, now)
            ),
        ),
        HoldStatus::Disputed => {
            let ends = h.arbitration_ends.unwrap_or(h.hold_until);
            let who = if h.arbiter.is_some() {
                "the payee refunds it or the arbiter decides"
            } else {
                "the payee refunds it (no arbiter)"
            };
            let note = if now >= ends {
                format!(
                    "arbitration ended {} undecided: anyone releases it to the payee",
                    utc(ends)
                )
            } else {
                format!(
                    "frozen until {who}, at the latest until {} ({}), then released to the payee",
                    utc(ends),
                    until(ends, now)
                )
            };
            ("disputed", true, note)
        }
        HoldStatus::Released => ("released", false, "paid to the payee after the hold".into()),
        HoldStatus::Refunded => ("refunded", false, "given back to the payer by the payee".into()),
        HoldStatus::Upheld => (
            "upheld",
            false,
            "the arbiter upheld the dispute: given back to the payer".into(),
        ),
        HoldStatus::Rejected => (
            "rejected",
            false,
            "the arbiter rejected the dispute: paid to the payee".into(),
        ),
        HoldStatus::Lapsed => (
            "lapsed",
            false,
            "the arbitration ended undecided: paid to the payee".into(),
        ),
    };
    HoldReading { state, open, note }
}

/// A channel open through the gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelView {
    pub channel: Pubkey,
    pub policy_id: u32,
    pub payee: Pubkey,
    pub mint: Pubkey,
    pub deposit: u64,
    pub created_at: i64,
}

/// What could be read, or why not (shown in its place on the page).
pub type Read<T> = Result<T, String>;

/// Everything an agent's page shows.
#[derive(Clone, Debug)]
pub struct AgentView {
    pub asset: Pubkey,
    /// The cluster's clock when read (else this machine's: `clock` says which).
    pub now: i64,
    pub clock: &'static str,
    pub name: Option<String>,
    pub owner: Read<Pubkey>,
    /// None: the agent has no kill switch account (it cannot be paused yet).
    pub paused: Read<Option<bool>>,
    pub reputation: Read<EngineReputation>,
    pub policies: Read<Vec<PolicyView>>,
    pub channels: Read<Vec<ChannelView>>,
    pub approvals: Read<Vec<PendingApproval>>,
    /// The agent's payments of which a share was held back (found by the wallets below),
    /// newest first.
    pub held_paid: Read<Vec<HeldRow>>,
    /// The payments to the agent of which a share was held back in its escrow, newest first.
    pub held_received: Read<Vec<HeldRow>>,
    /// The gated subscriptions the agent pays, oldest first.
    pub subscriptions_paid: Read<Vec<SubscriptionListing>>,
    /// The gated subscriptions paid to the agent, oldest first.
    pub subscriptions_received: Read<Vec<SubscriptionListing>>,
    pub settlements: Read<Vec<SettlementRow>>,
    /// Where the settlements come from, and how far back they reach.
    pub settlements_source: String,
    /// The wallets whose signed payments the chain's logs were searched for.
    pub wallets: Vec<(&'static str, Pubkey)>,
    /// How many days the chart may show (the sources' reach).
    pub chart_days: usize,
    /// The decimals of every mint the page names, when read.
    pub decimals: HashMap<Pubkey, u8>,
}

impl AgentView {
    /// The decimals of `mint`, when read.
    pub fn decimals_of(&self, mint: &Pubkey) -> Option<u8> {
        self.decimals.get(mint).copied()
    }
}

/// `amount` base units with `decimals` (none: as they are), trailing zeros dropped.
pub fn amount(amount: u64, decimals: Option<u8>) -> String {
    let Some(d) = decimals.filter(|d| *d > 0) else {
        return amount.to_string();
    };
    // A mint may declare more decimals than a u128 can scale (SPL allows up to 255).
    let Some(scale) = 10u128.checked_pow(u32::from(d)) else {
        return amount.to_string();
    };
    let whole = u128::from(amount) / scale;
    let frac = u128::from(amount) % scale;
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:0width$}", width = usize::from(d));
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// The civil date of a day since the epoch (proleptic Gregorian, UTC).
pub fn civil(day: i64) -> (i64, u32, u32) {
    // Howard Hinnant's days-to-civil.
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Unix seconds as `YYYY-MM-DD HH:MM UTC`.
pub fn utc(ts: i64) -> String {
    let (y, m, d) = civil(ts.div_euclid(SECONDS_PER_DAY));
    let s = ts.rem_euclid(SECONDS_PER_DAY);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        s / 3600,
        (s % 3600) / 60
    )
}

/// Unix seconds as `MM-DD` (the chart's labels).
pub fn month_day(ts: i64) -> String {
    let (_, m, d) = civil(ts.div_euclid(SECONDS_PER_DAY));
    format!("{m:02}-{d:02}")
}

/// How long until `ts` from `now`, roughly (`in 3 h 20 min`, `passed`).
pub fn until(ts: i64, now: i64) -> String {
    let left = ts - now;
    if left <= 0 {
        return "passed".into();
    }
    let (d, h, m) = (left / 86_400, (left % 86_400) / 3600, (left % 3600) / 60);
    match (d, h) {
        (0, 0) => format!("in {} min", m.max(1)),
        (0, _) => format!("in {h} h {m} min"),
        _ => format!("in {d} d {h} h"),
    }
}

/// The amount of `mint` paid on each of the `days` days up to `now`'s (oldest first), as
/// (the day's first second, total), from `rows`; other mints and days are left out.
pub fn per_day(rows: &[SettlementRow], mint: &Pubkey, now: i64, days: usize) -> Vec<(i64, u64)> {
    let today = now.div_euclid(SECONDS_PER_DAY);
    let first = today - (days.max(1) as i64 - 1);
    let mut days: Vec<(i64, u64)> = (first..=today).map(|d| (d * SECONDS_PER_DAY, 0)).collect();
    for r in rows.iter().filter(|r| r.mint == *mint) {
        let d = r.created_at.div_euclid(SECONDS_PER_DAY);
        if (first..=today).contains(&d) {
            let slot = &mut days[(d - first) as usize].1;
            *slot = slot.saturating_add(r.amount);
        }
    }
    days
}

/// The share of `cap` that `spent` is, 0..=100 (0 when there is no cap).
pub fn percent(spent: u64, cap: u64) -> u32 {
    if cap == 0 {
        return 0;
    }
    let p = u128::from(spent) * 100 / u128::from(cap);
    p.min(100) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_keep_their_decimals() {
        assert_eq!(amount(100_000, Some(6)), "0.1");
        assert_eq!(amount(1_230_000, Some(6)), "1.23");
        assert_eq!(amount(5_000_000, Some(6)), "5");
        assert_eq!(amount(7, Some(6)), "0.000007");
        assert_eq!(amount(42, None), "42");
        assert_eq!(amount(u64::MAX, Some(9)), "18446744073.709551615");
        assert_eq!(amount(5, Some(200)), "5");
    }

    #[test]
    fn times_are_utc_calendar_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        // 2024-02-29, a leap day, 13:45.
        assert_eq!(utc(1_709_214_300), "2024-02-29 13:45 UTC");
        assert_eq!(month_day(1_798_761_600), "01-01");
        assert_eq!(until(100, 200), "passed");
        assert_eq!(until(200 + 3_600 * 3 + 60 * 20, 200), "in 3 h 20 min");
        assert_eq!(until(200 + 86_400 * 2 + 3_600, 200), "in 2 d 1 h");
    }

    fn row(created_at: i64, amount: u64) -> SettlementRow {
        SettlementRow {
            log: Pubkey::new_unique(),
            payment_id_hash: String::new(),
            facilitator: Pubkey::default(),
            payee: Pubkey::default(),
            mint: Pubkey::default(),
            amount,
            created_at,
            deadline: created_at,
            disputed: false,
            closed: false,
            holdback: None,
        }
    }

    #[test]
    fn the_chart_sums_each_day_and_leaves_older_days_out() {
        let now = 20_000 * SECONDS_PER_DAY + 500;
        let rows = [
            row(now - 10, 3),
            row(now - 20, 4),
            row(now - SECONDS_PER_DAY, 5),
            row(now - 30 * SECONDS_PER_DAY, 100),
        ];
        let days = per_day(&rows, &Pubkey::default(), now, CHART_DAYS);
        assert_eq!(days.len(), CHART_DAYS);
        assert_eq!(days[CHART_DAYS - 1], (20_000 * SECONDS_PER_DAY, 7));
        assert_eq!(days[CHART_DAYS - 2].1, 5);
        assert_eq!(days.iter().map(|d| d.1).sum::<u64>(), 12);
        // Another mint's payments are not added to these.
        assert!(per_day(&rows, &Pubkey::new_unique(), now, 7)
            .iter()
            .all(|d| d.1 == 0));
    }

    fn share(state: HoldStatus, arbitration_ends: Option<i64>) -> HoldbackView {
        use trust_gate_client::json::{Amount, Key};
        HoldbackView {
            held: Amount(10_000),
            escrow: Key(Pubkey::new_unique()),
            recipient: Key(Pubkey::new_unique()),
            arbiter: Some(Key(Pubkey::new_unique())),
            hold_until: 1_000,
            state,
            arbitration_ends,
        }
    }

    #[test]
    fn a_held_share_says_when_it_is_released_and_what_became_of_it() {
        let held = hold_reading(&share(HoldStatus::Held, None), 1_000 - 120);
        assert_eq!((held.state, held.open), ("held", true));
        assert!(
            held.note.contains("1970-01-01 00:16 UTC (in 2 min)"),
            "{}",
            held.note
        );
        let due = hold_reading(&share(HoldStatus::Held, None), 1_000);
        assert!(due.note.contains("anyone releases it"), "{}", due.note);
        let disputed = hold_reading(&share(HoldStatus::Disputed, Some(605_800)), 2_000);
        assert_eq!((disputed.state, disputed.open), ("disputed", true));
        assert!(
            disputed.note.contains("the arbiter decides"),
            "{}",
            disputed.note
        );
        assert!(disputed.note.contains("in 6 d 23 h"), "{}", disputed.note);
        let lapsing = hold_reading(&share(HoldStatus::Disputed, Some(605_800)), 605_800);
        assert!(lapsing.note.contains("undecided"), "{}", lapsing.note);
        for (state, name) in [
            (HoldStatus::Released, "released"),
            (HoldStatus::Refunded, "refunded"),
            (HoldStatus::Upheld, "upheld"),
            (HoldStatus::Rejected, "rejected"),
            (HoldStatus::Lapsed, "lapsed"),
        ] {
            let r = hold_reading(&share(state, Some(605_800)), 0);
            assert_eq!((r.state, r.open), (name, false));
        }
    }

    #[test]
    fn percentages_are_bounded() {
        assert_eq!(percent(50, 200), 25);
        assert_eq!(percent(300, 200), 100);
        assert_eq!(percent(1, 0), 0);
        assert_eq!(percent(u64::MAX, u64::MAX), 100);
    }
}
