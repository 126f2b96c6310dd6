//! The server's configuration from environment variables (the table in the crate docs),
//! validated at boot with errors that name the variable.

use crate::egress::{Allowed, Egress};
use crate::signer::{self, SignerSource};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use std::net::IpAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use trust_gate_client::env::{validate_url, ConfigError, DEVNET_RPC_URL};
use trust_gate_client::{Network, Overrides, ProgramIds};

/// The default port of the streamable HTTP transport.
pub const DEFAULT_HTTP_PORT: u16 = 8765;
/// Sessions idle this long are evicted.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);
/// How long one of `gate_pay`'s HTTP requests may take.
pub const DEFAULT_PAY_TIMEOUT: Duration = Duration::from_secs(30);
/// The browser origins a server with a signer always answers: pages of its own machine.
pub const LOOPBACK_ORIGINS: [&str; 3] =
    ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];
/// The most bytes of a resource's answer `gate_pay` reads.
pub const DEFAULT_PAY_MAX_RESPONSE_BYTES: usize = 1 << 20;
/// The fewest characters of `MCP_BEARER_TOKEN`: 32 hex digits are 128 random bits, beyond
/// guessing over a network.
pub const MIN_BEARER_TOKEN_LEN: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// Everything the server needs, validated.
#[derive(Clone, Debug)]
pub struct Config {
    pub rpc_url: String,
    pub network: Network,
    /// trust-gate's program ids (the system program as a sentinel on mainnet without
    /// overrides) and the registry/engine ids of the network.
    pub ids: ProgramIds,
    /// The `*_PROGRAM_ID` overrides of `ids` (the paying clients build ids per offer).
    pub overrides: Overrides,
    /// The one boot warning for mainnet without overrides.
    pub warning: Option<String>,
    /// The signer of write tools, when one was found, and where it came from.
    pub signer: Option<(Arc<Keypair>, SignerSource)>,
    pub transport: Transport,
    pub http_host: IpAddr,
    pub http_port: u16,
    /// `MCP_DEFAULT_FACILITATOR`: the facilitator whose feedback logs reads default to.
    pub default_facilitator: Option<Pubkey>,
    /// `MCP_DOCS_DIR`: a docs corpus on disk instead of the bundled one.
    pub docs_dir: Option<PathBuf>,
    /// `DEMO_STATE_FILE`: a demo state JSON file instead of the bundled demo world.
    pub demo_state_file: Option<PathBuf>,
    /// `MCP_SESSION_IDLE_SECS`: idle HTTP sessions are evicted after this long.
    pub session_idle: Duration,
    /// The public URLs of a running facilitator and demo (set by `trust-gate up`), shown by
    /// `gate_demo_state`; the facilitator (`MCP_FACILITATOR_URL`) is also where
    /// `gate_list_approvals` and `gate_approve` read the payments held for an approval.
    pub facilitator_url: Option<String>,
    /// `MCP_DEMO_URL`: the demo resource server; on a localnet, `gate_pay` may request it.
    pub demo_url: Option<String>,
    /// `MCP_PAY_ALLOW`: the non-public hosts and networks `gate_pay` may request.
    pub pay_allow: Vec<Allowed>,
    /// `MCP_PAY_TIMEOUT_SECS`.
    pub pay_timeout: Duration,
    /// `MCP_PAY_MAX_RESPONSE_BYTES`.
    pub pay_max_response_bytes: usize,
    /// The browser origins a server with a signer answers: loopback ones and
    /// `MCP_ALLOWED_ORIGINS`.
    pub allowed_origins: Vec<String>,
    /// `MCP_BEARER_TOKEN`: when set, every HTTP request to the MCP endpoint must carry it.
    pub bearer_token: Option<BearerToken>,
}

