//! The weak points an audit found in the programs, each executed as the attack it allows and
//! refused (one test per finding, numbered as in the hardening issue). The dispute rules
//! (finding 8) live in `settlement::only_the_payer_may_dispute_and_only_within_the_window`;
//! the read-only gate (finding 4) in `decisions::gate_payment_is_read_only_even_when_sent`
//! and, asked by another program through CPI, in the `cpi_example` module.

use gate::errors::GateError as G;
use gate::settlement::COMPUTE_BUDGET_PROGRAM_ID;
use gate::state::FeedbackLog;
use policy_vault::engine::kinds;
use policy_vault::errors::PolicyVaultError as V;
use policy_vault::state::{PolicyAccount, PolicyParams};
use solana_program_test::processor;
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::settle::ComputeBudget;
use trust_gate_program_tests::mints::Extension;
use trust_gate_program_tests::world::{
    demo_policy, open_policy, pda, sdk, tier, Agent, Attestations, World,
};
use trust_gate_program_tests::wrapper::{self, WRAPPER_ID};
use trust_gate_program_tests::{
    assert_code, execute, fetch, fund, funded_keypair, payment_id, raw_account, send,
};

fn g(e: G) -> u32 {
    u32::from(e)
}

fn v(e: V) -> u32 {
    u32::from(e)
}

/// A registered tier-3 agent whose authority is 2-of-2: its owner and `second`.
async fn two_of_two(w: &mut World) -> (Agent, Keypair) {
    let agent = w.register_agent().await;
    w.set_stats(&agent.asset(), tier(3)).await;
    let second = funded_keypair(&mut w.ctx).await;
    let ix = w.init_authority_ix(
        &agent.owner.pubkey(),
        &agent.asset(),
        vec![agent.owner.pubkey(), second.pubkey()],
        2,
    );
    send(&mut w.ctx, &[ix], &[&agent.owner]).await.unwrap();
    (agent, second)
}

// 1. Who picks the policy ------------------------------------------------------------------

#[tokio::test]
async fn finding_1_creating_a_policy_needs_the_authority_threshold() {
    let mut w = World::new().await;
    let (agent, second) = two_of_two(&mut w).await;
    let (asset, owner) = (agent.asset(), agent.owner.pubkey());
    // One member alone (say, a compromised one) cannot open a policy without caps.
    let lone = sdk().init_policy(
        &second.pubkey(),
        &[],
        &asset,
        9,
        open_policy(w.mint),
        Default::default(),
        0,
    );
    assert_code(
        send(&mut w.ctx, &[lone], &[&second]).await,
        v(V::InsufficientSigners),
    );
    // Neither can the agent's hot key, which is no member at all.
    let hot = funded_keypair(&mut w.ctx).await;
    let ix = sdk().init_policy(
        &hot.pubkey(),
        &[owner],
        &asset,
        9,
        open_policy(w.mint),
        Default::default(),
        0,
    );
    assert_code(
        send(&mut w.ctx, &[ix], &[&hot, &agent.owner]).await,
        v(V::NotAuthorityMember),
    );
    assert!(raw_account(&mut w.ctx, &pda::policy(&asset, 9))
        .await
        .is_none());
    // The threshold can.
    let ix = sdk().init_policy(
        &owner,
        &[second.pubkey()],
        &asset,
        9,
        open_policy(w.mint),
        Default::default(),
        0,
    );
    send(&mut w.ctx, &[ix], &[&agent.owner, &second])
        .await
        .unwrap();
    let p: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&asset, 9)).await.unwrap();
    assert_eq!((p.policy_id, p.retired_at), (9, 0));
}

