//! A test world: the registry/engine stand-in initialized, a facilitator with its
//! GateAuthority, a 6-decimal SPL mint, and helpers to register agents, give them tiers,
//! policies and token accounts, and to build gate instructions and settlement bundles.

use crate::registry;
use crate::{send, send_tx, transaction};
use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::system_instruction;
use anchor_spl::associated_token::{
    get_associated_token_address_with_program_id,
    spl_associated_token_account::instruction::create_associated_token_account_idempotent,
};
use anchor_spl::token::spl_token;
use gate::settlement::TOKEN_PROGRAM_ID;
use policy_vault::engine::Decision;
use policy_vault::state::{
    AcceptanceParams, HoldbackAcceptance, HoldbackSchedule, PolicyParams, PolicyRules,
};
use solana_program_test::{BanksClientError, ProgramTestContext};
use solana_sdk::{
    instruction::Instruction,
    program_pack::Pack,
    signature::{Keypair, Signer},
};
use trust_gate_client::instructions::{Builder, FeedbackArgs, VaultRelease};
use trust_gate_localnet::externals::{admin, ExternalPrograms};
use trust_gate_localnet::native::Programs;
use trust_gate_localnet::standin::client as standin;
use trust_gate_program_common::external::atom_stats::Stats;

pub const DECIMALS: u8 = 6;

/// The SDK's instruction builder, at the ids the programs were built with.
pub fn sdk() -> Builder {
    crate::registry::builder()
}

/// An agent registered in the (stand-in) registry: its owner wallet and asset.
pub struct Agent {
    pub owner: Keypair,
    pub asset: Keypair,
}

impl Agent {
    pub fn asset(&self) -> Pubkey {
        self.asset.pubkey()
    }
}

pub struct World {
    pub ctx: ProgramTestContext,
    /// The real registry and engine rather than the stand-in ([`World::on_real`]).
    real: bool,
    pub collection: Keypair,
    pub engine_authority: Keypair,
    pub facilitator: Keypair,
    pub mint: Pubkey,
    pub mint_authority: Keypair,
    /// The bank's unix time as last read: the strict gates the world builds take a deadline
    /// [`DEADLINE_AHEAD_SECS`] after it. Moving the clock through the world's own
    /// `advance_time`, `set_time` and `advance_slots` keeps it current.
    pub now: i64,
}

/// How far after [`World::now`] the world's payments are due: well within the gate's
/// maximum, with room for the clock to move without the world knowing.
pub const DEADLINE_AHEAD_SECS: i64 = 600;

/// The PDAs the tests name, from the SDK's derivers.
pub mod pda {
    use super::*;
    use trust_gate_client::pda::Pdas;

    fn pdas() -> Pdas {
        sdk().pda
    }
    pub fn policy_authority(asset: &Pubkey) -> Pubkey {
        pdas().policy_authority(asset)
    }
    pub fn policy(asset: &Pubkey, id: u32) -> Pubkey {
        pdas().policy(asset, id)
    }
    pub fn velocity(asset: &Pubkey, id: u32) -> Pubkey {
        pdas().velocity(asset, id)
    }
    pub fn killswitch(asset: &Pubkey) -> Pubkey {
        pdas().killswitch(asset)
    }
    pub fn acceptance(asset: &Pubkey) -> Pubkey {
        pdas().acceptance(asset)
    }
    pub fn evaluate_signer() -> Pubkey {
        pdas().evaluate_signer()
    }
    pub fn gate_authority(facilitator: &Pubkey) -> Pubkey {
        pdas().gate_authority(facilitator)
    }
    pub fn feedback_log(facilitator: &Pubkey, payment: &[u8; 32]) -> Pubkey {
        pdas().feedback_log(facilitator, payment)
    }
    pub fn dispute(facilitator: &Pubkey, payment: &[u8; 32]) -> Pubkey {
        pdas().dispute(facilitator, payment)
    }
    pub fn attestation(subject: &Pubkey, capability: &[u8; 32], attestor: &Pubkey) -> Pubkey {
        pdas().attestation(subject, capability, attestor)
    }
    pub fn stats(asset: &Pubkey) -> Pubkey {
        pdas().atom_stats(asset)
    }
    pub fn agent(asset: &Pubkey) -> Pubkey {
        pdas().agent_account(asset)
    }
}

/// A policy with every rule off, for tests to switch on what they exercise.
pub fn open_policy(mint: Pubkey) -> PolicyParams {
    PolicyParams {
        kinds: 0,
        gate_mode: 0,
        mint,
        per_tx_cap: 0,
        daily_cap: 0,
        weekly_cap: 0,
        velocity_window_secs: 0,
        velocity_max_in_window: 0,
        tier0_decay_bps: 10_000,
        min_counterparty_tier: 0,
        max_counterparty_risk: 255,
        min_counterparty_confidence: 0,
        unrated_treatment: 1,
        required_capability: [0; 32],
        accepted_attestors: [Pubkey::default(); 2],
        funding: policy_vault::state::funding::WALLET,
    }
}

