//! Another program asking the gate for decisions by CPI (`programs/examples/gated_escrow`):
//! Allow releases the escrow; a Deny (with its code) and a RequireValidation (with its
//! capability) release nothing and come back as return data. The gate's accounts are passed
//! read-only: a decision needs no write access to anyone's policy.

use anchor_lang::{AccountDeserialize, InstructionData, ToAccountMetas};
use gate::{Decision, DenyReason};
use gated_escrow::Escrow;
use policy_vault::engine::{kinds, Subject};
use policy_vault::state::PolicyParams;
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signer;
use trust_gate_program_tests::world::{demo_policy, pda, Agent, World};
use trust_gate_program_tests::{execute, raw_account, transaction};

const AMOUNT: u64 = 1_000_000;

async fn world() -> World {
    let mut pt = trust_gate_localnet::native::program_test();
    trust_gate_localnet::native::add_cpi_example(&mut pt);
    World::with_program_test(pt).await
}

fn escrow_address(depositor: &Pubkey, id: u64) -> Pubkey {
    let seeds: &[&[u8]] = &[gated_escrow::ESCROW, depositor.as_ref(), &id.to_le_bytes()];
    Pubkey::find_program_address(seeds, &gated_escrow::ID).0
}

fn vault_address(escrow: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(&[gated_escrow::VAULT, escrow.as_ref()], &gated_escrow::ID).0
}

/// How long an escrow waits before its depositor may take the tokens back.
const REFUND_AFTER_SECS: i64 = 3_600;

/// The payer's owner escrows `amount` for `payee` under the payer's policy 1, payable to the
/// payee owner's account.
async fn open(w: &mut World, payer: &Agent, payee: &Agent, id: u64, amount: u64) -> Pubkey {
    let payee_token = w.token_account(&payee.owner.pubkey(), 0).await;
    open_to(w, payer, payee, id, amount, payee_token).await
}

/// As [`open`], payable to `payee_token`.
async fn open_to(
    w: &mut World,
    payer: &Agent,
    payee: &Agent,
    id: u64,
    amount: u64,
    payee_token: Pubkey,
) -> Pubkey {
    let depositor = payer.owner.pubkey();
    let depositor_token = w.token_account(&depositor, 10_000_000).await;
    let refund_after = trust_gate_program_tests::clock(&mut w.ctx)
        .await
        .unix_timestamp
        + REFUND_AFTER_SECS;
    let escrow = escrow_address(&depositor, id);
    let ix = Instruction {
        program_id: gated_escrow::ID,
        accounts: gated_escrow::accounts::Open {
            depositor,
            escrow,
            vault: vault_address(&escrow),
            mint: w.mint,
            depositor_token,
            payee_token,
            token_program: gate::settlement::TOKEN_PROGRAM_ID,
            system_program: anchor_lang::system_program::ID,
        }
        .to_account_metas(None),
        data: gated_escrow::instruction::Open {
            escrow_id: id,
            payer_asset: payer.asset(),
            payee_asset: payee.asset(),
            policy_id: 1,
            amount,
            refund_after,
        }
        .data(),
    };
    w.send(&[ix], &[&payer.owner]).await.unwrap();
    escrow
}

fn release_ix(w: &World, escrow: &Pubkey, payer: &Agent, payee: &Agent) -> Instruction {
    let payee_token =
        anchor_spl::associated_token::get_associated_token_address(&payee.owner.pubkey(), &w.mint);
    release_to_ix(w, escrow, payer, payee, payee_token)
}

fn release_to_ix(
    w: &World,
    escrow: &Pubkey,
    payer: &Agent,
    payee: &Agent,
    payee_token: Pubkey,
) -> Instruction {
    let (p, q) = (payer.asset(), payee.asset());
    Instruction {
        program_id: gated_escrow::ID,
        accounts: gated_escrow::accounts::Release {
            escrow: *escrow,
            vault: vault_address(escrow),
            mint: w.mint,
            payee_token,
            token_program: gate::settlement::TOKEN_PROGRAM_ID,
            gate: gated_escrow::accounts::GateAccounts {
                evaluate_signer: pda::evaluate_signer(),
                policy: pda::policy(&p, 1),
                velocity_ledger: pda::velocity(&p, 1),
                killswitch: pda::killswitch(&p),
                payer_stats: pda::stats(&p),
                payee_stats: pda::stats(&q),
                payee_acceptance: pda::acceptance(&q),
                payer_attestation: None,
                payee_attestation: None,
                payee_list: pda::policy(&p, 1),
                policy_vault_program: policy_vault::ID,
                gate_program: gate::ID,
            },
            payee: gated_escrow::accounts::PayeeAccounts {
                agent: pda::agent(&q),
                asset: q,
            },
        }
        .to_account_metas(None),
        data: gated_escrow::instruction::Release {}.data(),
    }
}

fn refund_ix(w: &World, escrow: &Pubkey, depositor_token: Pubkey) -> Instruction {
    Instruction {
        program_id: gated_escrow::ID,
        accounts: gated_escrow::accounts::Refund {
            escrow: *escrow,
            vault: vault_address(escrow),
            mint: w.mint,
            depositor_token,
            token_program: gate::settlement::TOKEN_PROGRAM_ID,
        }
        .to_account_metas(None),
        data: gated_escrow::instruction::Refund {}.data(),
    }
}

fn escrow_err(e: gated_escrow::EscrowError) -> u32 {
    u32::from(e)
}

/// Sends `release`; returns the decision read from the transaction's return data.
async fn release(w: &mut World, escrow: &Pubkey, payer: &Agent, payee: &Agent) -> Decision {
    let ix = release_ix(w, escrow, payer, payee);
    let tx = transaction(&mut w.ctx, &[ix], &[]).await;
    let meta = execute(&mut w.ctx, tx).await.unwrap();
    let data = meta.return_data.expect("release returns the decision");
    assert_eq!(data.program_id, gated_escrow::ID);
    Decision::from_wire(&data.data).expect("a decision")
}

