//! Gated subscriptions (docs/subscriptions.md) on the REAL bytecode of Solana's Subscriptions
//! program (`../shared/fixtures/subscriptions`), with our programs natively or, with
//! `SBF_OUT_DIR`, their SBF builds, and the registry's stand-in: the setup in one
//! transaction, pulls within the period and the policy in SPL Token and Token-2022, the
//! next period's, every refusal (the policy's, the period's, the kill switch's, the
//! parties', the delegation's, the sender's), approvals, the cancel and its rent
//! (`life`, `refusals`); a pull's units and size (`units`); the localnet's stand-in of the
//! program against the real one (`standin`). A missing build fails the suite with one line
//! naming it.

mod life;
mod refusals;
mod standin;
mod units;

use gate::state::{FeedbackLog, GatedSubscription};
use policy_vault::state::PolicyParams;
use solana_program_test::BanksClientError;
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::instructions::{Attestations, FeedbackDetails, Subscription};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::subscriptions::{self, RecurringDelegation, RecurringTerms};
use trust_gate_program_tests::world::{demo_policy, sdk, Agent, World};
use trust_gate_program_tests::{fetch, raw_account, send};

const DAY: u64 = 86_400;
/// What each period allows: below the demo policy's per-payment cap (5 tokens), so that
/// the period's cap and the policy's can be told apart.
const PER_PERIOD: u64 = 3_000_000;
/// What the payer's wallet holds.
const FUNDS: u64 = 100_000_000;

/// A bank with the real Subscriptions program, a payer agent (tier 3, policy 1 = the demo
/// policy in the suite's mint, its owner's associated account funded) and a payee (tier 3,
/// its owner's associated account).
struct Setup {
    w: World,
    payer: Agent,
    payee: Agent,
    program: TokenProgram,
    mint: Pubkey,
    /// The next subscription's nonce.
    nonce: u64,
}

async fn world() -> World {
    let mut pt = trust_gate_localnet::native::program_test();
    trust_gate_program_tests::subscriptions::add_to(&mut pt);
    let mut w = World::with_program_test(pt).await;
    // Past slot 0: an authority's init_id is its slot, and a later slot tells a second one
    // apart.
    w.advance_slots(10).await;
    w
}

async fn setup() -> Setup {
    let mut w = world().await;
    let (payer, payee) = w.parties().await;
    let mint = w.mint;
    Setup {
        w,
        payer,
        payee,
        program: TokenProgram::SplToken,
        mint,
        nonce: 0,
    }
}

/// [`setup`] in a Token-2022 mint without extensions.
async fn setup_2022() -> Setup {
    let mut w = world().await;
    let mint = w.token_2022_mint(&[]).await;
    let payer = w.payer_with_policy(3, demo_policy(mint)).await;
    let payee = w.payee(3, None).await;
    w.token_2022_account(&mint, &payer.owner.pubkey(), FUNDS)
        .await;
    w.token_2022_account(&mint, &payee.owner.pubkey(), 0).await;
    Setup {
        w,
        payer,
        payee,
        program: TokenProgram::Token2022,
        mint,
        nonce: 0,
    }
}

fn copy(a: &Agent) -> Agent {
    Agent {
        owner: a.owner.insecure_clone(),
        asset: a.asset.insecure_clone(),
    }
}

/// [`PER_PERIOD`] a day from now on, for 30 days.
fn daily(now: i64) -> RecurringTerms {
    RecurringTerms {
        nonce: 0,
        amount_per_period: PER_PERIOD,
        period_length_s: DAY,
        start_ts: 0,
        expiry_ts: now + 30 * DAY as i64,
    }
}

fn feedback() -> FeedbackDetails {
    FeedbackDetails {
        score: 90,
        tag1: "x402".into(),
        tag2: "subscription".into(),
        ..FeedbackDetails::default()
    }
}

impl Setup {
    /// The subscription of `payer` to `payee` under policy 1 with `terms` (a fresh nonce),
    /// its owner the delegator, the world's facilitator sending the pulls.
    fn subscription(
        &mut self,
        payer: &Agent,
        payee: &Agent,
        terms: RecurringTerms,
    ) -> Subscription {
        self.nonce += 1;
        Subscription {
            delegator: payer.owner.pubkey(),
            payer_asset: payer.asset(),
            payee_asset: payee.asset(),
            facilitator: self.w.facilitator.pubkey(),
            mint: self.mint,
            token_program: self.program,
            policy_id: 1,
            terms: RecurringTerms {
                nonce: self.nonce,
                ..terms
            },
        }
    }

