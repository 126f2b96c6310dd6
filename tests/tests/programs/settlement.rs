//! The settlement rule, proven by executing real bundles: the counters, the transfer and the
//! feedback succeed or fail together, and the strict gate refuses any other layout.

use anchor_lang::InstructionData;
use anchor_spl::token_2022::spl_token_2022;
use gate::errors::GateError as G;
use gate::instructions::EmitFeedbackArgs;
use gate::settlement::TOKEN_2022_PROGRAM_ID;
use gate::state::{FeedbackLog, GateAuthority};
use solana_program_test::processor;
use solana_sdk::account::AccountSharedData;
use solana_sdk::instruction::{Instruction, InstructionError};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_program_tests::hook::{self, REJECTING_HOOK_ID};
use trust_gate_program_tests::world::{
    demo_policy, min_tier_acceptance, pda, Agent, Attestations, World, DECIMALS,
};
use trust_gate_program_tests::{
    assert_already_in_use, assert_code, fetch, funded_keypair, instruction_error, payment_id,
    raw_account, replace_account, send,
};

fn g(e: G) -> u32 {
    u32::from(e)
}

#[tokio::test]
async fn a_settlement_moves_money_counters_and_feedback_together() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let pay = payment_id();
    let ixs = w.settlement(&payer, &payee, 2_000_000, pay).await;
    let dest = ixs[1].accounts[2].pubkey;
    let stats_before = raw_account(&mut w.ctx, &pda::stats(&payee.asset()))
        .await
        .unwrap()
        .data;
    w.send_settlement(&payer, &ixs).await.unwrap();

    assert_eq!(w.token_balance(&dest).await, 2_000_000);
    assert_eq!(w.counters(&payer).await, (2_000_000, 2_000_000, 2_000_000));
    let f = w.facilitator.pubkey();
    let log: FeedbackLog = fetch(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .unwrap();
    assert_eq!(
        (log.payer_wallet, log.payee_asset, log.mint, log.amount),
        (payer.owner.pubkey(), payee.asset(), w.mint, 2_000_000)
    );
    assert_eq!((log.facilitator, log.deadline), (f, w.deadline()));
    assert_eq!((log.score, log.value_decimals), (90, 6));
    let auth: GateAuthority = fetch(&mut w.ctx, &pda::gate_authority(&f)).await.unwrap();
    assert_eq!((auth.feedback_count, auth.settled_count), (1, 1));
    // The registry passed the feedback on to the engine: the payee's stats changed.
    let stats_after = raw_account(&mut w.ctx, &pda::stats(&payee.asset()))
        .await
        .unwrap()
        .data;
    assert_ne!(stats_before, stats_after);
}

#[tokio::test]
async fn a_failing_transfer_rolls_the_counters_back() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    w.token_account(&payer.owner.pubkey(), 1_000).await; // far less than the payment
    let pay = payment_id();
    let ixs = w.settlement(&payer, &payee, 2_000_000, pay).await;
    let err = w.send_settlement(&payer, &ixs).await.unwrap_err();
    // The token program's InsufficientFunds (1) in instruction 1, after the gate had committed.
    assert_eq!(
        instruction_error(&err),
        Some(InstructionError::Custom(1)),
        "{err:?}"
    );
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
    let f = w.facilitator.pubkey();
    assert!(raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .is_none());
}

#[tokio::test]
async fn the_strict_gate_alone_is_rejected() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    assert_code(
        w.send_settlement(&payer, &ixs[..1]).await,
        g(G::SettlementLayoutInvalid),
    );
    assert_code(
        w.send_settlement(&payer, &ixs[..2]).await,
        g(G::SettlementLayoutInvalid),
    );
    // Gate second, or an extra instruction: also refused.
    let swapped = [ixs[1].clone(), ixs[0].clone(), ixs[2].clone()];
    assert_code(
        w.send_settlement(&payer, &swapped).await,
        g(G::SettlementLayoutInvalid),
    );
    // Four instructions read as a held payment's, whose second transfer is missing.
    let extra = [
        ixs[0].clone(),
        ixs[1].clone(),
        ixs[2].clone(),
        ixs[1].clone(),
    ];
    assert_code(
        w.send_settlement(&payer, &extra).await,
        g(G::TransferMissing),
    );
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
}

