//! A pull's compute units and size: its own part within its budget on the SBF builds, and
//! the largest pull in one packet.

use super::*;
use trust_gate_localnet::native::Programs;
use trust_gate_program_tests::compute_units::{largest_pull, pull_tour, Report};

/// A pull's own part (docs/compute-units.md: the whole transaction but the Subscriptions
/// program's pull, its token transfer included, and the registry's and engine's work), as
/// a median on the SBF builds: at most 30 000 units.
const PULL_OWN_BUDGET: u64 = 30_000;
/// Tours per check: every tour draws new keys, so its bump searches differ.
const TOURS: usize = 5;

#[tokio::test]
async fn a_pulls_own_part_stays_within_its_budget() {
    if Programs::from_env() == Programs::Native {
        eprintln!("native programs: compute units not metered (set SBF_OUT_DIR)");
        return;
    }
    let mut report = Report::default();
    for _ in 0..TOURS {
        report.merge(pull_tour().await);
    }
    assert_eq!(report.pulls.len(), TOURS);
    for p in &report.pulls {
        // The Subscriptions program ran and was metered inside each pull.
        assert!(p.subscriptions > 0 && p.total > p.subscriptions, "{p:?}");
    }
    let own = report.pull_own_median().expect("pulls ran");
    println!(
        "pull own part: median {own} compute units ({report:?})",
        report = report.pulls
    );
    assert!(own <= PULL_OWN_BUDGET, "pull own part median {own}");
}

/// The largest pull (the largest policy, both attestations, the approval) with a unit limit
/// and price before it fits in one packet as a v0 transaction whose static accounts come from
/// the facilitator's lookup table, and lands.
#[tokio::test]
async fn the_largest_pull_fits_a_packet_as_v0_with_a_lookup_table() {
    use trust_gate_client::settle::ComputeBudget;
    const PACKET_LIMIT: usize = 1232;
    let mut w = world().await;
    let attestor = w.attestor().await;
    let (pull, _, _) = largest_pull(&mut w, &mut Report::default(), &attestor).await;
    let mut ixs = ComputeBudget {
        unit_limit: Some(400_000),
        unit_price_micro_lamports: Some(5_000_000),
    }
    .instructions();
    ixs.push(pull);
    let facilitator = w.facilitator.insecure_clone();
    // What every pull of this facilitator and mint shares (the programs only invoked by
    // others may come from the table; the top-level ones may not).
    let s = sdk();
    let statics = vec![
        policy_vault::ID,
        anchor_lang::system_program::ID,
        w.mint,
        anchor_spl::token::ID,
        subscriptions::PROGRAM_ID,
        subscriptions::EVENT_AUTHORITY,
        s.pda.evaluate_signer(),
        s.pda.atom_config(),
        s.pda.registry_cpi_authority(),
        s.ids.agent_registry,
        s.ids.reputation_engine,
        w.collection.pubkey(),
        s.pda.gate_authority(&facilitator.pubkey()),
    ];
    let table = w.lookup_table(&facilitator, statics).await;
    let (legacy_size, tx) = w.v0_transaction(&ixs, &facilitator, &[], table).await;
    let size = bincode::serialize(&tx).unwrap().len();
    println!("largest pull: legacy {legacy_size} bytes, v0 + lookup table {size} bytes (limit {PACKET_LIMIT})");
    assert!(
        legacy_size > PACKET_LIMIT,
        "the reason for the table: {legacy_size}"
    );
    assert!(size <= PACKET_LIMIT, "v0 largest pull is {size} bytes");
    trust_gate_program_tests::process(&mut w.ctx, tx)
        .await
        .unwrap();
}