    /// Sends `subscribe` for `s`, signed by `payer`'s owner.
    async fn subscribe(&mut self, s: &Subscription, payer: &Agent) -> Result<(), BanksClientError> {
        let owner = payer.owner.insecure_clone();
        send(&mut self.w.ctx, &[sdk().subscribe(s)], &[&owner]).await
    }

    /// `payer` subscribes to `payee` daily; returns the delegation's address.
    async fn subscribed(&mut self, payer: &Agent, payee: &Agent) -> Pubkey {
        let s = self.subscription(payer, payee, daily(self.w.now));
        self.subscribe(&s, payer).await.unwrap();
        sdk().subscription_delegation(&s)
    }

    async fn record(&mut self, delegation: &Pubkey) -> GatedSubscription {
        fetch(&mut self.w.ctx, &sdk().pda.gated_subscription(delegation))
            .await
            .expect("the gate's record of the subscription")
    }

    async fn delegation(&mut self, address: &Pubkey) -> RecurringDelegation {
        let account = raw_account(&mut self.w.ctx, address)
            .await
            .expect("the delegation");
        assert_eq!(account.owner, subscriptions::PROGRAM_ID);
        RecurringDelegation::read(&account.data).expect("a recurring delegation")
    }

    /// The payee's recipient's (its owner's) associated account of the suite's mint.
    fn destination(&self, payee: &Agent) -> Pubkey {
        self.program
            .associated_account(&payee.owner.pubkey(), &self.mint)
    }

    /// The pull of `amount` from `delegation` into the payee's account, as the SDK builds it
    /// from the chain's state now.
    async fn pull_ix(&mut self, delegation: &Pubkey, amount: u64) -> Instruction {
        let record = self.record(delegation).await;
        let d = self.delegation(delegation).await;
        let payee = self.payee_owner(&record.payee_asset).await;
        let destination = self.program.associated_account(&payee, &self.mint);
        sdk().gate_pull(
            &record,
            &d,
            &destination,
            self.program,
            &self.w.collection.pubkey(),
            amount,
            feedback(),
            Attestations::default(),
        )
    }

    /// The registry's cached owner of `asset` (the stand-in keeps it current).
    async fn payee_owner(&mut self, asset: &Pubkey) -> Pubkey {
        let account = raw_account(&mut self.w.ctx, &sdk().pda.agent_account(asset))
            .await
            .expect("the payee's AgentAccount");
        trust_gate_program_common::external::agent_account::read(&account.data)
            .expect("an AgentAccount")
            .owner
    }

    /// Sends `ixs` signed by the world's facilitator (as a pull is sent).
    async fn send_as_facilitator(&mut self, ixs: &[Instruction]) -> Result<(), BanksClientError> {
        let facilitator = self.w.facilitator.insecure_clone();
        send(&mut self.w.ctx, ixs, &[&facilitator]).await
    }

    async fn pull(&mut self, delegation: &Pubkey, amount: u64) -> Result<(), BanksClientError> {
        let ix = self.pull_ix(delegation, amount).await;
        self.send_as_facilitator(&[ix]).await
    }

    async fn tokens(&mut self, owner: &Pubkey) -> u64 {
        let address = self.program.associated_account(owner, &self.mint);
        match raw_account(&mut self.w.ctx, &address).await {
            // The amount sits at the same offset in both token programs' accounts.
            Some(a) => u64::from_le_bytes(a.data[64..72].try_into().unwrap()),
            None => 0,
        }
    }

    async fn lamports(&mut self, address: &Pubkey) -> u64 {
        raw_account(&mut self.w.ctx, address)
            .await
            .map_or(0, |a| a.lamports)
    }

    /// The receipt of the pull `delegation` would make now.
    async fn receipt_of_next_pull(&mut self, delegation: &Pubkey) -> Pubkey {
        let d = self.delegation(delegation).await;
        let id = gate::subscription::payment_id_hash(delegation, &d);
        sdk().pda.feedback_log(&self.w.facilitator.pubkey(), &id)
    }

    /// A payer agent of tier 3 under policy 1 = `policy`, its owner's account funded.
    async fn payer_under(&mut self, policy: PolicyParams) -> Agent {
        let payer = self.w.payer_with_policy(3, policy).await;
        let (program, mint) = (self.program.id(), self.mint);
        self.w
            .associated_account(&program, &mint, &payer.owner.pubkey(), FUNDS)
            .await;
        payer
    }

    async fn log(&mut self, address: &Pubkey) -> Option<FeedbackLog> {
        fetch(&mut self.w.ctx, address).await
    }
}

/// A fresh funded key.
async fn funded(w: &mut World) -> Keypair {
    trust_gate_program_tests::funded_keypair(&mut w.ctx).await
}