/// The demo payer policy: spending caps, velocity and the kill switch.
pub fn demo_policy(mint: Pubkey) -> PolicyParams {
    trust_gate_migrations::demo::payer_policy(mint)
}

/// An acceptance policy that asks payers for `min_tier` (the demo service's, otherwise).
pub fn min_tier_acceptance(min_tier: u8) -> AcceptanceParams {
    AcceptanceParams {
        min_payer_tier: min_tier,
        ..trust_gate_migrations::demo::service_acceptance()
    }
}

pub fn tier(t: u8) -> Stats {
    Stats {
        tier_immediate: t,
        tier_confirmed: t,
        risk_score: 0,
        confidence: 5_000,
    }
}

pub use trust_gate_client::instructions::Attestations;

impl World {
    pub async fn new() -> World {
        World::from_context(crate::start().await, None).await
    }

    /// A world on a bank started from `pt` (for tests that add programs of their own).
    pub async fn with_program_test(pt: solana_program_test::ProgramTest) -> World {
        World::from_context(pt.start_with_context().await, None).await
    }

    /// A world on the REAL registry, engine and MPL Core (`externals`) instead of the
    /// stand-in, each initialized by its own instructions; `engine_authority` is their upgrade
    /// authority, so also AtomConfig's authority (it can pause the engine).
    pub async fn on_real(externals: &ExternalPrograms) -> World {
        let authority = Keypair::new();
        let pt = trust_gate_localnet::native::program_test_on(
            &Programs::from_env(),
            Some((externals, &authority.pubkey())),
        );
        World::from_context(pt.start_with_context().await, Some(authority)).await
    }

    /// Whether the world runs the real registry and engine.
    pub fn is_real(&self) -> bool {
        self.real
    }

    /// `real_authority`: the real programs' upgrade authority, or `None` for the stand-in.
    async fn from_context(mut ctx: ProgramTestContext, real_authority: Option<Keypair>) -> World {
        let collection = Keypair::new();
        let real = real_authority.is_some();
        let engine_authority = real_authority.unwrap_or_else(Keypair::new);
        let facilitator = Keypair::new();
        let mint_authority = Keypair::new();
        let mint = Keypair::new();
        let payer = ctx.payer.pubkey();
        crate::fund(&mut ctx, &facilitator.pubkey(), 10_000_000_000).await;

        let rent = ctx.banks_client.get_rent().await.unwrap();
        let mint_ixs = [
            system_instruction::create_account(
                &payer,
                &mint.pubkey(),
                rent.minimum_balance(spl_token::state::Mint::LEN),
                spl_token::state::Mint::LEN as u64,
                &TOKEN_PROGRAM_ID,
            ),
            spl_token::instruction::initialize_mint2(
                &TOKEN_PROGRAM_ID,
                &mint.pubkey(),
                &mint_authority.pubkey(),
                None,
                DECIMALS,
            )
            .unwrap(),
        ];
        send(&mut ctx, &mint_ixs, &[&mint]).await.unwrap();
        if real {
            let a = engine_authority.pubkey();
            crate::fund(&mut ctx, &a, 10_000_000_000).await;
            let init = [
                admin::initialize_registry(&a, &collection.pubkey()),
                admin::initialize_engine(&a),
            ];
            send(&mut ctx, &init, &[&engine_authority, &collection])
                .await
                .unwrap();
        } else {
            send(
                &mut ctx,
                &[
                    standin::initialize_registry(&payer, &collection.pubkey()),
                    standin::initialize_engine(&payer, &engine_authority.pubkey()),
                ],
                &[&collection],
            )
            .await
            .unwrap();
        }
        let f = facilitator.pubkey();
        let init = sdk().init_gate_authority(&f);
        send(&mut ctx, &[init], &[&facilitator]).await.unwrap();
        let now = crate::clock(&mut ctx).await.unix_timestamp;
        World {
            ctx,
            real,
            collection,
            engine_authority,
            facilitator,
            mint: mint.pubkey(),
            mint_authority,
            now,
        }
    }

    /// The deadline of the world's payments (see [`World::now`]).
    pub fn deadline(&self) -> i64 {
        self.now + DEADLINE_AHEAD_SECS
    }

    /// Moves the bank's unix time forward by `seconds` (see [`crate::advance_time`]).
    pub async fn advance_time(&mut self, seconds: i64) {
        crate::advance_time(&mut self.ctx, seconds).await;
        self.now = crate::clock(&mut self.ctx).await.unix_timestamp;
    }

    /// Sets the bank's unix time (see [`crate::set_time`]).
    pub async fn set_time(&mut self, unix_timestamp: i64) {
        crate::set_time(&mut self.ctx, unix_timestamp).await;
        self.now = unix_timestamp;
    }

