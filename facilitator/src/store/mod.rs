//! Where the facilitator keeps what outlives a request, behind one interface ([`Backend`])
//! with two backends: [`memory::Memory`], in this process, and [`redis::Redis`]
//! (`REDIS_URL`), shared by replicas. What is kept is named by the modules that keep it, none
//! of which knows which backend it runs on: the payer locks ([`crate::payer_locks`]), the
//! payment records and pending settlements ([`crate::payment_records`]), the sessions
//! ([`crate::sessions`]), the pending approvals ([`crate::approvals`]) and the rent ledger
//! ([`crate::advances::ledger`]).
//!
//! The data model is as much of Redis's as they need: values with an optional expiry, sorted
//! indexes of members by score, and hashes (the ledger). A write that must be atomic over
//! several keys is one operation of the interface, one round trip (a Lua script in Redis,
//! one lock held in process): [`Backend::keep_indexed`], [`Backend::remove_indexed`],
//! [`Backend::insert_admitted`]. A value changed by read, check and write goes through [`change`],
//! the one compare-and-replace retry.

pub mod memory;
pub mod redis;

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub use trust_gate_server::redis_store::StoreUnavailable;

pub type Result<T> = std::result::Result<T, StoreUnavailable>;

/// The store every keeper shares.
pub type Store = Arc<dyn Backend>;

/// How long a value lives: `None`, until it is deleted.
pub type Ttl = Option<Duration>;

/// Attempts at a compare-and-replace that other writers keep beating.
const MAX_REPLACE_ATTEMPTS: usize = 8;

/// The in-process store, or Redis at `url` (no round trip yet: see [`health`]).
pub fn open(redis_url: Option<&str>) -> std::result::Result<Store, String> {
    Ok(match redis_url {
        None => Arc::new(memory::Memory::default()),
        Some(url) => Arc::new(redis::Redis::new(url)?),
    })
}

/// A record written with its place in some indexes, in one atomic step.
pub struct Keep<'a> {
    pub key: &'a str,
    pub value: &'a str,
    /// The record's life; each index lives at least as long from this write.
    pub ttl: Duration,
    pub indexes: &'a [&'a str],
    pub member: &'a str,
    pub score: i64,
    /// A member already indexed keeps its score (its place stays where it was first put).
    pub first_score: bool,
    /// Members scored below this leave the indexes first (their records have expired).
    pub drop_below: i64,
    /// At most this many members in the first index: past it, the lowest scored (never the
    /// one written) go from every index, and their records (`prefix` + member) with them.
    pub bound: Option<(usize, &'a str)>,
}

/// One interface, two backends: what every keeper of state asks of the store. A failure is
/// [`StoreUnavailable`] (the in-process backend never fails).
#[async_trait::async_trait]
pub trait Backend: Send + Sync {
    /// `in-process`, or where Redis is (never its credentials).
    fn name(&self) -> &str;
    /// Whether other replicas share it: false, this process is the only one that writes.
    fn shared(&self) -> bool;
    /// Round trips made so far (0 in process): the bench's measure.
    fn round_trips(&self) -> u64;
    async fn ping(&self) -> Result<()>;

    async fn get(&self, key: &str) -> Result<Option<String>>;
    /// Several values at once (one round trip), in order.
    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<String>>>;
    /// Writes `value`, expiring after `ttl`.
    async fn set(&self, key: &str, value: &str, ttl: Ttl) -> Result<()>;
    /// Writes `value` unless `key` holds one: `None` when written, else the value there.
    async fn claim(&self, key: &str, value: &str, ttl: Ttl) -> Result<Option<String>>;
    /// Replaces `old` with `new`; false when `key` no longer held `old`.
    async fn replace_if(&self, key: &str, old: &str, new: &str, ttl: Ttl) -> Result<bool>;
    /// Deletes `key` if it still holds `value`; false when it did not.
    async fn delete_if(&self, key: &str, value: &str) -> Result<bool>;
    async fn delete(&self, key: &str) -> Result<()>;

