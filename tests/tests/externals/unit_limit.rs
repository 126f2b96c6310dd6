//! The compute-unit limit the SDK requests for a settlement (`trust_gate_client::units`),
//! checked against what settlements on the real registry and engine use: never below it, and
//! not far above (the scheduler reserves the limit, not the use), both the limit it computes
//! from the settlement's shape and the one it sizes from a simulation.

use crate::common::*;
use crate::fixtures::real_world;
use solana_sdk::signature::Signer;
use trust_gate_client::settle::{ComputeBudget, Funding, TokenProgram};
use trust_gate_client::units::{
    limit_for_use, Shape, EXTERNAL_HEADROOM_PERCENT, MARGIN, MAX_UNIT_LIMIT, PDA_TRY,
    REGISTRY_RATED,
};
use trust_gate_localnet::Programs;
use trust_gate_program_tests::world::{sdk, World};
use trust_gate_program_tests::{execute, payment_id, transaction_paid_by};

/// How far above its use the limit of a settlement may be: the margin, the headroom on the
/// registry's and engine's part, the bumps the limit counts for searches that do not run (the
/// accounts exist), and the rounding up of the measured parts.
const SLACK: u64 = MARGIN as u64
    + (REGISTRY_RATED * EXTERNAL_HEADROOM_PERCENT / 100) as u64
    + 8 * PDA_TRY as u64
    + 4_000;

#[tokio::test]
async fn externals_the_sdk_unit_limit_is_just_above_what_a_settlement_uses() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let payer = payer(&mut w).await;
    let ids = sdk().ids;
    for rated in [false, true] {
        // Several payees and payments: the bumps of each payee's stats (which the registry
        // searches for too) and of each feedback log differ.
        for _ in 0..6 {
            let payee = w.register_agent_with(true, rated).await;
            w.token_account(&payee.owner.pubkey(), 0).await;
            // The engine counts feedback within 3 slots of the last as a burst.
            w.advance_slots(10).await;
            let pay = payment_id();
            let shape = Shape {
                funding: Funding::Wallet,
                token_program: TokenProgram::SplToken,
                payee_rated: rated,
                held: false,
                payer_asset: payer.asset(),
                payee_asset: payee.asset(),
                facilitator: w.facilitator.pubkey(),
                payment_id_hash: pay,
            };
            let limit = shape.unit_limit(&ids);
            let simulated = simulated_use(&mut w, &payer, &payee, pay).await;
            let mut ixs = ComputeBudget {
                unit_limit: Some(limit),
                unit_price_micro_lamports: None,
            }
            .instructions();
            ixs.extend(w.settlement(&payer, &payee, AMOUNT, pay).await);
            let (used, limit) = settle_with(&mut w, &payer, &ixs, limit).await;
            let sized = u64::from(limit_for_use(simulated));
            println!(
                "payee rated: {rated}: used {used}, limit {limit}, simulated {simulated}, sized {sized}"
            );
            // Natively our programs are builtins, not metered: only the SBF builds use what
            // a cluster's do.
            if Programs::from_env() != Programs::Native {
                assert!(
                    used <= limit && limit - used <= SLACK,
                    "payee rated: {rated}: used {used} of the limit {limit}"
                );
                assert!(
                    used <= sized && sized - used <= used / 10 + 3_000,
                    "payee rated: {rated}: used {used} of the simulated limit {sized}"
                );
            }
        }
    }
}

/// Sends the settlement; the units it used and the limit it asked for.
async fn settle_with(
    w: &mut World,
    payer: &trust_gate_program_tests::world::Agent,
    ixs: &[solana_sdk::instruction::Instruction],
    limit: u32,
) -> (u64, u64) {
    let facilitator = w.facilitator.insecure_clone();
    let tx = transaction_paid_by(&mut w.ctx, ixs, &facilitator, &[&payer.owner]).await;
    let meta = execute(&mut w.ctx, tx)
        .await
        .unwrap_or_else(|e| panic!("a settlement within the SDK's limit {limit}: {e:?}"));
    (meta.compute_units_consumed, u64::from(limit))
}

/// What the settlement paying `pay` uses in a simulation with the largest limit, as a
/// client with an RPC measures it before asking for a limit (nothing is written).
async fn simulated_use(
    w: &mut World,
    payer: &trust_gate_program_tests::world::Agent,
    payee: &trust_gate_program_tests::world::Agent,
    pay: [u8; 32],
) -> u64 {
    let mut ixs = ComputeBudget {
        unit_limit: Some(MAX_UNIT_LIMIT),
        unit_price_micro_lamports: None,
    }
    .instructions();
    ixs.extend(w.settlement(payer, payee, AMOUNT, pay).await);
    let facilitator = w.facilitator.insecure_clone();
    let tx = transaction_paid_by(&mut w.ctx, &ixs, &facilitator, &[&payer.owner]).await;
    let sim = w
        .ctx
        .banks_client
        .simulate_transaction(tx)
        .await
        .expect("the simulation runs");
    assert!(
        matches!(sim.result, Some(Ok(()))),
        "the settlement simulates: {:?}",
        sim.result
    );
    sim.simulation_details
        .expect("simulation details")
        .units_consumed
}
