//! The holdback on chain (docs/holdback.md), executed: a share of a payment to a payee of low
//! tier goes to the gate's escrow in the settlement itself, then leaves it once, by a release
//! after the hold, the payee's refund, or the arbiter's decision of a dispute; every refusal
//! the rules name.

use anchor_spl::token::spl_token;
use gate::errors::GateError as G;
use gate::holdback::{HoldState, ARBITRATION_SECS};
use gate::settlement::TOKEN_2022_PROGRAM_ID;
use gate::state::DISPUTE_WINDOW_SECS;
use policy_vault::engine::DenyReason;
use policy_vault::errors::PolicyVaultError as V;
use policy_vault::state::{HoldbackSchedule, HoldbackTerm};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::holdback::HoldbackQuote;
use trust_gate_program_tests::holdback::{acceptance, accepts, schedule, Held, DAY};
use trust_gate_program_tests::mints::Extension;
use trust_gate_program_tests::world::{open_policy, sdk, World};
use trust_gate_program_tests::{assert_code, fund, payment_id, raw_account, send_tx};

fn g(e: G) -> u32 {
    u32::from(e)
}

fn deny(r: DenyReason) -> u32 {
    r.strict_error_code()
}

const AMOUNT: u64 = 1_000_000;

/// A payee of tier 0 (20 % held for 7 days) that accepts the schedule and its arbiter.
async fn tier0() -> (World, Held) {
    let mut w = World::new().await;
    let arbiter = Keypair::new();
    let a = arbiter.pubkey();
    let h = w
        .held_parties(arbiter, Some(schedule(a)), 0, Some(acceptance(accepts(a))))
        .await;
    (w, h)
}

async fn release(
    w: &mut World,
    payment: &[u8; 32],
    to: &Pubkey,
) -> Result<(), solana_program_test::BanksClientError> {
    let p = w.held_payment(payment).await;
    w.send(&[sdk().release_holdback(&p, to)], &[]).await
}

#[tokio::test]
async fn holdback_held_then_released_after_the_hold() {
    let (mut w, h) = tier0().await;
    let pay = payment_id();
    let quote = w.settle_held(&h, AMOUNT, pay).await.unwrap().unwrap();
    assert_eq!(
        (quote.tier, quote.share_bps, quote.held),
        (0, 2_000, 200_000)
    );
    assert_eq!(w.token_balance(&h.destination).await, 800_000);
    assert_eq!(w.token_balance(&h.escrow).await, 200_000);
    let log = w.log(&pay).await;
    assert_eq!(
        log.amount, AMOUNT,
        "the feedback and the log state the whole amount"
    );
    let share = w.held_share(&pay).await.unwrap();
    assert_eq!(share.state, HoldState::Held);
    assert_eq!(share.hold_until, log.created_at + i64::from(7 * DAY));
    assert_eq!(
        (share.escrow, share.recipient),
        (h.escrow, h.payee.owner.pubkey())
    );
    assert_eq!(share.arbiter, h.arbiter.pubkey());

    // A stranger's release before time; to another account; the log cannot close.
    assert_code(
        release(&mut w, &pay, &h.destination).await,
        g(G::HoldbackNotDue),
    );
    let f = w.facilitator.pubkey();
    let close = sdk().close_payment_records(&f, &pay, &f);
    w.advance_time(i64::from(7 * DAY) - 1).await;
    assert_code(
        release(&mut w, &pay, &h.destination).await,
        g(G::HoldbackNotDue),
    );
    w.advance_time(1).await;
    let stranger = w.token_account(&Keypair::new().pubkey(), 0).await;
    assert_code(
        release(&mut w, &pay, &stranger).await,
        g(G::HoldbackRecipientMismatch),
    );
    assert_code(
        w.send(std::slice::from_ref(&close), &[]).await,
        g(G::HoldbackOutstanding),
    );
    // The payee empties and closes the account it was paid in: from the hold's end anyone
    // still releases the share to it, in another token account of its recipient (anyone may
    // create one), so that closing or restricting the account paid cannot lock the share.
    let owner = h.payee.owner.insecure_clone();
    let sink = w.token_account(&Keypair::new().pubkey(), 0).await;
    let token = &spl_token::ID;
    let (dest, o) = (&h.destination, &owner.pubkey());
    let empty = [
        spl_token::instruction::transfer(token, dest, &sink, o, &[], 800_000).unwrap(),
        spl_token::instruction::close_account(token, dest, o, o, &[]).unwrap(),
    ];
    w.send(&empty, &[&owner]).await.unwrap();
    let other = w.second_token_account(&owner.pubkey()).await;
    release(&mut w, &pay, &other).await.unwrap();
    assert_eq!(w.token_balance(&other).await, 200_000);
    assert_eq!(w.token_balance(&h.escrow).await, 0);
    assert_eq!(w.held_share(&pay).await.unwrap().state, HoldState::Released);
    assert_code(
        release(&mut w, &pay, &h.destination).await,
        g(G::HoldbackPaidOut),
    );
    // No dispute, so no response in the registry.
    assert_eq!(w.response_count(&h.payee.asset()).await, 0);
    // Past the dispute window the log closes, its rent back to the facilitator.
    w.advance_time(DISPUTE_WINDOW_SECS).await;
    let log_address = sdk().pda.feedback_log(&f, &pay);
    let rent = raw_account(&mut w.ctx, &log_address)
        .await
        .unwrap()
        .lamports;
    let before = raw_account(&mut w.ctx, &f).await.unwrap().lamports;
    w.send(&[close], &[]).await.unwrap();
    assert!(raw_account(&mut w.ctx, &log_address).await.is_none());
    assert_eq!(
        raw_account(&mut w.ctx, &f).await.unwrap().lamports,
        before + rent
    );
}

