//! The facilitator's decision cache (facilitator/src/decisions.rs) against the uncached SDK
//! decision (`simulate::gate_payment`), after every kind of state change a decision depends
//! on: kill switch, reputation stats, acceptance policy replaced, attestation created,
//! revoked and renewed, any-attestor rules, policy retired and policy created. In steady
//! state a decision is one RPC call, counted at the localnet's JSON-RPC server.

use crate::fixture::{self, Env};
use crate::services;
use policy_vault::state::AcceptanceParams;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use std::sync::atomic::Ordering;
use trust_gate_client::decode::DecisionView;
use trust_gate_client::instructions::{capability_hash, Claim};
use trust_gate_client::simulate::{self, Caller, PaymentQuery};
use trust_gate_client::ClientError;
use trust_gate_facilitator::Facilitator;
use trust_gate_localnet::standin::client;
use trust_gate_migrations::demo;
use trust_gate_program_common::external::atom_stats::Stats;

/// A decision or its failure, comparable across both paths.
fn outcome(r: Result<trust_gate_client::decode::Decision, ClientError>) -> String {
    match r {
        Ok(d) => serde_json::to_string(&DecisionView::from(&d)).unwrap(),
        Err(ClientError::SimulationFailed { named, err, .. }) => match named {
            Some(n) => format!("fails: {} {}", n.code, n.name),
            None => format!("fails: {err:?}"),
        },
        Err(e) => format!("error: {e}"),
    }
}

fn total_calls(env: &Env) -> u64 {
    env.localnet.chain.rpc_calls().values().sum()
}

struct Check<'a> {
    env: &'a Env,
    f: &'a Facilitator,
    queries: Vec<(&'static str, PaymentQuery)>,
}

impl Check<'_> {
    /// Every query decides the same through the cache (twice: the first may refill it) as
    /// the uncached SDK; returns the outcomes by query name.
    async fn same(&self, step: &str) -> Vec<(String, String)> {
        let fac = self.env.world.facilitator.pubkey();
        let mut out = Vec::new();
        for (name, q) in &self.queries {
            let want = outcome(
                simulate::gate_payment(&self.env.rpc, &self.env.b, Caller::Pubkey(fac), *q).await,
            );
            for round in 0..2 {
                let got = outcome(
                    self.f
                        .caches
                        .decisions
                        .decide_reading(&self.f.chain.rpc, &self.f.chain.builder, fac, q, &[])
                        .await
                        .and_then(|sim| sim.decision),
                );
                assert_eq!(got, want, "{step}: {name}, round {round}");
            }
            out.push((name.to_string(), want));
        }
        out
    }
}

fn of<'a>(outcomes: &'a [(String, String)], name: &str) -> &'a str {
    &outcomes.iter().find(|(n, _)| n == name).unwrap().1
}