    /// Moves the bank forward by `slots` slots (see [`crate::advance_slots`]).
    pub async fn advance_slots(&mut self, slots: u64) {
        crate::advance_slots(&mut self.ctx, slots).await;
        self.now = crate::clock(&mut self.ctx).await.unix_timestamp;
    }

    /// Sends one transaction paid by the context's payer (see [`crate::send`]).
    pub async fn send(
        &mut self,
        ixs: &[Instruction],
        signers: &[&Keypair],
    ) -> Result<(), BanksClientError> {
        send(&mut self.ctx, ixs, signers).await
    }

    /// Registers an agent (reputation-enabled, stats initialized at tier 0).
    pub async fn register_agent(&mut self) -> Agent {
        self.register_agent_with(true, true).await
    }

    /// Sets `wallet` as `agent`'s agent wallet through the registry's own flow (the wallet's
    /// Ed25519 signature, a deadline a minute ahead), signed by the agent's owner.
    pub async fn set_agent_wallet(&mut self, agent: &Agent, wallet: &Keypair) {
        let deadline = crate::clock(&mut self.ctx).await.unix_timestamp + 60;
        let ixs = sdk().set_agent_wallet(&agent.owner.pubkey(), &agent.asset(), wallet, deadline);
        send(&mut self.ctx, &ixs, &[&agent.owner]).await.unwrap();
    }

    /// Writes `agent`'s engine stats (the stand-in's localnet-only `set_stats`; the real
    /// engine has no such instruction, its stats move only with real feedback).
    pub async fn set_stats(&mut self, agent: &Pubkey, stats: Stats) {
        assert!(
            !self.real,
            "the real engine has no set_stats: give real feedback instead"
        );
        let ix = standin::set_stats(&self.engine_authority.pubkey(), agent, &stats);
        let authority = self.engine_authority.insecure_clone();
        send(&mut self.ctx, &[ix], &[&authority]).await.unwrap();
    }

    /// A payer (tier 3, demo policy 1, 100 tokens) and a payee (tier 3, with a token
    /// account): the parties of most settlement tests.
    pub async fn parties(&mut self) -> (Agent, Agent) {
        let payer = self.payer_with_policy(3, demo_policy(self.mint)).await;
        let payee = self.payee(3, None).await;
        self.token_account(&payer.owner.pubkey(), 100_000_000).await;
        self.token_account(&payee.owner.pubkey(), 0).await;
        (payer, payee)
    }

    /// Policy 1's day and week spending and its velocity ledger's cumulative amount.
    pub async fn counters(&mut self, payer: &Agent) -> (u64, u64, u64) {
        let p: policy_vault::state::PolicyAccount =
            crate::fetch(&mut self.ctx, &pda::policy(&payer.asset(), 1))
                .await
                .unwrap();
        let v: policy_vault::state::VelocityLedger =
            crate::fetch(&mut self.ctx, &pda::velocity(&payer.asset(), 1))
                .await
                .unwrap();
        (p.day_spent, p.week_spent, v.cumulative)
    }

    /// An agent with tier `t`, an authority (owner, threshold 1), and policy 1 = `policy`.
    pub async fn payer_with_policy(&mut self, t: u8, policy: PolicyParams) -> Agent {
        let agent = self.register_agent().await;
        self.set_stats(&agent.asset(), tier(t)).await;
        self.init_authority(&agent).await;
        self.init_policy(&agent, 1, policy).await.unwrap();
        agent
    }

    /// An agent with tier `t`, an authority (owner, threshold 1), and policy 1 =
    /// `policy` with limit `rules` (whose `payee_list`, when set, is replaced by the policy's PDA).
    pub async fn payer_with_limits(
        &mut self,
        t: u8,
        policy: PolicyParams,
        rules: PolicyRules,
    ) -> Agent {
        self.payer_with_limits_approved(t, policy, rules, 0).await
    }

    /// [`World::payer_with_limits`] with an approval threshold.
    pub async fn payer_with_limits_approved(
        &mut self,
        t: u8,
        policy: PolicyParams,
        rules: PolicyRules,
        approval_threshold: u64,
    ) -> Agent {
        let agent = self.register_agent().await;
        self.set_stats(&agent.asset(), tier(t)).await;
        self.init_authority(&agent).await;
        self.init_policy_with_limits_approved(&agent, 1, policy, rules, approval_threshold)
            .await
            .unwrap();
        agent
    }

    /// An address lookup table of `addresses`, created and extended by `authority`, and moved
    /// past the slot of its extension so that transactions may load from it.
    pub async fn lookup_table(
        &mut self,
        authority: &Keypair,
        addresses: Vec<Pubkey>,
    ) -> solana_sdk::message::AddressLookupTableAccount {
        use solana_address_lookup_table_interface::instruction::{
            create_lookup_table, extend_lookup_table,
        };
        self.advance_slots(2).await;
        let recent = crate::clock(&mut self.ctx).await.slot - 1;
        let (create, key) = create_lookup_table(authority.pubkey(), authority.pubkey(), recent);
        let extend = extend_lookup_table(
            key,
            authority.pubkey(),
            Some(authority.pubkey()),
            addresses.clone(),
        );
        send(&mut self.ctx, &[create, extend], &[authority])
            .await
            .unwrap();
        // A table is usable from the slot after its last extension.
        self.advance_slots(2).await;
        solana_sdk::message::AddressLookupTableAccount { key, addresses }
    }

