//! The gated subscriptions on chain (docs/subscriptions.md): the gate's records a
//! facilitator pulls, or of a payer or payee agent, each with its recurring delegation as it
//! reads now, and when a pull is due.

use crate::subscriptions::{self, RecurringDelegation, SubscriptionAuthority};
use anchor_lang::{AccountDeserialize, Discriminator, Space};
pub use gate::state::GatedSubscription;
use solana_sdk::pubkey::Pubkey;

/// Whose subscriptions [`list`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubscribedBy {
    /// Pulled by this facilitator.
    Facilitator(Pubkey),
    /// Paid by this payer agent.
    Payer(Pubkey),
    /// Paid to this payee agent.
    Payee(Pubkey),
}

/// Whether the delegator's SubscriptionAuthority still backs a delegation: the program moves
/// tokens only through it, and only for delegations made under its `init_id` now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Open, of the delegation's `init_id`.
    Current,
    /// Closed (its user revoked it): every pull fails (103).
    Closed,
    /// Initialized again since the delegation was made: every pull fails (136).
    Stale,
}

/// Where a subscription stands at a time.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Standing {
    /// Its delegation is open under a live authority and not past its expiry: its
    /// facilitator pulls it when a pull is due.
    Active,
    /// Past its expiry: nothing more can be pulled.
    Expired,
    /// Its delegation was revoked at the Subscriptions program, or its delegator's
    /// SubscriptionAuthority was revoked (or initialized again since): nothing can be pulled.
    Revoked,
}

/// A gated subscription found on chain: its record's address, the record, its delegation as
/// it reads now (`None` once it was revoked) and whether its authority backs it (`None` with
/// no delegation).
#[derive(Clone, Debug)]
pub struct SubscriptionListing {
    pub address: Pubkey,
    pub record: GatedSubscription,
    pub delegation: Option<RecurringDelegation>,
    pub backing: Option<Backing>,
    /// The lamports of the record and of its delegation while the Subscriptions program
    /// holds it: what `unsubscribe` returns to the delegator.
    pub rent: u64,
}

impl Standing {
    /// `active`, `expired` or `revoked`.
    pub fn name(self) -> &'static str {
        match self {
            Standing::Active => "active",
            Standing::Expired => "expired",
            Standing::Revoked => "revoked",
        }
    }
}

impl SubscriptionListing {
    /// The mint it pulls, while its delegation is open (the gate's record does not name it).
    pub fn mint(&self) -> Option<Pubkey> {
        self.delegation.map(|d| d.mint)
    }

    /// Where it stands at `now`.
    pub fn standing(&self, now: i64) -> Standing {
        match (&self.delegation, self.backing) {
            (Some(d), Some(Backing::Current)) if d.expiry_ts != 0 && now > d.expiry_ts => {
                Standing::Expired
            }
            (Some(_), Some(Backing::Current)) => Standing::Active,
            _ => Standing::Revoked,
        }
    }

    /// What a facilitator's crank pulls at `now`: the period's whole amount, once per period
    /// (when nothing was pulled in it yet); `None` before the start, after the expiry, once
    /// revoked (the delegation or its authority) or pulled.
    pub fn due(&self, now: i64) -> Option<u64> {
        let d = self.delegation.as_ref()?;
        if self.standing(now) != Standing::Active || now < d.current_period_start_ts {
            return None;
        }
        (d.period_at(now).1 == 0).then_some(d.amount_per_period)
    }

    /// When the next pull falls due: now or earlier when one is due, else the start of the
    /// next period; `None` when no period starts any more (expired, revoked).
    pub fn next_pull(&self, now: i64) -> Option<i64> {
        let d = self.delegation.as_ref()?;
        if self.standing(now) == Standing::Revoked {
            return None;
        }
        if now < d.current_period_start_ts {
            return Some(d.current_period_start_ts);
        }
        let (start, pulled) = d.period_at(now);
        if pulled == 0 && self.due(now).is_some() {
            return Some(start);
        }
        let length = i64::try_from(d.period_length_s).unwrap_or(i64::MAX).max(1);
        let next = start.saturating_add(length);
        let ended = d.expiry_ts != 0 && next >= d.expiry_ts;
        (!ended).then_some(next)
    }
}