#[tokio::test]
async fn finding_1_a_retired_policy_is_a_hard_error_for_both_gates() {
    let mut w = World::new().await;
    let (payer, second) = two_of_two(&mut w).await;
    let (asset, owner) = (payer.asset(), payer.owner.pubkey());
    let ix = sdk().init_policy(
        &owner,
        &[second.pubkey()],
        &asset,
        1,
        demo_policy(w.mint),
        Default::default(),
        0,
    );
    send(&mut w.ctx, &[ix], &[&payer.owner, &second])
        .await
        .unwrap();
    let payee = w.payee(3, None).await;
    w.token_account(&owner, 100_000_000).await;
    let before: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&asset, 1)).await.unwrap();

    // Retiring needs the threshold too.
    let short = sdk().retire_policy(&owner, &[], &asset, 1);
    assert_code(
        send(&mut w.ctx, &[short], &[&payer.owner]).await,
        v(V::InsufficientSigners),
    );
    let retire = sdk().retire_policy(&owner, &[second.pubkey()], &asset, 1);
    send(
        &mut w.ctx,
        std::slice::from_ref(&retire),
        &[&payer.owner, &second],
    )
    .await
    .unwrap();
    let after: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&asset, 1)).await.unwrap();
    assert!(after.retired_at > 0);
    assert_eq!(after.params, before.params, "nothing else changes");

    // The read-only gate: a hard error, not a decision.
    let ix = w.gate_payment_ix(
        &asset,
        &payee.asset(),
        1_000,
        w.mint,
        1,
        Attestations::default(),
    );
    assert_code(send(&mut w.ctx, &[ix], &[]).await, v(V::PolicyRetired));
    // The strict gate: the settlement fails and moves nothing.
    let ixs = w.settlement(&payer, &payee, 1_000, payment_id()).await;
    assert_code(w.send_settlement(&payer, &ixs).await, v(V::PolicyRetired));
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
    // Once retired, for good.
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_code(
        send(&mut w.ctx, &[retire], &[&payer.owner, &second]).await,
        v(V::PolicyRetired),
    );
}

#[tokio::test]
async fn finding_1_a_policy_with_limits_must_name_its_mint() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let any_mint = |kinds: u8| PolicyParams {
        kinds,
        ..demo_policy(Pubkey::default())
    };
    assert_code(
        w.init_policy(&agent, 1, any_mint(kinds::SPENDING)).await,
        v(V::MintRequired),
    );
    assert_code(
        w.init_policy(&agent, 2, any_mint(kinds::VELOCITY)).await,
        v(V::MintRequired),
    );
    // Rules without amounts may apply to any mint.
    w.init_policy(
        &agent,
        3,
        any_mint(kinds::KILL_SWITCH | kinds::COUNTERPARTY_TIER),
    )
    .await
    .unwrap();

    // A named mint comes with its account, which must be that mint.
    let owner = agent.owner.pubkey();
    let mut ix = sdk().init_policy(
        &owner,
        &[],
        &agent.asset(),
        4,
        demo_policy(w.mint),
        Default::default(),
        0,
    );
    let slot = ix.accounts.iter().position(|m| m.pubkey == w.mint).unwrap();
    ix.accounts[slot].pubkey = policy_vault::ID; // "absent"
    assert_code(
        send(&mut w.ctx, &[ix.clone()], &[&agent.owner]).await,
        v(V::MintAccountMismatch),
    );
    let other = w.token_2022_mint(&[]).await;
    ix.accounts[slot].pubkey = other;
    assert_code(
        send(&mut w.ctx, &[ix], &[&agent.owner]).await,
        v(V::MintAccountMismatch),
    );
    // A token account where the mint should be is not a mint.
    let account = w.token_account(&owner, 0).await;
    let mut policy = demo_policy(account);
    policy.mint = account;
    assert_code(w.init_policy(&agent, 5, policy).await, v(V::MintInvalid));
}

// 2. The strict gate is the top-level instruction itself -------------------------------------

#[tokio::test]
async fn finding_2_a_program_calling_the_strict_gate_is_refused() {
    let mut pt = trust_gate_localnet::native::program_test();
    pt.add_program("wrapper", WRAPPER_ID, processor!(wrapper::call_twice));
    let mut w = World::with_program_test(pt).await;
    let (payer, payee) = w.parties().await;
    let mut ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    let source = ixs[1].accounts[0].pubkey;
    let balance = w.token_balance(&source).await;
    // The wrapper sits where the gate should be and calls it twice: one transfer, two commits.
    ixs[0] = wrapper::wrap(&ixs[0]);
    assert_code(
        w.send_settlement(&payer, &ixs).await,
        g(G::StrictGateNotTopLevel),
    );
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
    assert_eq!(w.token_balance(&source).await, balance);
}

// 3. A settlement moves value to someone else ------------------------------------------------

