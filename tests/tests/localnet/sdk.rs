//! The SDK's simulation, builders, composer, decoders and loaders on the localnet, over
//! JSON-RPC.

use crate::fixture::{payment_id, seeded, Env};
use anchor_lang::prelude::Pubkey;
use anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent;
use anchor_spl::token_2022::spl_token_2022;
use solana_rpc_client_api::config::RpcTransactionConfig;
use solana_sdk::program_pack::Pack;
use solana_sdk::signature::{Keypair, Signer};
use solana_transaction_status_client_types::{
    EncodedTransaction, UiMessage, UiTransactionEncoding,
};
use trust_gate_client::decode::{
    self, AcceptancePolicy, AnyAccount, Decision, DenyReason, DisputeRecord, FeedbackEmitted,
    FeedbackLog, GateDecision, KillSwitchState, PolicyAuthority, VelocityLedger,
};
use trust_gate_client::instructions::{capability_hash, ed25519_verify, Claim};
use trust_gate_client::settle::{self, AtomicityEnforced, TokenProgram};
use trust_gate_client::{chain, gate_payment, idl, Caller, ClientError, PaymentQuery, Program};
use trust_gate_migrations::demo;

fn query(env: &Env, tier: u8, amount: u64) -> PaymentQuery {
    PaymentQuery {
        payer_asset: env.world.payer(tier).unwrap().asset(),
        payee_asset: env.world.service.asset(),
        amount,
        mint: env.world.mint(),
        policy_id: demo::POLICY_ID,
    }
}

