//! Both MCP eras on one server. MCP 2026-07-28 through a client we did not write: the official
//! TypeScript SDK (npm `@modelcontextprotocol/client`, installed from `tests/mcp-client`'s
//! lock file by the test itself), pinned to the revision: it discovers the server, lists and
//! calls tools without a session (checking each structuredContent against the tool's
//! outputSchema), and sees the cache hints set on purpose. Over raw HTTP: a stale session id on
//! a 2026-07-28 request is ignored while a 2025-03-26 one still gets 404, and a browser may
//! send the revision's headers. (The 2025-03-26 clients: rmcp's, every other test here, and the
//! inspector's, `inspector.rs`.)

use crate::harness::{self, http_client};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{json, Value};
use solana_sdk::signer::Signer;
use std::collections::BTreeSet;
use trust_gate_mcp::server::TTL_MS;
use trust_gate_mcp::GateServer;
use trust_gate_migrations::demo;
use trust_gate_pay::exact::PayOutcome;

const REVISION: &str = "2026-07-28";

async fn ts_client(url: &str, asset: &str, more: &Value) -> Value {
    let dir = trust_gate_test_setup::npm_package("tests/mcp-client");
    let out = tokio::process::Command::new("node")
        .current_dir(&dir)
        .arg("stateless.mjs")
        .args([url, asset, &more.to_string()])
        .output()
        .await
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the 2026-07-28 client failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// A call of every read tool that succeeds on the seeded world once `payment_id_hash` is
/// settled, after the server's signer has asked for a validation and, as an attestor,
/// answered it.
fn read_calls(w: &harness::World, payment_id_hash: &str) -> Value {
    let world = &w.env.world;
    let payer = world.payer(3).unwrap().asset().to_string();
    let (capability, _, _) = demo::NAMESPACES[0];
    let policy = json!({"agent_asset": payer, "policy_id": demo::POLICY_ID});
    json!([
        {"name": "gate_request_validation", "arguments": {
            "subject_asset": payer, "capability_name": capability, "deadline_slot": 1_000_000}},
        {"name": "gate_register_attestor", "arguments": {}},
        {"name": "gate_respond_to_validation", "arguments": {
            "subject_asset": payer, "capability_name": capability, "expires_at_slot": 1_000_000}},
        {"name": "gate_get_policy", "arguments": policy},
        {"name": "gate_get_velocity_ledger", "arguments": policy},
        {"name": "gate_get_vault", "arguments": {
            "agent_asset": world.vault_payer().asset().to_string(), "mint": world.mint().to_string()}},
        {"name": "gate_get_authority", "arguments": {"agent_asset": payer}},
        {"name": "gate_get_feedback_log", "arguments": {"payment_id_hash": payment_id_hash}},
        {"name": "gate_get_capability_namespace", "arguments": {"name": capability}},
        {"name": "gate_get_attestor_profile", "arguments": {"attestor": world.attestor.pubkey().to_string()}},
        {"name": "gate_get_validation_request", "arguments": {
            "subject_asset": payer, "capability_name": capability, "requester": w.signer.pubkey().to_string()}},
        {"name": "gate_get_validation_attestation", "arguments": {"subject_asset": payer, "capability_name": capability}},
        {"name": "gate_simulate_payment", "arguments": {
            "caller": w.signer.pubkey().to_string(), "payer_agent": payer,
            "payee_agent": world.service.asset().to_string(), "amount": demo::PRICE.to_string(),
            "mint": world.mint().to_string(), "policy_id": demo::POLICY_ID}},
        {"name": "gate_explain_decision", "arguments": {"decision": "RequireApproval"}},
        {"name": "gate_get_spend", "arguments": policy},
        {"name": "gate_list_approvals", "arguments": {}},
        {"name": "gate_list_payer_holdbacks", "arguments": {"agent_asset": payer}},
        {"name": "gate_list_payee_holdbacks", "arguments": {
            "agent_asset": world.held_service.asset().to_string()}},
        {"name": "gate_list_subscriptions", "arguments": {
            "payer_agent": world.subscriber().asset().to_string()}},
        {"name": "gate_demo_state", "arguments": {}},
        {"name": "gate_facilitator_walkthrough", "arguments": {"name": "facilitator-x402"}},
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_client_is_served_without_a_session() {
    let w = harness::world("eras").await;
    let env = &w.env;
    let (facilitator, demo_server) = env.services(demo::POLICY_ID, demo::METERED_POLICY_ID).await;
    // One settled payment, for its receipt.
    let payer = env.world.payer(3).unwrap();
    let PayOutcome::Paid {
        payment_id_hash, ..
    } = env
        .pay_protected(&demo_server.url(), None, payer.signer())
        .await
    else {
        panic!("not paid")
    };
    let mut vars = w.vars(true);
    vars.insert("MCP_FACILITATOR_URL".into(), facilitator.url());
    vars.insert(
        "MCP_DEFAULT_FACILITATOR".into(),
        env.world.facilitator.pubkey().to_string(),
    );
    let server = w.http(w.config(vars)).await;
    let asset = payer.asset().to_string();
    let more = read_calls(&w, &payment_id_hash);
    let r = ts_client(&format!("http://{}/", server.addr), &asset, &more).await;

    assert_eq!(r["version"], REVISION, "{r:#}");
    let d = &r["discover"];
    assert!(
        d["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!(REVISION)),
        "{d}"
    );
    assert_eq!(
        (&d["ttlMs"], &d["cacheScope"]),
        (&json!(TTL_MS), &json!("public"))
    );
    assert!(d["capabilities"]["tools"].is_object(), "{d}");

    // tools/list: every tool, cacheable for an hour by anyone; every tool declares the
    // outputSchema its result type derives.
    let t = &r["tools"];
    assert_eq!(t["count"], crate::tools::TOOLS.len());
    assert_eq!(
        (&t["ttlMs"], &t["cacheScope"]),
        (&json!(TTL_MS), &json!("public"))
    );
    let declared: BTreeSet<&str> = t["withOutputSchema"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let all: BTreeSet<&str> = crate::tools::TOOLS.into_iter().collect();
    assert_eq!(declared, all);

    // Calls, stateless; the SDK has checked their structuredContent against the schemas.
    let c = &r["calls"];
    assert_eq!(c["explain"]["isError"], false, "{c:#}");
    assert_eq!(
        c["explain"]["structuredContent"]["name"],
        "CounterpartyTierBelowMin"
    );
    assert_eq!(
        c["reputation"]["structuredContent"]["reputation"]["tierImmediate"], 3,
        "{c:#}"
    );
    assert_eq!(c["killswitch"]["isError"], false, "{c:#}");
    assert_eq!(c["docs"]["isError"], false, "{c:#}");
    assert_eq!(c["badInput"]["isError"], true);
    assert_eq!(
        c["badInput"]["structuredContent"]["errorCode"],
        "input_invalid"
    );
    // Every read tool once more, each result checked by the SDK against its outputSchema.
    let mut called = BTreeSet::new();
    for m in r["more"].as_array().unwrap() {
        assert_eq!(m["isError"], false, "{m:#}");
        called.insert(m["name"].as_str().unwrap());
    }
    // With the fixed calls above, every read tool was checked.
    called.extend([
        "gate_explain_decision",
        "gate_get_engine_reputation",
        "gate_get_killswitch",
        "gate_docs",
    ]);
    let read_tools = (GateServer::read_tools() + GateServer::discovery_tools()).list_all();
    assert_eq!(read_tools.len(), 21);
    for tool in &read_tools {
        let name = tool.name.as_ref();
        assert!(called.contains(name), "{name} is not called");
    }
    let log = r["more"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "gate_get_feedback_log")
        .unwrap();
    assert_eq!(log["structuredContent"]["closed"], false, "{log:#}");
    for hints in [&r["resources"], &r["read"], &r["prompts"]] {
        assert_eq!(
            (&hints["ttlMs"], &hints["cacheScope"]),
            (&json!(TTL_MS), &json!("public")),
            "{r:#}"
        );
    }

    // No initialize, no session: not asked for, not given, none held.
    let exchanges = r["exchanges"].as_array().unwrap();
    assert!(exchanges.len() >= 9, "{exchanges:#?}");
    for x in exchanges {
        assert_eq!(x["protocolVersion"], REVISION, "{x}");
        assert_ne!(x["mcpMethod"], "initialize", "{x}");
        assert!(
            x["sentSession"].is_null() && x["gotSession"].is_null(),
            "{x}"
        );
        assert_ne!(x["httpMethod"], "GET", "no SSE stream is opened: {x}");
    }
    assert_eq!(server.active_sessions().await, 0);

    // The same server still serves 2025-03-26 clients with sessions.
    let old = http_client(&server).await;
    assert_eq!(
        old.peer_info().unwrap().protocol_version.as_str(),
        "2025-03-26"
    );
    assert_eq!(server.active_sessions().await, 1);
}

fn discover_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-http", "version": "0"},
    }}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_2026_07_28_requests_ignore_stale_sessions_and_pass_cors() {
    let w = harness::world("eras-raw").await;
    let server = w.http(w.config(w.vars(false))).await;
    let base = format!("http://{}/", server.addr);
    let http = reqwest::Client::new();
    let post = |version: &'static str, session: Option<&'static str>, body: Value| {
        let mut req = http
            .post(&base)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", version);
        if let Some(method) = body["method"].as_str() {
            req = req.header("mcp-method", method);
        }
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.json(&body).send()
    };

    // A stale session id on a stateless request: ignored, as the revision asks.
    let res = post(REVISION, Some("stale-session"), discover_body())
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().get("mcp-session-id").is_none());
    let text = res.text().await.unwrap();
    assert!(text.contains("\"supportedVersions\""), "{text}");
    assert!(text.contains(&format!("\"ttlMs\":{TTL_MS}")), "{text}");
    assert!(text.contains("\"resultType\":\"complete\""), "{text}");
    // On a 2025-03-26 request it names a session that does not exist: 404, with what to do.
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let res = post("2025-03-26", Some("stale-session"), ping)
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    assert!(res.text().await.unwrap().contains("initialize"));
    // An unsupported revision is refused with the supported ones.
    let mut old = discover_body();
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let res = post("2099-01-01", None, old).await.unwrap();
    assert_eq!(res.status(), 400);
    let text = res.text().await.unwrap();
    assert!(text.contains("-32022") && text.contains(REVISION), "{text}");

    // A browser's preflight for the revision's headers.
    let pre = http
        .request(reqwest::Method::OPTIONS, &base)
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-agent",
        )
        .send()
        .await
        .unwrap();
    assert!(pre.status().is_success(), "{}", pre.status());
    let allowed = pre.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    for h in [
        "mcp-method",
        "mcp-name",
        "mcp-param-agent",
        "mcp-protocol-version",
    ] {
        assert!(allowed.contains(h), "{h}: {allowed}");
    }
}
