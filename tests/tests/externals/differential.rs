//! The stand-in against the real programs: each scenario runs on a world with the localnet's
//! stand-in and on one with the real registry, engine and MPL Core, and what the gate and its
//! callers can observe must be equal: every step's outcome (success, or the failing error
//! code), and what the registry and the engine recorded (the AgentAccount read at the real
//! registry's offsets, on both: the stand-in keeps its layout and its hash chains).
//!
//! Not compared yet: the engine's tier, risk and confidence bytes after a feedback. The
//! stand-in's tier model is its own (see `localnet/src/standin/engine.rs`), so a rated payee's
//! stats differ after real feedback; the scenarios below compare whether the engine counted a
//! feedback, not what it concluded.

use crate::common::*;
use crate::fixtures::externals;
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::{instruction::Instruction, pubkey::Pubkey};
use trust_gate_localnet::externals::admin;
use trust_gate_localnet::standin::{
    agent_tail, chains, client as registry, stats_book, RegistryError,
};
use trust_gate_program_common::external::agent_account;
use trust_gate_program_common::external::instructions::{AppendResponseArgs, GiveFeedbackArgs};
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
    /// AgentAccounts read back after the agent wallet ([`Outcome::tail`]).
    tails: Vec<TailSeen>,
}

/// An AgentAccount after its agent wallet, as both worlds can compare it: what
/// `external::agent_account` reads (the gate's feedback and response counts), and the whole
/// tail decoded with the stand-in's layout (`agent_tail::read`), its wallet key and digests
/// (which differ with each world's fresh keys) replaced by whether the wallet is set and
/// whether each digest is the one recomputed from what the scenario sent.
#[derive(Debug, PartialEq, Eq)]
struct TailSeen {
    /// `agent_account::feedback_count` and `response_count`.
    counts: (Option<u64>, Option<u64>),
    wallet: bool,
    /// The decoded tail's feedback, response and revoke counts.
    tail_counts: (u64, u64, u64),
    parent: Option<Pubkey>,
    locks: (bool, bool),
    strings: (String, String, String),
    digests_recomputed: (bool, bool),
}

impl Outcome {
    fn step<E>(&mut self, r: Result<(), E>, code: impl Fn(&E) -> Option<u32>) {
        self.steps.push(r.map_err(|e| code(&e)));
    }

    /// Reads `agent`'s AgentAccount back into [`Outcome::tails`]; `chains` are the digests
    /// it must hold.
    async fn tail(&mut self, w: &mut World, agent: &Agent, chains: &Chains) {
        let data = raw_account(&mut w.ctx, &pda::agent(&agent.asset()))
            .await
            .expect("AgentAccount")
            .data;
        let counts = (
            agent_account::feedback_count(&data),
            agent_account::response_count(&data),
        );
        let tail = agent_tail::read(&data).expect("the tail decodes with the stand-in's layout");
        let digests_recomputed = (
            tail.feedback_digest == chains.feedback,
            tail.response_digest == chains.response,
        );
        assert_eq!(
            digests_recomputed,
            (true, true),
            "the {} registry's digests are the recomputed ones",
            if w.is_real() { "real" } else { "stand-in" }
        );
        self.tails.push(TailSeen {
            counts,
            wallet: tail.agent_wallet.is_some(),
            tail_counts: (tail.feedback_count, tail.response_count, tail.revoke_count),
            parent: tail.parent_asset,
            locks: (tail.parent_locked, tail.col_locked),
            strings: (tail.agent_uri, tail.nft_name, tail.col),
            digests_recomputed,
        });
    }

    async fn record(&mut self, w: &mut World, payee: &Agent) {
        let registry = registry_feedback_count(w, payee).await;
        let engine = engine_count(w, payee).await;
        self.recorded.push((registry, engine));
        self.balances.push(balance(w, &payee.owner).await);
    }
}