    /// `ixs` paid by `payer` and signed by it and `signers`: the serialized size of the
    /// legacy transaction, and the v0 transaction loading from `table`.
    pub async fn v0_transaction(
        &mut self,
        ixs: &[Instruction],
        payer: &Keypair,
        signers: &[&Keypair],
        table: solana_sdk::message::AddressLookupTableAccount,
    ) -> (usize, solana_sdk::transaction::VersionedTransaction) {
        use solana_sdk::message::{v0, VersionedMessage};
        let legacy =
            solana_sdk::transaction::Transaction::new_with_payer(ixs, Some(&payer.pubkey()));
        let legacy_size = bincode::serialize(&legacy).unwrap().len();
        let blockhash = self.ctx.banks_client.get_latest_blockhash().await.unwrap();
        let message = v0::Message::try_compile(&payer.pubkey(), ixs, &[table], blockhash).unwrap();
        let mut all = vec![payer];
        all.extend_from_slice(signers);
        let tx = solana_sdk::transaction::VersionedTransaction::try_new(
            VersionedMessage::V0(message),
            &all,
        )
        .unwrap();
        (legacy_size, tx)
    }

    /// `init_policy` with limit `rules` by the agent's owner (threshold 1); a set `rules.payee_list` is
    /// replaced by the policy's PayeeList PDA.
    pub async fn init_policy_with_limits(
        &mut self,
        agent: &Agent,
        policy_id: u32,
        params: PolicyParams,
        rules: PolicyRules,
    ) -> Result<(), BanksClientError> {
        self.init_policy_with_limits_approved(agent, policy_id, params, rules, 0)
            .await
    }

    /// [`World::init_policy_with_limits`] with an approval threshold.
    pub async fn init_policy_with_limits_approved(
        &mut self,
        agent: &Agent,
        policy_id: u32,
        params: PolicyParams,
        rules: PolicyRules,
        approval_threshold: u64,
    ) -> Result<(), BanksClientError> {
        self.init_policy_of(agent, policy_id, params, rules, approval_threshold, None)
            .await
    }

    /// Creates the agent's policy `policy_id`: `params`, limit `rules` (the list account
    /// named when they have one), `approval_threshold` and a `holdback` schedule.
    pub async fn init_policy_of(
        &mut self,
        agent: &Agent,
        policy_id: u32,
        params: PolicyParams,
        rules: PolicyRules,
        approval_threshold: u64,
        holdback: Option<HoldbackSchedule>,
    ) -> Result<(), BanksClientError> {
        let b = sdk();
        let rules = if rules.has_list_account() {
            b.payee_list_rules(&agent.asset(), policy_id, rules)
        } else {
            rules
        };
        let ix = b.init_policy_with_holdback(
            &agent.owner.pubkey(),
            &[],
            &agent.asset(),
            policy_id,
            params,
            rules,
            approval_threshold,
            holdback,
        );
        send(&mut self.ctx, &[ix], &[&agent.owner]).await
    }

    /// `edit_payee_list` of the agent's policy `policy_id` by its owner (threshold 1), in
    /// transactions of at most 24 keys.
    pub async fn edit_payee_list(
        &mut self,
        agent: &Agent,
        policy_id: u32,
        add: &[Pubkey],
        remove: &[Pubkey],
    ) -> Result<(), BanksClientError> {
        let b = sdk();
        let (mut add, mut remove) = (add, remove);
        while !add.is_empty() || !remove.is_empty() {
            let (a, r) = (add.len().min(24), remove.len().min(24 - add.len().min(24)));
            let ix = b.edit_payee_list(
                &agent.owner.pubkey(),
                &[],
                &agent.asset(),
                policy_id,
                add[..a].to_vec(),
                remove[..r].to_vec(),
            );
            send(&mut self.ctx, &[ix], &[&agent.owner]).await?;
            add = &add[a..];
            remove = &remove[r..];
        }
        Ok(())
    }

    pub fn init_authority_ix(
        &self,
        signer: &Pubkey,
        asset: &Pubkey,
        members: Vec<Pubkey>,
        threshold: u8,
    ) -> Instruction {
        sdk().init_authority(signer, asset, members, threshold)
    }

    pub async fn init_authority(&mut self, agent: &Agent) {
        let ix = self.init_authority_ix(
            &agent.owner.pubkey(),
            &agent.asset(),
            vec![agent.owner.pubkey()],
            1,
        );
        send(&mut self.ctx, &[ix], &[&agent.owner]).await.unwrap();
    }

