//! What a gated pull refuses: every class of the payer policy's rules (as the strict gate
//! refuses a payment), another account than the payee's recipient's, payee B on payee A's
//! delegation, a stranger's delegation, a sold agent's seller's, a sender other than the
//! subscription's facilitator, a policy holding a share back, and the Subscriptions program's
//! own refusals (103, 136, 407); what `subscribe` refuses up front (a stranger, a
//! vault-funded policy, another mint's policy, a transfer-hook mint, self-dealing).

use super::*;
use gate::errors::GateError;
use policy_vault::engine::{kinds, Decision, DenyReason};
use policy_vault::state::{funding, PolicyRules};
use trust_gate_program_tests::mints::Extension;
use trust_gate_program_tests::world::{min_tier_acceptance, open_policy};
use trust_gate_program_tests::{assert_code, clock};

impl Setup {
    /// A pull of `payer` to `payee` (a daily subscription made for it) is refused for
    /// `reason`, as the read-only gate decides a payment of the same amount.
    async fn refused_for(&mut self, payer: &Agent, payee: &Agent, amount: u64, reason: DenyReason) {
        let decision = self
            .w
            .decide(payer, payee, amount, Attestations::default())
            .await;
        assert_eq!(decision, Decision::Deny(reason));
        let delegation = self.subscribed(payer, payee).await;
        assert_code(
            self.pull(&delegation, amount).await,
            reason.strict_error_code(),
        );
    }
}

/// Replaces `from` by `to` among `ix`'s accounts.
fn swap(ix: &mut Instruction, from: &Pubkey, to: &Pubkey) {
    let mut found = false;
    for meta in ix.accounts.iter_mut().filter(|m| m.pubkey == *from) {
        meta.pubkey = *to;
        found = true;
    }
    assert!(found, "{from} is not among the instruction's accounts");
}

#[tokio::test]
async fn a_pull_is_refused_by_every_class_of_the_policys_rules() {
    let mut s = setup().await;
    let mint = s.mint;
    let payee = copy(&s.payee);

    // The per-payment cap, the daily cap, the velocity window.
    let payer = s
        .payer_under(PolicyParams {
            kinds: kinds::SPENDING,
            per_tx_cap: 1_000_000,
            daily_cap: 10_000_000,
            weekly_cap: 10_000_000,
            ..open_policy(mint)
        })
        .await;
    s.refused_for(&payer, &payee, 1_000_001, DenyReason::SpendingPerTxExceeded)
        .await;
    for (kind, reason) in [
        (kinds::SPENDING, DenyReason::SpendingDailyExceeded),
        (kinds::VELOCITY, DenyReason::VelocityWindowExceeded),
    ] {
        let payer = s
            .payer_under(PolicyParams {
                kinds: kind,
                per_tx_cap: 2_000_000,
                daily_cap: 2_000_000,
                weekly_cap: 10_000_000,
                velocity_window_secs: 3_600,
                velocity_max_in_window: 2_000_000,
                ..open_policy(mint)
            })
            .await;
        let delegation = s.subscribed(&payer, &payee).await;
        s.pull(&delegation, 2_000_000).await.unwrap();
        assert_code(s.pull(&delegation, 1).await, reason.strict_error_code());
    }

    // The payer's minimum tier of its payee (3 here).
    let payer = s
        .payer_under(PolicyParams {
            kinds: kinds::COUNTERPARTY_TIER,
            min_counterparty_tier: 4,
            ..open_policy(mint)
        })
        .await;
    s.refused_for(&payer, &payee, 1_000, DenyReason::CounterpartyTierBelowMin)
        .await;

    // The payee's acceptance policy: a payer of tier 4 at least.
    let choosy = s.w.payee(3, Some(min_tier_acceptance(4))).await;
    s.w.token_account(&choosy.owner.pubkey(), 0).await;
    let payer = s.payer_under(open_policy(mint)).await;
    let Decision::Deny(reason) =
        s.w.decide(&payer, &choosy, 1_000, Attestations::default())
            .await
    else {
        panic!("the payee's acceptance policy allowed a tier-3 payer");
    };
    s.refused_for(&payer, &choosy, 1_000, reason).await;

    // A policy's allow list without the payee.
    let rules = PolicyRules {
        payee_list_mode: 1,
        payees: [
            Pubkey::new_unique(),
            Pubkey::default(),
            Pubkey::default(),
            Pubkey::default(),
        ],
        ..PolicyRules::default()
    };
    let payer = s.w.payer_with_limits(3, open_policy(mint), rules).await;
    s.w.token_account(&payer.owner.pubkey(), FUNDS).await;
    s.refused_for(&payer, &payee, 1_000, DenyReason::PayeeNotAllowed)
        .await;
}

