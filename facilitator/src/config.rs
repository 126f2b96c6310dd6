//! Configuration: the typed config of the mountable router and of the facilitator server,
//! and its validation from flags or environment variables with errors that name the
//! variable. The value types other modules act on (the compute-budget caps, the rate limits)
//! live here, below them.

use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use trust_gate_client::{AtomicityEnforced, Network, Overrides};

pub use trust_gate_client::env::{parse_keypair, parse_pubkeys, validate_url, ConfigError};

/// The facilitator's key: a keypair (settle, dispute), or only a public key for read-only
/// and simulation use (/verify, /receipt).
#[derive(Clone, Debug)]
pub enum FacilitatorKey {
    Keypair(Arc<Keypair>),
    Pubkey(Pubkey),
}

impl FacilitatorKey {
    pub fn pubkey(&self) -> Pubkey {
        match self {
            FacilitatorKey::Keypair(k) => k.pubkey(),
            FacilitatorKey::Pubkey(p) => *p,
        }
    }

    pub fn keypair(&self) -> Option<&Keypair> {
        match self {
            FacilitatorKey::Keypair(k) => Some(k),
            FacilitatorKey::Pubkey(_) => None,
        }
    }
}

/// What [`crate::mount`] needs (the seed's Express mount options).
#[derive(Clone, Debug)]
pub struct MountConfig {
    pub rpc_url: String,
    pub facilitator: FacilitatorKey,
    pub network: Network,
    /// Has only one value: settlement is never split (see [`AtomicityEnforced`]).
    pub atomicity_enforced: AtomicityEnforced,
    /// Used by /verify when a request has no `policyId`.
    pub default_policy_id: Option<u32>,
}

/// The facilitator server's configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub mount: MountConfig,
    /// Service keys whose challenges (`extra.gate.serviceSignature`) this facilitator
    /// accepts.
    pub trusted_services: Vec<Pubkey>,
    /// Program id overrides (`*_PROGRAM_ID`); required on mainnet.
    pub overrides: Overrides,
    /// Clock skew tolerated when checking a challenge's expiry.
    pub clock_skew: Duration,
    /// How long /settle waits for confirmation.
    pub confirm_timeout: Duration,
    /// How long /settle waits for the RPC to answer the send (no answer: the transaction may
    /// have gone, so its outcome is waited for as if sent).
    pub send_timeout: Duration,
    /// The lock store shared by replicas (`REDIS_URL`); `None`: in process.
    pub redis_url: Option<String>,
    /// What a co-signed transaction may make this facilitator pay as a priority fee.
    pub compute: ComputeCaps,
    /// Rate limits and the bound on the settlements waiting for one payer.
    pub limits: Limits,
    /// How often the crank closes closable payment records (`RECLAIM_INTERVAL_SECS`);
    /// `None`: never (another process reclaims, `trust-gate reclaim`).
    pub reclaim_interval: Option<Duration>,
    /// The `batch-settlement` sessions' kill-switch poll and voucher redemption.
    pub sessions: SessionSettings,
    /// The pending approvals' life and bound (see [`crate::approvals`]).
    pub approvals: crate::approvals::ApprovalSettings,
    /// What the facilitator sponsors for payment channels (see [`crate::service::sponsor`]).
    pub sponsor: crate::advances::SponsorSettings,
}

/// The crank's default interval: a minute.
pub const DEFAULT_RECLAIM_INTERVAL: Duration = Duration::from_secs(60);

/// When the sessions' vouchers are applied on chain, and how often kill switches are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionSettings {
    /// `KILL_SWITCH_POLL_MS`: the most a pause takes to stop a payer's vouchers (plus the
    /// RPC's own lag).
    pub poll: Duration,
    /// `BATCH_REDEEM_AGE_SECS`: an accepted voucher is applied on chain at most this late.
    pub redeem_age: Duration,
    /// `BATCH_REDEEM_AMOUNT`: a channel with this much accepted and unapplied is applied at
    /// the next tick (0: only by age, and at the close).
    pub redeem_amount: u64,
    /// `BATCH_MAX_IDLE_SECS`: a session with no voucher for this long is closed at its latest
    /// voucher, so that an abandoned channel's rent comes back (`None`: never; `/supported`
    /// then does not list `maxIdleSecs`).
    pub max_idle: Option<Duration>,
    /// `BATCH_CHANNEL_POLL_SECS`: the longest between two reads of a session's channel (each
    /// is read every tenth of its grace period, at most this): how late a payer's
    /// `request_close` or an open that landed is seen.
    pub channel_poll: Duration,
}

