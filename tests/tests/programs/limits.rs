//! A policy's limits, executed: each rule at its boundary through the read-only gate and the
//! strict settlement (whose denials are `6100 + code` for the reasons 16 and up), the payee
//! list account edited only by the authority's threshold, and a policy with limits retired and
//! given a spender as one without. Policies without limits are what most other tests of this
//! suite pay under.

use policy_vault::engine::{Decision, DenyReason, PAYEE_SLOTS};
use policy_vault::errors::PolicyVaultError as E;
use policy_vault::state::{PolicyAccount, PolicyParams, PolicyRules};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_program_tests::world::{open_policy, pda, sdk, tier, Agent, Attestations, World};
use trust_gate_program_tests::{custom_code, fetch, payment_id, send};

/// 2026-12-31 23:59:59 UTC: the last second of a day, a month and a year.
const END_OF_2026: i64 = 1_798_761_599;

fn strict_code(reason: DenyReason) -> Option<u32> {
    Some(reason.strict_error_code())
}

fn code(e: E) -> Option<u32> {
    Some(u32::from(e))
}

/// A payer under a policy (no kinds) with limit `rules`, and `tokens` in its wallet.
async fn payer(w: &mut World, rules: PolicyRules, tokens: u64) -> Agent {
    let payer = w.payer_with_limits(3, open_policy(w.mint), rules).await;
    w.token_account(&payer.owner.pubkey(), tokens).await;
    payer
}

/// Settles `amount` from `payer` to `payee` under policy 1; the custom error code on failure.
async fn settle(
    w: &mut World,
    payer: &Agent,
    payee: &Agent,
    amount: u64,
) -> Result<(), Option<u32>> {
    let ixs = w.settlement(payer, payee, amount, payment_id()).await;
    w.send_settlement(payer, &ixs)
        .await
        .map_err(|e| custom_code(&e))
}

#[tokio::test]
async fn the_validity_window_holds_from_its_first_to_its_last_second() {
    let mut w = World::new().await;
    let start = w.now + 1_000;
    let rules = PolicyRules {
        not_before: start,
        not_after: start + 500,
        ..PolicyRules::default()
    };
    let payer = payer(&mut w, rules, 10).await;
    let payee = w.payee(3, None).await;
    let att = Attestations::default();
    w.set_time(start - 1).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, att).await,
        Decision::Deny(DenyReason::PolicyNotYetValid)
    );
    assert_eq!(
        settle(&mut w, &payer, &payee, 1).await,
        Err(strict_code(DenyReason::PolicyNotYetValid))
    );
    w.set_time(start).await;
    assert_eq!(w.decide(&payer, &payee, 1, att).await, Decision::Allow);
    settle(&mut w, &payer, &payee, 1).await.unwrap();
    w.set_time(start + 500).await;
    settle(&mut w, &payer, &payee, 1).await.unwrap();
    w.set_time(start + 501).await;
    assert_eq!(
        w.decide(&payer, &payee, 1, att).await,
        Decision::Deny(DenyReason::PolicyExpired)
    );
    assert_eq!(settle(&mut w, &payer, &payee, 1).await, Err(Some(6117)));
}

#[tokio::test]
async fn the_monthly_cap_turns_at_the_last_second_of_the_year() {
    let mut w = World::new().await;
    let rules = PolicyRules {
        monthly_cap: 500,
        ..PolicyRules::default()
    };
    let payer = payer(&mut w, rules, 10_000).await;
    let payee = w.payee(3, None).await;
    w.set_time(END_OF_2026 - 60).await;
    settle(&mut w, &payer, &payee, 499).await.unwrap();
    w.set_time(END_OF_2026).await;
    assert_eq!(
        settle(&mut w, &payer, &payee, 2).await,
        Err(strict_code(DenyReason::SpendingMonthlyExceeded))
    );
    settle(&mut w, &payer, &payee, 1).await.unwrap();
    assert_eq!(settle(&mut w, &payer, &payee, 1).await, Err(Some(6120)));
    // The first second of 2027: a new month.
    w.set_time(END_OF_2026 + 1).await;
    settle(&mut w, &payer, &payee, 500).await.unwrap();
    let p: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&payer.asset(), 1))
        .await
        .unwrap();
    let limits = p.limits.unwrap();
    assert_eq!((limits.month_spent, limits.lifetime_spent), (500, 1_000));
}

