//! The adversarial table of the program spec, one test per row at least. Rows proven in
//! other modules are named here with where they live:
//! - squatting an agent's authority: `vault::init_authority_rejects_a_stranger_squatting_the_agent`
//! - stranger calling evaluate: `vault::evaluate_cannot_be_called_by_a_stranger`
//! - re-initialisation: `vault::init_authority_twice_fails`, `vault::init_killswitch_directly_and_twice`,
//!   `vault::init_policy_creates_policy_ledger_and_killswitch`, `decisions::init_authority_once_per_facilitator`
//! - kill switch threshold > 1 with too few members: `vault::killswitch_threshold_and_state`
//! - expired / revoked / renewed attestations: `decisions::attestation_outcomes_11_12_13_14_and_renewal`
//! - dispute without settlement: `settlement::dispute_needs_a_settled_payment_and_happens_once`
//! - namespace hash that does not match its name: `validation_registry` module

use anchor_lang::error::ErrorCode as Anchor;
use gate::errors::GateError as G;
use gate::state::FeedbackLog;
use policy_vault::engine::{Decision, DenyReason};
use policy_vault::state::{PolicyAccount, PolicyParams};
use solana_sdk::account::AccountSharedData;
use solana_sdk::signature::Signer;
use trust_gate_program_tests::world::{open_policy, pda, Attestations, World};
use trust_gate_program_tests::{
    assert_code, fetch, funded_keypair, payment_id, raw_account, replace_account, send, send_tx,
};

fn g(e: G) -> u32 {
    u32::from(e)
}

#[tokio::test]
async fn a_stranger_cannot_exhaust_someone_elses_budget() {
    let mut w = World::new().await;
    let (victim, payee) = w.parties().await;
    let stranger = funded_keypair(&mut w.ctx).await;
    let stranger_src = w.token_account(&stranger.pubkey(), 100_000_000).await;
    let dest = w.token_account(&payee.owner.pubkey(), 0).await;
    let pay = payment_id();
    let victim_as = |w: &World, signer: &anchor_lang::prelude::Pubkey| {
        let mut strict = w.strict_ix(&victim, &payee, 5_000_000, dest, Attestations::default());
        // payer_signer is the first account after the nested evaluation accounts.
        replace_account(&mut strict, &victim.owner.pubkey(), *signer);
        strict
    };
    // The stranger pays with its own tokens but names the victim's policy.
    let ixs = [
        victim_as(&w, &stranger.pubkey()),
        w.transfer_ix(&stranger_src, &dest, &stranger.pubkey(), 5_000_000),
        w.emit_feedback_ix(pay, &payee.asset(), 90, 5_000_000),
    ];
    let facilitator = w.facilitator.insecure_clone();
    assert_code(
        send_tx(&mut w.ctx, &ixs, &facilitator, &[&stranger]).await,
        g(G::PayerSignerMismatch),
    );
    // Naming the victim's owner as payer_signer needs the victim's signature.
    let mut ixs2 = ixs.clone();
    ixs2[0] = w.strict_ix(&victim, &payee, 5_000_000, dest, Attestations::default());
    let mut tx =
        solana_sdk::transaction::Transaction::new_with_payer(&ixs2, Some(&facilitator.pubkey()));
    let blockhash = w.ctx.banks_client.get_latest_blockhash().await.unwrap();
    let signed = tx.try_partial_sign(&[&facilitator, &stranger], blockhash);
    assert!(signed.is_ok());
    assert!(
        trust_gate_program_tests::process(&mut w.ctx, tx)
            .await
            .is_err(),
        "unsigned victim key must not pass"
    );
    // Even if the victim's owner signs the gate, the transfer must be authorized by it too.
    assert_code(
        send_tx(&mut w.ctx, &ixs2, &facilitator, &[&stranger, &victim.owner]).await,
        g(G::TransferAuthorityMismatch),
    );
    assert_eq!(w.counters(&victim).await.2, 0);
}

#[tokio::test]
async fn a_substituted_reputation_account_is_a_hard_error() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let platinum = w.payee(4, None).await;
    // Pass a tier-4 agent's stats as the payee's.
    let mut ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1,
        w.mint,
        1,
        Attestations::default(),
    );
    replace_account(
        &mut ix,
        &pda::stats(&payee.asset()),
        pda::stats(&platinum.asset()),
    );
    assert_code(
        send(&mut w.ctx, &[ix.clone()], &[]).await,
        Anchor::ConstraintSeeds as u32,
    );
    // Or the payer's own stats twice (duplicate accounts).
    replace_account(
        &mut ix,
        &pda::stats(&platinum.asset()),
        pda::stats(&payer.asset()),
    );
    assert_code(
        send(&mut w.ctx, &[ix], &[]).await,
        Anchor::ConstraintSeeds as u32,
    );
}

