//! Requests for the same thing at once become one: the first runs it, the others wait for
//! its result (a server's claim of the same channels and amounts, a close of the same channel
//! at the same amount), so that a retry or a second replica's call never sends a second
//! transaction the chain would only refuse. In process; across replicas the session store's
//! compare-and-replace and the chain's own monotonic watermark are the bound.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

pub struct Coalesce<K, V> {
    running: Mutex<HashMap<K, Arc<OnceCell<V>>>>,
}

impl<K, V> Default for Coalesce<K, V> {
    fn default() -> Self {
        Coalesce {
            running: Mutex::default(),
        }
    }
}

impl<K: Hash + Eq + Clone, V: Clone> Coalesce<K, V> {
    /// `work`'s result, or, while a call of the same `key` runs, that call's. A call whose
    /// caller went away mid-way leaves the next waiter to run its own `work`.
    pub async fn run<F: Future<Output = V>>(&self, key: K, work: F) -> V {
        let cell = self
            .lock()
            .entry(key.clone())
            .or_insert_with(|| Arc::new(OnceCell::new()))
            .clone();
        let v = cell.get_or_init(|| work).await.clone();
        let mut running = self.lock();
        if running.get(&key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            running.remove(&key);
        }
        v
    }

    /// Calls under way.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, Arc<OnceCell<V>>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn calls_of_one_key_at_once_run_once_and_others_run_apart() {
        let c: Arc<Coalesce<u8, usize>> = Arc::default();
        let runs = Arc::new(AtomicUsize::new(0));
        let call = |key: u8| {
            let (c, runs) = (c.clone(), runs.clone());
            async move {
                c.run(key, async {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    runs.fetch_add(1, Ordering::SeqCst)
                })
                .await
            }
        };
        let (a, b, other) = tokio::join!(call(1), call(1), call(2));
        assert_eq!(a, b, "the second waited for the first's result");
        assert_ne!(a, other);
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        assert!(c.is_empty(), "nothing is kept once done");
        // A later call of the same key runs again.
        call(1).await;
        assert_eq!(runs.load(Ordering::SeqCst), 3);
    }
}
