//! Compute units of every instruction and of a settlement, on the SBF builds, and the size
//! and deployment rent of each program; with the real registry and engine's builds present
//! (`../shared/fixtures/8004`, or `TRUST_GATE_EXTERNALS_DIR`), settlements and disputes on
//! them too.
//!
//!     tools/sbf/build
//!     SBF_OUT_DIR=target/deploy cargo run -p trust-gate-program-tests --bin bench-cu [RUNS]
//!
//! Every run uses fresh random keys, so the PDA bump searches (1 500 compute units per bump
//! tried) differ from run to run; RUNS (default 5) runs give the spread.
//!
//! On the builds with compute-unit probes (`SBF_PROFILE=1 tools/sbf/build`, then
//! `SBF_OUT_DIR=target/deploy-profile`) it prints the profile of the budget's four
//! settlements and of `gate_payment`, phase by phase, instead of the budget line.
//! `TRUST_GATE_CU_LOGS=1` prints every measured transaction's logs.

use solana_sdk::rent::Rent;
use trust_gate_localnet::native::{sbf_file, SBF_PROGRAMS};
use trust_gate_localnet::Programs;

/// Bytes of the upgradeable loader's ProgramData header and of its Program account.
const PROGRAMDATA_HEADER: usize = 45;
const PROGRAM_ACCOUNT: usize = 36;
const LAMPORTS_PER_SOL: f64 = 1_000_000_000.0;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let Programs::Sbf(dir) = Programs::from_env() else {
        eprintln!(
            "error: SBF_OUT_DIR is not set. Native programs are not metered; build the SBF \
             programs with tools/sbf/build and run with SBF_OUT_DIR=target/deploy"
        );
        return std::process::ExitCode::FAILURE;
    };
    if let Err(e) = Programs::sbf_in(&dir) {
        eprintln!("error: {e} (run tools/sbf/build)");
        return std::process::ExitCode::FAILURE;
    }
    let runs: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 5,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("error: RUNS must be a positive number");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut report = trust_gate_program_tests::compute_units::Report::default();
    for run in 1..=runs {
        eprintln!(
            "run {run}/{runs}: every instruction on the SBF builds in {}",
            dir.display()
        );
        report.merge(trust_gate_program_tests::compute_units::tour().await);
    }
    // With the real registry and engine beside the repository (or where
    // TRUST_GATE_EXTERNALS_DIR says), settlements and disputes on them too.
    match trust_gate_program_tests::externals::programs() {
        Ok(real) => {
            for run in 1..=runs {
                eprintln!("run {run}/{runs}: settlements on {}", real.describe());
                report.merge(trust_gate_program_tests::compute_units::real_tour(&real).await);
            }
        }
        Err(why) => eprintln!("the real registry and engine are not measured: {why}"),
    }
    println!("{}", report.table());
    match report.profile_table() {
        // Every probe costs units: a profiled build's figures are not the budget's.
        Some(profile) => println!(
            "Profile (a build with compute-unit probes; no budget line: the units above \
             include the probes):\n\n{profile}"
        ),
        None => println!("{}\n", report.budget_line()),
    }

    // Each limit rule alone: evaluate_and_commit's median over the runs.
    let mut rules: Vec<(&str, Vec<u64>)> = Vec::new();
    for run in 1..=runs {
        eprintln!("run {run}/{runs}: each limit rule alone");
        for (i, (name, units)) in trust_gate_program_tests::compute_units::rule_costs()
            .await
            .into_iter()
            .enumerate()
        {
            if rules.len() <= i {
                rules.push((name, Vec::new()));
            }
            rules[i].1.push(units);
        }
    }
    println!(
        "| policy (one rule alone) | evaluate_and_commit CU: median | over no limits |\n|---|---:|---:|"
    );
    let median = |v: &Vec<u64>| {
        let mut v = v.clone();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let base = rules.first().map(|(_, u)| median(u)).unwrap_or_default();
    for (name, units) in &rules {
        let m = median(units);
        println!("| {name} | {m} | {:+} |", m as i64 - base as i64);
    }
    println!();

    let rent = Rent::default();
    println!("| program | .so bytes | rent to deploy (SOL) |\n|---|---:|---:|");
    for name in SBF_PROGRAMS {
        let len = std::fs::metadata(sbf_file(&dir, name))
            .map(|m| m.len() as usize)
            .expect("checked by sbf_in");
        let lamports =
            rent.minimum_balance(PROGRAMDATA_HEADER + len) + rent.minimum_balance(PROGRAM_ACCOUNT);
        println!(
            "| {name} | {len} | {:.4} |",
            lamports as f64 / LAMPORTS_PER_SOL
        );
    }
    std::process::ExitCode::SUCCESS
}
