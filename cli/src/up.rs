//! `trust-gate up`: the embedded localnet with the demo world, on loopback, until Ctrl-C.

use clap::Args;
use std::net::{IpAddr, SocketAddr};
use trust_gate_localnet::{Localnet, LocalnetConfig};

#[derive(Args)]
pub struct UpArgs {
    /// Address the services bind to.
    #[arg(long, default_value = "127.0.0.1", env = "TRUST_GATE_HOST")]
    host: IpAddr,
    /// Port of the localnet's Solana JSON-RPC.
    #[arg(long, default_value_t = 8899, env = "TRUST_GATE_RPC_PORT")]
    rpc_port: u16,
    /// Use this cluster instead of starting the localnet (the services that exist run
    /// against it; nothing is seeded).
    #[arg(long, env = "RPC_URL")]
    rpc_url: Option<String>,
    /// Do not seed the demo world into the localnet.
    #[arg(long)]
    no_seed: bool,
}

pub async fn run(args: UpArgs) -> Result<(), String> {
    if let Some(url) = args.rpc_url {
        return external_cluster(&url).await;
    }
    let addr = SocketAddr::new(args.host, args.rpc_port);
    tracing::info!("starting the localnet");
    let localnet = Localnet::start(LocalnetConfig {
        rpc_addr: addr,
        clock: true,
    })
    .await
    .map_err(|e| {
        format!("{e} (is another localnet or validator using the port? try --rpc-port)")
    })?;
    let rpc_url = localnet.rpc_url();
    tracing::info!(%rpc_url, "localnet JSON-RPC listening");

    if !args.no_seed {
        tracing::info!("seeding the demo world");
        let log = |line: &str| tracing::info!("{}", line.trim());
        let (world, report) = trust_gate_migrations::seed_localnet(&localnet, &log)
            .await
            .map_err(|e| format!("seeding the demo world: {e}"))?;
        tracing::info!(
            created = report.created.len(),
            present = report.present.len(),
            "demo world ready"
        );
        print_world(&world);
    }
    println!();
    println!("trust-gate is up:");
    println!("  localnet RPC  {rpc_url}   (Solana JSON-RPC; the programs and a local stand-in of the agent registry)");
    println!();
    println!("Try it:");
    println!("  1. curl -s {rpc_url} -H 'content-type: application/json' -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getHealth\"}}'");
    println!("  2. cargo run --release -- simulate --demo-payer-tier 1   (Deny 6: the service asks for tier >= 2)");
    println!("  3. cargo run --release -- simulate --demo-payer-tier 3   (Allow)");
    println!();
    println!("Ctrl-C stops everything.");

    shutdown_signal().await;
    tracing::info!("stopping");
    drop(localnet);
    Ok(())
}

fn print_world(world: &trust_gate_migrations::DemoWorld) {
    let s = world.summary();
    println!();
    println!("Demo world (deterministic keys, localnet only):");
    println!(
        "  mint           {} ({} decimals), price {}",
        s.mint, s.decimals, s.price
    );
    println!("  facilitator    {}", s.facilitator);
    println!(
        "  service agent  {} (accepts payers of tier >= {})",
        s.service.asset,
        trust_gate_migrations::demo::SERVICE_MIN_PAYER_TIER
    );
    for p in &s.payers {
        println!(
            "  payer tier {}   {} (owner {}, policy {})",
            p.tier, p.asset, p.owner, s.policy_id
        );
    }
    println!(
        "  attestor       {}; namespaces {}",
        s.attestor,
        s.namespaces.join(", ")
    );
}

async fn external_cluster(url: &str) -> Result<(), String> {
    let rpc = trust_gate_migrations::rpc(url);
    let version = rpc
        .get_version()
        .await
        .map_err(|e| format!("RPC_URL {url} does not answer: {e}"))?;
    println!(
        "Using the cluster at {url} (solana-core {}).",
        version.solana_core
    );
    println!("No service runs against an external cluster yet; Ctrl-C to stop.");
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