/// A pull pays the payee agent's recipient and nobody else: not a stranger's account, not the
/// payer's own.
#[tokio::test]
async fn a_pull_pays_only_the_payees_recipient() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let delegation = s.subscribed(&payer, &payee).await;
    let stranger = Keypair::new();
    let theirs = s.w.token_account(&stranger.pubkey(), 0).await;
    let payers = s.destination(&payer);
    for elsewhere in [theirs, payers] {
        let mut pull = s.pull_ix(&delegation, 1_000).await;
        swap(&mut pull, &s.destination(&payee), &elsewhere);
        assert_code(
            s.send_as_facilitator(&[pull]).await,
            u32::from(GateError::RecipientMismatch),
        );
    }
    assert_eq!(s.tokens(&stranger.pubkey()).await, 0);
    assert_eq!(s.tokens(&payer.owner.pubkey()).await, FUNDS);
}

/// Payee B, whom the same policy allows and who has its own subscription from the same
/// payer, can never pull payee A's delegation: not with its own record, not by naming itself
/// on A's record, not by signing as its own delegate.
#[tokio::test]
async fn payee_b_cannot_pull_payee_as_delegation() {
    let mut s = setup().await;
    let (payer, a) = (copy(&s.payer), copy(&s.payee));
    let b = s.w.payee(3, None).await;
    s.w.token_account(&b.owner.pubkey(), 0).await;
    let of_a = s.subscribed(&payer, &a).await;
    let of_b = s.subscribed(&payer, &b).await;
    let invalid = u32::from(GateError::SubscriptionDelegationInvalid);

    // B's record, A's delegation.
    let mut pull = s.pull_ix(&of_b, 1_000).await;
    swap(&mut pull, &of_b, &of_a);
    assert_code(s.send_as_facilitator(&[pull]).await, invalid);
    // A's record and delegation, B as the payee (its registry accounts and its account).
    let mut pull = s.pull_ix(&of_a, 1_000).await;
    swap(&mut pull, &a.asset(), &b.asset());
    swap(
        &mut pull,
        &sdk().pda.agent_account(&a.asset()),
        &sdk().pda.agent_account(&b.asset()),
    );
    swap(&mut pull, &s.destination(&a), &s.destination(&b));
    assert_code(
        s.send_as_facilitator(&[pull]).await,
        u32::from(GateError::AssetMismatch),
    );
    // A's record and delegation, signed as B's delegate.
    let mut pull = s.pull_ix(&of_a, 1_000).await;
    let delegate_a = s.delegation(&of_a).await.delegatee;
    let delegate_b = s.delegation(&of_b).await.delegatee;
    swap(&mut pull, &delegate_a, &delegate_b);
    assert_code(s.send_as_facilitator(&[pull]).await, invalid);
    assert_eq!(s.tokens(&b.owner.pubkey()).await, 0);
    // A's own pull goes through.
    s.pull(&of_a, 1_000).await.unwrap();
}