/// The longest between two reads of a session's channel by default (specification section
/// 4.5: the server must see a `request_close` well inside the grace period, at least 900 s).
pub const DEFAULT_CHANNEL_POLL: Duration = Duration::from_secs(60);

/// The default idle close of a session: a week, as the scheme's reference facilitator.
pub const DEFAULT_MAX_IDLE: Duration = Duration::from_secs(7 * 24 * 3600);

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            poll: Duration::from_secs(1),
            redeem_age: Duration::from_secs(300),
            redeem_amount: 0,
            max_idle: Some(DEFAULT_MAX_IDLE),
            channel_poll: DEFAULT_CHANNEL_POLL,
        }
    }
}

/// The caps on what a transaction the facilitator co-signs as fee payer may make it pay on
/// top of the signatures' fee: the priority fee is its compute-unit limit times its unit
/// price (see [`crate::budget`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeCaps {
    /// `MAX_COMPUTE_UNIT_PRICE`: the highest unit price, micro-lamports per unit.
    pub max_unit_price: u64,
    /// `MAX_COMPUTE_UNIT_LIMIT`: the highest unit limit a transaction may request.
    pub max_unit_limit: u32,
    /// `MAX_PRIORITY_FEE_LAMPORTS`: the highest priority fee (limit × price) of one
    /// transaction, in lamports.
    pub max_priority_fee_lamports: u64,
    /// `COMPUTE_UNIT_LIMIT_MARGIN_PERCENT` and `..._UNITS`: a transaction with a unit price
    /// may request at most the units its simulation used × (100 + percent) / 100 + units.
    pub margin_percent: u32,
    pub margin_units: u32,
}

/// The default cap on a settlement's compute-unit price: the x402 exact scheme's on Solana,
/// 5 lamports per compute unit.
pub const DEFAULT_MAX_COMPUTE_UNIT_PRICE: u64 = 5_000_000;
/// The default cap on a requested unit limit: above the largest settlement measured on the
/// real registry and engine (about 100 000 units with its limit) with room for a Token-2022
/// transfer hook's program, well below the runtime's 1 400 000.
pub const DEFAULT_MAX_COMPUTE_UNIT_LIMIT: u32 = 400_000;
/// The default cap on one transaction's priority fee: 0.0001 SOL, ten times the two
/// signatures' fee and about 4 % of the feedback log's rent that a settlement costs anyway.
pub const DEFAULT_MAX_PRIORITY_FEE_LAMPORTS: u64 = 100_000;
/// The smallest (and default) margin over the measured units: the paying clients request
/// up to 10 % plus a few thousand units above what a settlement uses.
pub const MIN_MARGIN_PERCENT: u32 = 25;
pub const MIN_MARGIN_UNITS: u32 = 10_000;
/// The runtime's largest compute-unit limit.
pub const RUNTIME_MAX_UNIT_LIMIT: u32 = 1_400_000;

impl Default for ComputeCaps {
    fn default() -> Self {
        ComputeCaps {
            max_unit_price: DEFAULT_MAX_COMPUTE_UNIT_PRICE,
            max_unit_limit: DEFAULT_MAX_COMPUTE_UNIT_LIMIT,
            max_priority_fee_lamports: DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
            margin_percent: MIN_MARGIN_PERCENT,
            margin_units: MIN_MARGIN_UNITS,
        }
    }
}

/// A token bucket: `per_second` requests a second on average, `burst` at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub per_second: f64,
    pub burst: u32,
}

/// How much one caller and one payer may ask of this process (see [`crate::limits`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// `RATE_LIMIT_PER_ADDRESS` (and `_BURST`): requests per HTTP peer address, every route
    /// but /healthz; `None`: unlimited.
    pub per_caller: Option<Rate>,
    /// `RATE_LIMIT_PER_PAYER` (and `_BURST`): settlements per payer agent, counted once the
    /// signer is known to act for the payer; `None`: unlimited.
    pub per_payer: Option<Rate>,
    /// `MAX_WAITING_PER_PAYER`: settlements of one payer that may wait for its turn while
    /// another holds it; past it 429 `payer_busy`.
    pub max_waiting_per_payer: usize,
}

