//! What every scheme shares: the [`Facilitator`] (the chain, the key, the settings, the
//! limits, the caches and the store's keepers), connecting, deciding, and the work more than
//! one scheme does, each in its module: sending and confirming (`send`), a channel's reads,
//! opens and gate close (`channels`), payments held for an approval ([`holds`]), the rent
//! advanced for a channel ([`sponsor`]), receipts and payments ([`records`]), disputes
//! ([`dispute`]) and the crank ([`crank`]). Only here are methods added to `Facilitator`;
//! a scheme's own work is its handler's.

pub mod crank;
pub mod dispute;
pub mod holds;
mod pulls;
pub mod records;
pub mod sponsor;

mod channels;
mod send;

pub(crate) use send::{co_signature, Outcome};

use crate::approvals::Approvals;
use crate::bounded::BoundedMap;
use crate::config::{
    ComputeCaps, Config, ConfigError, FacilitatorKey, MountConfig, SessionSettings,
};
use crate::decisions::DecisionCache;
use crate::limits::RateLimits;
use crate::payer_signers::AgentCache;
use crate::redact;
use crate::reject::{Reason, Rejection};
use crate::sessions::Sessions;
use solana_commitment_config::CommitmentConfig;
use solana_sdk::account::Account;
use solana_sdk::message::AddressLookupTableAccount;
use solana_sdk::pubkey::Pubkey;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, RwLock};
use trust_gate_client::holdback::Holdback;
use trust_gate_client::ids::caip2_from_genesis;
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::{Decided, PaymentQuery, Simulated};
use trust_gate_client::{chain, decode, Builder, ClientError, Network, ProgramIds, RpcClient};
use trust_gate_x402::holdback::HoldbackTerms;

/// Everything the schemes and the routes share, each part named for what it is.
pub struct Facilitator {
    /// The cluster: its RPC and what is read of it once.
    pub chain: Chain,
    pub key: FacilitatorKey,
    pub settings: Settings,
    /// Per caller address and per payer agent (see [`crate::limits`]).
    pub limits: RateLimits,
    /// What outlives a request: in process, or in Redis for replicas (see [`crate::store`]).
    pub store: crate::store::Store,
    /// One settlement at a time per payer agent (see [`crate::payer_locks`]).
    pub turns: crate::payer_locks::PayerTurns,
    /// The payments settled and the settlements sent (see [`crate::payment_records`]).
    pub payment_records: crate::payment_records::PaymentRecords,
    pub caches: Caches,
    /// The `batch-settlement` sessions and their on-chain work under way (see
    /// [`crate::sessions`]).
    pub sessions: Sessions,
    /// The payments held for an approval (see [`crate::approvals`]).
    pub approvals: Approvals,
    /// What it advanced for the channels it sponsors (see [`crate::service::sponsor`]).
    pub advances: crate::advances::ledger::Ledger,
    started: Instant,
}

/// The cluster the facilitator settles on: its RPC, the programs' instruction builder, and
/// what does not change once read (the CAIP-2 id, the registry's collection, the mints).
pub struct Chain {
    pub rpc: RpcClient,
    /// The RPC as shown (healthz, messages): `scheme://host[:port]`, never its path or query,
    /// where a provider's API key sits.
    pub rpc_origin: String,
    pub builder: Builder,
    pub network: Network,
    caip2: OnceCell<String>,
    collection: OnceCell<Pubkey>,
    /// The facilitator's own lookup tables.
    tables: RwLock<Vec<AddressLookupTableAccount>>,
    /// Each mint's token program and decimals, which never change; at most [`MAX_MINTS`].
    mints: BoundedMap<Pubkey, (TokenProgram, u8)>,
}

/// Past this many mints the cache starts over. A payment names its mint, so a caller could
/// make the facilitator read (and keep) any number of them; a deployment settles a handful,
/// and a miss only costs one RPC read of the mint.
pub const MAX_MINTS: usize = 10_000;

