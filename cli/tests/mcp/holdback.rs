//! The holdback through rmcp's client over streamable HTTP (docs/holdback.md), against the
//! facilitator and a demo of the tier-1 payee on a seeded localnet: three MCP servers, each
//! signing as one party. The payer's `gate_pay` settles with a share held back and says under
//! which terms; `gate_list_payer_holdbacks` and `gate_list_payee_holdbacks` list the payment
//! (held); the payee's `gate_refund_holdback` gives the share back; a second payment, disputed
//! by its payer, is upheld by the arbiter's `gate_arbitrate_holdback`. Each move shows the new
//! state and moves the tokens; called again it changes nothing; the wrong signer, a share not
//! disputed and one already paid out are refused by name.

use crate::harness::{self, err, http_client, ok};
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use trust_gate_client::holdback::HoldStatus;
use trust_gate_client::json::{Amount, Key};
use trust_gate_client::settle;
use trust_gate_client::token::TokenProgram;
use trust_gate_mcp::tools::holdback::{HoldbackList, HoldbackMove, Side};
use trust_gate_mcp::tools::pay::{HoldbackTermsView, PayResult};
use trust_gate_migrations::demo;

/// The demo of the tier-1 payee that accepts a holdback, charging under the holdback payer's
/// holdback policy (as the services suite's `held_demo`).
async fn held_demo(facilitator_url: &str) -> trust_gate_demo::Server {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config =
        trust_gate_demo::DemoConfig::held_service(facilitator_url, &format!("http://{addr}"));
    trust_gate_demo::start(config, addr).await.unwrap()
}

