//! A gated channel's close: `gate_channel_close` once the real program sealed the channel. The
//! payer's policy gets back what the channel did not spend of the deposit the gate counted, in
//! the windows that still count it; the payee one feedback of what it settled, with a receipt
//! the payer may dispute; the record closes, and every lamport of rent comes back. A channel the
//! program deleted first closes its record without either.

use super::gated::{copy, setup, Setup, DEPOSIT};
use gate::errors::GateError;
use gate::state::{ChannelRecord, FeedbackLog, GateAuthority, DISPUTE_WINDOW_SECS};
use policy_vault::engine::time::SECONDS_PER_DAY;
use policy_vault::state::{PolicyAccount, PolicyRules, VelocityLedger};
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signer;
use trust_gate_client::channels::{self, Distribute, Open};
use trust_gate_client::instructions::FeedbackDetails;
use trust_gate_client::settle::TokenProgram;
use trust_gate_localnet::standin::agent_tail;
use trust_gate_program_tests::world::pda;
use trust_gate_program_tests::world::{demo_policy, sdk, Agent};
use trust_gate_program_tests::{assert_code, fetch, raw_account, send};

/// Anchor's AccountNotInitialized: the record is gone.
const ACCOUNT_NOT_INITIALIZED: u32 = 3012;

fn feedback() -> FeedbackDetails {
    FeedbackDetails {
        score: 95,
        tag1: "x402".into(),
        tag2: "upto".into(),
        ..FeedbackDetails::default()
    }
}

impl Setup {
    /// Opens a channel of `deposit` through the gate for `payer` and returns it.
    async fn gated_open(&mut self, payer: &Agent, deposit: u64) -> Open {
        let open = self.open_for(&payer.owner.pubkey(), deposit).await;
        let gate = self.gate(payer, &open, deposit);
        self.send(&[gate, open.instruction()], payer).await.unwrap();
        open
    }

    async fn record(&mut self, open: &Open) -> ChannelRecord {
        fetch(&mut self.w.ctx, &sdk().pda.channel_record(&open.channel()))
            .await
            .expect("the channel's record")
    }

    fn close(&self, record: &ChannelRecord) -> Instruction {
        sdk().gate_channel_close(record, &self.w.collection.pubkey(), feedback())
    }

    /// The payee seals the channel at `cumulative` (a voucher of it), or at what it settled
    /// so far when `None`.
    fn seal(&self, open: &Open, cumulative: Option<u64>) -> Vec<Instruction> {
        let channel = open.channel();
        let facilitator = self.w.facilitator.pubkey();
        match cumulative {
            Some(c) => vec![
                channels::voucher(&self.voucher, &channel, c, 0),
                channels::settle_and_seal(&facilitator, &channel, true),
            ],
            None => vec![channels::settle_and_seal(&facilitator, &channel, false)],
        }
    }

    /// Sends `ixs` signed by the facilitator alone (the fees are the test's payer's).
    async fn as_facilitator(
        &mut self,
        ixs: &[Instruction],
    ) -> Result<(), solana_program_test::BanksClientError> {
        let facilitator = self.w.facilitator.insecure_clone();
        send(&mut self.w.ctx, ixs, &[&facilitator]).await
    }

    /// Feedback the registry holds for the payee.
    async fn feedbacks(&mut self) -> u64 {
        let address = sdk().pda.agent_account(&self.payee.asset());
        let account = raw_account(&mut self.w.ctx, &address).await.unwrap();
        agent_tail::feedback_count(&account.data).unwrap()
    }

    async fn receipt(&mut self, open: &Open) -> Option<FeedbackLog> {
        let id = gate::channel::payment_id_hash(&open.channel());
        let address = sdk().pda.feedback_log(&self.w.facilitator.pubkey(), &id);
        fetch(&mut self.w.ctx, &address).await
    }

    async fn lamports(&mut self, address: &Pubkey) -> u64 {
        raw_account(&mut self.w.ctx, address)
            .await
            .map_or(0, |a| a.lamports)
    }
}

