//! Held settlements for the program and externals suites (docs/holdback.md): a payer whose
//! policy holds back a share by the payee's tier, a payee that accepts it, the payee's escrow,
//! and the settlement composed by the SDK from the gate's own quote.

use crate::world::{sdk, Agent, World, DECIMALS};
use crate::{fetch, raw_account, send};
use anchor_spl::token::spl_token;
use gate::holdback::HeldShare;
use gate::state::FeedbackLog;
use policy_vault::engine::Holdback;
use policy_vault::state::{AcceptanceParams, HoldbackAcceptance, HoldbackSchedule, HoldbackTerm};
use solana_program_test::BanksClientError;
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::holdback::{HeldPayment, HoldbackQuote};
use trust_gate_client::instructions::Attestations;
use trust_gate_client::settle::{
    self, AtomicityEnforced, ComputeBudget, Feedback, Funding, Settlement, TokenProgram,
};

pub const DAY: u32 = 86_400;

/// The schedule of the suites: 20 % for 7 days at tier 0, 10 % for 5 days at tier 1, 5 % for
/// 3 days at tier 2, 1 % for a day at tier 3, nothing at tier 4; an unrated payee 30 % for 10
/// days (longer than the dispute window). `arbiter`: the default key for none.
pub fn schedule(arbiter: Pubkey) -> HoldbackSchedule {
    let t = |share_bps, days: u32| HoldbackTerm {
        share_bps,
        hold_secs: days * DAY,
    };
    HoldbackSchedule {
        terms: [
            t(2_000, 7),
            t(1_000, 5),
            t(500, 3),
            t(100, 1),
            t(0, 0),
            t(3_000, 10),
        ],
        arbiter,
    }
}

/// What a payee accepts of it all: up to 30 % for 10 days, and `arbiter`.
pub fn accepts(arbiter: Pubkey) -> HoldbackAcceptance {
    HoldbackAcceptance {
        max_share_bps: 3_000,
        max_hold_secs: 10 * DAY,
        arbiters: [arbiter, Pubkey::default()],
    }
}

/// An acceptance policy that accepts any payer and `holdback`.
pub fn acceptance(holdback: HoldbackAcceptance) -> AcceptanceParams {
    AcceptanceParams {
        min_payer_tier: 0,
        gate_mode: 0,
        max_payer_risk: 255,
        min_payer_confidence: 0,
        unrated_treatment: 1,
        required_capability: [0; 32],
        accepted_attestors: [Pubkey::default(); 2],
        holdback,
    }
}

/// The parties of a held settlement.
pub struct Held {
    pub payer: Agent,
    pub payee: Agent,
    pub arbiter: Keypair,
    pub source: Pubkey,
    pub destination: Pubkey,
    pub escrow: Pubkey,
}

impl Held {
    /// The payer owner's token account a refund or an upheld dispute pays.
    pub fn payer_token(&self) -> Pubkey {
        self.source
    }

    /// The settlement case of these parties: wallet-funded, no attestations, no priority fee.
    pub fn case(&self) -> HeldCase<'_> {
        HeldCase {
            payer: &self.payer,
            payee: &self.payee,
            attestations: Attestations::default(),
            funding: Funding::Wallet,
            source: self.source,
            destination: self.destination,
            escrow: self.escrow,
            compute_budget: ComputeBudget::default(),
        }
    }
}

/// What a settlement of policy 1 between two agents needs besides its amount.
pub struct HeldCase<'a> {
    pub payer: &'a Agent,
    pub payee: &'a Agent,
    pub attestations: Attestations,
    pub funding: Funding,
    /// The payer signer's token account (a vault-funded payment's release goes through it).
    pub source: Pubkey,
    pub destination: Pubkey,
    /// The payee's escrow in the mint.
    pub escrow: Pubkey,
    pub compute_budget: ComputeBudget,
}

impl World {
    /// A payer (tier 3) with 100 tokens under policy 1 = an open policy with `schedule`, a
    /// payee of tier `payee_tier` (the stand-in sets it; the real engine keeps its own) with
    /// an authority and `acceptance` (none: no acceptance policy), and the payee's escrow.
    pub async fn held_parties(
        &mut self,
        arbiter: Keypair,
        schedule: Option<HoldbackSchedule>,
        payee_tier: u8,
        acceptance: Option<AcceptanceParams>,
    ) -> Held {
        let payer = self.register_agent().await;
        if !self.is_real() {
            self.set_stats(&payer.asset(), crate::world::tier(3)).await;
        }
        self.init_authority(&payer).await;
        let policy = crate::world::open_policy(self.mint);
        self.init_policy_of(&payer, 1, policy, Default::default(), 0, schedule)
            .await
            .unwrap();
        let payee = self.register_agent().await;
        if !self.is_real() {
            self.set_stats(&payee.asset(), crate::world::tier(payee_tier))
                .await;
        }
        self.init_authority(&payee).await;
        if let Some(params) = acceptance {
            let ix = self.set_acceptance_ix(&payee.owner.pubkey(), &[], &payee.asset(), params);
            send(&mut self.ctx, &[ix], &[&payee.owner]).await.unwrap();
        }
        let source = self.token_account(&payer.owner.pubkey(), 100_000_000).await;
        let destination = self.token_account(&payee.owner.pubkey(), 0).await;
        let escrow = self.open_escrow(&payee.asset()).await;
        Held {
            payer,
            payee,
            arbiter,
            source,
            destination,
            escrow,
        }
    }

