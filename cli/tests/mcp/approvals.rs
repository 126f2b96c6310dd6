//! `gate_list_approvals`, `gate_approve` and `gate_get_spend` through rmcp's client over
//! streamable HTTP, against the facilitator and the demo on a seeded localnet: a payment above
//! the payer policy's approval threshold is held, the tool lists it, the payer's owner (the MCP
//! server's signer, the authority's one member) approves it, and the same payment then
//! settles; the spend shows it held, then moves by its amount in every window. Without a
//! facilitator, without a signer, and for an id nobody holds, the tools say why by name;
//! `gate_explain_decision` explains RequireApproval.

use crate::harness::{self, err, http_client, ok};
use serde_json::json;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use trust_gate_client::decode::ApprovalTerms;
use trust_gate_migrations::demo;
use trust_gate_pay::exact::PayOutcome;

const POLICY: u32 = 7;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_payment_is_listed_approved_by_the_tool_and_then_settled() {
    let w = harness::world("approvals").await;
    let env = &w.env;
    let payer = env.world.payer(3).unwrap();
    let owner = &payer.owner;
    let create = env.b.init_policy(
        &owner.pubkey(),
        &[],
        &payer.asset(),
        POLICY,
        env.world.payer_policy(),
        // Limits that never bind, so that the spend shows the month and the lifetime too.
        trust_gate_client::decode::PolicyRules {
            monthly_cap: 1 << 50,
            lifetime_cap: 1 << 50,
            ..Default::default()
        },
        demo::PRICE - 1,
    );
    env.send(&[create], &[owner]).await.unwrap();
    let (facilitator, demo_server) = env.services(POLICY, demo::METERED_POLICY_ID).await;

    // The server signs as the payer's owner and reads this facilitator.
    let mut vars = w.vars(false);
    vars.insert("KEYPAIR_B58".into(), owner.to_base58_string());
    vars.insert("MCP_FACILITATOR_URL".into(), facilitator.url());
    let server = w.http(w.config(vars)).await;
    let c = http_client(&server).await;

    let demo_url = demo_server.url();
    let pay = || env.pay_protected(&demo_url, None, payer.signer());
    let PayOutcome::Held { approval_id, .. } = pay().await else {
        panic!("not held for approval")
    };
    let terms = ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: env.world.service.asset(),
        mint: env.world.mint(),
        amount: demo::PRICE,
        policy_id: POLICY,
    };
    assert_eq!(approval_id, env.b.pda.approval(&terms).to_string());

    // The spend at a glance: nothing spent under the new policy yet, the payment held.
    let spend_args = json!({"agent_asset": payer.asset().to_string(), "policy_id": POLICY});
    let before = ok(&c, "gate_get_spend", spend_args.clone()).await;
    assert_eq!(before["approvalThreshold"], (demo::PRICE - 1).to_string());
    assert_eq!(before["killSwitch"]["paused"], false);
    assert_eq!(before["lifetime"]["spent"], "0", "{before}");
    assert_eq!(before["pendingApprovals"][0]["id"], approval_id, "{before}");
    assert_eq!(before["vault"], serde_json::Value::Null);
    assert_eq!(before["openChannels"], json!([]));

    let listed = ok(
        &c,
        "gate_list_approvals",
        json!({"payer_agent": payer.asset().to_string()}),
    )
    .await;
    assert_eq!(listed["approvals"][0]["id"], approval_id, "{listed}");
    assert_eq!(listed["approvals"][0]["state"], "pending");
    err(
        &c,
        "gate_list_approvals",
        json!({"payer_agent": "nope"}),
        "input_invalid",
    )
    .await;

    // An id nobody holds, and an expiry beyond a week: refused by name, nothing signed.
    err(
        &c,
        "gate_approve",
        json!({"id": Pubkey::new_unique().to_string()}),
        "not_found",
    )
    .await;
    let e = err(
        &c,
        "gate_approve",
        json!({"id": approval_id, "expires_in_secs": 604_801}),
        "input_invalid",
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("expires_in_secs"),
        "{e}"
    );

    let approved = ok(&c, "gate_approve", json!({"id": approval_id})).await;
    assert_eq!(approved["approved"], true, "{approved}");
    assert_eq!(approved["terms"]["amount"], demo::PRICE.to_string());
    assert!(approved["signature"].as_str().is_some(), "{approved}");
    // Idempotent: the approval standing is returned.
    let again = ok(&c, "gate_approve", json!({"id": approval_id})).await;
    assert_eq!(again["approved"], false, "{again}");
    assert_eq!(
        again["alreadyApproved"]["rentPayer"],
        owner.pubkey().to_string()
    );
    let listed = ok(&c, "gate_list_approvals", json!({})).await;
    assert_eq!(listed["approvals"][0]["state"], "approved", "{listed}");

    // The same payment now settles, using the approval up.
    assert!(matches!(pay().await, PayOutcome::Paid { .. }));
    let id: Pubkey = approval_id.parse().unwrap();
    assert_eq!(env.rpc.get_balance(&id).await.unwrap(), 0);
    let listed = ok(&c, "gate_list_approvals", json!({})).await;
    assert_eq!(listed["approvals"], json!([]), "{listed}");
    // The spend moved by the payment; nothing is held any more.
    let after = ok(&c, "gate_get_spend", spend_args.clone()).await;
    for window in ["day", "week", "month", "lifetime"] {
        let spent =
            |v: &serde_json::Value| v[window]["spent"].as_str().unwrap().parse::<u64>().unwrap();
        assert_eq!(
            spent(&after),
            spent(&before) + demo::PRICE,
            "{window}: {after}"
        );
    }
    assert_eq!(after["pendingApprovals"], json!([]), "{after}");
    err(
        &c,
        "gate_get_spend",
        json!({"agent_asset": payer.asset().to_string(), "policy_id": 99}),
        "not_found",
    )
    .await;

    // The decision explained.
    let x = ok(
        &c,
        "gate_explain_decision",
        json!({"decision": "RequireApproval"}),
    )
    .await;
    assert_eq!(x["gateErrorCode"], 6077, "{x}");
    assert!(x["remediation"].as_str().unwrap().contains("gate_approve"));
    err(
        &c,
        "gate_explain_decision",
        json!({"decision": "RequireApproval", "reason_code": 3}),
        "input_invalid",
    )
    .await;
    c.cancel().await.unwrap();
    server.shutdown().await;

    // Without a facilitator, and without a signer: said so.
    let bare = w.http(w.config(w.vars(false))).await;
    let c = http_client(&bare).await;
    err(&c, "gate_list_approvals", json!({}), "config_error").await;
    err(
        &c,
        "gate_approve",
        json!({"id": approval_id}),
        "auth_required",
    )
    .await;
    c.cancel().await.unwrap();
    bare.shutdown().await;
}
