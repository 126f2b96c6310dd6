use super::*;
use crate::engine::holdback::{AcceptedHoldback, HoldTerm, HoldbackRule};
use crate::engine::limits::{LimitCounters, PayeeDay};
use crate::engine::time::{month_index, SECONDS_PER_DAY};
use proptest::prelude::*;

const NOW: i64 = 1_794_787_200 + 3_600; // Monday 2026-11-16 01:00 UTC
const CAP: [u8; 32] = [9; 32];

fn rated(tier: u8) -> Reputation {
    Reputation::Rated(Stats {
        tier_immediate: tier,
        tier_confirmed: tier,
        risk_score: 10,
        confidence: 5_000,
    })
}

fn policy(kinds: u8) -> PolicyConfig {
    PolicyConfig {
        kinds,
        spending: SpendingCaps {
            per_tx: 100,
            daily: 250,
            weekly: 600,
        },
        velocity: VelocityRule {
            window_secs: 60,
            max_in_window: 200,
            tier0_decay_bps: 5_000,
        },
        counterparty: TrustRequirement {
            min_tier: 2,
            gate_mode: GateMode::Immediate,
            max_risk: 50,
            min_confidence: 1_000,
            unrated: UnratedTreatment::Deny,
        },
        validation: ValidationRule {
            capability: CAP,
            attestors: vec![],
        },
        limits: LimitRules::OFF,
    }
}

fn party(seed: u8, reputation: Reputation) -> Party {
    Party {
        asset: Pubkey::new_from_array([seed; 32]),
        reputation,
        attestation: None,
    }
}

fn attestation(subject: &Party) -> AttestationView {
    AttestationView {
        subject: subject.asset,
        capability: CAP,
        attestor: Pubkey::new_from_array([77; 32]),
        revoked: false,
        expires_at: NOW + 1_000,
    }
}

fn input<'a>(policy: &'a PolicyConfig, amount: u64) -> EvalInput<'a> {
    EvalInput {
        policy,
        holdback: None,
        acceptance: None,
        paused: false,
        spending: SpendingCounters::default(),
        velocity: VelocityState::default(),
        limits: Some(LimitState::default()),
        payee_listed: false,
        payer: party(1, rated(3)),
        payee: party(2, rated(3)),
        amount,
        now: NOW,
        approval_threshold: 0,
        approved: false,
    }
}

fn decision(i: &EvalInput) -> Decision {
    evaluate(i).decision
}

fn deny(r: DenyReason) -> Decision {
    Decision::Deny(r)
}

#[test]
fn empty_policy_allows_and_counts() {
    let p = policy(0);
    let e = evaluate(&input(&p, 1_000_000));
    assert_eq!(e.decision, Decision::Allow);
    assert_eq!(e.spending.day_spent, 1_000_000);
    assert_eq!(e.velocity.cumulative, 1_000_000);
    assert_eq!(e.velocity.last_commit, NOW);
}

#[test]
fn kill_switch_denies_every_payment_whatever_the_bits() {
    for kinds in [0, kinds::KILL_SWITCH, kinds::ALL] {
        let p = policy(kinds);
        let mut i = input(&p, 1);
        i.paused = true;
        let e = evaluate(&i);
        assert_eq!(e.decision, deny(DenyReason::KillSwitchEngaged));
        assert_eq!(e.spending, i.spending, "no counter moves on a deny");
    }
}

#[test]
fn above_the_approval_threshold_an_allowed_payment_needs_an_approval() {
    let p = policy(kinds::ALL & !kinds::REQUIRE_VALIDATION);
    let at = |amount: u64, approved: bool| {
        let mut i = input(&p, amount);
        i.approval_threshold = 50;
        i.approved = approved;
        evaluate(&i)
    };
    assert_eq!(at(50, false).decision, Decision::Allow, "at the threshold");
    let held = at(51, false);
    assert_eq!(held.decision, Decision::RequireApproval);
    assert_eq!(
        held.spending,
        SpendingCounters::default(),
        "nothing counted"
    );
    let approved = at(51, true);
    assert_eq!(approved.decision, Decision::Allow);
    assert_eq!(approved.spending.day_spent, 51);
    // No threshold, no approval asked.
    let mut i = input(&p, 90);
    i.approved = false;
    assert_eq!(evaluate(&i).decision, Decision::Allow);
    // A Deny wins: an approval never lifts a cap or the kill switch.
    let mut paused = input(&p, 51);
    paused.approval_threshold = 50;
    paused.approved = true;
    paused.paused = true;
    assert_eq!(
        evaluate(&paused).decision,
        deny(DenyReason::KillSwitchEngaged)
    );
    let mut over = input(&p, p.spending.per_tx + 1);
    over.approval_threshold = 50;
    over.approved = true;
    assert_eq!(
        evaluate(&over).decision,
        deny(DenyReason::SpendingPerTxExceeded)
    );
}

