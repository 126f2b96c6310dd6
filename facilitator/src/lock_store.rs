//! Where /settle's two guarantees live: one settlement at a time per payer agent, and a sent
//! settlement that a retry finds.
//!
//! In process (the default): the payer lock of [`crate::payer_locks`], and no pending
//! records: a retry of the same request co-signs the same message into the same signature,
//! which the send recognizes, and which this process notes as sent (a retry refused in
//! preflight because its payment's log exists waits for that signature's status).
//!
//! With Redis (`--redis-url`), shared by every replica: the payer lock is also a Redis lock
//! (see [`trust_gate_server::redis_store`]), and a settlement's signature is claimed for its payment
//! before the send, so a retry on any replica returns it instead of sending.
//!
//! The in-process lock is taken first even with Redis: a replica's own settlements of one
//! payer queue fairly in memory, and only one of them at a time polls Redis. The bound on
//! the settlements waiting for one payer is that queue's, so it is per replica.

use crate::payer_locks::{PayerBusy, PayerGuard, PayerLocks};
use crate::payment_records::{PaymentRecord, RECORD_TTL};
use serde::Serialize;
use solana_sdk::hash::Hash;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use trust_gate_server::expiring::Expiring;
use trust_gate_server::redis_store::RedisStore;

/// A pending record outlives the transaction it names: once its blockhash has expired
/// (150 slots, about a minute on a cluster) the transaction can no longer land.
const PENDING_TTL: Duration = Duration::from_secs(300);

pub use trust_gate_server::redis_store::StoreUnavailable;

/// Why a payer's turn was not given.
#[derive(Clone, Debug, thiserror::Error)]
pub enum LockError {
    /// Too many settlements of the payer already wait (nothing was asked of the store).
    #[error(transparent)]
    Busy(#[from] PayerBusy),
    #[error(transparent)]
    Unavailable(#[from] StoreUnavailable),
}

/// The transaction sent (or about to be) for a payment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingRecord {
    pub signature: Signature,
    /// Its recent blockhash: once no longer valid, the transaction can no longer land.
    pub blockhash: Hash,
}

impl PendingRecord {
    fn encode(&self) -> String {
        format!("{} {}", self.signature, self.blockhash)
    }

    fn decode(s: &str) -> Option<Self> {
        let (sig, hash) = s.split_once(' ')?;
        Some(PendingRecord {
            signature: Signature::from_str(sig).ok()?,
            blockhash: Hash::from_str(hash).ok()?,
        })
    }
}

/// What claiming a payment's record found.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// Written now: this settlement is the payment's.
    Ours,
    /// Already this very transaction's (a retry whose first send may or may not have gone).
    Same,
    /// Another transaction of the same payment was claimed before.
    Other(PendingRecord),
}

/// What /healthz reports of the store.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreHealth {
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A payment of a facilitator: its key and payment id hash.
type PaymentKey = (Pubkey, [u8; 32]);

/// A payer agent's payments through a facilitator: its key and the payer's asset.
type PayerKey = (Pubkey, Pubkey);

/// In process, each payer's payments (id hash, unix seconds first kept), oldest first.
type PayerIndex = HashMap<PayerKey, Vec<([u8; 32], i64)>>;

/// The most payments of one payer indexed in process (the oldest go first).
const INDEX_MAX: usize = 10_000;

/// A payer's payment as the index lists it: its id hash, when its record was first kept
/// (unix seconds: when the settlement landed), and the record.
pub type PayerPayment = ([u8; 32], i64, Option<PaymentRecord>);

/// Keeps a payment's record and indexes it under its payer, in one round trip: KEYS = [the
/// record, the payer's index]; ARGV = [the record, its TTL in ms, now, the payment id hash,
/// the oldest time kept]. The index is a sorted set by the time first kept (`NX`: the crank's
/// later write keeps it), trimmed of what outlived the records, expiring with the newest.
const KEEP_INDEXED: &str = r"
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
";

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

pub struct LockStore {
    local: PayerLocks,
    /// Payment records in process (encoded); unused with Redis.
    records: Expiring<PaymentKey, String>,
    /// Each payer's payments in process; unused with Redis.
    index: Mutex<PayerIndex>,
    /// The settlements this process sent, with when the note expires: a retry of one that
    /// the preflight refuses (its payment's log exists) waits for its status instead.
    sent: Expiring<Signature, ()>,
    keep_indexed: redis::Script,
    shared: Option<Arc<RedisStore>>,
    lock_ttl: Duration,
    max_waiting: usize,
}