#[tokio::test]
async fn bundles_with_another_amount_mint_recipient_or_payee_are_rejected() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let other = w.payee(3, None).await;
    let other_dest = w.token_account(&other.owner.pubkey(), 0).await;
    let base = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    let source = base[1].accounts[0].pubkey;
    let dest = base[1].accounts[2].pubkey;
    let owner = payer.owner.pubkey();

    let mut amount = base.clone();
    amount[1] = w.transfer_ix(&source, &dest, &owner, 999_999);
    assert_code(
        w.send_settlement(&payer, &amount).await,
        g(G::TransferAmountMismatch),
    );

    // A transfer of another mint (same accounts otherwise).
    let mut mint = base.clone();
    mint[1].accounts[1].pubkey = anchor_lang::prelude::Pubkey::new_unique();
    assert_code(
        w.send_settlement(&payer, &mint).await,
        g(G::TransferMintMismatch),
    );

    // Money to someone else's account while the gate is shown the payee's.
    let mut elsewhere = base.clone();
    elsewhere[1] = w.transfer_ix(&source, &other_dest, &owner, 1_000_000);
    assert_code(
        w.send_settlement(&payer, &elsewhere).await,
        g(G::TransferDestinationMismatch),
    );

    // Gate and transfer agree, but the destination is not the payee's recipient.
    let mut wrong_recipient = base.clone();
    wrong_recipient[0] = w.strict_ix(
        &payer,
        &payee,
        1_000_000,
        other_dest,
        Attestations::default(),
    );
    wrong_recipient[1] = w.transfer_ix(&source, &other_dest, &owner, 1_000_000);
    assert_code(
        w.send_settlement(&payer, &wrong_recipient).await,
        g(G::RecipientMismatch),
    );

    // Feedback for another payee.
    let mut feedback = base.clone();
    feedback[2] = w.emit_feedback_ix(payment_id(), &other.asset(), 90, 1_000_000);
    assert_code(
        w.send_settlement(&payer, &feedback).await,
        g(G::FeedbackPayeeMismatch),
    );

    // Something other than a TransferChecked in the middle.
    let mut no_transfer = base.clone();
    no_transfer[1] = anchor_spl::token::spl_token::instruction::transfer(
        &gate::settlement::TOKEN_PROGRAM_ID,
        &source,
        &dest,
        &owner,
        &[],
        1_000_000,
    )
    .unwrap();
    assert_code(
        w.send_settlement(&payer, &no_transfer).await,
        g(G::TransferMissing),
    );

    // Something other than emit_feedback last.
    let mut no_feedback = base.clone();
    no_feedback[2] = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1,
        w.mint,
        1,
        Attestations::default(),
    );
    assert_code(
        w.send_settlement(&payer, &no_feedback).await,
        g(G::FeedbackMissing),
    );

    assert_eq!(w.counters(&payer).await, (0, 0, 0));
    w.send_settlement(&payer, &base).await.unwrap();
    assert_eq!(w.counters(&payer).await, (1_000_000, 1_000_000, 1_000_000));
}

#[tokio::test]
async fn a_deny_fails_the_bundle_with_the_reason_code() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(1, demo_policy(w.mint)).await;
    let payee = w.payee(3, Some(min_tier_acceptance(2))).await;
    w.token_account(&payer.owner.pubkey(), 10_000_000).await;
    let ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    // CounterpartyTierBelowMin: 6000 + 6.
    assert_code(w.send_settlement(&payer, &ixs).await, 6006);
    assert_eq!(g(G::CounterpartyTierBelowMin), 6006);
    assert_eq!(g(G::KillSwitchEngaged), 6001);
    assert_eq!(g(G::UnratedTreatmentDeny), 6015);
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
}