/// A policy with every limit on, the payee allowed.
fn limits_policy() -> PolicyConfig {
    PolicyConfig {
        limits: LimitRules {
            list_mode: ListMode::Allow,
            not_before: NOW - 10,
            not_after: NOW + 10,
            monthly_cap: 500,
            lifetime_cap: 5_000,
            payee_daily_cap: 90,
        },
        ..policy(kinds::SPENDING | kinds::VELOCITY)
    }
}

#[test]
fn limit_rules_come_after_the_kill_switch_and_in_their_order() {
    let p = limits_policy();
    let mut i = input(&p, 50);
    i.payee_listed = true;
    assert_eq!(decision(&i), Decision::Allow);
    i.paused = true;
    i.now = p.limits.not_after + 1;
    i.payee_listed = false;
    // The kill switch first, then the window, then the list.
    assert_eq!(decision(&i), deny(DenyReason::KillSwitchEngaged));
    i.paused = false;
    assert_eq!(decision(&i), deny(DenyReason::PolicyExpired));
    i.now = p.limits.not_before - 1;
    assert_eq!(decision(&i), deny(DenyReason::PolicyNotYetValid));
    i.now = NOW;
    assert_eq!(decision(&i), deny(DenyReason::PayeeNotAllowed));
    // The list before the per-transaction cap; the per-transaction cap before the payee's.
    i.amount = 101;
    assert_eq!(decision(&i), deny(DenyReason::PayeeNotAllowed));
    i.payee_listed = true;
    assert_eq!(decision(&i), deny(DenyReason::SpendingPerTxExceeded));
    // The per-payee cap (90) before velocity.
    i.amount = 91;
    assert_eq!(decision(&i), deny(DenyReason::PayeeDailyExceeded));
}

#[test]
fn an_allow_commits_the_limit_counters_and_a_deny_none() {
    let p = limits_policy();
    let mut i = input(&p, 50);
    i.payee_listed = true;
    let e = evaluate(&i);
    assert_eq!(e.decision, Decision::Allow);
    let u = e.limits.unwrap();
    assert_eq!(u.counters.month_index, month_index(NOW));
    assert_eq!(u.counters.month_spent, 50);
    assert_eq!(u.counters.lifetime_spent, 50);
    let slot = u.slot.unwrap();
    assert_eq!((slot.index, slot.payee, slot.spent), (0, i.payee.asset, 50));
    i.velocity.cumulative = 1_000; // over the velocity cap: denied after the caps passed
    i.velocity.window_start = NOW;
    let e = evaluate(&i);
    assert_eq!(e.decision, deny(DenyReason::VelocityWindowExceeded));
    assert_eq!(e.limits, None, "a deny stores nothing");
    // A policy without limits stores none.
    i.limits = None;
    i.velocity = VelocityState::default();
    assert_eq!(evaluate(&i).limits, None);
}

#[test]
fn a_deny_list_denies_only_its_payees() {
    let mut p = policy(0);
    p.limits.list_mode = ListMode::Deny;
    let mut i = input(&p, 1);
    assert_eq!(decision(&i), Decision::Allow);
    i.payee_listed = true;
    assert_eq!(decision(&i), deny(DenyReason::PayeeDenied));
}

#[test]
fn per_tx_boundary() {
    let p = policy(kinds::SPENDING);
    assert_eq!(decision(&input(&p, 100)), Decision::Allow);
    assert_eq!(
        decision(&input(&p, 101)),
        deny(DenyReason::SpendingPerTxExceeded)
    );
}

#[test]
fn daily_boundary_and_reset_at_utc_midnight() {
    let p = policy(kinds::SPENDING);
    let mut i = input(&p, 100);
    i.spending = SpendingCounters {
        day_index: day_index(NOW),
        day_spent: 150,
        week_index: week_index(NOW),
        week_spent: 150,
    };
    assert_eq!(decision(&i), Decision::Allow); // 250 == daily
    i.spending.day_spent = 151;
    assert_eq!(decision(&i), deny(DenyReason::SpendingDailyExceeded));
    // Next UTC day: the day counter restarts, the week counter does not.
    i.now = (day_index(NOW) + 1) * SECONDS_PER_DAY;
    let e = evaluate(&i);
    assert_eq!(e.decision, Decision::Allow);
    assert_eq!(e.spending.day_spent, 100);
    assert_eq!(e.spending.week_spent, 250);
}

