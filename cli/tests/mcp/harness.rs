//! A seeded localnet, MCP servers on loopback and MCP clients, plus helpers to call tools
//! and read their structured results.

use crate::fixture::{self, Env};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use std::collections::HashMap;
use std::path::PathBuf;
use trust_gate_mcp::{Config, HttpServer};

pub type Client = RunningService<RoleClient, ClientConfig>;

/// The protocol revision the spec requires to work.
pub const PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_03_26;

pub struct World {
    pub env: Env,
    /// The MCP servers' signer, funded on the localnet.
    pub signer: Keypair,
    pub home: PathBuf,
}

/// A directory with no Solana CLI keypair, so the signer chain only sees what a test sets.
pub fn empty_home(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tg-mcp-home-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub async fn world(tag: &str) -> World {
    let env = fixture::seeded().await;
    let signer = env.funded().await;
    // requestAirdrop answers before the transfer lands: wait for the balance.
    for _ in 0..100 {
        if env.rpc.get_balance(&signer.pubkey()).await.unwrap_or(0) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    World {
        env,
        signer,
        home: empty_home(tag),
    }
}

impl World {
    pub fn rpc_url(&self) -> String {
        self.env.localnet.rpc_url()
    }

    /// Environment for a server on this localnet; `signer` adds KEYPAIR_B58.
    pub fn vars(&self, signer: bool) -> HashMap<String, String> {
        let mut m = HashMap::from([
            ("RPC_URL".to_string(), self.rpc_url()),
            ("NETWORK".to_string(), "solana-localnet".to_string()),
        ]);
        if signer {
            m.insert("KEYPAIR_B58".into(), self.signer.to_base58_string());
        }
        m
    }

    pub fn config(&self, vars: HashMap<String, String>) -> Config {
        Config::from_vars(|k| vars.get(k).cloned(), Some(self.home.clone())).unwrap()
    }

    /// An in-process HTTP server on a free loopback port.
    pub async fn http(&self, config: Config) -> HttpServer {
        trust_gate_mcp::http::serve(config, "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap()
    }
}

pub fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("trust-gate-tests", "0"),
    )
    .with_protocol_version(PROTOCOL)
}

/// rmcp's client over streamable HTTP.
pub async fn http_client(server: &HttpServer) -> Client {
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{}/", server.addr));
    client_config().serve(transport).await.unwrap()
}

/// The `trust-gate` binary under test.
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_trust-gate")
}

/// `trust-gate mcp` over stdio with exactly `vars` (and HOME) in its environment.
pub async fn stdio_client(vars: &HashMap<String, String>, home: &PathBuf) -> Client {
    let mut cmd = tokio::process::Command::new(binary());
    cmd.arg("mcp").env_clear().env("HOME", home).envs(vars);
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    client_config().serve(transport).await.unwrap()
}

pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The structured result of a successful call (and the text content is the same JSON).
pub async fn ok(client: &Client, tool: &str, args: Value) -> Value {
    let r = call(client, tool, args).await;
    let v = r.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(r.is_error, Some(false), "{tool} failed: {v:#}");
    assert_same_text(&r, &v);
    v
}

/// The error envelope of a failed call, checked to have the expected code.
pub async fn err(client: &Client, tool: &str, args: Value, code: &str) -> Value {
    let r = call(client, tool, args).await;
    let v = r.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(
        r.is_error,
        Some(true),
        "{tool} should fail with {code}: {v:#}"
    );
    assert_eq!(v["errorCode"], code, "{tool}: {v:#}");
    assert!(
        v["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{v:#}"
    );
    assert_same_text(&r, &v);
    v
}

fn assert_same_text(r: &CallToolResult, v: &Value) {
    let text = &r.content[0].as_text().expect("text content").text;
    let parsed: Value = serde_json::from_str(text).expect("text content is JSON");
    assert_eq!(&parsed, v, "text and structuredContent differ");
}

pub fn random_hex32() -> String {
    let b: [u8; 32] = rand::random();
    b.iter().map(|x| format!("{x:02x}")).collect()
}