#[tokio::test]
async fn a_sealed_channel_closes_once_with_one_feedback_of_what_it_settled() {
    let mut s = setup().await;
    let payer = copy(&s.payer);
    let open = s.gated_open(&payer, DEPOSIT).await;
    let record = s.record(&open).await;
    assert_eq!(record.decimals, 6);
    let close = s.close(&record);

    // An open channel can still settle: it does not close.
    assert_code(
        s.as_facilitator(std::slice::from_ref(&close)).await,
        u32::from(GateError::ChannelNotSealed),
    );
    let feedbacks = s.feedbacks().await;
    let facilitator = s.w.facilitator.pubkey();
    let authority: GateAuthority = fetch(&mut s.w.ctx, &sdk().pda.gate_authority(&facilitator))
        .await
        .unwrap();

    // The payee's last voucher, its seal and the close in one transaction.
    let mut ixs = s.seal(&open, Some(300_000));
    ixs.push(close.clone());
    s.as_facilitator(&ixs).await.unwrap();

    // The policy keeps what the channel spent.
    assert_eq!(s.w.counters(&payer).await, (300_000, 300_000, 300_000));
    assert_eq!(s.feedbacks().await, feedbacks + 1, "one feedback");
    let after: GateAuthority = fetch(&mut s.w.ctx, &sdk().pda.gate_authority(&facilitator))
        .await
        .unwrap();
    assert_eq!(after.feedback_count, authority.feedback_count + 1);
    let log = s.receipt(&open).await.expect("the channel's receipt");
    assert_eq!(
        (log.amount, log.value_decimals, log.score, log.mint),
        (300_000, 6, 95, s.w.mint)
    );
    assert_eq!(
        (log.payer_wallet, log.payee_asset, log.facilitator),
        (payer.owner.pubkey(), s.payee.asset(), facilitator)
    );
    assert!(
        raw_account(&mut s.w.ctx, &sdk().pda.channel_record(&open.channel()))
            .await
            .is_none(),
        "the record closed"
    );

    // Once: the record is gone.
    assert_code(
        s.as_facilitator(std::slice::from_ref(&close)).await,
        ACCOUNT_NOT_INITIALIZED,
    );
    assert_eq!(s.feedbacks().await, feedbacks + 1);

    // The channel's payer disputes the receipt as a payment's.
    let id = gate::channel::payment_id_hash(&open.channel());
    let owner = payer.owner.insecure_clone();
    let dispute = sdk().dispute_payment(
        &owner.pubkey(),
        &facilitator,
        &owner.pubkey(),
        &s.w.collection.pubkey(),
        id,
        &s.payee.asset(),
        [4; 32],
        String::new(),
    );
    send(&mut s.w.ctx, &[dispute], &[&owner]).await.unwrap();
    assert!(
        raw_account(&mut s.w.ctx, &sdk().pda.dispute(&facilitator, &id))
            .await
            .is_some()
    );
    assert_eq!(s.feedbacks().await, feedbacks + 2, "the dispute's feedback");
}

#[tokio::test]
async fn a_channel_sealed_at_zero_gives_everything_back_and_no_feedback() {
    let mut s = setup().await;
    let payer = copy(&s.payer);
    let open = s.gated_open(&payer, DEPOSIT).await;
    assert_eq!(s.w.counters(&payer).await, (DEPOSIT, DEPOSIT, DEPOSIT));
    let record = s.record(&open).await;
    let feedbacks = s.feedbacks().await;
    let mut ixs = s.seal(&open, None);
    ixs.push(s.close(&record));
    s.as_facilitator(&ixs).await.unwrap();
    assert_eq!(s.w.counters(&payer).await, (0, 0, 0));
    assert_eq!(
        s.feedbacks().await,
        feedbacks,
        "no money moved, no feedback"
    );
    assert!(s.receipt(&open).await.is_none(), "and no receipt");
}

