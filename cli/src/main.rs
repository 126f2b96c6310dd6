//! `trust-gate`: the one command users run.

mod approve;
mod bench;
mod dashboard;
mod demo_key;
mod dispute;
mod holdback;
mod mcp;
mod migrate;
mod pay;
mod policy;
mod reclaim;
mod services;
mod simulate;
mod subscriptions;
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
    /// Run everything on loopback until Ctrl-C: the embedded localnet (Solana JSON-RPC)
    /// with the demo world, the facilitator and the demo resource.
    Up(up::UpArgs),
    /// Run the x402 facilitator alone against any RPC URL.
    Facilitator(services::FacilitatorArgs),
    /// Run the demo resource server alone (its facilitator must be up).
    Demo(services::DemoArgs),
    /// Pay an x402 resource protected by trust-gate (the demo's /protected, say).
    Pay(pay::PayArgs),
    /// Create, show and edit spending policies (v1 and v2) on any cluster.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// List the payments a facilitator holds for an approval (RequireApproval).
    Approvals(approve::ApprovalsArgs),
    /// Approve a held payment on chain as members of the payer agent's policy authority (its
    /// terms read from the facilitator and checked against the id); the payment then passes
    /// once.
    Approve(approve::ApproveArgs),
    /// Dispute a settled payment as its payer (the facilitator that settled it co-signs).
    Dispute(dispute::DisputeArgs),
    /// The shares a payer's policy held back from payments (list), and their moves: release
    /// after the hold, the payee's refund, the arbiter's decision of a dispute.
    #[command(subcommand)]
    Holdback(holdback::HoldbackCommand),
    /// Subscribe a payer agent to a payee: its facilitator pulls a fixed amount each period
    /// through the gate, under the payer's policy (the delegator signs: the agent's owner or
    /// agent wallet).
    Subscribe(subscriptions::SubscribeArgs),
    /// The gated subscriptions of a payer, a payee or a facilitator: the terms, the period's
    /// use and the next pull.
    Subscriptions(subscriptions::ListArgs),
    /// Cancel a gated subscription as its delegator: the delegation is revoked, its record
    /// closed, and their rent returned.
    Unsubscribe(subscriptions::UnsubscribeArgs),
    /// Close a facilitator's payment records whose deadline and dispute window have passed,
    /// returning their rent (the facilitator's crank does it in the background).
    Reclaim(reclaim::ReclaimArgs),
    /// Set up a cluster: capability namespaces, the facilitator's authority and the demo
    /// world. Idempotent.
    Migrate(migrate::MigrateArgs),
    /// The gate's decision for a payment, by simulation (nothing is written).
    Simulate(simulate::SimulateArgs),
    /// Serve the MCP tool server: stdio by default, streamable HTTP with MCP_TRANSPORT=http.
    /// Configured by environment variables (RPC_URL, NETWORK, KEYPAIR_B58, KEYPAIR_PATH,
    /// MCP_HTTP_HOST, MCP_HTTP_PORT, ...; see docs/mcp.md).
    Mcp,
    /// Serve the owner's dashboard, read-only, against any cluster: an agent's policies and
    /// spend against every cap, kill switch, vault, tiers, settlements, channels, held
    /// payments and subscriptions.
    Dashboard(dashboard::DashboardArgs),
    /// Print a demo key (localnet only) as a keypair file's JSON array, so that any client
    /// can sign as a demo agent; refused unless the label is a demo label.
    DemoKey(demo_key::DemoKeyArgs),
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
            Command::Facilitator(a) => services::facilitator(a).await,
            Command::Demo(a) => services::demo(a).await,
            Command::Pay(a) => pay::run(a).await,
            Command::Policy(c) => policy::run(c).await,
            Command::Reclaim(a) => reclaim::run(a).await,
            Command::Dispute(a) => dispute::run(a).await,
            Command::Holdback(c) => holdback::run(c).await,
            Command::Subscribe(a) => subscriptions::subscribe(a).await,
            Command::Subscriptions(a) => subscriptions::list(a).await,
            Command::Unsubscribe(a) => subscriptions::unsubscribe(a).await,
            Command::Approvals(a) => approve::list(a).await,
            Command::Approve(a) => approve::approve(a).await,
            Command::Migrate(a) => migrate::run(a).await,
            Command::Simulate(a) => simulate::run(a).await,
            Command::Mcp => mcp::run().await,
            Command::Dashboard(a) => dashboard::run(a).await,
            Command::Bench(c) => bench::run(c).await,
            Command::DemoKey(a) => demo_key::run(a),
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// A file of the checkout, read at run time (a test binary built from another checkout
    /// into a shared target directory still reads this one).
    fn read(path: &str) -> String {
        let root = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
        std::fs::read_to_string(root.join("..").join(path)).unwrap()
    }

    /// The `code` spans of a markdown line, in order.
    fn code_spans(line: &str) -> Vec<&str> {
        line.split('`').skip(1).step_by(2).collect()
    }

    /// The README's table row that starts with `start`.
    fn readme_row(readme: &str, start: &str) -> String {
        readme
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("README.md has no row starting {start:?}"))
            .to_string()
    }

    fn subcommands() -> Vec<String> {
        Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .filter(|n| n != "help")
            .collect()
    }

    #[test]
    fn the_readme_names_every_command_in_the_order_of_help() {
        let row = readme_row(&read("README.md"), "| CLI |");
        let named: Vec<&str> = code_spans(&row)
            .into_iter()
            .filter(|s| *s != "trust-gate")
            .collect();
        assert_eq!(named, subcommands(), "{row}");
    }

    #[test]
    fn docs_cli_has_a_row_for_every_command() {
        let doc = read("docs/cli.md");
        for name in subcommands() {
            assert!(
                doc.contains(&format!("| `trust-gate {name}")),
                "docs/cli.md has no row for `trust-gate {name}`"
            );
        }
    }

    #[test]
    fn docs_cli_names_every_flag_of_up() {
        let doc = read("docs/cli.md");
        let row = doc
            .lines()
            .find(|l| l.starts_with("| `trust-gate up`"))
            .expect("docs/cli.md has a row for up");
        let cli = Cli::command();
        let up = cli.find_subcommand("up").unwrap();
        for flag in up
            .get_arguments()
            .filter_map(|a| a.get_long())
            .filter(|l| !["help", "version"].contains(l))
        {
            assert!(
                row.contains(&format!("`--{flag}")) || row.contains(&format!(" --{flag} ")),
                "docs/cli.md's row of up does not name --{flag}"
            );
        }
    }

    #[test]
    fn the_readme_lists_the_facilitators_routes_as_up_prints_them() {
        let row = readme_row(&read("README.md"), "| the x402 facilitator:");
        let listed: Vec<&str> = code_spans(&row)
            .into_iter()
            .filter(|s| s.starts_with('/'))
            .collect();
        assert_eq!(listed.join(" "), up::facilitator_routes(), "{row}");
    }
}
