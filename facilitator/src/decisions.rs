//! Deciding at the cost of one RPC round trip.
//!
//! A decision is a simulation of `gate_payment`, which needs the attestation accounts the
//! gate would see; finding them takes reads (the payer's policy, the payee's acceptance
//! policy, the attestations). Most of that cannot change or rarely does, so it is cached,
//! and every cached input is checked against the simulation's own view of the chain in the
//! same call (`simulateTransaction`'s `accounts`):
//!
//! - a policy's rule (required capability, accepted attestors) is immutable: cached once read;
//! - an acceptance policy can be replaced: cached, and compared with the copy the simulation
//!   returns;
//! - which attestation of the attestors a rule names the gate should see: cached, and
//!   recomputed from the copies of those attestation accounts the simulation returns;
//! - the facilitator paying the simulation's fee: cached while simulations accept it.
//!
//! When any check fails (something changed), the decision is made again the uncached way,
//! which reads everything and refills the cache. What can change between calls without
//! being an input here (kill switch, velocity, reputation stats, retirement, attestation
//! state) is read by the simulation itself. A rule that accepts any attestor needs a
//! `getProgramAccounts` scan (a new attestation by anyone counts), so it is never cached.

use crate::bounded::BoundedMap;
use solana_sdk::account::Account;
use solana_sdk::pubkey::Pubkey;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use trust_gate_client::chain::{attestation_in, best_attestation, named_attestations};
use trust_gate_client::decode::Decision;
use trust_gate_client::instructions::Attestations;
use trust_gate_client::simulate::{
    self, acceptance_rule, now_unix, policy_rule, simulate_decision, simulate_wire, PaymentQuery,
    PolicyRule, Rule, Simulated,
};
use trust_gate_client::{Builder, ClientError, RpcClient};

/// The attestation accounts of the attestors a rule names, and which of them the gate
/// should see.
#[derive(Clone)]
struct Choice {
    candidates: Vec<Pubkey>,
    chosen: Option<Pubkey>,
}

/// How the cache fared, for benchmarks and tests.
#[derive(Debug, Default)]
pub struct CacheStats {
    /// Decisions made in one simulation from cached inputs that the simulation confirmed.
    pub cached: AtomicU64,
    /// Decisions made the uncached way (cold, or something changed).
    pub uncached: AtomicU64,
}

#[derive(Default)]
/// Each map holds at most [`crate::bounded::DEFAULT_CAPACITY`] entries: past it, it starts
/// over (a cold entry costs one uncached decision).
pub struct DecisionCache {
    policies: BoundedMap<(Pubkey, u32), PolicyRule>,
    acceptances: BoundedMap<Pubkey, Option<Rule>>,
    /// Per side of a payment that needs an attestation: who it is about, under which rule.
    choices: BoundedMap<(Pubkey, Rule), Choice>,
    /// The simulated transactions (base64): pure functions of the payment, its
    /// attestations and the fee payer.
    wires: BoundedMap<(PaymentQuery, Attestations, Pubkey), Arc<str>>,
    fee_payer_funded: AtomicBool,
    pub stats: CacheStats,
}

/// The inputs of a cached decision, and what the simulation must confirm of them.
struct Plan {
    attestations: Attestations,
    /// policy, acceptance, then each side's named attestation accounts.
    watch: Vec<Pubkey>,
    policy: PolicyRule,
    acceptance: Option<Rule>,
    /// The choice per side with a capability, in watch order after the first two.
    sides: Vec<Choice>,
}

fn needs_capability(rule: &Rule) -> bool {
    rule.0 != [0; 32]
}

impl DecisionCache {
    /// The decision for `q` as `simulate::gate_payment` with the facilitator as caller
    /// makes it (from cached inputs in one round trip when the simulation confirms them),
    /// and the `extra` accounts read in the same simulation (the state the decision's caller
    /// needs besides it, at no extra round trip). The outer error is the RPC's.
    ///
    /// Unless the cached inputs are confirmed, the decision is made the uncached way: read the
    /// policy and the acceptance policy, find the attestations, pick a fee payer, simulate
    /// (reading `extra` too); then remember what can be cached.
    pub async fn decide_reading(
        &self,
        rpc: &RpcClient,
        b: &Builder,
        facilitator: Pubkey,
        q: &PaymentQuery,
        extra: &[Pubkey],
    ) -> Result<Simulated, ClientError> {
        if let Some(plan) = self.plan(b, q) {
            let wire = self.wire(b, &facilitator, q, plan.attestations)?;
            let watch = [plan.watch.as_slice(), extra].concat();
            let mut sim = simulate_wire(rpc, b, &wire, &watch).await?;
            if self.confirms(b, &plan, &sim.accounts, &sim.decision) {
                self.stats.cached.fetch_add(1, Ordering::Relaxed);
                sim.accounts = sim.accounts.split_off(plan.watch.len());
                return Ok(sim);
            }
        }
        self.stats.uncached.fetch_add(1, Ordering::Relaxed);
        let (policy, acceptance) = simulate::rules(rpc, b, q).await?;
        let now = now_unix();
        let att = simulate::attestations_by_rules(rpc, b, q, (policy, acceptance), now).await?;
        let fee_payer = if self.fee_payer_funded.load(Ordering::Relaxed) {
            facilitator
        } else {
            simulate::simulation_fee_payer(rpc, b, facilitator, q).await?
        };
        let sim = simulate_decision(rpc, b, &fee_payer, q, att, extra).await?;
        self.fee_payer_funded.store(
            fee_payer == facilitator && !fee_payer_refused(&sim.decision),
            Ordering::Relaxed,
        );
        // A policy exists once created and its rule never changes; a missing one is not
        // remembered (it may be created).
        if let Some(rule) = policy {
            self.policies.put((q.payer_asset, q.policy_id), rule);
            self.remember_choice(b, q.payee_asset, rule.payee, att.payee);
        }
        self.acceptances.put(q.payee_asset, acceptance);
        if let Some(rule) = acceptance {
            self.remember_choice(b, q.payer_asset, rule, att.payer);
        }
        Ok(sim)
    }

