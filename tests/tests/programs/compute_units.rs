//! Every instruction of the three programs runs, and on the SBF builds (`SBF_OUT_DIR`) each
//! stays within the runtime's default limits: 200 000 compute units for one instruction and
//! 600 000 for the three-instruction settlement (200 000 per instruction without a
//! ComputeBudget request), and the gate within its compute-unit budget. The figures: `cargo run
//! -p trust-gate-program-tests --bin bench-cu`.

use trust_gate_localnet::Programs;
use trust_gate_program_tests::compute_units::{tour, Report, Settlement, BUDGET_CASES, HELD_CASES};

const INSTRUCTION_LIMIT: u64 = 200_000;
const SETTLEMENT_LIMIT: u64 = 600_000;

/// Every instruction the IDLs declare, as `program::instruction`.
fn declared_instructions() -> Vec<String> {
    let idl_dir = trust_gate_test_setup::repo_root().join("idl");
    let mut all = Vec::new();
    for program in ["policy_vault", "gate", "validation_registry"] {
        let text = std::fs::read_to_string(idl_dir.join(format!("{program}.json"))).unwrap();
        let idl: serde_json::Value = serde_json::from_str(&text).unwrap();
        for ix in idl["instructions"].as_array().unwrap() {
            all.push(format!("{program}::{}", ix["name"].as_str().unwrap()));
        }
    }
    all
}

#[tokio::test]
async fn every_instruction_runs_within_the_default_compute_limits() {
    // Every transaction of the tour must succeed (natively too).
    let report = tour().await;
    println!("{}", report.table());
    if Programs::from_env() == Programs::Native {
        // Builtins are neither metered nor named in the logs (Anchor's `msg!` goes to stdout
        // natively): the names and the budget need the SBF builds.
        eprintln!(
            "native programs: compute units not metered (set SBF_OUT_DIR to check the budget)"
        );
        return;
    }

    let seen: Vec<String> = report
        .rows
        .iter()
        .map(|r| format!("{}::{}", r.program, r.instruction))
        .collect();
    for name in declared_instructions() {
        assert!(seen.contains(&name), "the tour never ran {name}");
    }
    for r in &report.rows {
        let max = r
            .max()
            .unwrap_or_else(|| panic!("{}::{} ran but was not metered", r.program, r.instruction));
        assert!(
            max <= INSTRUCTION_LIMIT,
            "{}::{} used {max} compute units",
            r.program,
            r.instruction
        );
    }
    // Smallest, largest, largest without limits and largest vault-funded, smallest in a
    // Token-2022 mint, one with an approval, and the largest held.
    assert_eq!(report.settlements.len(), 7);
    for s in &report.settlements {
        assert!(
            s.total <= SETTLEMENT_LIMIT,
            "settlement ({}) used {} compute units",
            s.case,
            s.total
        );
        let names: Vec<&str> = s.instructions.iter().map(|(n, _)| n.as_str()).collect();
        let held = HELD_CASES.contains(&s.case);
        let expected: &[&str] = if held {
            &[
                "gate_payment_strict",
                "transfer_checked",
                "transfer_checked",
                "emit_feedback",
            ]
        } else {
            &["gate_payment_strict", "transfer_checked", "emit_feedback"]
        };
        assert_eq!(names, expected, "{}", s.case);
        assert!(s.instructions.iter().all(|(_, units)| *units > 0), "{s:?}");
    }
}

/// The budget, as medians on the SBF builds: `gate_payment` at most 11 000 compute units, and
/// our own part of a settlement (all but the token programs' transfers and the registry's
/// and engine's work) at most 30 000.
const GATE_PAYMENT_BUDGET: u64 = 11_000;
const OWN_BUDGET: u64 = 30_000;
/// A held settlement's own part (its second transfer is the token program's): at most
/// 35 000 (docs/holdback.md).
const HELD_OWN_BUDGET: u64 = 35_000;
/// Tours per check: every tour draws new keys, and a PDA's bump search, so an instruction's
/// units, depends on them. In bench-cu runs gate_payment's median (25 runs: five cases a
/// tour) sits about 740 under its budget, above the 90th percentile of its runs; the own part
/// of the largest vault-funded case, the highest, is about 1 570 under it when no search tries
/// a second bump, and grows about 460 with each bump the feedback log's search tries after the
/// first, so the median of five reaches the budget only when three of them try four more
/// (about 1 check in 500).
const TOURS: usize = 5;

#[tokio::test]
async fn the_gate_stays_within_its_compute_unit_budget() {
    if Programs::from_env() == Programs::Native {
        eprintln!("native programs: compute units not metered (set SBF_OUT_DIR)");
        return;
    }
    let mut report = Report::default();
    for _ in 0..TOURS {
        report.merge(tour().await);
    }
    // A build with compute-unit probes costs more than the deployed one.
    assert!(
        report.profiles.is_empty(),
        "these SBF builds carry compute-unit probes (feature cu-profile): measure the budget \
         on the builds of `tools/sbf/build` without SBF_PROFILE"
    );
    println!("{}", report.budget_line());
    let gate_payment = report.gate_payment_median().expect("gate_payment ran");
    assert!(
        gate_payment <= GATE_PAYMENT_BUDGET,
        "gate_payment: median {gate_payment} compute units"
    );
    for case in BUDGET_CASES {
        let own = report
            .settlement_median(case, Settlement::own)
            .unwrap_or_else(|| panic!("the tour never settled {case}"));
        assert!(
            own <= OWN_BUDGET,
            "{case}: own part median {own} compute units"
        );
    }
    for case in HELD_CASES {
        let own = report
            .settlement_median(case, Settlement::own)
            .unwrap_or_else(|| panic!("the tour never settled {case}"));
        assert!(
            own <= HELD_OWN_BUDGET,
            "{case}: own part median {own} compute units"
        );
    }
}