#[tokio::test]
async fn holdback_disputed_then_refunded_by_the_payee() {
    let (mut w, h) = tier0().await;
    let pay = payment_id();
    w.settle_held(&h, AMOUNT, pay).await.unwrap();
    let hold_until = w.held_share(&pay).await.unwrap().hold_until;
    let payer_before = w.token_balance(&h.payer_token()).await;
    let payer = h.payer.owner.insecure_clone();
    w.advance_time(3_600).await;
    w.dispute_held(&h, pay).await.unwrap();
    let share = w.held_share(&pay).await.unwrap();
    assert_eq!(share.state, HoldState::Disputed);
    assert_eq!(share.arbitration_ends, w.now + ARBITRATION_SECS);

    // Frozen: the payee's release once the hold is over, as anyone's.
    w.set_time(hold_until).await;
    let p = w.held_payment(&pay).await;
    let payee_owner = h.payee.owner.insecure_clone();
    let ix = sdk().release_holdback(&p, &h.destination);
    assert_code(
        send_tx(&mut w.ctx, &[ix], &payee_owner, &[]).await,
        g(G::HoldbackDisputed),
    );
    // The payer alone never takes it back: not as the payee, not as the arbiter.
    let ix = sdk().refund_holdback(&payer.pubkey(), &p, &h.payer_token());
    assert_code(w.send(&[ix], &[&payer]).await, g(G::NotPaymentPayee));
    let mut ix = sdk().arbitrate_holdback(&p, true, &h.payer_token(), &[]);
    ix.accounts[0].is_signer = false;
    ix.accounts
        .push(solana_sdk::instruction::AccountMeta::new_readonly(
            payer.pubkey(),
            true,
        ));
    assert_code(
        w.send(&[ix], &[&payer]).await,
        g(G::ArbiterSignatureMissing),
    );

    // The payee refunds it: back to the payer, the outcome attached to the dispute.
    let ix = sdk().refund_holdback(&payee_owner.pubkey(), &p, &h.payer_token());
    w.send(&[ix], &[&payee_owner]).await.unwrap();
    assert_eq!(
        w.token_balance(&h.payer_token()).await,
        payer_before + 200_000
    );
    assert_eq!(w.token_balance(&h.escrow).await, 0);
    assert_eq!(w.held_share(&pay).await.unwrap().state, HoldState::Refunded);
    assert_eq!(w.response_count(&h.payee.asset()).await, 1);
}

