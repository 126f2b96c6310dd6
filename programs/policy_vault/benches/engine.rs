//! Nanoseconds per decision of the pure policy engine: `cargo bench -p policy_vault`.

use anchor_lang::prelude::Pubkey;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use policy_vault::engine::*;

const NOW: i64 = 1_794_790_800;

fn policy(kinds: u8) -> PolicyConfig {
    PolicyConfig {
        kinds,
        spending: SpendingCaps {
            per_tx: 5_000_000,
            daily: 20_000_000,
            weekly: 50_000_000,
        },
        velocity: VelocityRule {
            window_secs: 3_600,
            max_in_window: 10_000_000,
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
            capability: [9; 32],
            attestors: vec![Pubkey::new_from_array([7; 32])],
        },
        limits: LimitRules::OFF,
    }
}

fn party(seed: u8, tier: u8, attested: bool) -> Party {
    let asset = Pubkey::new_from_array([seed; 32]);
    Party {
        asset,
        reputation: Reputation::Rated(Stats {
            tier_immediate: tier,
            tier_confirmed: tier,
            risk_score: 10,
            confidence: 5_000,
        }),
        attestation: attested.then_some(AttestationView {
            subject: asset,
            capability: [9; 32],
            attestor: Pubkey::new_from_array([7; 32]),
            revoked: false,
            expires_at: NOW + 3_600,
        }),
    }
}

fn bench(c: &mut Criterion) {
    let acceptance = AcceptanceConfig {
        payer: TrustRequirement {
            min_tier: 2,
            ..TrustRequirement::NONE
        },
        validation: ValidationRule {
            capability: [9; 32],
            attestors: vec![],
        },
        holdback: Default::default(),
    };
    let cases = [
        (
            "allow, spending + velocity",
            policy(0x07),
            None,
            party(1, 3, false),
            party(2, 3, false),
        ),
        (
            "allow, every rule + acceptance policy",
            policy(0x1f),
            Some(&acceptance),
            party(1, 3, true),
            party(2, 3, true),
        ),
        (
            "deny 6, payee tier",
            policy(0x0f),
            None,
            party(1, 3, false),
            party(2, 1, false),
        ),
    ];
    for (name, policy, acceptance, payer, payee) in cases {
        c.bench_function(name, |b| {
            b.iter(|| {
                evaluate(black_box(&EvalInput {
                    policy: &policy,
                    holdback: None,
                    acceptance,
                    paused: false,
                    spending: SpendingCounters::default(),
                    velocity: VelocityState::default(),
                    limits: None,
                    payee_listed: false,
                    payer,
                    payee,
                    amount: 1_000_000,
                    now: NOW,
                    approval_threshold: 0,
                    approved: false,
                }))
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
