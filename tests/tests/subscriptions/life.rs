//! A gated subscription's life: set up in one transaction, pulled within the period and the
//! policy (SPL Token and Token-2022), capped by the period (400), pulled again the next
//! period, each pull once, an approval per pull above the threshold, stopped by the kill
//! switch, ended by its expiry (128), cancelled with every lamport of rent back.

use super::*;
use gate::errors::GateError;
use policy_vault::state::{ApprovalTerms, PolicyRules};
use trust_gate_client::instructions::ApprovalUse;
use trust_gate_client::subscriptions::SubscriptionAuthority;
use trust_gate_program_tests::assert_code;
use trust_gate_program_tests::world::open_policy;

async fn pulls_through_two_periods(mut s: Setup) {
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let owner = payer.owner.pubkey();
    let sub = s.subscription(&payer, &payee, daily(s.w.now));
    // One transaction: the authority, the delegation, the gate's record.
    s.subscribe(&sub, &payer).await.unwrap();
    let delegation = sdk().subscription_delegation(&sub);
    let authority_address = subscriptions::subscription_authority(&owner, &s.mint);
    let authority = raw_account(&mut s.w.ctx, &authority_address).await.unwrap();
    let authority = SubscriptionAuthority::read(&authority.data).unwrap();
    assert_eq!((authority.user, authority.mint), (owner, s.mint));
    let d = s.delegation(&delegation).await;
    let delegate = sdk().subscription_delegate(&sub);
    assert_eq!(
        (d.delegator, d.delegatee, d.mint, d.init_id),
        (owner, delegate, s.mint, authority.init_id)
    );
    assert_eq!(
        (
            d.amount_per_period,
            d.period_length_s,
            d.current_period_start_ts
        ),
        (PER_PERIOD, DAY, s.w.now)
    );
    let record = s.record(&delegation).await;
    assert_eq!(
        (record.payer_asset, record.payee_asset, record.facilitator),
        (payer.asset(), payee.asset(), s.w.facilitator.pubkey())
    );
    assert_eq!(
        (record.delegation, record.delegator, record.policy_id),
        (delegation, owner, 1)
    );

    // A first pull: the payee's recipient is paid, the payer's policy counts it, the payee is
    // rated, and the receipt names the wallet that paid.
    let receipt = s.receipt_of_next_pull(&delegation).await;
    s.pull(&delegation, 1_000_000).await.unwrap();
    assert_eq!(s.tokens(&payee.owner.pubkey()).await, 1_000_000);
    assert_eq!(s.tokens(&owner).await, FUNDS - 1_000_000);
    assert_eq!(
        s.w.counters(&payer).await,
        (1_000_000, 1_000_000, 1_000_000)
    );
    let log = s.log(&receipt).await.expect("the pull's receipt");
    assert_eq!(
        (log.amount, log.payer_wallet, log.payee_asset, log.mint),
        (1_000_000, owner, payee.asset(), s.mint)
    );
    assert_eq!(
        (log.facilitator, log.score, log.value_decimals),
        (s.w.facilitator.pubkey(), 90, 6)
    );
    let authority_account: gate::state::GateAuthority = fetch(
        &mut s.w.ctx,
        &sdk().pda.gate_authority(&s.w.facilitator.pubkey()),
    )
    .await
    .unwrap();
    assert_eq!(authority_account.settled_count, 1);

    // The rest of the period, then one unit more: the Subscriptions program's period cap.
    s.pull(&delegation, PER_PERIOD - 1_000_000).await.unwrap();
    assert_code(
        s.pull(&delegation, 1).await,
        subscriptions::error::AMOUNT_EXCEEDS_PERIOD_LIMIT,
    );
    assert_eq!(s.tokens(&payee.owner.pubkey()).await, PER_PERIOD);
    assert_eq!(
        s.w.counters(&payer).await.0,
        PER_PERIOD,
        "nothing more counted"
    );

    // The next period: the whole amount again.
    s.w.advance_time(DAY as i64).await;
    s.pull(&delegation, PER_PERIOD).await.unwrap();
    assert_eq!(s.tokens(&payee.owner.pubkey()).await, 2 * PER_PERIOD);
    let d = s.delegation(&delegation).await;
    assert_eq!(
        (d.current_period_start_ts, d.amount_pulled_in_period),
        (s.w.now, PER_PERIOD)
    );
}

