//! A started localnet with the demo world seeded through the migrations, and helpers that
//! send through the SDK over JSON-RPC.

use anchor_lang::prelude::Pubkey;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{Keypair, Signature, Signer};
use trust_gate_client::settle::{self, Feedback, Settlement, TokenProgram};
use trust_gate_client::{chain, Builder, ClientError, Network, ProgramIds};
use trust_gate_localnet::{Localnet, LocalnetConfig};
use trust_gate_migrations::{demo, DemoWorld};

pub struct Env {
    pub localnet: Localnet,
    pub rpc: RpcClient,
    pub b: Builder,
    pub world: DemoWorld,
    pub collection: Pubkey,
}

/// What seeding `localnet` takes of it (its JSON-RPC, funded key and engine admin).
pub fn seed_keys(localnet: &Localnet) -> trust_gate_migrations::LocalnetKeys<'_> {
    trust_gate_migrations::LocalnetKeys {
        rpc_url: localnet.rpc_url(),
        faucet: localnet.faucet(),
        engine_admin: &localnet.engine_authority,
    }
}

/// A fresh localnet on a free loopback port with the demo world seeded.
pub async fn seeded() -> Env {
    seeded_with(LocalnetConfig::ephemeral()).await
}

/// As [`seeded`], from `config` (the real registry and engine, say).
#[allow(dead_code)] // the services suite's; the localnet and MCP suites include this file too
pub async fn seeded_with(config: LocalnetConfig) -> Env {
    let localnet = Localnet::start(config).await.unwrap();
    let (world, report) = trust_gate_migrations::seed_localnet(&seed_keys(&localnet), &|_| {})
        .await
        .unwrap();
    assert!(!report.created.is_empty());
    let rpc = trust_gate_migrations::rpc(&localnet.rpc_url());
    let b = Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap();
    let collection = chain::base_collection(&rpc, &b.ids).await.unwrap();
    Env {
        localnet,
        rpc,
        b,
        world,
        collection,
    }
}

impl Env {
    /// The demo facilitator and the demo on loopback against this localnet, the demo charging
    /// under the payer policy `policy_id` (the demo mint) and `metered_policy_id` (its
    /// metered and session routes).
    #[allow(dead_code)] // the suites that run the services
    pub async fn services(
        &self,
        policy_id: u32,
        metered_policy_id: u32,
    ) -> (trust_gate_facilitator::Server, trust_gate_demo::Server) {
        self.services_with(self.facilitator_config(), policy_id, metered_policy_id)
            .await
    }

    /// As [`Env::services`], the facilitator configured by `config`.
    #[allow(dead_code)] // the suites that run the services
    pub async fn services_with(
        &self,
        config: trust_gate_facilitator::Config,
        policy_id: u32,
        metered_policy_id: u32,
    ) -> (trust_gate_facilitator::Server, trust_gate_demo::Server) {
        let loopback: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        let facilitator = trust_gate_facilitator::start(config, loopback)
            .await
            .unwrap();
        // The demo signs its own URL into challenges: bind first, then tell it where it is.
        let listener = std::net::TcpListener::bind(loopback).unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let mut config =
            trust_gate_demo::DemoConfig::demo_world(&facilitator.url(), &format!("http://{addr}"));
        config.policy_id = policy_id;
        config.metered_policy_id = metered_policy_id;
        let demo = trust_gate_demo::start(config, addr).await.unwrap();
        (facilitator, demo)
    }

