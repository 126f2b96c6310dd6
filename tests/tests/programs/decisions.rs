//! gate: decisions through real CPIs into policy_vault against the stand-in's accounts, and
//! the non-settlement instructions.

use anchor_lang::error::ErrorCode as Anchor;
use anchor_lang::{InstructionData, ToAccountMetas};
use gate::errors::GateError as G;
use gate::state::GateAuthority;
use policy_vault::engine::{Decision, DenyReason, Subject};
use policy_vault::errors::PolicyVaultError as E;
use policy_vault::state::{KillSwitchState, PolicyAccount, PolicyParams, VelocityLedger};
use solana_sdk::account::AccountSharedData;
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_program_common::external::{self as ext, agent_account, atom_stats};
use trust_gate_program_tests::world::{
    demo_policy, min_tier_acceptance, open_policy, pda, tier, Agent, Attestations, World,
};
use trust_gate_program_tests::{
    assert_already_in_use, assert_code, fetch, funded_keypair, raw_account, send,
};

fn deny(r: DenyReason) -> Decision {
    Decision::Deny(r)
}

#[tokio::test]
async fn demo_world_decisions_tier_0_1_deny_tier_3_allows() {
    let mut w = World::new().await;
    let service = w.payee(3, Some(min_tier_acceptance(2))).await;
    for (t, expected) in [
        (0, deny(DenyReason::CounterpartyTierBelowMin)),
        (1, deny(DenyReason::CounterpartyTierBelowMin)),
        (3, Decision::Allow),
    ] {
        let payer = w.payer_with_policy(t, demo_policy(w.mint)).await;
        let d = w
            .decide(&payer, &service, 1_000_000, Attestations::default())
            .await;
        assert_eq!(d, expected, "payer tier {t}");
        if let Decision::Deny(r) = d {
            assert_eq!(r.code(), 6);
        }
    }
}

#[tokio::test]
async fn gate_payment_is_read_only_even_when_sent() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    let ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1_000,
        w.mint,
        1,
        Attestations::default(),
    );
    // Every account is read-only: a decision takes no write lock on the payer's policy or
    // ledger (anyone flooding decisions contends for nothing).
    for key in [
        pda::policy(&payer.asset(), 1),
        pda::velocity(&payer.asset(), 1),
    ] {
        let meta = ix.accounts.iter().find(|m| m.pubkey == key).unwrap();
        assert!(!meta.is_writable, "{key} is write-locked by a decision");
    }
    assert!(ix.accounts.iter().all(|m| !m.is_writable && !m.is_signer));
    // Sent as a real transaction with those read-only accounts, it still decides.
    let tx = trust_gate_program_tests::transaction(&mut w.ctx, &[ix], &[]).await;
    let meta = trust_gate_program_tests::execute(&mut w.ctx, tx)
        .await
        .unwrap();
    let data = meta.return_data.expect("the decision").data;
    assert_eq!(Decision::from_wire(&data), Some(Decision::Allow));
    let logs = meta.log_messages;
    assert!(
        logs.iter().any(|l| l.contains("Program data: ")),
        "decision event logged: {logs:#?}"
    );
    let p: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&payer.asset(), 1))
        .await
        .unwrap();
    let v: VelocityLedger = fetch(&mut w.ctx, &pda::velocity(&payer.asset(), 1))
        .await
        .unwrap();
    assert_eq!((p.day_spent, v.cumulative), (0, 0));
}

#[tokio::test]
async fn kill_switch_denies_1() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(3, open_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        Decision::Allow
    );
    let ix = crate::vault::set_killswitch_ix(&payer.owner, &[], &payer.asset(), true);
    send(&mut w.ctx, &[ix], &[&payer.owner]).await.unwrap();
    let k: KillSwitchState = fetch(&mut w.ctx, &pda::killswitch(&payer.asset()))
        .await
        .unwrap();
    assert!(k.paused);
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        deny(DenyReason::KillSwitchEngaged)
    );
}

#[tokio::test]
async fn spending_denies_2_per_tx() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    assert_eq!(
        w.decide(&payer, &payee, 5_000_000, Attestations::default())
            .await,
        Decision::Allow
    );
    assert_eq!(
        w.decide(&payer, &payee, 5_000_001, Attestations::default())
            .await,
        deny(DenyReason::SpendingPerTxExceeded)
    );
    assert_eq!(
        w.decide(&payer, &payee, u64::MAX, Attestations::default())
            .await,
        deny(DenyReason::SpendingPerTxExceeded)
    );
}