#[tokio::test]
async fn repeated_settlements_hit_the_caps() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    // Velocity window cap is 10 tokens; per-tx cap 5.
    for _ in 0..2 {
        let ixs = w.settlement(&payer, &payee, 5_000_000, payment_id()).await;
        w.send_settlement(&payer, &ixs).await.unwrap();
    }
    let ixs = w.settlement(&payer, &payee, 1, payment_id()).await;
    assert_code(w.send_settlement(&payer, &ixs).await, 6005);
    assert_eq!(
        w.counters(&payer).await,
        (10_000_000, 10_000_000, 10_000_000)
    );
}

#[tokio::test]
async fn a_transfer_hook_that_rejects_leaves_the_ledger_untouched() {
    let mut pt = trust_gate_localnet::native::program_test();
    pt.add_program(
        "rejecting_hook",
        REJECTING_HOOK_ID,
        processor!(hook::reject_transfer),
    );
    let mut w = World::with_program_test(pt).await;

    // A Token-2022 mint whose transfers go through the rejecting hook.
    let mint = w.hook_mint(REJECTING_HOOK_ID).await;
    let payer_key = w.ctx.payer.pubkey();
    let auth = w.mint_authority.insecure_clone();
    let payer = w.payer_with_policy(3, demo_policy(mint)).await;
    let payee = w.payee(3, None).await;
    let ata = |owner: &anchor_lang::prelude::Pubkey| {
        anchor_spl::associated_token::get_associated_token_address_with_program_id(
            owner,
            &mint,
            &TOKEN_2022_PROGRAM_ID,
        )
    };
    let (source, dest) = (ata(&payer.owner.pubkey()), ata(&payee.owner.pubkey()));
    let create = |owner: &anchor_lang::prelude::Pubkey| {
        anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent(
            &payer_key, owner, &mint, &TOKEN_2022_PROGRAM_ID,
        )
    };
    let fund = spl_token_2022::instruction::mint_to(
        &TOKEN_2022_PROGRAM_ID,
        &mint,
        &source,
        &auth.pubkey(),
        &[],
        10_000_000,
    )
    .unwrap();
    send(
        &mut w.ctx,
        &[
            create(&payer.owner.pubkey()),
            create(&payee.owner.pubkey()),
            fund,
        ],
        &[&auth],
    )
    .await
    .unwrap();

    // The gate alone would allow this payment.
    let ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1_000_000,
        mint,
        1,
        Attestations::default(),
    );
    assert_eq!(
        w.simulate_decision(ix).await,
        policy_vault::engine::Decision::Allow
    );

    let mut transfer = spl_token_2022::instruction::transfer_checked(
        &TOKEN_2022_PROGRAM_ID,
        &source,
        &mint,
        &dest,
        &payer.owner.pubkey(),
        &[],
        1_000_000,
        DECIMALS,
    )
    .unwrap();
    transfer
        .accounts
        .extend(hook::hook_accounts(&REJECTING_HOOK_ID, &mint));
    let pay = payment_id();
    let bundle = [
        w.strict_ix_for_mint(
            mint,
            &payer,
            &payee,
            1_000_000,
            dest,
            Attestations::default(),
        ),
        transfer,
        w.emit_feedback_ix(pay, &payee.asset(), 90, 1_000_000),
    ];
    let err = w.send_settlement(&payer, &bundle).await.unwrap_err();
    assert_eq!(
        instruction_error(&err),
        Some(InstructionError::Custom(hook::HOOK_REJECTION)),
        "{err:?}"
    );
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
    let f = w.facilitator.pubkey();
    assert!(raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .is_none());
}