#[tokio::test]
async fn the_lifetime_cap_one_unit_under_and_over() {
    let mut w = World::new().await;
    let rules = PolicyRules {
        lifetime_cap: 5_000,
        ..PolicyRules::default()
    };
    let payer = payer(&mut w, rules, 10_000).await;
    let payee = w.payee(3, None).await;
    settle(&mut w, &payer, &payee, 4_999).await.unwrap();
    settle(&mut w, &payer, &payee, 1).await.unwrap();
    // Never again, a year later either.
    w.advance_time(366 * 86_400).await;
    assert_eq!(
        settle(&mut w, &payer, &payee, 1).await,
        Err(strict_code(DenyReason::SpendingLifetimeExceeded))
    );
}

#[tokio::test]
async fn the_per_payee_daily_cap_and_a_full_slot_set() {
    let mut w = World::new().await;
    let rules = PolicyRules {
        payee_daily_cap: 20,
        ..PolicyRules::default()
    };
    let payer = payer(&mut w, rules, 10_000).await;
    // Mid-day, so that the day does not turn while the payees are registered.
    let day_start = (w.now / 86_400 + 1) * 86_400;
    w.set_time(day_start + 3_600).await;
    let mut payees = Vec::new();
    for _ in 0..=PAYEE_SLOTS {
        payees.push(w.payee(3, None).await);
    }
    settle(&mut w, &payer, &payees[0], 19).await.unwrap();
    settle(&mut w, &payer, &payees[0], 1).await.unwrap();
    assert_eq!(
        settle(&mut w, &payer, &payees[0], 1).await,
        Err(strict_code(DenyReason::PayeeDailyExceeded))
    );
    for p in &payees[1..PAYEE_SLOTS] {
        settle(&mut w, &payer, p, 20).await.unwrap();
    }
    // Every slot is taken: a 17th payee is denied, one that holds a slot is not.
    let extra = &payees[PAYEE_SLOTS];
    assert_eq!(
        w.decide(&payer, extra, 1, Attestations::default()).await,
        Decision::Deny(DenyReason::PayeeSlotsFull)
    );
    assert_eq!(
        settle(&mut w, &payer, extra, 1).await,
        Err(strict_code(DenyReason::PayeeSlotsFull))
    );
    assert_eq!(
        settle(&mut w, &payer, &payees[5], 1).await,
        Err(strict_code(DenyReason::PayeeDailyExceeded))
    );
    // The first second of the next UTC day frees every slot.
    w.set_time(day_start + 86_400).await;
    settle(&mut w, &payer, extra, 20).await.unwrap();
    settle(&mut w, &payer, &payees[0], 20).await.unwrap();
}

#[tokio::test]
async fn an_inline_allow_list_pays_only_its_payees() {
    let mut w = World::new().await;
    let listed = w.payee(3, None).await;
    let other = w.payee(3, None).await;
    let mut payees = [Pubkey::default(); 4];
    payees[2] = listed.asset();
    let rules = PolicyRules {
        payee_list_mode: 1,
        payees,
        ..PolicyRules::default()
    };
    let payer = payer(&mut w, rules, 100).await;
    let att = Attestations::default();
    assert_eq!(w.decide(&payer, &listed, 1, att).await, Decision::Allow);
    assert_eq!(
        w.decide(&payer, &other, 1, att).await,
        Decision::Deny(DenyReason::PayeeNotAllowed)
    );
    settle(&mut w, &payer, &listed, 1).await.unwrap();
    assert_eq!(
        settle(&mut w, &payer, &other, 1).await,
        Err(strict_code(DenyReason::PayeeNotAllowed))
    );
}

