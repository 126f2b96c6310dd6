//! The registry and reputation-engine stand-in (crate `trust-gate-localnet`, module
//! `standin`): every instruction's happy path, every custom error code, and the tier model,
//! through real transactions against the stand-in loaded at the external program ids.

// solana-program-test 3.x marks `ProgramTestContext::payer`/`set_account` as "to be gated
// behind agave-unstable-api in v4"; they are the documented way to drive a test bank.
#![allow(deprecated)]

use std::sync::atomic::{AtomicI64, Ordering};

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::{instruction::Instruction, program_error::ProgramError};
use sha2::{Digest, Sha256};
use solana_program_test::ProgramTestContext;
use solana_sdk::{
    account::AccountSharedData,
    signature::{Keypair, Signer},
};
use trust_gate_localnet::standin::{
    agent_tail, asset as asset_layout, atom_config as atom_config_layout, chains, client,
    collection as collection_layout, discriminators, engine,
    registry_config as registry_config_layout, root_config as root_config_layout, stats_book,
    EngineError, RegistryError,
};
use trust_gate_program_common::external::{
    self, agent_account, agent_account_pda, atom_config_pda,
    atom_stats::{self, Reputation, Stats},
    atom_stats_pda, ids,
    instructions::{AppendResponseArgs, GiveFeedbackArgs},
    registry_config_pda, registry_cpi_authority_pda, root_config_pda,
};
use trust_gate_program_tests::{
    advance_slots, assert_code, funded_keypair, raw_account, send, start,
};

const URI: &str = "https://agents.example/card.json";

fn code(err: RegistryError) -> u32 {
    err as u32
}

fn ecode(err: EngineError) -> u32 {
    err as u32
}

/// A bank with the registry (fresh base collection) and the engine (config authority
/// `admin`) initialized.
struct Env {
    ctx: ProgramTestContext,
    collection: Pubkey,
    admin: Keypair,
}

struct Agent {
    owner: Keypair,
    asset: Pubkey,
}

async fn env() -> Env {
    let mut ctx = start().await;
    let collection = Keypair::new();
    let admin = Keypair::new();
    let payer = ctx.payer.pubkey();
    send(
        &mut ctx,
        &[
            client::initialize_registry(&payer, &collection.pubkey()),
            client::initialize_engine(&payer, &admin.pubkey()),
        ],
        &[&collection],
    )
    .await
    .unwrap();
    Env {
        ctx,
        collection: collection.pubkey(),
        admin,
    }
}

async fn register(env: &mut Env, atom_enabled: bool) -> Agent {
    let owner = funded_keypair(&mut env.ctx).await;
    let asset = Keypair::new();
    let ix = client::register_with_options(
        &owner.pubkey(),
        &asset.pubkey(),
        &env.collection,
        URI,
        atom_enabled,
    );
    send(&mut env.ctx, &[ix], &[&owner, &asset]).await.unwrap();
    Agent {
        owner,
        asset: asset.pubkey(),
    }
}

/// A reputation-enabled agent with its AtomStats initialized.
async fn rated_agent(env: &mut Env) -> Agent {
    let agent = register(env, true).await;
    let ix = client::initialize_stats(&agent.owner.pubkey(), &agent.asset, &env.collection);
    send(&mut env.ctx, &[ix], &[&agent.owner]).await.unwrap();
    agent
}

/// Feedback arguments; `value` differs on every call so that otherwise identical
/// transactions in one slot are not deduplicated by the bank.
fn feedback(score: Option<u8>) -> GiveFeedbackArgs {
    static NEXT: AtomicI64 = AtomicI64::new(1);
    GiveFeedbackArgs {
        value: i128::from(NEXT.fetch_add(1, Ordering::Relaxed)),
        value_decimals: 6,
        score,
        feedback_file_hash: None,
        tag1: "latency".into(),
        tag2: "quality".into(),
        endpoint: "https://agents.example/api".into(),
        feedback_uri: "ipfs://feedback".into(),
    }
}

async fn give(
    env: &mut Env,
    from: &Keypair,
    agent: &Agent,
    args: &GiveFeedbackArgs,
    with_engine: bool,
) -> Result<(), solana_program_test::BanksClientError> {
    let ix = client::give_feedback(
        &from.pubkey(),
        &agent.asset,
        &env.collection,
        args,
        with_engine,
    );
    send(&mut env.ctx, &[ix], &[from]).await
}

async fn reputation(ctx: &mut ProgramTestContext, asset: &Pubkey) -> Reputation {
    match raw_account(ctx, &atom_stats_pda(asset).0).await {
        None => Reputation::Unrated,
        Some(a) => atom_stats::read(&a.owner, a.lamports, &a.data),
    }
}

async fn stats(ctx: &mut ProgramTestContext, asset: &Pubkey) -> Stats {
    match reputation(ctx, asset).await {
        Reputation::Rated(s) => s,
        other => panic!("expected rated stats, got {other:?}"),
    }
}

async fn book(ctx: &mut ProgramTestContext, asset: &Pubkey) -> stats_book::Book {
    let account = raw_account(ctx, &atom_stats_pda(asset).0)
        .await
        .expect("stats exist");
    stats_book::read(&account.data).expect("bookkeeping decodes")
}

async fn agent_data(ctx: &mut ProgramTestContext, asset: &Pubkey) -> Vec<u8> {
    raw_account(ctx, &agent_account_pda(asset).0)
        .await
        .expect("agent account exists")
        .data
}

async fn feedback_count(ctx: &mut ProgramTestContext, asset: &Pubkey) -> u64 {
    agent_tail::feedback_count(&agent_data(ctx, asset).await).expect("feedback count decodes")
}

fn st(tier_immediate: u8, tier_confirmed: u8, risk_score: u8, confidence: u16) -> Stats {
    Stats {
        tier_immediate,
        tier_confirmed,
        risk_score,
        confidence,
    }
}

#[test]
fn discriminators_are_the_anchor_hashes_of_their_names() {
    let d = |s: &str| -> [u8; 8] { Sha256::digest(s.as_bytes())[..8].try_into().unwrap() };
    assert_eq!(discriminators::INITIALIZE, d("global:initialize"));
    assert_eq!(
        discriminators::SET_AGENT_WALLET,
        d("global:set_agent_wallet")
    );
    assert_eq!(
        discriminators::INITIALIZE_CONFIG,
        d("global:initialize_config")
    );
    assert_eq!(discriminators::UPDATE_STATS, d("global:update_stats"));
    assert_eq!(discriminators::SET_STATS, d("global:set_stats"));
    assert_eq!(discriminators::ROOT_CONFIG, d("account:RootConfig"));
    assert_eq!(discriminators::REGISTRY_CONFIG, d("account:RegistryConfig"));
    assert_eq!(discriminators::ATOM_CONFIG, d("account:AtomConfig"));

    // The builders put them (and the external ones) first.
    let k = Pubkey::new_unique();
    let prefix = |ix: Instruction| -> [u8; 8] { ix.data[..8].try_into().unwrap() };
    assert_eq!(
        prefix(client::initialize_registry(&k, &k)),
        d("global:initialize")
    );
    assert_eq!(
        prefix(client::initialize_engine(&k, &k)),
        d("global:initialize_config")
    );
    assert_eq!(
        prefix(client::register_with_options(&k, &k, &k, URI, true)),
        d("global:register_with_options")
    );
    assert_eq!(
        prefix(client::initialize_stats(&k, &k, &k)),
        d("global:initialize_stats")
    );
    assert_eq!(
        prefix(client::set_stats(&k, &k, &st(1, 1, 0, 0))),
        d("global:set_stats")
    );
    assert_eq!(
        prefix(client::give_feedback(&k, &k, &k, &feedback(None), false)),
        d("global:give_feedback")
    );
    assert_eq!(
        prefix(client::update_stats(&k, &k, &k, true, &k, [0; 32], 1)),
        d("global:update_stats")
    );
    // Nine accounts either way: absent engine accounts are the registry's id.
    let absent = client::give_feedback(&k, &k, &k, &feedback(None), false);
    assert_eq!(absent.accounts.len(), 9);
    assert!(absent.accounts[5..]
        .iter()
        .all(|m| m.pubkey == ids::AGENT_REGISTRY && !m.is_writable && !m.is_signer));
    assert_eq!(
        client::give_feedback(&k, &k, &k, &feedback(None), true)
            .accounts
            .len(),
        9
    );
}

