//! The raw settings, as strings from flags or the environment, and their validation into a
//! [`Config`]: every bad value is refused naming its variable.

use super::{
    validate_redis_url, validate_rpc_url, Config, FacilitatorKey, MountConfig, Rate,
    DEFAULT_PER_CALLER, DEFAULT_PER_PAYER, MIN_MARGIN_PERCENT, MIN_MARGIN_UNITS,
    RUNTIME_MAX_UNIT_LIMIT,
};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use trust_gate_client::env::{parse_keypair, parse_pubkeys, ConfigError};
use trust_gate_client::{AtomicityEnforced, Network, Overrides};

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
    /// `PULL_SUBSCRIPTIONS` (`true`/`false`, default false): the crank pulls the gated
    /// subscriptions this facilitator sends when a pull is due.
    pub pull_subscriptions: Option<String>,
}

/// A `true`/`false` setting (also `1`/`0`; empty is false), naming `variable` when it is
/// neither.
fn flag(variable: &'static str, value: &Option<String>) -> Result<Option<bool>, ConfigError> {
    let Some(v) = value else { return Ok(None) };
    match v.trim() {
        "true" | "1" => Ok(Some(true)),
        "false" | "0" | "" => Ok(Some(false)),
        other => Err(ConfigError::new(
            variable,
            format!("{other:?}: true or false"),
        )),
    }
}