/// A stranger cannot subscribe for the payer agent, and a delegation a stranger makes
/// directly to the gate's delegate of the parties is never the subscription's: the gate
/// records only delegations it created from a key of the payer.
#[tokio::test]
async fn a_strangers_delegation_is_never_pulled() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let stranger = funded(&mut s.w).await;
    s.w.token_account(&stranger.pubkey(), FUNDS).await;
    let theirs = Subscription {
        delegator: stranger.pubkey(),
        ..s.subscription(&payer, &payee, daily(s.w.now))
    };
    assert_code(
        send(&mut s.w.ctx, &[sdk().subscribe(&theirs)], &[&stranger]).await,
        u32::from(GateError::PayerSignerMismatch),
    );

    let delegation = s.subscribed(&payer, &payee).await;
    let delegate = s.delegation(&delegation).await.delegatee;
    let init = subscriptions::init_subscription_authority(&stranger.pubkey(), &s.mint, s.program);
    send(&mut s.w.ctx, &[init], &[&stranger]).await.unwrap();
    let authority = subscriptions::subscription_authority(&stranger.pubkey(), &s.mint);
    let init_id = s.authority_init_id(&authority).await;
    let terms = RecurringTerms {
        nonce: 77,
        ..daily(s.w.now)
    };
    let create = subscriptions::create_recurring_delegation(
        &stranger.pubkey(),
        &s.mint,
        &delegate,
        &terms,
        init_id,
    );
    send(&mut s.w.ctx, &[create], &[&stranger]).await.unwrap();
    let strangers = subscriptions::delegation(&stranger.pubkey(), &s.mint, &delegate, 77);
    let mut pull = s.pull_ix(&delegation, 1_000).await;
    swap(&mut pull, &delegation, &strangers);
    assert_code(
        s.send_as_facilitator(&[pull]).await,
        u32::from(GateError::SubscriptionDelegationInvalid),
    );
    assert_eq!(s.tokens(&stranger.pubkey()).await, FUNDS);
}

impl Setup {
    /// An authority's `init_id`, read from the chain.
    async fn authority_init_id(&mut self, address: &Pubkey) -> i64 {
        let account = raw_account(&mut self.w.ctx, address).await.unwrap();
        subscriptions::SubscriptionAuthority::read(&account.data)
            .unwrap()
            .init_id
    }
}

/// After the payer agent is sold on MPL Core, the seller's delegation is not pulled: its
/// delegator is no longer a key of the agent.
#[tokio::test]
async fn a_sold_agents_sellers_delegation_is_refused() {
    let mut s = setup().await;
    let (mut payer, payee) = (copy(&s.payer), copy(&s.payee));
    let delegation = s.subscribed(&payer, &payee).await;
    s.pull(&delegation, 1_000).await.unwrap();
    let buyer = funded(&mut s.w).await;
    s.w.transfer_asset(&mut payer, buyer).await.unwrap();
    assert_code(
        s.pull(&delegation, 1_000).await,
        u32::from(GateError::SubscriptionDelegatorMismatch),
    );
}

/// Only the facilitator a subscription names sends its pulls: another facilitator (with a
/// GateAuthority of its own) or the payee itself is refused by name.
#[tokio::test]
async fn only_the_subscriptions_facilitator_sends_its_pulls() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let delegation = s.subscribed(&payer, &payee).await;
    let other = funded(&mut s.w).await;
    send(
        &mut s.w.ctx,
        &[sdk().init_gate_authority(&other.pubkey())],
        &[&other],
    )
    .await
    .unwrap();
    let payee_owner = payee.owner.insecure_clone();
    trust_gate_program_tests::fund(&mut s.w.ctx, &payee_owner.pubkey(), 1_000_000_000).await;
    for sender in [other, payee_owner] {
        let mut pull = s.pull_ix(&delegation, 1_000).await;
        let facilitator = s.w.facilitator.pubkey();
        swap(&mut pull, &facilitator, &sender.pubkey());
        swap(
            &mut pull,
            &sdk().pda.gate_authority(&facilitator),
            &sdk().pda.gate_authority(&sender.pubkey()),
        );
        assert_code(
            send(&mut s.w.ctx, &[pull], &[&sender]).await,
            u32::from(GateError::SubscriptionFacilitatorMismatch),
        );
    }
    assert_eq!(s.tokens(&payee.owner.pubkey()).await, 0);
}

/// A policy that holds back a share from the payee (a tier-1 payee under the suites'
/// schedule) refuses the pull: a pull pays its payee in full.
#[tokio::test]
async fn a_policy_holding_a_share_back_refuses_pulls() {
    use trust_gate_program_tests::holdback::{acceptance, accepts, schedule};
    let mut s = setup().await;
    let arbiter = Keypair::new();
    let key = arbiter.pubkey();
    let held =
        s.w.held_parties(
            arbiter,
            Some(schedule(key)),
            1,
            Some(acceptance(accepts(key))),
        )
        .await;
    let delegation = s.subscribed(&held.payer, &held.payee).await;
    assert_code(
        s.pull(&delegation, 1_000_000).await,
        u32::from(GateError::SubscriptionHoldback),
    );
}