#[tokio::test]
async fn a_deny_list_account_is_edited_by_the_threshold_only() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.set_stats(&agent.asset(), tier(3)).await;
    let second = Keypair::new();
    let owner = agent.owner.pubkey();
    let ix = w.init_authority_ix(&owner, &agent.asset(), vec![owner, second.pubkey()], 2);
    send(&mut w.ctx, &[ix], &[&agent.owner]).await.unwrap();
    let b = sdk();
    let list = b.pda.payee_list(&agent.asset(), 1);
    let rules = PolicyRules {
        payee_list_mode: 2,
        payee_list: list,
        ..PolicyRules::default()
    };
    let ix = b.init_policy(
        &owner,
        &[second.pubkey()],
        &agent.asset(),
        1,
        open_policy(w.mint),
        rules,
        0,
    );
    send(&mut w.ctx, &[ix], &[&agent.owner, &second])
        .await
        .unwrap();
    w.token_account(&owner, 100).await;
    let payee = w.payee(3, None).await;
    let with_list = Attestations {
        payee_list: Some(list),
        ..Attestations::default()
    };
    assert_eq!(
        w.decide(&agent, &payee, 1, with_list).await,
        Decision::Allow
    );

    // One member alone cannot list the payee.
    let alone = b.edit_payee_list(&owner, &[], &agent.asset(), 1, vec![payee.asset()], vec![]);
    let err = send(&mut w.ctx, &[alone], &[&agent.owner])
        .await
        .unwrap_err();
    assert_eq!(custom_code(&err), code(E::InsufficientSigners));
    let both = b.edit_payee_list(
        &owner,
        &[second.pubkey()],
        &agent.asset(),
        1,
        vec![payee.asset()],
        vec![],
    );
    send(&mut w.ctx, &[both], &[&agent.owner, &second])
        .await
        .unwrap();
    assert_eq!(
        w.decide(&agent, &payee, 1, with_list).await,
        Decision::Deny(DenyReason::PayeeDenied)
    );
    let dest = w.token_account(&payee.owner.pubkey(), 0).await;
    let strict = w.strict_ix(&agent, &payee, 1, dest, with_list);
    let source = w.token_account(&owner, 0).await;
    let ixs = [
        strict,
        w.transfer_ix(&source, &dest, &owner, 1),
        w.emit_feedback_ix(payment_id(), &payee.asset(), 90, 1),
    ];
    let err = w.send_settlement(&agent, &ixs).await.unwrap_err();
    assert_eq!(custom_code(&err), strict_code(DenyReason::PayeeDenied));
    // Without the list account the policy names, the evaluation refuses to decide; with
    // another account in its place (another policy's list address), too.
    let err = settle(&mut w, &agent, &payee, 1).await.unwrap_err();
    assert_eq!(err, code(E::PayeeListMissing));
    let other = Attestations {
        payee_list: Some(b.pda.payee_list(&agent.asset(), 2)),
        ..Attestations::default()
    };
    let ixs = [
        w.strict_ix(&agent, &payee, 1, dest, other),
        w.transfer_ix(&source, &dest, &owner, 1),
        w.emit_feedback_ix(payment_id(), &payee.asset(), 90, 1),
    ];
    let err = w.send_settlement(&agent, &ixs).await.unwrap_err();
    assert_eq!(custom_code(&err), code(E::PayeeListMismatch));

    // The threshold takes the payee off the list again.
    let remove = b.edit_payee_list(
        &owner,
        &[second.pubkey()],
        &agent.asset(),
        1,
        vec![],
        vec![payee.asset()],
    );
    send(&mut w.ctx, &[remove], &[&agent.owner, &second])
        .await
        .unwrap();
    assert_eq!(
        w.decide(&agent, &payee, 1, with_list).await,
        Decision::Allow
    );
}