#[test]
fn tier_model_rejects_scores_above_100_and_caps_the_client_table() {
    let mut data = vec![0u8; atom_stats::LEN];
    let err = engine::record_feedback(&mut data, &[1; 32], 101, 100).unwrap_err();
    assert_eq!(err, EngineError::InvalidScore);
    assert_eq!(ProgramError::from(err), ProgramError::Custom(6000));

    let mut data = vec![0u8; atom_stats::LEN];
    for i in 0..9u8 {
        engine::record_feedback(&mut data, &[i + 1; 32], 100, 100).unwrap();
    }
    let b = stats_book::read(&data).unwrap();
    assert_eq!(b.feedback_count, 9);
    assert_eq!(b.positive_count, 9);
    assert_eq!(
        b.clients.len(),
        stats_book::MAX_CLIENTS,
        "a 9th distinct client is not tabled"
    );
    assert!(b.clients.iter().all(|c| c.client_hash != [9; 32]));
    // Confidence caps at 10000 after 10 feedbacks. The first feedback's tier (1) became a
    // candidacy in epoch 100, which later, higher tiers do not raise; nothing is confirmed
    // before 8 engine epochs.
    let s = engine::record_feedback(&mut data, &[1; 32], 100, 107).unwrap();
    assert_eq!(s, st(1, 0, 0, 10_000));
    assert_eq!(
        (
            data[atom_stats::TIER_IMMEDIATE],
            data[atom_stats::TIER_CANDIDATE]
        ),
        (0, 1),
        "the trust tier is the confirmed tier; the candidacy waits at 552"
    );
    // 8 epochs on, a feedback confirms the candidacy; the calculated tier (capped at 4)
    // starts the next one; 8 more confirm it.
    let s = engine::record_feedback(&mut data, &[2; 32], 30, 108).unwrap();
    assert_eq!(s, st(4, 1, 10, 10_000));
    assert_eq!(data[atom_stats::TIER_IMMEDIATE], 1);
    let s = engine::record_feedback(&mut data, &[2; 32], 30, 116).unwrap();
    assert_eq!(s, st(4, 4, 20, 10_000));
    assert_eq!(data[atom_stats::TIER_CANDIDATE], 0);
    // A wrong-sized buffer is refused rather than indexed out of bounds.
    assert_eq!(
        engine::record_feedback(&mut [0u8; 10], &[1; 32], 50, 0),
        Err(EngineError::InvalidAccountData)
    );
}

#[tokio::test]
async fn initialize_writes_the_configs_and_refuses_a_second_time() {
    let mut env = env().await;
    let ctx = &mut env.ctx;

    let root = raw_account(ctx, &root_config_pda().0).await.unwrap();
    assert_eq!(root.owner, ids::AGENT_REGISTRY);
    assert_eq!(root.data.len(), root_config_layout::LEN);
    assert_eq!(root.data[..8], discriminators::ROOT_CONFIG);
    assert_eq!(
        root.data[8..40],
        env.collection.to_bytes(),
        "base collection at 8..40"
    );
    assert_eq!(
        root.data[root_config_layout::AUTHORITY..][..32],
        ctx.payer.pubkey().to_bytes()
    );
    assert_eq!(root.data[root_config_layout::BUMP], root_config_pda().1);

    let config = raw_account(ctx, &registry_config_pda(&env.collection).0)
        .await
        .unwrap();
    assert_eq!(config.owner, ids::AGENT_REGISTRY);
    assert_eq!(config.data[..8], discriminators::REGISTRY_CONFIG);
    assert_eq!(
        config.data[registry_config_layout::COLLECTION..][..32],
        env.collection.to_bytes()
    );

    let collection = raw_account(ctx, &env.collection).await.unwrap();
    assert_eq!(collection.owner, ids::AGENT_REGISTRY);
    assert_eq!(collection.data.len(), collection_layout::LEN);
    assert_eq!(collection.data[0], collection_layout::KEY_COLLECTION_V1);

    let atom = raw_account(ctx, &atom_config_pda().0).await.unwrap();
    assert_eq!(atom.owner, ids::REPUTATION_ENGINE);
    assert_eq!(atom.data[..8], discriminators::ATOM_CONFIG);
    assert_eq!(
        atom.data[atom_config_layout::AUTHORITY..][..32],
        env.admin.pubkey().to_bytes()
    );
    assert_eq!(atom.data[atom_config_layout::BUMP], atom_config_pda().1);

    let payer = ctx.payer.pubkey();
    let other = Keypair::new();
    let again = client::initialize_registry(&payer, &other.pubkey());
    assert_code(
        send(ctx, &[again], &[&other]).await,
        code(RegistryError::AlreadyInitialized),
    );
    let again = client::initialize_engine(&payer, &Pubkey::new_unique());
    assert_code(
        send(ctx, &[again], &[]).await,
        ecode(EngineError::AlreadyInitialized),
    );

    // The collection account must be the base collection named in the arguments.
    let other = Keypair::new();
    let mut ix = client::initialize_registry(&payer, &other.pubkey());
    ix.data[8..40].copy_from_slice(&Pubkey::new_unique().to_bytes());
    assert_code(
        send(ctx, &[ix], &[&other]).await,
        code(RegistryError::CollectionMismatch),
    );
}

