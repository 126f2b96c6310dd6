//! The migration steps. Each one looks at the chain first and sends a transaction only when
//! something is missing, so running them again (on any cluster) changes nothing.

use crate::demo::{self, DemoAgent, DemoWorld};
use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::system_instruction;
use anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent;
use anchor_spl::token::spl_token;
use anchor_spl::token_2022::spl_token_2022;
use policy_vault::state::AcceptanceParams;
use solana_address_lookup_table_interface::instruction::{
    create_lookup_table, extend_lookup_table,
};
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_sdk::instruction::Instruction;
use solana_sdk::program_pack::Pack;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::decode::{self, AcceptancePolicy};
use trust_gate_client::instructions::capability_hash;
use trust_gate_client::settle::{self, TokenProgram};
use trust_gate_client::standin::instructions as standin;
use trust_gate_client::{chain, channels, Builder, ClientError};
use trust_gate_program_common::external::atom_stats::Stats;

/// SOL (lamports) each demo key is topped up to.
const KEY_FLOOR: u64 = 2_000_000_000;

/// How the migrations may act on the cluster.
pub struct Migration<'a> {
    pub rpc: &'a RpcClient,
    pub builder: Builder,
    /// Pays for everything and funds the demo keys.
    pub funder: &'a Keypair,
    /// The localnet stand-in engine's admin: when present, demo tiers are set with
    /// `set_stats`. On a real cluster tiers are earned, not set, and this is `None`.
    pub engine_admin: Option<&'a Keypair>,
    /// Progress lines go here.
    pub log: &'a (dyn Fn(&str) + Send + Sync),
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Report {
    pub created: Vec<String>,
    pub present: Vec<String>,
}

