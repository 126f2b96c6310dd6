//! `trust-gate subscribe | subscriptions | unsubscribe`: gated subscriptions
//! (docs/subscriptions.md) on any cluster. The payer agent's owner (or agent wallet) lets a
//! facilitator pull a fixed amount each period for a payee, through the gate; the listing
//! shows each period's use and when the next pull falls due; the cancel returns the rents.

use crate::holdback::{key, send, signer_or_demo, Cluster};
use clap::Args;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use trust_gate_client::instructions::Subscription;
use trust_gate_client::pulls::{self, Standing, SubscribedBy, SubscriptionListing};
use trust_gate_client::subscriptions::{self, RecurringTerms, MAX_PERIOD_SECS};
use trust_gate_client::{chain, Network, RpcClient};
use trust_gate_migrations::{demo, DemoWorld};

/// A year: the default run of a subscription that starts when it lands.
const DEFAULT_LIFE_SECS: i64 = 365 * 86_400;

#[derive(Args)]
pub struct SubscribeArgs {
    /// The payee agent (its asset) the pulls pay.
    #[arg(long, value_name = "ASSET")]
    payee: String,
    /// What each period's pull takes, in the mint's base units.
    #[arg(long)]
    amount: u64,
    /// The period's length in seconds (86400: daily).
    #[arg(long)]
    period_secs: u64,
    /// The payer agent (its asset); on the localnet the demo tier-3 payer when omitted.
    #[arg(long, value_name = "ASSET")]
    payer_agent: Option<String>,
    /// The payer's wallet-funded policy each pull is counted under; its mint is the pulls'.
    #[arg(long, default_value_t = demo::POLICY_ID)]
    policy_id: u32,
    /// The facilitator that sends the pulls (it must hold a GateAuthority); on the localnet
    /// the demo facilitator when omitted.
    #[arg(long, value_name = "PUBKEY")]
    facilitator: Option<String>,
    /// Unix seconds the first period starts; 0 (the default) = when the subscription lands.
    #[arg(long, default_value_t = 0)]
    start_ts: i64,
    /// Unix seconds after which nothing can be pulled; default a year from now. 0 = never,
    /// only with a --start-ts.
    #[arg(long)]
    expiry_ts: Option<i64>,
    /// Tells apart the subscriptions between one delegator and one payee; default the first
    /// free one from 1.
    #[arg(long)]
    nonce: Option<u64>,
    /// The delegator (JSON keypair file): the payer agent's live owner or agent wallet, whose
    /// token account pays. On the localnet the demo payer's owner when omitted.
    #[arg(long)]
    keypair: Option<String>,
    #[command(flatten)]
    cluster: Cluster,
}

#[derive(Args)]
pub struct ListArgs {
    /// The subscriptions this payer agent (its asset) pays.
    #[arg(long, value_name = "ASSET", conflicts_with_all = ["payee", "facilitator"])]
    payer_agent: Option<String>,
    /// The subscriptions paid to this payee agent (its asset).
    #[arg(long, value_name = "ASSET", conflicts_with = "facilitator")]
    payee: Option<String>,
    /// The subscriptions this facilitator pulls; on the localnet the demo facilitator's when
    /// nothing is given.
    #[arg(long, value_name = "PUBKEY")]
    facilitator: Option<String>,
    #[command(flatten)]
    cluster: Cluster,
}

#[derive(Args)]
pub struct UnsubscribeArgs {
    /// The subscription: its record (as `trust-gate subscriptions` lists it) or its
    /// delegation.
    subscription: String,
    /// Also revoke the delegator's SubscriptionAuthority of the mint, returning its rent too:
    /// this ends every subscription the delegator has in that mint.
    #[arg(long)]
    revoke_authority: bool,
    /// The delegator (JSON keypair file); on the localnet the demo key that subscribed when
    /// omitted.
    #[arg(long)]
    keypair: Option<String>,
    #[command(flatten)]
    cluster: Cluster,
}

/// The demo key whose public key is `wallet`, if any.
fn demo_key(world: &DemoWorld, wallet: &Pubkey) -> Option<Keypair> {
    world
        .keys()
        .into_iter()
        .find(|(_, k)| k.pubkey() == *wallet)
        .map(|(_, k)| k.insecure_clone())
}

/// `value` as `Some`, or on the localnet `demo`, else an error naming `field`.
fn key_or_demo(
    value: Option<&str>,
    field: &str,
    network: Network,
    demo: impl FnOnce(&DemoWorld) -> Pubkey,
) -> Result<Pubkey, String> {
    match value {
        Some(s) => key(field, s),
        None if network == Network::Localnet => Ok(demo(&DemoWorld::new())),
        None => Err(format!("{field} is required off the localnet")),
    }
}

