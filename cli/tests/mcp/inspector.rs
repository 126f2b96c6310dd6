//! An MCP client we did not write: the official inspector CLI (npm
//! `@modelcontextprotocol/inspector-cli`, installed from `tests/mcp-inspector`'s lock file by
//! the test itself)
//! lists the tools of `trust-gate mcp` over stdio and calls one against the localnet, and pays
//! the demo with `gate_pay`: the settlement is on chain.

use crate::harness::{self, binary};
use serde_json::Value;
use solana_sdk::signature::Signature;
use solana_sdk::signer::Signer;
use std::path::PathBuf;
use trust_gate_client::token::TokenProgram;
use trust_gate_migrations::demo;

/// The CLI's build folder, the package installed from `tests/mcp-inspector`'s lock file on
/// first use.
fn inspector_build_dir() -> PathBuf {
    trust_gate_test_setup::npm_package("tests/mcp-inspector")
        .join("node_modules/@modelcontextprotocol/inspector-cli/build")
}

async fn inspector(w: &harness::World, method_args: &[&str]) -> Value {
    inspector_with(w, &[], method_args).await
}

/// The inspector with `env` added to the server's environment.
async fn inspector_with(w: &harness::World, env: &[(&str, String)], method_args: &[&str]) -> Value {
    let dir = inspector_build_dir();
    let mut cmd = tokio::process::Command::new("node");
    // Run from the package's build directory: the CLI reads its own package.json relative to
    // the working directory.
    cmd.current_dir(&dir)
        .arg("cli.js")
        .arg("--cli")
        .args(["-e", &format!("RPC_URL={}", w.rpc_url())])
        .args(["-e", "NETWORK=solana-localnet"])
        .args(["-e", &format!("HOME={}", w.home.display())]);
    for (k, v) in env {
        cmd.args(["-e", &format!("{k}={v}")]);
    }
    cmd.arg(binary()).arg("mcp").args(method_args);
    let out = cmd.output().await.expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "inspector failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json_start = stdout.find('{').expect("JSON output");
    serde_json::from_str(&stdout[json_start..]).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_inspector_lists_and_calls_tools() {
    let w = harness::world("inspector").await;
    let list = inspector(&w, &["--method", "tools/list"]).await;
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), crate::tools::TOOLS.len(), "{names:?}");
    assert!(names.contains(&"gate_get_engine_reputation"));
    let asset = w.env.world.payer(3).unwrap().asset().to_string();
    let arg = format!("agent_asset={asset}");
    let r = inspector(
        &w,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "gate_get_engine_reputation",
            "--tool-arg",
            &arg,
        ],
    )
    .await;
    assert_eq!(r["isError"], false, "{r:#}");
    assert_eq!(
        r["structuredContent"]["reputation"]["tierImmediate"], 3,
        "{r:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_inspector_pays_the_demo_with_gate_pay() {
    let w = harness::world("inspector-pay").await;
    let env = &w.env;
    let payer = env.world.payer(3).unwrap();
    let (facilitator, demo) = env.services(demo::POLICY_ID, demo::METERED_POLICY_ID).await;
    let server_env = [
        ("KEYPAIR_B58", payer.signer().to_base58_string()),
        ("MCP_FACILITATOR_URL", facilitator.url()),
        ("MCP_DEMO_URL", demo.url()),
    ];
    let source =
        TokenProgram::SplToken.associated_account(&payer.signer().pubkey(), &env.world.mint());
    let before = env.token_balance(&source).await;
    let url = format!("url={}/protected", demo.url());
    let max = format!("max_amount={}", demo::PRICE);
    let r = inspector_with(
        &w,
        &server_env,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "gate_pay",
            "--tool-arg",
            &url,
            "--tool-arg",
            &max,
        ],
    )
    .await;
    assert_eq!(r["isError"], false, "{r:#}");
    let paid = &r["structuredContent"];
    assert_eq!(paid["paid"], true, "{r:#}");
    assert_eq!(paid["decision"]["kind"], "Allow");
    let signature: Signature = paid["payment"]["signature"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        env.rpc.get_signature_status(&signature).await.unwrap(),
        Some(Ok(())),
        "the settlement is on chain"
    );
    let source =
        TokenProgram::SplToken.associated_account(&payer.signer().pubkey(), &env.world.mint());
    assert_eq!(env.token_balance(&source).await, before - demo::PRICE);
}
