//! The facilitator's crank pulls gated subscriptions (docs/subscriptions.md), over the
//! localnet's JSON-RPC on its Subscriptions stand-in: with `pull_subscriptions` on, a round
//! pulls a subscription whose pull is due (the period's whole amount), which `GET /payments`
//! and `/receipt` then show; the next round pulls nothing more that period; the payer's kill
//! switch stops the next period's pull, named in the round's failures, and its release lets
//! it through; once unsubscribed there is nothing to pull. Off (the default), the crank pulls
//! nothing.

use crate::fixture::seeded;
use serde_json::Value;
use solana_sdk::signature::Signer;
use trust_gate_client::chain;
use trust_gate_client::decode::hex;
use trust_gate_client::instructions::Subscription;
use trust_gate_client::pulls::{self, SubscribedBy};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::subscriptions::RecurringTerms;
use trust_gate_migrations::demo;

const DAY: u64 = 86_400;
const PER_PERIOD: u64 = 1_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crank_pulls_what_is_due_and_the_kill_switch_stops_it() {
    let env = seeded().await;
    let payer = env.world.payer(3).unwrap();
    let service = &env.world.service;
    let owner = payer.owner.insecure_clone();
    let mint = env.world.mint.pubkey();
    let now = chain::unix_time(&env.rpc).await.unwrap();
    let s = Subscription {
        delegator: owner.pubkey(),
        payer_asset: payer.asset.pubkey(),
        payee_asset: service.asset.pubkey(),
        facilitator: env.world.facilitator.pubkey(),
        mint,
        token_program: TokenProgram::SplToken,
        policy_id: demo::POLICY_ID,
        terms: RecurringTerms {
            nonce: 7,
            amount_per_period: PER_PERIOD,
            period_length_s: DAY,
            start_ts: 0,
            expiry_ts: now + 30 * DAY as i64,
        },
    };
    env.send(&[env.b.subscribe(&s)], &[&owner]).await.unwrap();
    let delegation = env.b.subscription_delegation(&s);

    // Off by default: nothing pulled.
    let loopback: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let off = trust_gate_facilitator::start(env.facilitator_config(), loopback)
        .await
        .unwrap();
    let round = off.facilitator.reclaim_once().await.unwrap();
    assert_eq!(round.pulled, 0, "{round:?}");

    let mut config = env.facilitator_config();
    config.pull_subscriptions = true;
    let on = trust_gate_facilitator::start(config, loopback)
        .await
        .unwrap();
    let crank = &on.facilitator;
    // The payer's own token account: the service is paid by the demo's subscriber too.
    let source = TokenProgram::SplToken.associated_account(&owner.pubkey(), &mint);
    let held_before = env.token_balance(&source).await;
    let d = listed(&env, &delegation).await.unwrap().delegation.unwrap();
    let id = gate::subscription::payment_id_hash(&delegation, &d);

    // This one and the demo world's (the subscriber's).
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!((round.pulled, round.failures.len()), (2, 0), "{round:?}");
    assert_eq!(env.token_balance(&source).await, held_before - PER_PERIOD);

    // GET /payments lists the pull under its payer, with its transaction; /receipt answers.
    let http = reqwest::Client::new();
    let payments: Value = http
        .get(format!(
            "{}/payments?payer={}",
            on.url(),
            payer.asset.pubkey()
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let pulled = payments["payments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["paymentIdHash"] == hex(&id))
        .unwrap_or_else(|| panic!("the pull in {payments}"));
    assert!(pulled["transaction"].is_string(), "{pulled}");
    let receipt: Value = http
        .get(format!("{}/receipt/{}", on.url(), hex(&id)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(receipt["exists"], true, "{receipt}");
    assert_eq!(receipt["value"], PER_PERIOD.to_string(), "{receipt}");

    // Pulled for this period: nothing more.
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(round.pulled, 0, "{round:?}");

    // The next period, with the payer's kill switch engaged: refused by name, nothing moves.
    env.localnet.warp(DAY).await.unwrap();
    let pause = env
        .b
        .set_killswitch(&owner.pubkey(), &[], &payer.asset.pubkey(), true);
    env.send(&[pause], &[&owner]).await.unwrap();
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(round.pulled, 1, "the subscriber's alone: {round:?}");
    assert!(
        round
            .failures
            .iter()
            .any(|f| f.contains("KillSwitchEngaged")),
        "{round:?}"
    );
    assert_eq!(env.token_balance(&source).await, held_before - PER_PERIOD);
    let release = env
        .b
        .set_killswitch(&owner.pubkey(), &[], &payer.asset.pubkey(), false);
    env.send(&[release], &[&owner]).await.unwrap();
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(round.pulled, 1, "{round:?}");
    assert_eq!(
        env.token_balance(&source).await,
        held_before - 2 * PER_PERIOD
    );

    // Unsubscribed: nothing left to pull.
    let record = listed(&env, &delegation).await.unwrap().record;
    env.send(&[env.b.unsubscribe(&record)], &[&owner])
        .await
        .unwrap();
    assert!(listed(&env, &delegation).await.is_none());
    env.localnet.warp(DAY).await.unwrap();
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(round.pulled, 1, "the subscriber's alone: {round:?}");
}

/// The demo facilitator's subscription of `delegation`, as listed now.
async fn listed(
    env: &crate::fixture::Env,
    delegation: &solana_sdk::pubkey::Pubkey,
) -> Option<pulls::SubscriptionListing> {
    let facilitator = SubscribedBy::Facilitator(env.world.facilitator.pubkey());
    pulls::list(&env.rpc, &env.b.ids.gate, facilitator)
        .await
        .unwrap()
        .into_iter()
        .find(|l| l.record.delegation == *delegation)
}