async fn decode_at<T: anchor_lang::AccountDeserialize>(env: &Env, key: &Pubkey) -> T {
    chain::anchor_account::<T>(&env.rpc, "account", key)
        .await
        .unwrap()
        .expect("account exists")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_world_decisions_by_simulation_with_a_public_key_only() {
    let env = seeded().await;
    for (tier, expected) in [
        (0, Decision::Deny(DenyReason::CounterpartyTierBelowMin)),
        (1, Decision::Deny(DenyReason::CounterpartyTierBelowMin)),
        (3, Decision::Allow),
    ] {
        let q = query(&env, tier, demo::PRICE);
        // A caller that has never held a lamport: no funded fee payer is needed.
        let nobody = Pubkey::new_unique();
        let d = gate_payment(&env.rpc, &env.b, Caller::Pubkey(nobody), q)
            .await
            .unwrap();
        assert_eq!(d, expected, "tier {tier}");
        let owner = &env.world.payer(tier).unwrap().owner;
        let d = gate_payment(&env.rpc, &env.b, Caller::Keypair(owner), q)
            .await
            .unwrap();
        assert_eq!(d, expected, "tier {tier}, signed");
    }
    // Over the per-transaction cap.
    let d = gate_payment(
        &env.rpc,
        &env.b,
        Caller::Pubkey(Pubkey::new_unique()),
        query(&env, 3, 5_000_001),
    )
    .await
    .unwrap();
    assert_eq!(d, Decision::Deny(DenyReason::SpendingPerTxExceeded));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simulation_without_a_decision_is_an_error_with_a_log_summary() {
    let env = seeded().await;
    let mut q = query(&env, 3, demo::PRICE);
    q.policy_id = 99;
    let err = gate_payment(&env.rpc, &env.b, Caller::Pubkey(Pubkey::new_unique()), q)
        .await
        .unwrap_err();
    let ClientError::SimulationFailed {
        err: Some(_),
        named: Some(named),
        logs,
    } = &err
    else {
        panic!("expected SimulationFailed, got {err:?}");
    };
    assert!(
        logs.len() <= 400 && logs.len() > 40,
        "{} chars: {logs}",
        logs.len()
    );
    assert!(logs.contains("custom program error: 0xbc4"), "{logs}");
    assert_eq!(
        (named.code, named.name.as_str()),
        (3012, "AccountNotInitialized")
    );
    assert!(err.to_string().contains("AccountNotInitialized"), "{err}");
}

/// Settles `s` through the SDK, signed by `signer` and the demo facilitator.
async fn settle_as(
    env: &Env,
    s: &settle::Settlement,
    signer: &Keypair,
) -> Result<solana_sdk::signature::Signature, ClientError> {
    settle::settle(
        &env.rpc,
        &env.b,
        s,
        signer,
        &env.world.facilitator,
        &env.tables().await,
        AtomicityEnforced::TRUE,
    )
    .await
}

/// A landed transaction as `getTransaction` returns it in JSON.
async fn landed(
    env: &Env,
    sig: &solana_sdk::signature::Signature,
) -> solana_transaction_status_client_types::EncodedConfirmedTransactionWithStatusMeta {
    env.rpc
        .get_transaction_with_config(
            sig,
            RpcTransactionConfig {
                encoding: Some(UiTransactionEncoding::Json),
                max_supported_transaction_version: Some(0),
                ..Default::default()
            },
        )
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_composed_settlement_lands_as_one_transaction_of_three_instructions() {
    let env = seeded().await;
    let w = &env.world;
    let pay = payment_id();
    let s = env.settlement(3, demo::PRICE, pay).await;
    let before = (
        env.token_balance(&s.source_token).await,
        env.token_balance(&s.destination_token).await,
    );
    let payer = &w.payer(3).unwrap().owner;
    let sig = settle_as(&env, &s, payer).await.unwrap();

    // The transaction as the RPC returns it: exactly [gate, token, gate].
    let tx = landed(&env, &sig).await;
    let EncodedTransaction::Json(ui) = &tx.transaction.transaction else {
        panic!("json")
    };
    let UiMessage::Raw(msg) = &ui.message else {
        panic!("raw message")
    };
    let programs: Vec<&str> = msg
        .instructions
        .iter()
        .map(|ix| msg.account_keys[usize::from(ix.program_id_index)].as_str())
        .collect();
    let (gate, token) = (
        env.b.ids.gate.to_string(),
        anchor_spl::token::spl_token::ID.to_string(),
    );
    assert_eq!(programs, vec![gate.as_str(), token.as_str(), gate.as_str()]);

    // What the programs wrote, decoded.
    let meta = tx.transaction.meta.unwrap();
    let logs: Vec<String> = Option::from(meta.log_messages).unwrap();
    let emitted = decode::events::<FeedbackEmitted>(&logs);
    assert_eq!(emitted.len(), 1, "{logs:#?}");
    assert_eq!(emitted[0].deadline, s.deadline);
    assert_eq!(emitted[0].amount, demo::PRICE);
    // The settlement's decision is Allow or the transaction fails: its gate logs none.
    assert!(
        decode::events::<GateDecision>(&logs).is_empty(),
        "{logs:#?}"
    );
    let log: FeedbackLog =
        decode_at(&env, &env.b.pda.feedback_log(&w.facilitator.pubkey(), &pay)).await;
    assert_eq!(
        (log.amount, log.score, log.deadline),
        (demo::PRICE, 90, s.deadline)
    );
    let ledger: VelocityLedger =
        decode_at(&env, &env.b.pda.velocity(&w.payer(3).unwrap().asset(), 1)).await;
    assert_eq!(ledger.cumulative, demo::PRICE);
    assert_eq!(
        env.token_balance(&s.source_token).await,
        before.0 - demo::PRICE
    );
    assert_eq!(
        env.token_balance(&s.destination_token).await,
        before.1 + demo::PRICE
    );

    // The dispute helper, once.
    let dispute = settle::Dispute {
        collection: env.collection,
        payment_id_hash: pay,
        payee_asset: w.service.asset(),
        reason_hash: capability_hash("late delivery"),
        feedback_uri: "ipfs://d".into(),
    };
    let payer_wallet = &w.payer(3).unwrap().owner;
    settle::dispute(&env.rpc, &env.b, &w.facilitator, payer_wallet, &dispute)
        .await
        .unwrap();
    let record: DisputeRecord =
        decode_at(&env, &env.b.pda.dispute(&w.facilitator.pubkey(), &pay)).await;
    assert_eq!(record.reason_hash, dispute.reason_hash);
    assert_eq!(record.disputed_by, payer_wallet.pubkey());
    let again = settle::dispute(&env.rpc, &env.b, &w.facilitator, payer_wallet, &dispute).await;
    assert!(
        matches!(again, Err(ClientError::Transaction { .. })),
        "{again:?}"
    );
}

/// The demo's vault-funded payer through the SDK alone: its funding read from the chain,
/// the settlement composed with the vault, the release event decoded, the vault read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vault_funded_settlement_composed_by_the_sdk_pays_from_the_vault() {
    let env = seeded().await;
    let w = &env.world;
    let payer = w.vault_payer();
    let hot = payer.hot_key.as_ref().unwrap();
    let (asset, mint) = (payer.asset(), w.mint());
    assert_eq!(
        chain::policy_funding(&env.rpc, &env.b.ids, &asset, demo::POLICY_ID)
            .await
            .unwrap(),
        settle::Funding::Vault
    );
    let vault = env.b.pda.vault(&asset, &mint);
    let account = chain::account(&env.rpc, &vault).await.unwrap().unwrap();
    let AnyAccount::Vault(before) = AnyAccount::decode_account(&vault, &account).unwrap() else {
        panic!("a vault")
    };
    assert_eq!((before.mint, before.amount), (mint, demo::PAYER_BALANCE));

    let s = env.settlement_of(payer, demo::PRICE, payment_id()).await;
    assert_eq!(s.funding, settle::Funding::Vault);
    let hot_before = env.token_balance(&s.source_token).await;
    let sig = settle_as(&env, &s, hot).await.unwrap();
    landed(&env, &sig).await;
    let after = chain::vault(&env.rpc, &env.b.ids, &asset, &mint)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.amount, before.amount - demo::PRICE);
    assert_eq!(env.token_balance(&s.source_token).await, hot_before);
    let ledger: VelocityLedger = decode_at(&env, &env.b.pda.velocity(&asset, 1)).await;
    assert_eq!(ledger.cumulative, demo::PRICE);

    // The same settlement without the vault: the policy says where the money comes from.
    let mut wallet = env.settlement_of(payer, demo::PRICE, payment_id()).await;
    wallet.funding = settle::Funding::Wallet;
    let err = settle_as(&env, &wallet, hot).await.unwrap_err();
    assert!(err.to_string().contains("VaultAccountsMissing"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_settlement_fails_with_the_named_reason_and_moves_nothing() {
    let env = seeded().await;
    let w = &env.world;
    let s = env.settlement(1, demo::PRICE, payment_id()).await;
    let before = env.token_balance(&s.source_token).await;
    let err = settle::settle(
        &env.rpc,
        &env.b,
        &s,
        &w.payer(1).unwrap().owner,
        &w.facilitator,
        &env.tables().await,
        AtomicityEnforced::TRUE,
    )
    .await
    .unwrap_err();
    let ClientError::Transaction {
        named: Some(named), ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (named.code, named.name.as_str()),
        (6006, "CounterpartyTierBelowMin")
    );
    assert!(
        err.to_string().contains("CounterpartyTierBelowMin"),
        "{err}"
    );
    assert_eq!(env.token_balance(&s.source_token).await, before);
}

/// The payer's policy in the Token-2022 mint: an id the demo world does not use.
const TOKEN_2022_POLICY_ID: u32 = 7;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_2022_settlement_passes_the_introspection() {
    let env = seeded().await;
    let w = &env.world;
    let payer = w.payer(3).unwrap();
    // A Token-2022 mint, both token accounts, and policy 3 of the payer for that mint.
    let mint = Keypair::new();
    let authority = Keypair::new();
    let len = spl_token_2022::state::Mint::LEN;
    let rent = env
        .rpc
        .get_minimum_balance_for_rent_exemption(len)
        .await
        .unwrap();
    let faucet = env.localnet.faucet().pubkey();
    let t22 = TokenProgram::Token2022;
    let (src, dst) = (
        t22.associated_account(&payer.owner.pubkey(), &mint.pubkey()),
        t22.associated_account(&w.service.owner.pubkey(), &mint.pubkey()),
    );
    env.send(
        &[
            anchor_lang::solana_program::system_instruction::create_account(
                &faucet,
                &mint.pubkey(),
                rent,
                len as u64,
                &spl_token_2022::ID,
            ),
            spl_token_2022::instruction::initialize_mint2(
                &spl_token_2022::ID,
                &mint.pubkey(),
                &authority.pubkey(),
                None,
                6,
            )
            .unwrap(),
            create_associated_token_account_idempotent(
                &faucet,
                &payer.owner.pubkey(),
                &mint.pubkey(),
                &spl_token_2022::ID,
            ),
            create_associated_token_account_idempotent(
                &faucet,
                &w.service.owner.pubkey(),
                &mint.pubkey(),
                &spl_token_2022::ID,
            ),
            spl_token_2022::instruction::mint_to(
                &spl_token_2022::ID,
                &mint.pubkey(),
                &src,
                &authority.pubkey(),
                &[],
                1_000_000,
            )
            .unwrap(),
        ],
        &[&mint, &authority],
    )
    .await
    .unwrap();
    let mut policy = w.payer_policy();
    policy.mint = mint.pubkey();
    let ix = env.b.init_policy(
        &payer.owner.pubkey(),
        &[],
        &payer.asset(),
        TOKEN_2022_POLICY_ID,
        policy,
        Default::default(),
        0,
    );
    env.send(&[ix], &[&payer.owner]).await.unwrap();

    let mut s = env.settlement(3, 250_000, payment_id()).await;
    s.mint = mint.pubkey();
    s.policy_id = TOKEN_2022_POLICY_ID;
    s.token_program = t22;
    s.source_token = src;
    s.destination_token = dst;
    settle::settle(
        &env.rpc,
        &env.b,
        &s,
        &payer.owner,
        &w.facilitator,
        &env.tables().await,
        AtomicityEnforced::TRUE,
    )
    .await
    .unwrap();
    assert_eq!(env.token_balance(&dst).await, 250_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_policy_vault_and_gate_builder_lands() {
    let env = seeded().await;
    let b = &env.b;
    let (owner, asset) = env.new_agent().await;
    let asset = asset.pubkey();
    let second = Keypair::new();
    let (o, s) = (owner.pubkey(), second.pubkey());

    env.send(&[b.init_authority(&o, &asset, vec![o, s], 1)], &[&owner])
        .await
        .unwrap();
    env.send(
        &[b.rotate_authority(&o, &[], &asset, vec![o, s], 2)],
        &[&owner],
    )
    .await
    .unwrap();
    let auth: PolicyAuthority = decode_at(&env, &b.pda.policy_authority(&asset)).await;
    assert_eq!((auth.threshold, auth.members.clone()), (2, vec![o, s]));

    env.send(&[b.init_killswitch(&o, &asset)], &[&owner])
        .await
        .unwrap();
    env.send(
        &[b.set_killswitch(&o, &[s], &asset, true)],
        &[&owner, &second],
    )
    .await
    .unwrap();
    let ks: KillSwitchState = decode_at(&env, &b.pda.killswitch(&asset)).await;
    assert!(ks.paused);
    // One signer short of the threshold: refused with policy_vault's named error.
    let short = env
        .send(&[b.set_killswitch(&o, &[], &asset, false)], &[&owner])
        .await
        .unwrap_err();
    assert!(short.code().is_some(), "{short}");

    // Creating a policy needs the threshold too.
    let short = env
        .send(
            &[b.init_policy(
                &o,
                &[],
                &asset,
                1,
                env.world.payer_policy(),
                Default::default(),
                0,
            )],
            &[&owner],
        )
        .await
        .unwrap_err();
    assert_eq!(
        short.code(),
        Some(policy_vault::errors::PolicyVaultError::InsufficientSigners as u32 + 6000),
        "{short}"
    );
    env.send(
        &[b.init_policy(
            &o,
            &[s],
            &asset,
            1,
            env.world.payer_policy(),
            Default::default(),
            0,
        )],
        &[&owner, &second],
    )
    .await
    .unwrap();
    let mut acceptance = env.world.service_acceptance();
    acceptance.min_payer_tier = 1;
    env.send(
        &[b.set_acceptance_policy(&o, &[s], &asset, acceptance.clone())],
        &[&owner, &second],
    )
    .await
    .unwrap();
    let a: AcceptancePolicy = decode_at(&env, &b.pda.acceptance(&asset)).await;
    assert_eq!(a.params, acceptance);

    // The engaged kill switch denies this agent's payments.
    let q = PaymentQuery {
        payer_asset: asset,
        payee_asset: env.world.service.asset(),
        amount: 1,
        mint: env.world.mint(),
        policy_id: 1,
    };
    let d = gate_payment(&env.rpc, b, Caller::Pubkey(o), q)
        .await
        .unwrap();
    assert_eq!(d, Decision::Deny(DenyReason::KillSwitchEngaged));

    // policy_vault's own init_killswitch, for a second agent.
    let (owner2, asset2) = env.new_agent().await;
    let (o2, a2) = (owner2.pubkey(), asset2.pubkey());
    env.send(
        &[
            b.init_authority(&o2, &a2, vec![o2], 1),
            b.init_killswitch_direct(&o2, &a2),
        ],
        &[&owner2],
    )
    .await
    .unwrap();
    let ks2: KillSwitchState = decode_at(&env, &b.pda.killswitch(&a2)).await;
    assert!(!ks2.paused);

    // evaluate is CPI-only: sent directly it is refused, and the error is named.
    let direct = b.evaluate(
        &o2,
        policy_vault::instructions::EvaluateArgs {
            payer_asset: asset,
            payee_asset: env.world.service.asset(),
            amount: 1,
            mint: env.world.mint(),
            policy_id: 1,
        },
        Default::default(),
        false,
    );
    let err = env.send(&[direct], &[&owner2]).await.unwrap_err();
    assert!(err.code().is_some(), "{err}");

    // A second facilitator's GateAuthority.
    let facilitator = env.funded().await;
    env.send(
        &[b.init_gate_authority(&facilitator.pubkey())],
        &[&facilitator],
    )
    .await
    .unwrap();
    let any = chain::account(&env.rpc, &b.pda.gate_authority(&facilitator.pubkey()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        AnyAccount::decode(&any.data).unwrap().type_name(),
        "GateAuthority"
    );

    // register_agent_via_cpi (used by new_agent) created the agent and its engine stats.
    let rep = chain::engine_reputation(&env.rpc, &b.ids, &a2)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((rep.tier_immediate, rep.schema_version), (0, 1));
    let view = chain::agent(&env.rpc, &b.ids, &a2).await.unwrap();
    assert_eq!(view.owner, o2);
    let demo3 = chain::engine_reputation(&env.rpc, &b.ids, &env.world.payer(3).unwrap().asset())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(demo3.tier_immediate, 3);
    let unrated = chain::engine_reputation(&env.rpc, &b.ids, &Pubkey::new_unique())
        .await
        .unwrap();
    assert_eq!(unrated.unwrap_err().code(), "unrated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_validation_registry_builder_lands_and_memcmp_finds_the_attestations() {
    let env = seeded().await;
    let b = &env.b;
    let registrant = env.funded().await;
    let attestor = env.funded().await;
    let name = "sdk.test-capability.v1";
    let cap = capability_hash(name);
    env.send(
        &[b.register_namespace(
            &registrant.pubkey(),
            name,
            "1.0.0",
            "https://schemas.example/x",
        )],
        &[&registrant],
    )
    .await
    .unwrap();
    env.send(
        &[b.register_attestor(&attestor.pubkey(), "https://attestor.example")],
        &[&attestor],
    )
    .await
    .unwrap();
    let (subject, other) = (Pubkey::new_unique(), Pubkey::new_unique());
    let slot = env.rpc.get_slot().await.unwrap();
    env.send(
        &[b.request_validation(&registrant.pubkey(), &subject, &cap, [7; 32], slot + 1_000)],
        &[&registrant],
    )
    .await
    .unwrap();
    for (s, signed) in [(subject, true), (other, false)] {
        let claim = Claim {
            subject: s,
            capability: cap,
            payload_hash: [1; 32],
            uri_hash: [2; 32],
            expires_at_slot: slot + 100_000,
        };
        let mut ixs = vec![];
        if signed {
            ixs.push(ed25519_verify(&attestor, &claim.message()));
        }
        ixs.push(b.respond_to_validation(&attestor.pubkey(), &claim));
        env.send(&ixs, &[&attestor]).await.unwrap();
    }

    let decoded = |key: Pubkey| {
        let rpc = &env.rpc;
        async move {
            let acc = chain::account(rpc, &key).await.unwrap().unwrap();
            AnyAccount::decode(&acc.data).unwrap()
        }
    };
    match decoded(b.pda.namespace(&cap)).await {
        AnyAccount::CapabilityNamespace(n) => assert_eq!((n.name.as_str(), n.hash), (name, cap)),
        other => panic!("{}", other.type_name()),
    }
    match decoded(b.pda.attestor_profile(&attestor.pubkey())).await {
        AnyAccount::AttestorProfile(p) => assert_eq!(p.attestations_issued, 2),
        other => panic!("{}", other.type_name()),
    }
    match decoded(
        b.pda
            .validation_request(&subject, &cap, &registrant.pubkey()),
    )
    .await
    {
        AnyAccount::ValidationRequest(r) => assert_eq!(r.deadline_slot, slot + 1_000),
        other => panic!("{}", other.type_name()),
    }

    // getProgramAccounts with memcmp on subject (and capability) finds exactly the one.
    let found = chain::attestations_about(&env.rpc, &b.ids, &subject, Some(&cap))
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].0,
        b.pda.attestation(&subject, &cap, &attestor.pubkey())
    );
    assert!(found[0].1.signature_verified);
    let found_other = chain::attestations_about(&env.rpc, &b.ids, &other, None)
        .await
        .unwrap();
    assert_eq!(found_other.len(), 1);
    assert!(!found_other[0].1.signature_verified);
    assert!(
        chain::attestations_about(&env.rpc, &b.ids, &Pubkey::new_unique(), None)
            .await
            .unwrap()
            .is_empty()
    );

    env.send(
        &[b.revoke_validation(&attestor.pubkey(), &subject, &cap, [9; 32])],
        &[&attestor],
    )
    .await
    .unwrap();
    let found = chain::attestations_about(&env.rpc, &b.ids, &subject, Some(&cap))
        .await
        .unwrap();
    assert!(found[0].1.revoked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idl_loaders_read_the_chain_first_and_fail_with_the_remediation() {
    let env = seeded().await;
    for p in Program::ALL {
        let (doc, source) = idl::load(&env.rpc, &env.b.ids, p, None, false)
            .await
            .unwrap();
        assert_eq!(source, idl::IdlSource::Chain, "{}", p.name());
        assert_eq!(doc, idl::bundled(p).unwrap());
    }
    let explicit = serde_json::json!({"metadata": {"name": "mine"}});
    let (doc, source) = idl::load(
        &env.rpc,
        &env.b.ids,
        Program::Gate,
        Some(explicit.clone()),
        false,
    )
    .await
    .unwrap();
    assert_eq!((doc, source), (explicit, idl::IdlSource::Explicit));

    // A deployment at another id has no IDL on this chain.
    let mut ids = env.b.ids;
    ids.gate = Pubkey::new_unique();
    let (_, source) = idl::load(&env.rpc, &ids, Program::Gate, None, true)
        .await
        .unwrap();
    assert_eq!(source, idl::IdlSource::Bundled);
    let err = idl::load(&env.rpc, &ids, Program::Gate, None, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("anchor idl init") && err.contains("idl"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_migrations_are_idempotent() {
    let env = seeded().await;
    let lines = std::sync::Mutex::new(Vec::<String>::new());
    let log = |l: &str| lines.lock().unwrap().push(l.to_string());
    let migration = trust_gate_migrations::Migration {
        rpc: &env.rpc,
        builder: env.b,
        funder: env.localnet.faucet(),
        engine_admin: Some(&env.localnet.engine_authority),
        log: &log,
    };
    let report = migration.demo_world(&env.world).await.unwrap();
    assert!(
        report.created.is_empty(),
        "second run created {:?}",
        report.created
    );
    assert!(report.present.len() > 15);
    assert!(lines
        .lock()
        .unwrap()
        .iter()
        .all(|l| l.trim_start().starts_with('=')));
}