    /// The arbiter of the holdback schedule of `q`'s policy, once a decision read the policy
    /// (it is immutable): the default key for none.
    pub fn arbiter(&self, q: &PaymentQuery) -> Option<Pubkey> {
        self.policies
            .get(&(q.payer_asset, q.policy_id))
            .map(|r| r.arbiter)
    }

    /// The cached inputs for `q`, or `None` when something is not cached (or a rule needs a
    /// scan).
    fn plan(&self, b: &Builder, q: &PaymentQuery) -> Option<Plan> {
        if !self.fee_payer_funded.load(Ordering::Relaxed) {
            return None;
        }
        let policy = self.policies.get(&(q.payer_asset, q.policy_id))?;
        let acceptance = self.acceptances.get(&q.payee_asset)?;
        // The SDK remembers derived addresses, so this costs no derivation.
        let mut watch = simulate::rule_accounts(b, q).to_vec();
        let mut attestations = Attestations {
            payee_list: policy.payee_list,
            ..Attestations::default()
        };
        let mut sides = Vec::new();
        // The payer's policy asks about the payee; the payee's acceptance about the payer.
        for (subject, rule, slot) in [
            (q.payee_asset, Some(policy.payee), &mut attestations.payee),
            (q.payer_asset, acceptance, &mut attestations.payer),
        ] {
            let Some(rule) = rule.filter(needs_capability) else {
                continue;
            };
            let choice = self.choices.get(&(subject, rule))?;
            *slot = choice.chosen;
            watch.extend(&choice.candidates);
            sides.push(choice);
        }
        Some(Plan {
            attestations,
            watch,
            policy,
            acceptance,
            sides,
        })
    }

    /// The simulated transaction of `q` (see [`simulate::decision_transaction`]).
    fn wire(
        &self,
        b: &Builder,
        fee_payer: &Pubkey,
        q: &PaymentQuery,
        att: Attestations,
    ) -> Result<Arc<str>, ClientError> {
        let key = (*q, att, *fee_payer);
        if let Some(w) = self.wires.get(&key) {
            return Ok(w);
        }
        let w: Arc<str> = simulate::decision_transaction(b, fee_payer, q, att)?.into();
        self.wires.put(key, w.clone());
        Ok(w)
    }

    /// Whether the simulation saw the inputs the plan assumed.
    fn confirms(
        &self,
        b: &Builder,
        plan: &Plan,
        accounts: &[Option<Account>],
        decision: &Result<Decision, ClientError>,
    ) -> bool {
        if fee_payer_refused(decision) {
            self.fee_payer_funded.store(false, Ordering::Relaxed);
            return false;
        }
        let same_policy =
            matches!(policy_rule(b, accounts[0].as_ref()), Ok(Some(r)) if r == plan.policy);
        let same_acceptance =
            matches!(acceptance_rule(b, accounts[1].as_ref()), Ok(r) if r == plan.acceptance);
        if !same_policy || !same_acceptance {
            return false;
        }
        let now = now_unix();
        let mut at = 2;
        for choice in &plan.sides {
            let n = choice.candidates.len();
            let found: Vec<_> = choice
                .candidates
                .iter()
                .zip(&accounts[at..at + n])
                .filter_map(|(k, acc)| attestation_in(&b.ids, acc.as_ref()).map(|a| (*k, a)))
                .collect();
            if best_attestation(&found, now) != choice.chosen {
                return false;
            }
            at += n;
        }
        true
    }

    /// Remembers the attestation chosen for a rule that names its attestors (a rule for any
    /// attestor is scanned every time).
    fn remember_choice(&self, b: &Builder, subject: Pubkey, rule: Rule, chosen: Option<Pubkey>) {
        if !needs_capability(&rule) {
            return;
        }
        let candidates = named_attestations(&b.ids, &subject, &rule.0, &rule.1);
        if !candidates.is_empty() {
            self.choices
                .put((subject, rule), Choice { candidates, chosen });
        }
    }
}

/// Whether a simulation failed because its fee payer could not pay (missing or unfunded).
fn fee_payer_refused(decision: &Result<Decision, ClientError>) -> bool {
    use solana_sdk::transaction::TransactionError;
    matches!(
        decision,
        Err(ClientError::SimulationFailed {
            err: Some(
                TransactionError::AccountNotFound | TransactionError::InsufficientFundsForFee
            ),
            ..
        })
    )
}
