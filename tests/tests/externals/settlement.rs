//! Registration, settlements, disputes and a paused engine on the real programs.

use crate::common::*;
use crate::fixtures::real_world;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_localnet::externals::admin;
use trust_gate_program_common::external::ids;
use trust_gate_program_tests::raw_account;
use trust_gate_program_tests::world::{pda, sdk, Agent};

#[tokio::test]
async fn externals_agents_register_through_the_gate_on_real_mpl_core() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let owner = trust_gate_program_tests::funded_keypair(&mut w.ctx).await;
    let asset = Keypair::new();
    let ix = sdk().register_agent_via_cpi(
        &owner.pubkey(),
        &asset.pubkey(),
        &w.collection.pubkey(),
        "ipfs://agent".into(),
    );
    w.send(&[ix], &[&owner, &asset]).await.unwrap();
    // MPL Core made the asset (BaseAssetV1: key 1, owner, update authority = the collection).
    let core = raw_account(&mut w.ctx, &asset.pubkey())
        .await
        .expect("asset");
    assert_eq!(core.owner, ids::MPL_CORE);
    assert_eq!(core.data[0], 1, "AssetV1");
    assert_eq!(&core.data[1..33], owner.pubkey().as_ref());
    assert_eq!(core.data[33], 2, "update authority: a collection");
    assert_eq!(&core.data[34..66], w.collection.pubkey().as_ref());
    // The registry made the AgentAccount, the engine the stats.
    let agent = raw_account(&mut w.ctx, &pda::agent(&asset.pubkey()))
        .await
        .expect("AgentAccount");
    assert_eq!(agent.owner, ids::AGENT_REGISTRY);
    assert_eq!(&agent.data[72..104], owner.pubkey().as_ref());
    assert_eq!(agent.data[137], 1, "reputation enabled");
    let registered = Agent { owner, asset };
    assert_eq!(engine_feedback(&mut w, &registered).await, Some((0, 0)));
}

#[tokio::test]
async fn externals_the_mcp_self_heal_cascade_registers_and_sets_up_an_agent_in_one_transaction() {
    let Some(mut w) = real_world().await else {
        return;
    };
    // What `gate_init_policy` sends for a new agent: registration through the gate (MPL Core
    // asset, AgentAccount, engine stats), the policy authority, the kill switch, the policy.
    let owner = trust_gate_program_tests::funded_keypair(&mut w.ctx).await;
    let asset = Keypair::new();
    let (o, a) = (owner.pubkey(), asset.pubkey());
    let b = sdk();
    let ixs = [
        b.register_agent_via_cpi(&o, &a, &w.collection.pubkey(), "ipfs://agent".into()),
        b.init_authority(&o, &a, vec![o], 1),
        b.init_killswitch(&o, &a),
        b.init_policy(
            &o,
            &[],
            &a,
            1,
            trust_gate_program_tests::world::open_policy(w.mint),
            Default::default(),
            0,
        ),
    ];
    w.send(&ixs, &[&owner, &asset]).await.unwrap();
    for (address, program) in [
        (a, ids::MPL_CORE),
        (pda::agent(&a), ids::AGENT_REGISTRY),
        (pda::stats(&a), ids::REPUTATION_ENGINE),
        (pda::policy_authority(&a), policy_vault::ID),
        (pda::killswitch(&a), policy_vault::ID),
        (pda::policy(&a, 1), policy_vault::ID),
    ] {
        let account = raw_account(&mut w.ctx, &address).await.expect("created");
        assert_eq!(account.owner, program, "{address}");
    }
    // The new agent pays at once.
    let agent = Agent { owner, asset };
    w.token_account(&agent.owner.pubkey(), 10 * AMOUNT).await;
    let payee = w.register_agent_with(true, false).await;
    settle(&mut w, &agent, &payee).await.expect("settles");
}

#[tokio::test]
async fn externals_a_payee_without_engine_stats_is_paid() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let payer = payer(&mut w).await;
    let payee = w.register_agent_with(true, false).await;
    settle(&mut w, &payer, &payee).await.expect("settles");
    assert_eq!(balance(&mut w, &payee.owner).await, AMOUNT);
    let (digest, count) = registry_feedback(&mut w, &payee).await;
    assert_eq!(count, 1, "the registry recorded the feedback");
    assert_ne!(digest, [0; 32]);
    assert_eq!(engine_feedback(&mut w, &payee).await, None);
}

#[tokio::test]
async fn externals_a_payee_with_engine_stats_is_paid_and_rated() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let payer = payer(&mut w).await;
    let payee = w.register_agent().await;
    settle(&mut w, &payer, &payee).await.expect("settles");
    assert_eq!(balance(&mut w, &payee.owner).await, AMOUNT);
    assert_eq!(registry_feedback(&mut w, &payee).await.1, 1);
    assert_eq!(
        engine_feedback(&mut w, &payee).await,
        Some((1, 90)),
        "the engine counted the feedback and its score"
    );
}