#[tokio::test]
async fn a_foreign_policy_or_ledger_pda_is_rejected() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let other = w.payer_with_policy(3, open_policy(w.mint)).await;
    for swap in [
        pda::policy(&other.asset(), 1),
        pda::velocity(&other.asset(), 1),
        pda::killswitch(&other.asset()),
    ] {
        let original = match swap {
            k if k == pda::policy(&other.asset(), 1) => pda::policy(&payer.asset(), 1),
            k if k == pda::velocity(&other.asset(), 1) => pda::velocity(&payer.asset(), 1),
            _ => pda::killswitch(&payer.asset()),
        };
        let mut ix = w.gate_payment_ix(
            &payer.asset(),
            &payee.asset(),
            1,
            w.mint,
            1,
            Attestations::default(),
        );
        replace_account(&mut ix, &original, swap);
        assert_code(
            send(&mut w.ctx, &[ix], &[]).await,
            Anchor::ConstraintSeeds as u32,
        );
    }
    // The policy passed as the ledger (same owner, other type): wrong discriminator or seeds.
    let mut ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1,
        w.mint,
        1,
        Attestations::default(),
    );
    replace_account(
        &mut ix,
        &pda::velocity(&payer.asset(), 1),
        pda::policy(&payer.asset(), 1),
    );
    assert!(send(&mut w.ctx, &[ix], &[]).await.is_err());
}

#[tokio::test]
async fn an_account_with_the_wrong_owner_is_rejected() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    // Copy the real policy's bytes into an account owned by another program at the same address.
    let real = raw_account(&mut w.ctx, &pda::policy(&payer.asset(), 1))
        .await
        .unwrap();
    let mut forged = AccountSharedData::new(
        real.lamports,
        real.data.len(),
        &anchor_lang::prelude::Pubkey::new_unique(),
    );
    forged.set_data_from_slice(&real.data);
    w.ctx.set_account(&pda::policy(&payer.asset(), 1), &forged);
    let ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1,
        w.mint,
        1,
        Attestations::default(),
    );
    assert_code(
        send(&mut w.ctx, &[ix], &[]).await,
        Anchor::AccountOwnedByWrongProgram as u32,
    );
}

#[tokio::test]
async fn the_acceptance_policy_cannot_be_omitted_or_swapped() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(1, open_policy(w.mint)).await;
    let strict_payee = w
        .payee(
            3,
            Some(trust_gate_program_tests::world::min_tier_acceptance(2)),
        )
        .await;
    let lax_payee = w.payee(3, None).await;
    assert_eq!(
        w.decide(&payer, &strict_payee, 1, Attestations::default())
            .await,
        Decision::Deny(DenyReason::CounterpartyTierBelowMin)
    );
    // Passing the address of an agent that has no acceptance policy instead.
    let mut ix = w.gate_payment_ix(
        &payer.asset(),
        &strict_payee.asset(),
        1,
        w.mint,
        1,
        Attestations::default(),
    );
    replace_account(
        &mut ix,
        &pda::acceptance(&strict_payee.asset()),
        pda::acceptance(&lax_payee.asset()),
    );
    assert_code(
        send(&mut w.ctx, &[ix], &[]).await,
        Anchor::ConstraintSeeds as u32,
    );
}

#[tokio::test]
async fn omitting_an_attestation_never_allows() {
    let mut w = World::new().await;
    let cap = w.register_namespace("kyc.tier-1.v1").await;
    let p = PolicyParams {
        kinds: 0x10,
        required_capability: cap,
        ..open_policy(w.mint)
    };
    let payer = w.payer_with_policy(3, p).await;
    let payee = w.payee(3, None).await;
    assert!(matches!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        Decision::RequireValidation { .. }
    ));
    // A strict settlement without the attestation fails with ValidationRequired.
    w.token_account(&payer.owner.pubkey(), 10_000_000).await;
    let ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    assert_code(
        w.send_settlement(&payer, &ixs).await,
        g(G::ValidationRequired),
    );
    // An account that is not a registry attestation (e.g. the payee's stats) is refused.
    let ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1,
        w.mint,
        1,
        Attestations {
            payer: None,
            payee: Some(pda::stats(&payee.asset())),
            payee_list: None,
        },
    );
    assert_code(
        send(&mut w.ctx, &[ix], &[]).await,
        Anchor::AccountOwnedByWrongProgram as u32,
    );
}

