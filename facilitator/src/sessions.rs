//! The sessions a facilitator holds: for each `batch-settlement` channel it opened, the terms
//! its vouchers are checked against and the latest voucher it accepted, which it redeems on
//! chain later. In process, or in Redis (`REDIS_URL`) so that every replica checks a
//! channel's vouchers against the same watermark: a session is one key holding its JSON, and
//! a voucher advances it only by compare-and-replace of the exact value it was checked
//! against (two replicas cannot both accept the next voucher of a channel). An open
//! session's key never expires (its vouchers are money owed to the payee until the close);
//! a closed one's expires [`SESSION_TTL`] after its close.
//!
//! Nothing here reads the chain: a voucher costs a signature check, and with Redis two round
//! trips (the read and the replace). What the chain says of a session's channel (the open
//! landed, the payer's `request_close`) is written into the session by the background round
//! ([`crate::schemes::batch::redeemer`]), so that every replica refuses by it.

use crate::answer::SettleReply;
use crate::coalesce::Coalesce;
use crate::reject::Rejection;
use crate::store::{Store, StoreUnavailable};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use solana_sdk::pubkey::Pubkey;
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, RwLock};
use std::time::Duration;
use trust_gate_client::vouchers::{Voucher, VoucherKey};
use trust_gate_x402::batch::ChannelConfig;

/// How long a closed session's key outlives its close in Redis (it stays to answer a late
/// voucher, or a retried close, with the channel's state).
pub const SESSION_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
const KEY_PREFIX: &str = "trust-gate:batch:";
const INDEX_KEY: &str = "trust-gate:batch-index";
const TICK_KEY: &str = "trust-gate:batch-tick";
/// The verified vouchers remembered, at most (then forgotten all at once).
const MAX_VERIFIED: usize = 65_536;

/// A verified voucher's key and message.
type Verified = ([u8; 32], [u8; 50]);

/// What the gate recorded of a gated channel, and the policy's per-payment cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatedTerms {
    #[serde(with = "b58")]
    pub payer_asset: Pubkey,
    #[serde(with = "b58")]
    pub payee_asset: Pubkey,
    pub policy_id: u32,
    /// 0: none.
    pub per_payment_cap: u64,
}

/// One channel's session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    #[serde(with = "b58")]
    pub channel: Pubkey,
    /// The channel's address as the wire writes it, and its config as the deposit's checks
    /// found it (a voucher's config is compared with it: no address derivation, no base58).
    pub channel_id: String,
    pub config: ChannelConfig,
    /// The payer's wallet (the channel's payer).
    #[serde(with = "b58")]
    pub payer: Pubkey,
    /// The channel's voucher key (the client's `payerAuthorizer`).
    #[serde(with = "b58")]
    pub voucher_key: Pubkey,
    #[serde(with = "b58")]
    pub pay_to: Pubkey,
    #[serde(with = "b58")]
    pub mint: Pubkey,
    pub token_2022: bool,
    /// The deposit at the open (for a gated channel, what the gate counted): no voucher
    /// above it is accepted, whatever a top-up adds on chain.
    pub deposit: u64,
    pub withdraw_delay: u32,
    pub gate: Option<GatedTerms>,
    /// The open's signature.
    pub opened_by: String,
    pub opened_at: i64,
    /// The latest accepted voucher: its cumulative amount and signature (base58).
    pub accepted: u64,
    pub latest_signature: Option<String>,
    /// The price of the latest accepted voucher (a retry of it is answered the same).
    pub latest_price: u64,
    /// What is applied on chain (the channel's `settled`, as this facilitator made it).
    pub redeemed: u64,
    /// When the oldest voucher not yet applied on chain was accepted (0: none).
    pub unredeemed_since: i64,
    /// The last voucher's time (or the open's).
    pub active_at: i64,
    /// When the close began (0: not closing): from then on no voucher is accepted, so the
    /// close seals at the last one accepted before it.
    #[serde(default)]
    pub closing_at: i64,
    /// The channel's `closure_started_at` as the background round last read it: the payer's
    /// `request_close` started the grace period (0: it did not). From then on the program
    /// takes no `settle`, so no voucher is accepted (specification section 4.5).
    #[serde(default)]
    pub withdraw_requested_at: i64,
    /// While the open was sent but not yet read on chain with its deposit: the open's
    /// blockhash. No voucher is accepted meanwhile (vouchers are capped by the confirmed
    /// deposit); a session whose open never lands is forgotten once the blockhash expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconfirmed: Option<String>,
    /// The close's signature, once sealed and distributed (or why there was nothing to
    /// close).
    pub closed_by: Option<String>,
}