/// A resource server carries many payers through one address: 1 000 requests a second
/// (2 000 at once) is far above what one facilitator process serves on two cores, so the
/// limit only stops a caller that floods.
pub const DEFAULT_PER_CALLER: Rate = Rate {
    per_second: 1_000.0,
    burst: 2_000,
};
/// One payer's settlements run one at a time, each for about a confirmation (0.4 to 2 s on
/// a cluster): more than a few a second only queue. 10 a second, 20 at once.
pub const DEFAULT_PER_PAYER: Rate = Rate {
    per_second: 10.0,
    burst: 20,
};
/// 32 waiting settlements are 15 to 60 s of one payer's turns on a cluster, as long as a
/// request may run (60 s).
pub const DEFAULT_MAX_WAITING_PER_PAYER: usize = 32;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_caller: Some(DEFAULT_PER_CALLER),
            per_payer: Some(DEFAULT_PER_PAYER),
            max_waiting_per_payer: DEFAULT_MAX_WAITING_PER_PAYER,
        }
    }
}

/// What a payer's Redis lock outlives besides the send and the confirmation: the store's
/// own round trips while it is held (each cut at 2 s).
pub const LOCK_MARGIN: Duration = Duration::from_secs(5);

impl Config {
    pub fn new(mount: MountConfig) -> Self {
        Config {
            mount,
            trusted_services: Vec::new(),
            overrides: Overrides::default(),
            clock_skew: Duration::from_secs(30),
            confirm_timeout: Duration::from_secs(30),
            send_timeout: Duration::from_secs(10),
            redis_url: None,
            compute: ComputeCaps::default(),
            limits: Limits::default(),
            reclaim_interval: Some(DEFAULT_RECLAIM_INTERVAL),
            sessions: SessionSettings::default(),
            approvals: Default::default(),
            sponsor: Default::default(),
        }
    }
}

impl Config {
    /// How long a payer's Redis lock lives unless released: longer than a settlement can
    /// hold it, so that it expires only when its holder died. A settlement holds it for the
    /// reads before its send (cut at the send timeout), the send (cut there too), then the
    /// confirmation (cut at its timeout) or, after a refusal, a status read (the send
    /// timeout); the margin covers the store's own round trips. 55 s by default.
    pub fn lock_ttl(&self) -> Duration {
        self.send_timeout * 2 + self.confirm_timeout.max(self.send_timeout) + LOCK_MARGIN
    }
}