#[tokio::test]
async fn velocity_denies_5_with_tier0_decay() {
    let mut w = World::new().await;
    let p = PolicyParams {
        kinds: 0x04,
        velocity_window_secs: 60,
        velocity_max_in_window: 1_000,
        tier0_decay_bps: 2_500,
        ..open_policy(w.mint)
    };
    let payer = w.payer_with_policy(0, p.clone()).await;
    let payee = w.payee(3, None).await;
    assert_eq!(
        w.decide(&payer, &payee, 250, Attestations::default()).await,
        Decision::Allow
    );
    assert_eq!(
        w.decide(&payer, &payee, 251, Attestations::default()).await,
        deny(DenyReason::VelocityWindowExceeded)
    );
    // A tier-1 payer gets the full cap.
    w.set_stats(&payer.asset(), tier(1)).await;
    assert_eq!(
        w.decide(&payer, &payee, 1_000, Attestations::default())
            .await,
        Decision::Allow
    );
    assert_eq!(
        w.decide(&payer, &payee, 1_001, Attestations::default())
            .await,
        deny(DenyReason::VelocityWindowExceeded)
    );
}

fn counterparty(
    min_tier: u8,
    max_risk: u8,
    min_confidence: u16,
    unrated: u8,
) -> impl Fn(anchor_lang::prelude::Pubkey) -> PolicyParams {
    move |mint| PolicyParams {
        kinds: 0x08,
        min_counterparty_tier: min_tier,
        max_counterparty_risk: max_risk,
        min_counterparty_confidence: min_confidence,
        unrated_treatment: unrated,
        ..open_policy(mint)
    }
}

#[tokio::test]
async fn counterparty_denies_6_7_8() {
    let mut w = World::new().await;
    let payer = w
        .payer_with_policy(3, counterparty(2, 40, 3_000, 0)(w.mint))
        .await;
    let payee = w.payee(3, None).await;
    let mut s = atom_stats::Stats {
        tier_immediate: 2,
        tier_confirmed: 0,
        risk_score: 40,
        confidence: 3_000,
    };
    w.set_stats(&payee.asset(), s).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        Decision::Allow
    );
    for (edit, reason) in [
        ((1, 40, 3_000), DenyReason::CounterpartyTierBelowMin),
        ((2, 41, 3_000), DenyReason::CounterpartyRiskAboveMax),
        ((2, 40, 2_999), DenyReason::CounterpartyConfidenceBelow),
    ] {
        s.tier_immediate = edit.0;
        s.risk_score = edit.1;
        s.confidence = edit.2;
        w.set_stats(&payee.asset(), s).await;
        assert_eq!(
            w.decide(&payer, &payee, 1, Attestations::default()).await,
            deny(reason)
        );
    }
}

#[tokio::test]
async fn confirmed_gate_mode_reads_the_confirmed_tier() {
    let mut w = World::new().await;
    let p = PolicyParams {
        gate_mode: 1,
        ..counterparty(2, 255, 0, 0)(w.mint)
    };
    let payer = w.payer_with_policy(3, p).await;
    let payee = w.payee(3, None).await;
    w.set_stats(
        &payee.asset(),
        atom_stats::Stats {
            tier_immediate: 4,
            tier_confirmed: 1,
            risk_score: 0,
            confidence: 0,
        },
    )
    .await;
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        deny(DenyReason::CounterpartyTierBelowMin)
    );
}

/// Overwrites an agent's stats account (what a foreign or future-layout account would be).
fn put_stats(
    w: &mut World,
    asset: &anchor_lang::prelude::Pubkey,
    owner: anchor_lang::prelude::Pubkey,
    edit: impl Fn(&mut Vec<u8>),
) {
    let mut data = vec![0u8; atom_stats::LEN];
    data[..8].copy_from_slice(&ext::discriminators::ATOM_STATS);
    data[atom_stats::TIER_IMMEDIATE] = 4;
    data[atom_stats::TIER_CONFIRMED] = 4;
    data[atom_stats::SCHEMA_VERSION] = 1;
    edit(&mut data);
    let mut account = AccountSharedData::new(10_000_000, data.len(), &owner);
    account.set_data_from_slice(&data);
    w.ctx.set_account(&pda::stats(asset), &account);
}