#[test]
fn weekly_boundary_and_reset_on_monday() {
    let p = policy(kinds::SPENDING);
    let mut i = input(&p, 100);
    i.spending = SpendingCounters {
        day_index: day_index(NOW) - 1,
        day_spent: 0,
        week_index: week_index(NOW),
        week_spent: 500,
    };
    assert_eq!(decision(&i), Decision::Allow); // 600 == weekly
    i.spending.week_spent = 501;
    assert_eq!(decision(&i), deny(DenyReason::SpendingWeeklyExceeded));
    // Sunday 23:59:59 is still the same week; Monday 00:00 is a new one.
    let next_monday = 1_794_787_200 + 7 * SECONDS_PER_DAY;
    i.now = next_monday - 1;
    assert_eq!(decision(&i), deny(DenyReason::SpendingWeeklyExceeded));
    i.now = next_monday;
    assert_eq!(decision(&i), Decision::Allow);
}

#[test]
fn spending_overflow_counts_as_exceeded() {
    let mut p = policy(kinds::SPENDING);
    p.spending = SpendingCaps {
        per_tx: u64::MAX,
        daily: u64::MAX,
        weekly: u64::MAX,
    };
    let mut i = input(&p, u64::MAX);
    assert_eq!(decision(&i), Decision::Allow);
    i.spending = SpendingCounters {
        day_index: day_index(NOW),
        day_spent: 1,
        week_index: week_index(NOW),
        week_spent: 1,
    };
    assert_eq!(decision(&i), deny(DenyReason::SpendingDailyExceeded));
}

#[test]
fn velocity_cap_full_for_tier_one_and_decayed_for_tier_zero() {
    let p = policy(kinds::VELOCITY);
    let mut i = input(&p, 200);
    i.payer.reputation = rated(1);
    assert_eq!(decision(&i), Decision::Allow);
    i.amount = 201;
    assert_eq!(decision(&i), deny(DenyReason::VelocityWindowExceeded));
    for rep in [
        rated(0),
        Reputation::Unrated,
        Reputation::WrongOwner,
        Reputation::SchemaMismatch,
    ] {
        i.payer.reputation = rep;
        i.amount = 100; // 200 * 50%
        assert_eq!(decision(&i), Decision::Allow, "{rep:?}");
        i.amount = 101;
        assert_eq!(
            decision(&i),
            deny(DenyReason::VelocityWindowExceeded),
            "{rep:?}"
        );
    }
}

#[test]
fn velocity_window_accumulates_then_restarts() {
    let p = policy(kinds::VELOCITY);
    let mut i = input(&p, 150);
    i.velocity = VelocityState {
        cumulative: 50,
        window_start: NOW - 59,
        last_commit: NOW - 1,
    };
    let e = evaluate(&i);
    assert_eq!(e.decision, Decision::Allow);
    assert_eq!(e.velocity.cumulative, 200);
    assert_eq!(e.velocity.window_start, NOW - 59);
    i.velocity.cumulative = 51;
    assert_eq!(decision(&i), deny(DenyReason::VelocityWindowExceeded));
    // Exactly window_secs after the start the window has expired.
    i.velocity.window_start = NOW - 60;
    let e = evaluate(&i);
    assert_eq!(e.decision, Decision::Allow);
    assert_eq!(e.velocity.cumulative, 150);
    assert_eq!(e.velocity.window_start, NOW);
}

#[test]
fn velocity_huge_window_does_not_overflow() {
    let mut p = policy(kinds::VELOCITY);
    p.velocity.window_secs = u64::MAX;
    p.velocity.max_in_window = u64::MAX;
    p.velocity.tier0_decay_bps = 10_000;
    let mut i = input(&p, u64::MAX);
    i.velocity.window_start = NOW - 1;
    assert_eq!(decision(&i), Decision::Allow);
    i.velocity.cumulative = 1;
    assert_eq!(decision(&i), deny(DenyReason::VelocityWindowExceeded));
}

#[test]
fn counterparty_tier_risk_confidence_boundaries() {
    let p = policy(kinds::COUNTERPARTY_TIER);
    let mut i = input(&p, 1);
    let s = |tier, risk, confidence| {
        Reputation::Rated(Stats {
            tier_immediate: tier,
            tier_confirmed: 0,
            risk_score: risk,
            confidence,
        })
    };
    i.payee.reputation = s(2, 50, 1_000);
    assert_eq!(decision(&i), Decision::Allow);
    i.payee.reputation = s(1, 50, 1_000);
    assert_eq!(decision(&i), deny(DenyReason::CounterpartyTierBelowMin));
    i.payee.reputation = s(2, 51, 1_000);
    assert_eq!(decision(&i), deny(DenyReason::CounterpartyRiskAboveMax));
    i.payee.reputation = s(2, 50, 999);
    assert_eq!(decision(&i), deny(DenyReason::CounterpartyConfidenceBelow));
    i.payee.reputation = Reputation::WrongOwner;
    assert_eq!(decision(&i), deny(DenyReason::AtomStatsWrongOwner));
    i.payee.reputation = Reputation::SchemaMismatch;
    assert_eq!(decision(&i), deny(DenyReason::AtomStatsSchemaMismatch));
    i.payee.reputation = Reputation::Unrated;
    assert_eq!(decision(&i), deny(DenyReason::UnratedTreatmentDeny));
}