#[tokio::test]
async fn a_top_up_beyond_the_recorded_deposit_is_settled_but_never_counted_or_given_back() {
    let mut s = setup().await;
    let payer = copy(&s.payer);
    let open = s.gated_open(&payer, DEPOSIT).await;
    let record = s.record(&open).await;
    // The program lets the payer add funds without the gate, and raises the voucher cap.
    let top_up = channels::top_up(
        &payer.owner.pubkey(),
        &open.channel(),
        &s.w.mint,
        TokenProgram::SplToken,
        DEPOSIT / 2,
    );
    let owner = payer.owner.insecure_clone();
    send(&mut s.w.ctx, &[top_up], &[&owner]).await.unwrap();
    let c = channels::Channel::decode(
        &raw_account(&mut s.w.ctx, &open.channel())
            .await
            .unwrap()
            .data,
    )
    .unwrap();
    assert_eq!((c.deposit, record.deposit), (DEPOSIT * 3 / 2, DEPOSIT));

    let mut ixs = s.seal(&open, Some(DEPOSIT * 3 / 2));
    ixs.push(s.close(&record));
    s.as_facilitator(&ixs).await.unwrap();
    // The gate counted the gated deposit, no more, and nothing comes back.
    assert_eq!(s.w.counters(&payer).await, (DEPOSIT, DEPOSIT, DEPOSIT));
    // The feedback says what moved.
    assert_eq!(s.receipt(&open).await.unwrap().amount, DEPOSIT * 3 / 2);
}

/// A second, smaller channel, opened between the first's open and its close.
const SMALL: u64 = 50_000;
/// What the first channel settles.
const KEPT: u64 = 400_000;

/// A v2 payer (month and lifetime counters, a per-payee cap) opens a channel of `DEPOSIT` at
/// `open_at` and one of [`SMALL`] at `between_at`; the first is sealed at [`KEPT`] and closed
/// at `between_at + 60`. The policy's counters and its ledger's amount after the close.
async fn refund_across(open_at: i64, between_at: i64) -> Counters {
    let mut s = setup().await;
    s.w.set_time(open_at).await;
    let rules = PolicyRules {
        monthly_cap: 100_000_000,
        payee_daily_cap: 10_000_000,
        ..PolicyRules::default()
    };
    let mint = s.w.mint;
    let payer = s.w.payer_with_limits(3, demo_policy(mint), rules).await;
    s.w.token_account(&payer.owner.pubkey(), 10_000_000).await;
    let open = s.gated_open(&payer, DEPOSIT).await;
    let record = s.record(&open).await;
    s.w.set_time(between_at).await;
    s.gated_open(&payer, SMALL).await;
    s.w.set_time(between_at + 60).await;
    let mut ixs = s.seal(&open, Some(KEPT));
    ixs.push(s.close(&record));
    s.as_facilitator(&ixs).await.unwrap();
    Counters::of(&mut s, &payer).await
}

#[derive(Debug, PartialEq, Eq)]
struct Counters {
    day: u64,
    week: u64,
    month: u64,
    lifetime: u64,
    payee_today: u64,
    velocity: u64,
}

impl Counters {
    async fn of(s: &mut Setup, payer: &Agent) -> Counters {
        let p: PolicyAccount = fetch(&mut s.w.ctx, &pda::policy(&payer.asset(), 1))
            .await
            .unwrap();
        let v: VelocityLedger = fetch(&mut s.w.ctx, &pda::velocity(&payer.asset(), 1))
            .await
            .unwrap();
        let payee = s.payee.asset();
        let limits = p.limits.unwrap();
        let slots = p.payee_day.unwrap().slots;
        let slot = slots.iter().find(|slot| slot.payee == payee);
        Counters {
            day: p.day_spent,
            week: p.week_spent,
            month: limits.month_spent,
            lifetime: limits.lifetime_spent,
            payee_today: slot.map_or(0, |slot| slot.spent),
            velocity: v.cumulative,
        }
    }
}