/// The Subscriptions program's own refusals stand behind the gate: its authority revoked
/// (103), initialized again in a later slot (136), a delegation not started (407).
#[tokio::test]
async fn the_subscriptions_programs_own_refusals_stand() {
    let mut s = setup().await;
    let (payer, payee) = (copy(&s.payer), copy(&s.payee));
    let owner = payer.owner.insecure_clone();
    let delegation = s.subscribed(&payer, &payee).await;
    let revoke = subscriptions::revoke_subscription_authority(&owner.pubkey(), &s.mint, s.program);
    send(&mut s.w.ctx, &[revoke], &[&owner]).await.unwrap();
    assert_code(
        s.pull(&delegation, 1_000).await,
        subscriptions::error::INVALID_SUBSCRIPTION_AUTHORITY_PDA,
    );
    s.w.advance_slots(2).await;
    let init = subscriptions::init_subscription_authority(&owner.pubkey(), &s.mint, s.program);
    send(&mut s.w.ctx, &[init], &[&owner]).await.unwrap();
    assert_code(
        s.pull(&delegation, 1_000).await,
        subscriptions::error::STALE_SUBSCRIPTION_AUTHORITY,
    );

    let later = RecurringTerms {
        start_ts: clock(&mut s.w.ctx).await.unix_timestamp + DAY as i64,
        ..daily(s.w.now)
    };
    let sub = s.subscription(&payer, &payee, later);
    s.subscribe(&sub, &payer).await.unwrap();
    assert_code(
        s.pull(&sdk().subscription_delegation(&sub), 1_000).await,
        subscriptions::error::DELEGATION_NOT_STARTED,
    );
    assert_eq!(s.tokens(&payee.owner.pubkey()).await, 0);
}

/// `subscribe` refuses what no pull could pay, by name: a vault-funded policy, a policy of
/// another mint, a Token-2022 mint with a transfer hook (or an authority that can set one),
/// a payee that is the payer under another agent.
#[tokio::test]
async fn subscribe_refuses_what_no_pull_could_pay() {
    let mut s = setup().await;
    let payee = copy(&s.payee);
    let vault_funded =
        s.w.payer_with_policy(
            3,
            PolicyParams {
                funding: funding::VAULT,
                ..demo_policy(s.mint)
            },
        )
        .await;
    let sub = s.subscription(&vault_funded, &payee, daily(s.w.now));
    assert_code(
        s.subscribe(&sub, &vault_funded).await,
        u32::from(GateError::SubscriptionVaultFunded),
    );

    // A Token-2022 mint whose hook authority may set a hook: the payer's policy takes it, a
    // subscription does not.
    for extension in [
        Extension::TransferHookAuthority(Keypair::new().pubkey()),
        Extension::TransferHook(trust_gate_program_tests::hook::REJECTING_HOOK_ID),
    ] {
        let hooked = s.w.token_2022_mint(&[extension]).await;
        let payer = s.w.payer_with_policy(3, demo_policy(hooked)).await;
        s.w.token_2022_account(&hooked, &payer.owner.pubkey(), FUNDS)
            .await;
        let sub = Subscription {
            mint: hooked,
            token_program: TokenProgram::Token2022,
            ..s.subscription(&payer, &payee, daily(s.w.now))
        };
        assert_code(
            s.subscribe(&sub, &payer).await,
            u32::from(GateError::SubscriptionTransferHook),
        );
        // Nor its policy in another mint.
        let elsewhere = Subscription {
            mint: s.mint,
            token_program: TokenProgram::SplToken,
            ..sub
        };
        s.w.token_account(&payer.owner.pubkey(), FUNDS).await;
        assert_code(
            s.subscribe(&elsewhere, &payer).await,
            u32::from(GateError::SubscriptionPolicyMismatch),
        );
    }

    // The payer's owner paying an agent it also owns.
    let payer = copy(&s.payer);
    let mut own = s.w.payee(3, None).await;
    let owner = payer.owner.insecure_clone();
    s.w.transfer_asset(&mut own, owner).await.unwrap();
    let sub = s.subscription(&payer, &own, daily(s.w.now));
    assert_code(
        s.subscribe(&sub, &payer).await,
        u32::from(GateError::PaymentToPayer),
    );
}
