//! `MCP_BEARER_TOKEN`: a server holding a signer binds beyond loopback only with a token, and
//! with one every request to the MCP endpoint must carry it (401 otherwise); `/healthz` stays
//! open. A server without a signer binds anywhere. No chain is needed: the tool called reads
//! nothing from it.

use crate::harness::{self, client_config, ok};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::StatusCode;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use solana_sdk::signature::Keypair;
use std::collections::HashMap;
use trust_gate_mcp::{Config, HttpServer};

const TOKEN: &str = "7f3c9a1e5b2d4c6e8a0f1b3d5c7e9a2b-mcp-test";

fn config(tag: &str, signer: bool, token: Option<&str>) -> Config {
    let home = harness::empty_home(tag);
    let mut vars = HashMap::from([
        // Nothing listens there: the test's calls never reach the chain.
        ("RPC_URL".to_string(), "http://127.0.0.1:9".to_string()),
        ("NETWORK".to_string(), "solana-localnet".to_string()),
    ]);
    if signer {
        vars.insert("KEYPAIR_B58".into(), Keypair::new().to_base58_string());
    }
    if let Some(t) = token {
        vars.insert("MCP_BEARER_TOKEN".into(), t.to_string());
    }
    Config::from_vars(|k| vars.get(k).cloned(), Some(home)).unwrap()
}

async fn serve_everywhere(config: Config) -> std::io::Result<HttpServer> {
    trust_gate_mcp::http::serve(config, "0.0.0.0:0".parse().unwrap()).await
}

/// The server's endpoint, reached over loopback whatever it binds.
fn base(server: &HttpServer) -> String {
    format!("http://127.0.0.1:{}", server.addr.port())
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "0"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signer_binds_beyond_loopback_only_with_a_token() {
    let e = match serve_everywhere(config("bearer-none", true, None)).await {
        Ok(_) => panic!("a server holding a signer bound 0.0.0.0 without a token"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("MCP_BEARER_TOKEN") && e.contains("MCP_HTTP_HOST"),
        "{e}"
    );
    // Read-only: anywhere, as before.
    let read_only = serve_everywhere(config("bearer-ro", false, None))
        .await
        .unwrap();
    read_only.shutdown().await;
    let with_token = serve_everywhere(config("bearer-token", true, Some(TOKEN)))
        .await
        .unwrap();
    with_token.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_needs_the_token_but_healthz_does_not() {
    let server = serve_everywhere(config("bearer-requests", true, Some(TOKEN)))
        .await
        .unwrap();
    let base = base(&server);
    let http = reqwest::Client::new();
    let post = |auth: Option<String>| {
        let mut r = http
            .post(format!("{base}/"))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .json(&initialize());
        if let Some(a) = auth {
            r = r.header(AUTHORIZATION, a);
        }
        r.send()
    };
    let refused = [
        None,
        Some(format!("Bearer {TOKEN}x")),
        Some(format!("Bearer {}", &TOKEN[1..])),
        Some("Bearer ".to_string()),
        Some(format!("Basic {TOKEN}")),
        Some(TOKEN.to_string()),
    ];
    for auth in refused {
        let res = post(auth.clone()).await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{auth:?}");
        let challenge = res.headers()[WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
            .to_string();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        let body: Value = res.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("Bearer"), "{auth:?}: {body}");
    }
    // Every method of the endpoint, not only POST.
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let res = http
            .request(method.clone(), format!("{base}/"))
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{method}");
    }
    // The scheme's case does not matter (RFC 9110); the token's does.
    for auth in [format!("Bearer {TOKEN}"), format!("bearer {TOKEN}")] {
        let res = post(Some(auth.clone())).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{auth}");
    }
    let res = post(Some(format!("Bearer {}", TOKEN.to_uppercase())))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);

    // /healthz tells nothing secret (the signer's public key, the RPC's origin): open.
    let h: Value = http
        .get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(h["ok"], true);

    // rmcp's client: without the token it cannot initialize; with it, it works.
    let bare = StreamableHttpClientTransport::from_uri(format!("{base}/"));
    assert!(client_config().serve(bare).await.is_err());
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/")).auth_header(TOKEN),
    );
    let client = client_config().serve(transport).await.unwrap();
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    ok(&client, "gate_explain_decision", json!({"reason_code": 1})).await;
    client.cancel().await.unwrap();
    server.shutdown().await;
}