#[tokio::test]
async fn a_subscription_pulls_within_its_period_and_policy_in_spl_token() {
    pulls_through_two_periods(setup().await).await;
}

#[tokio::test]
async fn a_subscription_pulls_within_its_period_and_policy_in_token_2022() {
    pulls_through_two_periods(setup_2022().await).await;
}

/// Two pulls built from one reading of the delegation are one pull: the second names the
/// receipt of a state the delegation has left, and is refused by name (a crank that sends a
/// pull again, or two that race, pay once).
#[tokio::test]
async fn a_pull_built_twice_from_one_reading_lands_once() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let delegation = s.subscribed(&payer, &payee).await;
    let first = s.pull_ix(&delegation, 1_000_000).await;
    let again = s.pull_ix(&delegation, 999_999).await;
    s.send_as_facilitator(&[first]).await.unwrap();
    assert_code(
        s.send_as_facilitator(&[again]).await,
        u32::from(GateError::SubscriptionPullStale),
    );
    assert_eq!(s.tokens(&payee.owner.pubkey()).await, 1_000_000);
}

/// A subscription set up for an existing authority (the payer's second subscription) takes
/// the authority's init_id as it is: the setup is one transaction either way.
#[tokio::test]
async fn a_second_subscription_reuses_the_authority() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let first = s.subscribed(&payer, &payee).await;
    s.w.advance_slots(5).await;
    let other = s.w.payee(3, None).await;
    s.w.token_account(&other.owner.pubkey(), 0).await;
    let second = s.subscribed(&payer, &other).await;
    let (a, b) = (s.delegation(&first).await, s.delegation(&second).await);
    assert_eq!(a.init_id, b.init_id);
    assert_ne!(a.delegatee, b.delegatee, "a delegate per payee");
    s.pull(&first, 1_000).await.unwrap();
    s.pull(&second, 1_000).await.unwrap();
}

/// The payer's kill switch stops every one of its gated pulls at once, and releasing it lets
/// them go on.
#[tokio::test]
async fn the_kill_switch_stops_every_gated_pull_at_once() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let other = s.w.payee(3, None).await;
    s.w.token_account(&other.owner.pubkey(), 0).await;
    let to_payee = s.subscribed(&payer, &payee).await;
    let to_other = s.subscribed(&payer, &other).await;
    let owner = payer.owner.insecure_clone();
    let pause = sdk().set_killswitch(&owner.pubkey(), &[], &payer.asset(), true);
    send(&mut s.w.ctx, &[pause], &[&owner]).await.unwrap();
    let engaged = u32::from(GateError::KillSwitchEngaged);
    assert_code(s.pull(&to_payee, 1_000).await, engaged);
    assert_code(s.pull(&to_other, 1_000).await, engaged);
    let release = sdk().set_killswitch(&owner.pubkey(), &[], &payer.asset(), false);
    send(&mut s.w.ctx, &[release], &[&owner]).await.unwrap();
    s.pull(&to_payee, 1_000).await.unwrap();
    s.pull(&to_other, 1_000).await.unwrap();
}

/// A policy's approval threshold below the period's amount: the setup is no approval, each
/// pull above the threshold needs the members' approval of its own terms (used up by the
/// pull), one below it none.
#[tokio::test]
async fn each_pull_above_the_approval_threshold_needs_its_own_approval() {
    let mut s = setup().await;
    let payee = copy(&s.payee);
    let payer =
        s.w.payer_with_limits_approved(3, open_policy(s.mint), PolicyRules::default(), 1_000_000)
            .await;
    s.w.token_account(&payer.owner.pubkey(), FUNDS).await;
    let delegation = s.subscribed(&payer, &payee).await;
    let required = u32::from(GateError::ApprovalRequired);
    assert_code(s.pull(&delegation, 2_000_000).await, required);

    let owner = payer.owner.insecure_clone();
    let terms = ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: payee.asset(),
        mint: s.mint,
        amount: 2_000_000,
        policy_id: 1,
    };
    let approve = sdk().approve_payment(&owner.pubkey(), &[], terms, s.w.now + 600);
    send(&mut s.w.ctx, &[approve], &[&owner]).await.unwrap();
    let approval = sdk().pda.approval(&terms);
    let mut pull = s.pull_ix(&delegation, 2_000_000).await;
    ApprovalUse {
        address: approval,
        rent_payer: owner.pubkey(),
    }
    .append_to(&mut pull);
    s.send_as_facilitator(&[pull]).await.unwrap();
    assert!(
        raw_account(&mut s.w.ctx, &approval).await.is_none(),
        "used up"
    );
    // Below the threshold: no approval.
    s.pull(&delegation, 1_000_000).await.unwrap();
    // The next period's pull above it needs an approval of its own.
    s.w.advance_time(DAY as i64).await;
    assert_code(s.pull(&delegation, 2_000_000).await, required);
    assert_eq!(s.tokens(&payee.owner.pubkey()).await, 3_000_000);
}