/// The raw settings, as strings from flags or the environment, before validation.
#[derive(Clone, Debug, Default)]
pub struct RawSettings {
    /// `RPC_URL`.
    pub rpc_url: String,
    /// `FACILITATOR_KEYPAIR`: a JSON keypair file, or the base58 64-byte secret key.
    pub keypair: Option<String>,
    /// `NETWORK`: solana-localnet | solana-devnet | solana-mainnet (or the short names).
    pub network: String,
    /// `ATOMICITY_ENFORCED`: must read `true` when set.
    pub atomicity_enforced: Option<String>,
    /// `DEFAULT_POLICY_ID`.
    pub default_policy_id: Option<String>,
    /// `TRUSTED_SERVICE_KEYS`: comma-separated base58 public keys.
    pub trusted_services: Option<String>,
    /// `MAX_COMPUTE_UNIT_PRICE`: micro-lamports per compute unit (default 5000000).
    pub max_compute_unit_price: Option<String>,
    /// `MAX_COMPUTE_UNIT_LIMIT`: the highest unit limit a co-signed transaction may request
    /// (default 400000).
    pub max_compute_unit_limit: Option<String>,
    /// `MAX_PRIORITY_FEE_LAMPORTS`: the highest priority fee of one co-signed transaction
    /// (default 100000).
    pub max_priority_fee_lamports: Option<String>,
    /// `COMPUTE_UNIT_LIMIT_MARGIN_PERCENT` (default and least 25) and
    /// `COMPUTE_UNIT_LIMIT_MARGIN_UNITS` (default and least 10000).
    pub compute_unit_limit_margin_percent: Option<String>,
    pub compute_unit_limit_margin_units: Option<String>,
    /// `RATE_LIMIT_PER_ADDRESS` (requests a second, default 1000; 0: off) and
    /// `RATE_LIMIT_PER_ADDRESS_BURST` (default 2000).
    pub rate_limit_per_address: Option<String>,
    pub rate_limit_per_address_burst: Option<String>,
    /// `RATE_LIMIT_PER_PAYER` (settlements a second, default 10; 0: off) and
    /// `RATE_LIMIT_PER_PAYER_BURST` (default 20).
    pub rate_limit_per_payer: Option<String>,
    pub rate_limit_per_payer_burst: Option<String>,
    /// `MAX_WAITING_PER_PAYER`: settlements of one payer waiting for its turn (default 32).
    pub max_waiting_per_payer: Option<String>,
    /// `REDIS_URL`: `redis://[user:password@]host[:port][/db]` or `redis+unix:///path`; the
    /// lock store that replicas share. Unset: in process (one replica).
    pub redis_url: Option<String>,
    /// `RECLAIM_INTERVAL_SECS`: how often the crank closes closable payment records
    /// (default 60; 0: never).
    pub reclaim_interval_secs: Option<String>,
    /// `KILL_SWITCH_POLL_MS`: how often the kill switches of the payers of open sessions are
    /// read (default 1000): the most a pause takes to stop their vouchers.
    pub kill_switch_poll_ms: Option<String>,
    /// `BATCH_REDEEM_AGE_SECS` (default 300) and `BATCH_REDEEM_AMOUNT` (atomic units,
    /// default 0: none): when a session's accepted vouchers are applied on chain before its
    /// close.
    pub batch_redeem_age_secs: Option<String>,
    pub batch_redeem_amount: Option<String>,
    /// `BATCH_MAX_IDLE_SECS` (default 604 800, a week; 0: never): a session with no voucher
    /// for this long is closed at its latest voucher.
    pub batch_max_idle_secs: Option<String>,
    /// `APPROVAL_PENDING_SECS` (default 86 400, a day; at most 604 800, an approval's
    /// longest life): how long a payment held for an approval is listed.
    pub approval_pending_secs: Option<String>,
    /// `APPROVALS_PER_PAYER` (default 16, 1..=256): the pending approvals kept per payer
    /// agent (past it, the one expiring first goes).
    pub approvals_per_payer: Option<String>,
    /// `BATCH_CHANNEL_POLL_SECS` (default 60, 1..=3600): the longest between two reads of a
    /// session's channel.
    pub batch_channel_poll_secs: Option<String>,
    /// `UPTO_CHANNELS_PER_PAYER` and `SESSIONS_PER_PAYER` (default 2 each, 1..=1000): the
    /// unclosed channels of one payer wallet the facilitator sponsors, per scheme.
    pub upto_channels_per_payer: Option<String>,
    pub sessions_per_payer: Option<String>,
    /// `MAX_RENT_ADVANCED_LAMPORTS` (default 10 000 000 000, 10 SOL): the channel rent
    /// advanced in all.
    pub max_rent_advanced_lamports: Option<String>,
    /// `MIN_FEE_PAYER_BALANCE_LAMPORTS` (default 50 000 000, 0.05 SOL): what the facilitator
    /// keeps for settlements; no channel is opened below it.
    pub min_fee_payer_balance_lamports: Option<String>,
    /// `PLAIN_ASSETS`: comma-separated mints the plain channel schemes take (default: the
    /// network's stock assets).
    pub plain_assets: Option<String>,
    /// `PLAIN_OFFERS_SIGNED` (`true`/`false`, default false): the plain channel schemes take
    /// only offers a trusted service signed.
    pub plain_offers_signed: Option<String>,
}

