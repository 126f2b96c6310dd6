//! One settlement at a time per payer agent.
//!
//! Two settlements of one payer simulated side by side both see the same counters, both pass,
//! and the second then fails ON CHAIN when it would cross a cap: a fee paid for nothing and a
//! raw program error instead of the Deny it is. Holding a per-payer lock from the simulation
//! until the confirmation makes each simulation see the previous commit. Different payers
//! never wait for each other.
//!
//! The settlements waiting for one payer are bounded: past the bound a new one is refused at
//! once ([`PayerBusy`]) instead of holding a request, its body and a task for as long as the
//! queue ahead of it takes.
//!
//! With replicas ([`PayerTurns`] on a shared store) the payer's turn is also a lock key in
//! the store: taken by polling, released only by its holder (compare-and-delete), else freed
//! at its expiry (a replica that died holding it). The in-process lock is taken first even
//! then: a replica's own settlements of one payer queue fairly in memory, and only one of
//! them at a time polls the store; the bound on those waiting is per replica.

use crate::store::{Store, StoreUnavailable};
use solana_sdk::pubkey::Pubkey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::OwnedMutexGuard;

/// Polling for a lock another replica holds: the first pause, doubled up to the last.
const POLL_FIRST: Duration = Duration::from_millis(2);
const POLL_MAX: Duration = Duration::from_millis(25);
type Lock = Arc<tokio::sync::Mutex<()>>;

#[derive(Default)]
pub struct PayerLocks {
    locks: Mutex<HashMap<Pubkey, Lock>>,
}

/// A payer already has as many settlements waiting as allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("payer agent {payer} already has {waiting} settlements waiting for its turn")]
pub struct PayerBusy {
    pub payer: Pubkey,
    pub waiting: usize,
}

/// Held while one payer's settlement runs; dropping it lets the next one in.
pub struct PayerGuard<'a> {
    owner: &'a PayerLocks,
    payer: Pubkey,
    guard: Option<OwnedMutexGuard<()>>,
}

impl PayerLocks {
    /// Waits until no other settlement of `payer` runs; refused at once when `max_waiting`
    /// others already wait behind the one that runs.
    pub async fn lock(
        &self,
        payer: Pubkey,
        max_waiting: usize,
    ) -> Result<PayerGuard<'_>, PayerBusy> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            let lock = locks.entry(payer).or_default();
            // Every clone but the map's own is a settlement that holds or awaits the lock.
            let queued = Arc::strong_count(lock) - 1;
            if queued > max_waiting {
                return Err(PayerBusy {
                    payer,
                    waiting: queued - 1,
                });
            }
            lock.clone()
        };
        Ok(PayerGuard {
            owner: self,
            payer,
            guard: Some(lock.lock_owned().await),
        })
    }

    /// The settlements of `payer` that hold or wait for its lock.
    pub fn queued(&self, payer: &Pubkey) -> usize {
        self.locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(payer)
            .map_or(0, |l| Arc::strong_count(l) - 1)
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

/// Why a payer's turn was not given.
#[derive(Clone, Debug, thiserror::Error)]
pub enum LockError {
    /// Too many settlements of the payer already wait (nothing was asked of the store).
    #[error(transparent)]
    Busy(#[from] PayerBusy),
    #[error(transparent)]
    Unavailable(#[from] StoreUnavailable),
}

/// One settlement at a time per payer agent, on this replica and on every replica sharing
/// the store.
pub struct PayerTurns {
    local: PayerLocks,
    store: Store,
    /// A turn's key expires after this unless released.
    ttl: Duration,
    max_waiting: usize,
}

/// A payer's turn: held from before the send until the confirmation.
pub struct Turn<'a> {
    local: Option<PayerGuard<'a>>,
    shared: Option<(Store, String, String)>,
}

impl PayerTurns {
    /// At most `max_waiting` settlements of one payer wait here (others are refused with
    /// [`LockError::Busy`]).
    pub fn new(store: Store, ttl: Duration, max_waiting: usize) -> Self {
        PayerTurns {
            local: PayerLocks::default(),
            store,
            ttl,
            max_waiting,
        }
    }

    /// Waits until no other settlement of `payer` runs, on this replica or any; refused at
    /// once when too many already wait here.
    pub async fn lock(&self, payer: Pubkey) -> Result<Turn<'_>, LockError> {
        let local = Some(self.local.lock(payer, self.max_waiting).await?);
        // Alone on its store, the queue in memory is the whole lock.
        if !self.store.shared() {
            return Ok(Turn {
                local,
                shared: None,
            });
        }
        let key = format!("trust-gate:payer-lock:{payer}");
        let token = crate::store::token();
        let mut pause = POLL_FIRST;
        while self
            .store
            .claim(&key, &token, Some(self.ttl))
            .await?
            .is_some()
        {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_MAX);
        }
        Ok(Turn {
            local,
            shared: Some((self.store.clone(), key, token)),
        })
    }

    /// The settlements of `payer` that hold or wait for its turn in this process.
    pub fn queued(&self, payer: &Pubkey) -> usize {
        self.local.queued(payer)
    }
}