#[tokio::test]
async fn holdback_upheld_rejected_and_undecided_by_an_accepted_arbiter() {
    let (mut w, h) = tier0().await;
    let arbiter = h.arbiter.insecure_clone();
    fund(&mut w.ctx, &arbiter.pubkey(), 1_000_000_000).await;
    let payments = [payment_id(), payment_id(), payment_id()];
    // Each payment's feedback moves the payee's tier, so each share is the one quoted.
    let mut held = Vec::new();
    for pay in payments {
        held.push(w.settle_held(&h, AMOUNT, pay).await.unwrap().unwrap().held);
        w.dispute_held(&h, pay).await.unwrap();
    }
    assert!(held.iter().all(|h| *h > 0));
    let payer_before = w.token_balance(&h.payer_token()).await;
    let payee_before = w.token_balance(&h.destination).await;
    // Upheld: to the payer.
    let p = w.held_payment(&payments[0]).await;
    let ix = sdk().arbitrate_holdback(&p, true, &h.payer_token(), &[]);
    w.send(&[ix], &[&arbiter]).await.unwrap();
    assert_eq!(
        w.token_balance(&h.payer_token()).await,
        payer_before + held[0]
    );
    assert_eq!(
        w.held_share(&payments[0]).await.unwrap().state,
        HoldState::Upheld
    );
    // Rejected: to the payee.
    let p = w.held_payment(&payments[1]).await;
    let ix = sdk().arbitrate_holdback(&p, false, &h.destination, &[]);
    w.send(&[ix], &[&arbiter]).await.unwrap();
    assert_eq!(
        w.token_balance(&h.destination).await,
        payee_before + held[1]
    );
    assert_eq!(
        w.held_share(&payments[1]).await.unwrap().state,
        HoldState::Rejected
    );
    // Undecided: past the arbitration period the arbiter is too late, and anyone releases
    // it to the payee.
    let p = w.held_payment(&payments[2]).await;
    w.advance_time(ARBITRATION_SECS).await;
    let ix = sdk().arbitrate_holdback(&p, true, &h.payer_token(), &[]);
    assert_code(w.send(&[ix], &[&arbiter]).await, g(G::ArbitrationClosed));
    release(&mut w, &payments[2], &h.destination).await.unwrap();
    assert_eq!(
        w.token_balance(&h.destination).await,
        payee_before + held[1] + held[2]
    );
    assert_eq!(
        w.held_share(&payments[2]).await.unwrap().state,
        HoldState::Lapsed
    );
    assert_eq!(w.token_balance(&h.escrow).await, 0);
    // Each outcome answers its dispute's feedback.
    assert_eq!(w.response_count(&h.payee.asset()).await, 3);
}

#[tokio::test]
async fn holdback_an_arbiter_set_decides_by_its_threshold_without_the_payer() {
    let mut w = World::new().await;
    // Two members, and the payer's agent wallet as a third: the payer's owner pays, and
    // neither of the payer's keys counts among the members' signatures.
    let members: Vec<Keypair> = (0..2).map(|_| Keypair::new()).collect();
    let payer_wallet = Keypair::new();
    let keys: Vec<Pubkey> = members
        .iter()
        .chain([&payer_wallet])
        .map(|m| m.pubkey())
        .collect();
    let create = sdk().create_arbiter_set(&w.ctx.payer.pubkey(), 2, &keys);
    let set = create.accounts[1].pubkey;
    w.send(&[create], &[]).await.unwrap();
    let h = w
        .held_parties(
            Keypair::new(),
            Some(schedule(set)),
            0,
            Some(acceptance(accepts(set))),
        )
        .await;
    w.set_agent_wallet(&h.payer, &payer_wallet).await;
    let pay = payment_id();
    w.settle_held(&h, AMOUNT, pay).await.unwrap();
    let payer = h.payer.owner.insecure_clone();
    assert_eq!(
        w.held_share(&pay).await.unwrap().payer_other,
        payer_wallet.pubkey()
    );
    w.dispute_held(&h, pay).await.unwrap();
    let p = w.held_payment(&pay).await;
    // One member is not two; the payer's signatures never count: its owner's, which paid,
    // nor its agent wallet's, a member of the set.
    let ix = sdk().arbitrate_holdback(&p, true, &h.payer_token(), &keys[..1]);
    assert_code(
        w.send(&[ix], &[&members[0]]).await,
        g(G::ArbiterSignatureMissing),
    );
    let ix = sdk().arbitrate_holdback(&p, true, &h.payer_token(), &[keys[0], payer.pubkey()]);
    assert_code(
        w.send(&[ix], &[&members[0], &payer]).await,
        g(G::ArbiterSignatureMissing),
    );
    let ix = sdk().arbitrate_holdback(&p, true, &h.payer_token(), &[keys[0], keys[2]]);
    assert_code(
        w.send(&[ix], &[&members[0], &payer_wallet]).await,
        g(G::ArbiterSignatureMissing),
    );
    let before = w.token_balance(&h.payer_token()).await;
    let ix = sdk().arbitrate_holdback(&p, true, &h.payer_token(), &keys[..2]);
    w.send(&[ix], &[&members[0], &members[1]]).await.unwrap();
    assert_eq!(w.token_balance(&h.payer_token()).await, before + 200_000);
    // A set is created once, with ascending distinct members.
    let again = sdk().create_arbiter_set(&w.ctx.payer.pubkey(), 2, &keys);
    assert!(w.send(&[again], &[]).await.is_err());
    let mut bad = sdk().create_arbiter_set(&w.ctx.payer.pubkey(), 3, &keys[..2]);
    bad.accounts[1].pubkey = sdk().pda.arbiter_set(3, &keys[..2]);
    assert_code(w.send(&[bad], &[]).await, g(G::ArbiterSetInvalid));
}

