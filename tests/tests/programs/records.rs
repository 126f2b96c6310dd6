//! Rent that comes back: a payment's log and dispute record close, permissionless, once the
//! payment can be neither disputed nor settled again, every lamport to whoever paid it; a
//! payment's deadline bounds its settlement, so its id settles once even after the log is
//! gone.

use gate::errors::GateError as G;
use gate::instructions::DISPUTE_WINDOW_SECS;
use gate::settlement::MAX_DEADLINE_AHEAD_SECS;
use gate::state::{DisputeRecord, FeedbackLog};
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_program_tests::world::{open_policy, pda, sdk, Agent, World};
use trust_gate_program_tests::{assert_code, fetch, funded_keypair, payment_id, raw_account};

fn g(e: G) -> u32 {
    u32::from(e)
}

/// A tier-3 payer under an open policy, funded, and a payee.
async fn parties(w: &mut World) -> (Agent, Agent) {
    let payer = w.payer_with_policy(3, open_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    w.token_account(&payer.owner.pubkey(), 100_000_000).await;
    (payer, payee)
}

async fn settle(w: &mut World, payer: &Agent, payee: &Agent) -> [u8; 32] {
    let pay = payment_id();
    let ixs = w.settlement(payer, payee, 1_000_000, pay).await;
    w.send_settlement(payer, &ixs).await.unwrap();
    pay
}

/// The settlement's strict gate with `deadline` instead of the world's (its last argument).
/// The strict gate `ix` with another deadline (its data ends with the deadline, then the
/// holdback tier's one byte when none is quoted).
fn with_deadline(mut ix: Instruction, deadline: i64) -> Instruction {
    let at = ix.data.len() - 9;
    ix.data[at..at + 8].copy_from_slice(&deadline.to_le_bytes());
    ix
}

async fn lamports(w: &mut World, key: &Pubkey) -> u64 {
    raw_account(&mut w.ctx, key).await.map_or(0, |a| a.lamports)
}

/// Closes payment `pay`'s records, sent and paid by `sender` (not the facilitator: anyone may).
async fn close(
    w: &mut World,
    sender: &Keypair,
    pay: [u8; 32],
    dispute_rent_payer: &Pubkey,
) -> Result<(), solana_program_test::BanksClientError> {
    let f = w.facilitator.pubkey();
    let ix = sdk().close_payment_records(&f, &pay, dispute_rent_payer);
    trust_gate_program_tests::send_tx(&mut w.ctx, &[ix], sender, &[]).await
}

#[tokio::test]
async fn a_log_closes_only_after_its_window_and_its_rent_goes_back_to_its_facilitator() {
    let mut w = World::new().await;
    let (payer, payee) = parties(&mut w).await;
    let pay = settle(&mut w, &payer, &payee).await;
    let f = w.facilitator.pubkey();
    let log = pda::feedback_log(&f, &pay);
    let rent = lamports(&mut w, &log).await;
    assert_eq!(
        raw_account(&mut w.ctx, &log).await.unwrap().data.len(),
        FeedbackLog::space(false)
    );
    let stranger = funded_keypair(&mut w.ctx).await;

    // Before the window has passed (at its very end a dispute could still land): refused.
    for wait in [0, DISPUTE_WINDOW_SECS] {
        if wait > 0 {
            w.advance_time(wait).await;
        }
        w.ctx.get_new_latest_blockhash().await.unwrap();
        assert_code(
            close(&mut w, &stranger, pay, &f).await,
            g(G::PaymentRecordsOpen),
        );
    }
    w.advance_time(1).await;

    // A stranger cannot send the rent elsewhere: the log names its facilitator.
    let thief = Keypair::new().pubkey();
    let mut redirected = sdk().close_payment_records(&f, &pay, &f);
    redirected.accounts[1].pubkey = thief;
    assert_code(
        trust_gate_program_tests::send_tx(&mut w.ctx, &[redirected], &stranger, &[]).await,
        g(G::RentRecipientMismatch),
    );
    // Nor name another account as the dispute record.
    let mut fake_dispute = sdk().close_payment_records(&f, &pay, &f);
    fake_dispute.accounts[2].pubkey = Keypair::new().pubkey();
    assert_code(
        trust_gate_program_tests::send_tx(&mut w.ctx, &[fake_dispute], &stranger, &[]).await,
        g(G::DisputeAddressMismatch),
    );
    // Nor close anything but a payment log.
    let mut not_a_log = sdk().close_payment_records(&f, &pay, &f);
    not_a_log.accounts[0].pubkey = pda::gate_authority(&f);
    assert_code(
        trust_gate_program_tests::send_tx(&mut w.ctx, &[not_a_log], &stranger, &[]).await,
        g(G::PaymentLogInvalid),
    );

    // Anyone may close it (the stranger pays the fee); the facilitator gets exactly the rent.
    let before = lamports(&mut w, &f).await;
    close(&mut w, &stranger, pay, &f).await.unwrap();
    assert_eq!(lamports(&mut w, &f).await, before + rent);
    assert!(raw_account(&mut w.ctx, &log).await.is_none());
    // Closed once: a second close finds no log.
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_code(
        close(&mut w, &stranger, pay, &f).await,
        g(G::PaymentLogInvalid),
    );
}

#[tokio::test]
async fn a_payment_id_settles_once_even_after_its_log_is_closed() {
    let mut w = World::new().await;
    let (payer, payee) = parties(&mut w).await;
    let pay = payment_id();
    let ixs = w.settlement(&payer, &payee, 1_000_000, pay).await;
    w.send_settlement(&payer, &ixs).await.unwrap();
    let f = w.facilitator.pubkey();
    w.advance_time(DISPUTE_WINDOW_SECS + 1).await;
    let stranger = funded_keypair(&mut w.ctx).await;
    close(&mut w, &stranger, pay, &f).await.unwrap();
    assert!(raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .is_none());

    // The same settlement again (same id, same deadline): its deadline has passed.
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_code(w.send_settlement(&payer, &ixs).await, g(G::PaymentExpired));
    assert_eq!(w.counters(&payer).await.2, 1_000_000, "nothing committed");
}

#[tokio::test]
async fn a_settlement_past_its_deadline_or_beyond_the_maximum_is_refused() {
    let mut w = World::new().await;
    let (payer, payee) = parties(&mut w).await;
    let now = w.now;
    for (deadline, code) in [
        (now - 1, g(G::PaymentExpired)),
        (now + MAX_DEADLINE_AHEAD_SECS + 1, g(G::DeadlineTooFar)),
        (i64::MAX, g(G::DeadlineTooFar)),
    ] {
        let mut ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
        ixs[0] = with_deadline(ixs[0].clone(), deadline);
        assert_code(w.send_settlement(&payer, &ixs).await, code);
    }
    // At the maximum it settles, and the log keeps the deadline.
    let pay = payment_id();
    let mut ixs = w.settlement(&payer, &payee, 1_000_000, pay).await;
    ixs[0] = with_deadline(ixs[0].clone(), now + MAX_DEADLINE_AHEAD_SECS);
    w.send_settlement(&payer, &ixs).await.unwrap();
    let f = w.facilitator.pubkey();
    let log: FeedbackLog = fetch(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .unwrap();
    assert_eq!(log.deadline, now + MAX_DEADLINE_AHEAD_SECS);
    assert_eq!(w.counters(&payer).await.2, 1_000_000);
}

#[tokio::test]
async fn a_disputed_payments_record_closes_with_its_log_its_rent_to_whoever_paid_it() {
    let mut w = World::new().await;
    let (payer, payee) = parties(&mut w).await;
    let f = w.facilitator.pubkey();
    let facilitator = w.facilitator.insecure_clone();
    let wallet = payer.owner.insecure_clone();
    let p = wallet.pubkey();
    let q = payee.asset();
    // One dispute paid by the facilitator (its POST /dispute), one by the payer alone.
    let by_facilitator = settle(&mut w, &payer, &payee).await;
    let by_payer = settle(&mut w, &payer, &payee).await;
    w.send(
        &[w.dispute_ix(&p, by_facilitator, &q, [9; 32])],
        &[&facilitator, &wallet],
    )
    .await
    .unwrap();
    let alone = sdk().dispute_payment(
        &p,
        &f,
        &p,
        &w.collection.pubkey(),
        by_payer,
        &q,
        [8; 32],
        String::new(),
    );
    w.send(&[alone], &[&wallet]).await.unwrap();
    let record: DisputeRecord = fetch(&mut w.ctx, &pda::dispute(&f, &by_payer))
        .await
        .unwrap();
    assert_eq!(record.rent_payer, p);

    w.advance_time(DISPUTE_WINDOW_SECS + 1).await;
    let stranger = funded_keypair(&mut w.ctx).await;
    // The payer's record: its rent goes back to the payer, and nobody else.
    assert_code(
        close(&mut w, &stranger, by_payer, &f).await,
        g(G::RentRecipientMismatch),
    );
    let rent = (
        lamports(&mut w, &pda::feedback_log(&f, &by_payer)).await,
        lamports(&mut w, &pda::dispute(&f, &by_payer)).await,
    );
    let before = (lamports(&mut w, &f).await, lamports(&mut w, &p).await);
    // Both payments' closes in one transaction.
    let ixs = [
        sdk().close_payment_records(&f, &by_payer, &p),
        sdk().close_payment_records(&f, &by_facilitator, &f),
    ];
    let rent_f = (
        lamports(&mut w, &pda::feedback_log(&f, &by_facilitator)).await,
        lamports(&mut w, &pda::dispute(&f, &by_facilitator)).await,
    );
    trust_gate_program_tests::send_tx(&mut w.ctx, &ixs, &stranger, &[])
        .await
        .unwrap();
    assert_eq!(
        lamports(&mut w, &p).await,
        before.1 + rent.1,
        "the payer gets its record's rent back"
    );
    assert_eq!(
        lamports(&mut w, &f).await,
        before.0 + rent.0 + rent_f.0 + rent_f.1,
        "the facilitator gets both logs' rent and the record it paid for"
    );
    for pay in [by_payer, by_facilitator] {
        assert!(raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
            .await
            .is_none());
        assert!(raw_account(&mut w.ctx, &pda::dispute(&f, &pay))
            .await
            .is_none());
    }
}