/// A payer's turn: held from before the send until the confirmation.
pub struct Turn<'a> {
    local: Option<PayerGuard<'a>>,
    shared: Option<(Arc<RedisStore>, String, String)>,
}

impl LockStore {
    /// The in-process store: one replica only.
    pub fn in_process() -> Self {
        LockStore {
            local: PayerLocks::default(),
            records: Expiring::default(),
            index: Mutex::default(),
            sent: Expiring::default(),
            keep_indexed: redis::Script::new(KEEP_INDEXED),
            shared: None,
            lock_ttl: Duration::ZERO,
            max_waiting: usize::MAX,
        }
    }

    /// Notes that this process sent `signature` (kept as long as a pending record).
    pub fn note_sent(&self, signature: Signature) {
        self.sent.insert(signature, (), PENDING_TTL);
    }

    /// Whether this process sent `signature` (within a pending record's lifetime).
    pub fn was_sent(&self, signature: &Signature) -> bool {
        self.sent.get(signature).is_some()
    }

    /// The Redis store at `url`; a lock expires after `lock_ttl` unless released. Makes no
    /// round trip (see [`LockStore::health`]).
    pub fn redis(url: &str, lock_ttl: Duration) -> Result<Self, String> {
        Ok(LockStore {
            local: PayerLocks::default(),
            records: Expiring::default(),
            index: Mutex::default(),
            sent: Expiring::default(),
            keep_indexed: redis::Script::new(KEEP_INDEXED),
            shared: Some(Arc::new(RedisStore::new(url)?)),
            lock_ttl,
            max_waiting: usize::MAX,
        })
    }

    /// The Redis store, when replicas share one (the sessions keep theirs in it too).
    pub fn shared(&self) -> Option<Arc<RedisStore>> {
        self.shared.clone()
    }

    /// At most `n` settlements of one payer wait for its turn in this process (others are
    /// refused with [`LockError::Busy`]).
    pub fn with_max_waiting(mut self, n: usize) -> Self {
        self.max_waiting = n;
        self
    }

    /// The settlements of `payer` that hold or wait for its turn in this process.
    pub fn queued(&self, payer: &Pubkey) -> usize {
        self.local.queued(payer)
    }

    /// `in-process`, or where the shared store is (never its credentials).
    pub fn name(&self) -> &str {
        self.shared.as_ref().map_or("in-process", |s| &s.name)
    }

    /// Redis commands sent so far (0 in process).
    pub fn round_trips(&self) -> u64 {
        self.shared.as_ref().map_or(0, |s| s.round_trips())
    }

    fn unavailable(&self, e: redis::RedisError) -> StoreUnavailable {
        StoreUnavailable {
            store: self.name().to_string(),
            message: e.to_string(),
        }
    }

