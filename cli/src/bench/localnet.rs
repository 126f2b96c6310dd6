//! `trust-gate bench localnet`: simulateTransaction and sendTransaction throughput and
//! latency of the embedded localnet over its JSON-RPC, on this machine.

use super::measure::{cores, floor, LocalnetBench};

pub async fn run(a: LocalnetBench) -> Result<(), String> {
    a.validate()?;
    let (localnet, world) = super::seeded_localnet().await?;
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
