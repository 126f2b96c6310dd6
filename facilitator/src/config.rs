//! Configuration: the typed config of the mountable router and of the facilitator server,
//! and its validation from flags or environment variables with errors that name the
//! variable.

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
    /// The highest compute-unit price (micro-lamports) of a settlement's priority fee that
    /// this facilitator co-pays as fee payer.
    pub max_compute_unit_price: u64,
}

/// What a payer's Redis lock outlives besides the send and the confirmation: the store's
/// own round trips while it is held (each cut at 2 s).
pub const LOCK_MARGIN: Duration = Duration::from_secs(5);

/// The default cap on a settlement's compute-unit price: the x402 exact scheme's on Solana,
/// 5 lamports per compute unit.
pub const DEFAULT_MAX_COMPUTE_UNIT_PRICE: u64 = 5_000_000;

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
            max_compute_unit_price: DEFAULT_MAX_COMPUTE_UNIT_PRICE,
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
pub struct Settings {
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
    /// `REDIS_URL`: `redis://[user:password@]host[:port][/db]` or `redis+unix:///path`; the
    /// lock store that replicas share. Unset: in process (one replica).
    pub redis_url: Option<String>,
}

impl Settings {
    /// Validates every value; the first bad one is named.
    pub fn validate(&self) -> Result<Config, ConfigError> {
        let rpc_url = validate_url("RPC_URL", &self.rpc_url)?;
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
        let max_compute_unit_price = self
            .max_compute_unit_price
            .as_deref()
            .map(|v| {
                v.parse::<u64>().map_err(|_| {
                    ConfigError::new(
                        "MAX_COMPUTE_UNIT_PRICE",
                        format!("{v:?} is not a whole number of micro-lamports"),
                    )
                })
            })
            .transpose()?
            .unwrap_or(DEFAULT_MAX_COMPUTE_UNIT_PRICE);
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
        config.max_compute_unit_price = max_compute_unit_price;
        config.redis_url = self
            .redis_url
            .as_deref()
            .map(validate_redis_url)
            .transpose()?;
        Ok(config)
    }
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

    fn settings() -> Settings {
        Settings {
            rpc_url: "http://127.0.0.1:8899".into(),
            keypair: Some(Keypair::new().to_base58_string()),
            network: "localnet".into(),
            ..Settings::default()
        }
    }

    #[test]
    fn a_good_configuration_validates() {
        let c = settings().validate().unwrap();
        assert_eq!(c.mount.rpc_url, "http://127.0.0.1:8899");
        assert_eq!(c.mount.network, Network::Localnet);
        assert!(c.mount.atomicity_enforced.get());
        assert_eq!(c.max_compute_unit_price, DEFAULT_MAX_COMPUTE_UNIT_PRICE);
        assert_eq!(c.redis_url, None);
        let c = Settings {
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
        let cases: Vec<(Settings, &str, &str)> = vec![
            (
                Settings {
                    rpc_url: "localhost:8899".into(),
                    ..settings()
                },
                "RPC_URL",
                "not an http",
            ),
            (
                Settings {
                    network: "solana-moon".into(),
                    ..settings()
                },
                "NETWORK",
                "solana-moon",
            ),
            (
                Settings {
                    keypair: None,
                    ..settings()
                },
                "FACILITATOR_KEYPAIR",
                "required",
            ),
            (
                Settings {
                    keypair: Some(bs58::encode([7u8; 32]).into_string()),
                    ..settings()
                },
                "FACILITATOR_KEYPAIR",
                "got 32",
            ),
            (
                Settings {
                    atomicity_enforced: Some("false".into()),
                    ..settings()
                },
                "ATOMICITY_ENFORCED",
                "boolean true",
            ),
            (
                Settings {
                    default_policy_id: Some("-1".into()),
                    ..settings()
                },
                "DEFAULT_POLICY_ID",
                "not an integer",
            ),
            (
                Settings {
                    trusted_services: Some("abc,0OIl".into()),
                    ..settings()
                },
                "TRUSTED_SERVICE_KEYS",
                "base58",
            ),
            (
                Settings {
                    max_compute_unit_price: Some("5 lamports".into()),
                    ..settings()
                },
                "MAX_COMPUTE_UNIT_PRICE",
                "micro-lamports",
            ),
            (
                Settings {
                    redis_url: Some("rediss://user:secret@cache:6380".into()),
                    ..settings()
                },
                "REDIS_URL",
                "rediss://***@cache:6380",
            ),
            (
                Settings {
                    redis_url: Some("127.0.0.1:6379".into()),
                    ..settings()
                },
                "REDIS_URL",
                "not a redis://",
            ),
            (
                Settings {
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
        }
    }
}
