//! Pending approvals: the payments (and gated channel deposits) the gate held for an approval
//! (RequireApproval), kept so that the payer's members see what waits and approve it
//! (`GET /approvals`, `trust-gate approvals`, MCP's `gate_list_approvals`).
//!
//! - Off chain, and free: nothing here costs rent. The approval itself is made on chain by
//!   the members (`policy_vault::approve_payment`) at the address that is the record's id.
//!   That address is derived from the terms, so a member's tool checks that the terms it
//!   approves are the ones it was shown: the facilitator cannot swap them.
//! - Written only for a request the payer's signer signed (an x402 `/verify` or `/settle`
//!   with its transaction, a channel open), so that nobody else fills a payer's list.
//! - At most `APPROVALS_PER_PAYER` per payer agent (past it, the one expiring first goes),
//!   each expiring `APPROVAL_PENDING_SECS` after the payment was last held. Holding the same
//!   terms again refreshes the record instead of adding one.
//! - A payment that uses its approval removes its record.
//! - In process, or in Redis (`REDIS_URL`) so that replicas share them: a record is one key
//!   holding its JSON, indexed by two sorted sets (per payer and all) scored by expiry, and
//!   each change is one script (one round trip).

use redis::Script;
use solana_sdk::pubkey::Pubkey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
pub use trust_gate_client::approvals::PendingApproval;
use trust_gate_server::redis_store::{RedisStore, StoreUnavailable};

/// The default life of a pending approval: a day.
pub const DEFAULT_PENDING: Duration = Duration::from_secs(24 * 3600);
/// The default bound per payer agent.
pub const DEFAULT_PER_PAYER: usize = 16;
/// The most records one listing returns (the ones expiring last).
pub const MAX_LISTED: usize = 500;
const RECORD_PREFIX: &str = "trust-gate:approval:";
const PAYER_PREFIX: &str = "trust-gate:approvals:";
const ALL_KEY: &str = "trust-gate:approvals";

/// How long records live and how many a payer may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApprovalSettings {
    /// `APPROVAL_PENDING_SECS`.
    pub pending: Duration,
    /// `APPROVALS_PER_PAYER`.
    pub per_payer: usize,
}

impl Default for ApprovalSettings {
    fn default() -> Self {
        ApprovalSettings {
            pending: DEFAULT_PENDING,
            per_payer: DEFAULT_PER_PAYER,
        }
    }
}

/// What an answer says of a payment held for an approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// The pending approval's id: the address of the payment's approval on chain.
    pub id: Pubkey,
    /// The record kept, when the request was the payer's own (signed) and the store took it.
    pub record: Option<PendingApproval>,
}

/// Writes the record KEYS[1] (ARGV[2], expiring in ARGV[6] ms) and indexes its id ARGV[1] by
/// its expiry ARGV[3] in the payer's set KEYS[2] and in KEYS[3] (all); drops what expired
/// before ARGV[4] and, past ARGV[5] records of the payer, the ones expiring first (never the
/// one written). Returns the ids dropped for the bound.
const ADD: &str = r"
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[6])
for _, set in ipairs({KEYS[2], KEYS[3]}) do
  redis.call('ZREMRANGEBYSCORE', set, '-inf', '(' .. ARGV[4])
  redis.call('ZADD', set, ARGV[3], ARGV[1])