#[tokio::test]
async fn the_refund_goes_back_only_to_the_windows_that_still_count_the_deposit() {
    // Sunday 2026-11-29 and Monday 2026-11-30, 23:00 UTC.
    const SUNDAY_LATE: i64 = 1_795_993_200;
    const MONDAY_LATE: i64 = SUNDAY_LATE + SECONDS_PER_DAY;
    // Past the demo policy's velocity window (an hour) and midnight.
    const NEXT_DAY: i64 = 3_700;
    // Both channels counted, less the first's refund (600 000): a window that held both.
    const BOTH: u64 = KEPT + SMALL;

    // The same day and velocity window: every window gets the refund back.
    assert_eq!(
        refund_across(MONDAY_LATE, MONDAY_LATE + 60).await,
        Counters {
            day: BOTH,
            week: BOTH,
            month: BOTH,
            lifetime: BOTH,
            payee_today: BOTH,
            velocity: BOTH,
        }
    );
    // Monday night to Tuesday 2026-12-01: a new day, month and velocity window, the same
    // week. What restarted at the second channel never held the first's deposit.
    assert_eq!(
        refund_across(MONDAY_LATE, MONDAY_LATE + NEXT_DAY).await,
        Counters {
            day: SMALL,
            week: BOTH,
            month: SMALL,
            lifetime: BOTH,
            payee_today: SMALL,
            velocity: SMALL,
        }
    );
    // Sunday night to Monday: a new day and week, the same month.
    assert_eq!(
        refund_across(SUNDAY_LATE, SUNDAY_LATE + NEXT_DAY).await,
        Counters {
            day: SMALL,
            week: SMALL,
            month: BOTH,
            lifetime: BOTH,
            payee_today: SMALL,
            velocity: SMALL,
        }
    );
}

#[tokio::test]
async fn every_lamport_of_rent_comes_back_to_the_facilitator() {
    let mut s = setup().await;
    let payer = copy(&s.payer);
    let facilitator = s.w.facilitator.pubkey();
    let before = s.lamports(&facilitator).await;
    let open = s.gated_open(&payer, DEPOSIT).await;
    let locked = before - s.lamports(&facilitator).await;
    let record = s.record(&open).await;
    let mut ixs = s.seal(&open, Some(300_000));
    ixs.push(s.close(&record));
    s.as_facilitator(&ixs).await.unwrap();

    // The payer takes its refund, anyone distributes the rest (this bank's classic SPL Token
    // cannot take the program's two-party `Batch`, see the suite's notes), then reclaims the
    // channel's rent once its open slot is old.
    let channel = open.channel();
    let withdraw = channels::withdraw_payer(
        &payer.owner.pubkey(),
        &channel,
        &s.w.mint,
        open.token_program,
    );
    let owner = payer.owner.insecure_clone();
    send(&mut s.w.ctx, &[withdraw], &[&owner]).await.unwrap();
    send(&mut s.w.ctx, &[Distribute::of(&open).instruction()], &[])
        .await
        .unwrap();
    s.w.advance_slots(channels::OPEN_SLOT_WINDOW + 1).await;
    send(
        &mut s.w.ctx,
        &[channels::reclaim(&channel, &facilitator)],
        &[],
    )
    .await
    .unwrap();
    // The receipt closes after its dispute window.
    s.w.advance_time(DISPUTE_WINDOW_SECS + 1).await;
    let id = gate::channel::payment_id_hash(&channel);
    let close_receipt = sdk().close_payment_records(&facilitator, &id, &facilitator);
    send(&mut s.w.ctx, &[close_receipt], &[]).await.unwrap();

    let after = s.lamports(&facilitator).await;
    println!(
        "a gated channel locked {locked} lamports of the facilitator's; {} came back",
        after + locked - before
    );
    assert!(locked > 7_000_000, "record, channel and escrow: {locked}");
    assert_eq!(
        after, before,
        "every lamport back (the fees were the test payer's)"
    );
}

