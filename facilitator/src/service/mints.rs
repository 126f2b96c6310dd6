//! The mints the facilitator has read: their token program and decimals, which never change.

use solana_sdk::pubkey::Pubkey;
use std::collections::HashMap;
use std::sync::RwLock;
use trust_gate_client::settle::TokenProgram;

/// Past this many mints the cache starts over, as the decision and agent caches do. A
/// payment names its mint, so a caller could make the facilitator read (and keep) any number
/// of them; a real deployment settles a handful. Starting over is safe: a miss only costs one
/// RPC read of the mint, and a mint's program and decimals are read again the same.
pub const MAX_MINTS: usize = 10_000;

/// Each mint's token program and decimals, at most `capacity` of them.
pub struct MintCache {
    mints: RwLock<HashMap<Pubkey, (TokenProgram, u8)>>,
    capacity: usize,
}

impl Default for MintCache {
    fn default() -> Self {
        Self::with_capacity(MAX_MINTS)
    }
}

impl MintCache {
    pub fn with_capacity(capacity: usize) -> Self {
        MintCache {
            mints: RwLock::new(HashMap::new()),
            capacity,
        }
    }

    pub fn get(&self, mint: &Pubkey) -> Option<(TokenProgram, u8)> {
        self.mints
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(mint)
            .copied()
    }

    pub fn put(&self, mint: Pubkey, read: (TokenProgram, u8)) {
        let mut m = self.mints.write().unwrap_or_else(|e| e.into_inner());
        if m.len() >= self.capacity && !m.contains_key(&mint) {
            m.clear();
        }
        m.insert(mint, read);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.mints.read().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_never_holds_more_than_its_capacity_and_still_answers() {
        let cache = MintCache::with_capacity(8);
        let mut last = Vec::new();
        for i in 0..100u8 {
            let mint = Pubkey::new_unique();
            let program = if i % 2 == 0 {
                TokenProgram::SplToken
            } else {
                TokenProgram::Token2022
            };
            cache.put(mint, (program, i));
            assert!(cache.len() <= 8, "{} mints held", cache.len());
            // What was just put is answered.
            assert_eq!(cache.get(&mint), Some((program, i)));
            last.push(mint);
        }
        // An unknown mint is a miss, not a wrong answer.
        assert_eq!(cache.get(&Pubkey::new_unique()), None);
        // Whatever is still held is answered as it was put.
        for (i, mint) in last.iter().enumerate() {
            if let Some((_, decimals)) = cache.get(mint) {
                assert_eq!(usize::from(decimals), i);
            }
        }
    }
}
