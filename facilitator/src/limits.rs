//! Rate limits: per caller address and per payer agent, token buckets of the `governor`
//! crate (GCRA) held in this process.
//!
//! The caller of /verify and /settle is usually a resource server carrying many payers, so
//! the per-address limit is high and only stops a flood; the per-payer limit is lower and is
//! counted only once the settlement's signer is known to act for the payer, so that a
//! stranger cannot spend a victim's allowance. Replicas each count their own (a limit is per
//! process).

use crate::config::Rate;
use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use solana_sdk::pubkey::Pubkey;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Every this many checks, keys whose buckets are full again are forgotten, so the maps hold
/// only the keys seen lately.
const SWEEP_EVERY: u64 = 4_096;

/// One keyed limit; `None` inside when the limit is off.
pub struct Limiter<K: Hash + Eq + Clone> {
    inner: Option<RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock>>,
    clock: DefaultClock,
    checks: AtomicU64,
}

impl<K: Hash + Eq + Clone> Limiter<K> {
    pub fn new(rate: Option<Rate>) -> Self {
        let quota = rate.and_then(|r| {
            let period = Duration::try_from_secs_f64(1.0 / r.per_second).ok()?;
            Some(Quota::with_period(period)?.allow_burst(NonZeroU32::new(r.burst)?))
        });
        Limiter {
            inner: quota.map(RateLimiter::keyed),
            clock: DefaultClock::default(),
            checks: AtomicU64::new(0),
        }
    }

    /// Counts one request of `key`: `Ok`, or how long until it may come again.
    pub fn check(&self, key: &K) -> Result<(), Duration> {
        let Some(limiter) = &self.inner else {
            return Ok(());
        };
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        limiter
            .check_key(key)
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }

    /// Keys with a bucket not yet full again.
    pub fn len(&self) -> usize {
        self.inner.as_ref().map_or(0, RateLimiter::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The facilitator's two limits.
pub struct RateLimits {
    /// Per HTTP peer address (every route but /healthz).
    pub caller: Limiter<IpAddr>,
    /// Per payer agent (/settle, after the signer check).
    pub payer: Limiter<Pubkey>,
}

impl RateLimits {
    pub fn new(limits: &crate::config::Limits) -> Self {
        RateLimits {
            caller: Limiter::new(limits.per_caller),
            payer: Limiter::new(limits.per_payer),
        }
    }
}

/// Whole seconds for a `Retry-After` header: at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gets_its_burst_then_waits_and_other_keys_do_not() {
        let l = Limiter::new(Some(Rate {
            per_second: 0.01,
            burst: 2,
        }));
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        assert_eq!(l.check(&a), Ok(()));
        assert_eq!(l.check(&a), Ok(()));
        let wait = l.check(&a).unwrap_err();
        // One request every 100 s.
        assert!(wait > Duration::from_secs(90) && wait <= Duration::from_secs(100));
        assert_eq!(retry_after_secs(wait), wait.as_secs() + 1);
        assert_eq!(l.check(&b), Ok(()));
        assert_eq!(l.len(), 2);
    }

    #[test]
    fn an_absent_limit_lets_everything_through() {
        let l: Limiter<IpAddr> = Limiter::new(None);
        let ip = IpAddr::from([127, 0, 0, 1]);
        assert!((0..10_000).all(|_| l.check(&ip).is_ok()));
        assert!(l.is_empty());
    }

    #[test]
    fn retry_after_is_whole_seconds_and_never_zero() {
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(10)), 1);
        assert_eq!(retry_after_secs(Duration::from_secs(2)), 2);
        assert_eq!(retry_after_secs(Duration::from_millis(2_001)), 3);
    }
}