    pub fn init_policy_ix(
        &self,
        member: &Pubkey,
        asset: &Pubkey,
        policy_id: u32,
        params: PolicyParams,
    ) -> Instruction {
        sdk().init_policy(member, &[], asset, policy_id, params, Default::default(), 0)
    }

    pub async fn init_policy(
        &mut self,
        agent: &Agent,
        policy_id: u32,
        params: PolicyParams,
    ) -> Result<(), BanksClientError> {
        let ix = self.init_policy_ix(&agent.owner.pubkey(), &agent.asset(), policy_id, params);
        send(&mut self.ctx, &[ix], &[&agent.owner]).await
    }

    /// `set_acceptance_policy` led by `lead`, with `others` as extra member signers.
    pub fn set_acceptance_ix(
        &self,
        lead: &Pubkey,
        others: &[Pubkey],
        asset: &Pubkey,
        params: AcceptanceParams,
    ) -> Instruction {
        sdk().set_acceptance_policy(lead, others, asset, params)
    }

    /// A payee agent with tier `t`, an authority and (optionally) an acceptance policy.
    pub async fn payee(&mut self, t: u8, acceptance: Option<AcceptanceParams>) -> Agent {
        let agent = self.register_agent().await;
        self.set_stats(&agent.asset(), tier(t)).await;
        self.init_authority(&agent).await;
        if let Some(params) = acceptance {
            let ix = self.set_acceptance_ix(&agent.owner.pubkey(), &[], &agent.asset(), params);
            send(&mut self.ctx, &[ix], &[&agent.owner]).await.unwrap();
        }
        agent
    }

    /// The associated token account of `owner` for the world's mint (created if missing),
    /// funded with `amount` when non-zero.
    pub async fn token_account(&mut self, owner: &Pubkey, amount: u64) -> Pubkey {
        let mint = self.mint;
        self.associated_account(&TOKEN_PROGRAM_ID, &mint, owner, amount)
            .await
    }

    /// `owner`'s associated account of `mint` under token `program` (created if missing),
    /// with `amount` minted to it by the world's mint authority when non-zero.
    pub async fn associated_account(
        &mut self,
        program: &Pubkey,
        mint: &Pubkey,
        owner: &Pubkey,
        amount: u64,
    ) -> Pubkey {
        let ata = get_associated_token_address_with_program_id(owner, mint, program);
        // Only when missing: sending the idempotent creation again could be the very same
        // transaction (same blockhash), which the bank refuses as AlreadyProcessed.
        let exists = self.ctx.banks_client.get_account(ata).await.unwrap();
        if exists.is_none() {
            let payer = self.ctx.payer.pubkey();
            let create = create_associated_token_account_idempotent(&payer, owner, mint, program);
            send(&mut self.ctx, &[create], &[]).await.unwrap();
        }
        if amount > 0 {
            self.deposit(program, mint, &ata, amount).await;
        }
        ata
    }

    /// Mints `amount` of `mint` (token `program`) into `account` with the world's mint
    /// authority: a deposit, as far as the account can tell.
    pub async fn deposit(
        &mut self,
        program: &Pubkey,
        mint: &Pubkey,
        account: &Pubkey,
        amount: u64,
    ) {
        // Token-2022's builder serves both programs.
        let ix = anchor_spl::token_2022::spl_token_2022::instruction::mint_to(
            program,
            mint,
            account,
            &self.mint_authority.pubkey(),
            &[],
            amount,
        )
        .unwrap();
        let auth = self.mint_authority.insecure_clone();
        send(&mut self.ctx, &[ix], &[&auth]).await.unwrap();
    }

    pub async fn token_balance(&mut self, account: &Pubkey) -> u64 {
        let acc = crate::raw_account(&mut self.ctx, account).await.unwrap();
        spl_token::state::Account::unpack(&acc.data[..spl_token::state::Account::LEN])
            .unwrap()
            .amount
    }

    pub fn gate_payment_ix(
        &self,
        payer: &Pubkey,
        payee: &Pubkey,
        amount: u64,
        mint: Pubkey,
        policy_id: u32,
        att: Attestations,
    ) -> Instruction {
        sdk().gate_payment(payer, payee, amount, &mint, policy_id, att)
    }

    /// Simulates gate_payment and decodes the decision from the return data.
    pub async fn decide(
        &mut self,
        payer: &Agent,
        payee: &Agent,
        amount: u64,
        att: Attestations,
    ) -> Decision {
        let ix = self.gate_payment_ix(&payer.asset(), &payee.asset(), amount, self.mint, 1, att);
        self.simulate_decision(ix).await
    }

    pub async fn simulate_decision(&mut self, ix: Instruction) -> Decision {
        let wire = self.simulate_wire(ix).await;
        Decision::from_wire(&wire).expect("a decision")
    }