    /// Waits until no other settlement of `payer` runs, on this replica or (with Redis) any;
    /// refused at once when too many already wait here.
    pub async fn lock(&self, payer: Pubkey) -> Result<Turn<'_>, LockError> {
        let local = self.local.lock(payer, self.max_waiting).await?;
        let Some(store) = &self.shared else {
            return Ok(Turn {
                local: Some(local),
                shared: None,
            });
        };
        let key = format!("trust-gate:payer-lock:{payer}");
        let token = format!("{:032x}", rand::random::<u128>());
        store
            .lock(&key, &token, self.lock_ttl)
            .await
            .map_err(|e| LockError::Unavailable(self.unavailable(e)))?;
        Ok(Turn {
            local: Some(local),
            shared: Some((store.clone(), key, token)),
        })
    }

    /// The record of payment `payment_id_hash` settled by `facilitator`, if any.
    pub async fn pending(
        &self,
        facilitator: &Pubkey,
        payment_id_hash: &[u8; 32],
    ) -> Result<Option<PendingRecord>, StoreUnavailable> {
        let Some(store) = &self.shared else {
            return Ok(None);
        };
        let found = store
            .get(&pending_key(facilitator, payment_id_hash))
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(found.as_deref().and_then(PendingRecord::decode))
    }

    /// Claims the payment for `record` (in process: always [`Claim::Ours`]).
    pub async fn claim(
        &self,
        facilitator: &Pubkey,
        payment_id_hash: &[u8; 32],
        record: &PendingRecord,
    ) -> Result<Claim, StoreUnavailable> {
        let Some(store) = &self.shared else {
            return Ok(Claim::Ours);
        };
        let key = pending_key(facilitator, payment_id_hash);
        let found = store
            .claim(&key, &record.encode(), Some(self.pending_ttl()))
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(match found {
            None => Claim::Ours,
            Some(v) => match PendingRecord::decode(&v) {
                Some(r) if r == *record => Claim::Same,
                Some(r) => Claim::Other(r),
                // Not a record of ours: take the key over, unless it changed meanwhile.
                None => {
                    let taken = store
                        .replace_if(&key, &v, &record.encode(), Some(self.pending_ttl()))
                        .await
                        .map_err(|e| self.unavailable(e))?;
                    if !taken {
                        return Err(StoreUnavailable {
                            store: self.name().to_string(),
                            message: format!("{key} changed while it was being claimed"),
                        });
                    }
                    Claim::Ours
                }
            },
        })
    }

    /// Replaces `old` with `new`; false when the record no longer was `old`.
    pub async fn replace(
        &self,
        facilitator: &Pubkey,
        payment_id_hash: &[u8; 32],
        old: &PendingRecord,
        new: &PendingRecord,
    ) -> Result<bool, StoreUnavailable> {
        let Some(store) = &self.shared else {
            return Ok(true);
        };
        store
            .replace_if(
                &pending_key(facilitator, payment_id_hash),
                &old.encode(),
                &new.encode(),
                Some(self.pending_ttl()),
            )
            .await
            .map_err(|e| self.unavailable(e))
    }

    /// Forgets `record` (a transaction that was never sent), so that another transaction
    /// of the payment may be sent at once. A failure leaves it to expire.
    pub async fn forget(
        &self,
        facilitator: &Pubkey,
        payment_id_hash: &[u8; 32],
        record: &PendingRecord,
    ) {
        let Some(store) = &self.shared else { return };
        let key = pending_key(facilitator, payment_id_hash);
        if let Err(e) = store.delete_if(&key, &record.encode()).await {
            tracing::warn!(store = %store.name, error = %e, "could not forget an unsent settlement; it expires by itself");
        }
    }

    /// What /settle reads before a payer's turn, in one round trip with Redis (`MGET`): the
    /// payment's pending record (see [`LockStore::pending`]) and its payment record (see
    /// [`LockStore::record`]).
    pub async fn lookup(
        &self,
        facilitator: &Pubkey,
        payment_id_hash: &[u8; 32],
    ) -> Result<(Option<PendingRecord>, Option<PaymentRecord>), StoreUnavailable> {
        let Some(store) = &self.shared else {
            return Ok((None, self.record(facilitator, payment_id_hash).await?));
        };
        let keys = [
            pending_key(facilitator, payment_id_hash),
            record_key(facilitator, payment_id_hash),
        ];
        let found = store
            .get_many(&[&keys[0], &keys[1]])
            .await
            .map_err(|e| self.unavailable(e))?;
        let at = |i: usize| found.get(i).cloned().flatten();
        Ok((
            at(0).as_deref().and_then(PendingRecord::decode),
            at(1).as_deref().and_then(PaymentRecord::decode),
        ))
    }

    /// The record of payment `payment_id_hash` of `facilitator` (see
    /// [`crate::payment_records`]); one round trip with Redis.
    pub async fn record(
        &self,
        facilitator: &Pubkey,
        payment_id_hash: &[u8; 32],
    ) -> Result<Option<PaymentRecord>, StoreUnavailable> {
        let found = match &self.shared {
            None => self.records.get(&(*facilitator, *payment_id_hash)),
            Some(store) => store
                .get(&record_key(facilitator, payment_id_hash))
                .await
                .map_err(|e| self.unavailable(e))?,
        };
        Ok(found.as_deref().and_then(PaymentRecord::decode))
    }

    /// Keeps `record` for [`RECORD_TTL`], replacing what was kept, and, when it names its
    /// payer, lists the payment under that payer ([`LockStore::payments_of`]); one round trip
    /// with Redis.
    pub async fn keep(
        &self,
        facilitator: &Pubkey,
        payment_id_hash: &[u8; 32],
        record: &PaymentRecord,
    ) -> Result<(), StoreUnavailable> {
        let value = record.encode();
        match &self.shared {
            None => {
                self.records
                    .insert((*facilitator, *payment_id_hash), value, RECORD_TTL);
                if let Some(payer) = record.payer_asset {
                    let mut index = self.index.lock().unwrap_or_else(|e| e.into_inner());
                    let list = index.entry((*facilitator, payer)).or_default();
                    if !list.iter().any(|(h, _)| h == payment_id_hash) {
                        list.push((*payment_id_hash, unix_now()));
                        if list.len() > INDEX_MAX {
                            list.remove(0);
                        }
                    }
                }
                Ok(())
            }
            Some(store) => {
                let key = record_key(facilitator, payment_id_hash);
                let Some(payer) = record.payer_asset else {
                    return store
                        .set(&key, &value, RECORD_TTL)
                        .await
                        .map_err(|e| self.unavailable(e));
                };
                let now = unix_now();
                let ttl = RECORD_TTL.as_secs() as i64;
                store
                    .invoke::<i64>(
                        &self.keep_indexed,
                        &[key, index_key(facilitator, &payer)],
                        &[
                            value,
                            (ttl * 1000).to_string(),
                            now.to_string(),
                            trust_gate_client::decode::hex(payment_id_hash),
                            (now - ttl).to_string(),
                        ],
                    )
                    .await
                    .map(|_| ())
                    .map_err(|e| self.unavailable(e))
            }
        }
    }

    /// `payer`'s payments that `facilitator` settled and keeps records of, newest first, at
    /// most `limit`: each with when it landed and its record (gone when it expired). Two round
    /// trips with Redis.
    pub async fn payments_of(
        &self,
        facilitator: &Pubkey,
        payer: &Pubkey,
        limit: usize,
    ) -> Result<Vec<PayerPayment>, StoreUnavailable> {
        let oldest = unix_now() - RECORD_TTL.as_secs() as i64;
        let listed: Vec<([u8; 32], i64)> = match &self.shared {
            None => {
                let index = self.index.lock().unwrap_or_else(|e| e.into_inner());
                index
                    .get(&(*facilitator, *payer))
                    .map(|list| {
                        list.iter()
                            .rev()
                            .filter(|(_, at)| *at >= oldest)
                            .take(limit)
                            .copied()
                            .collect()
                    })
                    .unwrap_or_default()
            }
            Some(store) => {
                let found: Vec<(String, f64)> = store
                    .query(
                        redis::cmd("ZRANGE")
                            .arg(index_key(facilitator, payer))
                            .arg("+inf")
                            .arg(oldest)
                            .arg("BYSCORE")
                            .arg("REV")
                            .arg("LIMIT")
                            .arg(0)
                            .arg(limit)
                            .arg("WITHSCORES"),
                    )
                    .await
                    .map_err(|e| self.unavailable(e))?;
                found
                    .into_iter()
                    .filter_map(|(hash, at)| {
                        let hash = trust_gate_client::decode::parse_hex32("payment", &hash).ok()?;
                        Some((hash, at as i64))
                    })
                    .collect()
            }
        };
        let mut out = Vec::with_capacity(listed.len());
        match &self.shared {
            None => {
                for (hash, at) in listed {
                    out.push((hash, at, self.record(facilitator, &hash).await?));
                }
            }
            Some(store) => {
                let keys: Vec<String> = listed
                    .iter()
                    .map(|(h, _)| record_key(facilitator, h))
                    .collect();
                let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
                let records = if refs.is_empty() {
                    Vec::new()
                } else {
                    store
                        .get_many(&refs)
                        .await
                        .map_err(|e| self.unavailable(e))?
                };
                for ((hash, at), r) in listed.into_iter().zip(records) {
                    out.push((hash, at, r.as_deref().and_then(PaymentRecord::decode)));
                }
            }
        }
        Ok(out)
    }

    /// Whether the store answers now (a round trip with Redis).
    pub async fn health(&self) -> StoreHealth {
        let Some(store) = &self.shared else {
            return StoreHealth {
                kind: "in-process",
                url: None,
                ok: true,
                error: None,
            };
        };
        let error = store.ping().await.err().map(|e| e.to_string());
        StoreHealth {
            kind: "redis",
            url: Some(store.name.clone()),
            ok: error.is_none(),
            error,
        }
    }

    fn pending_ttl(&self) -> Duration {
        PENDING_TTL.max(self.lock_ttl)
    }
}

