//! `trust-gate facilitator` and `trust-gate demo`: each service alone against any RPC URL
//! (and the start-up code `trust-gate up` shares).

use clap::Args;
use solana_sdk::signer::Signer;
use std::net::{IpAddr, SocketAddr};
use trust_gate_facilitator::config::validate_url;
use trust_gate_facilitator::Settings;
use trust_gate_migrations::DemoWorld;

#[derive(Args, Clone)]
pub struct FacilitatorArgs {
    #[arg(long, env = "FACILITATOR_HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,
    #[arg(long, env = "FACILITATOR_PORT", default_value_t = trust_gate_facilitator::DEFAULT_PORT)]
    pub port: u16,
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    pub rpc_url: String,
    /// solana-localnet, solana-devnet or solana-mainnet.
    #[arg(long, env = "NETWORK", default_value = "solana-localnet")]
    pub network: String,
    /// The facilitator's keypair: a JSON keypair file or a base58 secret key. On a localnet
    /// the demo world's facilitator is the default.
    #[arg(long, env = "FACILITATOR_KEYPAIR", hide_env_values = true)]
    pub keypair: Option<String>,
    /// Comma-separated service public keys whose challenges are settled. On a localnet the
    /// demo service's key is the default.
    #[arg(long, env = "TRUSTED_SERVICE_KEYS")]
    pub trusted_service_keys: Option<String>,
    /// Policy id used by /verify when a request names none.
    #[arg(long, env = "DEFAULT_POLICY_ID")]
    pub default_policy_id: Option<String>,
    /// Must be `true` when set: settlement is never split.
    #[arg(long, env = "ATOMICITY_ENFORCED")]
    pub atomicity_enforced: Option<String>,
    /// The highest priority fee per compute unit (micro-lamports) the facilitator co-pays;
    /// default 5000000, as the x402 exact scheme.
    #[arg(long, env = "MAX_COMPUTE_UNIT_PRICE")]
    pub max_compute_unit_price: Option<String>,
    /// The Redis that facilitator replicas share (redis://host:port): each payer's
    /// settlements run one at a time across all of them, and a retry on any replica finds the
    /// settlement another sent. Unset: in process, for one facilitator.
    #[arg(long, env = "REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
}

impl FacilitatorArgs {
    /// The facilitator that serves the demo world's service on `rpc_url`: the demo
    /// facilitator's key on a localnet (its key is public, being deterministic), else
    /// `FACILITATOR_KEYPAIR`; the demo service trusted; demo policy 1 by default.
    pub fn for_demo(host: IpAddr, port: u16, rpc_url: &str, network: &str) -> Self {
        let keypair = if network == "solana-localnet" {
            None
        } else {
            std::env::var("FACILITATOR_KEYPAIR").ok()
        };
        FacilitatorArgs {
            host,
            port,
            rpc_url: rpc_url.to_string(),
            network: network.to_string(),
            keypair,
            trusted_service_keys: Some(DemoWorld::new().service_key.pubkey().to_string()),
            default_policy_id: Some(trust_gate_migrations::demo::POLICY_ID.to_string()),
            atomicity_enforced: None,
            max_compute_unit_price: std::env::var("MAX_COMPUTE_UNIT_PRICE").ok(),
            redis_url: None,
        }
    }

    /// The settings, with the demo world's keys as localnet defaults.
    pub fn settings(&self) -> Settings {
        let localnet = self
            .network
            .parse::<trust_gate_client::Network>()
            .is_ok_and(|n| n == trust_gate_client::Network::Localnet);
        let world = localnet.then(DemoWorld::new);
        Settings {
            rpc_url: self.rpc_url.clone(),
            keypair: self
                .keypair
                .clone()
                .or_else(|| world.as_ref().map(|w| w.facilitator.to_base58_string())),
            network: self.network.clone(),
            atomicity_enforced: self.atomicity_enforced.clone(),
            default_policy_id: self.default_policy_id.clone(),
            trusted_services: self
                .trusted_service_keys
                .clone()
                .or_else(|| world.as_ref().map(|w| w.service_key.pubkey().to_string())),
            max_compute_unit_price: self.max_compute_unit_price.clone(),
            redis_url: self.redis_url.clone(),
        }
    }
}

/// Validates the configuration, checks it against the cluster, and serves.
pub async fn start_facilitator(
    a: &FacilitatorArgs,
) -> Result<trust_gate_facilitator::Server, String> {
    let config = a.settings().validate().map_err(|e| e.to_string())?;
    let key = config.mount.facilitator.pubkey();
    let server = trust_gate_facilitator::start(config, SocketAddr::new(a.host, a.port))
        .await
        .map_err(|e| e.to_string())?;
    let store = server.facilitator.lock_store.name();
    tracing::info!(url = %server.url(), facilitator = %key, lock_store = %store, "facilitator listening");
    Ok(server)
}

pub async fn facilitator(a: FacilitatorArgs) -> Result<(), String> {
    let server = start_facilitator(&a).await?;
    println!("Facilitator listening on {}", server.url());
    shutdown_signal().await;
    Ok(())
}

#[derive(Args, Clone)]
pub struct DemoArgs {
    #[arg(long, env = "DEMO_HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,
    #[arg(long, env = "DEMO_PORT", default_value_t = trust_gate_demo::DEFAULT_PORT)]
    pub port: u16,
    /// The facilitator that verifies and settles (it must be up).
    #[arg(long, env = "FACILITATOR_URL", default_value = "http://127.0.0.1:4020")]
    pub facilitator_url: String,
    /// The URL clients use to reach the demo (signed into challenges); default
    /// http://<host>:<port>.
    #[arg(long, env = "DEMO_PUBLIC_URL")]
    pub public_url: Option<String>,
}

pub async fn start_demo(a: &DemoArgs) -> Result<trust_gate_demo::Server, String> {
    let facilitator_url =
        validate_url("FACILITATOR_URL", &a.facilitator_url).map_err(|e| e.to_string())?;
    let public_url = match &a.public_url {
        Some(u) => validate_url("DEMO_PUBLIC_URL", u).map_err(|e| e.to_string())?,
        None => format!("http://{}", SocketAddr::new(a.host, a.port)),
    };
    let config = trust_gate_demo::DemoConfig::demo_world(&facilitator_url, &public_url);
    let server = trust_gate_demo::start(config, SocketAddr::new(a.host, a.port)).await?;
    tracing::info!(url = %server.url(), "demo listening");
    Ok(server)
}

pub async fn demo(a: DemoArgs) -> Result<(), String> {
    let server = start_demo(&a).await?;
    println!("Demo listening on {}", server.url());
    shutdown_signal().await;
    Ok(())
}

/// Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