#[tokio::test]
async fn finding_3_no_zero_amount_self_payment_or_self_transfer() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let f = w.facilitator.pubkey();

    // Amount 0: refused by both gates.
    let ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        0,
        w.mint,
        1,
        Attestations::default(),
    );
    assert_code(send(&mut w.ctx, &[ix], &[]).await, g(G::AmountZero));
    let ixs = w.settlement(&payer, &payee, 0, payment_id()).await;
    assert_code(w.send_settlement(&payer, &ixs).await, g(G::AmountZero));

    // Payer and payee the same agent.
    let ix = w.gate_payment_ix(
        &payer.asset(),
        &payer.asset(),
        1,
        w.mint,
        1,
        Attestations::default(),
    );
    assert_code(send(&mut w.ctx, &[ix], &[]).await, g(G::SelfPayment));
    let ixs = w.settlement(&payer, &payer, 1_000, payment_id()).await;
    assert_code(w.send_settlement(&payer, &ixs).await, g(G::SelfPayment));

    // A payee whose recipient is the payer's own wallet: SPL Token would accept the transfer
    // from the payer's account to itself, move nothing, and leave a disputable "settled" log.
    // The gate refuses a recipient that is one of the payer's keys before it reads the
    // transfer (`PaymentToPayer`; the self-transfer check behind it is unit-tested in
    // `gate::settlement`).
    let payer_key = payer.owner.insecure_clone();
    w.set_agent_wallet(&payee, &payer_key).await;
    let own = w.token_account(&payer.owner.pubkey(), 0).await;
    let pay = payment_id();
    let ixs = [
        w.strict_ix(&payer, &payee, 1_000, own, Attestations::default()),
        w.transfer_ix(&own, &own, &payer.owner.pubkey(), 1_000),
        w.emit_feedback_ix(pay, &payee.asset(), 90, 1_000),
    ];
    assert_code(w.send_settlement(&payer, &ixs).await, g(G::PaymentToPayer));
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
    assert!(raw_account(&mut w.ctx, &pda::feedback_log(&f, &pay))
        .await
        .is_none());
}

// 5. Reputation accounts handed to the registry ---------------------------------------------

#[tokio::test]
async fn finding_5_a_prefunded_stats_address_does_not_switch_the_feedback_path() {
    let mut w = World::new().await;
    let facilitator = w.facilitator.insecure_clone();
    let (payer, _) = w.parties().await;
    // Reputation-enabled, but its stats account was never created; someone sends it lamports.
    let unrated = w.register_unrated_agent().await;
    fund(&mut w.ctx, &pda::stats(&unrated.asset()), 10_000_000).await;
    let rated = w.payee(3, None).await;
    for (agent, engine) in [(&unrated, "skipped"), (&rated, "updated")] {
        let ixs = w.settlement(&payer, agent, 1_000_000, payment_id()).await;
        // The gate hands the registry all four engine accounts every time (the real registry
        // answers a shorter list with 3005); the registry decides from them.
        let cpi = ixs[2].accounts.len();
        let tx = trust_gate_program_tests::transaction_paid_by(
            &mut w.ctx,
            &ixs,
            &facilitator,
            &[&payer.owner],
        )
        .await;
        let logs = execute(&mut w.ctx, tx).await.unwrap().log_messages;
        let line = format!("(engine {engine})");
        assert!(
            logs.iter()
                .any(|l| l.contains("registry stand-in: feedback") && l.contains(&line)),
            "a balance at the stats address is not stats ({engine}, {cpi} accounts): {logs:#?}"
        );
    }
}

// 6. Mints whose transfer moves less than amount, or can take it back -----------------------

#[tokio::test]
async fn finding_6_fee_and_clawback_mints_cannot_back_a_policy() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let delegate = Pubkey::new_unique();
    let cases = [
        (Extension::TransferFee { bps: 100 }, V::MintTransferFee),
        (Extension::TransferFee { bps: 0 }, V::MintTransferFee),
        (
            Extension::PermanentDelegate(delegate),
            V::MintPermanentDelegate,
        ),
    ];
    for (i, (ext, err)) in cases.into_iter().enumerate() {
        let mint = w.token_2022_mint(&[ext]).await;
        assert_code(
            w.init_policy(&agent, 10 + i as u32, demo_policy(mint))
                .await,
            v(err),
        );
    }
    // Token-2022 mints without them are fine.
    let plain = w
        .token_2022_mint(&[Extension::CloseAuthority(delegate)])
        .await;
    w.init_policy(&agent, 20, demo_policy(plain)).await.unwrap();
}