impl RawSettings {
    /// Validates every value; the first bad one is named.
    pub fn validate(&self) -> Result<Config, ConfigError> {
        let rpc_url = validate_rpc_url(&self.rpc_url)?;
        let network = Network::from_str(&self.network)
            .map_err(|e| ConfigError::new("NETWORK", e.to_string()))?;
        let keypair = self
            .keypair
            .as_deref()
            .ok_or_else(|| {
                ConfigError::new(
                    "FACILITATOR_KEYPAIR",
                    "required: the facilitator pays fees and signs settlements (a JSON keypair file or a base58 secret key)",
                )
            })
            .and_then(|k| parse_keypair("FACILITATOR_KEYPAIR", k))?;
        let atomicity_enforced = match self.atomicity_enforced.as_deref() {
            None => AtomicityEnforced::TRUE,
            Some(v) => AtomicityEnforced::from_env_value(v)
                .map_err(|e| ConfigError::new("ATOMICITY_ENFORCED", e.to_string()))?,
        };
        let default_policy_id = self
            .default_policy_id
            .as_deref()
            .map(|v| {
                v.parse::<u32>().map_err(|_| {
                    ConfigError::new(
                        "DEFAULT_POLICY_ID",
                        format!("{v:?} is not an integer 0..={}", u32::MAX),
                    )
                })
            })
            .transpose()?;
        let trusted_services = match self.trusted_services.as_deref() {
            None => Vec::new(),
            Some(list) => parse_pubkeys("TRUSTED_SERVICE_KEYS", list)?,
        };
        let compute = self.compute_caps()?;
        let limits = self.limits()?;
        let overrides =
            Overrides::from_env().map_err(|e| ConfigError::new("*_PROGRAM_ID", e.to_string()))?;
        let mut config = Config::new(MountConfig {
            rpc_url,
            facilitator: FacilitatorKey::Keypair(Arc::new(keypair)),
            network,
            atomicity_enforced,
            default_policy_id,
        });
        config.trusted_services = trusted_services;
        config.overrides = overrides;
        config.compute = compute;
        config.limits = limits;
        config.redis_url = self
            .redis_url
            .as_deref()
            .map(validate_redis_url)
            .transpose()?;
        if let Some(secs) = number(
            "RECLAIM_INTERVAL_SECS",
            &self.reclaim_interval_secs,
            "a whole number of seconds (0: never)",
            0..=86_400u64,
        )? {
            config.reclaim_interval = (secs > 0).then(|| Duration::from_secs(secs));
        }
        if let Some(ms) = number(
            "KILL_SWITCH_POLL_MS",
            &self.kill_switch_poll_ms,
            "a whole number of milliseconds",
            50..=60_000u64,
        )? {
            config.sessions.poll = Duration::from_millis(ms);
        }
        if let Some(secs) = number(
            "BATCH_REDEEM_AGE_SECS",
            &self.batch_redeem_age_secs,
            "a whole number of seconds",
            1..=86_400u64,
        )? {
            config.sessions.redeem_age = Duration::from_secs(secs);
        }
        if let Some(amount) = number(
            "BATCH_REDEEM_AMOUNT",
            &self.batch_redeem_amount,
            "a whole number of atomic units (0: none)",
            0..=u64::MAX,
        )? {
            config.sessions.redeem_amount = amount;
        }
        if let Some(secs) = number(
            "BATCH_MAX_IDLE_SECS",
            &self.batch_max_idle_secs,
            "a whole number of seconds (0: never)",
            0..=31_536_000u64,
        )? {
            config.sessions.max_idle = (secs > 0).then(|| Duration::from_secs(secs));
        }
        if let Some(secs) = number(
            "APPROVAL_PENDING_SECS",
            &self.approval_pending_secs,
            "a whole number of seconds, 1..=604800 (an approval lives a week at most)",
            1..=604_800u64,
        )? {
            config.approvals.pending = Duration::from_secs(secs);
        }
        if let Some(n) = number(
            "APPROVALS_PER_PAYER",
            &self.approvals_per_payer,
            "a whole number, 1..=256",
            1..=256u64,
        )? {
            config.approvals.per_payer = n as usize;
        }
        if let Some(secs) = number(
            "BATCH_CHANNEL_POLL_SECS",
            &self.batch_channel_poll_secs,
            "a whole number of seconds, 1..=3600",
            1..=3_600u64,
        )? {
            config.sessions.channel_poll = Duration::from_secs(secs);
        }
        self.sponsor(&mut config.sponsor)?;
        Ok(config)
    }
}

impl RawSettings {
    fn compute_caps(&self) -> Result<ComputeCaps, ConfigError> {
        let d = ComputeCaps::default();
        let caps = ComputeCaps {
            max_unit_price: number(
                "MAX_COMPUTE_UNIT_PRICE",
                &self.max_compute_unit_price,
                "a whole number of micro-lamports",
                0..=u64::MAX,
            )?
            .unwrap_or(d.max_unit_price),
            max_unit_limit: number(
                "MAX_COMPUTE_UNIT_LIMIT",
                &self.max_compute_unit_limit,
                "a whole number of compute units",
                1..=RUNTIME_MAX_UNIT_LIMIT,
            )?
            .unwrap_or(d.max_unit_limit),
            max_priority_fee_lamports: number(
                "MAX_PRIORITY_FEE_LAMPORTS",
                &self.max_priority_fee_lamports,
                "a whole number of lamports",
                0..=u64::MAX,
            )?
            .unwrap_or(d.max_priority_fee_lamports),
            // Below the defaults the paying clients' own limits (a few thousand units and up
            // to 10 % above use) would be refused.
            margin_percent: number(
                "COMPUTE_UNIT_LIMIT_MARGIN_PERCENT",
                &self.compute_unit_limit_margin_percent,
                "a whole percentage (the paying clients' limits need 25 or more)",
                MIN_MARGIN_PERCENT..=1_000,
            )?
            .unwrap_or(d.margin_percent),
            margin_units: number(
                "COMPUTE_UNIT_LIMIT_MARGIN_UNITS",
                &self.compute_unit_limit_margin_units,
                "a whole number of compute units (the paying clients' limits need 10000 or more)",
                MIN_MARGIN_UNITS..=RUNTIME_MAX_UNIT_LIMIT,
            )?
            .unwrap_or(d.margin_units),
        };
        Ok(caps)
    }

