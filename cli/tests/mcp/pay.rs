//! `gate_pay` through rmcp's client over streamable HTTP, against the facilitator and the
//! demo on a seeded localnet, the server signing as the tier-3 payer's owner: an exact payment
//! settles on chain (its receipt answers, the spend moves), an `upto` and a session are paid
//! (the session's channel kept for the next request, then closed), a tier-1 payer's Deny and a
//! payment above an approval threshold come back as results, `max_amount` refuses before
//! anything is signed, and non-public addresses are refused. Without a signer, the tool
//! answers `auth_required`.

use crate::harness::{self, err, http_client, ok};
use serde_json::{json, Value};
use solana_sdk::signature::Signature;
use solana_sdk::signer::Signer;
use trust_gate_client::decode::ApprovalTerms;
use trust_gate_client::token::TokenProgram;
use trust_gate_migrations::demo;

/// The payer policy with an approval threshold below the demo's price.
const HELD_POLICY: u32 = 7;

/// The resource's JSON body inside a gate_pay result.
fn resource(r: &Value) -> Value {
    serde_json::from_str(r["response"]["body"].as_str().expect("a text body")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_pay_pays_through_the_gate_and_returns_its_refusals_as_results() {
    let w = harness::world("pay").await;
    let env = &w.env;
    let payer = env.world.payer(3).unwrap();
    let held_policy = env.b.init_policy(
        &payer.owner.pubkey(),
        &[],
        &payer.asset(),
        HELD_POLICY,
        env.world.payer_policy(),
        Default::default(),
        demo::PRICE - 1,
    );
    env.send(&[held_policy], &[&payer.owner]).await.unwrap();
    let (facilitator, demo_server) = env.services(demo::POLICY_ID, demo::METERED_POLICY_ID).await;
    // A second demo charging under the policy with the threshold, allowed by name.
    let (_held_facilitator, held_demo) = env.services(HELD_POLICY, demo::METERED_POLICY_ID).await;
    let held_host = held_demo.url().trim_start_matches("http://").to_string();

    let mut vars = w.vars(false);
    vars.insert("KEYPAIR_B58".into(), payer.signer().to_base58_string());
    vars.insert("MCP_FACILITATOR_URL".into(), facilitator.url());
    vars.insert(
        "MCP_DEFAULT_FACILITATOR".into(),
        env.world.facilitator.pubkey().to_string(),
    );
    vars.insert("MCP_DEMO_URL".into(), demo_server.url());
    vars.insert("MCP_PAY_ALLOW".into(), held_host);
    let server = w.http(w.config(vars.clone())).await;
    let c = http_client(&server).await;
    let protected = format!("{}/protected", demo_server.url());
    let source =
        TokenProgram::SplToken.associated_account(&payer.signer().pubkey(), &env.world.mint());
    let balance = || env.token_balance(&source);
    let spend_args =
        json!({"agent_asset": payer.asset().to_string(), "policy_id": demo::POLICY_ID});
    let spent_today = |v: &Value| v["day"]["spent"].as_str().unwrap().parse::<u64>().unwrap();

    // Above max_amount: refused before anything is signed; nothing moves.
    let before = balance().await;
    let e = err(
        &c,
        "gate_pay",
        json!({"url": protected, "max_amount": (demo::PRICE - 1).to_string()}),
        "amount_above_max",
    )
    .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("nothing was signed"),
        "{e}"
    );
    assert_eq!(balance().await, before);

    // An exact payment: settled on chain in one transaction, its receipt at the facilitator.
    let spend_before = ok(&c, "gate_get_spend", spend_args.clone()).await;
    let r = ok(
        &c,
        "gate_pay",
        json!({"url": protected, "max_amount": demo::PRICE.to_string()}),
    )
    .await;
    assert_eq!(r["paid"], true, "{r:#}");
    assert_eq!(r["scheme"], "trust-gate");
    assert_eq!(r["decision"]["kind"], "Allow");
    assert_eq!(r["payment"]["amount"], demo::PRICE.to_string());
    assert_eq!(r["response"]["status"], 200);
    assert!(r["response"]["contentType"]
        .as_str()
        .unwrap()
        .starts_with("application/json"));
    assert_eq!(r["response"]["bodyTruncated"], false);
    let signature: Signature = r["payment"]["signature"].as_str().unwrap().parse().unwrap();
    let status = env.rpc.get_signature_status(&signature).await.unwrap();
    assert_eq!(status, Some(Ok(())), "the settlement is on chain");
    assert_eq!(resource(&r)["transaction"], signature.to_string());
    assert_eq!(balance().await, before - demo::PRICE);
    assert_eq!(
        r["payment"]["facilitator"],
        env.world.facilitator.pubkey().to_string()
    );
    let receipt = r["payment"]["receiptUrl"].as_str().unwrap();
    assert!(receipt.starts_with(&facilitator.url()), "{receipt}");
    let got = reqwest::get(receipt).await.unwrap();
    assert_eq!(got.status(), 200, "{receipt}");
    let spend_after = ok(&c, "gate_get_spend", spend_args.clone()).await;
    assert_eq!(
        spent_today(&spend_after),
        spent_today(&spend_before) + demo::PRICE
    );

    // The body is cut at the size asked, with its full length.
    let r = ok(
        &c,
        "gate_pay",
        json!({"url": protected, "max_body_chars": 10}),
    )
    .await;
    assert_eq!(r["paid"], true, "{r:#}");
    assert_eq!(r["response"]["body"].as_str().unwrap().chars().count(), 10);
    assert_eq!(r["response"]["bodyTruncated"], true);
    assert!(r["response"]["bodyLength"].as_u64().unwrap() > 10);

    // A tier-1 payer: the demo asks for tier 2, so the gate's Deny is the result.
    let low = env.world.payer(1).unwrap().asset().to_string();
    let r = ok(
        &c,
        "gate_pay",
        json!({"url": protected, "payer_agent": low}),
    )
    .await;
    assert_eq!(r["paid"], false, "{r:#}");
    assert_eq!(r["decision"]["kind"], "Deny");
    assert_eq!(r["decision"]["reasonCode"], 6);
    assert_eq!(r["decision"]["reasonName"], "CounterpartyTierBelowMin");
    assert!(!r["decision"]["remediation"].as_str().unwrap().is_empty());
    assert_eq!(r["response"]["status"], 402);

    // Above the approval threshold: held, with the pending id (the terms' approval address).
    let r = ok(
        &c,
        "gate_pay",
        json!({"url": format!("{}/protected", held_demo.url())}),
    )
    .await;
    assert_eq!(r["paid"], false, "{r:#}");
    assert_eq!(r["decision"]["kind"], "RequireApproval");
    let terms = ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: env.world.service.asset(),
        mint: env.world.mint(),
        amount: demo::PRICE,
        policy_id: HELD_POLICY,
    };
    assert_eq!(
        r["decision"]["approvalId"],
        env.b.pda.approval(&terms).to_string()
    );
    assert!(r["decision"]["remediation"]
        .as_str()
        .unwrap()
        .contains("gate_approve"));

    // A gated upto: the ceiling escrowed, the units used charged.
    let r = ok(
        &c,
        "gate_pay",
        json!({"url": format!("{}/metered?units=3", demo_server.url())}),
    )
    .await;
    assert_eq!(r["paid"], true, "{r:#}");
    assert_eq!(r["scheme"], "trust-gate-upto");
    let charged = resource(&r)["charged"]
        .as_str()
        .unwrap()
        .parse::<u64>()
        .unwrap();
    assert_eq!(charged, 3 * 100_000, "{r:#}");
    let upto_tx: Signature = resource(&r)["transaction"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        env.rpc.get_signature_status(&upto_tx).await.unwrap(),
        Some(Ok(()))
    );

    // A gated session: the first request opens the channel, the second pays with a voucher on
    // the same channel, then close_session sends the refund.
    let session = format!("{}/session", demo_server.url());
    let first = ok(
        &c,
        "gate_pay",
        json!({"url": session, "session_requests": 5}),
    )
    .await;
    assert_eq!(first["paid"], true, "{first:#}");
    assert_eq!(first["scheme"], "trust-gate-batch-settlement");
    assert_eq!(first["payment"]["opened"], true);
    let channel = first["payment"]["channel"].as_str().unwrap().to_string();
    let price: u64 = first["payment"]["price"].as_str().unwrap().parse().unwrap();
    assert_eq!(first["payment"]["deposit"], (5 * price).to_string());
    let opened: Signature = first["payment"]["signature"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        env.rpc.get_signature_status(&opened).await.unwrap(),
        Some(Ok(()))
    );
    let second = ok(&c, "gate_pay", json!({"url": session})).await;
    assert_eq!(second["paid"], true, "{second:#}");
    assert_eq!(second["payment"]["opened"], false);
    assert_eq!(second["payment"]["channel"], channel);
    assert_eq!(
        second["payment"]["voucher"]["cumulative"],
        (2 * price).to_string()
    );
    assert_eq!(
        resource(&second)["channelState"]["chargedCumulativeAmount"],
        (2 * price).to_string(),
        "{second:#}"
    );
    let closed = ok(
        &c,
        "gate_pay",
        json!({"url": session, "close_session": true}),
    )
    .await;
    let s = &closed["closedSessions"][0];
    assert_eq!(s["channel"], channel, "{closed:#}");
    assert_eq!(s["refunded"], (3 * price).to_string());
    assert!(s["signature"].as_str().is_some(), "{closed:#}");
    err(
        &c,
        "gate_pay",
        json!({"url": session, "close_session": true}),
        "not_found",
    )
    .await;

    // Non-public addresses: refused before any request (the facilitator is on loopback, not
    // allowed; a cloud metadata address is link-local).
    for url in [
        format!("{}/supported", facilitator.url()),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://[::1]:9/".to_string(),
    ] {
        let e = err(&c, "gate_pay", json!({"url": url}), "url_refused").await;
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("nothing was requested"),
            "{e}"
        );
    }
    // Bad input, named.
    for (args, field) in [
        (json!({"url": protected, "max_amount": "1e9"}), "max_amount"),
        (json!({"url": protected, "method": "TRACE"}), "method"),
        (
            json!({"url": protected, "headers": {"Host": "x"}}),
            "headers.Host",
        ),
        (json!({"url": protected, "scheme": "exact-evm"}), "scheme"),
        (json!({"url": "file:///etc/passwd"}), "url"),
    ] {
        let e = err(&c, "gate_pay", args, "input_invalid").await;
        assert!(e["message"].as_str().unwrap().contains(field), "{e}");
    }

    // A web page elsewhere may not call a server that signs; one of this machine may.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "a-page", "version": "0"}}});
    let from = |origin: &'static str| {
        reqwest::Client::new()
            .post(format!("http://{}/", server.addr))
            .header("Accept", "application/json, text/event-stream")
            .header("Origin", origin)
            .json(&call)
            .send()
    };
    assert_eq!(from("https://evil.example").await.unwrap().status(), 403);
    assert_eq!(from("http://localhost:5173").await.unwrap().status(), 200);

    // Read-only (no signer): auth_required, nothing requested.
    let read_only = w.http(w.config(w.vars(false))).await;
    let ro = http_client(&read_only).await;
    err(&ro, "gate_pay", json!({"url": protected}), "auth_required").await;
}
