//! One settlement at a time per payer agent.
//!
//! Two settlements of one payer simulated side by side both see the same counters, both pass,
//! and the second then fails ON CHAIN when it would cross a cap: a fee paid for nothing and a
//! raw program error instead of the Deny it is. Holding a per-payer lock from the simulation
//! until the confirmation makes each simulation see the previous commit. Different payers
//! never wait for each other.

use solana_sdk::pubkey::Pubkey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OwnedMutexGuard;

type Lock = Arc<tokio::sync::Mutex<()>>;

#[derive(Default)]
pub struct PayerLocks {
    locks: Mutex<HashMap<Pubkey, Lock>>,
}

/// Held while one payer's settlement runs; dropping it lets the next one in.
pub struct PayerGuard<'a> {
    owner: &'a PayerLocks,
    payer: Pubkey,
    guard: Option<OwnedMutexGuard<()>>,
}

impl PayerLocks {
    /// Waits until no other settlement of `payer` runs.
    pub async fn lock(&self, payer: Pubkey) -> PayerGuard<'_> {
        let lock = self
            .locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(payer)
            .or_default()
            .clone();
        PayerGuard {
            owner: self,
            payer,
            guard: Some(lock.lock_owned().await),
        }
    }

    /// Payers with a settlement running or waiting.
    pub fn len(&self) -> usize {
        self.locks.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for PayerGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        // Forget the payer's lock once nobody holds or waits for it, so the map stays as
        // small as the set of payers being settled right now.
        let mut locks = self.owner.locks.lock().unwrap_or_else(|e| e.into_inner());
        if locks
            .get(&self.payer)
            .is_some_and(|l| Arc::strong_count(l) == 1)
        {
            locks.remove(&self.payer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_payer_waits_others_do_not_and_the_map_empties() {
        let locks = Arc::new(PayerLocks::default());
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        let held = locks.lock(a).await;
        // Another payer is not blocked.
        tokio::time::timeout(Duration::from_secs(1), locks.lock(b))
            .await
            .expect("a different payer proceeds");
        // The same payer waits until the first guard is dropped.
        let l = locks.clone();
        let waiter = tokio::spawn(async move {
            let _g = l.lock(a).await;
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiter.is_finished(),
            "a second settlement of one payer must wait"
        );
        drop(held);
        tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .expect("released")
            .unwrap();
        assert!(locks.is_empty());
    }
}
