//! `trust-gate mcp`, and the MCP server `trust-gate up` runs next to the facilitator.

use solana_sdk::native_token::LAMPORTS_PER_SOL;
use solana_sdk::signer::Signer;
use std::net::{IpAddr, SocketAddr};
use trust_gate_mcp::{Config, HttpServer, Transport};

/// What `up` gives the MCP signer on its localnet, so write tools can pay fees and rent.
const LOCALNET_SIGNER_AIRDROP: u64 = 10 * LAMPORTS_PER_SOL;

/// Boots from the environment (errors name the variable) and serves until the client
/// leaves (stdio) or Ctrl-C (HTTP).
pub async fn run() -> Result<(), String> {
    let config = Config::from_env().map_err(|e| e.to_string())?;
    trust_gate_mcp::run(config).await.map_err(|e| e.to_string())
}

/// The MCP server over HTTP for `up`: the environment's settings (the signer chain among
/// them), pointed at `rpc_url` with the demo facilitator as the default one.
pub async fn start_for_up(
    host: IpAddr,
    port: u16,
    rpc_url: &str,
    network: &str,
    facilitator_url: &str,
    demo_url: &str,
    held_demo_url: &str,
) -> Result<HttpServer, String> {
    let overrides = [
        ("RPC_URL", rpc_url.to_string()),
        ("NETWORK", network.to_string()),
        ("MCP_TRANSPORT", "http".to_string()),
    ];
    let var = |k: &str| {
        overrides
            .iter()
            .find(|(name, _)| *name == k)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(k).ok())
    };
    let mut config = Config::from_vars(var, std::env::var_os("HOME").map(Into::into))
        .map_err(|e| e.to_string())?;
    config.transport = Transport::Http;
    config.facilitator_url = Some(facilitator_url.to_string());
    config.demo_url = Some(demo_url.to_string());
    // `gate_pay` may pay the held demo too (the demo's own URL is allowed on the localnet).
    let held = reqwest::Url::parse(held_demo_url).map_err(|e| format!("{held_demo_url}: {e}"))?;
    config
        .pay_allow
        .push(trust_gate_mcp::egress::Allowed::Host {
            host: held.host_str().unwrap_or_default().to_ascii_lowercase(),
            port: held.port_or_known_default(),
        });
    if config.default_facilitator.is_none() {
        config.default_facilitator =
            Some(trust_gate_migrations::DemoWorld::new().facilitator.pubkey());
    }
    if let Some(w) = &config.warning {
        eprintln!("warning: {w}");
    }
    if config.network == trust_gate_client::Network::Localnet {
        fund_signer(&config).await;
    }
    trust_gate_mcp::http::serve(config, SocketAddr::new(host, port))
        .await
        .map_err(|e| match e.kind() {
            // Another process holds the port: the one thing the caller's flag changes.
            std::io::ErrorKind::AddrInUse => format!("{e} (try --mcp-port)"),
            _ => e.to_string(),
        })
}

/// Airdrops SOL to the MCP signer on the localnet (best effort: a failure is logged).
async fn fund_signer(config: &Config) {
    let Some((key, source)) = &config.signer else {
        tracing::info!("MCP server has no signer: write tools answer auth_required");
        return;
    };
    let pubkey = key.pubkey();
    let rpc = trust_gate_migrations::rpc(&config.rpc_url);
    let funded = async {
        let sig = rpc
            .request_airdrop(&pubkey, LOCALNET_SIGNER_AIRDROP)
            .await?;
        rpc.poll_for_signature(&sig).await?;
        rpc.get_balance(&pubkey).await
    }
    .await;
    match funded {
        Ok(lamports) => {
            tracing::info!(%pubkey, %source, lamports, "MCP signer funded on the localnet")
        }
        Err(e) => tracing::warn!(%pubkey, "could not fund the MCP signer: {e}"),
    }
}
