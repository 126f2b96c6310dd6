//! Configuration values read from environment variables or flags, validated with errors that
//! name the variable to fix. Shared by the facilitator and the MCP server.

use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{read_keypair_file, Keypair};
use std::path::Path;
use std::str::FromStr;

/// The public devnet JSON-RPC endpoint, the default when `RPC_URL` is unset.
pub const DEVNET_RPC_URL: &str = "https://api.devnet.solana.com";

/// A configuration value that cannot be used; `variable` is the environment variable (or
/// flag) to fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: {reason}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub reason: String,
}

impl ConfigError {
    pub fn new(variable: &'static str, reason: impl Into<String>) -> Self {
        ConfigError {
            variable,
            reason: reason.into(),
        }
    }
}

/// An `http://` or `https://` URL with a host; the trailing slash is dropped.
pub fn validate_url(variable: &'static str, v: &str) -> Result<String, ConfigError> {
    let v = v.trim();
    let rest = v
        .strip_prefix("http://")
        .or_else(|| v.strip_prefix("https://"))
        .ok_or_else(|| {
            ConfigError::new(variable, format!("{v:?} is not an http:// or https:// URL"))
        })?;
    if rest.is_empty() || rest.starts_with('/') || rest.contains(char::is_whitespace) {
        return Err(ConfigError::new(variable, format!("{v:?} has no host")));
    }
    Ok(v.trim_end_matches('/').to_string())
}

/// A base58 secret key of 64 bytes (secret and public half). A 32-byte value is only the
/// public half (or a bare seed) and is refused stating the length received.
pub fn keypair_from_base58(variable: &'static str, v: &str) -> Result<Keypair, ConfigError> {
    let bytes = bs58::decode(v.trim())
        .into_vec()
        .map_err(|_| ConfigError::new(variable, "not a base58 string"))?;
    match bytes.len() {
        64 => Keypair::try_from(bytes.as_slice())
            .map_err(|e| ConfigError::new(variable, format!("not a valid secret key: {e}"))),
        32 => Err(ConfigError::new(
            variable,
            "got 32 bytes: that is only the public half of a keypair; give the base58 64-byte \
             secret key (secret and public half, as `solana-keygen` stores it)",
        )),
        n => Err(ConfigError::new(
            variable,
            format!("a base58 secret key must decode to 64 bytes (secret and public key), got {n}"),
        )),
    }
}

/// A keypair file in the Solana CLI format (a JSON array of 64 numbers).
pub fn keypair_from_file(variable: &'static str, path: &Path) -> Result<Keypair, ConfigError> {
    read_keypair_file(path).map_err(|e| {
        ConfigError::new(
            variable,
            format!("cannot read a keypair from {}: {e}", path.display()),
        )
    })
}

/// A keypair from a JSON file (the Solana CLI format) or a base58 64-byte secret key.
pub fn parse_keypair(variable: &'static str, v: &str) -> Result<Keypair, ConfigError> {
    let path = Path::new(v);
    if path.exists() {
        return keypair_from_file(variable, path);
    }
    keypair_from_base58(variable, v).map_err(|e| {
        if bs58::decode(v.trim()).into_vec().is_err() {
            ConfigError::new(
                variable,
                "neither an existing keypair file nor a base58 secret key",
            )
        } else {
            e
        }
    })
}

/// A comma-separated list of base58 public keys.
pub fn parse_pubkeys(variable: &'static str, list: &str) -> Result<Vec<Pubkey>, ConfigError> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            Pubkey::from_str(s).map_err(|_| {
                ConfigError::new(variable, format!("{s:?} is not a base58 public key"))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_sdk::signer::Signer;

    #[test]
    fn urls_need_a_scheme_and_a_host() {
        assert_eq!(
            validate_url("RPC_URL", " http://127.0.0.1:8899/ ").unwrap(),
            "http://127.0.0.1:8899"
        );
        for bad in [
            "127.0.0.1:8899",
            "http://",
            "https:///x",
            "ftp://h",
            "http://a b",
        ] {
            let e = validate_url("RPC_URL", bad).unwrap_err();
            assert_eq!(e.variable, "RPC_URL", "{bad}");
        }
    }

    #[test]
    fn a_32_byte_key_is_refused_stating_the_length() {
        let kp = Keypair::new();
        let half = bs58::encode(kp.pubkey().to_bytes()).into_string();
        let e = keypair_from_base58("KEYPAIR_B58", &half).unwrap_err();
        assert_eq!(e.variable, "KEYPAIR_B58");
        assert!(e.reason.contains("got 32 bytes"), "{e}");
        assert!(e.reason.contains("public half"), "{e}");
        let e = keypair_from_base58("KEYPAIR_B58", "3vQB7B6MrGQZaxCuFg4oh").unwrap_err();
        assert!(e.reason.contains("64 bytes"), "{e}");
        let full = kp.to_base58_string();
        assert_eq!(
            keypair_from_base58("KEYPAIR_B58", &full).unwrap().pubkey(),
            kp.pubkey()
        );
    }

    #[test]
    fn pubkey_lists_name_the_bad_entry() {
        let k = Pubkey::new_unique();
        assert_eq!(parse_pubkeys("X", &format!(" {k} ,")).unwrap(), vec![k]);
        let e = parse_pubkeys("X", &format!("{k},nope")).unwrap_err();
        assert!(e.reason.contains("\"nope\""), "{e}");
    }
}