#[tokio::test]
async fn reputation_account_problems_deny_9_and_10() {
    let mut w = World::new().await;
    let payer = w
        .payer_with_policy(3, counterparty(1, 255, 0, 0)(w.mint))
        .await;
    let payee = w.payee(3, None).await;
    let q = payee.asset();
    put_stats(&mut w, &q, solana_sdk::pubkey::Pubkey::new_unique(), |_| {});
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        deny(DenyReason::AtomStatsWrongOwner)
    );
    put_stats(&mut w, &q, ext::ids::REPUTATION_ENGINE, |d| {
        d[atom_stats::SCHEMA_VERSION] = 2
    });
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        deny(DenyReason::AtomStatsSchemaMismatch)
    );
    put_stats(&mut w, &q, ext::ids::REPUTATION_ENGINE, |d| {
        d[atom_stats::TIER_IMMEDIATE] = 5
    });
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        deny(DenyReason::AtomStatsSchemaMismatch)
    );
    put_stats(&mut w, &q, ext::ids::REPUTATION_ENGINE, |d| {
        d[atom_stats::TIER_CANDIDATE] = 5
    });
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        deny(DenyReason::AtomStatsSchemaMismatch)
    );
    put_stats(&mut w, &q, ext::ids::REPUTATION_ENGINE, |d| d.push(0));
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        deny(DenyReason::AtomStatsSchemaMismatch)
    );
    put_stats(&mut w, &q, ext::ids::REPUTATION_ENGINE, |_| {});
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        Decision::Allow
    );
}

#[tokio::test]
async fn unrated_payee_treatments_15_allow_and_require_validation() {
    let mut w = World::new().await;
    let payee = w.register_unrated_agent().await;
    assert!(raw_account(&mut w.ctx, &pda::stats(&payee.asset()))
        .await
        .is_none());
    let deny_payer = w
        .payer_with_policy(3, counterparty(1, 255, 0, 0)(w.mint))
        .await;
    assert_eq!(
        w.decide(&deny_payer, &payee, 1, Attestations::default())
            .await,
        deny(DenyReason::UnratedTreatmentDeny)
    );
    let allow_payer = w
        .payer_with_policy(3, counterparty(1, 255, 0, 1)(w.mint))
        .await;
    assert_eq!(
        w.decide(&allow_payer, &payee, 1, Attestations::default())
            .await,
        Decision::Allow
    );
    let cap = w.register_namespace("kyc.tier-1.v1").await;
    let p = PolicyParams {
        required_capability: cap,
        ..counterparty(1, 255, 0, 2)(w.mint)
    };
    let rv_payer = w.payer_with_policy(3, p).await;
    assert_eq!(
        w.decide(&rv_payer, &payee, 1, Attestations::default())
            .await,
        Decision::RequireValidation {
            capability: cap,
            subject: Subject::Payee
        }
    );
    let attestor = w.attestor().await;
    let slot = trust_gate_program_tests::clock(&mut w.ctx).await.slot;
    let att = w.attest(&attestor, &payee.asset(), cap, slot + 1_000).await;
    let with = Attestations {
        payee: Some(att),
        payer: None,
        payee_list: None,
    };
    assert_eq!(w.decide(&rv_payer, &payee, 1, with).await, Decision::Allow);
}

#[tokio::test]
async fn attestation_outcomes_11_12_13_14_and_renewal() {
    let mut w = World::new().await;
    let cap = w.register_namespace("audit.smart-contract.v1").await;
    let other_cap = w.register_namespace("kyc.tier-1.v1").await;
    let accepted = w.attestor().await;
    let rejected = w.attestor().await;
    let p = PolicyParams {
        kinds: 0x10,
        required_capability: cap,
        accepted_attestors: [accepted.pubkey(), anchor_lang::prelude::Pubkey::default()],
        ..open_policy(w.mint)
    };
    let payer = w.payer_with_policy(3, p).await;
    let payee = w.payee(3, None).await;
    let q = payee.asset();
    let slot = trust_gate_program_tests::clock(&mut w.ctx).await.slot;
    let payee_att = |a| Attestations {
        payer: None,
        payee: Some(a),
        payee_list: None,
    };

    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        Decision::RequireValidation {
            capability: cap,
            subject: Subject::Payee
        }
    );
    let good = w.attest(&accepted, &q, cap, slot + 100).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, payee_att(good)).await,
        Decision::Allow
    );
    // 11: an attestation of another capability, or about another subject.
    let wrong_cap = w.attest(&accepted, &q, other_cap, slot + 100).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, payee_att(wrong_cap)).await,
        deny(DenyReason::AttestationMissing)
    );
    let about_payer = w.attest(&accepted, &payer.asset(), cap, slot + 100).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, payee_att(about_payer)).await,
        deny(DenyReason::AttestationMissing)
    );
    // 14: an attestor the policy does not accept.
    let by_rejected = w.attest(&rejected, &q, cap, slot + 100).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, payee_att(by_rejected)).await,
        deny(DenyReason::AttestationAttestorRejected)
    );
    // 13: revoked; renewal clears the revocation.
    w.revoke(&accepted, &q, cap).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, payee_att(good)).await,
        deny(DenyReason::AttestationRevoked)
    );
    w.attest(&accepted, &q, cap, slot + 100).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, payee_att(good)).await,
        Decision::Allow
    );
    // 12: expired (100 slots ≈ 40 s of unix time).
    w.advance_slots(200).await;
    w.advance_time(80).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, payee_att(good)).await,
        deny(DenyReason::AttestationExpired)
    );
}

