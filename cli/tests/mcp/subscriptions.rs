//! Gated subscriptions through rmcp's client over streamable HTTP (docs/subscriptions.md), on
//! a seeded localnet (its Subscriptions stand-in) with the demo facilitator's crank: the demo
//! subscriber's subscription is listed due with nothing pulled; one round of a facilitator
//! that pulls takes the period's amount, and the list then shows it pulled and the next pull
//! a period after the period's start. The tier-3 payer's owner subscribes its agent to the
//! demo service with `gate_subscribe`, sees it listed, and cancels it with
//! `gate_unsubscribe`: its SOL balance ends where it began less the two fees (and the
//! authority's rent, which stays). A stranger's unsubscribe, a stranger's subscribe and bad
//! terms are refused by name, nothing sent.

use crate::harness::{self, err, http_client, ok};
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use trust_gate_client::instructions::Subscription;
use trust_gate_client::json::{Amount, Key};
use trust_gate_client::pulls::Standing;
use trust_gate_client::subscriptions::{self, RecurringTerms};
use trust_gate_client::token::TokenProgram;
use trust_gate_mcp::tools::subscriptions::{
    ListedBy, SubscribeReply, SubscriptionList, SubscriptionRow, UnsubscribeReply,
};
use trust_gate_migrations::demo;

const DAY: i64 = demo::SUBSCRIPTION_PERIOD_SECS as i64;

/// A typed result of a successful call.
async fn typed<T: serde::de::DeserializeOwned>(c: &harness::Client, tool: &str, args: Value) -> T {
    let v = ok(c, tool, args).await;
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{tool}: {e}: {v:#}"))
}

/// The subscriptions listed by `selector` (`{"payer_agent": ...}`, ...).
async fn listed(c: &harness::Client, selector: Value) -> SubscriptionList {
    typed(c, "gate_list_subscriptions", selector).await
}

/// The row of `delegation` in `list`.
fn row_of<'a>(list: &'a SubscriptionList, delegation: &Pubkey) -> Option<&'a SubscriptionRow> {
    list.subscriptions
        .iter()
        .find(|r| r.delegation == Key(*delegation))
}

/// The fee `signature`'s transaction paid, as the chain recorded it.
async fn fee(env: &crate::fixture::Env, signature: &str) -> u64 {
    let sig: Signature = signature.parse().unwrap();
    let tx = env
        .rpc
        .get_transaction(
            &sig,
            solana_transaction_status_client_types::UiTransactionEncoding::Base64,
        )
        .await
        .unwrap();
    tx.transaction.meta.expect("the transaction's meta").fee
}