async fn escrow(w: &mut World, address: &Pubkey) -> Escrow {
    let acc = raw_account(&mut w.ctx, address).await.unwrap();
    Escrow::try_deserialize(&mut acc.data.as_slice()).unwrap()
}

#[tokio::test]
async fn allow_releases_the_escrow_and_commits_nothing() {
    let mut w = world().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    let e = open(&mut w, &payer, &payee, 1, AMOUNT).await;
    let vault = vault_address(&e);
    assert_eq!(w.token_balance(&vault).await, AMOUNT);

    // The gate's policy and ledger travel read-only.
    let ix = release_ix(&w, &e, &payer, &payee);
    for key in [
        pda::policy(&payer.asset(), 1),
        pda::velocity(&payer.asset(), 1),
    ] {
        let meta = ix.accounts.iter().find(|m| m.pubkey == key).unwrap();
        assert!(!meta.is_writable);
    }
    assert_eq!(release(&mut w, &e, &payer, &payee).await, Decision::Allow);
    assert_eq!(w.token_balance(&vault).await, 0);
    let payee_token = w.token_account(&payee.owner.pubkey(), 0).await;
    assert_eq!(w.token_balance(&payee_token).await, AMOUNT);
    let state = escrow(&mut w, &e).await;
    assert!(state.released);
    assert_eq!(state.last_decision, Decision::Allow.to_wire());
    // A decision is not a settlement: the payer's counters did not move.
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
}

#[tokio::test]
async fn a_deny_keeps_the_escrow_and_returns_its_code() {
    let mut w = world().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    // Above the demo policy's per-transaction cap.
    let amount = demo_policy(w.mint).per_tx_cap + 1;
    let e = open(&mut w, &payer, &payee, 2, amount).await;
    let decision = release(&mut w, &e, &payer, &payee).await;
    assert_eq!(decision, Decision::Deny(DenyReason::SpendingPerTxExceeded));
    assert_eq!(decision.to_wire()[1], 2, "the stable reason code");
    assert_eq!(w.token_balance(&vault_address(&e)).await, amount);
    let state = escrow(&mut w, &e).await;
    assert!(!state.released);
    assert_eq!(state.last_decision, decision.to_wire());
}

#[tokio::test]
async fn require_validation_keeps_the_escrow_and_names_the_capability() {
    let mut w = world().await;
    let capability = w.register_namespace("audit.smart-contract.v1").await;
    let policy = PolicyParams {
        kinds: demo_policy(w.mint).kinds | kinds::REQUIRE_VALIDATION,
        required_capability: capability,
        ..demo_policy(w.mint)
    };
    let payer = w.payer_with_policy(3, policy).await;
    let payee = w.payee(3, None).await;
    let e = open(&mut w, &payer, &payee, 3, AMOUNT).await;
    assert_eq!(
        release(&mut w, &e, &payer, &payee).await,
        Decision::RequireValidation {
            capability,
            subject: Subject::Payee
        }
    );
    assert_eq!(w.token_balance(&vault_address(&e)).await, AMOUNT);
    assert!(!escrow(&mut w, &e).await.released);
}

/// F-8 of the third audit: `payee_token` was any token account of the mint, fixed by whoever
/// opened the escrow, so an Allow for the payee could pay someone else. Now the tokens move
/// only to an account of the payee's recipient as the gate sees it (checked at release, after
/// any sale of the agent).
#[tokio::test]
async fn audit3_f8_an_escrow_pays_only_the_payees_recipient() {
    let mut w = world().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    let stranger = Pubkey::new_unique();
    let elsewhere = w.token_account(&stranger, 0).await;
    let e = open_to(&mut w, &payer, &payee, 8, AMOUNT, elsewhere).await;
    let ix = release_to_ix(&w, &e, &payer, &payee, elsewhere);
    trust_gate_program_tests::assert_code(
        w.send(&[ix], &[]).await,
        escrow_err(gated_escrow::EscrowError::PayeeTokenNotRecipient),
    );
    assert_eq!(w.token_balance(&elsewhere).await, 0);
    assert_eq!(w.token_balance(&vault_address(&e)).await, AMOUNT);
}

/// F-8: an escrow the gate never allows kept its tokens for ever. Now the depositor takes them
/// back once the deadline has passed, not before, and a refunded escrow releases nothing.
#[tokio::test]
async fn audit3_f8_the_depositor_is_refunded_after_the_deadline() {
    let mut w = world().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    let amount = demo_policy(w.mint).per_tx_cap + 1; // denied: it stays escrowed
    let e = open(&mut w, &payer, &payee, 9, amount).await;
    let depositor_token = w.token_account(&payer.owner.pubkey(), 0).await;
    let before = w.token_balance(&depositor_token).await;
    trust_gate_program_tests::assert_code(
        w.send(&[refund_ix(&w, &e, depositor_token)], &[]).await,
        escrow_err(gated_escrow::EscrowError::RefundTooEarly),
    );
    w.advance_time(REFUND_AFTER_SECS).await;
    w.send(&[refund_ix(&w, &e, depositor_token)], &[])
        .await
        .unwrap();
    assert_eq!(w.token_balance(&depositor_token).await, before + amount);
    assert!(escrow(&mut w, &e).await.refunded);
    w.ctx.get_new_latest_blockhash().await.unwrap();
    trust_gate_program_tests::assert_code(
        w.send(&[release_ix(&w, &e, &payer, &payee)], &[]).await,
        escrow_err(gated_escrow::EscrowError::AlreadyRefunded),
    );
}