#[tokio::test]
async fn acceptance_policy_requires_a_payer_attestation() {
    let mut w = World::new().await;
    let cap = w.register_namespace("kyc.tier-1.v1").await;
    let mut acceptance = min_tier_acceptance(0);
    acceptance.required_capability = cap;
    let payee = w.payee(3, Some(acceptance)).await;
    let payer = w.payer_with_policy(3, open_policy(w.mint)).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, Attestations::default()).await,
        Decision::RequireValidation {
            capability: cap,
            subject: Subject::Payer
        }
    );
    let attestor = w.attestor().await;
    let slot = trust_gate_program_tests::clock(&mut w.ctx).await.slot;
    let att = w.attest(&attestor, &payer.asset(), cap, slot + 1_000).await;
    assert_eq!(
        w.decide(
            &payer,
            &payee,
            1,
            Attestations {
                payer: Some(att),
                payee: None,
                payee_list: None,
            }
        )
        .await,
        Decision::Allow
    );
}

#[tokio::test]
async fn mint_mismatch_is_a_hard_error() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    let ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1,
        anchor_lang::prelude::Pubkey::new_unique(),
        1,
        Attestations::default(),
    );
    assert_code(
        send(&mut w.ctx, &[ix], &[]).await,
        u32::from(E::PolicyMintMismatch),
    );
    // A policy without a mint accepts any.
    let any = w
        .payer_with_policy(3, open_policy(anchor_lang::prelude::Pubkey::default()))
        .await;
    let ix = w.gate_payment_ix(
        &any.asset(),
        &payee.asset(),
        1,
        anchor_lang::prelude::Pubkey::new_unique(),
        1,
        Attestations::default(),
    );
    assert_eq!(w.simulate_decision(ix).await, Decision::Allow);
}

#[tokio::test]
async fn payer_without_policy_is_account_not_initialized() {
    let mut w = World::new().await;
    let payer = w.register_agent().await;
    let payee = w.payee(3, None).await;
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
        Anchor::AccountNotInitialized as u32,
    );
}

#[tokio::test]
async fn init_authority_once_per_facilitator() {
    let mut w = World::new().await;
    let f = w.facilitator.pubkey();
    let a: GateAuthority = fetch(&mut w.ctx, &pda::gate_authority(&f)).await.unwrap();
    assert_eq!(
        (a.facilitator, a.feedback_count, a.dispute_count),
        (f, 0, 0)
    );
    let stranger = funded_keypair(&mut w.ctx).await;
    let ix = |signer: &Keypair, facilitator| Instruction {
        program_id: gate::ID,
        accounts: gate::accounts::InitAuthority {
            facilitator_signer: signer.pubkey(),
            gate_authority: pda::gate_authority(&facilitator),
            system_program: anchor_lang::system_program::ID,
        }
        .to_account_metas(None),
        data: gate::instruction::InitAuthority { facilitator }.data(),
    };
    // A stranger cannot create the GateAuthority of someone else's (new) facilitator key.
    let fresh = anchor_lang::prelude::Pubkey::new_unique();
    assert_code(
        send(&mut w.ctx, &[ix(&stranger, fresh)], &[&stranger]).await,
        u32::from(G::FacilitatorMismatch),
    );
    let facilitator = w.facilitator.insecure_clone();
    assert_already_in_use(send(&mut w.ctx, &[ix(&facilitator, f)], &[&facilitator]).await);
}