#[tokio::test]
async fn standalone_feedback_is_refused_and_a_payments_feedback_is_recorded_once() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let pay = payment_id();
    let facilitator = w.facilitator.insecure_clone();
    let ix = w.emit_feedback_ix(pay, &payee.asset(), 80, 5);
    assert_code(
        send(&mut w.ctx, std::slice::from_ref(&ix), &[&facilitator]).await,
        g(G::FeedbackNotSettled),
    );
    let f = facilitator.pubkey();
    assert!(raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .is_none());
    let ixs = w.settlement(&payer, &payee, 1_000_000, pay).await;
    w.send_settlement(&payer, &ixs).await.unwrap();
    let log: FeedbackLog = fetch(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .unwrap();
    assert_eq!(log.payment_id_hash, pay);
    // The same payment id again: its log exists, so the whole settlement fails.
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_already_in_use(w.send_settlement(&payer, &ixs).await);
    assert_eq!(w.counters(&payer).await.2, 1_000_000);
}

#[tokio::test]
async fn emit_feedback_validates_its_arguments() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let f = w.facilitator.pubkey();
    let q = payee.asset();
    // A settlement whose feedback carries `edit`ed arguments.
    async fn build(
        w: &mut World,
        payer: &Agent,
        payee: &Agent,
        f: Pubkey,
        edit: &dyn Fn(&mut EmitFeedbackArgs),
    ) -> [Instruction; 3] {
        let pay = payment_id();
        let mut args = EmitFeedbackArgs {
            payment_id_hash: pay,
            facilitator: f,
            payee_asset: payee.asset(),
            score: 50,
            // The settlement's amount and the mint's decimals (audit 4's G-3).
            value: 1_000_000,
            value_decimals: 6,
            tag1: String::new(),
            tag2: String::new(),
            endpoint: String::new(),
            feedback_uri: String::new(),
        };
        edit(&mut args);
        let mut ixs = w.settlement(payer, payee, 1_000_000, pay).await;
        ixs[2].data = gate::instruction::EmitFeedback { args }.data();
        ixs
    }
    type Edit = Box<dyn Fn(&mut EmitFeedbackArgs)>;
    let cases: Vec<(Edit, G)> = vec![
        (Box::new(|a| a.score = 101), G::ScoreOutOfRange),
        (
            Box::new(|a| a.value_decimals = 19),
            G::ValueDecimalsOutOfRange,
        ),
        (Box::new(|a| a.tag1 = "t".repeat(33)), G::Tag1TooLong),
        (Box::new(|a| a.tag2 = "t".repeat(33)), G::Tag2TooLong),
        (
            Box::new(|a| a.endpoint = "e".repeat(251)),
            G::EndpointTooLong,
        ),
        (
            Box::new(|a| a.feedback_uri = "u".repeat(251)),
            G::FeedbackUriTooLong,
        ),
    ];
    for (edit, err) in cases {
        let ixs = build(&mut w, &payer, &payee, f, &*edit).await;
        assert_code(w.send_settlement(&payer, &ixs).await, g(err));
    }
    // Wrong collection for the payee.
    let mut ixs = build(&mut w, &payer, &payee, f, &|_| {}).await;
    replace_account(&mut ixs[2], &w.collection.pubkey(), Pubkey::new_unique());
    assert_code(
        w.send_settlement(&payer, &ixs).await,
        g(G::CollectionMismatch),
    );
    // Accepted bounds: 100, 32, 250 (value and decimals are the settlement's).
    let ixs = build(&mut w, &payer, &payee, f, &|a| {
        a.score = 100;
        a.tag1 = "t".repeat(32);
        a.endpoint = "e".repeat(250);
    })
    .await;
    w.send_settlement(&payer, &ixs).await.unwrap();
    assert_eq!(w.counters(&payer).await.2, 1_000_000, "{q}");
}