pub async fn subscribe(a: SubscribeArgs) -> Result<(), String> {
    let (rpc, b, network) = a.cluster.open()?;
    if a.amount == 0 {
        return Err("--amount: must be more than 0".into());
    }
    if a.period_secs == 0 || a.period_secs > MAX_PERIOD_SECS {
        return Err(format!(
            "--period-secs: {} is not within 1..={MAX_PERIOD_SECS}",
            a.period_secs
        ));
    }
    let payee = key("--payee", &a.payee)?;
    let payer = key_or_demo(a.payer_agent.as_deref(), "--payer-agent", network, |w| {
        w.payer(3)
            .expect("the demo world has a tier-3 payer")
            .asset()
    })?;
    let facilitator = key_or_demo(a.facilitator.as_deref(), "--facilitator", network, |w| {
        w.facilitator.pubkey()
    })?;
    let signer = signer_or_demo(a.keypair.as_deref(), network, "the delegator", |w| {
        w.payers
            .iter()
            .find(|p| p.asset() == payer)
            .map(|p| p.owner.insecure_clone())
    })?;
    let policy = chain::policy(&rpc, &b.ids, &payer, a.policy_id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "--policy-id: payer agent {payer} has no policy {}",
                a.policy_id
            )
        })?;
    let mint = policy.params.mint;
    let token = chain::mint(&rpc, "the policy's mint", &mint)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("the policy's mint {mint} does not exist on this cluster"))?;
    let now = chain::unix_time(&rpc).await.map_err(|e| e.to_string())?;
    let expiry_ts = match a.expiry_ts {
        Some(0) if a.start_ts == 0 => {
            return Err("--expiry-ts: 0 (never) needs a --start-ts".into());
        }
        Some(t) => t,
        None => now.saturating_add(DEFAULT_LIFE_SECS),
    };
    let mut s = Subscription {
        delegator: signer.pubkey(),
        payer_asset: payer,
        payee_asset: payee,
        facilitator,
        mint,
        token_program: token.token_program,
        policy_id: a.policy_id,
        terms: RecurringTerms {
            nonce: a.nonce.unwrap_or(1),
            amount_per_period: a.amount,
            period_length_s: a.period_secs,
            start_ts: a.start_ts,
            expiry_ts,
        },
    };
    if a.nonce.is_none() {
        s.terms.nonce = pulls::free_nonce(&rpc, &b, &s)
            .await
            .map_err(|e| e.to_string())?;
    }
    let delegation = b.subscription_delegation(&s);
    let record = b.pda.gated_subscription(&delegation);
    let authority = subscriptions::subscription_authority(&s.delegator, &mint);
    let before = rent_of(&rpc, &[record, delegation, authority]).await?;
    println!(
        "Subscribing payer agent {payer} (policy {}) to payee {payee}: {} of mint {mint} every {} s, pulled by facilitator {facilitator}, {}",
        a.policy_id,
        a.amount,
        a.period_secs,
        if expiry_ts == 0 {
            "never expiring".to_string()
        } else {
            format!("until {expiry_ts} (unix)")
        },
    );
    send(&rpc, &[b.subscribe(&s)], &[&signer], "Subscribed").await?;
    let rent = rent_of(&rpc, &[record, delegation, authority]).await? - before;
    println!("  record {record}");
    println!("  delegation {delegation} (nonce {})", s.terms.nonce);
    println!(
        "  rent paid: {rent} lamports (`trust-gate unsubscribe --revoke-authority` returns it)"
    );
    Ok(())
}

/// The lamports the accounts at `keys` hold.
async fn rent_of(rpc: &RpcClient, keys: &[Pubkey]) -> Result<u64, String> {
    let accounts = chain::accounts(rpc, keys)
        .await
        .map_err(|e| e.to_string())?;
    Ok(accounts.iter().flatten().map(|a| a.lamports).sum())
}

pub async fn list(a: ListArgs) -> Result<(), String> {
    let (rpc, b, network) = a.cluster.open()?;
    let by = match (&a.payer_agent, &a.payee, &a.facilitator) {
        (Some(p), _, _) => SubscribedBy::Payer(key("--payer-agent", p)?),
        (None, Some(p), _) => SubscribedBy::Payee(key("--payee", p)?),
        (None, None, f) => SubscribedBy::Facilitator(key_or_demo(
            f.as_deref(),
            "--facilitator (or --payer-agent or --payee)",
            network,
            |w| w.facilitator.pubkey(),
        )?),
    };
    let found = pulls::list(&rpc, &b.ids.gate, by)
        .await
        .map_err(|e| e.to_string())?;
    let now = chain::unix_time(&rpc).await.map_err(|e| e.to_string())?;
    println!("{} subscription(s) at {now} (unix)", found.len());
    for l in &found {
        println!("{}", line(l, now));
    }
    Ok(())
}

