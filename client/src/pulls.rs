//! The gated subscriptions on chain (docs/subscriptions.md): the gate's records a
//! facilitator pulls, or of a payer or payee agent, each with its recurring delegation as it
//! reads now, and when a pull is due.

use crate::subscriptions::{self, RecurringDelegation};
use anchor_lang::{AccountDeserialize, Discriminator, Space};
use gate::state::GatedSubscription;
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

/// A gated subscription found on chain: its record's address, the record, and its
/// delegation as it reads now (`None` once it was revoked).
#[derive(Clone, Debug)]
pub struct SubscriptionListing {
    pub address: Pubkey,
    pub record: GatedSubscription,
    pub delegation: Option<RecurringDelegation>,
}

impl SubscriptionListing {
    /// What a facilitator's crank pulls at `now`: the period's whole amount, once per period
    /// (when nothing was pulled in it yet); `None` before the start, after the expiry, once
    /// revoked or pulled.
    pub fn due(&self, now: i64) -> Option<u64> {
        let d = self.delegation.as_ref()?;
        let expired = d.expiry_ts != 0 && now > d.expiry_ts;
        if expired || now < d.current_period_start_ts {
            return None;
        }
        (d.period_at(now).1 == 0).then_some(d.amount_per_period)
    }

    /// When the next pull falls due: now or earlier when one is due, else the start of the
    /// next period; `None` when no period starts any more (expired, revoked).
    pub fn next_pull(&self, now: i64) -> Option<i64> {
        let d = self.delegation.as_ref()?;
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
    let mut records = Vec::with_capacity(found.len());
    for (address, acc) in found {
        if let Ok(record) = GatedSubscription::try_deserialize(&mut &acc.data[..]) {
            records.push((address, record));
        }
    }
    let delegations: Vec<Pubkey> = records.iter().map(|(_, r)| r.delegation).collect();
    let accounts = crate::chain::accounts(rpc, &delegations).await?;
    let mut out: Vec<SubscriptionListing> = records
        .into_iter()
        .zip(accounts)
        .map(|((address, record), acc)| SubscriptionListing {
            address,
            record,
            delegation: acc
                .filter(|a| a.owner == subscriptions::PROGRAM_ID)
                .and_then(|a| RecurringDelegation::read(&a.data)),
        })
        .collect();
    out.sort_by_key(|l| (l.record.created_at, l.address));
    Ok(out)
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
            ..listing(1_000, 0, 0)
        };
        assert_eq!((revoked.due(1_000), revoked.next_pull(1_000)), (None, None));
    }
}
