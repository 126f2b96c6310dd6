//! Gated subscriptions over the localnet's JSON-RPC, on its Subscriptions stand-in
//! (docs/subscriptions.md): the demo payer subscribes to the demo service with the SDK's one
//! `subscribe`, the subscription is listed by facilitator, payer and payee with its
//! delegation and when a pull is due, the demo facilitator's pull lands as a v0 transaction
//! with its lookup tables (the service paid, the payer's policy counting it, the receipt
//! written), and the cancel returns the rents.

use crate::fixture::seeded;
use solana_sdk::signature::Signer;
use trust_gate_client::instructions::{Attestations, FeedbackDetails, Subscription};
use trust_gate_client::pulls::{self, SubscribedBy};
use trust_gate_client::settle::{self, TokenProgram};
use trust_gate_client::subscriptions::RecurringTerms;
use trust_gate_client::{chain, receipts};
use trust_gate_migrations::demo;

const DAY: i64 = 86_400;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_subscription_is_set_up_listed_pulled_and_cancelled_over_json_rpc() {
    let env = seeded().await;
    let payer = env.world.payer(3).unwrap();
    let service = &env.world.service;
    let facilitator = &env.world.facilitator;
    let mint = env.world.mint.pubkey();
    let owner = payer.owner.insecure_clone();
    let now = chain::unix_time(&env.rpc).await.unwrap();
    let s = Subscription {
        delegator: owner.pubkey(),
        payer_asset: payer.asset.pubkey(),
        payee_asset: service.asset.pubkey(),
        facilitator: facilitator.pubkey(),
        mint,
        token_program: TokenProgram::SplToken,
        policy_id: demo::POLICY_ID,
        terms: RecurringTerms {
            nonce: 1,
            amount_per_period: 1_000_000,
            period_length_s: DAY as u64,
            start_ts: 0,
            expiry_ts: now + 30 * DAY,
        },
    };
    let before = env.rpc.get_balance(&owner.pubkey()).await.unwrap();
    env.send(&[env.b.subscribe(&s)], &[&owner]).await.unwrap();

    // The facilitator pulls the demo world's subscription too (the subscriber's), older.
    let gate = env.b.ids.gate;
    let delegation = env.b.subscription_delegation(&s);
    let mine = pulls::list(
        &env.rpc,
        &gate,
        SubscribedBy::Facilitator(facilitator.pubkey()),
    )
    .await
    .unwrap();
    let demo_delegation = env.b.subscription_delegation(&env.world.subscription(0));
    let delegations: Vec<_> = mine.iter().map(|l| l.record.delegation).collect();
    assert_eq!(delegations, [demo_delegation, delegation], "{mine:?}");
    let listing = &mine[1];
    let d = listing.delegation.expect("the delegation reads");
    assert_eq!(
        (d.delegator, d.amount_per_period),
        (owner.pubkey(), 1_000_000)
    );
    let now = chain::unix_time(&env.rpc).await.unwrap();
    assert_eq!(listing.due(now), Some(1_000_000));
    for by in [
        SubscribedBy::Payer(payer.asset.pubkey()),
        SubscribedBy::Payee(service.asset.pubkey()),
    ] {
        let found = pulls::list(&env.rpc, &gate, by).await.unwrap();
        assert!(found.iter().any(|l| l.address == listing.address), "{by:?}");
        let of = |l: &pulls::SubscriptionListing| match by {
            SubscribedBy::Payer(p) => l.record.payer_asset == p,
            SubscribedBy::Payee(p) => l.record.payee_asset == p,
            SubscribedBy::Facilitator(f) => l.record.facilitator == f,
        };
        assert!(found.iter().all(of), "{by:?}: {found:?}");
    }

    // The facilitator's pull, as its crank sends it.
    let destination = TokenProgram::SplToken.associated_account(&service.owner.pubkey(), &mint);
    let paid_before = env.token_balance(&destination).await;
    let pull = env.b.gate_pull(
        &listing.record,
        &d,
        &destination,
        TokenProgram::SplToken,
        &env.collection,
        1_000_000,
        FeedbackDetails {
            score: 90,
            tag1: "x402".into(),
            tag2: "subscription".into(),
            ..FeedbackDetails::default()
        },
        Attestations::default(),
    );
    let blockhash = env.rpc.get_latest_blockhash().await.unwrap();
    let tx = settle::transaction(
        &facilitator.pubkey(),
        &[pull],
        &env.tables().await,
        blockhash,
        &[facilitator],
    )
    .unwrap();
    settle::send(&env.rpc, &tx).await.unwrap();
    assert_eq!(
        env.token_balance(&destination).await,
        paid_before + 1_000_000
    );
    let receipt_id = gate::subscription::payment_id_hash(&listing.record.delegation, &d);
    let log = env.b.pda.feedback_log(&facilitator.pubkey(), &receipt_id);
    let receipt = receipts::Receipt::from_account_data(
        &chain::account(&env.rpc, &log).await.unwrap().unwrap().data,
    )
    .expect("the pull's receipt");
    assert_eq!(
        (receipt.amount, receipt.payer_wallet),
        (1_000_000, owner.pubkey())
    );
    let listed = pulls::list(
        &env.rpc,
        &gate,
        SubscribedBy::Facilitator(facilitator.pubkey()),
    )
    .await
    .unwrap();
    let listed = listed
        .into_iter()
        .find(|l| l.record.delegation == delegation)
        .unwrap();
    let now = chain::unix_time(&env.rpc).await.unwrap();
    assert_eq!(listed.due(now), None, "pulled for this period");
    let next = listed.next_pull(now).unwrap();
    assert!(next > now && next <= now + DAY, "{next} vs {now}");

    // The cancel: the delegation revoked, the record closed, both rents back; the
    // authority's too once revoked.
    env.send(&[env.b.unsubscribe(&listed.record)], &[&owner])
        .await
        .unwrap();
    let revoke = trust_gate_client::subscriptions::revoke_subscription_authority(
        &owner.pubkey(),
        &mint,
        TokenProgram::SplToken,
    );
    env.send(&[revoke], &[&owner]).await.unwrap();
    assert_eq!(env.rpc.get_balance(&owner.pubkey()).await.unwrap(), before);
    let none = pulls::list(
        &env.rpc,
        &gate,
        SubscribedBy::Facilitator(facilitator.pubkey()),
    )
    .await
    .unwrap();
    assert!(none.iter().all(|l| l.record.delegation != delegation));
}