/// The registry's feedback count, read as the gate reads it (the stand-in keeps the real
/// layout).
async fn registry_feedback_count(w: &mut World, agent: &Agent) -> u64 {
    registry_feedback(w, agent).await.1
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

/// An agent's feedback and response chains as the registry must hold them, recomputed from
/// what a scenario sent (each at the slot it ran in).
#[derive(Default)]
struct Chains {
    feedback: [u8; 32],
    feedback_count: u64,
    response: [u8; 32],
}

impl Chains {
    /// `give_feedback` from `client` to `agent` (no engine: the scenario's agents have no
    /// stats).
    async fn give(
        &mut self,
        w: &mut World,
        client: &Keypair,
        agent: &Agent,
        args: &GiveFeedbackArgs,
    ) -> Result<(), Option<u32>> {
        let asset = agent.asset();
        let slot = trust_gate_program_tests::clock(&mut w.ctx).await.slot;
        let ix = registry::give_feedback(
            &client.pubkey(),
            &asset,
            &w.collection.pubkey(),
            args,
            false,
        );
        let r = w.send(&[ix], &[client]).await.map_err(|e| custom_code(&e));
        if r.is_ok() {
            self.feedback = chains::next_feedback_digest(
                &self.feedback,
                &asset,
                &client.pubkey(),
                self.feedback_count,
                args,
                slot,
            );
            self.feedback_count += 1;
        }
        r
    }

    /// `append_response` by `responder` to `agent`'s feedback, the instruction first changed
    /// by `change`; the responder signs when the instruction still says it does.
    async fn respond(
        &mut self,
        w: &mut World,
        responder: &Keypair,
        agent: &Agent,
        args: &AppendResponseArgs,
        change: impl FnOnce(&mut Instruction),
    ) -> Result<(), Option<u32>> {
        let asset = agent.asset();
        let slot = trust_gate_program_tests::clock(&mut w.ctx).await.slot;
        let mut ix = registry::append_response(&responder.pubkey(), &asset, args);
        change(&mut ix);
        let signers: Vec<&Keypair> = if ix.accounts[0].is_signer {
            vec![responder]
        } else {
            vec![]
        };
        let r = w.send(&[ix], &signers).await.map_err(|e| custom_code(&e));
        if r.is_ok() {
            self.response = chains::next_response_digest(
                &self.response,
                &asset,
                &responder.pubkey(),
                args,
                slot,
            );
        }
        r
    }
}

/// A change made to an instruction before it is sent.
type Change = Box<dyn FnOnce(&mut Instruction)>;

/// `append_response`, the registry's permissionless response to a feedback (what the gate
/// will attach a dispute's outcome with): responses counted and chained; an index at or past
/// the feedback count, a URI of 251 bytes (checked after the index), a wrong asset, a
/// responder who did not sign, an agent never registered refused with the real codes; and the
/// gate's reader of the feedback count (`external::agent_account`) finding it on both
/// registries, before and after an agent wallet moves it.
async fn responses(w: &mut World) -> Outcome {
    let mut o = Outcome::default();
    let payee = w.register_agent_with(true, false).await;
    let other = w.register_agent_with(true, false).await;
    let (rater, responder) = (Keypair::new(), Keypair::new());
    let mut chains = Chains::default();
    // Every response differs by its hash, so that no two transactions are the same.
    let mut next_hash = 0u8;
    let mut reply = |feedback_index: u64, uri: &str| {
        next_hash += 1;
        AppendResponseArgs {
            client_address: rater.pubkey(),
            feedback_index,
            response_uri: uri.to_string(),
            response_hash: [next_hash; 32],
            seal_hash: [7; 32],
        }
    };
    let feedback = |value: i128| GiveFeedbackArgs {
        value,
        value_decimals: 6,
        score: Some(90),
        feedback_file_hash: Some([3; 32]),
        tag1: "x402".into(),
        tag2: "dispute".into(),
        endpoint: "https://agents.example/api".into(),
        feedback_uri: "ipfs://feedback".into(),
    };
    let keep = |_: &mut Instruction| {};
    let (longest, too_long) = ("r".repeat(250), "r".repeat(251));

    // No feedback yet: index 0 does not exist.
    let r = chains
        .respond(w, &responder, &payee, &reply(0, ""), keep)
        .await;
    o.steps.push(r);
    o.tail(w, &payee, &chains).await;
    let r = chains.give(w, &rater, &payee, &feedback(1)).await;
    o.steps.push(r);
    o.tail(w, &payee, &chains).await;
    // The response count goes from 0 to 1, then 2.
    let r = chains
        .respond(w, &responder, &payee, &reply(0, "ipfs://response"), keep)
        .await;
    o.steps.push(r);
    o.tail(w, &payee, &chains).await;
    w.advance_slots(3).await;
    let r = chains
        .respond(w, &responder, &payee, &reply(0, &longest), keep)
        .await;
    o.steps.push(r);
    o.tail(w, &payee, &chains).await;
    // Refusals.
    let refusals: Vec<(AppendResponseArgs, Change)> = vec![
        // feedback_index == feedback_count.
        (reply(1, ""), Box::new(keep)),
        // The index is checked before the URI.
        (reply(1, &too_long), Box::new(keep)),
        (reply(0, &too_long), Box::new(keep)),
        // Another asset than the AgentAccount's: a stranger key, another agent's asset.
        (
            reply(0, ""),
            Box::new(|ix: &mut Instruction| ix.accounts[2].pubkey = Pubkey::new_unique()),
        ),
        (reply(0, ""), {
            let asset = other.asset();
            Box::new(move |ix: &mut Instruction| ix.accounts[2].pubkey = asset)
        }),
        // The responder did not sign.
        (
            reply(0, ""),
            Box::new(|ix: &mut Instruction| ix.accounts[0].is_signer = false),
        ),
        // A read-only AgentAccount.
        (
            reply(0, ""),
            Box::new(|ix: &mut Instruction| ix.accounts[1].is_writable = false),
        ),
    ];
    for (args, change) in refusals {
        let r = chains.respond(w, &responder, &payee, &args, change).await;
        o.steps.push(r);
    }
    // An asset never registered: its AgentAccount does not exist.
    let nobody = Agent {
        owner: Keypair::new(),
        asset: Keypair::new(),
    };
    let r = chains
        .respond(w, &responder, &nobody, &reply(0, ""), keep)
        .await;
    o.steps.push(r);
    o.tail(w, &payee, &chains).await;

    // An agent wallet moves the counts by 32 bytes; the gate's reader follows.
    let hot = Keypair::new();
    w.set_agent_wallet(&payee, &hot).await;
    o.tail(w, &payee, &chains).await;
    let r = chains.give(w, &rater, &payee, &feedback(2)).await;
    o.steps.push(r);
    let r = chains
        .respond(w, &hot, &payee, &reply(1, "ipfs://second"), keep)
        .await;
    o.steps.push(r);
    let r = chains
        .respond(w, &responder, &payee, &reply(2, ""), keep)
        .await;
    o.steps.push(r);
    o.tail(w, &payee, &chains).await;
    o.tail(w, &other, &Chains::default()).await;
    o
}

#[tokio::test]
async fn differential_append_response_counts_chains_and_refuses_alike() {
    let Some(real) = externals() else {
        return;
    };
    let standin = responses(&mut World::new().await).await;
    let on_real = responses(&mut World::on_real(&real).await).await;
    assert_eq!(
        standin, on_real,
        "stand-in (left) and real programs (right)"
    );
    use RegistryError as E;
    let code = |e: E| Err(Some(e as u32));
    assert_eq!(
        on_real.steps,
        vec![
            code(E::InvalidFeedbackIndex),
            Ok(()),
            Ok(()),
            Ok(()),
            code(E::InvalidFeedbackIndex),
            code(E::InvalidFeedbackIndex),
            code(E::ResponseUriTooLong),
            code(E::InvalidAddress),
            code(E::InvalidAddress),
            code(E::MissingSigner),
            code(E::AccountNotWritable),
            code(E::InvalidAccountData),
            Ok(()),
            Ok(()),
            code(E::InvalidFeedbackIndex),
        ]
    );
    let counts: Vec<_> = on_real.tails.iter().map(|t| t.counts).collect();
    let some = |f: u64, r: u64| (Some(f), Some(r));
    assert_eq!(
        counts,
        vec![
            some(0, 0),
            some(1, 0),
            some(1, 1),
            some(1, 2),
            some(1, 2),
            some(1, 2),
            some(2, 3),
            some(0, 0),
        ]
    );
    let wallets: Vec<bool> = on_real.tails.iter().map(|t| t.wallet).collect();
    assert_eq!(
        wallets,
        [false, false, false, false, false, true, true, false]
    );
}
