//! The stand-in against the real programs: each scenario runs on a world with the localnet's
//! stand-in and on one with the real registry, engine and MPL Core, and what the gate and its
//! callers can observe must be equal: every step's outcome (success, or the failing error
//! code), and what the registry and the engine recorded.
//!
//! Not compared yet: the engine's tier, risk and confidence bytes after a feedback. The
//! stand-in's tier model is its own (see `localnet/src/standin/engine.rs`), so a rated payee's
//! stats differ after real feedback; the scenarios below compare whether the engine counted a
//! feedback, not what it concluded.

use crate::common::*;
use crate::fixtures::externals;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_localnet::externals::admin;
use trust_gate_localnet::standin::{client as registry, stats_book};
use trust_gate_program_common::external::instructions::GiveFeedbackArgs;
use trust_gate_program_tests::transfers::sold_agents;
use trust_gate_program_tests::world::{pda, Agent, World};
use trust_gate_program_tests::{custom_code, raw_account};

/// What one scenario showed, comparable across the two worlds.
#[derive(Debug, Default, PartialEq, Eq)]
struct Outcome {
    /// Each step: `Ok`, or the failing instruction's custom error code.
    steps: Vec<Result<(), Option<u32>>>,
    /// Per payee: (feedbacks the registry recorded, feedbacks the engine counted, if it has
    /// stats).
    recorded: Vec<(u64, Option<u64>)>,
    /// Per payee: its token balance.
    balances: Vec<u64>,
}

impl Outcome {
    fn step<E>(&mut self, r: Result<(), E>, code: impl Fn(&E) -> Option<u32>) {
        self.steps.push(r.map_err(|e| code(&e)));
    }

    async fn record(&mut self, w: &mut World, payee: &Agent) {
        let registry = registry_feedback_count(w, payee).await;
        let engine = engine_count(w, payee).await;
        self.recorded.push((registry, engine));
        self.balances.push(balance(w, &payee.owner).await);
    }
}

/// The registry's feedback count: the real AgentAccount's (after the digest), or the
/// stand-in's (its own tail).
async fn registry_feedback_count(w: &mut World, agent: &Agent) -> u64 {
    if w.is_real() {
        return registry_feedback(w, agent).await.1;
    }
    let data = raw_account(&mut w.ctx, &pda::agent(&agent.asset()))
        .await
        .expect("AgentAccount")
        .data;
    trust_gate_localnet::standin::agent_tail::feedback_count(&data).expect("stand-in tail")
}

/// The engine's feedback count for the agent, if it has stats.
async fn engine_count(w: &mut World, agent: &Agent) -> Option<u64> {
    if w.is_real() {
        return engine_feedback(w, agent).await.map(|(count, _)| count);
    }
    let d = raw_account(&mut w.ctx, &pda::stats(&agent.asset()))
        .await?
        .data;
    let at = stats_book::FEEDBACK_COUNT;
    Some(u64::from_le_bytes(d[at..at + 8].try_into().unwrap()))
}

/// Runs `scenario` on the stand-in and on the real programs and compares what they showed.
macro_rules! differential {
    ($name:ident, $scenario:ident) => {
        #[tokio::test]
        async fn $name() {
            let Some(real) = externals() else {
                return;
            };
            let standin = $scenario(&mut World::new().await).await;
            let on_real = $scenario(&mut World::on_real(&real).await).await;
            assert_eq!(
                standin, on_real,
                "stand-in (left) and real programs (right)"
            );
            assert!(!on_real.steps.is_empty());
        }
    };
}

fn settled(r: Result<[u8; 32], Option<u32>>) -> Result<(), Option<u32>> {
    r.map(drop)
}

/// Settlements to payees with stats, without stats, and with reputation disabled, then a
/// dispute of each.
async fn payees_of_every_kind(w: &mut World) -> Outcome {
    let mut o = Outcome::default();
    let payer = payer(w).await;
    let payees = [
        w.register_agent_with(true, true).await,
        w.register_agent_with(true, false).await,
        w.register_agent_with(false, true).await,
    ];
    for payee in &payees {
        let paid = settle(w, &payer, payee).await;
        o.steps.push(settled(paid));
        w.advance_slots(10).await;
        if let Ok(pay) = paid {
            let ix = w.dispute_ix(&payer.owner.pubkey(), pay, &payee.asset(), [9; 32]);
            let facilitator = w.facilitator.insecure_clone();
            let owner = payer.owner.insecure_clone();
            let r = w.send(&[ix], &[&facilitator, &owner]).await;
            o.step(r, custom_code);
        }
        o.record(w, payee).await;
    }
    o
}
differential!(
    differential_payees_of_every_kind_are_paid_and_disputed,
    payees_of_every_kind
);

/// The engine paused, then resumed: a rated payee's settlement fails with the engine's code,
/// an unrated payee's goes through.
async fn paused_engine(w: &mut World) -> Outcome {
    let mut o = Outcome::default();
    let payer = payer(w).await;
    let rated = w.register_agent().await;
    let unrated = w.register_agent_with(true, false).await;
    let authority = w.engine_authority.insecure_clone();
    let pause = |on: bool| admin::set_engine_paused(&authority.pubkey(), on);
    let r = w.send(&[pause(true)], &[&authority]).await;
    o.step(r, custom_code);
    o.steps.push(settled(settle(w, &payer, &rated).await));
    o.steps.push(settled(settle(w, &payer, &unrated).await));
    // Only the config's authority may resume it.
    let stranger = Keypair::new();
    let r = w
        .send(
            &[admin::set_engine_paused(&stranger.pubkey(), false)],
            &[&stranger],
        )
        .await;
    o.step(r, custom_code);
    let r = w.send(&[pause(false)], &[&authority]).await;
    o.step(r, custom_code);
    o.steps.push(settled(settle(w, &payer, &rated).await));
    o.record(w, &rated).await;
    o.record(w, &unrated).await;
    o
}
differential!(
    differential_a_paused_engine_fails_rated_payees_only,
    paused_engine
);