#[tokio::test]
async fn holdback_refuses_terms_the_payee_did_not_accept_by_name() {
    let mut w = World::new().await;
    let a = Pubkey::new_unique();
    // No acceptance policy: the payer's holdback is refused, not skipped.
    let h = w
        .held_parties(Keypair::new(), Some(schedule(a)), 0, None)
        .await;
    let refused = |w: &mut World, h: &Held| {
        let quote = HoldbackQuote {
            tier: 0,
            held: 200_000,
            escrow: h.escrow,
        };
        w.held_settlement(h, AMOUNT, Some(quote), payment_id())
    };
    let ixs = refused(&mut w, &h);
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        deny(DenyReason::HoldbackNotAccepted),
    );
    // A share above the payee's largest.
    let mut small = accepts(a);
    small.max_share_bps = 1_999;
    let h = w
        .held_parties(
            Keypair::new(),
            Some(schedule(a)),
            0,
            Some(acceptance(small)),
        )
        .await;
    let ixs = refused(&mut w, &h);
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        deny(DenyReason::HoldbackShareNotAccepted),
    );
    // A hold above the payee's longest.
    let mut short = accepts(a);
    short.max_hold_secs = 7 * DAY - 1;
    let h = w
        .held_parties(
            Keypair::new(),
            Some(schedule(a)),
            0,
            Some(acceptance(short)),
        )
        .await;
    let ixs = refused(&mut w, &h);
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        deny(DenyReason::HoldbackHoldNotAccepted),
    );
    // A payer-named arbiter the payee did not accept.
    let h = w
        .held_parties(
            Keypair::new(),
            Some(schedule(a)),
            0,
            Some(acceptance(accepts(Pubkey::new_unique()))),
        )
        .await;
    let ixs = refused(&mut w, &h);
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        deny(DenyReason::HoldbackArbiterNotAccepted),
    );
}

#[tokio::test]
async fn holdback_refuses_a_payer_as_its_own_arbiter() {
    let mut w = World::new().await;
    // The policy names a key the payee accepts; while it is a stranger's, payments settle.
    let wallet = Keypair::new();
    let k = wallet.pubkey();
    let h = w
        .held_parties(
            Keypair::new(),
            Some(schedule(k)),
            0,
            Some(acceptance(accepts(k))),
        )
        .await;
    w.settle_held(&h, AMOUNT, payment_id()).await.unwrap();
    // Once that key is the payer's own agent wallet, the payer would arbitrate its own
    // disputes: refused.
    w.set_agent_wallet(&h.payer, &wallet).await;
    assert_code(
        w.settle_held(&h, AMOUNT, payment_id()).await,
        g(G::ArbiterIsPayer),
    );
}

