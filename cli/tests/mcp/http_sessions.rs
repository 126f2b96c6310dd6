//! HTTP sessions: Mcp-Session-Id, concurrent sessions, idle eviction, CORS, /healthz, and the
//! read-only shape (no signer).

use crate::harness::{self, err, http_client, ok};
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE};
use serde_json::{json, Value};

fn initialize_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "0"}}})
}

fn mcp_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    h
}

async fn health(http: &reqwest::Client, base: &str) -> Value {
    http.get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_eviction_cors_health_and_read_only() {
    let w = harness::world("sessions").await;
    let mut vars = w.vars(false);
    vars.insert("MCP_SESSION_IDLE_SECS".into(), "2".into());
    // An RPC URL with an API key in its query, as providers hand them out (the localnet
    // ignores it): /healthz, anyone's to ask, must not show it.
    vars.insert("RPC_URL".into(), format!("{}/?api-key=abc", w.rpc_url()));
    let server = w.http(w.config(vars)).await;
    let base = format!("http://{}", server.addr);
    let http = reqwest::Client::new();

    let h = health(&http, &base).await;
    assert_eq!(h["ok"], true);
    assert_eq!(h["service"], "trust-gate-mcp");
    assert_eq!(h["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(h["network"], "solana-localnet");
    assert_eq!(h["rpcUrl"], w.rpc_url(), "audit4_g5: the RPC's origin only");
    assert!(!h.to_string().contains("api-key"), "{h}");
    assert_eq!(h["toolCount"], crate::tools::TOOLS.len());
    assert_eq!(h["activeSessions"], 0);
    assert!(h["uptimeSeconds"].is_u64());
    assert!(h["signer"].is_null());

    // CORS preflight from a browser origin.
    let pre = http
        .request(reqwest::Method::OPTIONS, format!("{base}/"))
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type, mcp-session-id",
        )
        .send()
        .await
        .unwrap();
    assert!(pre.status().is_success(), "{}", pre.status());
    let ph = pre.headers();
    assert_eq!(ph["access-control-allow-origin"], "*");
    assert!(ph["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("POST"));
    assert!(ph["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_lowercase()
        .contains("mcp-session-id"));

    // initialize over raw HTTP: a session id, exposed to browsers.
    let init = http
        .post(format!("{base}/"))
        .headers(mcp_headers())
        .header("Origin", "https://app.example")
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert!(init.status().is_success(), "{}", init.status());
    let id = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(init.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_lowercase()
        .contains("mcp-session-id"));
    let body = init.text().await.unwrap();
    assert!(
        body.contains("\"protocolVersion\":\"2025-03-26\""),
        "{body}"
    );
    assert!(body.contains("trust-gate-mcp"), "{body}");
    assert_eq!(health(&http, &base).await["activeSessions"], 1);

    // Two concurrent client sessions do not interfere.
    let (a, b) = tokio::join!(http_client(&server), http_client(&server));
    let (ra, rb) = tokio::join!(
        ok(&a, "gate_explain_decision", json!({"reason_code": 2})),
        ok(&b, "gate_explain_decision", json!({"reason_code": 11})),
    );
    assert_eq!(
        (ra["name"].as_str(), rb["name"].as_str()),
        (Some("SpendingPerTxExceeded"), Some("AttestationMissing"))
    );
    let (la, lb) = tokio::join!(a.list_all_tools(), b.list_all_tools());
    let n = crate::tools::TOOLS.len();
    assert_eq!((la.unwrap().len(), lb.unwrap().len()), (n, n));
    assert!(
        health(&http, &base).await["activeSessions"]
            .as_u64()
            .unwrap()
            >= 3
    );

    // Read-only by design: reads work, writes say how to get a signer.
    let payer = w.env.world.payer(3).unwrap().asset().to_string();
    ok(&a, "gate_get_killswitch", json!({"agent_asset": payer})).await;
    let e = err(
        &a,
        "gate_set_killswitch",
        json!({"agent_asset": payer, "paused": true}),
        "auth_required",
    )
    .await;
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("install the server locally"),
        "{e:#}"
    );
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();

    // Idle eviction after 2 s without requests.
    let mut evicted = false;
    for _ in 0..40 {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        if health(&http, &base).await["activeSessions"] == 0 {
            evicted = true;
            break;
        }
    }
    assert!(
        evicted,
        "sessions still held: {}",
        health(&http, &base).await
    );
    let stale = http
        .post(format!("{base}/"))
        .headers(mcp_headers())
        .header("Mcp-Session-Id", &id)
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 404);
    let e: Value = stale.json().await.unwrap();
    assert_eq!(e["jsonrpc"], "2.0");
    assert_eq!(e["error"]["code"], -32001);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize"),
        "{e}"
    );
    server.shutdown().await;
}