#[test]
fn risk_255_and_confidence_0_switch_checks_off() {
    let mut p = policy(kinds::COUNTERPARTY_TIER);
    p.counterparty.max_risk = RISK_CHECK_OFF;
    p.counterparty.min_confidence = 0;
    let mut i = input(&p, 1);
    i.payee.reputation = Reputation::Rated(Stats {
        tier_immediate: 4,
        tier_confirmed: 4,
        risk_score: 255,
        confidence: 0,
    });
    assert_eq!(decision(&i), Decision::Allow);
}

#[test]
fn confirmed_gate_mode_reads_the_confirmed_tier() {
    let mut p = policy(kinds::COUNTERPARTY_TIER);
    p.counterparty.gate_mode = GateMode::Confirmed;
    let mut i = input(&p, 1);
    i.payee.reputation = Reputation::Rated(Stats {
        tier_immediate: 4,
        tier_confirmed: 1,
        risk_score: 0,
        confidence: 10_000,
    });
    assert_eq!(decision(&i), deny(DenyReason::CounterpartyTierBelowMin));
}

#[test]
fn unrated_treatments() {
    let mut p = policy(kinds::COUNTERPARTY_TIER);
    p.counterparty.unrated = UnratedTreatment::Allow;
    let mut i = input(&p, 1);
    i.payee.reputation = Reputation::Unrated;
    assert_eq!(decision(&i), Decision::Allow);

    let mut p2 = p.clone();
    p2.counterparty.unrated = UnratedTreatment::RequireValidation;
    i.policy = &p2;
    assert_eq!(
        decision(&i),
        Decision::RequireValidation {
            capability: CAP,
            subject: Subject::Payee
        }
    );
    i.payee.attestation = Some(attestation(&i.payee));
    assert_eq!(decision(&i), Decision::Allow);
}

#[test]
fn require_validation_outcomes() {
    let p = policy(kinds::REQUIRE_VALIDATION);
    let mut i = input(&p, 1);
    assert_eq!(
        decision(&i),
        Decision::RequireValidation {
            capability: CAP,
            subject: Subject::Payee
        }
    );
    let good = attestation(&i.payee);
    i.payee.attestation = Some(good);
    assert_eq!(decision(&i), Decision::Allow);

    i.payee.attestation = Some(AttestationView {
        subject: i.payer.asset,
        ..good
    });
    assert_eq!(decision(&i), deny(DenyReason::AttestationMissing));
    i.payee.attestation = Some(AttestationView {
        capability: [1; 32],
        ..good
    });
    assert_eq!(decision(&i), deny(DenyReason::AttestationMissing));
    i.payee.attestation = Some(AttestationView {
        revoked: true,
        ..good
    });
    assert_eq!(decision(&i), deny(DenyReason::AttestationRevoked));
    i.payee.attestation = Some(AttestationView {
        expires_at: NOW,
        ..good
    });
    assert_eq!(decision(&i), deny(DenyReason::AttestationExpired));
    i.payee.attestation = Some(AttestationView {
        expires_at: NOW + 1,
        ..good
    });
    assert_eq!(decision(&i), Decision::Allow);
    i.payee.attestation = Some(AttestationView {
        expires_at: 0,
        ..good
    });
    assert_eq!(decision(&i), Decision::Allow, "0 never expires");
}

#[test]
fn accepted_attestors_filter() {
    let mut p = policy(kinds::REQUIRE_VALIDATION);
    p.validation.attestors = vec![Pubkey::new_from_array([5; 32])];
    let mut i = input(&p, 1);
    let good = attestation(&i.payee);
    i.payee.attestation = Some(good);
    assert_eq!(decision(&i), deny(DenyReason::AttestationAttestorRejected));
    i.payee.attestation = Some(AttestationView {
        attestor: Pubkey::new_from_array([5; 32]),
        ..good
    });
    assert_eq!(decision(&i), Decision::Allow);
}