fn pending_key(facilitator: &Pubkey, payment_id_hash: &[u8; 32]) -> String {
    format!(
        "trust-gate:pending:{facilitator}:{}",
        trust_gate_client::decode::hex(payment_id_hash)
    )
}

fn index_key(facilitator: &Pubkey, payer: &Pubkey) -> String {
    format!("trust-gate:payments-of:{facilitator}:{payer}")
}

fn record_key(facilitator: &Pubkey, payment_id_hash: &[u8; 32]) -> String {
    format!(
        "trust-gate:payment:{facilitator}:{}",
        trust_gate_client::decode::hex(payment_id_hash)
    )
}

impl Turn<'_> {
    /// Ends the turn: the Redis lock is deleted if this turn still holds it.
    pub async fn release(mut self) {
        if let Some((store, key, token)) = self.shared.take() {
            release(&store, &key, &token).await;
        }
        drop(self.local.take());
    }
}

impl Drop for Turn<'_> {
    /// A turn dropped without [`Turn::release`] (the request was cancelled): the Redis lock
    /// is released in the background.
    fn drop(&mut self) {
        if let Some((store, key, token)) = self.shared.take() {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move { release(&store, &key, &token).await });
            }
        }
    }
}

async fn release(store: &RedisStore, key: &str, token: &str) {
    match store.delete_if(key, token).await {
        Ok(true) => {}
        // Held past its expiry: another settlement of the payer may have run beside it.
        Ok(false) => tracing::warn!(%key, "a payer lock expired before its settlement ended"),
        Err(e) => {
            tracing::warn!(%key, store = %store.name, error = %e, "could not release a payer lock; it expires by itself")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_record_reads_back_and_nothing_else_does() {
        let r = PendingRecord {
            signature: Signature::from([7; 64]),
            blockhash: Hash::new_from_array([9; 32]),
        };
        assert_eq!(PendingRecord::decode(&r.encode()), Some(r));
        for bad in ["", "x", "1 2", &r.signature.to_string()] {
            assert_eq!(PendingRecord::decode(bad), None, "{bad:?}");
        }
    }

    #[tokio::test]
    async fn in_process_payment_records_are_kept_per_facilitator_and_payment() {
        let s = LockStore::in_process();
        let (f, id) = (Pubkey::new_unique(), [1; 32]);
        assert_eq!(s.record(&f, &id).await.unwrap(), None);
        let r = PaymentRecord {
            signature: Some(Signature::from([7; 64])),
            ..PaymentRecord::default()
        };
        s.keep(&f, &id, &r).await.unwrap();
        assert_eq!(s.record(&f, &id).await.unwrap(), Some(r));
        assert_eq!(s.record(&Pubkey::new_unique(), &id).await.unwrap(), None);
        assert_eq!(s.record(&f, &[2; 32]).await.unwrap(), None);
    }

    #[tokio::test]
    async fn in_process_a_payers_payments_are_listed_newest_first() {
        let s = LockStore::in_process();
        let (f, payer) = (Pubkey::new_unique(), Pubkey::new_unique());
        for i in 1..=3u8 {
            let r = PaymentRecord {
                signature: Some(Signature::from([i; 64])),
                payer_asset: Some(payer),
                ..PaymentRecord::default()
            };
            s.keep(&f, &[i; 32], &r).await.unwrap();
        }
        // A record without its payer, and the crank's later write of the first: not listed
        // twice.
        s.keep(&f, &[9; 32], &PaymentRecord::default())
            .await
            .unwrap();
        let closed = PaymentRecord {
            signature: Some(Signature::from([1; 64])),
            payer_asset: Some(payer),
            disputed: true,
            ..PaymentRecord::default()
        };
        s.keep(&f, &[1; 32], &closed).await.unwrap();
        let listed = s.payments_of(&f, &payer, 10).await.unwrap();
        let hashes: Vec<u8> = listed.iter().map(|(h, _, _)| h[0]).collect();
        assert_eq!(hashes, [3, 2, 1]);
        assert_eq!(listed[2].2.as_ref(), Some(&closed));
        assert!(listed.iter().all(|(_, at, _)| *at > 1_700_000_000));
        assert_eq!(s.payments_of(&f, &payer, 2).await.unwrap().len(), 2);
        assert!(s
            .payments_of(&f, &Pubkey::new_unique(), 10)
            .await
            .unwrap()
            .is_empty());
        assert!(s
            .payments_of(&Pubkey::new_unique(), &payer, 10)
            .await
            .unwrap()
            .is_empty());
    }

    #[tokio::test]
    async fn in_process_the_store_keeps_no_records_and_always_answers() {
        let s = LockStore::in_process();
        let (f, id) = (Pubkey::new_unique(), [1; 32]);
        let r = PendingRecord {
            signature: Signature::from([7; 64]),
            blockhash: Hash::new_from_array([9; 32]),
        };
        assert_eq!(s.claim(&f, &id, &r).await.unwrap(), Claim::Ours);
        assert_eq!(s.claim(&f, &id, &r).await.unwrap(), Claim::Ours);
        assert_eq!(s.pending(&f, &id).await.unwrap(), None);
        assert!(s.health().await.ok);
        assert_eq!((s.name(), s.round_trips()), ("in-process", 0));
        s.lock(f).await.unwrap().release().await;
    }
}