/// Reads optional whole numbers in order: each `variable`, from `value`, must be `what` in
/// `range` (see [`number`]); when it is set, `|n| assignment` stores it.
macro_rules! whole_numbers {
    ($($variable:literal, $value:expr, $what:literal, $range:expr => |$n:ident| $set:expr;)*) => {
        $(if let Some($n) = number($variable, &$value, $what, $range)? {
            $set;
        })*
    };
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
        let mut config = Config::new(MountConfig {
            rpc_url,
            facilitator: FacilitatorKey::Keypair(Arc::new(keypair)),
            network,
            atomicity_enforced,
            default_policy_id,
        });
        if let Some(list) = &self.trusted_services {
            config.trusted_services = parse_pubkeys("TRUSTED_SERVICE_KEYS", list)?;
        }
        let compute = &mut config.compute;
        whole_numbers! {
            "MAX_COMPUTE_UNIT_PRICE", self.max_compute_unit_price,
                "a whole number of micro-lamports", 0..=u64::MAX => |n| compute.max_unit_price = n;
            "MAX_COMPUTE_UNIT_LIMIT", self.max_compute_unit_limit,
                "a whole number of compute units", 1..=RUNTIME_MAX_UNIT_LIMIT
                => |n| compute.max_unit_limit = n;
            "MAX_PRIORITY_FEE_LAMPORTS", self.max_priority_fee_lamports,
                "a whole number of lamports", 0..=u64::MAX
                => |n| compute.max_priority_fee_lamports = n;
            // Below the defaults the paying clients' own limits (a few thousand units and up
            // to 10 % above use) would be refused.
            "COMPUTE_UNIT_LIMIT_MARGIN_PERCENT", self.compute_unit_limit_margin_percent,
                "a whole percentage (the paying clients' limits need 25 or more)",
                MIN_MARGIN_PERCENT..=1_000 => |n| compute.margin_percent = n;
            "COMPUTE_UNIT_LIMIT_MARGIN_UNITS", self.compute_unit_limit_margin_units,
                "a whole number of compute units (the paying clients' limits need 10000 or more)",
                MIN_MARGIN_UNITS..=RUNTIME_MAX_UNIT_LIMIT => |n| compute.margin_units = n;
        }
        let s = self;
        config.limits.per_caller = rate(
            ("RATE_LIMIT_PER_ADDRESS", &s.rate_limit_per_address),
            (
                "RATE_LIMIT_PER_ADDRESS_BURST",
                &s.rate_limit_per_address_burst,
            ),
            DEFAULT_PER_CALLER,
        )?;
        config.limits.per_payer = rate(
            ("RATE_LIMIT_PER_PAYER", &s.rate_limit_per_payer),
            ("RATE_LIMIT_PER_PAYER_BURST", &s.rate_limit_per_payer_burst),
            DEFAULT_PER_PAYER,
        )?;
        whole_numbers! {
            "MAX_WAITING_PER_PAYER", self.max_waiting_per_payer,
                "a whole number of settlements", 0..=100_000
                => |n| config.limits.max_waiting_per_payer = n;
        }
        config.overrides =
            Overrides::from_env().map_err(|e| ConfigError::new("*_PROGRAM_ID", e.to_string()))?;
        config.redis_url = self
            .redis_url
            .as_deref()
            .map(validate_redis_url)
            .transpose()?;
        let (sessions, sponsor) = (&mut config.sessions, &mut config.sponsor);
        whole_numbers! {
            "RECLAIM_INTERVAL_SECS", self.reclaim_interval_secs,
                "a whole number of seconds (0: never)", 0..=86_400u64
                => |secs| config.reclaim_interval = (secs > 0).then(|| Duration::from_secs(secs));
            "KILL_SWITCH_POLL_MS", self.kill_switch_poll_ms,
                "a whole number of milliseconds", 50..=60_000u64
                => |ms| sessions.poll = Duration::from_millis(ms);
            "BATCH_REDEEM_AGE_SECS", self.batch_redeem_age_secs,
                "a whole number of seconds", 1..=86_400u64
                => |secs| sessions.redeem_age = Duration::from_secs(secs);
            "BATCH_REDEEM_AMOUNT", self.batch_redeem_amount,
                "a whole number of atomic units (0: none)", 0..=u64::MAX
                => |amount| sessions.redeem_amount = amount;
            "BATCH_MAX_IDLE_SECS", self.batch_max_idle_secs,
                "a whole number of seconds (0: never)", 0..=31_536_000u64
                => |secs| sessions.max_idle = (secs > 0).then(|| Duration::from_secs(secs));
            "APPROVAL_PENDING_SECS", self.approval_pending_secs,
                "a whole number of seconds, 1..=604800 (an approval lives a week at most)",
                1..=604_800u64 => |secs| config.approvals.pending = Duration::from_secs(secs);
            "APPROVALS_PER_PAYER", self.approvals_per_payer,
                "a whole number, 1..=256", 1..=256usize => |n| config.approvals.per_payer = n;
            "BATCH_CHANNEL_POLL_SECS", self.batch_channel_poll_secs,
                "a whole number of seconds, 1..=3600", 1..=3_600u64
                => |secs| sessions.channel_poll = Duration::from_secs(secs);
            // The bounds on what the facilitator sponsors (see [`crate::service::sponsor`]).
            "UPTO_CHANNELS_PER_PAYER", self.upto_channels_per_payer,
                "a whole number of channels, 1..=1000", 1..=1_000usize
                => |n| sponsor.upto_per_payer = n;
            "SESSIONS_PER_PAYER", self.sessions_per_payer,
                "a whole number of channels, 1..=1000", 1..=1_000usize
                => |n| sponsor.sessions_per_payer = n;
            "MAX_RENT_ADVANCED_LAMPORTS", self.max_rent_advanced_lamports,
                "a whole number of lamports", 0..=u64::MAX => |n| sponsor.max_rent_advanced = n;
            "MIN_FEE_PAYER_BALANCE_LAMPORTS", self.min_fee_payer_balance_lamports,
                "a whole number of lamports", 0..=u64::MAX => |n| sponsor.min_balance = n;
        }
        if let Some(list) = &self.plain_assets {
            let mints = parse_pubkeys("PLAIN_ASSETS", list)?;
            sponsor.plain_assets = crate::advances::assets::PlainAssets::List(mints);
        }
        if let Some(signed) = flag("PLAIN_OFFERS_SIGNED", &self.plain_offers_signed)? {
            sponsor.signed_plain_offers = signed;
        }
        if let Some(pull) = flag("PULL_SUBSCRIPTIONS", &self.pull_subscriptions)? {
            config.pull_subscriptions = pull;
        }
        Ok(config)
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