#[test]
fn acceptance_policy_checks_the_payer() {
    let p = policy(0);
    let acceptance = AcceptanceConfig {
        payer: TrustRequirement {
            min_tier: 2,
            ..TrustRequirement::NONE
        },
        validation: ValidationRule {
            capability: [0; 32],
            attestors: vec![],
        },
        holdback: AcceptedHoldback::default(),
    };
    let mut i = input(&p, 1);
    i.acceptance = Some(&acceptance);
    for (tier, expected) in [
        (0, deny(DenyReason::CounterpartyTierBelowMin)),
        (1, deny(DenyReason::CounterpartyTierBelowMin)),
        (2, Decision::Allow),
        (3, Decision::Allow),
    ] {
        i.payer.reputation = rated(tier);
        assert_eq!(decision(&i), expected, "payer tier {tier}");
    }
}

#[test]
fn acceptance_policy_requires_a_payer_attestation() {
    let p = policy(0);
    let acceptance = AcceptanceConfig {
        payer: TrustRequirement::NONE,
        validation: ValidationRule {
            capability: CAP,
            attestors: vec![],
        },
        holdback: AcceptedHoldback::default(),
    };
    let mut i = input(&p, 1);
    i.acceptance = Some(&acceptance);
    assert_eq!(
        decision(&i),
        Decision::RequireValidation {
            capability: CAP,
            subject: Subject::Payer
        }
    );
    i.payer.attestation = Some(attestation(&i.payer));
    assert_eq!(decision(&i), Decision::Allow);
    // The payee's attestation does not satisfy a requirement on the payer.
    i.payer.attestation = Some(attestation(&i.payee));
    assert_eq!(decision(&i), deny(DenyReason::AttestationMissing));
}

#[test]
fn evaluation_order_first_failure_wins() {
    let p = policy(kinds::ALL);
    let acceptance = AcceptanceConfig {
        payer: TrustRequirement {
            min_tier: 4,
            ..TrustRequirement::NONE
        },
        validation: ValidationRule {
            capability: [0; 32],
            attestors: vec![],
        },
        holdback: AcceptedHoldback::default(),
    };
    let mut i = input(&p, 1_000);
    i.acceptance = Some(&acceptance);
    i.paused = true;
    i.payee.reputation = rated(0);
    assert_eq!(decision(&i), deny(DenyReason::KillSwitchEngaged));
    i.paused = false;
    assert_eq!(decision(&i), deny(DenyReason::SpendingPerTxExceeded));
    i.amount = 100;
    i.velocity = VelocityState {
        cumulative: 200,
        window_start: NOW,
        last_commit: NOW,
    };
    assert_eq!(decision(&i), deny(DenyReason::VelocityWindowExceeded));
    i.velocity = VelocityState::default();
    assert_eq!(decision(&i), deny(DenyReason::CounterpartyTierBelowMin));
    i.payee.reputation = rated(3);
    assert!(matches!(
        decision(&i),
        Decision::RequireValidation {
            subject: Subject::Payee,
            ..
        }
    ));
    i.payee.attestation = Some(attestation(&i.payee));
    assert_eq!(
        decision(&i),
        deny(DenyReason::CounterpartyTierBelowMin),
        "payer tier 3 < 4"
    );
    i.payer.reputation = rated(4);
    assert_eq!(decision(&i), Decision::Allow);
}

#[test]
fn config_validation_names_each_field() {
    let ok = policy(kinds::ALL);
    assert_eq!(validate_policy(&ok), Ok(()));
    let check = |f: &dyn Fn(&mut PolicyConfig), e: ConfigError| {
        let mut p = ok.clone();
        f(&mut p);
        assert_eq!(validate_policy(&p), Err(e));
    };
    check(&|p| p.kinds = 0x20, ConfigError::UnknownKindBits);
    check(&|p| p.spending.per_tx = 0, ConfigError::SpendingCapZero);
    check(&|p| p.spending.daily = 0, ConfigError::SpendingCapZero);
    check(&|p| p.spending.weekly = 0, ConfigError::SpendingCapZero);
    check(
        &|p| p.velocity.window_secs = 0,
        ConfigError::VelocityWindowZero,
    );
    check(
        &|p| p.velocity.max_in_window = 0,
        ConfigError::VelocityMaxZero,
    );
    check(
        &|p| p.velocity.tier0_decay_bps = 10_001,
        ConfigError::DecayOutOfRange,
    );
    check(
        &|p| p.counterparty.min_tier = 5,
        ConfigError::MinTierOutOfRange,
    );
    check(
        &|p| p.counterparty.min_confidence = 10_001,
        ConfigError::MinConfidenceOutOfRange,
    );
    check(
        &|p| p.validation.capability = [0; 32],
        ConfigError::RequiredCapabilityMissing,
    );
    check(
        &|p| {
            p.kinds = kinds::COUNTERPARTY_TIER;
            p.validation.capability = [0; 32];
            p.counterparty.unrated = UnratedTreatment::RequireValidation;
        },
        ConfigError::UnratedValidationWithoutCapability,
    );
    check(
        &|p| p.validation.attestors = vec![Pubkey::new_unique(); 3],
        ConfigError::TooManyAttestors,
    );
    check(
        &|p| p.validation.attestors = vec![Pubkey::new_from_array([1; 32]); 2],
        ConfigError::DuplicateAttestor,
    );
    // Rules that are off need no values.
    let mut off = policy(0);
    off.spending = SpendingCaps {
        per_tx: 0,
        daily: 0,
        weekly: 0,
    };
    off.velocity.window_secs = 0;
    off.validation.capability = [0; 32];
    assert_eq!(validate_policy(&off), Ok(()));
    let bad_acceptance = AcceptanceConfig {
        payer: TrustRequirement {
            min_tier: 5,
            ..TrustRequirement::NONE
        },
        validation: ValidationRule {
            capability: [0; 32],
            attestors: vec![],
        },
        holdback: AcceptedHoldback::default(),
    };
    assert_eq!(
        validate_acceptance(&bad_acceptance),
        Err(ConfigError::MinTierOutOfRange)
    );
}