impl Migration<'_> {
    pub(crate) async fn send(
        &self,
        what: &str,
        ixs: &[Instruction],
        signers: &[&Keypair],
    ) -> Result<(), ClientError> {
        let blockhash = self.rpc.get_latest_blockhash().await?;
        let mut all = vec![self.funder];
        all.extend(signers.iter().copied());
        let tx = settle::transaction(&self.funder.pubkey(), ixs, &[], blockhash, &all)?;
        settle::send(self.rpc, &tx).await.map_err(|e| match e {
            ClientError::Transaction { err, named, logs } => ClientError::Transaction {
                err,
                named,
                logs: format!("{what}: {logs}"),
            },
            other => other,
        })?;
        Ok(())
    }

    fn note(&self, report: &mut Report, created: bool, what: String) {
        (self.log)(&format!("  {} {what}", if created { "+" } else { "=" }));
        if created {
            report.created.push(what);
        } else {
            report.present.push(what);
        }
    }

    async fn exists(&self, key: &Pubkey) -> Result<bool, ClientError> {
        Ok(chain::account(self.rpc, key)
            .await?
            .is_some_and(|a| a.lamports > 0))
    }

    /// Whether the policy at `key` exists; an account there that is not a policy of the
    /// current layout (one a reset abandoned, see docs/deploying.md) is an error naming it,
    /// since a policy can neither be replaced nor closed.
    async fn policy_exists(&self, key: &Pubkey) -> Result<bool, ClientError> {
        let Some(account) = chain::account(self.rpc, key).await? else {
            return Ok(false);
        };
        decode::policy(&account.data).map_err(|e| {
            ClientError::Config(format!(
                "policy {key}: the account there is not a policy of the current layout ({e}); \
                 a reset abandons policies of earlier layouts, so this demo world cannot be \
                 seeded at these addresses: see docs/deploying.md"
            ))
        })?;
        Ok(true)
    }

    /// Tops up keys that sign or pay to [`KEY_FLOOR`] lamports.
    async fn fund(&self, keys: &[Pubkey], report: &mut Report) -> Result<(), ClientError> {
        let accounts = chain::accounts(self.rpc, keys).await?;
        let ixs: Vec<Instruction> = keys
            .iter()
            .zip(accounts)
            .filter_map(|(k, a)| {
                let have = a.map(|a| a.lamports).unwrap_or(0);
                (have < KEY_FLOOR / 2).then(|| {
                    system_instruction::transfer(&self.funder.pubkey(), k, KEY_FLOOR - have)
                })
            })
            .collect();
        let n = ixs.len();
        for chunk in ixs.chunks(8) {
            self.send("funding demo keys", chunk, &[]).await?;
        }
        self.note(
            report,
            n > 0,
            format!("SOL for {} demo keys ({n} topped up)", keys.len()),
        );
        Ok(())
    }

    /// Capability namespaces (and the demo attestor).
    pub async fn namespaces(
        &self,
        world: &DemoWorld,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        for (name, version, schema) in demo::NAMESPACES {
            let key = self.builder.pda.namespace(&capability_hash(name));
            let created = !self.exists(&key).await?;
            if created {
                let ix =
                    self.builder
                        .register_namespace(&self.funder.pubkey(), name, version, schema);
                self.send("register_namespace", &[ix], &[]).await?;
            }
            self.note(report, created, format!("namespace {name}"));
        }
        let profile = self.builder.pda.attestor_profile(&world.attestor.pubkey());
        let created = !self.exists(&profile).await?;
        if created {
            let ix = self
                .builder
                .register_attestor(&world.attestor.pubkey(), "https://attestor.trust-gate.dev");
            self.send("register_attestor", &[ix], &[&world.attestor])
                .await?;
        }
        self.note(
            report,
            created,
            format!("attestor {}", world.attestor.pubkey()),
        );
        Ok(())
    }

    async fn mint(&self, world: &DemoWorld, report: &mut Report) -> Result<(), ClientError> {
        self.mint_of(
            world,
            &world.mint,
            TokenProgram::SplToken,
            "the demo mint",
            report,
        )
        .await?;
        self.mint_of(
            world,
            &world.metered_mint,
            TokenProgram::Token2022,
            "the metered mint",
            report,
        )
        .await
    }

    /// Creates `mint` in `program` (82 bytes, no extension, the same in both programs) with
    /// the world's authority and decimals.
    async fn mint_of(
        &self,
        world: &DemoWorld,
        mint: &Keypair,
        program: TokenProgram,
        what: &str,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let key = mint.pubkey();
        let created = !self.exists(&key).await?;
        if created {
            let len = spl_token::state::Mint::LEN;
            let rent = self.rpc.get_minimum_balance_for_rent_exemption(len).await?;
            let ixs = [
                system_instruction::create_account(
                    &self.funder.pubkey(),
                    &key,
                    rent,
                    len as u64,
                    &program.id(),
                ),
                spl_token_2022::instruction::initialize_mint2(
                    &program.id(),
                    &key,
                    &world.mint_authority.pubkey(),
                    None,
                    demo::DECIMALS,
                )
                .map_err(|e| ClientError::Config(e.to_string()))?,
            ];
            self.send(&format!("create {what}"), &ixs, &[mint]).await?;
        }
        let program_name = match program {
            TokenProgram::SplToken => "SPL Token",
            TokenProgram::Token2022 => "Token-2022",
        };
        self.note(
            report,
            created,
            format!("{what} {key} ({program_name}, {} decimals)", demo::DECIMALS),
        );
        Ok(())
    }

    async fn facilitator(&self, world: &DemoWorld, report: &mut Report) -> Result<(), ClientError> {
        let f = world.facilitator.pubkey();
        let key = self.builder.pda.gate_authority(&f);
        let created = !self.exists(&key).await?;
        if created {
            let ix = self.builder.init_gate_authority(&f);
            self.send("gate init_authority", &[ix], &[&world.facilitator])
                .await?;
        }
        self.note(report, created, format!("facilitator {f} GateAuthority"));
        Ok(())
    }

    async fn agent(
        &self,
        agent: &DemoAgent,
        collection: &Pubkey,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let (owner, asset) = (agent.owner.pubkey(), agent.asset());
        let created = !self.exists(&self.builder.pda.agent_account(&asset)).await?;
        if created {
            let ix = self.builder.register_agent_via_cpi(
                &owner,
                &asset,
                collection,
                format!("https://agents.trust-gate.dev/{}", agent.name),
            );
            self.send(
                "register_agent_via_cpi",
                &[ix],
                &[&agent.owner, &agent.asset],
            )
            .await?;
        }
        self.note(report, created, format!("agent {} {asset}", agent.name));

        if let Some(admin) = self.engine_admin {
            let want = Stats {
                tier_immediate: agent.tier,
                tier_confirmed: agent.tier,
                risk_score: 0,
                confidence: 5_000,
            };
            let current = chain::engine_reputation(self.rpc, &self.builder.ids, &asset).await?;
            let matches = current.as_ref().is_ok_and(|r| {
                r.tier_immediate == want.tier_immediate && r.tier_confirmed == want.tier_confirmed
            });
            if !matches {
                if self.real_engine().await? {
                    self.write_tiers(&asset, &want).await?;
                } else {
                    let ix = standin::set_stats(&admin.pubkey(), &asset, &want);
                    self.send("set_stats", &[ix], &[admin]).await?;
                }
            }
            self.note(
                report,
                !matches,
                format!("agent {} engine tier {}", agent.name, agent.tier),
            );
        }

        // The registry's own flow, the same on every cluster and on the localnet's stand-in.
        if let Some(hot) = &agent.hot_key {
            self.agent_wallet(agent, hot, report).await?;
        }

        let authority = self.builder.pda.policy_authority(&asset);
        let created = !self.exists(&authority).await?;
        if created {
            let ix = self.builder.init_authority(&owner, &asset, vec![owner], 1);
            self.send("init_authority", &[ix], &[&agent.owner]).await?;
        }
        self.note(
            report,
            created,
            format!("agent {} PolicyAuthority", agent.name),
        );
        Ok(())
    }

    /// Whether the localnet runs the real reputation engine (deployed through the upgradeable
    /// loader, as on a cluster) rather than the stand-in (a builtin).
    async fn real_engine(&self) -> Result<bool, ClientError> {
        const UPGRADEABLE_LOADER: Pubkey =
            anchor_lang::prelude::pubkey!("BPFLoaderUpgradeab1e11111111111111111111111");
        let engine = chain::account(self.rpc, &self.builder.ids.reputation_engine).await?;
        Ok(engine.is_some_and(|a| a.owner == UPGRADEABLE_LOADER))
    }

    /// Writes `want` into the agent's stats as the real engine lays them out (trust tier and
    /// confirmed tier equal, no candidacy), through the localnet-only account-setting method:
    /// the real engine raises tiers only over weeks of feedback. The engine's own fields stay.
    async fn write_tiers(&self, asset: &Pubkey, want: &Stats) -> Result<(), ClientError> {
        use trust_gate_program_common::external::atom_stats as s;
        let address = self.builder.pda.atom_stats(asset);
        let mut stats =
            chain::account(self.rpc, &address)
                .await?
                .ok_or(ClientError::AccountNotFound {
                    what: "AtomStats",
                    address: address.to_string(),
                })?;
        if stats.data.len() != s::LEN {
            return Err(ClientError::Decode {
                what: format!("AtomStats {address}"),
                reason: format!("{} bytes, expected {}", stats.data.len(), s::LEN),
            });
        }
        stats.data[s::RISK_SCORE] = want.risk_score;
        stats.data[s::TIER_IMMEDIATE] = want.tier_confirmed;
        stats.data[s::TIER_CANDIDATE] = 0;
        stats.data[s::TIER_CONFIRMED] = want.tier_confirmed;
        stats.data[s::CONFIDENCE..s::CONFIDENCE + 2]
            .copy_from_slice(&want.confidence.to_le_bytes());
        chain::localnet_set_account(self.rpc, &address, &stats).await
    }

    /// Records `wallet` as the agent's agent wallet in the registry (`set_agent_wallet`,
    /// signed by the owner, with the wallet's Ed25519 signature and a deadline two minutes
    /// ahead of the cluster's clock), so that it may sign the agent's payments.
    async fn agent_wallet(
        &self,
        agent: &DemoAgent,
        wallet: &Keypair,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let asset = agent.asset();
        let current = chain::agent(self.rpc, &self.builder.ids, &asset).await?;
        let created = current.agent_wallet != Some(wallet.pubkey());
        if created {
            let deadline = chain::unix_time(self.rpc).await? + 120;
            let ixs =
                self.builder
                    .set_agent_wallet(&agent.owner.pubkey(), &asset, wallet, deadline);
            self.send("set_agent_wallet", &ixs, &[&agent.owner]).await?;
        }
        let wallet = wallet.pubkey();
        self.note(
            report,
            created,
            format!("agent {} agent wallet (hot key) {wallet}", agent.name),
        );
        Ok(())
    }

    /// The vault-funded payer's policy vault, opened by its owner (the authority's only
    /// member) and topped up to [`demo::PAYER_BALANCE`] by the mint authority: a deposit is a
    /// plain transfer (here a mint) into it.
    async fn vault(
        &self,
        world: &DemoWorld,
        agent: &DemoAgent,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let (asset, mint) = (agent.asset(), world.mint());
        let program = TokenProgram::SplToken.id();
        let key = self.builder.pda.vault(&asset, &mint);
        let balance = match chain::vault(self.rpc, &self.builder.ids, &asset, &mint).await? {
            Some(v) => v.amount,
            None => {
                let ix =
                    self.builder
                        .open_vault(&agent.owner.pubkey(), &[], &asset, &mint, &program);
                self.send("open_vault", &[ix], &[&agent.owner]).await?;
                self.note(report, true, format!("agent {} vault {key}", agent.name));
                0
            }
        };
        let topped = balance < demo::PAYER_BALANCE;
        if topped {
            let ix = spl_token::instruction::mint_to(
                &program,
                &mint,
                &key,
                &world.mint_authority.pubkey(),
                &[],
                demo::PAYER_BALANCE - balance,
            )
            .map_err(|e| ClientError::Config(e.to_string()))?;
            self.send("deposit into the vault", &[ix], &[&world.mint_authority])
                .await?;
        }
        self.note(
            report,
            topped,
            format!("agent {} vault balance {}", agent.name, demo::PAYER_BALANCE),
        );
        Ok(())
    }

    /// The vault-funded payer's spender: its hot key, named by its owner (the authority's
    /// only member), so that only the hot key pays from the vault.
    async fn vault_spender(
        &self,
        agent: &DemoAgent,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let asset = agent.asset();
        let spender = agent.signer().pubkey();
        let key = self.builder.pda.policy(&asset, demo::POLICY_ID);
        let policy = chain::policy(self.rpc, &self.builder.ids, &asset, demo::POLICY_ID)
            .await?
            .ok_or_else(|| {
                ClientError::Config(format!("policy {key} missing after init_policy"))
            })?;
        let created = policy.spender != spender;
        if created {
            let ix = self.builder.set_vault_spender(
                &agent.owner.pubkey(),
                &[],
                &asset,
                demo::POLICY_ID,
                &spender,
            );
            self.send("set_vault_spender", &[ix], &[&agent.owner])
                .await?;
        }
        self.note(
            report,
            created,
            format!("agent {} vault spender {spender}", agent.name),
        );
        Ok(())
    }

    async fn payer_policy(
        &self,
        world: &DemoWorld,
        agent: &DemoAgent,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let asset = agent.asset();
        let key = self.builder.pda.policy(&asset, demo::POLICY_ID);
        let created = !self.policy_exists(&key).await?;
        if created {
            let ix = self.builder.init_policy(
                &agent.owner.pubkey(),
                &[],
                &asset,
                demo::POLICY_ID,
                world.policy_of(agent),
                Default::default(),
                0,
            );
            self.send("init_policy", &[ix], &[&agent.owner]).await?;
        }
        self.note(
            report,
            created,
            format!("agent {} policy {}", agent.name, demo::POLICY_ID),
        );
        if agent.name == demo::HOLDBACK_PAYER {
            let key = self.builder.pda.policy(&asset, demo::HOLDBACK_POLICY_ID);
            let created = !self.policy_exists(&key).await?;
            if created {
                let ix = self.builder.init_policy_with_holdback(
                    &agent.owner.pubkey(),
                    &[],
                    &asset,
                    demo::HOLDBACK_POLICY_ID,
                    world.policy_of(agent),
                    Default::default(),
                    0,
                    Some(world.holdback_schedule()),
                );
                self.send("init_policy", &[ix], &[&agent.owner]).await?;
            }
            self.note(
                report,
                created,
                format!(
                    "agent {} holdback policy {}",
                    agent.name,
                    demo::HOLDBACK_POLICY_ID
                ),
            );
        }
        if agent.funding != settle::Funding::Wallet {
            return Ok(());
        }
        // Channels refund the payer's own token account: metered payments are wallet-funded.
        let key = self.builder.pda.policy(&asset, demo::METERED_POLICY_ID);
        let created = !self.policy_exists(&key).await?;
        if created {
            let ix = self.builder.init_policy(
                &agent.owner.pubkey(),
                &[],
                &asset,
                demo::METERED_POLICY_ID,
                demo::payer_policy(world.metered_mint()),
                Default::default(),
                0,
            );
            self.send("init_policy", &[ix], &[&agent.owner]).await?;
        }
        self.note(
            report,
            created,
            format!(
                "agent {} metered policy {}",
                agent.name,
                demo::METERED_POLICY_ID
            ),
        );
        Ok(())
    }

    /// `agent`'s acceptance policy `want`; `what` describes it in the report.
    async fn acceptance(
        &self,
        agent: &DemoAgent,
        want: AcceptanceParams,
        what: &str,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let key = self.builder.pda.acceptance(&agent.asset());
        // One of an earlier, shorter layout does not decode: setting it again grows it.
        let created =
            match chain::anchor_account::<AcceptancePolicy>(self.rpc, "AcceptancePolicy", &key)
                .await
            {
                Ok(current) => current.is_none_or(|c| c.params != want),
                Err(ClientError::Decode { .. }) => true,
                Err(e) => return Err(e),
            };
        if created {
            let ix = self.builder.set_acceptance_policy(
                &agent.owner.pubkey(),
                &[],
                &agent.asset(),
                want,
            );
            self.send("set_acceptance_policy", &[ix], &[&agent.owner])
                .await?;
        }
        self.note(
            report,
            created,
            format!("agent {} acceptance policy: {what}", agent.name),
        );
        Ok(())
    }

    /// The held service's escrow in the demo mint, where held shares wait.
    async fn holdback_escrow(
        &self,
        world: &DemoWorld,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let payee = world.held_service.asset();
        let escrow = self.builder.pda.holdback_escrow(&payee, &world.mint());
        let created = !self.exists(&escrow).await?;
        if created {
            let ix = self.builder.open_holdback_escrow(
                &self.funder.pubkey(),
                &payee,
                &world.mint(),
                &TokenProgram::SplToken.id(),
            );
            self.send("open_holdback_escrow", &[ix], &[]).await?;
        }
        self.note(
            report,
            created,
            format!("agent {} holdback escrow {escrow}", world.held_service.name),
        );
        Ok(())
    }

    /// Token accounts of the service and the payers' signers; wallet-funded payers are topped
    /// up to [`demo::PAYER_BALANCE`], a vault-funded payer's hot key holds nothing (its
    /// account only passes the vault's release on to the payee).
    async fn tokens(&self, world: &DemoWorld, report: &mut Report) -> Result<(), ClientError> {
        self.tokens_of(world, &world.mint(), TokenProgram::SplToken, report)
            .await?;
        self.tokens_of(
            world,
            &world.metered_mint(),
            TokenProgram::Token2022,
            report,
        )
        .await
    }

    /// The token accounts of `mint`: the agents' and the payment-channels treasury's.
    async fn tokens_of(
        &self,
        world: &DemoWorld,
        mint: &Pubkey,
        program: TokenProgram,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let mut holders: Vec<(&DemoAgent, u64)> =
            vec![(&world.service, 0), (&world.held_service, 0)];
        holders.extend(world.payers.iter().map(|p| match p.funding {
            settle::Funding::Wallet => (p, demo::PAYER_BALANCE),
            settle::Funding::Vault => (p, 0),
        }));
        for (agent, target) in holders {
            let owner = agent.signer().pubkey();
            let ata = program.associated_account(&owner, mint);
            let balance = match chain::account(self.rpc, &ata).await? {
                Some(a) => token_amount(&a.data).ok_or_else(|| ClientError::Decode {
                    what: "token account".into(),
                    reason: format!("{} bytes, not a token account", a.data.len()),
                })?,
                None => {
                    let ix = create_associated_token_account_idempotent(
                        &self.funder.pubkey(),
                        &owner,
                        mint,
                        &program.id(),
                    );
                    self.send("create token account", &[ix], &[]).await?;
                    0
                }
            };
            let created = balance < target;
            if created {
                let ix = spl_token_2022::instruction::mint_to(
                    &program.id(),
                    mint,
                    &ata,
                    &world.mint_authority.pubkey(),
                    &[],
                    target - balance,
                )
                .map_err(|e| ClientError::Config(e.to_string()))?;
                self.send("mint_to", &[ix], &[&world.mint_authority])
                    .await?;
            }
            self.note(
                report,
                created,
                format!("agent {} token account {ata} of {mint}", agent.name),
            );
        }
        // The payment-channels program's treasury must hold a token account of the mint for
        // any channel of it to be distributed (it takes the rounding dust and what a party
        // without an account forfeits).
        let treasury = program.associated_account(&channels::TREASURY_OWNER, mint);
        let missing = chain::account(self.rpc, &treasury).await?.is_none();
        if missing {
            let ix = create_associated_token_account_idempotent(
                &self.funder.pubkey(),
                &channels::TREASURY_OWNER,
                mint,
                &program.id(),
            );
            self.send("create the channels treasury's token account", &[ix], &[])
                .await?;
        }
        self.note(
            report,
            missing,
            format!("payment-channels treasury token account {treasury} of {mint}"),
        );
        Ok(())
    }

    /// A facilitator's address lookup table with a demo payee's settlement accounts (the held
    /// service's with its escrow), so that a settlement fits in one packet.
    async fn lookup_table(
        &self,
        world: &DemoWorld,
        payee: &DemoAgent,
        collection: &Pubkey,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let f = world.facilitator.pubkey();
        let destination =
            TokenProgram::SplToken.associated_account(&payee.owner.pubkey(), &world.mint());
        let mut wanted = settle::lookup_table_addresses(
            &self.builder,
            &f,
            collection,
            &world.mint(),
            &payee.asset(),
            &destination,
        );
        if payee.name == world.held_service.name {
            wanted.push(
                self.builder
                    .pda
                    .holdback_escrow(&payee.asset(), &world.mint()),
            );
        }
        let tables = chain::lookup_tables(self.rpc, &f).await?;
        let present = tables
            .iter()
            .any(|t| wanted.iter().all(|a| t.addresses.contains(a)));
        if !present {
            // A table's address derives from a recent slot, which must be in SlotHashes.
            let recent = self.rpc.get_slot().await?.saturating_sub(1);
            let (create, table) = create_lookup_table(f, self.funder.pubkey(), recent);
            let extend = extend_lookup_table(table, f, Some(self.funder.pubkey()), wanted);
            self.send(
                "create the facilitator's lookup table",
                &[create, extend],
                &[&world.facilitator],
            )
            .await?;
            // A table is usable from the slot after its last extension.
            let extended = self.rpc.get_slot().await?;
            while self.rpc.get_slot().await? <= extended {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        self.note(
            report,
            !present,
            format!("facilitator {f} lookup table for {}", payee.name),
        );
        Ok(())
    }

    /// The demo subscription ([`DemoWorld::subscription`]), running a year from now, unless
    /// its record stands (a cancelled one is seeded again).
    async fn subscription(
        &self,
        world: &DemoWorld,
        report: &mut Report,
    ) -> Result<(), ClientError> {
        let now = chain::unix_time(self.rpc).await?;
        let s = world.subscription(now.saturating_add(demo::SUBSCRIPTION_LIFE_SECS));
        let delegation = self.builder.subscription_delegation(&s);
        let record = self.builder.pda.gated_subscription(&delegation);
        let created = !self.exists(&record).await?;
        if created {
            let subscriber = world.subscriber();
            self.send(
                "subscribe",
                &[self.builder.subscribe(&s)],
                &[&subscriber.owner],
            )
            .await?;
        }
        self.note(
            report,
            created,
            format!(
                "agent {} subscription {record} to {}",
                demo::SUBSCRIBER,
                world.service.name
            ),
        );
        Ok(())
    }

    /// Every step, in order.
    pub async fn demo_world(&self, world: &DemoWorld) -> Result<Report, ClientError> {
        let mut report = Report::default();
        let mut keys = vec![world.facilitator.pubkey(), world.attestor.pubkey()];
        keys.push(world.service.owner.pubkey());
        keys.push(world.held_service.owner.pubkey());
        // The arbiter signs its decisions and pays their fees.
        keys.push(world.arbiter.pubkey());
        keys.extend(world.payers.iter().map(|p| p.owner.pubkey()));
        self.fund(&keys, &mut report).await?;
        self.namespaces(world, &mut report).await?;
        self.mint(world, &mut report).await?;
        self.facilitator(world, &mut report).await?;
        let collection = chain::base_collection(self.rpc, &self.builder.ids).await?;
        self.agent(&world.service, &collection, &mut report).await?;
        let what = format!("payer tier >= {}", demo::SERVICE_MIN_PAYER_TIER);
        self.acceptance(
            &world.service,
            world.service_acceptance(),
            &what,
            &mut report,
        )
        .await?;
        self.agent(&world.held_service, &collection, &mut report)
            .await?;
        let held = demo::held_service_acceptance(world.arbiter.pubkey());
        self.acceptance(
            &world.held_service,
            held,
            "any payer, a holdback",
            &mut report,
        )
        .await?;
        self.holdback_escrow(world, &mut report).await?;
        for payer in &world.payers {
            self.agent(payer, &collection, &mut report).await?;
            self.payer_policy(world, payer, &mut report).await?;
            if payer.funding == settle::Funding::Vault {
                self.vault(world, payer, &mut report).await?;
                self.vault_spender(payer, &mut report).await?;
            }
        }
        self.tokens(world, &mut report).await?;
        for payee in [&world.service, &world.held_service] {
            self.lookup_table(world, payee, &collection, &mut report)
                .await?;
        }
        self.subscription(world, &mut report).await?;
        Ok(report)
    }
}

/// A token account's balance, SPL Token or Token-2022 (both keep the amount at 64..72 of
/// the base layout; Token-2022 appends extensions after it).
pub fn token_amount(data: &[u8]) -> Option<u64> {
    if data.len() < spl_token::state::Account::LEN {
        return None;
    }
    Some(u64::from_le_bytes(data[64..72].try_into().ok()?))
}
