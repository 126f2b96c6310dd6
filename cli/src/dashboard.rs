//! `trust-gate dashboard`: the owner's dashboard, read-only, against any cluster
//! ([`trust_gate_dashboard`]). `trust-gate up` serves it too.

use clap::Args;
use solana_sdk::signer::Signer;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use trust_gate_client::{Network, Overrides, ProgramIds};
use trust_gate_dashboard::{DashboardConfig, KnownAgent, DEFAULT_PORT};
use trust_gate_migrations::DemoWorld;

#[derive(Args)]
pub struct DashboardArgs {
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    rpc_url: String,
    /// solana-localnet, solana-devnet or solana-mainnet (program ids; overrides from the
    /// *_PROGRAM_ID variables). On a localnet the first page lists the demo world's agents.
    #[arg(long, env = "NETWORK", default_value = "solana-localnet")]
    network: String,
    /// The facilitator whose held payments the pages list (GET /approvals).
    #[arg(long, env = "FACILITATOR_URL")]
    facilitator_url: Option<String>,
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    #[arg(long, default_value_t = DEFAULT_PORT, env = "DASHBOARD_PORT")]
    port: u16,
    /// Seconds between an open page's reloads (0: never).
    #[arg(long, default_value_t = trust_gate_dashboard::config::DEFAULT_REFRESH_SECS)]
    refresh_secs: u32,
}

/// The configuration of a dashboard on `rpc_url` (the network's program ids with the
/// environment's overrides).
pub fn config(
    rpc_url: &str,
    network: &str,
    facilitator_url: Option<String>,
) -> Result<DashboardConfig, String> {
    let rpc_url =
        trust_gate_client::env::validate_url("--rpc-url", rpc_url).map_err(|e| e.to_string())?;
    let network = Network::from_str(network).map_err(|e| format!("--network: {e}"))?;
    let facilitator_url = facilitator_url
        .map(|u| trust_gate_client::env::validate_url("--facilitator-url", &u))
        .transpose()
        .map_err(|e| e.to_string())?;
    let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
    let ids = ProgramIds::for_network(network).with_overrides(overrides);
    let known = if network == Network::Localnet {
        demo_agents()
    } else {
        Vec::new()
    };
    Ok(DashboardConfig::new(&rpc_url, ids, facilitator_url, known))
}

/// The demo world's agents: its payers and its service (the localnet's known agents).
fn demo_agents() -> Vec<KnownAgent> {
    let w = DemoWorld::new();
    let mut out: Vec<KnownAgent> = w
        .payers
        .iter()
        .map(|a| KnownAgent {
            name: a.name.to_string(),
            asset: a.asset.pubkey(),
            note: format!(
                "payer, engine tier {}, {}",
                a.tier,
                if a.hot_key.is_some() {
                    "pays from its vault"
                } else {
                    "pays from its wallet"
                }
            ),
        })
        .collect();
    out.push(KnownAgent {
        name: w.service.name.to_string(),
        asset: w.service.asset.pubkey(),
        note: "the demo service (payee)".into(),
    });
    out.push(KnownAgent {
        name: w.held_service.name.to_string(),
        asset: w.held_service.asset.pubkey(),
        note: format!(
            "payee, engine tier {}, paid with a holdback",
            w.held_service.tier
        ),
    });
    out
}

pub async fn run(a: DashboardArgs) -> Result<(), String> {
    let mut c = config(&a.rpc_url, &a.network, a.facilitator_url.clone())?;
    c.refresh_secs = a.refresh_secs;
    let server = trust_gate_dashboard::start(c, SocketAddr::new(a.host, a.port))
        .await
        .map_err(|e| format!("dashboard: {e} (try --port)"))?;
    println!(
        "dashboard     {}/   (read-only; {})",
        server.url(),
        trust_gate_client::redact::origin(&a.rpc_url)
    );
    println!("Ctrl-C stops it.");
    tokio::select! {
        _ = server.wait() => Ok(()),
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