#[tokio::test]
async fn feedback_cannot_claim_settlement_for_a_payment_that_never_happened() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let dest = w.token_account(&payee.owner.pubkey(), 0).await;
    let src = w.token_account(&payer.owner.pubkey(), 0).await;
    let facilitator = w.facilitator.insecure_clone();
    let f = facilitator.pubkey();
    // The read-only gate in first position mimics the layout without committing anything.
    let pay = payment_id();
    let fake = [
        w.gate_payment_ix(
            &payer.asset(),
            &payee.asset(),
            1,
            w.mint,
            1,
            Attestations::default(),
        ),
        w.transfer_ix(&src, &dest, &payer.owner.pubkey(), 1),
        w.emit_feedback_ix(pay, &payee.asset(), 100, 1_000_000_000),
    ];
    assert_code(
        send_tx(&mut w.ctx, &fake, &facilitator, &[&payer.owner]).await,
        g(G::FeedbackNotSettled),
    );
    assert!(raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .is_none());
    // Without any transfer: [emit_feedback] alone is refused too.
    let pay2 = payment_id();
    assert_code(
        w.send(
            &[w.emit_feedback_ix(pay2, &payee.asset(), 100, 1)],
            &[&facilitator],
        )
        .await,
        g(G::FeedbackNotSettled),
    );
    let p: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&payer.asset(), 1))
        .await
        .unwrap();
    assert_eq!(p.day_spent, 0);
}

#[tokio::test]
async fn nobody_can_front_run_a_facilitators_feedback_log() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let stranger = funded_keypair(&mut w.ctx).await;
    let pay = payment_id();
    let ixs = w.settlement(&payer, &payee, 1_000_000, pay).await;
    // The stranger signs in the facilitator's place for the facilitator's log address.
    let mut forged = ixs.clone();
    forged[2].accounts[0].pubkey = stranger.pubkey();
    assert_code(
        send_tx(&mut w.ctx, &forged, &stranger, &[&payer.owner]).await,
        g(G::FacilitatorMismatch),
    );
    // The facilitator's key without its signature.
    let mut unsigned = ixs.clone();
    unsigned[2].accounts[0].is_signer = false;
    let fee_payer = w.ctx.payer.insecure_clone();
    assert_code(
        send_tx(&mut w.ctx, &unsigned, &fee_payer, &[&payer.owner]).await,
        Anchor::AccountNotSigner as u32,
    );
    // The real facilitator still records it.
    w.send_settlement(&payer, &ixs).await.unwrap();
    let f = w.facilitator.pubkey();
    assert!(raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .is_some());
}

#[tokio::test]
async fn feedback_accounts_must_belong_to_the_payee() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let other = w.payee(3, None).await;
    // One account of another agent among the payee's: the PDA constraints refuse it.
    for (from, to) in [
        (pda::agent(&payee.asset()), pda::agent(&other.asset())),
        (payee.asset(), other.asset()),
        (pda::stats(&payee.asset()), pda::stats(&other.asset())),
    ] {
        let mut ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
        replace_account(&mut ixs[2], &from, to);
        assert_code(
            w.send_settlement(&payer, &ixs).await,
            Anchor::ConstraintSeeds as u32,
        );
    }
    // All of another agent's accounts while the arguments name the payee.
    let mut ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    replace_account(
        &mut ixs[2],
        &pda::agent(&payee.asset()),
        pda::agent(&other.asset()),
    );
    replace_account(&mut ixs[2], &payee.asset(), other.asset());
    replace_account(
        &mut ixs[2],
        &pda::stats(&payee.asset()),
        pda::stats(&other.asset()),
    );
    assert_code(w.send_settlement(&payer, &ixs).await, g(G::AssetMismatch));
}