    /// The demo facilitator's configuration as the suites run it: the demo service trusted,
    /// the demo world's mints for the plain channel schemes, no crank in the background.
    #[allow(dead_code)] // the suites that run the services
    pub fn facilitator_config(&self) -> trust_gate_facilitator::Config {
        let w = &self.world;
        let mut c = trust_gate_facilitator::Config::new(trust_gate_facilitator::MountConfig {
            rpc_url: self.localnet.rpc_url(),
            facilitator: trust_gate_facilitator::FacilitatorKey::Keypair(std::sync::Arc::new(
                w.facilitator.insecure_clone(),
            )),
            network: Network::Localnet,
            atomicity_enforced: trust_gate_client::AtomicityEnforced::TRUE,
            default_policy_id: None,
        });
        c.trusted_services = vec![w.service_key.pubkey()];
        // The plain channel schemes take the demo world's mints, as `trust-gate up` sets.
        c.sponsor.plain_assets = trust_gate_facilitator::advances::assets::PlainAssets::List(vec![
            w.mint(),
            w.metered_mint(),
        ]);
        c.reclaim_interval = None;
        c
    }

    /// Pays `{demo_url}/protected` with the paying client (`trust-gate pay`'s code path),
    /// signed by `signer`, as the payer agent `payer_agent` (the demo's default when `None`).
    #[allow(dead_code)] // the suites that run the services
    pub async fn pay_protected(
        &self,
        demo_url: &str,
        payer_agent: Option<Pubkey>,
        signer: &Keypair,
    ) -> trust_gate_pay::exact::PayOutcome {
        let opts = trust_gate_pay::exact::PayOptions {
            request: trust_gate_pay::exact::Request::get(format!("{demo_url}/protected")),
            max_amount: None,
            payer_agent,
            signer,
            overrides: Default::default(),
            compute_budget: Default::default(),
        };
        trust_gate_pay::exact::pay(&reqwest::Client::new(), &self.rpc, &opts)
            .await
            .unwrap()
    }

    /// Sends `ixs` paid by the localnet's faucet and signed by `signers`.
    pub async fn send(
        &self,
        ixs: &[Instruction],
        signers: &[&Keypair],
    ) -> Result<Signature, ClientError> {
        let blockhash = self.rpc.get_latest_blockhash().await?;
        let mut all = vec![self.localnet.faucet()];
        all.extend(signers.iter().copied());
        let tx = settle::transaction(&self.localnet.faucet().pubkey(), ixs, &[], blockhash, &all)?;
        settle::send(&self.rpc, &tx).await
    }

    /// A new key with 10 SOL (requestAirdrop).
    pub async fn funded(&self) -> Keypair {
        let k = Keypair::new();
        self.rpc
            .request_airdrop(&k.pubkey(), 10_000_000_000)
            .await
            .unwrap();
        k
    }

    /// Registers a new agent through the gate; returns (owner, asset).
    pub async fn new_agent(&self) -> (Keypair, Keypair) {
        let owner = self.funded().await;
        let asset = Keypair::new();
        let ix = self.b.register_agent_via_cpi(
            &owner.pubkey(),
            &asset.pubkey(),
            &self.collection,
            "https://agent.example".into(),
        );
        self.send(&[ix], &[&owner, &asset]).await.unwrap();
        (owner, asset)
    }

    /// The demo settlement of `amount` from the payer of `tier` to the demo service.
    pub async fn settlement(&self, tier: u8, amount: u64, payment_id_hash: [u8; 32]) -> Settlement {
        self.settlement_of(self.world.payer(tier).unwrap(), amount, payment_id_hash)
            .await
    }

    /// The demo settlement of `amount` from `payer` (signed by its signer, from its funding)
    /// to the demo service, due five minutes after the cluster's clock now.
    pub async fn settlement_of(
        &self,
        payer: &trust_gate_migrations::demo::DemoAgent,
        amount: u64,
        payment_id_hash: [u8; 32],
    ) -> Settlement {
        let w = &self.world;
        let program = TokenProgram::SplToken;
        Settlement {
            facilitator: w.facilitator.pubkey(),
            payer_signer: payer.signer().pubkey(),
            payer_asset: payer.asset(),
            payee_asset: w.service.asset(),
            policy_id: demo::POLICY_ID,
            deadline: chain::unix_time(&self.rpc).await.unwrap() + 300,
            mint: w.mint(),
            decimals: demo::DECIMALS,
            token_program: program,
            amount,
            source_token: program.associated_account(&payer.signer().pubkey(), &w.mint()),
            destination_token: program.associated_account(&w.service.owner.pubkey(), &w.mint()),
            collection: self.collection,
            attestations: Default::default(),
            feedback: Feedback {
                payment_id_hash,
                score: 90,
                tag1: "x402".into(),
                tag2: String::new(),
                endpoint: "https://demo.example/protected".into(),
                feedback_uri: String::new(),
            },
            compute_budget: Default::default(),
            funding: payer.funding,
            approval: None,
            holdback: None,
        }
    }