    /// The bounds on what the facilitator sponsors (see [`crate::service::sponsor`]).
    fn sponsor(&self, s: &mut crate::advances::SponsorSettings) -> Result<(), ConfigError> {
        for (variable, value, field) in [
            (
                "UPTO_CHANNELS_PER_PAYER",
                &self.upto_channels_per_payer,
                &mut s.upto_per_payer,
            ),
            (
                "SESSIONS_PER_PAYER",
                &self.sessions_per_payer,
                &mut s.sessions_per_payer,
            ),
        ] {
            if let Some(n) = number(
                variable,
                value,
                "a whole number of channels, 1..=1000",
                1..=1_000u64,
            )? {
                *field = n as usize;
            }
        }
        if let Some(n) = number(
            "MAX_RENT_ADVANCED_LAMPORTS",
            &self.max_rent_advanced_lamports,
            "a whole number of lamports",
            0..=u64::MAX,
        )? {
            s.max_rent_advanced = n;
        }
        if let Some(n) = number(
            "MIN_FEE_PAYER_BALANCE_LAMPORTS",
            &self.min_fee_payer_balance_lamports,
            "a whole number of lamports",
            0..=u64::MAX,
        )? {
            s.min_balance = n;
        }
        if let Some(list) = &self.plain_assets {
            let mints = parse_pubkeys("PLAIN_ASSETS", list)?;
            s.plain_assets = crate::advances::assets::PlainAssets::List(mints);
        }
        if let Some(v) = &self.plain_offers_signed {
            s.signed_plain_offers = match v.trim() {
                "true" | "1" => true,
                "false" | "0" | "" => false,
                other => {
                    return Err(ConfigError::new(
                        "PLAIN_OFFERS_SIGNED",
                        format!("{other:?}: true or false"),
                    ))
                }
            };
        }
        Ok(())
    }

    fn limits(&self) -> Result<Limits, ConfigError> {
        let d = Limits::default();
        Ok(Limits {
            per_caller: rate(
                ("RATE_LIMIT_PER_ADDRESS", &self.rate_limit_per_address),
                (
                    "RATE_LIMIT_PER_ADDRESS_BURST",
                    &self.rate_limit_per_address_burst,
                ),
                DEFAULT_PER_CALLER,
            )?,
            per_payer: rate(
                ("RATE_LIMIT_PER_PAYER", &self.rate_limit_per_payer),
                (
                    "RATE_LIMIT_PER_PAYER_BURST",
                    &self.rate_limit_per_payer_burst,
                ),
                DEFAULT_PER_PAYER,
            )?,
            max_waiting_per_payer: number(
                "MAX_WAITING_PER_PAYER",
                &self.max_waiting_per_payer,
                "a whole number of settlements",
                0..=100_000,
            )?
            .unwrap_or(d.max_waiting_per_payer),
        })
    }
}

/// The highest rate a limit may be set to, requests a second (a burst is bounded alike).
const MAX_RATE: f64 = 1_000_000.0;
/// The lowest rate above 0 (one request in 1 000 s).
const MIN_RATE: f64 = 0.001;

/// An optional whole number in `range`; the error names `variable` and says it must be
/// `what`.
fn number<T>(
    variable: &'static str,
    value: &Option<String>,
    what: &str,
    range: std::ops::RangeInclusive<T>,
) -> Result<Option<T>, ConfigError>
where
    T: FromStr + PartialOrd + std::fmt::Display,
{
    let Some(v) = value.as_deref().map(str::trim) else {
        return Ok(None);
    };
    match v.parse::<T>() {
        Ok(n) if range.contains(&n) => Ok(Some(n)),
        _ => Err(ConfigError::new(
            variable,
            format!("{v:?} is not {what} in {}..={}", range.start(), range.end()),
        )),
    }
}