    /// Simulates a gate decision instruction and returns its return data: the decision's
    /// wire form (an Allow's holdback in it, see `Holdback::from_wire`).
    pub async fn simulate_wire(&mut self, ix: Instruction) -> Vec<u8> {
        let tx = transaction(&mut self.ctx, &[ix], &[]).await;
        let sim = self
            .ctx
            .banks_client
            .simulate_transaction(tx)
            .await
            .unwrap();
        let details = sim.simulation_details.expect("simulation details");
        if let Some(Err(e)) = sim.result {
            panic!("simulation failed: {e:?}\n{:#?}", details.logs);
        }
        let rd = details.return_data.expect("gate_payment sets return data");
        assert_eq!(rd.program_id, gate::ID);
        rd.data
    }

    pub fn strict_ix(
        &self,
        payer: &Agent,
        payee: &Agent,
        amount: u64,
        destination: Pubkey,
        att: Attestations,
    ) -> Instruction {
        self.strict_ix_for_mint(self.mint, payer, payee, amount, destination, att)
    }

    pub fn strict_ix_for_mint(
        &self,
        mint: Pubkey,
        payer: &Agent,
        payee: &Agent,
        amount: u64,
        destination: Pubkey,
        att: Attestations,
    ) -> Instruction {
        self.strict_ix_releasing(mint, payer, payee, amount, destination, att, None)
    }

    /// The strict gate of a vault-funded payment signed by the payer's owner: the release
    /// goes to `payer_token` (the owner's account the transfer then debits).
    pub fn vault_strict_ix(
        &self,
        payer: &Agent,
        payee: &Agent,
        amount: u64,
        destination: Pubkey,
        att: Attestations,
        payer_token: Pubkey,
    ) -> Instruction {
        let release = VaultRelease {
            payer_token,
            token_program: TOKEN_PROGRAM_ID,
        };
        let mint = self.mint;
        self.strict_ix_releasing(mint, payer, payee, amount, destination, att, Some(release))
    }

    /// The strict gate of policy 1 signed by the payer's owner, with a vault's release or not.
    #[allow(clippy::too_many_arguments)]
    fn strict_ix_releasing(
        &self,
        mint: Pubkey,
        payer: &Agent,
        payee: &Agent,
        amount: u64,
        destination: Pubkey,
        att: Attestations,
        release: Option<VaultRelease>,
    ) -> Instruction {
        sdk().gate_payment_strict(
            &payer.owner.pubkey(),
            &payer.asset(),
            &payee.asset(),
            amount,
            &mint,
            1,
            self.deadline(),
            &destination,
            att,
            release,
            None,
        )
    }

    pub fn transfer_ix(
        &self,
        source: &Pubkey,
        destination: &Pubkey,
        authority: &Pubkey,
        amount: u64,
    ) -> Instruction {
        spl_token::instruction::transfer_checked(
            &TOKEN_PROGRAM_ID,
            source,
            &self.mint,
            destination,
            authority,
            &[],
            amount,
            DECIMALS,
        )
        .unwrap()
    }

    pub fn emit_feedback_ix(
        &self,
        payment: [u8; 32],
        payee: &Pubkey,
        score: u8,
        value: u64,
    ) -> Instruction {
        sdk().emit_feedback(
            &self.facilitator.pubkey(),
            &self.collection.pubkey(),
            FeedbackArgs {
                payment_id_hash: payment,
                payee_asset: *payee,
                score,
                value,
                value_decimals: DECIMALS,
                tag1: "x402".into(),
                tag2: String::new(),
                endpoint: "https://demo.example/protected".into(),
                feedback_uri: String::new(),
            },
        )
    }

    /// `dispute_payment` of the world's facilitator, signed by `payer` (the wallet that paid).
    pub fn dispute_ix(
        &self,
        payer: &Pubkey,
        payment: [u8; 32],
        payee: &Pubkey,
        reason: [u8; 32],
    ) -> Instruction {
        sdk().dispute_payment(
            &self.facilitator.pubkey(),
            &self.facilitator.pubkey(),
            payer,
            &self.collection.pubkey(),
            payment,
            payee,
            reason,
            "ipfs://dispute".into(),
        )
    }

    /// The settlement bundle [gate_payment_strict, TransferChecked, emit_feedback] paying
    /// `amount` from the payer owner's token account to the payee owner's.
    pub async fn settlement(
        &mut self,
        payer: &Agent,
        payee: &Agent,
        amount: u64,
        payment: [u8; 32],
    ) -> [Instruction; 3] {
        let source = self.token_account(&payer.owner.pubkey(), 0).await;
        let destination = self.token_account(&payee.owner.pubkey(), 0).await;
        [
            self.strict_ix(payer, payee, amount, destination, Attestations::default()),
            self.transfer_ix(&source, &destination, &payer.owner.pubkey(), amount),
            self.emit_feedback_ix(payment, &payee.asset(), 90, amount),
        ]
    }

