//! Bench-only peer: the x402-rs facilitator (crates.io `x402-facilitator-local`,
//! `x402-chain-solana` 2.0.2) verifying and settling plain `exact` payments on one Solana
//! chain, so that `trust-gate bench facilitator --peer <this binary>` can measure it next to
//! trust-gate's facilitator on the same localnet. It is not part of trust-gate.
//!
//! ```text
//! x402-rs-peer --rpc <url> --network solana:<genesis reference> --fee-payer <keypair file> [--port N]
//! ```
//!
//! It binds 127.0.0.1 only (port 0: any free one) and prints `listening on http://...` once
//! it serves. Confirmation is by polling (no pubsub URL), as upstream's server does without one.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use x402_chain_solana::chain::{SolanaChainProvider, SolanaChainReference};
use x402_chain_solana::V2SolanaExact;
use x402_facilitator_local::{handlers, FacilitatorLocal};
use x402_types::chain::{ChainId, ChainProviderOps, ChainRegistry};
use x402_types::scheme::{
    SchemeBlueprints, SchemeConfig, SchemeRegistry, X402SchemeFacilitator,
    X402SchemeFacilitatorBuilder,
};

/// The one chain this peer serves. A local type, so that the scheme's builder can be
/// implemented for it (the registry hands builders `&P`).
#[derive(Clone, Debug)]
struct Solana(Arc<SolanaChainProvider>);

impl ChainProviderOps for Solana {
    fn signer_addresses(&self) -> Vec<String> {
        self.0.signer_addresses()
    }
    fn chain_id(&self) -> ChainId {
        self.0.chain_id()
    }
}

impl X402SchemeFacilitatorBuilder<&Solana> for V2SolanaExact {
    fn build(
        &self,
        provider: &Solana,
        config: Option<serde_json::Value>,
    ) -> Result<Box<dyn X402SchemeFacilitator>, Box<dyn std::error::Error>> {
        X402SchemeFacilitatorBuilder::<Arc<SolanaChainProvider>>::build(
            self,
            provider.0.clone(),
            config,
        )
    }
}

/// Upstream's configuration defaults (its `max_compute_unit_limit` and
/// `max_compute_unit_price` when a config file leaves them out).
const MAX_COMPUTE_UNIT_LIMIT: u32 = 400_000;
const MAX_COMPUTE_UNIT_PRICE: u64 = 1_000_000;

struct Args {
    rpc: String,
    network: String,
    fee_payer: String,
    port: u16,
}

fn args() -> Result<Args, String> {
    let mut a = std::env::args().skip(1);
    let (mut rpc, mut network, mut fee_payer, mut port) = (None, None, None, 0u16);
    while let Some(flag) = a.next() {
        let mut value = || a.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--rpc" => rpc = Some(value()?),
            "--network" => network = Some(value()?),
            "--fee-payer" => fee_payer = Some(value()?),
            "--port" => port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let usage = "usage: x402-rs-peer --rpc <url> --network solana:<reference> --fee-payer <keypair file> [--port N]";
    Ok(Args {
        rpc: rpc.ok_or(format!("--rpc is required; {usage}"))?,
        network: network.ok_or(format!("--network is required; {usage}"))?,
        fee_payer: fee_payer.ok_or(format!("--fee-payer is required; {usage}"))?,
        port,
    })
}

/// A keypair file as the Solana CLI writes it: a JSON array of the 64 secret-key bytes.
fn read_keypair(path: &str) -> Result<solana_keypair::Keypair, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--fee-payer {path}: {e}"))?;
    let bytes: Vec<u8> =
        serde_json::from_str(&text).map_err(|e| format!("--fee-payer {path}: {e}"))?;
    solana_keypair::Keypair::try_from(bytes.as_slice())
        .map_err(|e| format!("--fee-payer {path}: {e}"))
}

async fn run() -> Result<(), String> {
    let a = args()?;
    let reference = a
        .network
        .strip_prefix("solana:")
        .ok_or("--network must be solana:<reference>")?;
    let chain = SolanaChainReference::from_str(reference).map_err(|e| format!("--network: {e}"))?;
    let provider = SolanaChainProvider::new(
        read_keypair(&a.fee_payer)?,
        a.rpc.clone(),
        None,
        chain,
        MAX_COMPUTE_UNIT_LIMIT,
        MAX_COMPUTE_UNIT_PRICE,
    )
    .await
    .map_err(|e| e.to_string())?;
    let solana = Solana(Arc::new(provider));
    let chains = ChainRegistry::new(HashMap::from([(solana.chain_id(), solana)]));
    let mut blueprints = SchemeBlueprints::new();
    blueprints.register(V2SolanaExact);
    let schemes: Vec<SchemeConfig> = serde_json::from_value(serde_json::json!([
        {"id": "v2-solana-exact", "chains": "solana:*"}
    ]))
    .map_err(|e| e.to_string())?;
    let facilitator = Arc::new(FacilitatorLocal::new(SchemeRegistry::build(
        chains, blueprints, &schemes,
    )));
    let app = axum::Router::new().merge(handlers::routes().with_state(facilitator));
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, a.port))
        .await
        .map_err(|e| format!("binding 127.0.0.1:{}: {e}", a.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on http://{addr}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("x402-rs-peer: {e}");
        std::process::exit(2);
    }
}