/// What the configuration fixes for every request.
pub struct Settings {
    pub default_policy_id: Option<u32>,
    pub trusted_services: Vec<Pubkey>,
    pub clock_skew: Duration,
    pub confirm_timeout: Duration,
    /// How long /settle waits for the RPC to answer its send.
    pub send_timeout: Duration,
    /// What a co-signed transaction may make the facilitator pay as a priority fee (see
    /// [`crate::budget`]).
    pub compute: ComputeCaps,
    pub sessions: SessionSettings,
    /// The bounds of what it advances (see [`crate::service::sponsor`]).
    pub sponsor: crate::advances::SponsorSettings,
    /// Whether the crank pulls the subscriptions due (see [`crate::service::crank`]).
    pub pull_subscriptions: bool,
}

/// What this process remembers of the chain to decide faster.
#[derive(Default)]
pub struct Caches {
    /// What decisions may take from memory (see [`crate::decisions`]).
    pub decisions: DecisionCache,
    /// Who may sign for the payer agents seen lately (see [`crate::payer_signers`]).
    pub agents: AgentCache,
}

impl Facilitator {
    /// Builds the state without touching the network (see [`Facilitator::check`]).
    pub fn new(config: Config) -> Result<Arc<Self>, ConfigError> {
        let lock_ttl = config.lock_ttl();
        let MountConfig {
            rpc_url,
            facilitator,
            network,
            atomicity_enforced: _,
            default_policy_id,
        } = config.mount;
        let ids = ProgramIds::for_network(network).with_overrides(config.overrides);
        let builder = Builder::new(ids).map_err(|e| match e {
            ClientError::ProgramNotConfigured { variable, .. } => {
                ConfigError::new(variable, e.to_string())
            }
            other => ConfigError::new("NETWORK", other.to_string()),
        })?;
        let rpc_url = crate::config::validate_rpc_url(&rpc_url)?;
        let store = crate::store::open(config.redis_url.as_deref())
            .map_err(|e| ConfigError::new("REDIS_URL", e))?;
        // In process nobody else can hold a payer's turn: no expiry needed.
        let lock_ttl = if store.shared() {
            lock_ttl
        } else {
            Duration::ZERO
        };
        let max_waiting = config.limits.max_waiting_per_payer;
        let turns = crate::payer_locks::PayerTurns::new(store.clone(), lock_ttl, max_waiting);
        let payment_records = crate::payment_records::PaymentRecords::new(
            store.clone(),
            facilitator.pubkey(),
            lock_ttl,
        );
        let sessions = Sessions::new(store.clone());
        let approvals = Approvals::new(config.approvals, store.clone());
        let advances = crate::advances::ledger::Ledger::new(store.clone());
        Ok(Arc::new(Facilitator {
            chain: Chain {
                rpc_origin: redact::origin(&rpc_url),
                rpc: RpcClient::new_with_commitment(rpc_url, CommitmentConfig::confirmed()),
                builder,
                network,
                caip2: OnceCell::new(),
                collection: OnceCell::new(),
                tables: RwLock::new(Vec::new()),
                mints: BoundedMap::new(MAX_MINTS),
            },
            key: facilitator,
            settings: Settings {
                default_policy_id,
                trusted_services: config.trusted_services,
                clock_skew: config.clock_skew,
                confirm_timeout: config.confirm_timeout,
                send_timeout: config.send_timeout,
                compute: config.compute,
                sessions: config.sessions,
                sponsor: config.sponsor,
                pull_subscriptions: config.pull_subscriptions,
            },
            limits: RateLimits::new(&config.limits),
            store,
            turns,
            payment_records,
            caches: Caches::default(),
            sessions,
            approvals,
            advances,
            started: Instant::now(),
        }))
    }

    /// Boot check: the RPC answers, its genesis is the configured network's, the
    /// facilitator's lookup tables are loaded, and the lock store (Redis) answers.
    pub async fn check(&self) -> Result<(), ConfigError> {
        let store = crate::store::health(&*self.store).await;
        if let Some(e) = store.error {
            return Err(ConfigError::new(
                "REDIS_URL",
                format!("{} does not answer: {e}", self.store.name()),
            ));
        }
        let genesis = self.chain.rpc.get_genesis_hash().await.map_err(|e| {
            ConfigError::new(
                "RPC_URL",
                redact::urls_in(&format!("{} does not answer: {e}", self.chain.rpc_origin)),
            )
        })?;
        let cluster = caip2_from_genesis(&genesis.to_string());
        if self.chain.network != Network::Localnet && cluster != self.chain.network.caip2(None) {
            return Err(ConfigError::new(
                "NETWORK",
                format!(
                    "{} is {}, but the cluster at RPC_URL is {cluster}",
                    self.chain.network.name(),
                    self.chain.network.caip2(None)
                ),
            ));
        }
        self.refresh_tables()
            .await
            .map_err(|e| ConfigError::new("RPC_URL", redact::urls_in(&e.message)))?;
        Ok(())
    }

