//! `trust-gate reclaim`: closes a facilitator's payment records whose deadline and dispute
//! window have passed, by hand (the facilitator's crank does the same in the background),
//! and returns their rent to whoever paid it.

use anchor_lang::prelude::Pubkey;
use clap::Args;
use solana_sdk::signature::{read_keypair_file, Keypair};
use solana_sdk::signer::Signer;
use std::io::{IsTerminal, Write};
use std::str::FromStr;
use trust_gate_client::receipts;
use trust_gate_client::reclaim::{self, Closable};
use trust_gate_client::{chain, Builder, Network, Overrides, ProgramIds};
use trust_gate_migrations::DemoWorld;

#[derive(Args)]
pub struct ReclaimArgs {
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    rpc_url: String,
    /// The keypair (JSON file) that pays the closing transactions' fees. On the localnet the
    /// demo facilitator's key is used when omitted.
    #[arg(long, env = "FACILITATOR_KEYPAIR")]
    keypair: Option<String>,
    /// Whose records to close (their rent goes back to it, whoever pays the fees); default:
    /// the keypair's own.
    #[arg(long, value_name = "PUBKEY")]
    facilitator: Option<String>,
    /// The cluster's network (its program ids; *_PROGRAM_ID overrides apply).
    #[arg(long, env = "NETWORK", default_value = "solana-localnet")]
    network: String,
    /// Only report what would close, send nothing.
    #[arg(long)]
    dry_run: bool,
}

/// SOL, from lamports, for people.
fn sol(lamports: u64) -> String {
    format!("{:.6} SOL", lamports as f64 / 1e9)
}

fn fee_payer(a: &ReclaimArgs, network: Network) -> Result<Keypair, String> {
    match (&a.keypair, network) {
        (Some(path), _) => read_keypair_file(path)
            .map_err(|e| format!("--keypair {path}: cannot read a keypair: {e}")),
        (None, Network::Localnet) => Ok(DemoWorld::new().facilitator.insecure_clone()),
        (None, _) => Err(
            "--keypair is required off the localnet: it pays the closing transactions' fees".into(),
        ),
    }
}

/// A progress bar on stderr: redrawn in place on a terminal, a line per step otherwise.
struct Progress {
    total: usize,
    tty: bool,
}

impl Progress {
    fn show(&self, done: usize, lamports: u64) {
        const WIDTH: usize = 30;
        let filled = (done * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let bar = format!("{}{}", "#".repeat(filled), ".".repeat(WIDTH - filled));
        let line = format!(
            "[{bar}] {done}/{} payments closed, {} returned",
            self.total,
            sol(lamports)
        );
        let mut err = std::io::stderr();
        if self.tty {
            let _ = write!(err, "\r{line}");
            if done == self.total {
                let _ = writeln!(err);
            }
        } else {
            let _ = writeln!(err, "{line}");
        }
    }
}

pub async fn run(a: ReclaimArgs) -> Result<(), String> {
    let network = Network::from_str(&a.network).map_err(|e| format!("--network: {e}"))?;
    let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
    let b = Builder::new(ProgramIds::for_network(network).with_overrides(overrides))
        .map_err(|e| e.to_string())?;
    let payer = fee_payer(&a, network)?;
    let facilitator = match &a.facilitator {
        Some(s) => Pubkey::from_str(s)
            .map_err(|_| format!("--facilitator: {s:?} is not a base58 public key"))?,
        None => payer.pubkey(),
    };
    let rpc = trust_gate_migrations::rpc(&a.rpc_url);
    let now = chain::unix_time(&rpc)
        .await
        .map_err(|e| format!("reading the cluster's clock at {}: {e}", a.rpc_url))?;
    let scan = reclaim::scan(&rpc, &b, &facilitator, now)
        .await
        .map_err(|e| format!("reading facilitator {facilitator}'s payment records: {e}"))?;
    let due: u64 = scan.closable.iter().map(Closable::lamports).sum();
    println!(
        "Facilitator {facilitator}: {} payment record(s) to close ({} of rent), {} still open, {} skipped",
        scan.closable.len(),
        sol(due),
        scan.open.len(),
        scan.skipped.len()
    );
    if let Some(next) = scan.open.iter().map(|(_, at)| *at).min() {
        println!(
            "  the next one closes in {} s (after its deadline and its dispute window)",
            next.saturating_sub(now) + 1
        );
    }
    for s in &scan.skipped {
        println!("  skipped {}: {}", s.log, s.why);
    }
    let runs = reclaim::batches(&b, &payer.pubkey(), &scan.closable);
    if a.dry_run {
        println!(
            "Dry run: {} transaction(s) would close them, paid by {}; nothing sent.",
            runs.len(),
            payer.pubkey()
        );
        return Ok(());
    }
    if scan.closable.is_empty() {
        return Ok(());
    }
    let progress = Progress {
        total: scan.closable.len(),
        tty: std::io::stderr().is_terminal(),
    };
    let (mut closed, mut returned, mut fees, mut failures) = (0, 0u64, 0u64, Vec::new());
    progress.show(0, 0);
    for run in runs {
        match reclaim::close_run(&rpc, &b, &payer, run).await {
            Ok(signature) => {
                closed += run.len();
                returned += run.iter().map(Closable::lamports).sum::<u64>();
                fees += receipts::transaction(&rpc, &signature)
                    .await
                    .ok()
                    .flatten()
                    .map_or(0, |t| t.fee);
            }
            Err(e) => failures.push(format!("{} payment(s): {e}", run.len())),
        }
        progress.show(closed, returned);
    }
    println!(
        "Closed {closed} payment record(s): {} returned, {} paid in fees by {}.",
        sol(returned),
        sol(fees),
        payer.pubkey()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        for f in &failures {
            println!("  failed: {f}");
        }
        Err(format!(
            "{} closing transaction(s) failed; run again to retry them",
            failures.len()
        ))
    }
}