#[tokio::test]
async fn overflow_sized_payments_deny_instead_of_wrapping() {
    let mut w = World::new().await;
    let p = PolicyParams {
        kinds: 0x02 | 0x04,
        per_tx_cap: u64::MAX,
        daily_cap: u64::MAX,
        weekly_cap: u64::MAX,
        velocity_window_secs: u64::MAX,
        velocity_max_in_window: u64::MAX,
        tier0_decay_bps: 10_000,
        ..open_policy(w.mint)
    };
    let payer = w.payer_with_policy(3, p).await;
    let payee = w.payee(3, None).await;
    assert_eq!(
        w.decide(&payer, &payee, u64::MAX, Attestations::default())
            .await,
        Decision::Allow
    );
    // Commit one unit, then u64::MAX more would overflow the day counter: denied.
    w.token_account(&payer.owner.pubkey(), 10).await;
    let ixs = w.settlement(&payer, &payee, 1, payment_id()).await;
    w.send_settlement(&payer, &ixs).await.unwrap();
    assert_eq!(
        w.decide(&payer, &payee, u64::MAX, Attestations::default())
            .await,
        Decision::Deny(DenyReason::SpendingDailyExceeded)
    );
}

#[tokio::test]
async fn lamports_sent_to_a_pda_in_advance_cannot_block_its_creation() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    let (payer, payee) = w.parties().await;
    let pay = payment_id();
    let f = w.facilitator.pubkey();
    let cap = trust_gate_program_tests::world::capability_hash("kyc.tier-1.v1");
    // A griefer funds the addresses an agent's authority, policy, kill switch, a payment's
    // feedback log and a namespace will live at.
    for address in [
        pda::policy_authority(&agent.asset()),
        pda::policy(&agent.asset(), 1),
        pda::killswitch(&agent.asset()),
        pda::feedback_log(&f, &pay),
        validation_registry::utils::pda::namespace(&cap).0,
    ] {
        trust_gate_program_tests::fund(&mut w.ctx, &address, 1_000_000).await;
    }
    w.init_authority(&agent).await;
    w.init_policy(&agent, 1, open_policy(w.mint)).await.unwrap();
    let ixs = w.settlement(&payer, &payee, 1_000_000, pay).await;
    w.send_settlement(&payer, &ixs).await.unwrap();
    assert_eq!(w.register_namespace("kyc.tier-1.v1").await, cap);
    let log: FeedbackLog = fetch(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .unwrap();
    assert_eq!(log.payee_asset, payee.asset());
    let policy: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&agent.asset(), 1))
        .await
        .unwrap();
    assert_eq!(policy.asset, agent.asset());
    // The griefer's lamports stay in the account (it is simply rent-exempt sooner).
    let account = raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .unwrap();
    assert!(account.lamports >= 1_000_000);
}

/// An agent sold on MPL Core without the registry's `sync_owner`: the seller (and the agent
/// wallet the seller set) can no longer pay as the agent or receive its payments; the buyer
/// can. The gate reads the asset's live owner, not the registry's cached one.
#[tokio::test]
async fn a_sold_agent_pays_and_is_paid_only_as_its_buyer() {
    let mut w = World::new().await;
    let outcome = trust_gate_program_tests::transfers::sold_agents(&mut w).await;
    trust_gate_program_tests::transfers::check(&outcome);
}

/// The live owner is believed only from MPL Core: an account at the asset's address that
/// another program owns (which a cluster can never produce, but the gate does not rely on
/// that) naming the attacker as owner makes the gate fail, not let the attacker pay.
#[tokio::test]
async fn an_asset_not_owned_by_mpl_core_names_no_owner() {
    let mut w = World::new().await;
    let (victim, payee) = w.parties().await;
    let attacker = funded_keypair(&mut w.ctx).await;
    let source = w.token_account(&attacker.pubkey(), 10_000_000).await;
    let dest = w.token_account(&payee.owner.pubkey(), 0).await;
    let mut asset = raw_account(&mut w.ctx, &victim.asset()).await.unwrap();
    asset.data[1..33].copy_from_slice(attacker.pubkey().as_ref());
    asset.owner = trust_gate_program_common::external::ids::AGENT_REGISTRY;
    w.ctx
        .set_account(&victim.asset(), &AccountSharedData::from(asset));
    let mut strict = w.strict_ix(&victim, &payee, 1_000_000, dest, Attestations::default());
    replace_account(&mut strict, &victim.owner.pubkey(), attacker.pubkey());
    let ixs = [
        strict,
        w.transfer_ix(&source, &dest, &attacker.pubkey(), 1_000_000),
        w.emit_feedback_ix(payment_id(), &payee.asset(), 90, 1_000_000),
    ];
    let facilitator = w.facilitator.insecure_clone();
    assert_code(
        send_tx(&mut w.ctx, &ixs, &facilitator, &[&attacker]).await,
        g(G::AgentAssetInvalid),
    );
}