#[tokio::test]
async fn externals_a_payee_with_reputation_disabled_is_paid_unrated() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let payer = payer(&mut w).await;
    let payee = w.register_agent_with(false, true).await;
    settle(&mut w, &payer, &payee).await.expect("settles");
    assert_eq!(balance(&mut w, &payee.owner).await, AMOUNT);
    assert_eq!(registry_feedback(&mut w, &payee).await.1, 1);
    assert_eq!(
        engine_feedback(&mut w, &payee).await,
        Some((0, 0)),
        "the registry leaves the engine out for a reputation-disabled agent"
    );
}

#[tokio::test]
async fn externals_a_settled_payment_is_disputed() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let payer = payer(&mut w).await;
    for payee in [
        w.register_agent().await,
        w.register_agent_with(true, false).await,
    ] {
        let pay = settle(&mut w, &payer, &payee).await.expect("settles");
        w.advance_slots(10).await;
        let dispute = w.dispute_ix(&payer.owner.pubkey(), pay, &payee.asset(), [9; 32]);
        let facilitator = w.facilitator.insecure_clone();
        let owner = payer.owner.insecure_clone();
        w.send(&[dispute], &[&facilitator, &owner]).await.unwrap();
        assert_eq!(registry_feedback(&mut w, &payee).await.1, 2);
        let engine = engine_feedback(&mut w, &payee).await;
        assert!(
            engine.is_none() || engine == Some((2, 0)),
            "a dispute is a score of 0: {engine:?}"
        );
    }
}

#[tokio::test]
async fn externals_a_paused_engine_refuses_payments_to_rated_payees_only() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let payer = payer(&mut w).await;
    let rated = w.register_agent().await;
    let unrated = w.register_agent_with(true, false).await;
    let authority = w.engine_authority.insecure_clone();
    w.send(
        &[admin::set_engine_paused(&authority.pubkey(), true)],
        &[&authority],
    )
    .await
    .unwrap();
    // The engine's own error 6004 (Paused), through the registry and the gate; nothing moved.
    assert_eq!(settle(&mut w, &payer, &rated).await, Err(Some(6004)));
    assert_eq!(balance(&mut w, &rated.owner).await, 0);
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
    // A payee without stats never reaches the engine.
    settle(&mut w, &payer, &unrated).await.expect("settles");
    w.send(
        &[admin::set_engine_paused(&authority.pubkey(), false)],
        &[&authority],
    )
    .await
    .unwrap();
    settle(&mut w, &payer, &rated)
        .await
        .expect("settles once resumed");
    assert_eq!(engine_feedback(&mut w, &rated).await, Some((1, 90)));
}

#[tokio::test]
async fn externals_compute_units_of_settlements_and_disputes_are_measured() {
    let Some(real) = crate::fixtures::externals() else {
        return;
    };
    let report = trust_gate_program_tests::compute_units::real_tour(&real).await;
    assert_eq!(report.settlements.len(), 2);
    assert_eq!(report.disputes.len(), 2);
    let sbf = matches!(
        trust_gate_localnet::Programs::from_env(),
        trust_gate_localnet::Programs::Sbf(_)
    );
    for s in &report.settlements {
        // The registry and engine run as SBF always, so the feedback costs units; ours are
        // metered on their SBF builds only.
        let feedback = s.instructions.iter().find(|(i, _)| i == "emit_feedback");
        assert!(s.total > 0, "{s:?}");
        if sbf {
            assert!(feedback.is_some_and(|(_, u)| *u > 0), "{s:?}");
        }
    }
    // The registry's own units, not the whole transactions': those also carry our programs'
    // PDA bump searches, which differ with every run's random keys by more than the engine's
    // update costs.
    let (rated, unrated) = (&report.settlements[1], &report.settlements[0]);
    assert!(
        unrated.registry > 0 && rated.registry > unrated.registry,
        "the engine's update adds units inside the registry: {} vs {}",
        rated.registry,
        unrated.registry
    );
    println!("{}", report.table());
}

/// The asset sold on MPL Core without `sync_owner`: the real registry keeps the seller as its
/// cached owner and the seller's agent wallet; the gate goes by the asset's live owner.
#[tokio::test]
async fn externals_a_sold_agent_pays_and_is_paid_only_as_its_buyer() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let outcome = trust_gate_program_tests::transfers::sold_agents(&mut w).await;
    trust_gate_program_tests::transfers::check(&outcome);
}