/// After its expiry a delegation pays nothing (the Subscriptions program's 128).
#[tokio::test]
async fn a_delegation_pays_nothing_after_its_expiry() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let terms = RecurringTerms {
        expiry_ts: s.w.now + 2 * DAY as i64,
        ..daily(s.w.now)
    };
    let sub = s.subscription(&payer, &payee, terms);
    s.subscribe(&sub, &payer).await.unwrap();
    let delegation = sdk().subscription_delegation(&sub);
    s.pull(&delegation, 1_000).await.unwrap();
    s.w.advance_time(2 * DAY as i64 + 1).await;
    assert_code(
        s.pull(&delegation, 1_000).await,
        subscriptions::error::DELEGATION_EXPIRED,
    );
}

/// The cancel: `unsubscribe` revokes the delegation and closes the gate's record (only the
/// delegator may), both rents back; revoking the authority gives back its rent, so the
/// delegator ends with every lamport it had (the fees were the test payer's). A delegation
/// revoked directly stops the pulls by name, and its record still closes.
#[tokio::test]
async fn cancelling_returns_every_lamport_of_rent() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let owner = payer.owner.insecure_clone();
    let before = s.lamports(&owner.pubkey()).await;
    let delegation = s.subscribed(&payer, &payee).await;
    let record_address = sdk().pda.gated_subscription(&delegation);
    let authority = subscriptions::subscription_authority(&owner.pubkey(), &s.mint);
    let rents = [
        s.lamports(&authority).await,
        s.lamports(&delegation).await,
        s.lamports(&record_address).await,
    ];
    println!(
        "rent: authority {}, delegation {}, gated subscription {}",
        rents[0], rents[1], rents[2]
    );
    assert_eq!(
        before - s.lamports(&owner.pubkey()).await,
        rents.iter().sum::<u64>()
    );
    s.pull(&delegation, 1_000).await.unwrap();
    let record = s.record(&delegation).await;

    // Only the delegator unsubscribes.
    let stranger = funded(&mut s.w).await;
    let mut theirs = sdk().unsubscribe(&record);
    theirs.accounts[0].pubkey = stranger.pubkey();
    assert_code(
        send(&mut s.w.ctx, &[theirs], &[&stranger]).await,
        u32::from(GateError::SubscriptionNotDelegator),
    );
    send(&mut s.w.ctx, &[sdk().unsubscribe(&record)], &[&owner])
        .await
        .unwrap();
    assert!(raw_account(&mut s.w.ctx, &delegation).await.is_none());
    assert!(raw_account(&mut s.w.ctx, &record_address).await.is_none());
    assert_eq!(before - s.lamports(&owner.pubkey()).await, rents[0]);
    let revoke = subscriptions::revoke_subscription_authority(&owner.pubkey(), &s.mint, s.program);
    send(&mut s.w.ctx, &[revoke], &[&owner]).await.unwrap();
    assert_eq!(s.lamports(&owner.pubkey()).await, before);

    // A delegation revoked directly with the Subscriptions program: no pull, and the record
    // still closes.
    let delegation = s.subscribed(&payer, &payee).await;
    let record = s.record(&delegation).await;
    let pull = s.pull_ix(&delegation, 1_000).await;
    let revoke = subscriptions::revoke_delegation(&owner.pubkey(), &delegation);
    send(&mut s.w.ctx, &[revoke], &[&owner]).await.unwrap();
    assert_code(
        s.send_as_facilitator(&[pull]).await,
        u32::from(GateError::SubscriptionDelegationInvalid),
    );
    send(&mut s.w.ctx, &[sdk().unsubscribe(&record)], &[&owner])
        .await
        .unwrap();
    assert!(
        raw_account(&mut s.w.ctx, &sdk().pda.gated_subscription(&delegation))
            .await
            .is_none()
    );
}