#[tokio::test]
async fn dispute_needs_a_settled_payment_and_happens_once() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let facilitator = w.facilitator.insecure_clone();
    let wallet = payer.owner.insecure_clone();
    let p = wallet.pubkey();
    let f = facilitator.pubkey();
    let q = payee.asset();
    // No log at all.
    let never = payment_id();
    assert_code(
        w.send(
            &[w.dispute_ix(&p, never, &q, [9; 32])],
            &[&facilitator, &wallet],
        )
        .await,
        anchor_lang::error::ErrorCode::AccountNotInitialized as u32,
    );
    // A standalone emission is refused, so it leaves nothing to dispute.
    let standalone = payment_id();
    assert_code(
        w.send(
            &[w.emit_feedback_ix(standalone, &q, 80, 1)],
            &[&facilitator],
        )
        .await,
        g(G::FeedbackNotSettled),
    );
    assert_code(
        w.send(
            &[w.dispute_ix(&p, standalone, &q, [9; 32])],
            &[&facilitator, &wallet],
        )
        .await,
        anchor_lang::error::ErrorCode::AccountNotInitialized as u32,
    );
    // A settled one can, once, with a reason.
    let pay = payment_id();
    let ixs = w.settlement(&payer, &payee, 1_000_000, pay).await;
    w.send_settlement(&payer, &ixs).await.unwrap();
    let log: FeedbackLog = fetch(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .unwrap();
    assert_eq!(log.payer_wallet, p, "the log records who paid");
    assert_code(
        w.send(
            &[w.dispute_ix(&p, pay, &q, [0; 32])],
            &[&facilitator, &wallet],
        )
        .await,
        g(G::DisputeReasonMissing),
    );
    let other = w.payee(3, None).await;
    let wrong_payee = w.dispute_ix(&p, pay, &other.asset(), [9; 32]);
    assert_code(
        send(&mut w.ctx, &[wrong_payee], &[&facilitator, &wallet]).await,
        g(G::FeedbackLogPayeeMismatch),
    );
    w.send(
        &[w.dispute_ix(&p, pay, &q, [9; 32])],
        &[&facilitator, &wallet],
    )
    .await
    .unwrap();
    let d: gate::state::DisputeRecord = fetch(&mut w.ctx, &pda::dispute(&f, &pay)).await.unwrap();
    assert_eq!(
        (
            d.payment_id_hash,
            d.reason_hash,
            d.disputed_by,
            d.rent_payer
        ),
        (pay, [9; 32], p, f)
    );
    let auth: GateAuthority = fetch(&mut w.ctx, &pda::gate_authority(&f)).await.unwrap();
    assert_eq!(auth.dispute_count, 1);
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_already_in_use(
        w.send(
            &[w.dispute_ix(&p, pay, &q, [9; 32])],
            &[&facilitator, &wallet],
        )
        .await,
    );
}

#[tokio::test]
async fn only_the_payer_may_dispute_and_only_within_the_window() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let facilitator = w.facilitator.insecure_clone();
    let wallet = payer.owner.insecure_clone();
    let q = payee.asset();
    let pay = payment_id();
    let ixs = w.settlement(&payer, &payee, 1_000_000, pay).await;
    w.send_settlement(&payer, &ixs).await.unwrap();

    // A stranger, and the facilitator itself, cannot lower the payee's reputation.
    let stranger = funded_keypair(&mut w.ctx).await;
    for (who, signers) in [
        (stranger.pubkey(), vec![&facilitator, &stranger]),
        (facilitator.pubkey(), vec![&facilitator]),
    ] {
        assert_code(
            w.send(&[w.dispute_ix(&who, pay, &q, [9; 32])], &signers)
                .await,
            g(G::NotPaymentPayer),
        );
    }
    // The payer's wallet must actually sign.
    let mut unsigned = w.dispute_ix(&wallet.pubkey(), pay, &q, [9; 32]);
    unsigned.accounts[1].is_signer = false;
    assert_code(
        w.send(&[unsigned], &[&facilitator]).await,
        anchor_lang::error::ErrorCode::AccountNotSigner as u32,
    );
    let f = facilitator.pubkey();
    assert!(raw_account(&mut w.ctx, &pda::dispute(&f, &pay))
        .await
        .is_none());

    // Past the window even the payer is refused.
    w.advance_time(gate::instructions::DISPUTE_WINDOW_SECS + 1)
        .await;
    assert_code(
        w.send(
            &[w.dispute_ix(&wallet.pubkey(), pay, &q, [9; 32])],
            &[&facilitator, &wallet],
        )
        .await,
        g(G::DisputeWindowClosed),
    );
    // Just inside it, the payer may.
    let fresh = payment_id();
    let ixs = w.settlement(&payer, &payee, 1_000_000, fresh).await;
    w.send_settlement(&payer, &ixs).await.unwrap();
    w.advance_time(gate::instructions::DISPUTE_WINDOW_SECS)
        .await;
    w.send(
        &[w.dispute_ix(&wallet.pubkey(), fresh, &q, [9; 32])],
        &[&facilitator, &wallet],
    )
    .await
    .unwrap();
}