#[tokio::test]
async fn register_with_options_creates_the_agent_account_and_asset() {
    let mut env = env().await;
    let agent = register(&mut env, true).await;
    let owner = agent.owner.pubkey();
    let ctx = &mut env.ctx;

    let account = raw_account(ctx, &agent_account_pda(&agent.asset).0)
        .await
        .unwrap();
    assert_eq!(account.owner, ids::AGENT_REGISTRY);
    assert_eq!(account.data.len(), agent_account::MAX_LEN);
    let view = agent_account::read(&account.data).expect("an AgentAccount");
    assert_eq!(view.owner, owner);
    assert_eq!(view.asset, agent.asset);
    assert_eq!(view.collection, env.collection);
    assert!(view.reputation_enabled);
    assert_eq!(view.agent_wallet, None);
    assert_eq!(view.recipient(&owner), owner);
    assert_eq!(
        account.data[agent_account::CREATOR..][..32],
        owner.to_bytes()
    );
    assert_eq!(
        account.data[agent_account::BUMP],
        agent_account_pda(&agent.asset).1
    );
    assert_eq!(
        agent_tail::offset(&account.data),
        Some(agent_tail::TAIL_WITHOUT_WALLET)
    );
    assert_eq!(agent_tail::feedback_count(&account.data), Some(0));
    assert_eq!(agent_tail::agent_uri(&account.data).as_deref(), Some(URI));
    // The real registry's tail: empty chains, no parent, the URI, the asset's name and an
    // empty collection pointer.
    assert_eq!(
        agent_tail::read(&account.data),
        Some(agent_tail::Tail::registered(URI))
    );
    let uri_at = agent_tail::TAIL_WITHOUT_WALLET + agent_tail::AGENT_URI;
    assert_eq!(uri_at, 262);
    assert_eq!(
        account.data[uri_at..uri_at + 4],
        (URI.len() as u32).to_le_bytes()
    );
    let name_at = uri_at + 4 + URI.len();
    assert_eq!(account.data[name_at..name_at + 4], 5u32.to_le_bytes());
    assert_eq!(&account.data[name_at + 4..name_at + 9], b"Agent");
    let tail_end = name_at + 4 + agent_tail::NFT_NAME.len() + 4;
    assert!(
        account.data[tail_end..].iter().all(|b| *b == 0),
        "zero padded"
    );

    // The asset is MPL Core's BaseAssetV1, created by the MPL Core stand-in: "Agent", the
    // agent URI, no seq.
    let asset = raw_account(ctx, &agent.asset).await.unwrap();
    assert_eq!(asset.owner, ids::MPL_CORE);
    assert_eq!(
        asset.data.len(),
        asset_layout::HEAD_LEN + 4 + "Agent".len() + 4 + URI.len() + 1
    );
    assert_eq!(asset.data[0], 1, "MPL Core AssetV1 key");
    assert_eq!(
        asset.data[asset_layout::HEAD_LEN..][..9],
        [&5u32.to_le_bytes()[..], b"Agent"].concat()
    );
    assert_eq!(asset.data[1..33], owner.to_bytes());
    assert_eq!(
        asset.data[asset_layout::UPDATE_AUTHORITY_KIND],
        asset_layout::UPDATE_AUTHORITY_COLLECTION
    );
    assert_eq!(
        asset.data[asset_layout::COLLECTION..][..32],
        env.collection.to_bytes()
    );

    let count = |data: &[u8]| {
        u64::from_le_bytes(
            data[collection_layout::AGENT_COUNT..][..8]
                .try_into()
                .unwrap(),
        )
    };
    assert_eq!(
        count(&raw_account(ctx, &env.collection).await.unwrap().data),
        1
    );

    let plain = register(&mut env, false).await;
    let view = agent_account::read(&agent_data(&mut env.ctx, &plain.asset).await).unwrap();
    assert!(!view.reputation_enabled);
    assert_eq!(
        count(
            &raw_account(&mut env.ctx, &env.collection)
                .await
                .unwrap()
                .data
        ),
        2
    );
}

#[tokio::test]
async fn register_with_options_rejects_bad_input() {
    let mut env = env().await;
    let owner = funded_keypair(&mut env.ctx).await;
    let o = owner.pubkey();
    let c = env.collection;
    let ctx = &mut env.ctx;

    let asset = Keypair::new();
    let ix = client::register_with_options(&o, &asset.pubkey(), &c, &"u".repeat(251), true);
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::UriTooLong),
    );

    let ix = client::register_with_options(&o, &asset.pubkey(), &Pubkey::new_unique(), URI, true);
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::CollectionMismatch),
    );

    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.accounts[7].pubkey = Pubkey::new_unique();
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::InvalidAddress),
    );

    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.accounts[2].pubkey = agent_account_pda(&Pubkey::new_unique()).0;
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::InvalidAddress),
    );

    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.accounts.truncate(7);
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::NotEnoughAccounts),
    );

    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.data[0] ^= 0xff;
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::InstructionFallbackNotFound),
    );
    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.data.push(0);
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::InvalidInstructionData),
    );
    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.data.truncate(5);
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::InvalidInstructionData),
    );

    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.accounts[5].is_signer = false;
    assert_code(
        send(ctx, &[ix], &[&asset]).await,
        code(RegistryError::MissingSigner),
    );

    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.accounts[2].is_writable = false;
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::AccountNotWritable),
    );

    // The registry config of another collection.
    let mut ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    ix.accounts[1].pubkey = registry_config_pda(&Pubkey::new_unique()).0;
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::InvalidAddress),
    );

    // Nothing was created by the failures; the asset keypair is still usable once.
    assert!(raw_account(ctx, &agent_account_pda(&asset.pubkey()).0)
        .await
        .is_none());
    let ix = client::register_with_options(&o, &asset.pubkey(), &c, URI, true);
    send(ctx, &[ix], &[&owner, &asset]).await.unwrap();
    let ix = client::register_with_options(&o, &asset.pubkey(), &c, "https://other", true);
    assert_code(
        send(ctx, &[ix], &[&owner, &asset]).await,
        code(RegistryError::AlreadyInitialized),
    );
}

/// `set_agent_wallet(new_wallet, deadline)` as the real registry: signed by the asset's owner,
/// with the new wallet's Ed25519 signature over the wallet-set message right before.
fn wallet_ixs(owner: &Pubkey, asset: &Pubkey, wallet: &Keypair, deadline: i64) -> [Instruction; 2] {
    trust_gate_program_tests::world::sdk().set_agent_wallet(owner, asset, wallet, deadline)
}