    /// Puts `member` in the index at `key` with `score` (no expiry).
    async fn index_add(&self, key: &str, member: &str, score: i64) -> Result<()>;
    async fn index_remove(&self, key: &str, member: &str) -> Result<()>;
    /// The members scored `min` or more, the highest first (ties: the greater member first),
    /// at most `limit`.
    async fn index_range(&self, key: &str, min: i64, limit: usize) -> Result<Vec<(String, i64)>>;
    /// See [`Keep`].
    async fn keep_indexed(&self, k: &Keep<'_>) -> Result<()>;
    /// Deletes the record `key` and `member` from `indexes`; true when the record was there.
    async fn remove_indexed(&self, key: &str, indexes: &[&str], member: &str) -> Result<bool>;

    /// The fields of the hash at `hash`.
    async fn entries(&self, hash: &str) -> Result<HashMap<String, String>>;
    async fn entry(&self, hash: &str, field: &str) -> Result<Option<String>>;
    async fn put_entry(&self, hash: &str, field: &str, value: &str) -> Result<()>;
    /// Rewrites `field` only while it is there; false when it was not.
    async fn replace_entry(&self, hash: &str, field: &str, value: &str) -> Result<bool>;
    async fn remove_entry(&self, hash: &str, field: &str) -> Result<()>;
    /// Writes `value` at `field` of the hash if no entry is there and `rule` admits it over
    /// the entries: `Ok(())`, else why not (`exists`, or the rule's answer).
    async fn insert_admitted(
        &self,
        hash: &str,
        field: &str,
        value: &str,
        rule: &Rule<'_>,
    ) -> Result<std::result::Result<(), String>>;
}

/// The rule a hash's entries must admit a new one by, written once for each backend (a
/// reservation within bounds, say).
pub struct Rule<'a> {
    /// Run by Redis: KEYS[1] the hash, ARGV[1] the field, ARGV[2] the value, then `args`; it
    /// writes the entry and answers `ok`, or answers why not (`exists` when the field is
    /// taken).
    pub script: &'a ::redis::Script,
    pub args: &'a [String],
    /// Run in process over the entries' values: why not, if not.
    pub check: &'a (dyn Fn(&[String]) -> std::result::Result<(), String> + Send + Sync),
}

/// Why a [`change`] was not made: the store failed, the value is not there, or the change
/// refused it (the caller's error).
#[derive(Debug)]
pub enum Change<E> {
    Unavailable(StoreUnavailable),
    Missing,
    Refused(E),
}

impl<E> From<StoreUnavailable> for Change<E> {
    fn from(e: StoreUnavailable) -> Self {
        Change::Unavailable(e)
    }
}

/// Changes the JSON value at `key` with `f`, atomically against every other change: `f` runs
/// on what was read with no lock held (a voucher's check is a signature's, which the other
/// channels' need not wait for), and the result lands only if the value is still the one
/// read, else it is read and checked again. `ttl` says how long the new value lives.
pub async fn change<T, E>(
    store: &dyn Backend,
    key: &str,
    ttl: impl Fn(&T) -> Ttl,
    f: impl Fn(&T) -> std::result::Result<T, E>,
) -> std::result::Result<T, Change<E>>
where
    T: Serialize + DeserializeOwned + PartialEq,
{
    for _ in 0..MAX_REPLACE_ATTEMPTS {
        let raw = store.get(key).await?.ok_or(Change::Missing)?;
        let current: T = serde_json::from_str(&raw).map_err(|_| Change::Missing)?;
        let next = f(&current).map_err(Change::Refused)?;
        if next == current {
            return Ok(next);
        }
        let json = serde_json::to_string(&next).unwrap_or_default();
        if store.replace_if(key, &raw, &json, ttl(&next)).await? {
            return Ok(next);
        }
    }
    Err(Change::Unavailable(StoreUnavailable {
        store: store.name().to_string(),
        message: format!("{key} kept changing under {MAX_REPLACE_ATTEMPTS} attempts"),
    }))
}

/// The members of the index `index` scored `min` or more, the highest first, at most `limit`
/// (see [`Backend::index_range`]), each with its score and the value of its record
/// `key(member)` (`None` once expired). Two round trips.
pub async fn indexed(
    store: &dyn Backend,
    index: &str,
    min: i64,
    limit: usize,
    key: impl Fn(&str) -> String,
) -> Result<Vec<(String, i64, Option<String>)>> {
    let members = store.index_range(index, min, limit).await?;
    let keys: Vec<String> = members.iter().map(|(m, _)| key(m)).collect();
    let values = store.get_many(&keys).await?;
    Ok(members
        .into_iter()
        .zip(values)
        .map(|((member, score), value)| (member, score, value))
        .collect())
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

/// Whether the store answers now (a round trip with Redis).
pub async fn health(store: &dyn Backend) -> StoreHealth {
    let error = store.ping().await.err().map(|e| e.message);
    let shared = store.shared();
    StoreHealth {
        kind: if shared { "redis" } else { "in-process" },
        url: shared.then(|| store.name().to_string()),
        ok: error.is_none(),
        error,
    }
}

/// A random token: who holds a lock or a tick.
pub fn token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Milliseconds for Redis and the in-process clock alike: at least 1 (0 means "never").
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