impl Session {
    /// Accepted but not yet applied on chain.
    pub fn unredeemed(&self) -> u64 {
        self.accepted.saturating_sub(self.redeemed)
    }

    /// How long this session's key lives after a change: for ever while open.
    fn ttl(&self) -> Option<Duration> {
        self.closed_by.is_some().then_some(SESSION_TTL)
    }
}

mod b58 {
    use super::*;

    pub fn serialize<S: Serializer>(k: &Pubkey, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&k.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Pubkey, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What the session flows keep in process besides the sessions: the on-chain work under
/// way, so that the same claim or close at once runs once.
#[derive(Default)]
pub struct SessionWork {
    pub(crate) claims: Coalesce<Vec<(Pubkey, u64)>, Result<SettleReply, Rejection>>,
    pub(crate) closes: Coalesce<(Pubkey, u64), Result<SettleReply, Rejection>>,
    /// When each open session's channel was last read by the background round.
    pub(crate) read_at: std::sync::Mutex<std::collections::HashMap<Pubkey, i64>>,
}

pub use crate::store::Change;

pub struct Sessions {
    store: Store,
    /// The on-chain work under way.
    pub work: SessionWork,
    /// Vouchers whose signature this process verified lately (by signature: the key and the
    /// message it verified), so that a `/settle` of a voucher `/verify` checked does not
    /// check it again.
    verified: Mutex<HashMap<[u8; 64], Verified>>,
    /// The voucher keys of the sessions seen lately, decompressed once.
    keys: Mutex<HashMap<Pubkey, Option<VoucherKey>>>,
    /// Payer agents whose kill switch the poller last read as paused.
    paused: RwLock<HashSet<Pubkey>>,
    /// The gated sessions' policies (payer agent, policy id) the poller last read as retired.
    retired: RwLock<HashSet<(Pubkey, u32)>>,
}

fn key(channel: impl std::fmt::Display) -> String {
    format!("{KEY_PREFIX}{channel}")
}

impl Sessions {
    pub fn new(store: Store) -> Self {
        Sessions {
            store,
            work: SessionWork::default(),
            verified: Mutex::default(),
            keys: Mutex::default(),
            paused: RwLock::default(),
            retired: RwLock::default(),
        }
    }

    /// The session of `channel`.
    pub async fn get(&self, channel: &Pubkey) -> Result<Option<Session>, StoreUnavailable> {
        let raw = self.store.get(&key(channel)).await?;
        Ok(raw.and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// Adds a new session; false when the channel has one already.
    pub async fn insert(&self, s: &Session) -> Result<bool, StoreUnavailable> {
        let json = serde_json::to_string(s).unwrap_or_default();
        if self
            .store
            .claim(&key(s.channel), &json, s.ttl())
            .await?
            .is_some()
        {
            return Ok(false);
        }
        let channel = s.channel.to_string();
        self.store
            .index_add(INDEX_KEY, &channel, s.opened_at)
            .await?;
        Ok(true)
    }

    /// Changes the session of `channel` with `f`, atomically against every other change
    /// (see [`crate::store::change`]).
    pub async fn update<E>(
        &self,
        channel: &Pubkey,
        f: impl Fn(&Session) -> Result<Session, E>,
    ) -> Result<Session, Change<E>> {
        crate::store::change(&*self.store, &key(channel), Session::ttl, f).await
    }

    /// Forgets the session of `channel` (an open that never landed).
    pub async fn remove(&self, channel: &Pubkey) -> Result<(), StoreUnavailable> {
        self.store.delete(&key(channel)).await?;
        self.store
            .index_remove(INDEX_KEY, &channel.to_string())
            .await
    }

    /// Every session still open (not closed).
    pub async fn open(&self) -> Result<Vec<Session>, StoreUnavailable> {
        let listed =
            crate::store::indexed(&*self.store, INDEX_KEY, i64::MIN, usize::MAX, |c| key(c))
                .await?;
        let mut open = Vec::new();
        for (channel, _, raw) in listed {
            match raw.and_then(|s| serde_json::from_str::<Session>(&s).ok()) {
                Some(s) if s.closed_by.is_none() => open.push(s),
                // Closed or expired: out of the index.
                _ => self.store.index_remove(INDEX_KEY, &channel).await?,
            }
        }
        open.sort_by_key(|s| s.opened_at);
        Ok(open)
    }

    /// Whether this replica does the background work this tick: always when alone on its
    /// store; among replicas, the one that first claims the tick's key (it expires after
    /// `ttl`).
    pub async fn take_tick(&self, ttl: Duration) -> Result<bool, StoreUnavailable> {
        if !self.store.shared() {
            return Ok(true);
        }
        let token = crate::store::token();
        let there = self
            .store
            .claim(TICK_KEY, &token, Some(ttl.mul_f32(0.9)))
            .await?;
        Ok(there.is_none())
    }

    /// Whether `key` signed `v`, from memory when this process verified it lately.
    pub fn signed(&self, v: &Voucher, key: &Pubkey) -> bool {
        let sig: [u8; 64] = v.signature.into();
        let seen = (key.to_bytes(), v.message());
        let lock = || self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if lock().get(&sig) == Some(&seen) {
            return true;
        }
        let vk = {
            let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            if keys.len() >= MAX_VERIFIED {
                keys.clear();
            }
            *keys.entry(*key).or_insert_with(|| VoucherKey::new(key))
        };
        // Checked with no lock held: other requests' checks run meanwhile.
        if !vk.is_some_and(|k| k.verifies(v)) {
            return false;
        }
        let mut cache = lock();
        if cache.len() >= MAX_VERIFIED {
            cache.clear();
        }
        cache.insert(sig, seen);
        true
    }

    /// Whether the poller last read `payer_asset`'s kill switch as paused.
    pub fn is_paused(&self, payer_asset: &Pubkey) -> bool {
        self.paused
            .read()
            .map(|p| p.contains(payer_asset))
            .unwrap_or(true)
    }

    /// The poller's latest read: the payers paused now; returns those newly paused.
    pub fn set_paused(&self, now: HashSet<Pubkey>) -> Vec<Pubkey> {
        let Ok(mut p) = self.paused.write() else {
            return Vec::new();
        };
        let new = now.difference(&p).copied().collect();
        *p = now;
        new
    }

    /// Whether the poller last read `g`'s policy as retired (or gone).
    pub fn is_retired(&self, g: &GatedTerms) -> bool {
        self.retired
            .read()
            .map(|r| r.contains(&(g.payer_asset, g.policy_id)))
            .unwrap_or(true)
    }

    /// The poller's latest read: the gated sessions' policies retired now.
    pub fn set_retired(&self, now: HashSet<(Pubkey, u32)>) {
        if let Ok(mut r) = self.retired.write() {
            *r = now;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Arc;

    /// A gated session with fresh keys (the other modules' tests start from it too).
    pub(crate) fn session() -> Session {
        Session {
            channel: Pubkey::new_unique(),
            payer: Pubkey::new_unique(),
            voucher_key: Pubkey::new_unique(),
            pay_to: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            token_2022: true,
            channel_id: String::new(),
            config: ChannelConfig {
                payer: "p".into(),
                payer_authorizer: "a".into(),
                receiver: "r".into(),
                receiver_authorizer: "ra".into(),
                token: "t".into(),
                withdraw_delay: 900,
                salt: "7".into(),
                open_slot: 9,
                voucher_signer: None,
            },
            deposit: 1_000,
            withdraw_delay: 900,
            gate: Some(GatedTerms {
                payer_asset: Pubkey::new_unique(),
                payee_asset: Pubkey::new_unique(),
                policy_id: 2,
                per_payment_cap: 10,
            }),
            opened_by: "sig".into(),
            opened_at: 5,
            accepted: 0,
            latest_signature: None,
            latest_price: 0,
            redeemed: 0,
            unredeemed_since: 0,
            active_at: 5,
            closing_at: 0,
            withdraw_requested_at: 0,
            unconfirmed: None,
            closed_by: None,
        }
    }

    #[test]
    fn a_session_round_trips_through_json() {
        let s = session();
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains(&s.channel.to_string()), "{json}");
        assert_eq!(serde_json::from_str::<Session>(&json).unwrap(), s);
    }

    #[tokio::test]
    async fn in_process_a_session_is_added_once_and_changed_in_place() {
        let store = Sessions::new(crate::store::open(None).unwrap());
        let s = session();
        assert!(store.insert(&s).await.unwrap());
        assert!(!store.insert(&s).await.unwrap());
        let next = store
            .update::<()>(&s.channel, |c| {
                Ok(Session {
                    accepted: c.accepted + 7,
                    ..c.clone()
                })
            })
            .await
            .unwrap();
        assert_eq!(next.accepted, 7);
        assert_eq!(store.get(&s.channel).await.unwrap().unwrap().accepted, 7);
        let refused = store.update(&s.channel, |_| Err("no")).await;
        assert!(matches!(refused, Err(Change::Refused("no"))));
        assert!(matches!(
            store
                .update::<()>(&Pubkey::new_unique(), |c| Ok(c.clone()))
                .await,
            Err(Change::Missing)
        ));
        assert_eq!(store.open().await.unwrap().len(), 1);
        store
            .update::<()>(&s.channel, |c| {
                Ok(Session {
                    closed_by: Some("x".into()),
                    ..c.clone()
                })
            })
            .await
            .unwrap();
        assert!(store.open().await.unwrap().is_empty());
    }

    /// Sets `accepted` to `to` when it is `from`, else refuses (as a voucher's watermark).
    fn advance(from: u64, to: u64) -> impl Fn(&Session) -> Result<Session, u64> {
        move |s| {
            if s.accepted != from {
                return Err(s.accepted);
            }
            Ok(Session {
                accepted: to,
                ..s.clone()
            })
        }
    }

    /// Runs `f` to its end on this thread (the tests below check from several threads).
    fn block<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn in_process_two_channels_are_checked_at_once() {
        use std::sync::mpsc;
        let store = Arc::new(Sessions::new(crate::store::open(None).unwrap()));
        let (a, b) = (session(), session());
        for s in [&a, &b] {
            block(store.insert(s)).unwrap();
        }
        // Each change waits, inside its check, for the other's check to begin: with the map
        // locked during a check, the second never begins and the first gives up.
        let (to_a, from_b) = mpsc::channel();
        let (to_b, from_a) = mpsc::channel();
        let wait = Duration::from_secs(10);
        let other = {
            let store = store.clone();
            std::thread::spawn(move || {
                block(store.update(&b.channel, |s| -> Result<Session, &str> {
                    to_a.send(()).map_err(|_| "a is gone")?;
                    from_a
                        .recv_timeout(wait)
                        .map_err(|_| "a's check never began")?;
                    Ok(s.clone())
                }))
            })
        };
        let mine = block(store.update(&a.channel, |s| -> Result<Session, &str> {
            to_b.send(()).map_err(|_| "b is gone")?;
            from_b
                .recv_timeout(wait)
                .map_err(|_| "b's check never began")?;
            Ok(s.clone())
        }));
        assert!(mine.is_ok(), "{:?}", mine.err());
        let theirs = other.join().unwrap();
        assert!(theirs.is_ok(), "{:?}", theirs.err());
    }

    #[test]
    fn in_process_a_change_checked_against_a_stale_session_is_checked_again() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let store = Arc::new(Sessions::new(crate::store::open(None).unwrap()));
        let s = session();
        block(store.insert(&s)).unwrap();
        // While the first check of 0 -> 5 runs, another change lands 0 -> 3: the first is
        // checked again against 3, and refused there, as the voucher it stands for would be.
        let runs = AtomicUsize::new(0);
        let result = block(store.update(&s.channel, |c| {
            if runs.fetch_add(1, Ordering::SeqCst) == 0 {
                let (store, channel) = (store.clone(), c.channel);
                let (done, landed) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let _ = done.send(block(store.update(&channel, advance(0, 3))).is_ok());
                });
                // Given up (not hung) if the other change cannot get at the map.
                if landed.recv_timeout(Duration::from_secs(10)) != Ok(true) {
                    return Err(u64::MAX);
                }
            }
            advance(0, 5)(c)
        }));
        assert!(matches!(result, Err(Change::Refused(3))));
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        let now = block(store.get(&s.channel)).unwrap().unwrap();
        assert_eq!(now.accepted, 3);
        // A change that finds the session as it read it lands.
        assert_eq!(
            block(store.update(&s.channel, advance(3, 8)))
                .ok()
                .map(|s| s.accepted),
            Some(8)
        );
    }

    #[test]
    fn a_remembered_signature_counts_only_for_its_key_and_message() {
        use solana_sdk::signature::{Keypair, Signer};
        let store = Sessions::new(crate::store::open(None).unwrap());
        let key = Keypair::new();
        let channel = Pubkey::new_unique();
        let v = Voucher::sign(&key, &channel, 5, 0);
        assert!(store.signed(&v, &key.pubkey()));
        assert!(store.signed(&v, &key.pubkey()));
        assert!(!store.signed(&v, &Pubkey::new_unique()));
        let other = Voucher { cumulative: 6, ..v };
        assert!(!store.signed(&other, &key.pubkey()));
    }

    #[test]
    fn the_pause_set_reports_new_pauses_only() {
        let store = Sessions::new(crate::store::open(None).unwrap());
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        assert_eq!(store.set_paused(HashSet::from([a])), vec![a]);
        assert!(store.is_paused(&a) && !store.is_paused(&b));
        let mut again = store.set_paused(HashSet::from([a, b]));
        again.sort();
        assert_eq!(again, vec![b]);
        assert!(store.set_paused(HashSet::new()).is_empty());
        assert!(!store.is_paused(&a));
    }
}
