//! Boot: bad configuration stops `trust-gate mcp` naming the variable; mainnet without
//! overrides boots with one warning, answers config_error for program tools and still reads
//! reputation.

use crate::harness::{self, binary, err, ok};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::json;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use std::process::Stdio;
use tokio::io::AsyncReadExt;

/// Runs `trust-gate mcp` with `vars` and no stdin; returns (exit success, stderr). A server
/// still running after 30 s (over HTTP, it does not stop with stdin) fails the test.
async fn boot(vars: &[(&str, String)]) -> (bool, String) {
    let home = harness::empty_home("boot");
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        tokio::process::Command::new(binary())
            .arg("mcp")
            .env_clear()
            .env("HOME", &home)
            .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| {
        let names: Vec<&str> = vars.iter().map(|(k, _)| *k).collect();
        panic!("trust-gate mcp did not stop: it serves with {names:?}")
    })
    .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_configuration_is_named() {
    let (ok, stderr) = boot(&[("RPC_URL", "localhost:8899".into())]).await;
    assert!(!ok);
    assert!(stderr.contains("RPC_URL"), "{stderr}");
    let half = bs58::encode(Keypair::new().pubkey().to_bytes()).into_string();
    let (ok, stderr) = boot(&[("KEYPAIR_B58", half)]).await;
    assert!(!ok);
    assert!(
        stderr.contains("KEYPAIR_B58") && stderr.contains("got 32 bytes"),
        "{stderr}"
    );
    let (ok, stderr) = boot(&[("NETWORK", "moonnet".into())]).await;
    assert!(!ok);
    assert!(stderr.contains("NETWORK"), "{stderr}");
    let (ok, stderr) = boot(&[("KEYPAIR_PATH", "/nonexistent/id.json".into())]).await;
    assert!(!ok);
    assert!(stderr.contains("KEYPAIR_PATH"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signer_beyond_loopback_needs_a_bearer_token() {
    let key = Keypair::new().to_base58_string();
    let http = |host: &str| {
        vec![
            ("MCP_TRANSPORT", "http".to_string()),
            ("MCP_HTTP_HOST", host.to_string()),
            ("MCP_HTTP_PORT", "0".to_string()),
            ("KEYPAIR_B58", key.clone()),
        ]
    };
    let (ok, stderr) = boot(&http("0.0.0.0")).await;
    assert!(!ok);
    assert!(
        stderr.contains("MCP_HTTP_HOST") && stderr.contains("MCP_BEARER_TOKEN"),
        "{stderr}"
    );
    // A token that is there but no token is named too.
    for bad in ["", "   ", "too-short", "0123456789abcdef 0123456789abcdef"] {
        let mut vars = http("0.0.0.0");
        vars.push(("MCP_BEARER_TOKEN", bad.to_string()));
        let (ok, stderr) = boot(&vars).await;
        assert!(!ok, "{bad:?}");
        assert!(stderr.contains("MCP_BEARER_TOKEN"), "{bad:?}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mainnet_without_overrides_is_config_error_but_reputation_reads_work() {
    let w = harness::world("mainnet").await;
    let home = harness::empty_home("mainnet");
    let mut cmd = tokio::process::Command::new(binary());
    cmd.arg("mcp")
        .env_clear()
        .env("HOME", &home)
        .env("RPC_URL", w.rpc_url())
        .env("NETWORK", "mainnet");
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let c = harness::PROTOCOL;
    let client = rmcp::model::ClientConfig::new(
        Default::default(),
        rmcp::model::Implementation::new("boot-test", "0"),
    )
    .with_protocol_version(c)
    .serve(transport)
    .await
    .unwrap();
    let asset = w.env.world.payer(3).unwrap().asset().to_string();
    let e = err(
        &client,
        "gate_get_policy",
        json!({"agent_asset": asset, "policy_id": 1}),
        "config_error",
    )
    .await;
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("POLICY_VAULT_PROGRAM_ID"),
        "{e:#}"
    );
    err(
        &client,
        "gate_simulate_payment",
        json!({"caller": asset, "payer_agent": asset, "payee_agent": asset,
        "amount": "1", "mint": asset, "policy_id": 1}),
        "config_error",
    )
    .await;
    // The reputation read works: it needs only the mainnet engine id (this localnet holds no
    // account there, so the agent reads as unrated).
    let rep = ok(
        &client,
        "gate_get_engine_reputation",
        json!({"agent_asset": asset}),
    )
    .await;
    assert_eq!(
        rep["engine"],
        "AToMw53aiPQ8j7iHVb4fGt6nzUNxUhcPc3tbPBZuzVVb"
    );
    assert_eq!(rep["error"]["errorCode"], "unrated");
    ok(&client, "gate_explain_decision", json!({"reason_code": 1})).await;
    client.cancel().await.unwrap();
    let mut text = String::new();
    stderr.unwrap().read_to_string(&mut text).await.unwrap();
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(warnings[0].contains("sentinel"), "{text}");
}