#[tokio::test]
async fn holdback_refuses_a_moved_tier_a_missing_or_wrong_quote_and_a_false_escrow() {
    let (mut w, h) = tier0().await;
    let quote = |tier, held| HoldbackQuote {
        tier,
        held,
        escrow: h.escrow,
    };
    // The challenge quoted tier 0; the payee is tier 1 now.
    w.set_stats(&h.payee.asset(), trust_gate_program_tests::world::tier(1))
        .await;
    let ixs = w.held_settlement(&h, AMOUNT, Some(quote(0, 200_000)), payment_id());
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        g(G::HoldbackTierMoved),
    );
    // Rebuilt from the new terms, it settles: 10 %.
    let ixs = w.held_settlement(&h, AMOUNT, Some(quote(1, 100_000)), payment_id());
    w.send_settlement(&h.payer, &ixs).await.unwrap();
    // No quote under a schedule; a share other than the tier's.
    let ixs = w.held_settlement(&h, AMOUNT, None, payment_id());
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        g(G::HoldbackTierMissing),
    );
    let ixs = w.held_settlement(&h, AMOUNT, Some(quote(1, 99_999)), payment_id());
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        g(G::HoldbackTransferMismatch),
    );
    let ixs = w.held_settlement(&h, AMOUNT, Some(quote(1, 0)), payment_id());
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        g(G::HoldbackTransferMismatch),
    );
    // An escrow the gate does not control: the payee's own token account, a stranger's.
    let stranger = w.token_account(&Keypair::new().pubkey(), 0).await;
    for escrow in [h.destination, stranger] {
        let false_escrow = HoldbackQuote {
            escrow,
            ..quote(1, 100_000)
        };
        let ixs = w.held_settlement(&h, AMOUNT, Some(false_escrow), payment_id());
        assert_code(
            w.send_settlement(&h.payer, &ixs).await,
            g(G::HoldbackEscrowInvalid),
        );
    }
    // A quote under a policy without a schedule.
    let plain = w
        .held_parties(
            Keypair::new(),
            None,
            0,
            Some(acceptance(accepts(Pubkey::default()))),
        )
        .await;
    let q = HoldbackQuote {
        tier: 0,
        held: 0,
        escrow: plain.escrow,
    };
    let ixs = w.held_settlement(&plain, AMOUNT, Some(q), payment_id());
    assert_code(
        w.send_settlement(&plain.payer, &ixs).await,
        g(G::HoldbackNotInPolicy),
    );
    // Nor a second transfer, to the escrow, without a tier: a settlement under it holds
    // nothing back. The strict gate refuses it itself (without the held settlement's five
    // remaining accounts, the feedback alone would fail as FeedbackNotSettled).
    let held = HoldbackQuote { held: 100_000, ..q };
    let mut ixs = w.held_settlement(&plain, AMOUNT, Some(held), payment_id());
    let feedback = ixs.last_mut().unwrap();
    feedback.accounts.truncate(feedback.accounts.len() - 5);
    let gate = ixs.iter_mut().find(|ix| ix.program_id == gate::ID).unwrap();
    // The tier's option, the strict gate's last bytes: None.
    gate.data.pop();
    *gate.data.last_mut().unwrap() = 0;
    assert_code(
        w.send_settlement(&plain.payer, &ixs).await,
        g(G::HoldbackNotInPolicy),
    );
}

#[tokio::test]
async fn holdback_schedule_edges() {
    let mut w = World::new().await;
    let a = Pubkey::default();
    // Tier 4 holds nothing: one transfer, the tier still named.
    let h = w
        .held_parties(Keypair::new(), Some(schedule(a)), 4, None)
        .await;
    let pay = payment_id();
    let q = w.settle_held(&h, AMOUNT, pay).await.unwrap().unwrap();
    assert_eq!((q.tier, q.held), (4, 0));
    assert_eq!(w.token_balance(&h.destination).await, AMOUNT);
    assert!(w.held_share(&pay).await.is_none());
    // Tier 3's 1 % of 99 units rounds down to nothing, so a payee that accepts nothing is
    // paid in full; of 100 units it is 1, which it must accept.
    let h = w
        .held_parties(Keypair::new(), Some(schedule(a)), 3, None)
        .await;
    let q = w.settle_held(&h, 99, payment_id()).await.unwrap().unwrap();
    assert_eq!((q.tier, q.held), (3, 0));
    assert_eq!(w.token_balance(&h.destination).await, 99);
    let quote = HoldbackQuote {
        tier: 3,
        held: 1,
        escrow: h.escrow,
    };
    let ixs = w.held_settlement(&h, 100, Some(quote), payment_id());
    assert_code(
        w.send_settlement(&h.payer, &ixs).await,
        deny(DenyReason::HoldbackNotAccepted),
    );
    // An unrated payee gets the unrated term (30 % for 10 days), and its dispute window is
    // the hold: a dispute on day 8 still freezes the share.
    let h = w
        .held_parties(
            Keypair::new(),
            Some(schedule(a)),
            0,
            Some(acceptance(accepts(a))),
        )
        .await;
    let unrated = w.register_unrated_agent().await;
    w.init_authority(&unrated).await;
    let ix = w.set_acceptance_ix(
        &unrated.owner.pubkey(),
        &[],
        &unrated.asset(),
        acceptance(accepts(a)),
    );
    let owner = unrated.owner.insecure_clone();
    w.send(&[ix], &[&owner]).await.unwrap();
    let destination = w.token_account(&unrated.owner.pubkey(), 0).await;
    let escrow = w.open_escrow(&unrated.asset()).await;
    let u = Held {
        payee: unrated,
        destination,
        escrow,
        ..h
    };
    let pay = payment_id();
    let q = w.settle_held(&u, AMOUNT, pay).await.unwrap().unwrap();
    assert_eq!((q.tier, q.held), (5, 300_000));
    w.advance_time(DISPUTE_WINDOW_SECS + 1).await;
    w.dispute_held(&u, pay).await.unwrap();
    let share = w.held_share(&pay).await.unwrap();
    assert_eq!(share.state, HoldState::Disputed);
    // Without an arbiter, nobody decides: the payee refunds, or the share is its own once
    // the arbitration period is over.
    let p = w.held_payment(&pay).await;
    let mut ix = sdk().arbitrate_holdback(&p, true, &u.payer_token(), &[]);
    ix.accounts[0].is_signer = false;
    assert_code(w.send(&[ix], &[]).await, g(G::HoldbackNoArbiter));
    w.advance_time(ARBITRATION_SECS).await;
    release(&mut w, &pay, &u.destination).await.unwrap();
    assert_eq!(w.token_balance(&u.destination).await, AMOUNT);
}