#[tokio::test]
async fn set_agent_wallet_rewrites_the_wallet_and_keeps_the_later_fields() {
    let mut env = env().await;
    let agent = register(&mut env, true).await;
    let client_key = Keypair::new();
    give(&mut env, &client_key, &agent, &feedback(Some(80)), false)
        .await
        .unwrap();
    let ctx = &mut env.ctx;
    let owner = agent.owner.pubkey();
    let now = trust_gate_program_tests::clock(ctx).await.unix_timestamp;
    let (wallet, second) = (Keypair::new(), Keypair::new());

    let ixs = wallet_ixs(&owner, &agent.asset, &wallet, now + 60);
    send(ctx, &ixs, &[&agent.owner]).await.unwrap();
    let data = agent_data(ctx, &agent.asset).await;
    let view = agent_account::read(&data).unwrap();
    assert_eq!(view.agent_wallet, Some(wallet.pubkey()));
    assert_eq!(view.recipient(&owner), wallet.pubkey());
    assert_eq!(view.owner, owner);
    assert_eq!(
        agent_tail::offset(&data),
        Some(agent_tail::TAIL_WITH_WALLET)
    );
    assert_eq!(agent_tail::feedback_count(&data), Some(1));
    assert_eq!(agent_tail::agent_uri(&data).as_deref(), Some(URI));

    give(&mut env, &client_key, &agent, &feedback(None), false)
        .await
        .unwrap();
    let ctx = &mut env.ctx;
    let ixs = wallet_ixs(&owner, &agent.asset, &second, now + 300);
    send(ctx, &ixs, &[&agent.owner]).await.unwrap();
    let data = agent_data(ctx, &agent.asset).await;
    assert_eq!(
        agent_account::read(&data).unwrap().agent_wallet,
        Some(second.pubkey())
    );
    assert_eq!(agent_tail::feedback_count(&data), Some(2));
    assert_eq!(agent_tail::agent_uri(&data).as_deref(), Some(URI));

    // Refusals, with the real registry's codes.
    let intruder = Keypair::new();
    let ixs = wallet_ixs(&intruder.pubkey(), &agent.asset, &wallet, now + 60);
    assert_code(
        send(ctx, &ixs, &[&intruder]).await,
        code(RegistryError::NotAgentOwner),
    );
    let mut ixs = wallet_ixs(&owner, &agent.asset, &wallet, now + 60);
    ixs[1].accounts[0].is_signer = false;
    assert_code(
        send(ctx, &ixs, &[]).await,
        code(RegistryError::MissingSigner),
    );
    let ixs = wallet_ixs(&owner, &Pubkey::new_unique(), &wallet, now + 60);
    assert_code(
        send(ctx, &ixs, &[&agent.owner]).await,
        code(RegistryError::InvalidAccountData),
    );
    let ixs = wallet_ixs(&owner, &agent.asset, &wallet, now - 1);
    assert_code(
        send(ctx, &ixs, &[&agent.owner]).await,
        code(RegistryError::DeadlineExpired),
    );
    let ixs = wallet_ixs(&owner, &agent.asset, &wallet, now + 301);
    assert_code(
        send(ctx, &ixs, &[&agent.owner]).await,
        code(RegistryError::DeadlineTooFar),
    );
    let [_, alone] = wallet_ixs(&owner, &agent.asset, &wallet, now + 60);
    assert_code(
        send(ctx, &[alone], &[&agent.owner]).await,
        code(RegistryError::MissingSignatureVerification),
    );
    // The check of another key's signature, or of another message (another deadline).
    let [by_other, _] = wallet_ixs(&owner, &agent.asset, &intruder, now + 60);
    let [_, set] = wallet_ixs(&owner, &agent.asset, &wallet, now + 60);
    assert_code(
        send(ctx, &[by_other, set.clone()], &[&agent.owner]).await,
        code(RegistryError::InvalidSignature),
    );
    let [other_deadline, _] = wallet_ixs(&owner, &agent.asset, &wallet, now + 61);
    assert_code(
        send(ctx, &[other_deadline, set], &[&agent.owner]).await,
        code(RegistryError::InvalidSignature),
    );

    assert_eq!(
        agent_account::read(&agent_data(ctx, &agent.asset).await)
            .unwrap()
            .agent_wallet,
        Some(second.pubkey()),
        "no refused call wrote"
    );
}

#[tokio::test]
async fn give_feedback_counts_and_enforces_the_bounds() {
    let mut env = env().await;
    let agent = register(&mut env, true).await;
    let other = register(&mut env, true).await;
    let c = Keypair::new();

    let mut ok = feedback(Some(100));
    ok.value_decimals = 18;
    ok.tag1 = "t".repeat(32);
    ok.tag2 = "t".repeat(32);
    ok.endpoint = "e".repeat(250);
    ok.feedback_uri = "f".repeat(250);
    ok.feedback_file_hash = Some([7; 32]);
    give(&mut env, &c, &agent, &ok, false).await.unwrap();
    give(&mut env, &c, &agent, &feedback(None), false)
        .await
        .unwrap();
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 2);
    assert_eq!(feedback_count(&mut env.ctx, &other.asset).await, 0);

    fn bad(f: impl FnOnce(&mut GiveFeedbackArgs)) -> GiveFeedbackArgs {
        let mut a = feedback(Some(50));
        f(&mut a);
        a
    }
    for (args, err) in [
        (
            bad(|a| a.value_decimals = 19),
            RegistryError::InvalidValueDecimals,
        ),
        (bad(|a| a.score = Some(101)), RegistryError::InvalidScore),
        (bad(|a| a.tag1 = "t".repeat(33)), RegistryError::TagTooLong),
        (bad(|a| a.tag2 = "t".repeat(33)), RegistryError::TagTooLong),
        (
            bad(|a| a.endpoint = "e".repeat(251)),
            RegistryError::EndpointTooLong,
        ),
        (
            bad(|a| a.feedback_uri = "f".repeat(251)),
            RegistryError::UriTooLong,
        ),
    ] {
        assert_code(give(&mut env, &c, &agent, &args, false).await, code(err));
    }

    let ctx = &mut env.ctx;
    let ix = client::give_feedback(
        &c.pubkey(),
        &agent.asset,
        &Pubkey::new_unique(),
        &feedback(Some(50)),
        false,
    );
    assert_code(
        send(ctx, &[ix], &[&c]).await,
        code(RegistryError::CollectionMismatch),
    );

    let mut ix = client::give_feedback(
        &c.pubkey(),
        &agent.asset,
        &env.collection,
        &feedback(Some(50)),
        false,
    );
    ix.accounts[0].is_signer = false;
    assert_code(
        send(ctx, &[ix], &[]).await,
        code(RegistryError::MissingSigner),
    );

    let mut ix = client::give_feedback(
        &c.pubkey(),
        &agent.asset,
        &env.collection,
        &feedback(Some(50)),
        false,
    );
    ix.accounts[1].is_writable = false;
    assert_code(
        send(ctx, &[ix], &[&c]).await,
        code(RegistryError::AccountNotWritable),
    );

    let mut ix = client::give_feedback(
        &c.pubkey(),
        &agent.asset,
        &env.collection,
        &feedback(Some(50)),
        false,
    );
    ix.accounts[4].pubkey = Pubkey::new_unique();
    assert_code(
        send(ctx, &[ix], &[&c]).await,
        code(RegistryError::InvalidAddress),
    );

    // The agent account of another asset.
    let mut ix = client::give_feedback(
        &c.pubkey(),
        &agent.asset,
        &env.collection,
        &feedback(Some(50)),
        false,
    );
    ix.accounts[1].pubkey = agent_account_pda(&other.asset).0;
    assert_code(
        send(ctx, &[ix], &[&c]).await,
        code(RegistryError::InvalidAddress),
    );

    // An asset nobody registered: its agent PDA holds no AgentAccount.
    let ix = client::give_feedback(
        &c.pubkey(),
        &Pubkey::new_unique(),
        &env.collection,
        &feedback(Some(50)),
        false,
    );
    assert_code(
        send(ctx, &[ix], &[&c]).await,
        code(RegistryError::InvalidAccountData),
    );

    // The four engine accounts come every time, as the real registry (built without Anchor's
    // allow-missing-optionals) demands: any shorter list is Anchor's 3005.
    for (with_engine, keep) in [(true, 5), (true, 6), (true, 7), (true, 8), (false, 5)] {
        let mut ix = client::give_feedback(
            &c.pubkey(),
            &agent.asset,
            &env.collection,
            &feedback(Some(50)),
            with_engine,
        );
        ix.accounts.truncate(keep);
        assert_code(
            send(ctx, &[ix], &[&c]).await,
            code(RegistryError::NotEnoughAccounts),
        );
    }
    let mut ix = client::give_feedback(
        &c.pubkey(),
        &agent.asset,
        &env.collection,
        &feedback(Some(50)),
        false,
    );
    ix.accounts.truncate(4);
    assert_code(
        send(ctx, &[ix], &[&c]).await,
        code(RegistryError::NotEnoughAccounts),
    );

    assert_eq!(
        feedback_count(ctx, &agent.asset).await,
        2,
        "failed feedback is not counted"
    );
}