/// Waits until `key` holds lamports (requestAirdrop answers before the transfer lands).
async fn funded(env: &crate::fixture::Env, key: &Pubkey) {
    env.rpc.request_airdrop(key, 1_000_000_000).await.unwrap();
    for _ in 0..100 {
        if env.rpc.get_balance(key).await.unwrap_or(0) > 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{key} was not funded");
}

/// A typed result of a successful call.
async fn typed<T: serde::de::DeserializeOwned>(c: &harness::Client, tool: &str, args: Value) -> T {
    let v = ok(c, tool, args).await;
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{tool}: {e}: {v:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_payments_are_listed_refunded_and_arbitrated_through_the_tools() {
    let w = harness::world("holdback").await;
    let env = &w.env;
    let world = &env.world;
    let payer = world.holdback_payer();
    let payee = &world.held_service;
    let (facilitator, _demo) = env.services(demo::POLICY_ID, demo::METERED_POLICY_ID).await;
    let held = held_demo(&facilitator.url()).await;
    let held_host = held.url().trim_start_matches("http://").to_string();
    // The payee's owner and the arbiter pay their moves' fees.
    funded(env, &payee.owner.pubkey()).await;
    funded(env, &world.arbiter.pubkey()).await;

    // One server per party, each holding that party's key.
    let server_of = |key: &Keypair| {
        let mut vars = w.vars(false);
        vars.insert("KEYPAIR_B58".into(), key.to_base58_string());
        vars.insert("MCP_FACILITATOR_URL".into(), facilitator.url());
        vars.insert(
            "MCP_DEFAULT_FACILITATOR".into(),
            world.facilitator.pubkey().to_string(),
        );
        vars.insert("MCP_PAY_ALLOW".into(), held_host.clone());
        w.config(vars)
    };
    let payer_server = w.http(server_of(&payer.owner)).await;
    let payee_server = w.http(server_of(&payee.owner)).await;
    let arbiter_server = w.http(server_of(&world.arbiter)).await;
    let as_payer = http_client(&payer_server).await;
    let as_payee = http_client(&payee_server).await;
    let as_arbiter = http_client(&arbiter_server).await;

    let mint = world.mint();
    let escrow = env.b.pda.holdback_escrow(&payee.asset(), &mint);
    let term = world.holdback_schedule().terms[1];
    let share = demo::PRICE * u64::from(term.share_bps) / 10_000;
    let payer_token = TokenProgram::SplToken.associated_account(&payer.owner.pubkey(), &mint);
    let pay = json!({
        "url": format!("{}/protected", held.url()),
        "payer_agent": payer.asset().to_string(),
        "max_amount": demo::PRICE.to_string(),
    });

    // Paid with a share held back: the result names the terms, as the challenge stated them.
    let escrow_before = env.token_balance(&escrow).await;
    let paid: PayResult = typed(&as_payer, "gate_pay", pay.clone()).await;
    assert!(paid.paid, "{paid:?}");
    let payment = paid.payment.expect("what was paid");
    let terms: HoldbackTermsView = payment.holdback.expect("the holdback terms");
    assert_eq!(
        (
            terms.payee_tier,
            terms.share_bps,
            terms.hold_seconds,
            terms.held,
            terms.escrow,
            terms.arbiter
        ),
        (
            1,
            term.share_bps,
            term.hold_secs,
            Amount(share),
            Key(escrow),
            Some(Key(world.arbiter.pubkey()))
        )
    );
    let first = payment.payment_id_hash.expect("its payment id hash");
    assert_eq!(env.token_balance(&escrow).await, escrow_before + share);

    // Listed on both sides, held, with its log and amount.
    let by_payer: HoldbackList = typed(
        &as_payer,
        "gate_list_payer_holdbacks",
        json!({"agent_asset": payer.asset().to_string()}),
    )
    .await;
    assert_eq!(by_payer.side, Side::Payer);
    assert!(
        by_payer
            .wallets
            .iter()
            .any(|s| s.role == "owner" && s.wallet == Key(payer.owner.pubkey())),
        "{:?}",
        by_payer.wallets
    );
    let row = &by_payer.held[0];
    assert_eq!(row.payment_id_hash.to_string(), first, "newest first");
    assert_eq!(
        (row.amount, row.holdback.held, row.holdback.state),
        (Amount(demo::PRICE), Amount(share), HoldStatus::Held)
    );
    let log = env.b.pda.feedback_log(
        &world.facilitator.pubkey(),
        &trust_gate_client::decode::parse_hex32("hash", &first).unwrap(),
    );
    assert_eq!(row.log, Key(log));
    assert_eq!(
        row.holdback.hold_until,
        row.created_at + i64::from(term.hold_secs)
    );
    assert!(!row.releasable, "within its hold");
    let by_payee: HoldbackList = typed(
        &as_payee,
        "gate_list_payee_holdbacks",
        json!({"agent_asset": payee.asset().to_string()}),
    )
    .await;
    assert_eq!(by_payee.side, Side::Payee);
    assert!(by_payee.wallets.is_empty());
    assert_eq!(by_payee.held[0].log, Key(log));
    assert_eq!(by_payee.held[0].holdback.state, HoldStatus::Held);

    // Only the payee refunds: the payer's server is refused by name, nothing sent.
    let refund = json!({"payment_id_hash": first});
    let e = err(
        &as_payer,
        "gate_refund_holdback",
        refund.clone(),
        "auth_required",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("payee"), "{e}");
    // The payee refunds: the share goes back to the payer's wallet.
    let before = env.token_balance(&payer_token).await;
    let refunded: HoldbackMove = typed(&as_payee, "gate_refund_holdback", refund.clone()).await;
    assert!(refunded.changed);
    assert_eq!(refunded.payment.holdback.state, HoldStatus::Refunded);
    assert_eq!(refunded.paid_to, Some(Key(payer_token)));
    assert!(refunded.signature.is_some());
    assert_eq!(env.token_balance(&payer_token).await, before + share);
    // Again: nothing to do, nothing sent.
    let again: HoldbackMove = typed(&as_payee, "gate_refund_holdback", refund).await;
    assert_eq!((again.changed, again.signature), (false, None));
    assert_eq!(again.payment.holdback.state, HoldStatus::Refunded);
    let listed: HoldbackList = typed(
        &as_payer,
        "gate_list_payer_holdbacks",
        json!({"agent_asset": payer.asset().to_string()}),
    )
    .await;
    assert_eq!(listed.held[0].holdback.state, HoldStatus::Refunded);

    // A second payment, not disputed: there is nothing for the arbiter to decide.
    let second: PayResult = typed(&as_payer, "gate_pay", pay).await;
    let second = second.payment.unwrap().payment_id_hash.unwrap();
    let uphold = json!({"payment_id_hash": second, "uphold": true});
    let e = err(
        &as_arbiter,
        "gate_arbitrate_holdback",
        uphold.clone(),
        "input_invalid",
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("not disputed"),
        "{e}"
    );
    // Its payer disputes it within the hold: disputed, with when the arbitration ends.
    let dispute = settle::Dispute {
        collection: env.collection,
        payment_id_hash: trust_gate_client::decode::parse_hex32("hash", &second).unwrap(),
        payee_asset: payee.asset(),
        reason_hash: [7; 32],
        feedback_uri: String::new(),
    };
    settle::dispute(&env.rpc, &env.b, &world.facilitator, &payer.owner, &dispute)
        .await
        .unwrap();
    let listed: HoldbackList = typed(
        &as_payee,
        "gate_list_payee_holdbacks",
        json!({"agent_asset": payee.asset().to_string()}),
    )
    .await;
    let disputed = listed
        .held
        .iter()
        .find(|r| r.payment_id_hash.to_string() == second)
        .expect("the disputed payment");
    assert_eq!(disputed.holdback.state, HoldStatus::Disputed);
    assert!(disputed.holdback.arbitration_ends.is_some());

    // Only the arbiter decides; it upholds: the share goes back to the payer's wallet.
    let e = err(
        &as_payee,
        "gate_arbitrate_holdback",
        uphold.clone(),
        "auth_required",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("arbiter"), "{e}");
    let before = env.token_balance(&payer_token).await;
    let upheld: HoldbackMove = typed(&as_arbiter, "gate_arbitrate_holdback", uphold.clone()).await;
    assert!(upheld.changed);
    assert_eq!(upheld.payment.holdback.state, HoldStatus::Upheld);
    assert_eq!(upheld.paid_to, Some(Key(payer_token)));
    assert_eq!(env.token_balance(&payer_token).await, before + share);
    let again: HoldbackMove = typed(&as_arbiter, "gate_arbitrate_holdback", uphold).await;
    assert_eq!((again.changed, again.signature), (false, None));
    // Decided once: rejecting it now, or refunding it, is refused by name.
    let e = err(
        &as_arbiter,
        "gate_arbitrate_holdback",
        json!({"payment_id_hash": second, "uphold": false}),
        "input_invalid",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("upheld"), "{e}");
    err(
        &as_payee,
        "gate_refund_holdback",
        json!({"payment_id_hash": second}),
        "input_invalid",
    )
    .await;
    // A payment that held nothing has no held share to move.
    err(
        &as_payee,
        "gate_refund_holdback",
        json!({"payment_id_hash": harness::random_hex32()}),
        "not_found",
    )
    .await;
}