// ---- properties ----

fn any_reputation() -> impl Strategy<Value = Reputation> {
    prop_oneof![
        Just(Reputation::Unrated),
        Just(Reputation::WrongOwner),
        Just(Reputation::SchemaMismatch),
        (0u8..=4, 0u8..=4, any::<u8>(), 0u16..=10_000).prop_map(|(ti, tc, r, c)| {
            Reputation::Rated(Stats {
                tier_immediate: ti,
                tier_confirmed: tc,
                risk_score: r,
                confidence: c,
            })
        }),
    ]
}

fn any_trust() -> impl Strategy<Value = TrustRequirement> {
    (0u8..=4, any::<bool>(), any::<u8>(), 0u16..=10_000, 0u8..=2).prop_map(|(t, m, r, c, u)| {
        TrustRequirement {
            min_tier: t,
            gate_mode: if m {
                GateMode::Confirmed
            } else {
                GateMode::Immediate
            },
            max_risk: r,
            min_confidence: c,
            unrated: UnratedTreatment::from_u8(u).unwrap(),
        }
    })
}

fn any_policy() -> impl Strategy<Value = PolicyConfig> {
    (
        0u8..=kinds::ALL,
        (1u64..1_000, 1u64..3_000, 1u64..10_000),
        (1u64..100_000, 1u64..2_000, 0u16..=10_000),
        any_trust(),
        any_extended(),
    )
        .prop_map(
            |(k, (t, d, w), (ws, m, decay), trust, limits)| PolicyConfig {
                kinds: k,
                spending: SpendingCaps {
                    per_tx: t,
                    daily: d,
                    weekly: w,
                },
                velocity: VelocityRule {
                    window_secs: ws,
                    max_in_window: m,
                    tier0_decay_bps: decay,
                },
                counterparty: trust,
                validation: ValidationRule {
                    capability: CAP,
                    attestors: vec![],
                },
                limits,
            },
        )
}

/// Limit rules, each off about half the time.
fn any_extended() -> impl Strategy<Value = LimitRules> {
    let cap = prop_oneof![Just(0u64), 1u64..3_000];
    (
        0u8..=2,
        prop_oneof![
            Just(0i64),
            (NOW - SECONDS_PER_DAY)..(NOW + 7 * SECONDS_PER_DAY)
        ],
        prop_oneof![
            Just(0i64),
            (NOW + 7 * SECONDS_PER_DAY)..(NOW + 15 * SECONDS_PER_DAY)
        ],
        (cap.clone(), cap.clone(), cap),
    )
        .prop_map(
            |(mode, not_before, not_after, (monthly, lifetime, payee))| LimitRules {
                list_mode: ListMode::from_u8(mode).unwrap(),
                not_before,
                not_after,
                monthly_cap: monthly,
                lifetime_cap: lifetime,
                payee_daily_cap: payee,
            },
        )
}

fn any_attestation(asset: Pubkey) -> impl Strategy<Value = Option<AttestationView>> {
    proptest::option::of((any::<bool>(), -100i64..100, any::<bool>()).prop_map(
        move |(revoked, dt, right_subject)| AttestationView {
            subject: if right_subject {
                asset
            } else {
                Pubkey::new_from_array([3; 32])
            },
            capability: CAP,
            attestor: Pubkey::new_from_array([77; 32]),
            revoked,
            expires_at: NOW + dt,
        },
    ))
}