#[tokio::test]
async fn self_feedback_is_rejected() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let owner = agent.owner.insecure_clone();

    assert_code(
        give(&mut env, &owner, &agent, &feedback(Some(100)), false).await,
        code(RegistryError::SelfFeedbackNotAllowed),
    );
    assert_code(
        give(&mut env, &owner, &agent, &feedback(Some(100)), true).await,
        code(RegistryError::SelfFeedbackNotAllowed),
    );
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 0);
    assert_eq!(stats(&mut env.ctx, &agent.asset).await, st(0, 0, 0, 0));

    // Anyone else may.
    give(
        &mut env,
        &Keypair::new(),
        &agent,
        &feedback(Some(100)),
        true,
    )
    .await
    .unwrap();
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 1);
    assert_eq!(stats(&mut env.ctx, &agent.asset).await.tier_immediate, 1);
}

#[tokio::test]
async fn initialize_stats_writes_a_rated_zero_account() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let ctx = &mut env.ctx;

    assert_eq!(
        reputation(ctx, &agent.asset).await,
        Reputation::Rated(st(0, 0, 0, 0))
    );
    let account = raw_account(ctx, &atom_stats_pda(&agent.asset).0)
        .await
        .unwrap();
    assert_eq!(account.owner, ids::REPUTATION_ENGINE);
    assert_eq!(account.data.len(), atom_stats::LEN);
    assert_eq!(account.data[..8], external::discriminators::ATOM_STATS);
    assert_eq!(
        account.data[atom_stats::COLLECTION..][..32],
        env.collection.to_bytes()
    );
    assert_eq!(
        account.data[atom_stats::ASSET..][..32],
        agent.asset.to_bytes()
    );
    assert_eq!(account.data[atom_stats::SCHEMA_VERSION], 1);
    assert_eq!(
        account.data[stats_book::BUMP],
        atom_stats_pda(&agent.asset).1
    );
    let b = stats_book::read(&account.data).unwrap();
    assert_eq!((b.feedback_count, b.clients.len()), (0, 0));
    assert!(account.data[stats_book::END..atom_stats::RISK_SCORE]
        .iter()
        .all(|x| *x == 0));
}

#[tokio::test]
async fn initialize_stats_rejects_bad_input() {
    let mut env = env().await;
    let agent = register(&mut env, true).await;
    let other = register(&mut env, true).await;
    let o = agent.owner.pubkey();
    let c = env.collection;
    let ctx = &mut env.ctx;

    let intruder = funded_keypair(ctx).await;
    let ix = client::initialize_stats(&intruder.pubkey(), &agent.asset, &c);
    assert_code(
        send(ctx, &[ix], &[&intruder]).await,
        ecode(EngineError::NotAssetOwner),
    );

    let ix = client::initialize_stats(&o, &Pubkey::new_unique(), &c);
    assert_code(
        send(ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::InvalidAsset),
    );
    // An account owned by the registry that is not an asset (the collection) is no asset either.
    let ix = client::initialize_stats(&o, &c, &c);
    assert_code(
        send(ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::InvalidAsset),
    );

    let ix = client::initialize_stats(&o, &agent.asset, &Pubkey::new_unique());
    assert_code(
        send(ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::CollectionMismatch),
    );

    let mut ix = client::initialize_stats(&o, &agent.asset, &c);
    ix.accounts[4].pubkey = atom_stats_pda(&other.asset).0;
    assert_code(
        send(ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::InvalidAddress),
    );

    let mut ix = client::initialize_stats(&o, &agent.asset, &c);
    ix.accounts[0].is_signer = false;
    assert_code(
        send(ctx, &[ix], &[]).await,
        ecode(EngineError::MissingSigner),
    );

    let mut ix = client::initialize_stats(&o, &agent.asset, &c);
    ix.accounts[4].is_writable = false;
    assert_code(
        send(ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::AccountNotWritable),
    );

    let mut ix = client::initialize_stats(&o, &agent.asset, &c);
    ix.data.push(1);
    assert_code(
        send(ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::InvalidInstructionData),
    );

    let mut ix = client::initialize_stats(&o, &agent.asset, &c);
    ix.accounts.truncate(5);
    assert_code(
        send(ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::NotEnoughAccounts),
    );

    assert_eq!(
        reputation(ctx, &agent.asset).await,
        Reputation::Unrated,
        "nothing created so far"
    );
    let ix = client::initialize_stats(&o, &agent.asset, &c);
    send(ctx, std::slice::from_ref(&ix), &[&agent.owner])
        .await
        .unwrap();
    advance_slots(ctx, 1).await; // a fresh blockhash, so the identical transaction is new
    assert_code(
        send(ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::AlreadyInitialized),
    );
}

#[tokio::test]
async fn initialize_stats_needs_the_engine_config() {
    let mut ctx = start().await;
    let collection = Keypair::new();
    let payer = ctx.payer.pubkey();
    send(
        &mut ctx,
        &[client::initialize_registry(&payer, &collection.pubkey())],
        &[&collection],
    )
    .await
    .unwrap();
    let mut env = Env {
        ctx,
        collection: collection.pubkey(),
        admin: Keypair::new(),
    };
    let agent = register(&mut env, true).await;
    let ix = client::initialize_stats(&agent.owner.pubkey(), &agent.asset, &env.collection);
    assert_code(
        send(&mut env.ctx, &[ix], &[&agent.owner]).await,
        ecode(EngineError::InvalidAccountData),
    );

    // With stats absent, feedback through the engine accounts is only counted.
    give(&mut env, &Keypair::new(), &agent, &feedback(Some(90)), true)
        .await
        .unwrap();
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 1);
    assert_eq!(
        reputation(&mut env.ctx, &agent.asset).await,
        Reputation::Unrated
    );
}

