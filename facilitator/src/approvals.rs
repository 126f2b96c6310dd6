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
//! - In the store (see [`crate::store`]), so that replicas share them: a record is one key
//!   holding its JSON, indexed (per payer and all) by its expiry, each change one round trip.

use crate::store::{Keep, Store, StoreUnavailable};
use solana_sdk::pubkey::Pubkey;
use std::time::Duration;
pub use trust_gate_client::approvals::PendingApproval;

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

/// The pending approvals, in the store.
pub struct Approvals {
    settings: ApprovalSettings,
    store: Store,
}

fn record_key(id: impl std::fmt::Display) -> String {
    format!("{RECORD_PREFIX}{id}")
}

fn payer_key(payer: &Pubkey) -> String {
    format!("{PAYER_PREFIX}{payer}")
}

impl Approvals {
    pub fn new(settings: ApprovalSettings, store: Store) -> Self {
        Approvals { settings, store }
    }

    pub fn settings(&self) -> ApprovalSettings {
        self.settings
    }

    /// Keeps `a` (replacing the record of the same terms, if any), indexed by its expiry
    /// under its payer and under all; what expired goes, and past the payer's bound, the
    /// payer's records expiring first. One round trip.
    pub async fn hold(&self, a: &PendingApproval) -> Result<(), StoreUnavailable> {
        let json = serde_json::to_string(a).unwrap_or_default();
        let ttl = Duration::from_secs(u64::try_from(a.expires_at - a.held_at).unwrap_or(1));
        let payer = payer_key(&a.payer_agent_asset);
        self.store
            .keep_indexed(&Keep {
                key: &record_key(a.id),
                value: &json,
                ttl,
                indexes: &[&payer, ALL_KEY],
                member: &a.id.to_string(),
                score: a.expires_at,
                first_score: false,
                drop_below: a.held_at,
                bound: Some((self.settings.per_payer, RECORD_PREFIX)),
            })
            .await
    }

    /// The record `id`, unless it expired before `now`.
    pub async fn get(
        &self,
        id: &Pubkey,
        now: i64,
    ) -> Result<Option<PendingApproval>, StoreUnavailable> {
        let raw = self.store.get(&record_key(id)).await?;
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
        let set = payer.map_or_else(|| ALL_KEY.to_string(), payer_key);
        let listed =
            crate::store::indexed(&*self.store, &set, now, MAX_LISTED, |id| record_key(id)).await?;
        Ok(listed
            .into_iter()
            .filter_map(|(_, _, s)| serde_json::from_str::<PendingApproval>(&s?).ok())
            .filter(|p| p.expires_at >= now)
            .collect())
    }

    /// Forgets the record `id` of `payer` (its payment used its approval); true when there
    /// was one.
    pub async fn remove(&self, id: &Pubkey, payer: &Pubkey) -> Result<bool, StoreUnavailable> {
        let payer = payer_key(payer);
        self.store
            .remove_indexed(&record_key(id), &[&payer, ALL_KEY], &id.to_string())
            .await
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
        bounded_expiring_refreshed(crate::store::open(None).unwrap()).await;
    }

    /// The same in Redis (Debian's `redis-server`, which `.ci/run` installs), where replicas
    /// share them: another store on the same Redis sees what one kept.
    #[tokio::test]
    async fn in_redis_a_payers_records_are_bounded_expire_and_refresh_in_place() {
        let redis = trust_gate_test_setup::RedisServer::start();
        let shared = crate::store::open(Some(&redis.url())).unwrap();
        bounded_expiring_refreshed(shared.clone()).await;
        let other = Approvals::new(ApprovalSettings::default(), shared);
        assert_eq!(other.list(None, 1_020).await.unwrap().len(), 2);
    }

    async fn bounded_expiring_refreshed(shared: Store) {
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