    /// Transfers `agent`'s asset on MPL Core to `new_owner`, signed by its owner, as a
    /// marketplace would: the registry does not see it (its cached owner and agent wallet
    /// stay until someone calls its `sync_owner`). The agent's `owner` becomes `new_owner`.
    pub async fn transfer_asset(
        &mut self,
        agent: &mut Agent,
        new_owner: Keypair,
    ) -> Result<(), BanksClientError> {
        self.transfer_asset_to(agent, &new_owner.pubkey()).await?;
        agent.owner = new_owner;
        Ok(())
    }

    /// As [`World::transfer_asset`], to any address (a key nobody holds, a PDA).
    pub async fn transfer_asset_to(
        &mut self,
        agent: &Agent,
        new_owner: &Pubkey,
    ) -> Result<(), BanksClientError> {
        let ix = trust_gate_localnet::standin::core::transfer_v1(
            &agent.asset(),
            &self.collection.pubkey(),
            &agent.owner.pubkey(),
            new_owner,
        );
        let owner = agent.owner.insecure_clone();
        self.send(&[ix], &[&owner]).await
    }

    /// Sends a bundle signed by the facilitator (fee payer) and the payer's owner.
    pub async fn send_settlement(
        &mut self,
        payer: &Agent,
        ixs: &[Instruction],
    ) -> Result<(), BanksClientError> {
        let facilitator = self.facilitator.insecure_clone();
        send_tx(&mut self.ctx, ixs, &facilitator, &[&payer.owner]).await
    }
}

pub use crate::registry::capability_hash;

impl World {
    /// Registers an agent without engine stats: unrated.
    pub async fn register_unrated_agent(&mut self) -> Agent {
        self.register_agent_with(true, false).await
    }

    /// Registers an agent with reputation `enabled` or not, and engine stats initialized or
    /// not (the registry's `register_with_options`, the engine's `initialize_stats`; the same
    /// instructions on the stand-in and on the real programs).
    pub async fn register_agent_with(&mut self, enabled: bool, stats: bool) -> Agent {
        let owner = crate::funded_keypair(&mut self.ctx).await;
        let asset = Keypair::new();
        let c = self.collection.pubkey();
        let mut ixs = vec![standin::register_with_options(
            &owner.pubkey(),
            &asset.pubkey(),
            &c,
            "ipfs://agent",
            enabled,
        )];
        if stats {
            ixs.push(standin::initialize_stats(
                &owner.pubkey(),
                &asset.pubkey(),
                &c,
            ));
        }
        send(&mut self.ctx, &ixs, &[&owner, &asset]).await.unwrap();
        Agent { owner, asset }
    }

    /// Registers the namespace `name` unless it is registered already.
    pub async fn register_namespace(&mut self, name: &str) -> [u8; 32] {
        let hash = capability_hash(name);
        let address = validation_registry::pda::namespace(&hash).0;
        let existing = crate::raw_account(&mut self.ctx, &address).await;
        if existing.is_none_or(|a| a.owner != validation_registry::ID) {
            let payer = self.ctx.payer.pubkey();
            let ix = registry::register_namespace_ix(&payer, name, "1", "");
            send(&mut self.ctx, &[ix], &[]).await.unwrap();
        }
        hash
    }

    /// A funded attestor with a profile.
    pub async fn attestor(&mut self) -> Keypair {
        let attestor = crate::funded_keypair(&mut self.ctx).await;
        let ix = registry::register_attestor_ix(&attestor.pubkey(), "ipfs://attestor");
        send(&mut self.ctx, &[ix], &[&attestor]).await.unwrap();
        attestor
    }

    /// `attestor` attests that `subject` holds `capability` until `expires_at_slot`;
    /// returns the attestation's address.
    pub async fn attest(
        &mut self,
        attestor: &Keypair,
        subject: &Pubkey,
        capability: [u8; 32],
        expires_at_slot: u64,
    ) -> Pubkey {
        let claim = registry::Claim {
            subject: *subject,
            capability,
            payload_hash: [1; 32],
            uri_hash: [2; 32],
            expires_at_slot,
        };
        let ix = registry::respond_ix(&attestor.pubkey(), &claim);
        send(&mut self.ctx, &[ix], &[attestor]).await.unwrap();
        pda::attestation(subject, &capability, &attestor.pubkey())
    }

    /// The parties of the largest payment the gate decides under a policy without limits: a
    /// payer (tier 3) whose policy has every kind and requires the payee's capability, a payee (tier 3)
    /// whose acceptance policy requires the payer's capability, and both attested by
    /// `attestor`. Registers the two namespaces when missing.
    ///
    /// With `funding` VAULT the policy is vault-funded, and the payer's vault is opened and
    /// holds 10 tokens.
    pub async fn largest_core_case(
        &mut self,
        attestor: &Keypair,
        funding: u8,
    ) -> (Agent, Agent, Attestations) {
        self.largest_case_of(attestor, funding, None, None).await
    }

    /// [`World::largest_core_case`] under a policy with every rule: every kind, the payee's
    /// capability, a validity window, monthly, lifetime and per-payee daily caps, and an
    /// allow list whose account holds the payee among 256 entries.
    pub async fn largest_case(
        &mut self,
        attestor: &Keypair,
        funding: u8,
    ) -> (Agent, Agent, Attestations) {
        self.largest_case_of(attestor, funding, Some(0), None).await
    }