async fn lamports(env: &crate::fixture::Env, key: &Pubkey) -> u64 {
    env.rpc.get_balance(key).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_are_listed_pulled_made_and_cancelled_through_the_tools() {
    let w = harness::world("subscriptions").await;
    let env = &w.env;
    let world = &env.world;
    let subscriber = world.subscriber();
    let payer = world.payer(3).unwrap();
    let service = &world.service;
    let mint = world.mint();

    // One server signing as the tier-3 payer's owner, one as a stranger (the harness's
    // funded key); both default to the demo facilitator, as `trust-gate up` sets it.
    let server_of = |key: &Keypair| {
        let mut vars = w.vars(false);
        vars.insert("KEYPAIR_B58".into(), key.to_base58_string());
        vars.insert(
            "MCP_DEFAULT_FACILITATOR".into(),
            world.facilitator.pubkey().to_string(),
        );
        w.config(vars)
    };
    let owner_server = w.http(server_of(&payer.owner)).await;
    let stranger_server = w.http(server_of(&w.signer)).await;
    let as_owner = http_client(&owner_server).await;
    let as_stranger = http_client(&stranger_server).await;

    // The demo subscription, as seeded: active, due now, nothing pulled in its first period.
    let demo_delegation = env.b.subscription_delegation(&world.subscription(0));
    let by_payer = json!({"payer_agent": subscriber.asset().to_string()});
    let list = listed(&as_stranger, by_payer.clone()).await;
    assert_eq!(
        (list.by, list.key, list.subscriptions.len()),
        (ListedBy::Payer, Key(subscriber.asset()), 1)
    );
    let row = row_of(&list, &demo_delegation).expect("the demo subscription");
    assert_eq!(
        row.address,
        Key(env.b.pda.gated_subscription(&demo_delegation))
    );
    assert_eq!(
        (
            row.payer_agent,
            row.payee_agent,
            row.facilitator,
            row.delegator,
            row.policy_id
        ),
        (
            Key(subscriber.asset()),
            Key(service.asset()),
            Key(world.facilitator.pubkey()),
            Key(subscriber.owner.pubkey()),
            demo::POLICY_ID
        )
    );
    assert_eq!(row.state, Standing::Active);
    assert_eq!(
        (row.mint, row.amount_per_period, row.period_secs),
        (
            Some(Key(mint)),
            Some(Amount(demo::SUBSCRIPTION_AMOUNT)),
            Some(demo::SUBSCRIPTION_PERIOD_SECS)
        )
    );
    assert_eq!(row.pulled_in_period, Some(Amount(0)));
    assert_eq!(
        (row.due_now, row.due_amount),
        (true, Some(Amount(demo::SUBSCRIPTION_AMOUNT)))
    );
    let start = row.period_start.expect("this period's start");
    assert!(
        start <= list.now && list.now < start + DAY,
        "{start} {}",
        list.now
    );
    assert_eq!(row.next_pull, Some(start), "due now: its period's start");
    // Seeded to expire a year after the clock it read before its transaction landed (the
    // first period starts on landing).
    let expiry = row.expiry.expect("the demo subscription expires");
    let life = demo::SUBSCRIPTION_LIFE_SECS;
    assert!(
        (start + life - 60..=start + life).contains(&expiry),
        "{expiry} {start}"
    );

    // Found by its payee and by its facilitator too.
    for (selector, by) in [
        (
            json!({"payee_agent": service.asset().to_string()}),
            ListedBy::Payee,
        ),
        (
            json!({"facilitator": world.facilitator.pubkey().to_string()}),
            ListedBy::Facilitator,
        ),
    ] {
        let l = listed(&as_stranger, selector).await;
        assert_eq!(l.by, by);
        assert!(row_of(&l, &demo_delegation).is_some(), "{by:?}: {l:?}");
    }
    // Exactly one of the three, each refusal naming its field.
    let e = err(
        &as_stranger,
        "gate_list_subscriptions",
        json!({}),
        "input_invalid",
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("payer_agent"),
        "{e}"
    );
    let e = err(
        &as_stranger,
        "gate_list_subscriptions",
        json!({"payer_agent": subscriber.asset().to_string(),
               "facilitator": world.facilitator.pubkey().to_string()}),
        "input_invalid",
    )
    .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid facilitator"),
        "{e}"
    );

    // One round of a facilitator that pulls: the period's whole amount, once.
    let mut config = env.facilitator_config();
    config.pull_subscriptions = true;
    let crank = trust_gate_facilitator::start(config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let source = TokenProgram::SplToken.associated_account(&subscriber.owner.pubkey(), &mint);
    let held = env.token_balance(&source).await;
    let round = crank.facilitator.reclaim_once().await.unwrap();
    assert_eq!((round.pulled, round.failures.len()), (1, 0), "{round:?}");
    assert_eq!(
        env.token_balance(&source).await,
        held - demo::SUBSCRIPTION_AMOUNT
    );
    // Listed again: 1.00 of 1.00 pulled this period, nothing due, the next pull a day after
    // the period's start.
    let list = listed(&as_stranger, by_payer).await;
    let row = row_of(&list, &demo_delegation).unwrap();
    assert_eq!(row.period_start, Some(start));
    assert_eq!(
        (row.pulled_in_period, row.amount_per_period),
        (
            Some(Amount(demo::SUBSCRIPTION_AMOUNT)),
            Some(Amount(demo::SUBSCRIPTION_AMOUNT))
        )
    );
    assert_eq!((row.due_now, row.due_amount), (false, None));
    assert_eq!(row.next_pull, Some(start + DAY));
    assert_eq!(row.state, Standing::Active);

    // The tier-3 payer's owner subscribes its agent to the demo service: 0.25 an hour, nonce
    // 5, the policy's mint and the demo facilitator by default.
    let now = trust_gate_client::chain::unix_time(&env.rpc).await.unwrap();
    let owner = payer.owner.pubkey();
    let terms = json!({
        "payer_agent": payer.asset().to_string(),
        "payee_agent": service.asset().to_string(),
        "policy_id": demo::POLICY_ID,
        "amount_per_period": "250000",
        "period_secs": 3600,
        "expiry_ts": now + 30 * DAY,
        "nonce": 5,
    });
    // Bad terms and a stranger are refused by name before anything is sent.
    for (field, value) in [
        ("amount_per_period", json!("0")),
        ("period_secs", json!(0)),
        ("period_secs", json!(subscriptions::MAX_PERIOD_SECS + 1)),
        ("expiry_ts", json!(now - 10)),
        ("start_ts", json!(now - 3600)),
        ("mint", json!(world.metered_mint().to_string())),
        ("payee_agent", json!(mint.to_string())),
    ] {
        let mut bad = terms.clone();
        bad[field] = value;
        let e = err(&as_owner, "gate_subscribe", bad, "input_invalid").await;
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("invalid {field}")),
            "{field}: {e}"
        );
    }
    let e = err(
        &as_stranger,
        "gate_subscribe",
        terms.clone(),
        "auth_required",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("owner"), "{e}");

    let expected = Subscription {
        delegator: owner,
        payer_asset: payer.asset(),
        payee_asset: service.asset(),
        facilitator: world.facilitator.pubkey(),
        mint,
        token_program: TokenProgram::SplToken,
        policy_id: demo::POLICY_ID,
        terms: RecurringTerms {
            nonce: 5,
            amount_per_period: 250_000,
            period_length_s: 3600,
            start_ts: 0,
            expiry_ts: 0,
        },
    };
    let delegation = env.b.subscription_delegation(&expected);
    let record = env.b.pda.gated_subscription(&delegation);
    let authority = subscriptions::subscription_authority(&owner, &mint);
    // The owner has no SubscriptionAuthority for the mint yet: this subscribe creates it.
    assert_eq!(lamports(env, &authority).await, 0);
    let before = lamports(env, &owner).await;
    let made: SubscribeReply = typed(&as_owner, "gate_subscribe", terms.clone()).await;
    assert!(made.created, "{made:?}");
    assert_eq!(made.nonce, 5);
    let s = &made.subscription;
    assert_eq!(
        (s.address, s.delegation, s.delegator, s.facilitator, s.mint),
        (
            Key(record),
            Key(delegation),
            Key(owner),
            Key(world.facilitator.pubkey()),
            Some(Key(mint))
        )
    );
    assert_eq!(s.state, Standing::Active);
    assert_eq!(
        (s.amount_per_period, s.period_secs, s.pulled_in_period),
        (Some(Amount(250_000)), Some(3600), Some(Amount(0)))
    );
    assert_eq!(
        (s.due_now, s.due_amount),
        (true, Some(Amount(250_000))),
        "its first period starts now"
    );
    assert_eq!(s.expiry, Some(now + 30 * DAY));
    // The rent it reports is what the accounts hold, and what left the owner with the fee.
    let held_rent = lamports(env, &delegation).await + lamports(env, &record).await;
    let authority_rent = lamports(env, &authority).await;
    assert!(held_rent > 0 && authority_rent > 0);
    assert!(made.authority_created);
    assert_eq!(made.rent_paid, Amount(held_rent + authority_rent));
    let subscribe_fee = fee(env, made.signature.as_deref().expect("sent")).await;
    let after_subscribe = lamports(env, &owner).await;
    assert_eq!(
        after_subscribe,
        before - held_rent - authority_rent - subscribe_fee
    );

    // Asked again with its nonce: returned as it is, nothing sent.
    let again: SubscribeReply = typed(&as_owner, "gate_subscribe", terms.clone()).await;
    assert_eq!(
        (
            again.created,
            again.matches_request,
            again.signature.is_none()
        ),
        (false, Some(true), true)
    );
    assert_eq!(again.subscription.address, Key(record));
    assert_eq!(lamports(env, &owner).await, after_subscribe);
    // Listed by its payer and, beside the demo's, by its payee.
    let mine = listed(
        &as_stranger,
        json!({"payer_agent": payer.asset().to_string()}),
    )
    .await;
    assert_eq!(mine.subscriptions.len(), 1, "{mine:?}");
    assert_eq!(mine.subscriptions[0].address, Key(record));
    let to_service = listed(
        &as_stranger,
        json!({"payee_agent": service.asset().to_string()}),
    )
    .await;
    assert!(row_of(&to_service, &delegation).is_some());
    assert!(row_of(&to_service, &demo_delegation).is_some());

    // Only its delegator unsubscribes: the stranger is refused by name, nothing sent.
    let e = err(
        &as_stranger,
        "gate_unsubscribe",
        json!({"subscription": record.to_string()}),
        "auth_required",
    )
    .await;
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("delegator") && message.contains(&owner.to_string()),
        "{e}"
    );
    assert!(lamports(env, &record).await > 0, "the record stands");

    // The delegator unsubscribes by its delegation: both rents back; the authority stays (it
    // serves the owner's other subscriptions of the mint), so its rent does not come back.
    let gone: UnsubscribeReply = typed(
        &as_owner,
        "gate_unsubscribe",
        json!({"delegation": delegation.to_string()}),
    )
    .await;
    assert_eq!(
        (gone.subscription, gone.delegation, gone.delegator),
        (Key(record), Key(delegation), Key(owner))
    );
    assert!(gone.delegation_revoked);
    assert_eq!(gone.rent_returned, Amount(held_rent));
    let unsubscribe_fee = fee(env, &gone.signature).await;
    assert_eq!(
        lamports(env, &owner).await,
        before - subscribe_fee - unsubscribe_fee - authority_rent,
        "the two rents came back"
    );
    assert_eq!(
        (
            lamports(env, &delegation).await,
            lamports(env, &record).await
        ),
        (0, 0)
    );
    assert_eq!(lamports(env, &authority).await, authority_rent);
    let mine = listed(
        &as_stranger,
        json!({"payer_agent": payer.asset().to_string()}),
    )
    .await;
    assert!(mine.subscriptions.is_empty(), "{mine:?}");
    // Gone: a second unsubscribe finds nothing.
    err(
        &as_owner,
        "gate_unsubscribe",
        json!({"subscription": record.to_string()}),
        "not_found",
    )
    .await;

    // Without a nonce: the lowest not in use, 1, then 2 beside it; each a subscription of its
    // own, each cancelled by its record.
    let mut fresh = terms.clone();
    fresh.as_object_mut().unwrap().remove("nonce");
    let first: SubscribeReply = typed(&as_owner, "gate_subscribe", fresh.clone()).await;
    let second: SubscribeReply = typed(&as_owner, "gate_subscribe", fresh).await;
    assert_eq!(
        (first.nonce, first.created, second.nonce, second.created),
        (1, true, 2, true)
    );
    assert!(!second.authority_created, "the authority stood");
    assert_ne!(first.subscription.address, second.subscription.address);
    let mine = listed(
        &as_stranger,
        json!({"payer_agent": payer.asset().to_string()}),
    )
    .await;
    assert_eq!(mine.subscriptions.len(), 2, "{mine:?}");
    for made in [first, second] {
        let address = made.subscription.address.to_string();
        let gone: UnsubscribeReply = typed(
            &as_owner,
            "gate_unsubscribe",
            json!({"subscription": address}),
        )
        .await;
        assert_eq!(gone.subscription, made.subscription.address);
        assert_eq!(gone.rent_returned, made.rent_paid, "the authority stood");
    }
}