#[test]
fn every_deny_reason_fails_strict_with_6000_or_6100_plus_its_code() {
    for reason in policy_vault::engine::DenyReason::ALL {
        let err = gate::instructions::deny_error(reason);
        let base = if reason.code() <= 15 { 6000 } else { 6100 };
        let anchor_lang::error::Error::AnchorError(e) = &err else {
            panic!("{reason:?}: {err:?}");
        };
        assert_eq!(e.error_name, reason.name());
        use anchor_lang::solana_program::program_error::ProgramError;
        assert_eq!(
            ProgramError::from(err),
            ProgramError::Custom(base + u32::from(reason.code())),
            "{reason:?}"
        );
    }
}

#[tokio::test]
async fn payments_go_to_the_payees_agent_wallet_when_it_has_one() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let wallet = Keypair::new();
    w.set_agent_wallet(&payee, &wallet).await;
    // Paying the owner is no longer paying the payee.
    let ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    assert_code(
        w.send_settlement(&payer, &ixs).await,
        g(G::RecipientMismatch),
    );
    let source = w.token_account(&payer.owner.pubkey(), 0).await;
    let to_wallet = w.token_account(&wallet.pubkey(), 0).await;
    let bundle = [
        w.strict_ix(
            &payer,
            &payee,
            1_000_000,
            to_wallet,
            Attestations::default(),
        ),
        w.transfer_ix(&source, &to_wallet, &payer.owner.pubkey(), 1_000_000),
        w.emit_feedback_ix(payment_id(), &payee.asset(), 90, 1_000_000),
    ];
    w.send_settlement(&payer, &bundle).await.unwrap();
    assert_eq!(w.token_balance(&to_wallet).await, 1_000_000);
}

#[tokio::test]
async fn a_payer_agent_account_that_is_not_an_agent_account_is_refused() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    // Corrupt the registry-owned AgentAccount's discriminator.
    let address = pda::agent(&payer.asset());
    let mut account = raw_account(&mut w.ctx, &address).await.unwrap();
    account.data[0] ^= 0xff;
    w.ctx
        .set_account(&address, &AccountSharedData::from(account));
    assert_code(
        w.send_settlement(&payer, &ixs).await,
        g(G::AgentAccountInvalid),
    );
}

#[tokio::test]
async fn feedback_counters_do_not_wrap() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let f = w.facilitator.pubkey();
    let address = pda::gate_authority(&f);
    let mut auth: GateAuthority = fetch(&mut w.ctx, &address).await.unwrap();
    auth.feedback_count = u64::MAX;
    let mut account = raw_account(&mut w.ctx, &address).await.unwrap();
    anchor_lang::AccountSerialize::try_serialize(&auth, &mut &mut account.data[..]).unwrap();
    w.ctx
        .set_account(&address, &AccountSharedData::from(account));
    let ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    assert_code(w.send_settlement(&payer, &ixs).await, g(G::CounterOverflow));
}