/// The registry's own refusals that a client of the gate can meet: a `give_feedback` without
/// the four engine accounts, an owner rating its own agent, feedback for an asset that was
/// never registered.
async fn registry_refusals(w: &mut World) -> Outcome {
    let mut o = Outcome::default();
    let payee = w.register_agent().await;
    let collection = w.collection.pubkey();
    let args = GiveFeedbackArgs {
        value: 1,
        value_decimals: 0,
        score: Some(80),
        feedback_file_hash: None,
        tag1: String::new(),
        tag2: String::new(),
        endpoint: String::new(),
        feedback_uri: String::new(),
    };
    let rater = Keypair::new();
    let mut short =
        registry::give_feedback(&rater.pubkey(), &payee.asset(), &collection, &args, true);
    short.accounts.truncate(5);
    let r = w.send(&[short], &[&rater]).await;
    o.step(r, custom_code);
    let owner = payee.owner.insecure_clone();
    let own = registry::give_feedback(&owner.pubkey(), &payee.asset(), &collection, &args, true);
    let r = w.send(&[own], &[&owner]).await;
    o.step(r, custom_code);
    let nobody = Keypair::new().pubkey();
    let unknown = registry::give_feedback(&rater.pubkey(), &nobody, &collection, &args, false);
    let r = w.send(&[unknown], &[&rater]).await;
    o.step(r, custom_code);
    // Without a score the registry records the feedback and leaves the engine out.
    let unscored = GiveFeedbackArgs {
        score: None,
        ..args.clone()
    };
    let ix = registry::give_feedback(
        &rater.pubkey(),
        &payee.asset(),
        &collection,
        &unscored,
        true,
    );
    let r = w.send(&[ix], &[&rater]).await;
    o.step(r, custom_code);
    let ix = registry::give_feedback(&rater.pubkey(), &payee.asset(), &collection, &args, true);
    let r = w.send(&[ix], &[&rater]).await;
    o.step(r, custom_code);
    o.record(w, &payee).await;
    o
}
differential!(differential_the_registry_refuses_alike, registry_refusals);

/// An agent wallet set by the registry's own flow (the wallet's Ed25519 signature over the
/// wallet-set message, a deadline), then a payment signed by that wallet; and the flow's
/// refusals.
async fn agent_wallets(w: &mut World) -> Outcome {
    let mut o = Outcome::default();
    let payer = payer(w).await;
    let payee = w.register_agent_with(true, false).await;
    let hot = Keypair::new();
    let owner = payer.owner.insecure_clone();
    let now = trust_gate_program_tests::clock(&mut w.ctx)
        .await
        .unix_timestamp;
    let set = |signer: &Keypair, asset: &solana_sdk::pubkey::Pubkey, wallet: &Keypair, deadline| {
        trust_gate_program_tests::world::sdk().set_agent_wallet(
            &signer.pubkey(),
            asset,
            wallet,
            deadline,
        )
    };
    let asset = payer.asset();
    let attempts: Vec<(Vec<solana_sdk::instruction::Instruction>, &Keypair)> = vec![
        (set(&owner, &asset, &hot, now - 1).to_vec(), &owner),
        (set(&owner, &asset, &hot, now + 301).to_vec(), &owner),
        (set(&owner, &asset, &hot, now + 60)[1..].to_vec(), &owner),
        (
            vec![
                set(&owner, &asset, &Keypair::new(), now + 60)[0].clone(),
                set(&owner, &asset, &hot, now + 60)[1].clone(),
            ],
            &owner,
        ),
        (set(&hot, &asset, &hot, now + 60).to_vec(), &hot),
        (
            set(&owner, &Keypair::new().pubkey(), &hot, now + 60).to_vec(),
            &owner,
        ),
        (set(&owner, &asset, &hot, now + 60).to_vec(), &owner),
    ];
    for (ixs, signer) in attempts {
        let r = w.send(&ixs, &[signer]).await;
        o.step(r, custom_code);
    }
    // The wallet pays for the agent, from its own token account.
    let as_wallet = Agent {
        owner: hot.insecure_clone(),
        asset: payer.asset.insecure_clone(),
    };
    w.token_account(&hot.pubkey(), 10 * AMOUNT).await;
    o.steps.push(settled(settle(w, &as_wallet, &payee).await));
    o.record(w, &payee).await;
    o
}
differential!(
    differential_an_agent_wallet_is_set_by_its_signature_and_pays,
    agent_wallets
);

/// Agents sold on MPL Core without the registry's `sync_owner` (`transfers::sold_agents`):
/// every step's outcome and where the payee's money went.
#[tokio::test]
async fn differential_a_sold_agent_is_judged_by_its_asset_alike() {
    let Some(real) = externals() else {
        return;
    };
    let standin = sold_agents(&mut World::new().await).await;
    let on_real = sold_agents(&mut World::on_real(&real).await).await;
    assert_eq!(
        standin, on_real,
        "stand-in (left) and real programs (right)"
    );
}
