//! The Subscriptions section of an agent's page (docs/subscriptions.md): the gated
//! subscriptions the agent pays and those paid to it, each with its terms, what was pulled in
//! the period, when the next pull falls due, its expiry and whether it can still be pulled.
//! Here: the rows' reading from the chain ([`of`]) and what they say ([`reading`] and the
//! texts); the rows themselves are [`crate::view`]'s, their HTML `pages::subscriptions`'.

use crate::config::DashboardConfig;
use crate::view::{self, Read};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::pulls::{self, Backing, Standing, SubscribedBy, SubscriptionListing};
use trust_gate_client::RpcClient;

/// What a subscription says at a moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    pub state: Standing,
    /// Why it is not active (empty when it is).
    pub why: String,
    /// The period a pull now counts in, as the program rolls it over: its start and what
    /// was pulled in it (none once the delegation is gone).
    pub period: Option<(i64, u64)>,
    /// What the facilitator's crank pulls now: the period's whole amount, once a period.
    pub due: Option<u64>,
    /// When the next pull falls due (now or earlier when one is due); none when no pull can
    /// come any more.
    pub next_pull: Option<i64>,
}

impl Reading {
    /// Whether the crank pulls it on its next round (the payer's policy and kill switch
    /// permitting).
    pub fn due_now(&self, now: i64) -> bool {
        self.state == Standing::Active
            && self.due.is_some()
            && self.next_pull.is_some_and(|at| at <= now)
    }
}

/// What `l` says at `now`: the SDK's standing, due amount and next pull, and why it is not
/// active in words.
pub fn reading(l: &SubscriptionListing, now: i64) -> Reading {
    let state = l.standing(now);
    let why = match (&l.delegation, l.backing) {
        (None, _) => "its delegation is closed (the delegator revoked it at the Subscriptions \
                      program); the gate's record stays until the delegator's unsubscribe"
            .into(),
        (_, Some(Backing::Closed)) => "the delegator's subscription authority for this mint is \
                                       closed: the Subscriptions program refuses every pull (103)"
            .into(),
        (_, Some(Backing::Stale)) => "the delegator's subscription authority was initialized \
                                      again since: this delegation is stale and every pull is \
                                      refused (136)"
            .into(),
        (Some(d), _) if state == Standing::Expired => format!(
            "expired {}: no period starts any more",
            view::utc(d.expiry_ts)
        ),
        _ => String::new(),
    };
    Reading {
        state,
        why,
        period: l.delegation.map(|d| d.period_at(now)),
        due: l.due(now),
        next_pull: l.next_pull(now),
    }
}

/// A period's length in words: `day`, `7 days`, `hour`, `90 seconds`.
pub fn period(secs: u64) -> String {
    const UNITS: [(u64, &str, &str); 4] = [
        (604_800, "week", "weeks"),
        (86_400, "day", "days"),
        (3_600, "hour", "hours"),
        (60, "minute", "minutes"),
    ];
    for (n, one, many) in UNITS {
        if secs >= n && secs.is_multiple_of(n) {
            return match secs / n {
                1 => one.into(),
                k => format!("{k} {many}"),
            };
        }
    }
    match secs {
        1 => "second".into(),
        s => format!("{s} seconds"),
    }
}

/// The period's use: `pulled 0.5 of 1 this period`.
pub fn use_text(row: &SubscriptionListing, r: &Reading, decimals: Option<u8>, now: i64) -> String {
    let (Some(d), Some((start, pulled))) = (&row.delegation, r.period) else {
        return "unknown: its delegation is closed".into();
    };
    if now < start {
        return format!("the first period starts {}", view::utc(start));
    }
    let of = format!(
        "pulled {} of {}",
        view::amount(pulled, decimals),
        view::amount(d.amount_per_period, decimals)
    );
    match r.state {
        Standing::Expired => format!("{of} in its last period"),
        _ => format!("{of} this period"),
    }
}

