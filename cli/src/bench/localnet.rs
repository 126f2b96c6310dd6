//! `trust-gate bench localnet`: simulateTransaction and sendTransaction throughput and
//! latency of the embedded localnet over its JSON-RPC, on this machine.

use super::measure::{cores, floor, LocalnetBench};
use trust_gate_localnet::{Localnet, LocalnetConfig};

pub async fn run(a: LocalnetBench) -> Result<(), String> {
    a.validate()?;
    eprintln!("starting a localnet on a free loopback port and seeding the demo world");
    let localnet = Localnet::start(LocalnetConfig::ephemeral()).await?;
    let (world, _) =
        trust_gate_migrations::seed_localnet(&crate::migrate::seed_keys(&localnet), &|_| {})
            .await
            .map_err(|e| e.to_string())?;
    let (simulate, send) = floor(&localnet, &world, &a).await?;
    println!();
    println!(
        "localnet JSON-RPC on this machine ({} cores), {} s per method, {} concurrent clients:",
        cores(),
        a.seconds,
        a.concurrency
    );
    simulate.print("simulateTransaction");
    send.print("sendTransaction");
    println!(
        "(sendTransaction runs the preflight simulation, executes, and records the transaction)"
    );
    Ok(())
}