/// The secret every HTTP request carries as `Authorization: Bearer <token>` when
/// `MCP_BEARER_TOKEN` is set. Never shown: `Debug` prints no part of it.
#[derive(Clone)]
pub struct BearerToken(String);

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl BearerToken {
    /// `MCP_BEARER_TOKEN`'s value: at least [`MIN_BEARER_TOKEN_LEN`] printable ASCII
    /// characters without spaces (it is sent in an HTTP header); spaces around it are dropped.
    pub fn parse(value: &str) -> Result<BearerToken, ConfigError> {
        const VAR: &str = "MCP_BEARER_TOKEN";
        let v = value.trim();
        if v.is_empty() {
            return Err(ConfigError::new(
                VAR,
                format!(
                    "is set but empty: unset it, or give a token of at least \
                     {MIN_BEARER_TOKEN_LEN} characters (say `openssl rand -hex 32`)"
                ),
            ));
        }
        if !v.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ConfigError::new(
                VAR,
                "must be printable ASCII without spaces: it is sent in an HTTP header",
            ));
        }
        if v.len() < MIN_BEARER_TOKEN_LEN {
            return Err(ConfigError::new(
                VAR,
                format!(
                    "is {} characters: give at least {MIN_BEARER_TOKEN_LEN} (say `openssl rand \
                     -hex 32`)",
                    v.len()
                ),
            ));
        }
        Ok(BearerToken(v.to_string()))
    }

    /// Whether `presented` is this token, in time that does not depend on where they differ
    /// (or on their lengths): both are hashed, and the digests compared in constant time.
    pub fn matches(&self, presented: &str) -> bool {
        use sha2::{Digest, Sha256};
        use subtle::ConstantTimeEq;
        let want = Sha256::digest(self.0.as_bytes());
        let got = Sha256::digest(presented.as_bytes());
        want.ct_eq(&got).into()
    }
}

impl Config {
    /// Reads the process environment; `home` is where the Solana CLI's default keypair is
    /// looked for (`~/.config/solana/id.json`).
    pub fn from_env() -> Result<Config, ConfigError> {
        Self::from_vars(
            |k| std::env::var(k).ok(),
            std::env::var_os("HOME").map(PathBuf::from),
        )
    }