#[tokio::test]
async fn holdback_schedules_and_acceptances_are_validated_by_name() {
    let mut w = World::new().await;
    let payer = w.register_agent().await;
    w.init_authority(&payer).await;
    let owner = payer.owner.insecure_clone();
    let bad = |f: &dyn Fn(&mut HoldbackSchedule)| {
        let mut s = schedule(Pubkey::default());
        f(&mut s);
        s
    };
    let cases = [
        (
            bad(&|s| s.terms[0].share_bps = 10_001),
            V::HoldbackShareOutOfRange,
        ),
        (
            bad(&|s| s.terms[5].hold_secs = 30 * DAY + 1),
            V::HoldbackHoldOutOfRange,
        ),
        (
            bad(&|s| {
                s.terms[4] = HoldbackTerm {
                    share_bps: 1,
                    hold_secs: 0,
                }
            }),
            V::HoldbackTermIncomplete,
        ),
        (
            bad(&|s| s.terms[3].share_bps = 600),
            V::HoldbackNotDecreasing,
        ),
        (
            bad(&|s| s.terms = [HoldbackTerm::default(); 6]),
            V::HoldbackScheduleEmpty,
        ),
    ];
    for (i, (s, err)) in cases.into_iter().enumerate() {
        let ix = sdk().init_policy_with_holdback(
            &owner.pubkey(),
            &[],
            &payer.asset(),
            10 + i as u32,
            open_policy(w.mint),
            Default::default(),
            0,
            Some(s),
        );
        assert_code(w.send(&[ix], &[&owner]).await, u32::from(err));
    }
    let k = Pubkey::new_unique();
    let mut twice = accepts(k);
    twice.arbiters = [k, k];
    let ix = w.set_acceptance_ix(&owner.pubkey(), &[], &payer.asset(), acceptance(twice));
    assert_code(
        w.send(&[ix], &[&owner]).await,
        u32::from(V::DuplicateArbiter),
    );
}

/// A held share's mint must let the gate pay the share out later, whatever its issuer does
/// after the settlement: no transfer hook, not even an authority that could set one; not
/// Pausable, nor making new token accounts frozen (a payout may go to an account created for
/// it). The strict gate refuses a held settlement in such a mint with the same errors.
#[tokio::test]
async fn holdback_escrows_refuse_mints_whose_issuer_could_lock_a_share() {
    let mut w = World::new().await;
    let payee = Pubkey::new_unique();
    let authority = Pubkey::new_unique();
    for (extension, error) in [
        (
            Extension::TransferHook(Pubkey::new_unique()),
            G::HoldbackTransferHook,
        ),
        (
            Extension::TransferHookAuthority(authority),
            G::HoldbackTransferHook,
        ),
        (Extension::Pausable(authority), G::HoldbackMintLockable),
        (Extension::DefaultFrozen, G::HoldbackMintLockable),
    ] {
        let mint = w.token_2022_mint(&[extension]).await;
        let payer = w.ctx.payer.pubkey();
        let ix = sdk().open_holdback_escrow(&payer, &payee, &mint, &TOKEN_2022_PROGRAM_ID);
        assert_code(w.send(&[ix], &[]).await, g(error));
    }
    let mint = w
        .token_2022_mint(&[Extension::CloseAuthority(authority)])
        .await;
    let payer = w.ctx.payer.pubkey();
    let ix = sdk().open_holdback_escrow(&payer, &payee, &mint, &TOKEN_2022_PROGRAM_ID);
    w.send(&[ix], &[]).await.unwrap();
}