impl Turn<'_> {
    /// Ends the turn: the shared lock is deleted if this turn still holds it.
    pub async fn release(mut self) {
        if let Some((store, key, token)) = self.shared.take() {
            release(&store, &key, &token).await;
        }
        drop(self.local.take());
    }
}

impl Drop for Turn<'_> {
    /// A turn dropped without [`Turn::release`] (the request was cancelled): the shared lock
    /// is released in the background.
    fn drop(&mut self) {
        if let Some((store, key, token)) = self.shared.take() {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move { release(&store, &key, &token).await });
            }
        }
    }
}

async fn release(store: &Store, key: &str, token: &str) {
    match store.delete_if(key, token).await {
        Ok(true) => {}
        // Held past its expiry: another settlement of the payer may have run beside it.
        Ok(false) => tracing::warn!(%key, "a payer lock expired before its settlement ended"),
        Err(e) => {
            tracing::warn!(%key, store = %e.store, error = %e.message, "could not release a payer lock; it expires by itself")
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
        let held = locks.lock(a, 8).await.unwrap();
        // Another payer is not blocked.
        tokio::time::timeout(Duration::from_secs(1), locks.lock(b, 8))
            .await
            .expect("a different payer proceeds")
            .unwrap();
        // The same payer waits until the first guard is dropped.
        let l = locks.clone();
        let waiter = tokio::spawn(async move {
            let _g = l.lock(a, 8).await.unwrap();
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiter.is_finished(),
            "a second settlement of one payer must wait"
        );
        assert_eq!(locks.queued(&a), 2);
        drop(held);
        tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .expect("released")
            .unwrap();
        assert!(locks.is_empty());
    }

    #[tokio::test]
    async fn past_the_waiting_bound_a_settlement_is_refused_at_once() {
        let locks = Arc::new(PayerLocks::default());
        let a = Pubkey::new_unique();
        // None may wait: only the one that runs.
        let held = locks.lock(a, 0).await.unwrap();
        assert_eq!(
            locks.lock(a, 0).await.err(),
            Some(PayerBusy {
                payer: a,
                waiting: 0
            })
        );
        drop(held);
        // One may wait behind the one that runs; a third is refused.
        let held = locks.lock(a, 1).await.unwrap();
        let l = locks.clone();
        let waiter = tokio::spawn(async move { l.lock(a, 1).await.map(drop) });
        while locks.queued(&a) < 2 {
            tokio::task::yield_now().await;
        }
        let busy = locks.lock(a, 1).await.err().unwrap();
        assert_eq!(busy.waiting, 1);
        assert!(busy.to_string().contains("1 settlements waiting"));
        drop(held);
        waiter.await.unwrap().unwrap();
        assert!(
            locks.is_empty(),
            "a refused settlement leaves nothing behind"
        );
    }
}
