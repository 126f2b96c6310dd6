//! The policy's counterparty rules on stats the REAL engine wrote after real feedback, and
//! what the engine makes of a facilitator's feedback: every gate feedback comes from one
//! client (the facilitator's GateAuthority PDA), which the engine treats as one rater
//! repeating itself.

use crate::common::*;
use crate::fixtures::real_world;
use policy_vault::engine::{Decision, DenyReason};
use policy_vault::state::PolicyParams;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::instructions::Attestations;
use trust_gate_localnet::standin::client as registry;
use trust_gate_program_common::external::instructions::GiveFeedbackArgs;
use trust_gate_program_tests::raw_account;
use trust_gate_program_tests::world::{open_policy, pda, Agent, World};

/// The AtomStats bytes the gate reads, and the pending tier beside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Read {
    risk: u8,
    /// Byte 551, the engine's trust tier (the real engine keeps it equal to `confirmed`).
    trust_tier: u8,
    /// Byte 552: the tier the engine is waiting to confirm (0: none). Gate mode immediate
    /// reads the higher of the two.
    candidate: u8,
    /// Byte 555, which the gate reads for gate mode Confirmed.
    confirmed: u8,
    confidence: u16,
}

async fn read(w: &mut World, agent: &Agent) -> Read {
    let d = raw_account(&mut w.ctx, &pda::stats(&agent.asset()))
        .await
        .expect("stats")
        .data;
    Read {
        risk: d[549],
        trust_tier: d[551],
        candidate: d[552],
        confirmed: d[555],
        confidence: u16::from_le_bytes([d[557], d[558]]),
    }
}

/// The payer's counterparty rules, one per policy id, each alone.
const RULES: [(u32, u8, u8, u8, u16); 4] = [
    // (policy id, gate mode, min tier, max risk, min confidence)
    (2, 0, 1, u8::MAX, 0),
    (3, 1, 1, u8::MAX, 0),
    (4, 0, 0, 70, 0),
    (5, 0, 0, u8::MAX, 800),
];

fn rule_policy(w: &World, mode: u8, tier: u8, risk: u8, confidence: u16) -> PolicyParams {
    PolicyParams {
        kinds: policy_vault::engine::kinds::COUNTERPARTY_TIER,
        gate_mode: mode,
        min_counterparty_tier: tier,
        max_counterparty_risk: risk,
        min_counterparty_confidence: confidence,
        ..open_policy(w.mint)
    }
}

/// What each rule must decide on the bytes `r`, as the policy engine reads them.
fn expected(r: Read, (_, mode, tier, risk, confidence): (u32, u8, u8, u8, u16)) -> Decision {
    // Gate mode immediate: the engine's tier now, vested or not (docs/policies.md).
    let read_tier = if mode == 0 {
        r.trust_tier.max(r.candidate)
    } else {
        r.confirmed
    };
    if read_tier < tier {
        Decision::Deny(DenyReason::CounterpartyTierBelowMin)
    } else if risk != u8::MAX && r.risk > risk {
        Decision::Deny(DenyReason::CounterpartyRiskAboveMax)
    } else if confidence != 0 && r.confidence < confidence {
        Decision::Deny(DenyReason::CounterpartyConfidenceBelow)
    } else {
        Decision::Allow
    }
}

/// A payer with policy 1 open and one policy per rule of [`RULES`].
async fn ruled_payer(w: &mut World) -> Agent {
    let p = payer(w).await;
    for rule @ (id, ..) in RULES {
        let params = rule_policy(w, rule.1, rule.2, rule.3, rule.4);
        w.init_policy(&p, id, params).await.unwrap();
    }
    p
}

/// Every rule's decision about `payee` equals what its bytes say.
async fn check_rules(w: &mut World, payer: &Agent, payee: &Agent) -> Read {
    let r = read(w, payee).await;
    for rule in RULES {
        let ix = w.gate_payment_ix(
            &payer.asset(),
            &payee.asset(),
            AMOUNT,
            w.mint,
            rule.0,
            Attestations::default(),
        );
        let decision = w.simulate_decision(ix).await;
        assert_eq!(decision, expected(r, rule), "policy {} on {r:?}", rule.0);
    }
    r
}

#[tokio::test]
async fn externals_one_facilitator_is_one_client_and_never_earns_its_payees_a_tier() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let payer = ruled_payer(&mut w).await;
    let payee = w.register_agent().await;
    let mut first_over_70 = None;
    let mut most_confidence = 0;
    let mut last = check_rules(&mut w, &payer, &payee).await;
    for n in 1..=30u32 {
        // 400 slots (about 2.7 minutes) between payments: no burst from timing alone.
        w.advance_slots(400).await;
        settle(&mut w, &payer, &payee).await.expect("settles");
        last = check_rules(&mut w, &payer, &payee).await;
        assert_eq!(
            last.trust_tier, last.confirmed,
            "byte 551 is the confirmed tier"
        );
        if last.risk > 70 && first_over_70.is_none() {
            first_over_70 = Some(n);
        }
        most_confidence = most_confidence.max(last.confidence);
    }
    // One rater repeating itself: burst pressure grows with every payment, so risk climbs to
    // its ceiling and no tier is ever reached, whatever the scores.
    assert_eq!((last.trust_tier, last.candidate, last.confirmed), (0, 0, 0));
    assert_eq!(last.risk, 100, "{last:?}");
    let n = first_over_70.expect("risk passed bronze's 70");
    assert!((20..=30).contains(&n), "risk passed 70 at payment {n}");
    // Confidence turns down as risk rises, before it reaches bronze's 800.
    assert!(most_confidence < 800, "{most_confidence}");
    assert_eq!(engine_feedback(&mut w, &payee).await, Some((30, 90)));
}

#[tokio::test]
async fn externals_distinct_raters_move_risk_and_confidence_as_the_rules_read_them() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let payer = ruled_payer(&mut w).await;
    let payee = w.register_agent().await;
    let collection = w.collection.pubkey();
    let args = GiveFeedbackArgs {
        value: 1,
        value_decimals: 0,
        score: Some(95),
        feedback_file_hash: None,
        tag1: "quality".into(),
        tag2: String::new(),
        endpoint: String::new(),
        feedback_uri: String::new(),
    };
    let mut confidences = vec![];
    for _ in 0..30 {
        w.advance_slots(400).await;
        let rater = Keypair::new();
        let ix = registry::give_feedback(&rater.pubkey(), &payee.asset(), &collection, &args, true);
        w.send(&[ix], &[&rater]).await.unwrap();
        let r = check_rules(&mut w, &payer, &payee).await;
        assert_eq!(r.trust_tier, r.confirmed, "byte 551 is the confirmed tier");
        confidences.push(r.confidence);
    }
    let last = read(&mut w, &payee).await;
    assert!(last.risk <= 70, "distinct raters keep risk down: {last:?}");
    assert!(
        confidences.windows(2).all(|p| p[1] >= p[0]) && last.confidence > 0,
        "confidence only grows with distinct raters: {confidences:?}"
    );
    // Promotion takes 8 engine epochs of 432 000 slots: within minutes nothing is confirmed.
    assert_eq!(last.confirmed, 0, "{last:?}");
    assert_eq!(engine_feedback(&mut w, &payee).await, Some((30, 95)));
}