/// A rate limit from its two variables: requests a second (0 turns it off) and the burst.
fn rate(
    (variable, value): (&'static str, &Option<String>),
    (burst_variable, burst): (&'static str, &Option<String>),
    default: Rate,
) -> Result<Option<Rate>, ConfigError> {
    let per_second = match value.as_deref().map(str::trim) {
        None => default.per_second,
        Some(v) => match v.parse::<f64>() {
            Ok(0.0) => return Ok(None),
            Ok(r) if (MIN_RATE..=MAX_RATE).contains(&r) => r,
            _ => {
                return Err(ConfigError::new(
                    variable,
                    format!(
                        "{v:?} is not a number of requests a second: 0 (no limit) or {MIN_RATE}..={MAX_RATE}"
                    ),
                ))
            }
        },
    };
    let burst = number(
        burst_variable,
        burst,
        "a whole number of requests",
        1..=MAX_RATE as u32,
    )?
    .unwrap_or(default.burst);
    Ok(Some(Rate { per_second, burst }))
}

/// `RPC_URL`: an `http://` or `https://` URL with a host. A refusal shows only its origin:
/// an RPC provider's API key often sits in the path or query.
pub fn validate_rpc_url(url: &str) -> Result<String, ConfigError> {
    validate_url("RPC_URL", url).map_err(|_| {
        ConfigError::new(
            "RPC_URL",
            format!(
                "{} is not an http:// or https:// URL with a host (its path and query are not shown)",
                crate::redact::origin(url)
            ),
        )
    })
}

/// A Redis URL the client can use (parsed, not connected).
pub fn validate_redis_url(url: &str) -> Result<String, ConfigError> {
    let url = url.trim();
    let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or_default();
    if !matches!(scheme, "redis" | "redis+unix" | "unix") {
        return Err(ConfigError::new(
            "REDIS_URL",
            format!(
                "{:?} is not a redis:// or redis+unix:// URL (TLS, rediss://, is not built in)",
                redact(url)
            ),
        ));
    }
    redis::Client::open(url)
        .map_err(|e| ConfigError::new("REDIS_URL", format!("{:?}: {e}", redact(url))))?;
    Ok(url.to_string())
}

/// `url` without its credentials, for messages.
fn redact(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, _)), Some(at)) => format!("{scheme}://***{}", &url[at..]),
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> RawSettings {
        RawSettings {
            rpc_url: "http://127.0.0.1:8899".into(),
            keypair: Some(Keypair::new().to_base58_string()),
            network: "localnet".into(),
            ..RawSettings::default()
        }
    }

    #[test]
    fn a_good_configuration_validates() {
        let c = settings().validate().unwrap();
        assert_eq!(c.mount.rpc_url, "http://127.0.0.1:8899");
        assert_eq!(c.mount.network, Network::Localnet);
        assert!(c.mount.atomicity_enforced.get());
        assert_eq!(c.compute, ComputeCaps::default());
        assert_eq!(c.compute.max_unit_price, DEFAULT_MAX_COMPUTE_UNIT_PRICE);
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.redis_url, None);
        let c = RawSettings {
            redis_url: Some("redis://127.0.0.1:6379/2".into()),
            ..settings()
        }
        .validate()
        .unwrap();
        assert_eq!(c.redis_url.as_deref(), Some("redis://127.0.0.1:6379/2"));
        // The lock outlives the settlement deadline it covers.
        assert!(c.lock_ttl() > c.send_timeout + c.confirm_timeout);
    }

    #[test]
    fn each_bad_value_names_its_variable() {
        let cases: Vec<(RawSettings, &str, &str)> = vec![
            (
                RawSettings {
                    rpc_url: "localhost:8899".into(),
                    ..settings()
                },
                "RPC_URL",
                "not an http",
            ),
            (
                RawSettings {
                    network: "solana-moon".into(),
                    ..settings()
                },
                "NETWORK",
                "solana-moon",
            ),
            (
                RawSettings {
                    keypair: None,
                    ..settings()
                },
                "FACILITATOR_KEYPAIR",
                "required",
            ),
            (
                RawSettings {
                    keypair: Some(bs58::encode([7u8; 32]).into_string()),
                    ..settings()
                },
                "FACILITATOR_KEYPAIR",
                "got 32",
            ),
            (
                RawSettings {
                    atomicity_enforced: Some("false".into()),
                    ..settings()
                },
                "ATOMICITY_ENFORCED",
                "boolean true",
            ),
            (
                RawSettings {
                    default_policy_id: Some("-1".into()),
                    ..settings()
                },
                "DEFAULT_POLICY_ID",
                "not an integer",
            ),
            (
                RawSettings {
                    trusted_services: Some("abc,0OIl".into()),
                    ..settings()
                },
                "TRUSTED_SERVICE_KEYS",
                "base58",
            ),
            (
                RawSettings {
                    max_compute_unit_price: Some("5 lamports".into()),
                    ..settings()
                },
                "MAX_COMPUTE_UNIT_PRICE",
                "micro-lamports",
            ),
            (
                RawSettings {
                    max_compute_unit_limit: Some("1400001".into()),
                    ..settings()
                },
                "MAX_COMPUTE_UNIT_LIMIT",
                "1..=1400000",
            ),
            (
                RawSettings {
                    max_compute_unit_limit: Some("0".into()),
                    ..settings()
                },
                "MAX_COMPUTE_UNIT_LIMIT",
                "compute units",
            ),
            (
                RawSettings {
                    max_priority_fee_lamports: Some("0.5".into()),
                    ..settings()
                },
                "MAX_PRIORITY_FEE_LAMPORTS",
                "lamports",
            ),
            (
                RawSettings {
                    compute_unit_limit_margin_percent: Some("10".into()),
                    ..settings()
                },
                "COMPUTE_UNIT_LIMIT_MARGIN_PERCENT",
                "25 or more",
            ),
            (
                RawSettings {
                    compute_unit_limit_margin_units: Some("3000".into()),
                    ..settings()
                },
                "COMPUTE_UNIT_LIMIT_MARGIN_UNITS",
                "10000 or more",
            ),
            (
                RawSettings {
                    rate_limit_per_address: Some("-1".into()),
                    ..settings()
                },
                "RATE_LIMIT_PER_ADDRESS",
                "requests a second",
            ),
            (
                RawSettings {
                    rate_limit_per_address_burst: Some("0".into()),
                    ..settings()
                },
                "RATE_LIMIT_PER_ADDRESS_BURST",
                "whole number of requests",
            ),
            (
                RawSettings {
                    rate_limit_per_payer: Some("NaN".into()),
                    ..settings()
                },
                "RATE_LIMIT_PER_PAYER",
                "requests a second",
            ),
            (
                RawSettings {
                    rate_limit_per_payer_burst: Some("lots".into()),
                    ..settings()
                },
                "RATE_LIMIT_PER_PAYER_BURST",
                "whole number",
            ),
            (
                RawSettings {
                    max_waiting_per_payer: Some("-3".into()),
                    ..settings()
                },
                "MAX_WAITING_PER_PAYER",
                "settlements",
            ),
            (
                RawSettings {
                    rpc_url: "localhost:8899/secret-key?api-key=abc".into(),
                    ..settings()
                },
                "RPC_URL",
                "localhost:8899 is not an http",
            ),
            (
                RawSettings {
                    redis_url: Some("rediss://user:secret@cache:6380".into()),
                    ..settings()
                },
                "REDIS_URL",
                "rediss://***@cache:6380",
            ),
            (
                RawSettings {
                    redis_url: Some("127.0.0.1:6379".into()),
                    ..settings()
                },
                "REDIS_URL",
                "not a redis://",
            ),
            (
                RawSettings {
                    redis_url: Some("redis://127.0.0.1:notaport".into()),
                    ..settings()
                },
                "REDIS_URL",
                "notaport",
            ),
        ];
        for (s, var, text) in cases {
            let err = s.validate().unwrap_err();
            assert_eq!(err.variable, var, "{err}");
            assert!(err.to_string().contains(text), "{err}");
            assert!(!err.to_string().contains("secret-key"), "{err}");
        }
    }

    #[test]
    fn caps_and_limits_read_from_their_variables() {
        let c = RawSettings {
            max_compute_unit_price: Some("1000".into()),
            max_compute_unit_limit: Some("250000".into()),
            max_priority_fee_lamports: Some("0".into()),
            compute_unit_limit_margin_percent: Some("50".into()),
            compute_unit_limit_margin_units: Some("20000".into()),
            rate_limit_per_address: Some("0".into()),
            rate_limit_per_payer: Some("0.5".into()),
            rate_limit_per_payer_burst: Some("3".into()),
            max_waiting_per_payer: Some("0".into()),
            ..settings()
        }
        .validate()
        .unwrap();
        assert_eq!(
            c.compute,
            ComputeCaps {
                max_unit_price: 1_000,
                max_unit_limit: 250_000,
                max_priority_fee_lamports: 0,
                margin_percent: 50,
                margin_units: 20_000,
            }
        );
        assert_eq!(
            c.limits,
            Limits {
                per_caller: None,
                per_payer: Some(Rate {
                    per_second: 0.5,
                    burst: 3
                }),
                max_waiting_per_payer: 0,
            }
        );
    }
}
