//! `trust-gate migrate`: the idempotent set-up against any cluster.

use clap::Args;
use solana_sdk::signature::{read_keypair_file, Signer};
use trust_gate_client::{Builder, Network, Overrides, ProgramIds};
use trust_gate_migrations::{DemoWorld, Migration};

#[derive(Args)]
pub struct MigrateArgs {
    /// The cluster's JSON-RPC URL.
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    rpc_url: String,
    /// solana-devnet, solana-mainnet or solana-localnet: selects the program ids.
    #[arg(long, env = "NETWORK", default_value = "solana-localnet")]
    network: String,
    /// The funded keypair (JSON array file) that pays for the set-up.
    #[arg(long, env = "KEYPAIR_PATH")]
    keypair: String,
}

pub async fn run(args: MigrateArgs) -> Result<(), String> {
    let network: Network = args.network.parse().map_err(|e| format!("NETWORK: {e}"))?;
    let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
    let ids = ProgramIds::for_network(network).with_overrides(overrides);
    let builder = Builder::new(ids).map_err(|e| e.to_string())?;
    let funder = read_keypair_file(&args.keypair)
        .map_err(|e| format!("KEYPAIR_PATH {}: cannot read a keypair: {e}", args.keypair))?;
    let rpc = trust_gate_migrations::rpc(&args.rpc_url);
    eprintln!(
        "migrating {} ({network}) as {}; tiers are not set (only the localnet's stand-in can)",
        trust_gate_facilitator::redact::origin(&args.rpc_url),
        funder.pubkey()
    );
    let log = |line: &str| eprintln!("{line}");
    let migration = Migration {
        rpc: &rpc,
        builder,
        funder: &funder,
        engine_admin: None,
        log: &log,
    };
    let report = migration
        .demo_world(&DemoWorld::new())
        .await
        .map_err(|e| e.to_string())?;
    eprintln!(
        "done: {} created, {} already present",
        report.created.len(),
        report.present.len()
    );
    Ok(())
}

/// What seeding `localnet` takes of it (its JSON-RPC, funded key and engine admin).
pub fn seed_keys(
    localnet: &trust_gate_localnet::Localnet,
) -> trust_gate_migrations::LocalnetKeys<'_> {
    trust_gate_migrations::LocalnetKeys {
        rpc_url: localnet.rpc_url(),
        faucet: localnet.faucet(),
        engine_admin: &localnet.engine_authority,
    }
}