    /// The CAIP-2 id of the network (a localnet's from its genesis hash, read once).
    pub async fn caip2(&self) -> Result<String, Rejection> {
        self.chain
            .caip2
            .get_or_try_init(|| async {
                if self.chain.network != Network::Localnet {
                    return Ok(self.chain.network.caip2(None));
                }
                let rpc = &self.chain.rpc;
                let g = rpc.get_genesis_hash().await.map_err(Rejection::rpc)?;
                Ok(caip2_from_genesis(&g.to_string()))
            })
            .await
            .cloned()
    }

    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn facilitator(&self) -> Pubkey {
        self.key.pubkey()
    }

    /// The registry's base collection (read once).
    pub async fn collection(&self) -> Result<Pubkey, Rejection> {
        self.chain
            .collection
            .get_or_try_init(|| async {
                chain::base_collection(&self.chain.rpc, &self.chain.builder.ids)
                    .await
                    .map_err(Rejection::from)
            })
            .await
            .copied()
    }

    pub async fn tables(&self) -> Vec<AddressLookupTableAccount> {
        self.chain.tables.read().await.clone()
    }

    /// Re-reads the lookup tables whose authority is the facilitator.
    pub async fn refresh_tables(&self) -> Result<(), Rejection> {
        let t = chain::lookup_tables(&self.chain.rpc, &self.facilitator()).await?;
        *self.chain.tables.write().await = t;
        Ok(())
    }

    /// The token program and decimals of a mint (cached: neither changes).
    pub async fn mint(&self, mint: &Pubkey) -> Result<(TokenProgram, u8), Rejection> {
        if let Some(m) = self.chain.mints.get(mint) {
            return Ok(m);
        }
        let chain::Mint {
            token_program: program,
            decimals,
            ..
        } = chain::mint(&self.chain.rpc, "asset", mint)
            .await?
            .ok_or_else(|| {
                Rejection::new(
                    Reason::InvalidPaymentRequirements,
                    format!("asset {mint} does not exist on this cluster"),
                )
            })?;
        self.chain.mints.put(*mint, (program, decimals));
        Ok((program, decimals))
    }

    /// The decision the strict gate would make for `q`, by simulating `gate_payment` (in one
    /// round trip when the decision cache's inputs hold; see [`crate::decisions`]).
    /// A missing policy or kill switch is 404 naming the account; a mint other than the
    /// policy's is 422 `policy_mismatch`, a retired policy 422 `policy_retired`; an RPC
    /// failure is 502.
    pub async fn decide(&self, q: PaymentQuery) -> Result<Decided, Rejection> {
        self.decide_reading(q, &[]).await.map(|(d, _)| d)
    }