end
redis.call('PEXPIRE', KEYS[2], ARGV[6])
local dropped = {}
while redis.call('ZCARD', KEYS[2]) > tonumber(ARGV[5]) do
  local first = redis.call('ZRANGE', KEYS[2], 0, 1)
  local id = first[1]
  if id == ARGV[1] then id = first[2] end
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  redis.call('DEL', ARGV[7] .. id)
  dropped[#dropped + 1] = id
end
return dropped";

/// Removes the record KEYS[1] and its id ARGV[1] from the sets KEYS[2] and KEYS[3].
const REMOVE: &str = r"
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return redis.call('DEL', KEYS[1])";

/// The pending approvals, in process or in Redis.
pub struct Approvals {
    settings: ApprovalSettings,
    local: Mutex<HashMap<Pubkey, PendingApproval>>,
    shared: Option<Arc<RedisStore>>,
    add: Script,
    remove: Script,
}

fn record_key(id: &Pubkey) -> String {
    format!("{RECORD_PREFIX}{id}")
}

fn payer_key(payer: &Pubkey) -> String {
    format!("{PAYER_PREFIX}{payer}")
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl Approvals {
    pub fn new(settings: ApprovalSettings, shared: Option<Arc<RedisStore>>) -> Self {
        Approvals {
            settings,
            local: Mutex::default(),
            shared,
            add: Script::new(ADD),
            remove: Script::new(REMOVE),
        }
    }

    pub fn settings(&self) -> ApprovalSettings {
        self.settings
    }

    fn local_map(&self) -> std::sync::MutexGuard<'_, HashMap<Pubkey, PendingApproval>> {
        // Every change is one insert or remove: a panic cannot leave one half done.
        self.local.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `a` (replacing the record of the same terms, if any); past the payer's bound,
    /// the payer's records expiring first go.
    pub async fn hold(&self, a: &PendingApproval) -> Result<(), StoreUnavailable> {
        let Some(r) = &self.shared else {
            let mut map = self.local_map();
            map.retain(|_, p| p.expires_at >= a.held_at);
            map.insert(a.id, a.clone());
            let mut mine: Vec<(i64, Pubkey)> = map
                .values()
                .filter(|p| p.payer_agent_asset == a.payer_agent_asset && p.id != a.id)
                .map(|p| (p.expires_at, p.id))
                .collect();
            mine.sort();
            let over = (mine.len() + 1).saturating_sub(self.settings.per_payer);
            for (_, id) in mine.into_iter().take(over) {
                map.remove(&id);
            }
            return Ok(());
        };
        let json = serde_json::to_string(a).unwrap_or_default();
        let ttl = Duration::from_secs(u64::try_from(a.expires_at - a.held_at).unwrap_or(1));
        let _dropped: Vec<String> = r
            .invoke(
                &self.add,
                &[
                    record_key(&a.id),
                    payer_key(&a.payer_agent_asset),
                    ALL_KEY.to_string(),
                ],
                &[
                    a.id.to_string(),
                    json,
                    a.expires_at.to_string(),
                    a.held_at.to_string(),
                    self.settings.per_payer.to_string(),
                    millis(ttl).to_string(),
                    RECORD_PREFIX.to_string(),
                ],
            )
            .await
            .map_err(|e| r.unavailable(e))?;
        Ok(())
    }

    /// The record `id`, unless it expired before `now`.
    pub async fn get(
        &self,
        id: &Pubkey,
        now: i64,
    ) -> Result<Option<PendingApproval>, StoreUnavailable> {
        let Some(r) = &self.shared else {
            return Ok(self
                .local_map()
                .get(id)
                .filter(|p| p.expires_at >= now)
                .cloned());
        };
        let raw = r.get(&record_key(id)).await.map_err(|e| r.unavailable(e))?;
        Ok(raw
            .and_then(|s| serde_json::from_str::<PendingApproval>(&s).ok())
            .filter(|p| p.expires_at >= now))
    }

    /// The records of `payer` (all payers' when `None`) that have not expired before `now`,
    /// the one expiring last first, at most [`MAX_LISTED`].
    pub async fn list(
        &self,
        payer: Option<&Pubkey>,
        now: i64,
    ) -> Result<Vec<PendingApproval>, StoreUnavailable> {
        let Some(r) = &self.shared else {
            let mut found: Vec<PendingApproval> = self
                .local_map()
                .values()
                .filter(|p| p.expires_at >= now)
                .filter(|p| payer.is_none_or(|k| p.payer_agent_asset == *k))
                .cloned()
                .collect();
            found.sort_by_key(|p| std::cmp::Reverse((p.expires_at, p.id)));
            found.truncate(MAX_LISTED);
            return Ok(found);
        };
        let set = payer.map_or_else(|| ALL_KEY.to_string(), payer_key);
        let ids: Vec<String> = r
            .query(
                redis::cmd("ZRANGE")
                    .arg(&set)
                    .arg("+inf")
                    .arg(now)
                    .arg("BYSCORE")
                    .arg("REV")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(MAX_LISTED),
            )
            .await
            .map_err(|e| r.unavailable(e))?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = ids
            .iter()
            .map(|id| format!("{RECORD_PREFIX}{id}"))
            .collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let raw = r.get_many(&keys).await.map_err(|e| r.unavailable(e))?;
        Ok(raw
            .into_iter()
            .flatten()
            .filter_map(|s| serde_json::from_str::<PendingApproval>(&s).ok())
            .filter(|p| p.expires_at >= now)
            .collect())
    }

    /// Forgets the record of `terms` (its payment used its approval); true when there was one.
    pub async fn remove(&self, id: &Pubkey, payer: &Pubkey) -> Result<bool, StoreUnavailable> {
        let Some(r) = &self.shared else {
            return Ok(self.local_map().remove(id).is_some());
        };
        let n: i64 = r
            .invoke(
                &self.remove,
                &[record_key(id), payer_key(payer), ALL_KEY.to_string()],
                &[id.to_string()],
            )
            .await
            .map_err(|e| r.unavailable(e))?;
        Ok(n == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_client::decode::ApprovalTerms;
    use trust_gate_client::{Builder, Network, ProgramIds};

    fn builder() -> Builder {
        Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap()
    }

    fn terms(payer: Pubkey, amount: u64) -> ApprovalTerms {
        ApprovalTerms {
            payer_asset: payer,
            payee_asset: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            amount,
            policy_id: 1,
        }
    }

    fn held(b: &Builder, t: &ApprovalTerms, now: i64) -> PendingApproval {
        PendingApproval::new(b, t, "payment", None, now, Duration::from_secs(100))
    }

    #[tokio::test]
    async fn in_process_a_payers_records_are_bounded_expire_and_refresh_in_place() {
        bounded_expiring_refreshed(None).await;
    }

    /// The same in Redis (Debian's `redis-server`, which `.ci/run` installs), where replicas
    /// share them: another store on the same Redis sees what one kept.
    #[tokio::test]
    async fn in_redis_a_payers_records_are_bounded_expire_and_refresh_in_place() {
        let redis = trust_gate_test_setup::RedisServer::start();
        let shared = Arc::new(RedisStore::new(&redis.url()).unwrap());
        bounded_expiring_refreshed(Some(shared.clone())).await;
        let other = Approvals::new(ApprovalSettings::default(), Some(shared));
        assert_eq!(other.list(None, 1_020).await.unwrap().len(), 2);
    }

    async fn bounded_expiring_refreshed(shared: Option<Arc<RedisStore>>) {
        let b = builder();
        let store = Approvals::new(
            ApprovalSettings {
                pending: Duration::from_secs(100),
                per_payer: 2,
            },
            shared,
        );
        let (payer, other) = (Pubkey::new_unique(), Pubkey::new_unique());
        let first = held(&b, &terms(payer, 10), 1_000);
        let second = held(&b, &terms(payer, 20), 1_010);
        let third = held(&b, &terms(payer, 30), 1_020);
        let theirs = held(&b, &terms(other, 40), 1_000);
        for a in [&first, &theirs, &second] {
            store.hold(a).await.unwrap();
        }
        assert_eq!(store.list(Some(&payer), 1_020).await.unwrap().len(), 2);
        // The id is the approval's address of the terms.
        assert_eq!(first.id, b.pda.approval(&first.terms()));

        // Holding the first again refreshes it: still two, the second now expires first.
        let again = held(&b, &first.terms(), 1_015);
        store.hold(&again).await.unwrap();
        let listed = store.list(Some(&payer), 1_020).await.unwrap();
        assert_eq!(listed, vec![again.clone(), second.clone()]);

        // A third: the one expiring first (the second) goes, not the other payer's.
        store.hold(&third).await.unwrap();
        let listed = store.list(Some(&payer), 1_020).await.unwrap();
        assert_eq!(listed, vec![third.clone(), again.clone()]);
        assert_eq!(store.get(&second.id, 1_020).await.unwrap(), None);
        assert_eq!(
            store.get(&theirs.id, 1_020).await.unwrap(),
            Some(theirs.clone())
        );
        assert_eq!(store.list(None, 1_020).await.unwrap().len(), 3);

        // Expired: not listed, not found.
        assert_eq!(store.get(&theirs.id, 1_101).await.unwrap(), None);
        assert_eq!(store.list(None, 1_116).await.unwrap(), vec![third.clone()]);

        // Used: removed.
        assert!(store.remove(&third.id, &payer).await.unwrap());
        assert!(!store.remove(&third.id, &payer).await.unwrap());
        assert_eq!(store.get(&third.id, 1_020).await.unwrap(), None);
        assert_eq!(store.list(None, 1_020).await.unwrap(), vec![again, theirs]);
    }
}
