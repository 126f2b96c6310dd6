//! `trust-gate mcp` over stdio, with rmcp's client: with a signer, and without one.

use crate::harness::{self, err, ok, stdio_client};
use serde_json::json;
use solana_sdk::signer::Signer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_with_and_without_a_signer() {
    let w = harness::world("stdio").await;
    let c = stdio_client(&w.vars(true), &w.home).await;
    let info = c.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "trust-gate-mcp");
    assert_eq!(
        c.list_all_tools().await.unwrap().len(),
        crate::tools::TOOLS.len()
    );
    assert_eq!(c.list_all_prompts().await.unwrap().len(), 3);
    let world = &w.env.world;
    let sim = ok(
        &c,
        "gate_simulate_payment",
        json!({
        "caller": w.signer.pubkey().to_string(),
        "payer_agent": world.payer(0).unwrap().asset().to_string(),
        "payee_agent": world.service.asset().to_string(),
        "amount": "100000", "mint": world.mint().to_string(), "policy_id": 1}),
    )
    .await;
    assert_eq!(
        (sim["kind"].as_str(), sim["reasonCode"].as_u64()),
        (Some("Deny"), Some(6))
    );
    let prof = ok(
        &c,
        "gate_register_attestor",
        json!({"display_name_uri": "stdio"}),
    )
    .await;
    assert_eq!(prof["attestor"], w.signer.pubkey().to_string());
    c.cancel().await.unwrap();

    let ro = stdio_client(&w.vars(false), &w.home).await;
    let e = err(
        &ro,
        "gate_register_namespace",
        json!({"name": "x"}),
        "auth_required",
    )
    .await;
    let hint = e["hint"].as_str().unwrap();
    assert!(
        hint.contains("KEYPAIR_B58") && hint.contains("KEYPAIR_PATH"),
        "{hint}"
    );
    ok(&ro, "gate_docs", json!({"query": "settlement"})).await;
    ro.cancel().await.unwrap();
}
