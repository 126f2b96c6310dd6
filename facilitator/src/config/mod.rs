//! Configuration: the typed config of the mountable router and of the facilitator server,
//! and its validation from flags or environment variables with errors that name the
//! variable. The value types other modules act on (the compute-budget caps, the rate limits)
//! live here, below them.

mod raw;

pub use raw::RawSettings;

use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
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
    /// Whether the crank pulls the gated subscriptions this facilitator sends when a pull is
    /// due (`PULL_SUBSCRIPTIONS`; off by default, on in `trust-gate up`).
    pub pull_subscriptions: bool,
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
            pull_subscriptions: false,
            sessions: SessionSettings::default(),
            approvals: Default::default(),
            sponsor: Default::default(),
        }
    }

    /// How long a payer's Redis lock lives unless released: longer than a settlement can
    /// hold it, so that it expires only when its holder died. A settlement holds it for the
    /// reads before its send (cut at the send timeout), the send (cut there too), then the
    /// confirmation (cut at its timeout) or, after a refusal, a status read (the send
    /// timeout); the margin covers the store's own round trips. 55 s by default.
    pub fn lock_ttl(&self) -> Duration {
        self.send_timeout * 2 + self.confirm_timeout.max(self.send_timeout) + LOCK_MARGIN
    }
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
    fn pulling_subscriptions_is_off_unless_asked_and_a_bad_flag_is_named() {
        assert!(!settings().validate().unwrap().pull_subscriptions);
        for (value, pull) in [("true", true), ("1", true), ("false", false), ("", false)] {
            let c = RawSettings {
                pull_subscriptions: Some(value.into()),
                ..settings()
            };
            assert_eq!(c.validate().unwrap().pull_subscriptions, pull, "{value:?}");
        }
        let bad = RawSettings {
            pull_subscriptions: Some("yes".into()),
            ..settings()
        }
        .validate()
        .unwrap_err();
        assert_eq!(bad.variable, "PULL_SUBSCRIPTIONS");
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
