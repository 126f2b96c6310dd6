//! `trust-gate`: the one command users run.

mod bench;
mod migrate;
mod simulate;
mod up;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "trust-gate",
    version,
    about = "Payment trust gate for AI agents on Solana"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the embedded localnet (Solana JSON-RPC) with the demo world, until Ctrl-C.
    Up(up::UpArgs),
    /// Set up a cluster: capability namespaces, the facilitator's authority and the demo
    /// world. Idempotent.
    Migrate(migrate::MigrateArgs),
    /// The gate's decision for a payment, by simulation (nothing is written).
    Simulate(simulate::SimulateArgs),
    /// Measure throughput and latency.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tarpc=error")),
        )
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Up(a) => up::run(a).await,
            Command::Migrate(a) => migrate::run(a).await,
            Command::Simulate(a) => simulate::run(a).await,
            Command::Bench(c) => bench::run(c).await,
        }
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