    /// Opens the escrow of `payee` in the world's mint.
    pub async fn open_escrow(&mut self, payee: &Pubkey) -> Pubkey {
        let payer = self.ctx.payer.pubkey();
        let ix = sdk().open_holdback_escrow(&payer, payee, &self.mint, &spl_token::ID);
        send(&mut self.ctx, &[ix], &[]).await.unwrap();
        sdk().pda.holdback_escrow(payee, &self.mint)
    }

    /// The holdback the gate decides for a payment of `amount` in case `c` now (what a
    /// facilitator quotes in its challenge).
    pub async fn quote(&mut self, c: &HeldCase<'_>, amount: u64) -> Option<Holdback> {
        let ix = self.gate_payment_ix(
            &c.payer.asset(),
            &c.payee.asset(),
            amount,
            self.mint,
            1,
            c.attestations,
        );
        Holdback::from_wire(&self.simulate_wire(ix).await)
    }

    /// The holdback the gate decides for a payment of `amount` from `h.payer` to `h.payee`.
    pub async fn holdback_of(&mut self, h: &Held, amount: u64) -> Option<Holdback> {
        self.quote(&h.case(), amount).await
    }

    /// The SDK's settlement of `amount` in case `c` carrying `quote`.
    pub fn compose_held(
        &self,
        c: &HeldCase<'_>,
        amount: u64,
        quote: Option<HoldbackQuote>,
        payment: [u8; 32],
    ) -> Vec<Instruction> {
        let s = Settlement {
            facilitator: self.facilitator.pubkey(),
            payer_signer: c.payer.owner.pubkey(),
            payer_asset: c.payer.asset(),
            payee_asset: c.payee.asset(),
            policy_id: 1,
            deadline: self.deadline(),
            mint: self.mint,
            decimals: DECIMALS,
            token_program: TokenProgram::SplToken,
            amount,
            source_token: c.source,
            destination_token: c.destination,
            collection: self.collection.pubkey(),
            attestations: c.attestations,
            feedback: Feedback {
                payment_id_hash: payment,
                score: 90,
                tag1: "x402".into(),
                tag2: String::new(),
                endpoint: "https://demo.example/protected".into(),
                feedback_uri: String::new(),
            },
            compute_budget: c.compute_budget,
            funding: c.funding,
            approval: None,
            holdback: quote,
        };
        settle::compose(&sdk(), &s, AtomicityEnforced::TRUE).expect("a settlement")
    }

    /// The settlement of `amount` from `h.payer` to `h.payee` carrying `quote`.
    pub fn held_settlement(
        &self,
        h: &Held,
        amount: u64,
        quote: Option<HoldbackQuote>,
        payment: [u8; 32],
    ) -> Vec<Instruction> {
        self.compose_held(&h.case(), amount, quote, payment)
    }

    /// Quotes and composes a settlement of `amount` in case `c`, as a facilitator would.
    pub async fn quoted_settlement(
        &mut self,
        c: &HeldCase<'_>,
        amount: u64,
        payment: [u8; 32],
    ) -> (Option<Holdback>, Vec<Instruction>) {
        let holdback = self.quote(c, amount).await;
        let quote = holdback.map(|q| HoldbackQuote::of(&q, c.escrow));
        (holdback, self.compose_held(c, amount, quote, payment))
    }

    /// Quotes and settles `amount` as a facilitator would; returns the quote.
    pub async fn settle_held(
        &mut self,
        h: &Held,
        amount: u64,
        payment: [u8; 32],
    ) -> Result<Option<Holdback>, BanksClientError> {
        let (holdback, ixs) = self.quoted_settlement(&h.case(), amount, payment).await;
        self.send_settlement(&h.payer, &ixs).await?;
        Ok(holdback)
    }

    /// The payer's dispute of `payment` (the facilitator pays the record's rent).
    pub async fn dispute_held(
        &mut self,
        h: &Held,
        payment: [u8; 32],
    ) -> Result<(), BanksClientError> {
        let ix = self.dispute_ix(&h.payer.owner.pubkey(), payment, &h.payee.asset(), [7; 32]);
        let (payer, facilitator) = (
            h.payer.owner.insecure_clone(),
            self.facilitator.insecure_clone(),
        );
        self.send(&[ix], &[&payer, &facilitator]).await
    }

    /// The payment's log.
    pub async fn log(&mut self, payment: &[u8; 32]) -> FeedbackLog {
        let address = sdk().pda.feedback_log(&self.facilitator.pubkey(), payment);
        fetch(&mut self.ctx, &address)
            .await
            .expect("the payment's log")
    }

    /// The held share of `payment` as its log records it, if any.
    pub async fn held_share(&mut self, payment: &[u8; 32]) -> Option<HeldShare> {
        let address = sdk().pda.feedback_log(&self.facilitator.pubkey(), payment);
        let log = raw_account(&mut self.ctx, &address).await?;
        FeedbackLog::held_share_in(&log.data)
    }

    /// The held payment `payment` as its log records it.
    pub async fn held_payment(&mut self, payment: &[u8; 32]) -> HeldPayment {
        let address = sdk().pda.feedback_log(&self.facilitator.pubkey(), payment);
        let log = raw_account(&mut self.ctx, &address).await.expect("the log");
        HeldPayment::from_log_data(&log.data, spl_token::ID).expect("a held payment")
    }

    /// The payee's registry response count (the outcomes attached to its feedback).
    pub async fn response_count(&mut self, payee: &Pubkey) -> u64 {
        let account = raw_account(&mut self.ctx, &sdk().pda.agent_account(payee))
            .await
            .expect("the payee's AgentAccount");
        trust_gate_program_common::external::agent_account::response_count(&account.data)
            .expect("an AgentAccount")
    }
}