    /// Reads the configuration through `var` (tests pass a map).
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
        home: Option<PathBuf>,
    ) -> Result<Config, ConfigError> {
        let get = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let rpc_url = validate_url(
            "RPC_URL",
            &get("RPC_URL").unwrap_or_else(|| DEVNET_RPC_URL.into()),
        )?;
        let network = Network::from_str(&get("NETWORK").unwrap_or_else(|| "solana-devnet".into()))
            .map_err(|e| ConfigError::new("NETWORK", e.to_string()))?;
        let overrides = Overrides::from_env_with(get)
            .map_err(|e| ConfigError::new(override_var(&e), e.to_string()))?;
        let ids = ProgramIds::for_network(network).with_overrides(overrides);
        let warning = (network == Network::Mainnet && !ids.all_configured()).then(|| {
            "trust-gate's programs have no mainnet deployment: policy_vault, gate and \
             validation_registry are set to the system program as a sentinel, so tools that \
             need them answer config_error; reputation reads use the mainnet engine. Set \
             POLICY_VAULT_PROGRAM_ID, GATE_PROGRAM_ID and VALIDATION_REGISTRY_PROGRAM_ID to \
             use your own deployment."
                .to_string()
        });
        let signer = signer::resolve(&get, home.as_deref())?;
        let transport = match get("MCP_TRANSPORT").as_deref().map(str::trim) {
            None | Some("stdio") => Transport::Stdio,
            Some("http") => Transport::Http,
            Some(other) => {
                return Err(ConfigError::new(
                    "MCP_TRANSPORT",
                    format!("{other:?}: expected stdio or http"),
                ))
            }
        };
        let http_host = parse_or(
            "MCP_HTTP_HOST",
            get("MCP_HTTP_HOST"),
            IpAddr::from([127, 0, 0, 1]),
        )?;
        let http_port = parse_or("MCP_HTTP_PORT", get("MCP_HTTP_PORT"), DEFAULT_HTTP_PORT)?;
        let default_facilitator = get("MCP_DEFAULT_FACILITATOR")
            .map(|v| {
                Pubkey::from_str(v.trim()).map_err(|_| {
                    ConfigError::new(
                        "MCP_DEFAULT_FACILITATOR",
                        format!("{v:?} is not a base58 public key"),
                    )
                })
            })
            .transpose()?;
        let docs_dir = get("MCP_DOCS_DIR").map(PathBuf::from);
        let demo_state_file = get("DEMO_STATE_FILE").map(PathBuf::from);
        let idle_secs: u64 = parse_or(
            "MCP_SESSION_IDLE_SECS",
            get("MCP_SESSION_IDLE_SECS"),
            DEFAULT_SESSION_IDLE.as_secs(),
        )?;
        if idle_secs == 0 {
            return Err(ConfigError::new(
                "MCP_SESSION_IDLE_SECS",
                "must be at least 1",
            ));
        }
        let facilitator_url = get("MCP_FACILITATOR_URL")
            .map(|u| validate_url("MCP_FACILITATOR_URL", &u))
            .transpose()?;
        let demo_url = get("MCP_DEMO_URL")
            .map(|u| validate_url("MCP_DEMO_URL", &u))
            .transpose()?;
        let pay_allow = get("MCP_PAY_ALLOW")
            .map(|list| {
                list.split(',')
                    .filter(|e| !e.trim().is_empty())
                    .map(Allowed::parse)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| ConfigError::new("MCP_PAY_ALLOW", e))
            })
            .transpose()?
            .unwrap_or_default();
        let pay_timeout: u64 = parse_or(
            "MCP_PAY_TIMEOUT_SECS",
            get("MCP_PAY_TIMEOUT_SECS"),
            DEFAULT_PAY_TIMEOUT.as_secs(),
        )?;
        if !(1..=600).contains(&pay_timeout) {
            return Err(ConfigError::new(
                "MCP_PAY_TIMEOUT_SECS",
                format!("{pay_timeout}: must be 1..=600"),
            ));
        }
        let pay_max_response_bytes: usize = parse_or(
            "MCP_PAY_MAX_RESPONSE_BYTES",
            get("MCP_PAY_MAX_RESPONSE_BYTES"),
            DEFAULT_PAY_MAX_RESPONSE_BYTES,
        )?;
        if !(1024..=(64 << 20)).contains(&pay_max_response_bytes) {
            return Err(ConfigError::new(
                "MCP_PAY_MAX_RESPONSE_BYTES",
                format!("{pay_max_response_bytes}: must be 1024..=67108864"),
            ));
        }
        let mut allowed_origins: Vec<String> =
            LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect();
        for o in get("MCP_ALLOWED_ORIGINS")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
        {
            let ok = o == "null"
                || reqwest::Url::parse(o).is_ok_and(|u| {
                    matches!(u.scheme(), "http" | "https") && u.host().is_some() && u.path() == "/"
                })
                || o.ends_with(":*") && reqwest::Url::parse(&o.replace(":*", "")).is_ok();
            if !ok {
                return Err(ConfigError::new(
                    "MCP_ALLOWED_ORIGINS",
                    format!("{o:?} is not an origin (scheme://host[:port], :* for any port)"),
                ));
            }
            allowed_origins.push(o.to_string());
        }
        // Read as given: a variable set to nothing was meant to protect the server, so it is
        // refused rather than taken as unset.
        let bearer_token = var("MCP_BEARER_TOKEN")
            .map(|v| BearerToken::parse(&v))
            .transpose()?;
        Ok(Config {
            rpc_url,
            network,
            ids,
            overrides,
            warning,
            signer,
            transport,
            http_host,
            http_port,
            default_facilitator,
            docs_dir,
            demo_state_file,
            session_idle: Duration::from_secs(idle_secs),
            facilitator_url,
            demo_url,
            pay_allow,
            pay_timeout: Duration::from_secs(pay_timeout),
            pay_max_response_bytes,
            allowed_origins,
            bearer_token,
        })
    }

    /// Whether this server may listen on `host`. One holding a signer signs and pays for
    /// whoever calls its write tools, and the Origin check stops only browsers: beyond
    /// loopback it needs `MCP_BEARER_TOKEN`. A read-only server may listen anywhere.
    pub fn check_exposure(&self, host: IpAddr) -> Result<(), ConfigError> {
        if self.signer.is_none() || self.bearer_token.is_some() || host.to_canonical().is_loopback()
        {
            return Ok(());
        }
        Err(ConfigError::new(
            "MCP_BEARER_TOKEN",
            format!(
                "a server holding a signer (its write tools sign and pay with its key) may \
                 listen on {host}, which is not loopback, only with a bearer token: set \
                 MCP_BEARER_TOKEN (at least {MIN_BEARER_TOKEN_LEN} characters; clients send \
                 `Authorization: Bearer <token>`) and serve it behind TLS, or set MCP_HTTP_HOST \
                 to a loopback address (127.0.0.1), or run without a signer"
            ),
        ))
    }

    /// Where `gate_pay` may send requests: the public internet, the allow list, and on a
    /// localnet the demo resource server.
    pub fn egress(&self) -> Egress {
        let mut allow = self.pay_allow.clone();
        if self.network == Network::Localnet {
            if let Some(demo) = self
                .demo_url
                .as_deref()
                .and_then(|u| reqwest::Url::parse(u).ok())
            {
                if let Some(host) = demo.host_str() {
                    let host = host.trim_start_matches('[').trim_end_matches(']');
                    allow.push(Allowed::Host {
                        host: host.to_ascii_lowercase(),
                        port: demo.port_or_known_default(),
                    });
                }
            }
        }
        Egress {
            allow: Arc::new(allow),
            timeout: self.pay_timeout,
            max_response_bytes: self.pay_max_response_bytes,
        }
    }
}

