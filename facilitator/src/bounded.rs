//! A map that never holds more than its capacity: full, it starts over. The facilitator's
//! caches of what the chain says (a decision's inputs, an agent's signers, a mint's program)
//! are keyed by what callers name, so without a bound a caller naming ever new keys would
//! grow the process. Starting over is safe for each of them: a miss costs one read.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::RwLock;

/// The capacity of [`BoundedMap::default`].
pub const DEFAULT_CAPACITY: usize = 100_000;

pub struct BoundedMap<K, V> {
    map: RwLock<HashMap<K, V>>,
    capacity: usize,
}

impl<K: Hash + Eq, V: Clone> Default for BoundedMap<K, V> {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

impl<K: Hash + Eq, V: Clone> BoundedMap<K, V> {
    pub fn new(capacity: usize) -> Self {
        BoundedMap {
            map: RwLock::new(HashMap::new()),
            capacity,
        }
    }

    pub fn get(&self, k: &K) -> Option<V> {
        self.map
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(k)
            .cloned()
    }

    /// Keeps `v` under `k`; when the map is full and `k` new, forgets everything first.
    pub fn put(&self, k: K, v: V) {
        let mut m = self.map.write().unwrap_or_else(|e| e.into_inner());
        if m.len() >= self.capacity && !m.contains_key(&k) {
            m.clear();
        }
        m.insert(k, v);
    }

    pub fn forget(&self, k: &K) {
        self.map
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(k);
    }

    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_never_holds_more_than_its_capacity_and_still_answers() {
        let map = BoundedMap::new(8);
        for i in 0..100u32 {
            map.put(i, i * 2);
            assert!(map.len() <= 8, "{} entries held", map.len());
            // What was just put is answered.
            assert_eq!(map.get(&i), Some(i * 2));
        }
        // An unknown key is a miss, not a wrong answer; whatever is still held is as put.
        assert_eq!(map.get(&1_000), None);
        for i in 0..100u32 {
            assert!(map.get(&i).is_none_or(|v| v == i * 2), "{i}");
        }
        // A key already held is replaced without starting over.
        let before = map.len();
        map.put(99, 0);
        assert_eq!((map.len(), map.get(&99)), (before, Some(0)));
        map.forget(&99);
        assert_eq!(map.get(&99), None);
    }
}
