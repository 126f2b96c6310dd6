//! Many concurrent payments of one payer over its cap, through the demo and the facilitator:
//! the facilitator settles one payer's payments one at a time, so every refusal is the gate's
//! Deny found by simulation (named, free) and nothing fails on chain.

use crate::services::{self, Services};
use crate::settle::payer;
use futures::future::join_all;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use trust_gate_client::decode::{self, PolicyAccount, VelocityLedger};
use trust_gate_migrations::demo;
use trust_gate_pay::exact::PayOutcome;

/// The facilitator's lamports.
pub async fn fee_payer_balance(s: &Services) -> u64 {
    s.env
        .rpc
        .get_balance(&s.env.world.facilitator.pubkey())
        .await
        .unwrap()
}

/// The demo policy's velocity ledger and day counter of payer agent `asset` both hold
/// `amount`.
pub async fn assert_counted(s: &Services, asset: &Pubkey, amount: u64) {
    let key = s.env.b.pda.velocity(asset, demo::POLICY_ID);
    let acc = trust_gate_client::chain::account(&s.env.rpc, &key)
        .await
        .unwrap()
        .unwrap();
    let ledger: VelocityLedger = decode::account("VelocityLedger", &acc.data).unwrap();
    assert_eq!(ledger.cumulative, amount);
    let key = s.env.b.pda.policy(asset, demo::POLICY_ID);
    let acc = trust_gate_client::chain::account(&s.env.rpc, &key)
        .await
        .unwrap()
        .unwrap();
    let policy: PolicyAccount = decode::account("PolicyAccount", &acc.data).unwrap();
    assert_eq!(policy.day_spent, amount);
}

/// `trust-gate pay` of the demo resource as the tier-3 payer.
async fn pay_once(s: &Services) -> PayOutcome {
    s.pay(Some(s.env.world.payer(3).unwrap().asset()), payer(s))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_payments_over_the_cap_never_fail_on_chain() {
    // 115 settlements of one payer at once: past the default per-payer rate and waiting bound.
    let s = services::start_with(services::unthrottled_payers).await;
    let asset = s.env.world.payer(3).unwrap().asset();
    let source = s.env.settlement(3, 1, [0; 32]).await.source_token;
    // The velocity rule of the demo policy admits this many payments at the demo price.
    let cap =
        (demo::payer_policy(s.env.world.mint()).velocity_max_in_window / demo::PRICE) as usize;

    // One settlement first, to measure what a settlement costs the facilitator (two
    // signatures and the feedback log's rent; every settlement costs the same).
    let before = fee_payer_balance(&s).await;
    assert!(matches!(pay_once(&s).await, PayOutcome::Paid { .. }));
    let unit_cost = before - fee_payer_balance(&s).await;

    let tokens = s.env.token_balance(&source).await;
    let lamports = fee_payer_balance(&s).await;
    let attempts = cap + 15;
    let outcomes = join_all((0..attempts).map(|_| pay_once(&s))).await;

    let mut paid = 0usize;
    let mut refusals = Vec::new();
    for o in &outcomes {
        match o {
            PayOutcome::Paid { .. } => paid += 1,
            // Refused when the challenge was asked for (the demo's /verify said Deny).
            PayOutcome::Refused { reason_name, .. } => refusals.push(reason_name.clone()),
            // Refused at settlement: the facilitator's reason.
            PayOutcome::Failed { response, body, .. } => refusals.push(
                response
                    .as_ref()
                    .and_then(|r| r.error_reason.clone())
                    .or_else(|| body.json()["errorReason"].as_str().map(String::from)),
            ),
            PayOutcome::NotRequired { status, .. } => panic!("served without payment: {status}"),
            PayOutcome::Held { approval_id, .. } => panic!("held for approval {approval_id}"),
        }
    }
    println!(
        "{attempts} concurrent payments: {paid} settled, {} refused",
        refusals.len()
    );
    // Exactly the cap settled (one was spent before), the rest refused with the Deny's name.
    assert_eq!(paid, cap - 1, "{refusals:?}");
    for r in &refusals {
        assert_eq!(
            r.as_deref(),
            Some("VelocityWindowExceeded"),
            "every refusal names the gate's reason: {refusals:?}"
        );
    }

    // The counters are the sum of what settled; tokens moved for exactly those.
    assert_counted(&s, &asset, (paid as u64 + 1) * demo::PRICE).await;
    assert_eq!(
        s.env.token_balance(&source).await,
        tokens - paid as u64 * demo::PRICE
    );
    // No settlement failed on chain: the facilitator paid for exactly the ones that landed
    // (a failed transaction would still have cost it its signatures' fee).
    assert_eq!(
        lamports - fee_payer_balance(&s).await,
        paid as u64 * unit_cost,
        "the facilitator paid for a transaction that failed on chain"
    );
}