#[tokio::test]
async fn finding_6_the_strict_gate_refuses_them_at_settlement() {
    let mut w = World::new().await;
    // A policy for any mint: what init_policy cannot see, the strict gate must.
    let policy = PolicyParams {
        kinds: kinds::KILL_SWITCH,
        ..open_policy(Pubkey::default())
    };
    let payer = w.payer_with_policy(3, policy).await;
    let payee = w.payee(3, None).await;
    let delegate = Pubkey::new_unique();
    let cases = [
        (Extension::TransferFee { bps: 500 }, G::MintTransferFee),
        (
            Extension::PermanentDelegate(delegate),
            G::MintPermanentDelegate,
        ),
    ];
    for (ext, err) in cases {
        let mint = w.token_2022_mint(&[ext]).await;
        let pay = payment_id();
        let ixs = w
            .token_2022_settlement(&mint, &payer, &payee, 1_000_000, pay)
            .await;
        let dest = ixs[1].accounts[2].pubkey;
        assert_code(w.send_settlement(&payer, &ixs).await, g(err));
        assert_eq!(w.token_balance(&dest).await, 0);
    }
    // The same settlement in a plain Token-2022 mint goes through.
    let mint = w.token_2022_mint(&[]).await;
    let ixs = w
        .token_2022_settlement(&mint, &payer, &payee, 1_000_000, payment_id())
        .await;
    let dest = ixs[1].accounts[2].pubkey;
    w.send_settlement(&payer, &ixs).await.unwrap();
    assert_eq!(w.token_balance(&dest).await, 1_000_000);
}

// 7. A compute-budget prefix, and nothing else ------------------------------------------------

fn budget(unit_limit: Option<u32>, price: Option<u64>) -> Vec<Instruction> {
    ComputeBudget {
        unit_limit,
        unit_price_micro_lamports: price,
    }
    .instructions()
}

#[tokio::test]
async fn finding_7_a_settlement_may_carry_a_priority_fee() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let f = w.facilitator.pubkey();
    for prefix in [
        budget(Some(400_000), Some(1_000)),
        budget(None, Some(5_000_000)),
        budget(Some(300_000), None),
    ] {
        let pay = payment_id();
        let mut ixs = prefix.clone();
        ixs.extend(w.settlement(&payer, &payee, 1_000_000, pay).await);
        w.send_settlement(&payer, &ixs).await.unwrap();
        let log: FeedbackLog = fetch(&mut w.ctx, &pda::feedback_log(&f, &pay))
            .await
            .unwrap();
        assert_eq!(
            (log.payer_wallet, log.deadline),
            (payer.owner.pubkey(), w.deadline()),
            "after {} prefix instructions",
            prefix.len()
        );
    }
    assert_eq!(w.counters(&payer).await.2, 3_000_000);
}

#[tokio::test]
async fn finding_7_the_prefix_is_the_only_relaxation() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let payment = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    let heap_frame = Instruction::new_with_bytes(
        COMPUTE_BUDGET_PROGRAM_ID,
        &[&[1u8][..], &(64 * 1024u32).to_le_bytes()].concat(),
        vec![],
    );
    let other = anchor_lang::solana_program::system_instruction::transfer(
        &payer.owner.pubkey(),
        &payee.owner.pubkey(),
        1,
    );
    let with = |prefix: Vec<Instruction>| -> Vec<Instruction> {
        prefix.into_iter().chain(payment.iter().cloned()).collect()
    };
    let cases = [
        // Another program before the payment.
        (with(vec![other.clone()]), G::ComputeBudgetPrefixInvalid),
        // A ComputeBudget instruction other than a unit limit or price.
        (with(vec![heap_frame]), G::ComputeBudgetPrefixInvalid),
        // More than two instructions before the payment.
        (
            with([budget(Some(400_000), Some(1)), vec![other.clone()]].concat()),
            G::SettlementLayoutInvalid,
        ),
        // Anything after the payment: read as a held payment's four instructions, whose
        // second transfer is missing.
        (
            [payment.to_vec(), budget(None, Some(1))].concat(),
            G::TransferMissing,
        ),
        (
            [
                payment.to_vec(),
                budget(None, Some(1)),
                budget(Some(400_000), None),
            ]
            .concat(),
            G::SettlementLayoutInvalid,
        ),
    ];
    for (ixs, err) in cases {
        assert_code(w.send_settlement(&payer, &ixs).await, g(err));
    }
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
}

#[tokio::test]
async fn a_transfer_hook_mint_names_its_hook_program() {
    use trust_gate_program_common::token_mint::transfer_hook_program;
    let mut w = World::new().await;
    let hook = Pubkey::new_unique();
    for (extensions, expected) in [
        (vec![Extension::TransferHook(hook)], Some(hook)),
        (vec![Extension::CloseAuthority(Pubkey::new_unique())], None),
        (vec![], None),
    ] {
        let mint = w.token_2022_mint(&extensions).await;
        let account = raw_account(&mut w.ctx, &mint).await.unwrap();
        assert_eq!(
            transfer_hook_program(&account.owner, &account.data),
            expected,
            "{extensions:?}"
        );
    }
    // An SPL Token mint has no extensions.
    let account = raw_account(&mut w.ctx, &w.mint.clone()).await.unwrap();
    assert_eq!(transfer_hook_program(&account.owner, &account.data), None);
}