#[derive(Clone, Debug)]
struct Case {
    policy: PolicyConfig,
    acceptance: Option<AcceptanceConfig>,
    paused: bool,
    spending: SpendingCounters,
    velocity: VelocityState,
    limits: LimitState,
    payee_listed: bool,
    payer: Party,
    payee: Party,
    amount: u64,
    now: i64,
}

impl Case {
    fn input(&self) -> EvalInput<'_> {
        EvalInput {
            policy: &self.policy,
            holdback: None,
            acceptance: self.acceptance.as_ref(),
            paused: self.paused,
            spending: self.spending,
            velocity: self.velocity,
            limits: Some(self.limits),
            payee_listed: self.payee_listed,
            payer: self.payer,
            payee: self.payee,
            amount: self.amount,
            now: self.now,
            approval_threshold: 0,
            approved: false,
        }
    }
}

fn any_case() -> impl Strategy<Value = Case> {
    let payer_asset = Pubkey::new_from_array([1; 32]);
    let payee_asset = Pubkey::new_from_array([2; 32]);
    (
        any_policy(),
        proptest::option::of(any_trust()),
        any::<bool>(),
        (0u64..3_000, 0u64..10_000, -1i64..=1),
        (0u64..2_000, -200i64..200),
        (any_reputation(), any_attestation(payer_asset)),
        (any_reputation(), any_attestation(payee_asset)),
        0u64..2_000,
        0i64..(14 * SECONDS_PER_DAY),
        ((0u64..3_000, 0u64..10_000, 0u64..3_000), any::<bool>()),
    )
        .prop_map(
            move |(
                policy,
                acc,
                paused,
                (ds, ws, shift),
                (cum, start),
                (pr, pa),
                (er, ea),
                amount,
                dt,
                ((ms, ls, ps), payee_listed),
            )| {
                let now = NOW + dt;
                Case {
                    policy,
                    acceptance: acc.map(|payer| AcceptanceConfig {
                        payer,
                        validation: ValidationRule {
                            capability: CAP,
                            attestors: vec![],
                        },
                        holdback: AcceptedHoldback::default(),
                    }),
                    paused,
                    spending: SpendingCounters {
                        day_index: day_index(now) + shift,
                        day_spent: ds,
                        week_index: week_index(now) + shift,
                        week_spent: ws,
                    },
                    velocity: VelocityState {
                        cumulative: cum,
                        window_start: now + start,
                        last_commit: 0,
                    },
                    limits: LimitState {
                        counters: LimitCounters {
                            month_index: month_index(now) + shift,
                            month_spent: ms,
                            lifetime_spent: ls,
                        },
                        payee_day: PayeeDay {
                            day: day_index(now) + shift,
                            held: Some((3, ps)),
                            free: Some(0),
                        },
                    },
                    payee_listed,
                    payer: Party {
                        asset: payer_asset,
                        reputation: pr,
                        attestation: pa,
                    },
                    payee: Party {
                        asset: payee_asset,
                        reputation: er,
                        attestation: ea,
                    },
                    amount,
                    now,
                }
            },
        )
}

