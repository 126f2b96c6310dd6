//! A map whose entries expire: what a key with a TTL is in Redis, kept in one process (the
//! lock store's payment records and sent signatures, the payment ids of `paid_once`). An
//! expired entry reads as absent; expired entries are dropped whenever the map's size
//! reaches a power of two, so an insert costs amortized O(1) and the map stays within twice
//! its live entries.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Expiring<K, V> {
    entries: Mutex<HashMap<K, (V, Instant)>>,
}

impl<K, V> Default for Expiring<K, V> {
    fn default() -> Self {
        Expiring {
            entries: Mutex::default(),
        }
    }
}

impl<K: Eq + Hash, V: Clone + PartialEq> Expiring<K, V> {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<K, (V, Instant)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live value at `key`.
    pub fn get(&self, key: &K) -> Option<V> {
        let now = Instant::now();
        self.entries()
            .get(key)
            .filter(|(_, until)| now < *until)
            .map(|(v, _)| v.clone())
    }

    /// Keeps `value` at `key` for `ttl`, replacing what was there.
    pub fn insert(&self, key: K, value: V, ttl: Duration) {
        let now = Instant::now();
        let mut m = self.entries();
        sweep(&mut m, now);
        m.insert(key, (value, now + ttl));
    }

    /// Writes `value` at `key` for `ttl` unless a live value is there (Redis's SET NX):
    /// `None` when written, else that value.
    pub fn claim(&self, key: K, value: V, ttl: Duration) -> Option<V> {
        let now = Instant::now();
        let mut m = self.entries();
        if let Some((held, until)) = m.get(&key) {
            if now < *until {
                return Some(held.clone());
            }
        }
        sweep(&mut m, now);
        m.insert(key, (value, now + ttl));
        None
    }

    /// Replaces the live value `old` at `key` with `new` for `ttl`; false when `key` no
    /// longer holds `old`.
    pub fn replace_if(&self, key: &K, old: &V, new: V, ttl: Duration) -> bool {
        let now = Instant::now();
        match self.entries().get_mut(key) {
            Some((v, until)) if now < *until && v == old => {
                *v = new;
                *until = now + ttl;
                true
            }
            _ => false,
        }
    }
}

/// Drops the expired entries whenever the map has doubled since the last sweep.
fn sweep<K: Eq + Hash, V>(m: &mut HashMap<K, (V, Instant)>, now: Instant) {
    if m.len().is_power_of_two() {
        m.retain(|_, (_, until)| now < *until);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_claims_and_replacements_see_only_live_ones() {
        let m: Expiring<&str, u8> = Expiring::default();
        let long = Duration::from_secs(60);
        assert_eq!(m.claim("a", 1, long), None);
        assert_eq!(m.claim("a", 2, long), Some(1), "a live value is kept");
        assert!(!m.replace_if(&"a", &2, 3, long));
        assert!(m.replace_if(&"a", &1, 3, long));
        assert_eq!(m.get(&"a"), Some(3));
        m.insert("b", 4, Duration::ZERO);
        assert_eq!(m.get(&"b"), None, "expired reads as absent");
        assert!(!m.replace_if(&"b", &4, 5, long));
        assert_eq!(
            m.claim("b", 6, long),
            None,
            "an expired value is claimed over"
        );
        assert_eq!(m.get(&"b"), Some(6));
        // Expired entries do not pile up: every insert here finds the last one expired.
        let n: Expiring<u16, u8> = Expiring::default();
        for i in 0..1000 {
            n.insert(i, 0, Duration::ZERO);
        }
        assert!(n.entries().len() <= 2, "{}", n.entries().len());
    }
}
