//! `trust-gate bench`: throughput and latency, measured on this machine. The commands are
//! submodules; what they share is in `measure`, below them all.

mod cost;
mod facilitator;
mod localnet;
mod measure;
mod peer;
mod session;

use clap::Subcommand;
use measure::LocalnetBench;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// The localnet's own floor: simulateTransaction of a gate decision and
    /// sendTransaction of transfers, over JSON-RPC on loopback.
    Localnet(LocalnetBench),
    /// The facilitator over HTTP on loopback: POST /verify and POST /settle, each next to
    /// its floor on the same localnet (simulateTransaction, sendTransaction).
    Facilitator(LocalnetBench),
    /// What a settled payment costs its facilitator in lamports once it can no longer be
    /// disputed (fees, priority, rent locked and returned), with `--peer` next to the
    /// x402-rs facilitator's exact payment.
    Cost(cost::CostBench),
    /// Many small payments through one gated batch-settlement session: transactions and
    /// net lamports per payment for N = 10, 100, 1000, and vouchers a second over HTTP.
    Session(session::SessionBench),
}

pub async fn run(cmd: BenchCommand) -> Result<(), String> {
    match cmd {
        BenchCommand::Localnet(a) => localnet::run(a).await,
        BenchCommand::Facilitator(a) => facilitator::run(a).await,
        BenchCommand::Cost(a) => cost::run(a).await,
        BenchCommand::Session(a) => session::run(a).await,
    }
}

/// A localnet on a free loopback port with the demo world seeded, as each bench starts.
async fn seeded_localnet() -> Result<
    (
        trust_gate_localnet::Localnet,
        trust_gate_migrations::DemoWorld,
    ),
    String,
> {
    eprintln!("starting a localnet on a free loopback port and seeding the demo world");
    let localnet =
        trust_gate_localnet::Localnet::start(trust_gate_localnet::LocalnetConfig::ephemeral())
            .await?;
    let (world, _) =
        trust_gate_migrations::seed_localnet(&crate::migrate::seed_keys(&localnet), &|_| {})
            .await
            .map_err(|e| e.to_string())?;
    Ok((localnet, world))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        bench: BenchCommand,
    }

    fn facilitator(args: &[&str]) -> Result<LocalnetBench, String> {
        let cli = Cli::try_parse_from(["bench", "facilitator"].iter().chain(args))
            .map_err(|e| e.to_string())?;
        let BenchCommand::Facilitator(a) = cli.bench else {
            unreachable!()
        };
        a.validate().map(|_| a)
    }

    #[test]
    fn replicas_need_a_redis_url_and_a_count_from_one_to_eight() {
        let a = facilitator(&["--redis-url", "redis://127.0.0.1:6379", "--replicas", "2"]).unwrap();
        assert_eq!(a.replicas, Some(2));
        let a = facilitator(&["--redis-url", "redis://127.0.0.1:6379"]).unwrap();
        assert_eq!((a.replicas, a.redis_url.is_some()), (None, true));
        for (args, says) in [
            (&["--replicas", "2"][..], "--redis-url"),
            (
                &["--redis-url", "redis://127.0.0.1:6379", "--replicas", "9"][..],
                "between 1 and 8",
            ),
            (
                &["--redis-url", "redis://127.0.0.1:6379", "--replicas", "0"][..],
                "between 1 and 8",
            ),
            (
                &["--redis-url", "http://127.0.0.1:6379"][..],
                "--redis-url: ",
            ),
        ] {
            let err = facilitator(args).map(|_| ()).unwrap_err();
            assert!(err.contains(says), "{args:?}: {err}");
        }
    }
}