fn override_var(e: &trust_gate_client::ClientError) -> &'static str {
    match e {
        trust_gate_client::ClientError::InvalidInput { field, .. } => {
            trust_gate_client::Program::ALL
                .iter()
                .map(|p| p.override_var())
                .find(|v| v == field)
                .unwrap_or("POLICY_VAULT_PROGRAM_ID")
        }
        _ => "POLICY_VAULT_PROGRAM_ID",
    }
}

fn parse_or<T: FromStr>(
    variable: &'static str,
    value: Option<String>,
    default: T,
) -> Result<T, ConfigError>
where
    T::Err: std::fmt::Display,
{
    match value {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|e| ConfigError::new(variable, format!("{v:?}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let vars: std::collections::HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_vars(|k| vars.get(k).cloned(), None)
    }

    #[test]
    fn a_bearer_token_is_checked_named_and_never_shown() {
        for bad in [
            "",
            "  ",
            "short",
            "0123456789abcdef 0123456789abcdef",
            "é".repeat(32).as_str(),
        ] {
            let e = config(&[("MCP_BEARER_TOKEN", bad)]).unwrap_err();
            assert_eq!(e.variable, "MCP_BEARER_TOKEN", "{bad:?}");
        }
        let c = config(&[("MCP_BEARER_TOKEN", &format!(" {TOKEN}\n"))]).unwrap();
        let token = c.bearer_token.clone().unwrap();
        assert!(token.matches(TOKEN));
        assert!(!token.matches(&TOKEN[1..]));
        assert!(!token.matches(&format!("{TOKEN}0")));
        assert!(!token.matches(""));
        assert!(!format!("{c:?}").contains(TOKEN));
        assert!(config(&[]).unwrap().bearer_token.is_none());
    }

    #[test]
    fn a_signer_listens_beyond_loopback_only_with_a_token() {
        let key = Keypair::new().to_base58_string();
        let signer = config(&[("KEYPAIR_B58", &key)]).unwrap();
        let with_token = config(&[("KEYPAIR_B58", &key), ("MCP_BEARER_TOKEN", TOKEN)]).unwrap();
        let read_only = config(&[]).unwrap();
        let everywhere: IpAddr = "0.0.0.0".parse().unwrap();
        let e = signer.check_exposure(everywhere).unwrap_err().to_string();
        assert!(
            e.contains("MCP_BEARER_TOKEN") && e.contains("MCP_HTTP_HOST"),
            "{e}"
        );
        assert!(signer.check_exposure("10.0.0.5".parse().unwrap()).is_err());
        assert!(signer.check_exposure("::".parse().unwrap()).is_err());
        for loopback in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
            assert!(
                signer.check_exposure(loopback.parse().unwrap()).is_ok(),
                "{loopback}"
            );
        }
        assert!(with_token.check_exposure(everywhere).is_ok());
        assert!(read_only.check_exposure(everywhere).is_ok());
    }
}