#[tokio::test]
async fn cached_decisions_equal_uncached_ones_after_every_kind_of_state_change() {
    let env = fixture::seeded().await;
    let f = Facilitator::new(services::config(&env, &env.localnet.rpc_url())).unwrap();
    let w = &env.world;
    let (tier0, tier1, tier3) = (
        w.payer(0).unwrap(),
        w.payer(1).unwrap(),
        w.payer(3).unwrap(),
    );
    let pay = |payer: Pubkey, payee: Pubkey, policy_id: u32| PaymentQuery {
        payer_asset: payer,
        payee_asset: payee,
        amount: demo::PRICE,
        mint: w.mint(),
        policy_id,
    };
    let check = Check {
        env: &env,
        f: &f,
        queries: vec![
            (
                "tier 0 pays the service",
                pay(tier0.asset(), w.service.asset(), 1),
            ),
            (
                "tier 1 pays the service",
                pay(tier1.asset(), w.service.asset(), 1),
            ),
            (
                "tier 3 pays the service",
                pay(tier3.asset(), w.service.asset(), 1),
            ),
            (
                "the vault payer pays the service",
                pay(w.vault_payer().asset(), w.service.asset(), 1),
            ),
            ("tier 3 pays tier 0", pay(tier3.asset(), tier0.asset(), 1)),
            (
                "tier 0 under policy 3",
                pay(tier0.asset(), w.service.asset(), 3),
            ),
        ],
    };

    let o = check.same("baseline").await;
    assert!(of(&o, "tier 3 pays the service").contains("Allow"));
    assert!(of(&o, "tier 1 pays the service").contains("CounterpartyTierBelowMin"));
    assert!(of(&o, "tier 0 under policy 3").contains("3012"), "{o:?}");

    // Steady state: one RPC call per decision, confirmed from the cache.
    let q = pay(tier3.asset(), w.service.asset(), 1);
    let fac = w.facilitator.pubkey();
    let (before, cached) = (
        total_calls(&env),
        f.caches.decisions.stats.cached.load(Ordering::Relaxed),
    );
    for _ in 0..10 {
        f.caches
            .decisions
            .decide_reading(&f.chain.rpc, &f.chain.builder, fac, &q, &[])
            .await
            .unwrap()
            .decision
            .unwrap();
    }
    assert_eq!(
        total_calls(&env) - before,
        10,
        "one simulateTransaction per decision"
    );
    assert_eq!(
        f.caches.decisions.stats.cached.load(Ordering::Relaxed) - cached,
        10
    );

    // Kill switch of the tier-3 payer: engaged, then released.
    let killswitch = |paused| {
        env.b
            .set_killswitch(&tier3.owner.pubkey(), &[], &tier3.asset(), paused)
    };
    env.send(&[killswitch(true)], &[&tier3.owner])
        .await
        .unwrap();
    let o = check.same("kill switch engaged").await;
    assert!(of(&o, "tier 3 pays the service").contains("KillSwitchEngaged"));
    env.send(&[killswitch(false)], &[&tier3.owner])
        .await
        .unwrap();
    check.same("kill switch released").await;

    // Reputation: the tier-1 payer is re-rated to tier 3, then back.
    let rate = |tier| {
        client::set_stats(
            &env.localnet.engine_authority.pubkey(),
            &tier1.asset(),
            &Stats {
                tier_immediate: tier,
                tier_confirmed: tier,
                risk_score: 0,
                confidence: 5000,
            },
        )
    };
    env.send(&[rate(3)], &[&env.localnet.engine_authority])
        .await
        .unwrap();
    let o = check.same("stats changed").await;
    assert!(of(&o, "tier 1 pays the service").contains("Allow"));
    env.send(&[rate(1)], &[&env.localnet.engine_authority])
        .await
        .unwrap();
    check.same("stats changed back").await;

    // Tier 0's acceptance policy is replaced: payers need an attestation of a capability,
    // from the demo attestor, then from any attestor.
    let capability = capability_hash(demo::NAMESPACES[0].0);
    let accept = |attestors: [Pubkey; 2]| {
        env.b.set_acceptance_policy(
            &tier0.owner.pubkey(),
            &[],
            &tier0.asset(),
            AcceptanceParams {
                min_payer_tier: 0,
                gate_mode: 0,
                max_payer_risk: 255,
                min_payer_confidence: 0,
                unrated_treatment: 1,
                required_capability: capability,
                accepted_attestors: attestors,
                holdback: Default::default(),
            },
        )
    };
    let named = [w.attestor.pubkey(), Pubkey::default()];
    env.send(&[accept(named)], &[&tier0.owner]).await.unwrap();
    let o = check.same("acceptance replaced").await;
    assert!(!of(&o, "tier 3 pays tier 0").contains("Allow"), "{o:?}");

    let slot = env.rpc.get_slot().await.unwrap();
    let claim = Claim {
        subject: tier3.asset(),
        capability,
        payload_hash: [1; 32],
        uri_hash: [2; 32],
        expires_at_slot: slot + 1_000_000,
    };
    let respond = env.b.respond_to_validation(&w.attestor.pubkey(), &claim);
    env.send(&[respond], &[&w.attestor]).await.unwrap();
    let o = check.same("attestation created").await;
    assert!(of(&o, "tier 3 pays tier 0").contains("Allow"), "{o:?}");

    let revoke =
        env.b
            .revoke_validation(&w.attestor.pubkey(), &tier3.asset(), &capability, [3; 32]);
    env.send(&[revoke], &[&w.attestor]).await.unwrap();
    let o = check.same("attestation revoked").await;
    assert!(
        of(&o, "tier 3 pays tier 0").contains("AttestationRevoked"),
        "{o:?}"
    );

    // A renewal is a new response (another claim payload: not the first transaction again).
    let renewal = Claim {
        payload_hash: [4; 32],
        ..claim
    };
    let renew = env.b.respond_to_validation(&w.attestor.pubkey(), &renewal);
    env.send(&[renew], &[&w.attestor]).await.unwrap();
    let o = check.same("attestation renewed").await;
    assert!(of(&o, "tier 3 pays tier 0").contains("Allow"), "{o:?}");

    env.send(&[accept([Pubkey::default(); 2])], &[&tier0.owner])
        .await
        .unwrap();
    let o = check.same("any attestor").await;
    assert!(of(&o, "tier 3 pays tier 0").contains("Allow"), "{o:?}");

    // Policy 3 of tier 0 is created; policy 1 of the vault payer is retired.
    let create = env.b.init_policy(
        &tier0.owner.pubkey(),
        &[],
        &tier0.asset(),
        3,
        w.payer_policy(),
        Default::default(),
        0,
    );
    env.send(&[create], &[&tier0.owner]).await.unwrap();
    let o = check.same("policy created").await;
    assert!(of(&o, "tier 0 under policy 3").contains("kind"), "{o:?}");
    let vault = w.vault_payer();
    let retire = env
        .b
        .retire_policy(&vault.owner.pubkey(), &[], &vault.asset(), 1);
    env.send(&[retire], &[&vault.owner]).await.unwrap();
    let o = check.same("policy retired").await;
    assert!(
        of(&o, "the vault payer pays the service").contains("PolicyRetired"),
        "{o:?}"
    );

    let stats = &f.caches.decisions.stats;
    assert!(stats.cached.load(Ordering::Relaxed) > 10);
    assert!(stats.uncached.load(Ordering::Relaxed) > 0);
}