/// The gated subscriptions `by` names, each with its delegation: one `getProgramAccounts` of
/// the gate's records, one read of their delegations; oldest first.
pub async fn list(
    rpc: &solana_rpc_client::nonblocking::rpc_client::RpcClient,
    gate_program: &Pubkey,
    by: SubscribedBy,
) -> Result<Vec<SubscriptionListing>, crate::ClientError> {
    use solana_rpc_client_api::filter::{Memcmp, RpcFilterType};
    // The record's fields after its discriminator: payer, payee, facilitator.
    let (offset, key) = match by {
        SubscribedBy::Payer(k) => (8, k),
        SubscribedBy::Payee(k) => (40, k),
        SubscribedBy::Facilitator(k) => (72, k),
    };
    let filters = vec![
        RpcFilterType::DataSize((8 + GatedSubscription::INIT_SPACE) as u64),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            0,
            GatedSubscription::DISCRIMINATOR.to_vec(),
        )),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(offset, key.to_bytes().to_vec())),
    ];
    let found = crate::chain::program_accounts(rpc, gate_program, filters).await?;
    let records = found
        .into_iter()
        .filter_map(|(address, acc)| {
            let record = GatedSubscription::try_deserialize(&mut &acc.data[..]).ok()?;
            Some((address, record, acc.lamports))
        })
        .collect();
    let mut out = with_delegations(rpc, records).await?;
    out.sort_by_key(|l| (l.record.created_at, l.address));
    Ok(out)
}

/// How many nonces one read of [`free_nonce`] tries.
const NONCE_BATCH: u64 = 16;

/// The first nonce from 1 under which `s` has neither a delegation nor the gate's record of
/// one (a subscription's address depends on its nonce alone among its terms), reading
/// [`NONCE_BATCH`] at a time.
pub async fn free_nonce(
    rpc: &solana_rpc_client::nonblocking::rpc_client::RpcClient,
    b: &crate::Builder,
    s: &crate::instructions::Subscription,
) -> Result<u64, crate::ClientError> {
    let mut first = 1u64;
    loop {
        let nonces: Vec<u64> = (first..first.saturating_add(NONCE_BATCH)).collect();
        let mut keys = Vec::with_capacity(2 * nonces.len());
        for &n in &nonces {
            let mut t = *s;
            t.terms.nonce = n;
            let delegation = b.subscription_delegation(&t);
            keys.push(delegation);
            keys.push(b.pda.gated_subscription(&delegation));
        }
        let found = crate::chain::accounts(rpc, &keys).await?;
        if let Some(i) = found.chunks(2).position(|p| p.iter().all(Option::is_none)) {
            return Ok(nonces[i]);
        }
        // Each round trip is one batch: a delegator with thousands of subscriptions to one
        // payee is not a case worth bounding apart.
        first = first.saturating_add(NONCE_BATCH);
    }
}

/// The listings of `records` (address, record, its lamports): their delegations read in one
/// call, the authorities behind them in another.
async fn with_delegations(
    rpc: &solana_rpc_client::nonblocking::rpc_client::RpcClient,
    records: Vec<(Pubkey, GatedSubscription, u64)>,
) -> Result<Vec<SubscriptionListing>, crate::ClientError> {
    let keys: Vec<Pubkey> = records.iter().map(|(_, r, _)| r.delegation).collect();
    let accounts: Vec<_> = crate::chain::accounts(rpc, &keys)
        .await?
        .into_iter()
        .map(|a| a.filter(|a| a.owner == subscriptions::PROGRAM_ID))
        .collect();
    let delegations: Vec<Option<RecurringDelegation>> = accounts
        .iter()
        .map(|a| a.as_ref().and_then(|a| RecurringDelegation::read(&a.data)))
        .collect();
    let backings = backings(rpc, &delegations).await?;
    Ok(records
        .into_iter()
        .zip(accounts)
        .zip(delegations.into_iter().zip(backings))
        .map(
            |(((address, record, lamports), held), (delegation, backing))| SubscriptionListing {
                address,
                record,
                delegation,
                backing,
                rent: lamports.saturating_add(held.map_or(0, |a| a.lamports)),
            },
        )
        .collect())
}

/// Whether each delegation's authority backs it (one read of them all); `None` where there
/// is no delegation.
async fn backings(
    rpc: &solana_rpc_client::nonblocking::rpc_client::RpcClient,
    delegations: &[Option<RecurringDelegation>],
) -> Result<Vec<Option<Backing>>, crate::ClientError> {
    let keys: Vec<Pubkey> = delegations
        .iter()
        .flatten()
        .map(|d| d.subscription_authority)
        .collect();
    let mut authorities = crate::chain::accounts(rpc, &keys).await?.into_iter();
    Ok(delegations
        .iter()
        .map(|d| {
            let d = d.as_ref()?;
            let authority = authorities
                .next()
                .flatten()
                .filter(|a| a.owner == subscriptions::PROGRAM_ID)
                .and_then(|a| SubscriptionAuthority::read(&a.data));
            Some(match authority {
                Some(a) if a.init_id == d.init_id => Backing::Current,
                Some(_) => Backing::Stale,
                None => Backing::Closed,
            })
        })
        .collect())
}