    /// [`World::largest_case`] whose policy asks for an approval above
    /// `approval_threshold`.
    pub async fn largest_case_approved(
        &mut self,
        attestor: &Keypair,
        funding: u8,
        approval_threshold: u64,
    ) -> (Agent, Agent, Attestations) {
        self.largest_case_of(attestor, funding, Some(approval_threshold), None)
            .await
    }

    /// [`World::largest_case_approved`] whose policy also holds back by `holdback` (the payee
    /// accepts any share and hold, and its arbiter).
    pub async fn largest_held_case(
        &mut self,
        attestor: &Keypair,
        funding: u8,
        approval_threshold: u64,
        holdback: HoldbackSchedule,
    ) -> (Agent, Agent, Attestations) {
        self.largest_case_of(attestor, funding, Some(approval_threshold), Some(holdback))
            .await
    }

    /// The largest case; `limits`: with every limit and this approval threshold (else none);
    /// `holdback`: the policy's holdback schedule, which the payee accepts.
    async fn largest_case_of(
        &mut self,
        attestor: &Keypair,
        funding: u8,
        limits: Option<u64>,
        holdback: Option<HoldbackSchedule>,
    ) -> (Agent, Agent, Attestations) {
        let payee_cap = self.register_namespace("audit.smart-contract.v1").await;
        let payer_cap = self.register_namespace("kyc.tier-1.v1").await;
        let policy = PolicyParams {
            kinds: 0x1f,
            per_tx_cap: 10_000_000,
            daily_cap: 10_000_000,
            weekly_cap: 10_000_000,
            velocity_window_secs: 60,
            velocity_max_in_window: 10_000_000,
            min_counterparty_tier: 2,
            required_capability: payee_cap,
            funding,
            ..open_policy(self.mint)
        };
        let now = self.now;
        let rules = PolicyRules {
            payee_list_mode: 1,
            payee_list: Pubkey::new_unique(),
            not_before: now - 60,
            not_after: now + 365 * 86_400,
            monthly_cap: 10_000_000,
            lifetime_cap: 10_000_000,
            payee_daily_cap: 10_000_000,
            ..PolicyRules::default()
        };
        let payer = match limits {
            Some(threshold) => {
                let agent = self.register_agent().await;
                self.set_stats(&agent.asset(), tier(3)).await;
                self.init_authority(&agent).await;
                self.init_policy_of(&agent, 1, policy, rules, threshold, holdback)
                    .await
                    .unwrap();
                agent
            }
            None => self.payer_with_policy(3, policy).await,
        };
        if funding == policy_vault::state::funding::VAULT {
            let owner = payer.owner.pubkey();
            let (mint, program) = (self.mint, TOKEN_PROGRAM_ID);
            // The owner names itself the spender here: the size and compute-unit tests sign
            // as the owner.
            let ixs = [
                sdk().open_vault(&owner, &[], &payer.asset(), &mint, &program),
                sdk().set_vault_spender(&owner, &[], &payer.asset(), 1, &owner),
            ];
            send(&mut self.ctx, &ixs, &[&payer.owner]).await.unwrap();
            let vault = sdk().pda.vault(&payer.asset(), &mint);
            self.deposit(&program, &mint, &vault, 10_000_000).await;
        }
        let mut acceptance = min_tier_acceptance(2);
        acceptance.required_capability = payer_cap;
        if let Some(h) = &holdback {
            // Any share and hold, and the schedule's arbiter.
            acceptance.holdback = HoldbackAcceptance {
                max_share_bps: 10_000,
                max_hold_secs: 30 * 86_400,
                arbiters: [h.arbiter, Pubkey::default()],
            };
        }
        let payee = self.payee(3, Some(acceptance)).await;
        if limits.is_some() {
            let mut listed: Vec<Pubkey> = (0..255).map(|_| Pubkey::new_unique()).collect();
            listed.push(payee.asset());
            self.edit_payee_list(&payer, 1, &listed, &[]).await.unwrap();
        }
        let expires = crate::clock(&mut self.ctx).await.slot + 10_000;
        let att = Attestations {
            payer: Some(
                self.attest(attestor, &payer.asset(), payer_cap, expires)
                    .await,
            ),
            payee: Some(
                self.attest(attestor, &payee.asset(), payee_cap, expires)
                    .await,
            ),
            payee_list: limits
                .is_some()
                .then(|| sdk().pda.payee_list(&payer.asset(), 1)),
        };
        (payer, payee, att)
    }

    pub async fn revoke(&mut self, attestor: &Keypair, subject: &Pubkey, capability: [u8; 32]) {
        let ix = registry::revoke_ix(&attestor.pubkey(), subject, &capability, [7; 32]);
        send(&mut self.ctx, &[ix], &[attestor]).await.unwrap();
    }
}