#[tokio::test]
async fn feedback_from_distinct_clients_moves_the_tiers() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let [a, b, c, d, e, f] = std::array::from_fn(|_| Keypair::new());

    // The calculated tier climbs 1, 1, 2, 2, 2, 3, 4, 4, 4, 4 (distinct positive clients,
    // capped at 4), but the engine only confirms a tier after 8 engine epochs: the first
    // calculated tier (1) becomes the candidacy, which higher tiers do not raise, so gate mode
    // immediate reads 1 and confirmed 0 all along.
    let steps: [(&Keypair, u8, Stats); 10] = [
        (&a, 80, st(1, 0, 0, 1_000)), // A: first positive: a candidacy for tier 1
        (&a, 90, st(1, 0, 0, 2_000)),
        (&b, 60, st(1, 0, 0, 3_000)),  // B: 60 is positive
        (&c, 39, st(1, 0, 10, 4_000)), // C: negative -> risk
        (&c, 40, st(1, 0, 10, 5_000)), // C: 40 is neutral
        (&d, 100, st(1, 0, 10, 6_000)),
        (&e, 70, st(1, 0, 10, 7_000)),
        (&f, 99, st(1, 0, 10, 8_000)),
        (&b, 61, st(1, 0, 10, 9_000)),
        (&c, 0, st(1, 0, 20, 10_000)),
    ];
    for (i, (client_key, score, expected)) in steps.iter().enumerate() {
        give(&mut env, client_key, &agent, &feedback(Some(*score)), true)
            .await
            .unwrap();
        assert_eq!(
            stats(&mut env.ctx, &agent.asset).await,
            *expected,
            "after step {i}"
        );
    }
    // Confidence saturates.
    give(&mut env, &a, &agent, &feedback(Some(100)), true)
        .await
        .unwrap();
    assert_eq!(
        stats(&mut env.ctx, &agent.asset).await,
        st(1, 0, 20, 10_000)
    );

    let bk = book(&mut env.ctx, &agent.asset).await;
    assert_eq!(bk.feedback_count, 11);
    assert_eq!(bk.positive_count, 8);
    assert_eq!(bk.negative_count, 2);
    assert_eq!(
        bk.score_sum,
        80 + 90 + 60 + 39 + 40 + 100 + 70 + 99 + 61 + 100 // C's last score was 0
    );
    let table: Vec<_> = bk
        .clients
        .iter()
        .map(|e| (e.client_hash, e.feedbacks, e.positives))
        .collect();
    assert_eq!(
        table,
        vec![
            (client::client_hash(&a.pubkey()), 3, 3),
            (client::client_hash(&b.pubkey()), 2, 2),
            (client::client_hash(&c.pubkey()), 3, 0),
            (client::client_hash(&d.pubkey()), 1, 1),
            (client::client_hash(&e.pubkey()), 1, 1),
            (client::client_hash(&f.pubkey()), 1, 1),
        ]
    );
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 11);

    // 8 engine epochs (of 432 000 slots) later, a feedback confirms tier 1, and the
    // calculated tier 4 is the next candidacy; 8 more confirm it.
    for want in [st(4, 1, 20, 10_000), st(4, 4, 20, 10_000)] {
        advance_slots(&mut env.ctx, 8 * 432_000).await;
        give(&mut env, &a, &agent, &feedback(Some(100)), true)
            .await
            .unwrap();
        assert_eq!(stats(&mut env.ctx, &agent.asset).await, want);
    }
}

#[tokio::test]
async fn the_engine_is_updated_only_when_enabled_rated_scored_and_passed() {
    let mut env = env().await;
    let c = Keypair::new();

    // Reputation disabled: stats exist but the registry does not forward.
    let disabled = register(&mut env, false).await;
    let ix = client::initialize_stats(&disabled.owner.pubkey(), &disabled.asset, &env.collection);
    send(&mut env.ctx, &[ix], &[&disabled.owner]).await.unwrap();
    give(&mut env, &c, &disabled, &feedback(Some(90)), true)
        .await
        .unwrap();
    assert_eq!(stats(&mut env.ctx, &disabled.asset).await, st(0, 0, 0, 0));
    assert_eq!(book(&mut env.ctx, &disabled.asset).await.feedback_count, 0);
    assert_eq!(feedback_count(&mut env.ctx, &disabled.asset).await, 1);

    // Enabled and rated, but no score, or no engine accounts.
    let agent = rated_agent(&mut env).await;
    give(&mut env, &c, &agent, &feedback(None), true)
        .await
        .unwrap();
    give(&mut env, &c, &agent, &feedback(Some(90)), false)
        .await
        .unwrap();
    assert_eq!(stats(&mut env.ctx, &agent.asset).await, st(0, 0, 0, 0));
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 2);

    // Everything in place: forwarded.
    give(&mut env, &c, &agent, &feedback(Some(90)), true)
        .await
        .unwrap();
    assert_eq!(stats(&mut env.ctx, &agent.asset).await, st(1, 0, 0, 1_000));
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 3);
}

#[tokio::test]
async fn give_feedback_rejects_wrong_engine_accounts() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let other = rated_agent(&mut env).await;
    let c = Keypair::new();
    let ctx = &mut env.ctx;

    // atom_config, atom_stats, engine program, CPI authority: each replaced in turn.
    let replacements = [
        (5, Pubkey::new_unique()),
        (6, atom_stats_pda(&other.asset).0),
        (7, ids::AGENT_REGISTRY),
        (8, root_config_pda().0),
    ];
    for (index, key) in replacements {
        let mut ix = client::give_feedback(
            &c.pubkey(),
            &agent.asset,
            &env.collection,
            &feedback(Some(90)),
            true,
        );
        ix.accounts[index].pubkey = key;
        assert_code(
            send(ctx, &[ix], &[&c]).await,
            code(RegistryError::InvalidAddress),
        );
    }
    let mut ix = client::give_feedback(
        &c.pubkey(),
        &agent.asset,
        &env.collection,
        &feedback(Some(90)),
        true,
    );
    ix.accounts[6].is_writable = false;
    assert_code(
        send(ctx, &[ix], &[&c]).await,
        code(RegistryError::AccountNotWritable),
    );

    assert_eq!(stats(ctx, &agent.asset).await, st(0, 0, 0, 0));
    assert_eq!(stats(ctx, &other.asset).await, st(0, 0, 0, 0));
}