/// The gated subscription whose record is at `address`, or whose delegation is `address`,
/// with its delegation as it reads now; `None` when neither holds one.
pub async fn find(
    rpc: &solana_rpc_client::nonblocking::rpc_client::RpcClient,
    ids: &crate::ProgramIds,
    address: &Pubkey,
) -> Result<Option<SubscriptionListing>, crate::ClientError> {
    let given = crate::chain::account(rpc, address).await?;
    // A record is the gate's; anything else is taken for a delegation.
    let (record_address, record) = match given {
        Some(acc) if acc.owner == ids.gate => (*address, Some(acc)),
        _ => {
            let record_address = crate::pda::Pdas::new(*ids).gated_subscription(address);
            (
                record_address,
                crate::chain::account(rpc, &record_address).await?,
            )
        }
    };
    let Some(acc) = record else {
        return Ok(None);
    };
    let record = crate::decode::account::<GatedSubscription>("GatedSubscription", &acc.data)?;
    let found = with_delegations(rpc, vec![(record_address, record, acc.lamports)]).await?;
    Ok(found.into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(start: i64, pulled: u64, expiry: i64) -> SubscriptionListing {
        SubscriptionListing {
            address: Pubkey::new_unique(),
            record: GatedSubscription {
                payer_asset: Pubkey::new_unique(),
                payee_asset: Pubkey::new_unique(),
                facilitator: Pubkey::new_unique(),
                delegation: Pubkey::new_unique(),
                delegator: Pubkey::new_unique(),
                policy_id: 1,
                delegate_bump: 255,
                created_at: 0,
                bump: 255,
            },
            delegation: Some(RecurringDelegation {
                delegator: Pubkey::new_unique(),
                delegatee: Pubkey::new_unique(),
                payer: Pubkey::new_unique(),
                init_id: 1,
                subscription_authority: Pubkey::new_unique(),
                mint: Pubkey::new_unique(),
                current_period_start_ts: start,
                period_length_s: 100,
                expiry_ts: expiry,
                amount_per_period: 50,
                amount_pulled_in_period: pulled,
            }),
            backing: Some(Backing::Current),
            rent: 0,
        }
    }

    #[test]
    fn a_pull_is_due_once_a_period() {
        // Nothing pulled yet: due now, the whole amount.
        let fresh = listing(1_000, 0, 0);
        assert_eq!(fresh.due(1_000), Some(50));
        assert_eq!(fresh.next_pull(1_050), Some(1_000));
        // Pulled in this period: the next one's start.
        let pulled = listing(1_000, 50, 0);
        assert_eq!(pulled.due(1_099), None);
        assert_eq!(pulled.next_pull(1_099), Some(1_100));
        // A later period rolls over: due again.
        assert_eq!(pulled.due(1_250), Some(50));
        assert_eq!(pulled.next_pull(1_250), Some(1_200));
        // Partly pulled counts as pulled (a pull by hand, say).
        assert_eq!(listing(1_000, 10, 0).due(1_050), None);
    }

    #[test]
    fn nothing_is_due_before_the_start_after_the_expiry_or_once_revoked() {
        let later = listing(2_000, 0, 0);
        assert_eq!(later.due(1_999), None);
        assert_eq!(later.next_pull(1_500), Some(2_000));
        let expiring = listing(1_000, 50, 1_150);
        assert_eq!(expiring.due(1_151), None);
        // Its last period (1 100 to 1 150) is still billed; none starts after it.
        assert_eq!(expiring.due(1_120), Some(50));
        assert_eq!(listing(1_100, 50, 1_150).next_pull(1_120), None);
        let revoked = SubscriptionListing {
            delegation: None,
            backing: None,
            ..listing(1_000, 0, 0)
        };
        assert_eq!((revoked.due(1_000), revoked.next_pull(1_000)), (None, None));
        assert_eq!(revoked.standing(1_000), Standing::Revoked);
    }

    #[test]
    fn a_closed_or_stale_authority_revokes_and_an_expiry_ends() {
        // The delegation alone would read due: its authority says otherwise.
        for backing in [Backing::Closed, Backing::Stale] {
            let dead = SubscriptionListing {
                backing: Some(backing),
                ..listing(1_000, 0, 0)
            };
            assert_eq!(dead.standing(1_000), Standing::Revoked, "{backing:?}");
            assert_eq!((dead.due(1_000), dead.next_pull(1_000)), (None, None));
        }
        let expiring = listing(1_000, 0, 1_150);
        assert_eq!(expiring.standing(1_150), Standing::Active);
        assert_eq!(expiring.standing(1_151), Standing::Expired);
    }
}