    /// As [`Self::decide`], and the `extra` accounts as the same simulation saw them.
    pub async fn decide_reading(
        &self,
        q: PaymentQuery,
        extra: &[Pubkey],
    ) -> Result<(Decided, Vec<Option<Account>>), Rejection> {
        let Simulated {
            decision,
            holdback,
            accounts: read,
        } = self
            .caches
            .decisions
            .decide_reading(
                &self.chain.rpc,
                &self.chain.builder,
                self.facilitator(),
                &q,
                extra,
            )
            .await?;
        match decision {
            Ok(decision) => Ok((Decided { decision, holdback }, read)),
            Err(ClientError::SimulationFailed { named: Some(n), .. }) if n.code == 3012 => {
                Err(self.missing_account(&q, n.code, &n.name).await)
            }
            Err(ClientError::SimulationFailed { named: Some(n), .. })
                if n.name == "PolicyMintMismatch" =>
            {
                Err(self.mint_mismatch(&q).await)
            }
            Err(ClientError::SimulationFailed { named: Some(n), .. })
                if n.name == "PolicyRetired" =>
            {
                Err(Rejection::new(
                    Reason::PolicyRetired,
                    format!(
                        "policy {} of payer agent {} is retired (PolicyRetired): no payment may use it",
                        q.policy_id, q.payer_asset
                    ),
                )
                .hint("pay under another policy of the payer"))
            }
            Err(e @ ClientError::SimulationFailed { .. }) => Err(Rejection::new(
                Reason::SimulationFailed,
                e.to_string(),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// The terms a challenge states for a payment `q` the gate allows with holdback `h`: the
    /// payee's escrow in the mint and the policy's arbiter (cached with the policy's rule by
    /// the decision that returned `h`, read otherwise).
    pub async fn holdback_terms(
        &self,
        q: &PaymentQuery,
        h: &Holdback,
    ) -> Result<HoldbackTerms, Rejection> {
        let arbiter = match self.caches.decisions.arbiter(q) {
            Some(a) => a,
            None => chain::policy(
                &self.chain.rpc,
                &self.chain.builder.ids,
                &q.payer_asset,
                q.policy_id,
            )
            .await?
            .and_then(|p| p.holdback)
            .map(|s| s.arbiter)
            .unwrap_or_default(),
        };
        let escrow = self
            .chain
            .builder
            .pda
            .holdback_escrow(&q.payee_asset, &q.mint);
        Ok(HoldbackTerms::new(h, &escrow, &arbiter))
    }

    /// Which of the gate's required accounts is missing.
    async fn missing_account(&self, q: &PaymentQuery, code: u32, name: &str) -> Rejection {
        let pda = &self.chain.builder.pda;
        let candidates = [
            (
                pda.policy(&q.payer_asset, q.policy_id),
                format!("policy {} of payer agent {}", q.policy_id, q.payer_asset),
                "create it with policy_vault::init_policy (the payer's policy authority signs)",
            ),
            (
                pda.killswitch(&q.payer_asset),
                format!("kill switch of payer agent {}", q.payer_asset),
                "create it with gate::init_killswitch or policy_vault::init_killswitch",
            ),
            (
                pda.velocity(&q.payer_asset, q.policy_id),
                format!(
                    "velocity ledger of policy {} of payer agent {}",
                    q.policy_id, q.payer_asset
                ),
                "it is created with the policy by policy_vault::init_policy",
            ),
        ];
        let keys: Vec<Pubkey> = candidates.iter().map(|c| c.0).collect();
        match chain::accounts(&self.chain.rpc, &keys).await {
            Ok(accs) => {
                for (acc, (key, what, hint)) in accs.iter().zip(&candidates) {
                    if acc.is_none() {
                        return Rejection::new(
                            Reason::NotFound,
                            format!(
                                "no {what}: account {key} does not exist (Anchor {code} {name})"
                            ),
                        )
                        .hint(*hint);
                    }
                }
                Rejection::new(
                    Reason::NotFound,
                    format!("an account the gate needs does not exist (Anchor {code} {name})"),
                )
            }
            Err(e) => e.into(),
        }
    }

    async fn mint_mismatch(&self, q: &PaymentQuery) -> Rejection {
        let key = self.chain.builder.pda.policy(&q.payer_asset, q.policy_id);
        let policy_mint = match chain::account(&self.chain.rpc, &key).await {
            Ok(Some(acc)) => decode::policy(&acc.data)
                .map(|p| p.params.mint.to_string())
                .unwrap_or_else(|_| "another mint".into()),
            _ => "another mint".into(),
        };
        Rejection::new(
            Reason::PolicyNotPayers,
            format!(
                "mint {} is not the mint of policy {} ({policy_mint}); PolicyMintMismatch",
                q.mint, q.policy_id
            ),
        )
        .hint("pay in the policy's mint, or use a policy for this mint")
    }
}

/// The payee's feedback for a payment the facilitator sends itself (a channel's close, a
/// subscription's pull), tagged `x402` and `tag2` (what was paid): one score for all of them,
/// since no client rates these payments.
fn own_feedback(tag2: &str) -> trust_gate_client::instructions::FeedbackDetails {
    trust_gate_client::instructions::FeedbackDetails {
        score: 90,
        tag1: "x402".into(),
        tag2: tag2.into(),
        ..Default::default()
    }
}