#[tokio::test]
async fn set_stats_seeds_tiers_that_act_as_a_floor() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let admin = env.admin.insecure_clone();

    let seeded = st(3, 2, 15, 7_500);
    send(
        &mut env.ctx,
        &[client::set_stats(&admin.pubkey(), &agent.asset, &seeded)],
        &[&admin],
    )
    .await
    .unwrap();
    assert_eq!(
        reputation(&mut env.ctx, &agent.asset).await,
        Reputation::Rated(seeded)
    );
    let bk = book(&mut env.ctx, &agent.asset).await;
    assert_eq!(
        (
            bk.floor_tier_immediate,
            bk.floor_tier_confirmed,
            bk.floor_risk,
            bk.floor_confidence
        ),
        (3, 2, 15, 7_500)
    );

    // Feedback does not pull a seeded agent below its seed: max(floor, model).
    let [c1, c2, c3] = std::array::from_fn(|_| Keypair::new());
    give(&mut env, &c1, &agent, &feedback(Some(90)), true)
        .await
        .unwrap();
    assert_eq!(stats(&mut env.ctx, &agent.asset).await, seeded);

    // set_stats writes verbatim, even downwards; the model then takes over above the floor.
    let low = st(1, 0, 0, 0);
    send(
        &mut env.ctx,
        &[client::set_stats(&admin.pubkey(), &agent.asset, &low)],
        &[&admin],
    )
    .await
    .unwrap();
    assert_eq!(stats(&mut env.ctx, &agent.asset).await, low);
    give(&mut env, &c2, &agent, &feedback(Some(90)), true)
        .await
        .unwrap();
    give(&mut env, &c3, &agent, &feedback(Some(90)), true)
        .await
        .unwrap();
    // Three raters give a calculated tier of 3, but the candidacy set_stats began (1) is not
    // raised by a higher tier; 8 engine epochs later a feedback confirms it, and 3 is the
    // next candidacy.
    assert_eq!(stats(&mut env.ctx, &agent.asset).await, st(1, 0, 0, 3_000));
    advance_slots(&mut env.ctx, 8 * 432_000).await;
    give(&mut env, &c3, &agent, &feedback(Some(90)), true)
        .await
        .unwrap();
    assert_eq!(stats(&mut env.ctx, &agent.asset).await, st(3, 1, 0, 4_000));

    let ctx = &mut env.ctx;
    let intruder = Keypair::new();
    let ix = client::set_stats(&intruder.pubkey(), &agent.asset, &st(4, 4, 0, 10_000));
    assert_code(
        send(ctx, &[ix], &[&intruder]).await,
        ecode(EngineError::Unauthorized),
    );

    let mut ix = client::set_stats(&admin.pubkey(), &agent.asset, &st(4, 4, 0, 10_000));
    ix.accounts[0].is_signer = false;
    assert_code(
        send(ctx, &[ix], &[]).await,
        ecode(EngineError::MissingSigner),
    );

    let mut ix = client::set_stats(&admin.pubkey(), &agent.asset, &st(4, 4, 0, 10_000));
    ix.accounts[2].is_writable = false;
    assert_code(
        send(ctx, &[ix], &[&admin]).await,
        ecode(EngineError::AccountNotWritable),
    );

    for (bad, err) in [
        (st(5, 0, 0, 0), EngineError::InvalidTier),
        (st(0, 5, 0, 0), EngineError::InvalidTier),
        (st(4, 4, 0, 10_001), EngineError::InvalidConfidence),
    ] {
        let ix = client::set_stats(&admin.pubkey(), &agent.asset, &bad);
        assert_code(send(ctx, &[ix], &[&admin]).await, ecode(err));
    }

    let mut ix = client::set_stats(&admin.pubkey(), &agent.asset, &st(4, 4, 0, 10_000));
    ix.accounts[1].pubkey = Pubkey::new_unique();
    assert_code(
        send(ctx, &[ix], &[&admin]).await,
        ecode(EngineError::InvalidAddress),
    );

    // A stats account that was never initialized.
    let ix = client::set_stats(&admin.pubkey(), &Pubkey::new_unique(), &st(4, 4, 0, 10_000));
    assert_code(
        send(ctx, &[ix], &[&admin]).await,
        ecode(EngineError::InvalidAccountData),
    );

    let mut ix = client::set_stats(&admin.pubkey(), &agent.asset, &st(4, 4, 0, 10_000));
    ix.accounts.truncate(2);
    assert_code(
        send(ctx, &[ix], &[&admin]).await,
        ecode(EngineError::NotEnoughAccounts),
    );

    let mut ix = client::set_stats(&admin.pubkey(), &agent.asset, &st(4, 4, 0, 10_000));
    ix.data[3] ^= 0xff;
    assert_code(
        send(ctx, &[ix], &[&admin]).await,
        ecode(EngineError::InstructionFallbackNotFound),
    );

    assert_eq!(
        stats(ctx, &agent.asset).await,
        st(3, 1, 0, 4_000),
        "no rejected call wrote"
    );
}

#[tokio::test]
async fn update_stats_only_accepts_the_registry_cpi() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let ctx = &mut env.ctx;

    let impostor = Keypair::new();
    let c = env.collection;
    let ix = client::update_stats(
        &impostor.pubkey(),
        &c,
        &impostor.pubkey(),
        true,
        &agent.asset,
        [1; 32],
        100,
    );
    assert_code(
        send(ctx, &[ix], &[&impostor]).await,
        ecode(EngineError::UnauthorizedCaller),
    );

    // The right key, but only the registry can sign for its PDA.
    let ix = client::update_stats(
        &impostor.pubkey(),
        &c,
        &registry_cpi_authority_pda().0,
        false,
        &agent.asset,
        [1; 32],
        100,
    );
    assert_code(
        send(ctx, &[ix], &[&impostor]).await,
        ecode(EngineError::MissingSigner),
    );

    assert_eq!(stats(ctx, &agent.asset).await, st(0, 0, 0, 0));
}