/// One subscription, for people: who pays whom, the terms, this period's use and the next
/// pull.
fn line(l: &SubscriptionListing, now: i64) -> String {
    let r = &l.record;
    let head = format!(
        "  {}  payer {} -> payee {}  facilitator {}  policy {}",
        l.address, r.payer_asset, r.payee_asset, r.facilitator, r.policy_id
    );
    let Some(d) = &l.delegation else {
        return format!("{head}  revoked (delegation {} gone)", r.delegation);
    };
    if l.standing(now) == Standing::Revoked {
        return format!(
            "{head}  revoked (the delegator's SubscriptionAuthority no longer backs delegation {})",
            r.delegation
        );
    }
    let (start, pulled) = d.period_at(now);
    let next = match (l.due(now), l.next_pull(now)) {
        (Some(amount), _) => format!("next pull: {amount} due now"),
        (None, Some(t)) => format!("next pull: at {t} (in {} s)", t - now),
        (None, None) => "no further pull (expired)".to_string(),
    };
    let expiry = if d.expiry_ts == 0 {
        "never expires".to_string()
    } else {
        format!("expires {}", d.expiry_ts)
    };
    format!(
        "{head}\n    {} of mint {} every {} s; this period (from {start}): pulled {pulled} of {}; {next}; {expiry}; delegation {} delegator {}",
        d.amount_per_period, d.mint, d.period_length_s, d.amount_per_period, r.delegation, r.delegator,
    )
}

pub async fn unsubscribe(a: UnsubscribeArgs) -> Result<(), String> {
    let (rpc, b, network) = a.cluster.open()?;
    let given = key("subscription", &a.subscription)?;
    let found = pulls::find(&rpc, &b.ids, &given)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "subscription: {given} is neither a gated subscription's record nor its delegation on this cluster"
            )
        })?;
    let (address, record) = (found.address, found.record);
    let delegator = record.delegator;
    let signer = signer_or_demo(a.keypair.as_deref(), network, "the delegator", |w| {
        demo_key(w, &delegator)
    })?;
    if signer.pubkey() != delegator {
        return Err(format!(
            "--keypair: {} is not the subscription's delegator {delegator}",
            signer.pubkey()
        ));
    }
    // What comes back: the record's and the delegation's rent, and the authority's with it.
    let mut rent = found.rent;
    let mut ixs = vec![b.unsubscribe(&record)];
    if a.revoke_authority {
        let mint = found.delegation.map(|d| d.mint).ok_or_else(|| {
            "--revoke-authority: the delegation is gone, so its mint is unknown".to_string()
        })?;
        let token = chain::mint(&rpc, "the delegation's mint", &mint)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("the delegation's mint {mint} does not exist"))?;
        let authority = subscriptions::subscription_authority(&delegator, &mint);
        rent += rent_of(&rpc, &[authority]).await?;
        ixs.push(subscriptions::revoke_subscription_authority(
            &delegator,
            &mint,
            token.token_program,
        ));
    }
    println!("Unsubscribing {address} (delegation {})", record.delegation);
    send(&rpc, &ixs, &[&signer], "Unsubscribed").await?;
    println!("  rent returned to {delegator}: {rent} lamports");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_client::pulls::{Backing, GatedSubscription};
    use trust_gate_client::subscriptions::RecurringDelegation;

    fn listing(pulled: u64, delegation: bool) -> SubscriptionListing {
        let k = Pubkey::new_unique;
        SubscriptionListing {
            address: k(),
            record: GatedSubscription {
                payer_asset: k(),
                payee_asset: k(),
                facilitator: k(),
                delegation: k(),
                delegator: k(),
                policy_id: 1,
                delegate_bump: 255,
                created_at: 0,
                bump: 255,
            },
            delegation: delegation.then(|| RecurringDelegation {
                delegator: k(),
                delegatee: k(),
                payer: k(),
                init_id: 1,
                subscription_authority: k(),
                mint: k(),
                current_period_start_ts: 1_000,
                period_length_s: 100,
                expiry_ts: 0,
                amount_per_period: 50,
                amount_pulled_in_period: pulled,
            }),
            backing: delegation.then_some(Backing::Current),
            rent: 0,
        }
    }

    #[test]
    fn a_line_shows_the_periods_use_and_the_next_pull() {
        let due = line(&listing(0, true), 1_010);
        assert!(due.contains("pulled 0 of 50"), "{due}");
        assert!(due.contains("next pull: 50 due now"), "{due}");
        let pulled = line(&listing(50, true), 1_010);
        assert!(pulled.contains("pulled 50 of 50"), "{pulled}");
        assert!(pulled.contains("next pull: at 1100 (in 90 s)"), "{pulled}");
        assert!(pulled.contains("never expires"), "{pulled}");
        // A later period starts afresh.
        let later = line(&listing(50, true), 1_150);
        assert!(later.contains("(from 1100): pulled 0 of 50"), "{later}");
        let revoked = line(&listing(0, false), 1_010);
        assert!(revoked.contains("revoked (delegation"), "{revoked}");
        let closed = SubscriptionListing {
            backing: Some(Backing::Closed),
            ..listing(0, true)
        };
        let closed = line(&closed, 1_010);
        assert!(closed.contains("no longer backs"), "{closed}");
        assert!(!closed.contains("due now"), "{closed}");
    }
}