/// The tier a requirement compares, raised by `delta` (capped at 4).
fn with_higher_tier(rep: Reputation, delta: u8) -> Reputation {
    match rep {
        Reputation::Rated(s) => Reputation::Rated(Stats {
            tier_immediate: (s.tier_immediate + delta).min(4),
            tier_confirmed: (s.tier_confirmed + delta).min(4),
            ..s
        }),
        other => other,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn paused_never_allows(mut case in any_case()) {
        case.paused = true;
        prop_assert_eq!(evaluate(&case.input()).decision, deny(DenyReason::KillSwitchEngaged));
    }

    #[test]
    fn allow_keeps_counters_within_caps(case in any_case()) {
        let e = evaluate(&case.input());
        if e.decision.is_allow() {
            if case.policy.has(kinds::SPENDING) {
                prop_assert!(case.amount <= case.policy.spending.per_tx);
                prop_assert!(e.spending.day_spent <= case.policy.spending.daily);
                prop_assert!(e.spending.week_spent <= case.policy.spending.weekly);
            }
            if case.policy.has(kinds::VELOCITY) {
                let cap = velocity_cap(&case.policy.velocity, &case.payer.reputation);
                prop_assert!(e.velocity.cumulative <= cap);
                prop_assert!(cap <= case.policy.velocity.max_in_window);
            }
            let r = &case.policy.limits;
            let u = e.limits.unwrap();
            if r.monthly_cap != 0 {
                prop_assert!(u.counters.month_spent <= r.monthly_cap);
            }
            if r.lifetime_cap != 0 {
                prop_assert!(u.counters.lifetime_spent <= r.lifetime_cap);
            }
            if r.payee_daily_cap != 0 {
                let slot = u.slot.unwrap();
                prop_assert!(slot.payee == case.payee.asset && slot.spent <= r.payee_daily_cap);
            }
            prop_assert!(r.not_before == 0 || case.now >= r.not_before);
            prop_assert!(r.not_after == 0 || case.now <= r.not_after);
            let list_passes = match r.list_mode {
                ListMode::Off => true,
                ListMode::Allow => case.payee_listed,
                ListMode::Deny => !case.payee_listed,
            };
            prop_assert!(list_passes);
        } else {
            prop_assert_eq!(e.spending, case.spending);
            prop_assert_eq!(e.velocity, case.velocity);
            prop_assert_eq!(e.limits, None);
        }
    }

    #[test]
    fn stricter_min_tier_never_allows_more(case in any_case(), extra in 1u8..=4) {
        let mut strict = case.clone();
        strict.policy.counterparty.min_tier = (case.policy.counterparty.min_tier + extra).min(4);
        if let Some(a) = strict.acceptance.as_mut() {
            a.payer.min_tier = (a.payer.min_tier + extra).min(4);
        }
        if evaluate(&strict.input()).decision.is_allow() {
            prop_assert!(evaluate(&case.input()).decision.is_allow());
        }
    }

    #[test]
    fn lower_tier_never_more_permissive(case in any_case(), delta in 1u8..=4) {
        // If the lower-tier version of a payment is allowed, the higher-tier one is too.
        let mut higher = case.clone();
        higher.payer.reputation = with_higher_tier(case.payer.reputation, delta);
        higher.payee.reputation = with_higher_tier(case.payee.reputation, delta);
        if evaluate(&case.input()).decision.is_allow() {
            prop_assert!(evaluate(&higher.input()).decision.is_allow());
        }
    }

    #[test]
    fn expired_or_revoked_attestation_never_allows(mut case in any_case(), revoke in any::<bool>()) {
        case.policy.kinds |= kinds::REQUIRE_VALIDATION;
        let mut a = AttestationView {
            subject: case.payee.asset,
            capability: CAP,
            attestor: Pubkey::new_from_array([77; 32]),
            revoked: revoke,
            expires_at: if revoke { 0 } else { case.now },
        };
        if !revoke {
            a.expires_at = case.now; // expired exactly now
        }
        case.payee.attestation = Some(a);
        prop_assert!(!evaluate(&case.input()).decision.is_allow());
    }
}

fn holdback_rule() -> HoldbackRule {
    HoldbackRule {
        // 10 % for an hour at every tier; unrated 20 %.
        terms: core::array::from_fn(|i| HoldTerm {
            share_bps: if i == 5 { 2_000 } else { 1_000 },
            hold_secs: 3_600,
        }),
        arbiter: Pubkey::default(),
    }
}

#[test]
fn an_allow_reports_the_holdback_of_the_payees_tier() {
    let p = policy(0);
    let rule = holdback_rule();
    let acceptance = AcceptanceConfig {
        payer: TrustRequirement::NONE,
        validation: ValidationRule {
            capability: [0; 32],
            attestors: vec![],
        },
        holdback: AcceptedHoldback {
            max_share_bps: 1_000,
            max_hold_secs: 3_600,
            arbiters: [Pubkey::default(); 2],
        },
    };
    let mut i = input(&p, 1_000);
    i.holdback = Some(&rule);
    i.acceptance = Some(&acceptance);
    let e = evaluate(&i);
    assert_eq!(e.decision, Decision::Allow);
    let h = e
        .holdback
        .expect("a policy with a schedule reports its terms");
    assert_eq!(
        (h.tier, h.share_bps, h.hold_secs, h.held),
        (3, 1_000, 3_600, 100)
    );
    assert_eq!(Holdback::from_wire(&e.to_wire()), Some(h));
    // An unrated payee's 20 % is more than the payee accepts.
    i.payee = party(2, Reputation::Unrated);
    let e = evaluate(&i);
    assert_eq!(e.decision, deny(DenyReason::HoldbackShareNotAccepted));
    assert_eq!(e.holdback, None);
    assert_eq!(Holdback::from_wire(&e.to_wire()), None);
    // Without a schedule, no terms.
    i.holdback = None;
    assert_eq!(evaluate(&i).holdback, None);
}

#[test]
fn a_holdback_the_payee_refuses_denies_before_an_approval_is_asked() {
    let p = policy(0);
    let rule = holdback_rule();
    let mut i = input(&p, 1_000);
    i.holdback = Some(&rule);
    i.approval_threshold = 10;
    assert_eq!(decision(&i), deny(DenyReason::HoldbackNotAccepted));
    i.holdback = None;
    assert_eq!(decision(&i), Decision::RequireApproval);
}