    /// Settles the demo settlement of `amount` from the payer of `tier` as payment `pay`
    /// through the SDK (signed by the payer and the demo facilitator); returns it and its
    /// signature.
    pub async fn settle(
        &self,
        tier: u8,
        amount: u64,
        pay: [u8; 32],
    ) -> (Settlement, solana_sdk::signature::Signature) {
        let s = self.settlement(tier, amount, pay).await;
        let signature = trust_gate_client::settle::settle(
            &self.rpc,
            &self.b,
            &s,
            &self.world.payer(tier).unwrap().owner,
            &self.world.facilitator,
            &self.tables().await,
            trust_gate_client::AtomicityEnforced::TRUE,
        )
        .await
        .unwrap();
        (s, signature)
    }

    /// Settles a payment of the demo price from the holdback payer to the demo's low-tier
    /// payee under its holdback policy, as payment `pay`, with the terms the gate quotes for
    /// it (docs/holdback.md); returns the settlement.
    #[allow(dead_code)] // the suites that move held shares
    pub async fn settle_held(&self, pay: [u8; 32]) -> Settlement {
        let w = &self.world;
        let payer = w.holdback_payer();
        let program = TokenProgram::SplToken;
        let mut s = self.settlement_of(payer, demo::PRICE, pay).await;
        s.payee_asset = w.held_service.asset();
        s.destination_token = program.associated_account(&w.held_service.owner.pubkey(), &w.mint());
        s.policy_id = demo::HOLDBACK_POLICY_ID;
        let q = trust_gate_client::simulate::PaymentQuery {
            payer_asset: s.payer_asset,
            payee_asset: s.payee_asset,
            amount: s.amount,
            mint: s.mint,
            policy_id: s.policy_id,
        };
        let caller = trust_gate_client::simulate::Caller::Pubkey(payer.owner.pubkey());
        let decided = trust_gate_client::simulate::decide(&self.rpc, &self.b, caller, q)
            .await
            .unwrap();
        let escrow = self.b.pda.holdback_escrow(&s.payee_asset, &s.mint);
        s.holdback = decided
            .holdback
            .map(|h| trust_gate_client::holdback::HoldbackQuote::of(&h, escrow));
        assert!(s.holdback.is_some_and(|h| h.held != 0), "{decided:?}");
        trust_gate_client::settle::settle(
            &self.rpc,
            &self.b,
            &s,
            &payer.owner,
            &w.facilitator,
            &self.tables().await,
            trust_gate_client::AtomicityEnforced::TRUE,
        )
        .await
        .unwrap();
        s
    }

    /// The demo facilitator's address lookup tables.
    pub async fn tables(&self) -> Vec<solana_sdk::message::AddressLookupTableAccount> {
        let t = chain::lookup_tables(&self.rpc, &self.world.facilitator.pubkey())
            .await
            .unwrap();
        assert!(
            !t.is_empty(),
            "the migrations create the facilitator's lookup table"
        );
        t
    }

    pub async fn token_balance(&self, account: &Pubkey) -> u64 {
        let acc = chain::account(&self.rpc, account).await.unwrap().unwrap();
        trust_gate_migrations::steps::token_amount(&acc.data)
            .unwrap_or_else(|| panic!("{account}: {} bytes owned by {}", acc.data.len(), acc.owner))
    }
}

/// A payment id hash unique to this call.
pub fn payment_id() -> [u8; 32] {
    Pubkey::new_unique().to_bytes()
}