#[tokio::test]
async fn counter_overflow_is_an_error() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let c = Keypair::new();

    // The registry's per-agent feedback count.
    let address = agent_account_pda(&agent.asset).0;
    let mut account = raw_account(&mut env.ctx, &address).await.unwrap();
    let at = agent_tail::TAIL_WITHOUT_WALLET + agent_tail::FEEDBACK_COUNT;
    account.data[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    env.ctx
        .set_account(&address, &AccountSharedData::from(account.clone()));
    assert_code(
        give(&mut env, &c, &agent, &feedback(None), false).await,
        code(RegistryError::Overflow),
    );
    account.data[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
    env.ctx
        .set_account(&address, &AccountSharedData::from(account));

    // The engine's feedback total, reached through the registry's CPI.
    let address = atom_stats_pda(&agent.asset).0;
    let mut account = raw_account(&mut env.ctx, &address).await.unwrap();
    account.data[stats_book::FEEDBACK_COUNT..][..8].copy_from_slice(&u64::MAX.to_le_bytes());
    env.ctx
        .set_account(&address, &AccountSharedData::from(account));
    assert_code(
        give(&mut env, &c, &agent, &feedback(Some(80)), true).await,
        ecode(EngineError::Overflow),
    );
    assert_eq!(
        feedback_count(&mut env.ctx, &agent.asset).await,
        0,
        "the failed CPI rolled the feedback back"
    );
}

#[tokio::test]
async fn append_response_counts_chains_and_refuses_as_the_real_registry() {
    let mut env = env().await;
    let agent = register(&mut env, false).await;
    let client_key = Keypair::new();
    let responder = Keypair::new();
    let args = |index: u64, uri: &str, hash: u8| AppendResponseArgs {
        client_address: client_key.pubkey(),
        feedback_index: index,
        response_uri: uri.to_string(),
        response_hash: [hash; 32],
        seal_hash: [9; 32],
    };
    let respond = |args: &AppendResponseArgs| {
        client::append_response(&responder.pubkey(), &agent.asset, args)
    };

    // No feedback yet: index 0 does not exist.
    assert_code(
        send(&mut env.ctx, &[respond(&args(0, "", 1))], &[&responder]).await,
        code(RegistryError::InvalidFeedbackIndex),
    );
    let given = feedback(Some(70));
    let slot = trust_gate_program_tests::clock(&mut env.ctx).await.slot;
    give(&mut env, &client_key, &agent, &given, false)
        .await
        .unwrap();
    let feedback_digest = chains::next_feedback_digest(
        &[0; 32],
        &agent.asset,
        &client_key.pubkey(),
        0,
        &given,
        slot,
    );

    let mut digest = [0; 32];
    for (n, uri) in [(1u64, "ipfs://response"), (2, &*"r".repeat(250))] {
        let a = args(0, uri, n as u8);
        let slot = trust_gate_program_tests::clock(&mut env.ctx).await.slot;
        send(&mut env.ctx, &[respond(&a)], &[&responder])
            .await
            .unwrap();
        digest = chains::next_response_digest(&digest, &agent.asset, &responder.pubkey(), &a, slot);
        let data = agent_data(&mut env.ctx, &agent.asset).await;
        let tail = agent_tail::read(&data).unwrap();
        assert_eq!((tail.feedback_count, tail.response_count), (1, n));
        assert_eq!(tail.response_digest, digest);
        assert_eq!(tail.feedback_digest, feedback_digest);
        assert_eq!(agent_account::response_count(&data), Some(n));
        assert_eq!(agent_account::response_digest(&data), Some(digest));
        assert_eq!(tail.agent_uri, URI);
    }

    // Refusals, in the real registry's order.
    let ctx = &mut env.ctx;
    let too_long = "r".repeat(251);
    for (ix, signers, err) in [
        (
            respond(&args(1, "", 3)),
            vec![&responder],
            code(RegistryError::InvalidFeedbackIndex),
        ),
        // The index is checked before the URI.
        (
            respond(&args(1, &too_long, 3)),
            vec![&responder],
            code(RegistryError::InvalidFeedbackIndex),
        ),
        (
            respond(&args(0, &too_long, 3)),
            vec![&responder],
            code(RegistryError::ResponseUriTooLong),
        ),
        (
            {
                let mut ix = respond(&args(0, &too_long, 3));
                ix.accounts[0].is_signer = false;
                ix
            },
            vec![],
            code(RegistryError::MissingSigner),
        ),
        (
            {
                let mut ix = respond(&args(0, "", 3));
                ix.accounts[1].is_writable = false;
                ix
            },
            vec![&responder],
            code(RegistryError::AccountNotWritable),
        ),
        (
            {
                let mut ix = respond(&args(0, "", 3));
                ix.accounts[2].pubkey = Pubkey::new_unique();
                ix
            },
            vec![&responder],
            code(RegistryError::InvalidAddress),
        ),
        (
            client::append_response(&responder.pubkey(), &Pubkey::new_unique(), &args(0, "", 3)),
            vec![&responder],
            code(RegistryError::InvalidAccountData),
        ),
        (
            {
                let mut ix = respond(&args(0, "", 3));
                ix.accounts.truncate(2);
                ix
            },
            vec![&responder],
            code(RegistryError::NotEnoughAccounts),
        ),
    ] {
        assert_code(send(ctx, &[ix], &signers).await, err);
    }
    assert_eq!(
        agent_tail::response_count(&agent_data(ctx, &agent.asset).await),
        Some(2),
        "no refused call wrote"
    );

    // The response count does not wrap.
    let address = agent_account_pda(&agent.asset).0;
    let mut account = raw_account(ctx, &address).await.unwrap();
    let at = agent_account::RESPONSE_COUNT;
    account.data[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    ctx.set_account(&address, &AccountSharedData::from(account));
    assert_code(
        send(ctx, &[respond(&args(0, "", 4))], &[&responder]).await,
        code(RegistryError::Overflow),
    );
}

#[tokio::test]
async fn unknown_instructions_are_rejected() {
    let mut env = env().await;
    let ctx = &mut env.ctx;
    for (program_id, err) in [
        (
            ids::AGENT_REGISTRY,
            code(RegistryError::InstructionFallbackNotFound),
        ),
        (
            ids::REPUTATION_ENGINE,
            ecode(EngineError::InstructionFallbackNotFound),
        ),
    ] {
        let ix = Instruction {
            program_id,
            accounts: vec![],
            data: vec![1, 2, 3, 4, 5, 6, 7, 8],
        };
        assert_code(send(ctx, &[ix], &[]).await, err);
    }
}

#[tokio::test]
async fn failures_log_their_reason() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let owner = agent.owner.insecure_clone();
    let ix = client::give_feedback(
        &owner.pubkey(),
        &agent.asset,
        &env.collection,
        &feedback(Some(90)),
        true,
    );
    let tx = trust_gate_program_tests::transaction(&mut env.ctx, &[ix], &[&owner]).await;
    let sim = env.ctx.banks_client.simulate_transaction(tx).await.unwrap();
    let logs = sim.simulation_details.expect("simulation details").logs;
    assert!(
        logs.iter()
            .any(|l| l.starts_with("Program log: registry stand-in: SelfFeedbackNotAllowed")),
        "{logs:#?}"
    );
    assert!(sim.result.expect("a result").is_err());
}

#[tokio::test]
async fn a_paused_engine_and_stats_of_another_collection_refuse_updates() {
    let mut env = env().await;
    let agent = rated_agent(&mut env).await;
    let c = Keypair::new();
    let admin = env.admin.insecure_clone();
    let pause =
        |on: bool| trust_gate_localnet::externals::admin::set_engine_paused(&admin.pubkey(), on);

    // Paused: the engine's 6004 through the registry, nothing recorded.
    send(&mut env.ctx, &[pause(true)], &[&admin]).await.unwrap();
    let config = raw_account(&mut env.ctx, &atom_config_pda().0)
        .await
        .unwrap();
    assert_eq!(config.data.len(), 151);
    assert_eq!(config.data[atom_config_layout::PAUSED], 1);
    assert_eq!(config.data[atom_config_layout::VERSION], 2);
    assert_code(
        give(&mut env, &c, &agent, &feedback(Some(90)), true).await,
        ecode(EngineError::Paused),
    );
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 0);
    // Feedback without a score never reaches the engine.
    give(&mut env, &c, &agent, &feedback(None), true)
        .await
        .unwrap();
    send(&mut env.ctx, &[pause(false)], &[&admin])
        .await
        .unwrap();
    give(&mut env, &c, &agent, &feedback(Some(90)), true)
        .await
        .unwrap();

    // Only the config's authority pauses, and only pausing is supported.
    let stranger = Keypair::new();
    let ix = trust_gate_localnet::externals::admin::set_engine_paused(&stranger.pubkey(), true);
    assert_code(
        send(&mut env.ctx, &[ix], &[&stranger]).await,
        ecode(EngineError::NotConfigAuthority),
    );
    let mut ix = pause(true);
    ix.data[8] = 1; // Some(alpha_fast) …
    ix.data.insert(9, 0);
    ix.data.insert(9, 30); // … = 30
    assert_code(
        send(&mut env.ctx, &[ix], &[&admin]).await,
        ecode(EngineError::InvalidInstructionData),
    );

    // Stats written for another collection: the engine's 6010.
    let stats_key = atom_stats_pda(&agent.asset).0;
    let mut stats = raw_account(&mut env.ctx, &stats_key).await.unwrap();
    stats.data[atom_stats::COLLECTION..atom_stats::COLLECTION + 32]
        .copy_from_slice(Pubkey::new_unique().as_ref());
    env.ctx
        .set_account(&stats_key, &AccountSharedData::from(stats));
    assert_code(
        give(&mut env, &c, &agent, &feedback(Some(90)), true).await,
        ecode(EngineError::CollectionMismatch),
    );
    assert_eq!(feedback_count(&mut env.ctx, &agent.asset).await, 2);
}