#[tokio::test]
async fn bad_rules_are_refused_with_an_error_that_names_the_field() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let mint = w.mint;
    let cases: [(PolicyParams, PolicyRules, E); 5] = [
        (
            open_policy(mint),
            PolicyRules {
                not_before: 10,
                not_after: 9,
                ..PolicyRules::default()
            },
            E::ValidityInverted,
        ),
        (
            open_policy(mint),
            PolicyRules {
                not_after: -1,
                ..PolicyRules::default()
            },
            E::ValidityNegative,
        ),
        (
            open_policy(mint),
            PolicyRules {
                payee_list_mode: 1,
                ..PolicyRules::default()
            },
            E::PayeeListEmpty,
        ),
        (
            open_policy(mint),
            PolicyRules {
                payee_list_mode: 3,
                ..PolicyRules::default()
            },
            E::InvalidListMode,
        ),
        (
            open_policy(Pubkey::default()),
            PolicyRules {
                monthly_cap: 1,
                ..PolicyRules::default()
            },
            E::MintRequired,
        ),
    ];
    for (params, rules, expected) in cases {
        let err = w
            .init_policy_with_limits(&agent, 1, params, rules)
            .await
            .unwrap_err();
        assert_eq!(custom_code(&err), code(expected), "{rules:?}");
    }
}

#[tokio::test]
async fn a_policy_with_limits_is_retired_and_given_a_spender_like_any() {
    let mut w = World::new().await;
    let payer = payer(&mut w, PolicyRules::default(), 10).await;
    let payee = w.payee(3, None).await;
    let owner = payer.owner.pubkey();
    // Wallet-funded: no spender to name.
    let ix = sdk().set_vault_spender(&owner, &[], &payer.asset(), 1, &owner);
    let err = send(&mut w.ctx, &[ix], &[&payer.owner]).await.unwrap_err();
    assert_eq!(custom_code(&err), code(E::PolicyNotVaultFunded));
    let ix = sdk().retire_policy(&owner, &[], &payer.asset(), 1);
    send(&mut w.ctx, &[ix], &[&payer.owner]).await.unwrap();
    let p: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&payer.asset(), 1))
        .await
        .unwrap();
    assert!(p.is_retired());
    assert_eq!(
        settle(&mut w, &payer, &payee, 1).await,
        Err(code(E::PolicyRetired))
    );
}

/// Anyone can send lamports to a policy's address before it exists (it is derived from the
/// asset and the id). That must not block the policy: `init_policy` tops the address up and
/// creates the account at the size its rules need, with or without limits.
#[tokio::test]
async fn audit5_l4_a_prefunded_policy_address_does_not_block_init_policy() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let rules = PolicyRules {
        monthly_cap: 1_000,
        payee_daily_cap: 10,
        ..PolicyRules::default()
    };
    for (id, rules) in [(1, rules), (2, PolicyRules::default())] {
        let address = pda::policy(&agent.asset(), id);
        trust_gate_program_tests::fund(&mut w.ctx, &address, 1_000_000).await;
        w.init_policy_with_limits(&agent, id, open_policy(w.mint), rules)
            .await
            .unwrap();
        let account = trust_gate_program_tests::raw_account(&mut w.ctx, &address)
            .await
            .unwrap();
        let limits = (rules != PolicyRules::default()).then_some(&rules);
        assert_eq!(account.data.len(), PolicyAccount::space(limits, false));
        assert_eq!(account.owner, policy_vault::ID);
        let rent = w.ctx.banks_client.get_rent().await.unwrap();
        assert_eq!(
            account.lamports,
            rent.minimum_balance(account.data.len()),
            "topped up to rent exemption"
        );
        let p: PolicyAccount = fetch(&mut w.ctx, &address).await.unwrap();
        assert_eq!(p.rules(), limits);
    }
}