/// When the next pull comes: `due now`, a time, or why none will; `paused`: the payer's kill
/// switch is engaged, which refuses the pull however due it is.
pub fn next_text(r: &Reading, now: i64, paused: bool) -> String {
    match (r.state, r.due, r.next_pull) {
        (Standing::Revoked, _, _) => "none: revoked".into(),
        (Standing::Expired, _, _) => "none: expired".into(),
        _ if r.due_now(now) => {
            if paused {
                "due now, but the payer's kill switch refuses it while paused".into()
            } else {
                "due now".into()
            }
        }
        (_, _, Some(at)) => format!("{} ({})", view::utc(at), view::until(at, now)),
        (_, _, None) => "none: it expires before the next period".into(),
    }
}

fn why(e: trust_gate_client::ClientError) -> String {
    trust_gate_client::redact::urls_in(&e.to_string())
}

/// The gated subscriptions `asset` pays and those paid to it, oldest first, each with its
/// delegation and the authority behind it (`trust_gate_client::pulls::list`, as the
/// facilitator's crank finds what to pull).
pub async fn of(
    rpc: &RpcClient,
    c: &DashboardConfig,
    asset: &Pubkey,
) -> (
    Read<Vec<SubscriptionListing>>,
    Read<Vec<SubscriptionListing>>,
) {
    let gate = c.ids.gate;
    let (paid, received) = tokio::join!(
        pulls::list(rpc, &gate, SubscribedBy::Payer(*asset)),
        pulls::list(rpc, &gate, SubscribedBy::Payee(*asset)),
    );
    (paid.map_err(why), received.map_err(why))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use gate::state::GatedSubscription;
    use trust_gate_client::subscriptions::RecurringDelegation;

    const DAY: i64 = 86_400;
    pub(crate) const START: i64 = 1_800_000_000;

    /// A subscription of 1.00 (6 decimals) a day from `START`, `pulled` in its first period.
    pub(crate) fn row(pulled: u64, expiry: i64) -> SubscriptionListing {
        SubscriptionListing {
            address: Pubkey::new_unique(),
            record: GatedSubscription {
                payer_asset: Pubkey::new_unique(),
                payee_asset: Pubkey::new_unique(),
                facilitator: Pubkey::new_unique(),
                delegation: Pubkey::new_unique(),
                delegator: Pubkey::new_unique(),
                policy_id: 1,
                delegate_bump: 255,
                created_at: START,
                bump: 255,
            },
            delegation: Some(RecurringDelegation {
                delegator: Pubkey::new_unique(),
                delegatee: Pubkey::new_unique(),
                payer: Pubkey::new_unique(),
                init_id: 7,
                subscription_authority: Pubkey::new_unique(),
                mint: Pubkey::new_unique(),
                current_period_start_ts: START,
                period_length_s: DAY as u64,
                expiry_ts: expiry,
                amount_per_period: 1_000_000,
                amount_pulled_in_period: pulled,
            }),
            backing: Some(Backing::Current),
            rent: 0,
        }
    }

    fn texts(row: &SubscriptionListing, now: i64) -> (Reading, String, String) {
        let r = reading(row, now);
        let used = use_text(row, &r, Some(6), now);
        let next = next_text(&r, now, false);
        (r, used, next)
    }

    #[test]
    fn a_fresh_period_is_due_now_with_nothing_pulled() {
        let (r, used, next) = texts(&row(0, 0), START + 60);
        assert_eq!(
            (r.state, r.due, r.period),
            (Standing::Active, Some(1_000_000), Some((START, 0)))
        );
        assert_eq!(used, "pulled 0 of 1 this period");
        assert_eq!(next, "due now");
        assert!(r.due_now(START + 60));
        // The payer's kill switch refuses it: the page says so.
        assert_eq!(
            next_text(&r, START + 60, true),
            "due now, but the payer's kill switch refuses it while paused"
        );
    }

    #[test]
    fn once_pulled_the_next_pull_is_the_next_periods_start() {
        let now = START + 3_600;
        let (r, used, next) = texts(&row(1_000_000, 0), now);
        assert_eq!(
            (r.state, r.due, r.next_pull),
            (Standing::Active, None, Some(START + DAY))
        );
        assert_eq!(used, "pulled 1 of 1 this period");
        assert!(!r.due_now(now));
        assert_eq!(next, format!("{} (in 23 h 0 min)", view::utc(START + DAY)));
        // Partly pulled (by hand, say): the crank waits for the next period too.
        let (r, used, _) = texts(&row(400_000, 0), now);
        assert_eq!((r.due, r.next_pull), (None, Some(START + DAY)));
        assert_eq!(used, "pulled 0.4 of 1 this period");
        // A later period rolls over: nothing pulled in it, due again.
        let (r, used, next) = texts(&row(1_000_000, 0), START + 2 * DAY + 5);
        assert_eq!(
            (r.due, r.period),
            (Some(1_000_000), Some((START + 2 * DAY, 0)))
        );
        assert_eq!(
            (used.as_str(), next.as_str()),
            ("pulled 0 of 1 this period", "due now")
        );
    }

    #[test]
    fn before_its_start_it_says_when_the_first_period_starts() {
        let (r, used, next) = texts(&row(0, 0), START - DAY);
        assert_eq!(
            (r.state, r.due, r.next_pull),
            (Standing::Active, None, Some(START))
        );
        assert_eq!(
            used,
            format!("the first period starts {}", view::utc(START))
        );
        assert_eq!(next, format!("{} (in 1 d 0 h)", view::utc(START)));
    }

    #[test]
    fn the_last_period_before_the_expiry_has_no_next_pull_and_then_it_expires() {
        let expiry = START + DAY / 2;
        let (r, _, next) = texts(&row(1_000_000, expiry), START + 60);
        assert_eq!((r.state, r.next_pull), (Standing::Active, None));
        assert_eq!(next, "none: it expires before the next period");
        let (r, used, next) = texts(&row(1_000_000, expiry), expiry + 1);
        assert_eq!(
            (r.state, r.due, r.next_pull),
            (Standing::Expired, None, None)
        );
        assert!(r.why.contains(&view::utc(expiry)), "{}", r.why);
        assert_eq!(used, "pulled 1 of 1 in its last period");
        assert_eq!(next, "none: expired");
    }

    #[test]
    fn a_revoked_subscription_is_never_due() {
        let now = START + 60;
        // Its delegation closed: the terms are gone with it.
        let gone = SubscriptionListing {
            backing: None,
            delegation: None,
            ..row(0, 0)
        };
        let (r, used, next) = texts(&gone, now);
        assert_eq!(
            (r.state, r.due, r.next_pull, r.period),
            (Standing::Revoked, None, None, None)
        );
        assert!(r.why.contains("delegation is closed"), "{}", r.why);
        assert_eq!(used, "unknown: its delegation is closed");
        assert_eq!(next, "none: revoked");
        // Its authority closed, or initialized again: the delegation alone would read due.
        for (authority, code) in [(Backing::Closed, "103"), (Backing::Stale, "136")] {
            let dead = SubscriptionListing {
                backing: Some(authority),
                ..row(0, 0)
            };
            // The SDK sees it too: nothing is due.
            assert_eq!(dead.due(now), None);
            let (r, used, next) = texts(&dead, now);
            assert!(!r.due_now(now));
            assert_eq!(
                (r.state, r.due, r.next_pull),
                (Standing::Revoked, None, None)
            );
            assert!(r.why.contains(code), "{}", r.why);
            assert_eq!(used, "pulled 0 of 1 this period");
            assert_eq!(next, "none: revoked");
        }
    }

    #[test]
    fn periods_read_as_words() {
        assert_eq!(period(86_400), "day");
        assert_eq!(period(7 * 86_400), "week");
        assert_eq!(period(30 * 86_400), "30 days");
        assert_eq!(period(3_600), "hour");
        assert_eq!(period(7_200), "2 hours");
        assert_eq!(period(300), "5 minutes");
        assert_eq!(period(90), "90 seconds");
        assert_eq!(period(1), "second");
    }
}
