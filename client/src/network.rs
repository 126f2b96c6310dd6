//! The Solana clusters by name and CAIP-2 id. Below `error`, which names a network in its
//! errors; parsing a name, which fails with a `ClientError`, is in `ids`.

use std::fmt;

/// CAIP-2 ids of the public clusters (x402 v2 `network`).
pub const CAIP2_MAINNET: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
pub const CAIP2_DEVNET: &str = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Network {
    Localnet,
    Devnet,
    Mainnet,
}

impl Network {
    /// The canonical name (`solana-devnet`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Network::Localnet => "solana-localnet",
            Network::Devnet => "solana-devnet",
            Network::Mainnet => "solana-mainnet",
        }
    }

    /// The CAIP-2 id. A localnet's id is derived from its genesis hash, like any cluster's.
    pub fn caip2(self, genesis_hash: Option<&str>) -> String {
        match self {
            Network::Mainnet => CAIP2_MAINNET.to_string(),
            Network::Devnet => CAIP2_DEVNET.to_string(),
            Network::Localnet => caip2_from_genesis(genesis_hash.unwrap_or_default()),
        }
    }
}

/// `solana:<first 32 characters of the base58 genesis hash>`.
pub fn caip2_from_genesis(genesis_hash: &str) -> String {
    let prefix: String = genesis_hash.chars().take(32).collect();
    format!("solana:{prefix}")
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A keypair derived from a label, the same on every machine (the localnet's registry
/// collection, the demo world's agents, ...): public knowledge. Never use such keys on a
/// real cluster.
pub fn deterministic_keypair(label: &str) -> solana_sdk::signature::Keypair {
    use sha2::{Digest, Sha256};
    let seed: [u8; 32] = Sha256::digest(format!("trust-gate localnet/{label}").as_bytes()).into();
    solana_sdk::signature::Keypair::new_from_array(seed)
}