#[tokio::test]
async fn a_channel_the_program_deleted_first_closes_its_record_without_feedback() {
    let mut s = setup().await;
    let payer = copy(&s.payer);
    let facilitator = s.w.facilitator.pubkey();
    let open = s.gated_open(&payer, DEPOSIT).await;
    let record = s.record(&open).await;
    let channel = open.channel();
    let forget = sdk().close_channel_record(&channel, &facilitator);
    // While the channel exists, only the gate's close closes its record.
    assert_code(
        send(&mut s.w.ctx, std::slice::from_ref(&forget), &[]).await,
        u32::from(GateError::ChannelStillOpen),
    );
    // The payee seals it (all of the deposit) but someone else distributes it once its slot
    // window has passed: the program deletes the channel in the same instruction.
    s.as_facilitator(&s.seal(&open, Some(DEPOSIT)))
        .await
        .unwrap();
    s.w.advance_slots(channels::OPEN_SLOT_WINDOW + 1).await;
    send(&mut s.w.ctx, &[Distribute::of(&open).instruction()], &[])
        .await
        .unwrap();
    assert!(raw_account(&mut s.w.ctx, &channel).await.is_none());

    // Its settled amount is gone with it: no close through the gate.
    let feedbacks = s.feedbacks().await;
    assert_code(
        s.as_facilitator(&[s.close(&record)]).await,
        u32::from(GateError::ChannelAccountInvalid),
    );
    // Anyone closes the record, its rent back to the facilitator; nothing given back, no
    // feedback.
    let record_rent = s.lamports(&sdk().pda.channel_record(&channel)).await;
    let before = s.lamports(&facilitator).await;
    send(&mut s.w.ctx, &[forget], &[]).await.unwrap();
    assert_eq!(s.lamports(&facilitator).await, before + record_rent);
    assert_eq!(s.w.counters(&payer).await, (DEPOSIT, DEPOSIT, DEPOSIT));
    assert_eq!(s.feedbacks().await, feedbacks);
    assert!(s.receipt(&open).await.is_none());
}

/// The facilitator's close of a channel settled in full: the payee's last voucher, the seal,
/// the gate's close and the distribute in one v0 transaction with its lookup table.
#[tokio::test]
async fn the_facilitators_whole_close_is_one_v0_transaction() {
    const PACKET_LIMIT: usize = 1232;
    let mut s = setup().await;
    let payer = copy(&s.payer);
    let open = s.gated_open(&payer, DEPOSIT).await;
    let record = s.record(&open).await;
    let mut ixs = s.seal(&open, Some(DEPOSIT));
    ixs.push(s.close(&record));
    ixs.push(Distribute::of(&open).instruction());

    let facilitator = s.w.facilitator.insecure_clone();
    let f = facilitator.pubkey();
    let p = &sdk().pda;
    let statics = vec![
        policy_vault::ID,
        anchor_lang::system_program::ID,
        solana_sdk::sysvar::instructions::ID,
        s.w.mint,
        anchor_spl::token::ID,
        channels::event_authority(),
        channels::TREASURY_OWNER,
        TokenProgram::SplToken.associated_account(&channels::TREASURY_OWNER, &s.w.mint),
        TokenProgram::SplToken.associated_account(&f, &s.w.mint),
        p.evaluate_signer(),
        p.gate_authority(&f),
        p.atom_config(),
        p.registry_cpi_authority(),
        s.w.collection.pubkey(),
        sdk().ids.agent_registry,
        sdk().ids.reputation_engine,
    ];
    let table = s.w.lookup_table(&facilitator, statics).await;
    let (legacy_size, tx) = s.w.v0_transaction(&ixs, &facilitator, &[], table).await;
    let size = bincode::serialize(&tx).unwrap().len();
    println!("a channel's whole close: legacy {legacy_size} bytes, v0 + lookup table {size} bytes (limit {PACKET_LIMIT})");
    assert!(size <= PACKET_LIMIT, "the close is {size} bytes");
    let recipient = TokenProgram::SplToken.associated_account(&s.payee.owner.pubkey(), &s.w.mint);
    let paid_before = s.w.token_balance(&recipient).await;
    trust_gate_program_tests::process(&mut s.w.ctx, tx)
        .await
        .unwrap();
    assert_eq!(s.w.token_balance(&recipient).await, paid_before + DEPOSIT);
    assert_eq!(s.receipt(&open).await.unwrap().amount, DEPOSIT);
    assert_eq!(s.w.counters(&payer).await, (DEPOSIT, DEPOSIT, DEPOSIT));
}