#[tokio::test]
async fn register_agent_via_cpi_creates_agent_and_stats() {
    let mut w = World::new().await;
    let owner = funded_keypair(&mut w.ctx).await;
    let asset = Keypair::new();
    let ix = |uri: String| Instruction {
        program_id: gate::ID,
        accounts: gate::accounts::RegisterAgentViaCpi {
            owner: owner.pubkey(),
            asset: asset.pubkey(),
            agent_account: pda::agent(&asset.pubkey()),
            root_config: ext::root_config_pda().0,
            registry_config: ext::registry_config_pda(&w.collection.pubkey()).0,
            collection: w.collection.pubkey(),
            atom_config: ext::atom_config_pda().0,
            atom_stats: pda::stats(&asset.pubkey()),
            mpl_core_program: ext::ids::MPL_CORE,
            registry_program: ext::ids::AGENT_REGISTRY,
            engine_program: ext::ids::REPUTATION_ENGINE,
            system_program: anchor_lang::system_program::ID,
        }
        .to_account_metas(None),
        data: gate::instruction::RegisterAgentViaCpi { metadata_uri: uri }.data(),
    };
    assert_code(
        send(&mut w.ctx, &[ix("x".repeat(251))], &[&owner, &asset]).await,
        u32::from(G::MetadataUriTooLong),
    );
    send(
        &mut w.ctx,
        &[ix("ipfs://new-agent".into())],
        &[&owner, &asset],
    )
    .await
    .unwrap();
    let agent = raw_account(&mut w.ctx, &pda::agent(&asset.pubkey()))
        .await
        .unwrap();
    assert_eq!(agent.owner, ext::ids::AGENT_REGISTRY);
    let view = agent_account::read(&agent.data).unwrap();
    assert_eq!(
        (view.owner, view.asset, view.reputation_enabled),
        (owner.pubkey(), asset.pubkey(), true)
    );
    let stats = raw_account(&mut w.ctx, &pda::stats(&asset.pubkey()))
        .await
        .unwrap();
    assert!(matches!(
        atom_stats::read(&stats.owner, stats.lamports, &stats.data),
        atom_stats::Reputation::Rated(_)
    ));
}

#[tokio::test]
async fn init_killswitch_through_the_gate() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let asset = agent.asset();
    let ix = |member: &Keypair| Instruction {
        program_id: gate::ID,
        accounts: gate::accounts::InitKillSwitch {
            member: member.pubkey(),
            authority: pda::policy_authority(&asset),
            killswitch: pda::killswitch(&asset),
            policy_vault_program: policy_vault::ID,
            system_program: anchor_lang::system_program::ID,
        }
        .to_account_metas(None),
        data: gate::instruction::InitKillswitch { asset }.data(),
    };
    let stranger = funded_keypair(&mut w.ctx).await;
    assert_code(
        send(&mut w.ctx, &[ix(&stranger)], &[&stranger]).await,
        u32::from(E::NotAuthorityMember),
    );
    send(&mut w.ctx, &[ix(&agent.owner)], &[&agent.owner])
        .await
        .unwrap();
    let k: KillSwitchState = fetch(&mut w.ctx, &pda::killswitch(&asset)).await.unwrap();
    assert_eq!((k.asset, k.paused), (asset, false));
}

/// Stats as the real engine writes them: the trust tier (551) equal to the confirmed tier,
/// and a candidacy for a higher tier waiting out its epochs (552). Gate mode immediate counts
/// the candidate tier; confirmed does not.
#[tokio::test]
async fn immediate_counts_a_pending_candidacy_and_confirmed_does_not() {
    let mut w = World::new().await;
    let immediate = counterparty(3, 255, 0, 0)(w.mint);
    let confirmed = PolicyParams {
        gate_mode: 1,
        ..immediate
    };
    let payer = w.payer_with_policy(3, immediate).await;
    w.init_policy(&payer, 2, confirmed).await.unwrap();
    let payee = w.payee(3, None).await;
    let q = payee.asset();
    async fn decide(
        w: &mut World,
        payer: &Agent,
        payee: &anchor_lang::prelude::Pubkey,
        policy_id: u32,
    ) -> Decision {
        let ix = w.gate_payment_ix(
            &payer.asset(),
            payee,
            1,
            w.mint,
            policy_id,
            Attestations::default(),
        );
        w.simulate_decision(ix).await
    }
    for (candidate, immediate_says) in [
        (0, deny(DenyReason::CounterpartyTierBelowMin)),
        (2, deny(DenyReason::CounterpartyTierBelowMin)),
        (3, Decision::Allow),
        (4, Decision::Allow),
    ] {
        put_stats(&mut w, &q, ext::ids::REPUTATION_ENGINE, |d| {
            d[atom_stats::TIER_IMMEDIATE] = 1;
            d[atom_stats::TIER_CONFIRMED] = 1;
            d[atom_stats::TIER_CANDIDATE] = candidate;
        });
        assert_eq!(
            decide(&mut w, &payer, &q, 1).await,
            immediate_says,
            "candidate {candidate}"
        );
        assert_eq!(
            decide(&mut w, &payer, &q, 2).await,
            deny(DenyReason::CounterpartyTierBelowMin),
            "confirmed ignores candidate {candidate}"
        );
    }
}
