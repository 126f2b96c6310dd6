//! Program ids per network, the external registry/engine ids, overrides, and the mainnet
//! sentinel rule.
//!
//! trust-gate's own programs are deployed on devnet (and run on the embedded localnet at the
//! same ids). They are not deployed on mainnet: there the three ids are the system program
//! address, a sentinel that [`ProgramIds::require`] refuses, unless each is overridden.
//! Overrides are per program; a partial override never falls back to devnet ids.

use crate::error::ClientError;
pub use crate::network::{caip2_from_genesis, Network, CAIP2_DEVNET, CAIP2_MAINNET};
use anchor_lang::prelude::{pubkey, Pubkey};

use std::str::FromStr;

/// The external agent registry and reputation engine, per cluster.
pub mod external {
    use super::*;
    pub const DEVNET_AGENT_REGISTRY: Pubkey =
        pubkey!("8oo4J9tBB3Hna1jRQ3rWvJjojqM5DYTDJo5cejUuJy3C");
    pub const DEVNET_REPUTATION_ENGINE: Pubkey =
        pubkey!("AToMufS4QD6hEXvcvBDg9m1AHeCLpmZQsyfYa5h9MwAF");
    pub const MAINNET_AGENT_REGISTRY: Pubkey =
        pubkey!("8oo4dC4JvBLwy5tGgiH3WwK4B9PWxL9Z4XjA2jzkQMbQ");
    pub const MAINNET_REPUTATION_ENGINE: Pubkey =
        pubkey!("AToMw53aiPQ8j7iHVb4fGt6nzUNxUhcPc3tbPBZuzVVb");
    pub const MPL_CORE: Pubkey = pubkey!("CoREENxT6tW1HoK8ypY1SxRMZTcVPm7R94rH4PZNhX7d");
}

/// The value that marks "no deployment of this program on this network".
pub const SENTINEL: Pubkey = anchor_lang::system_program::ID;

// Here rather than in `network`: it fails with a `ClientError`, which names a `Network`.
impl FromStr for Network {
    type Err = ClientError;

    /// Accepts the canonical names, the short aliases and the `chain-*` spellings.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "solana-localnet" | "localnet" | "chain-localnet" => Ok(Network::Localnet),
            "solana-devnet" | "devnet" | "chain-devnet" => Ok(Network::Devnet),
            "solana-mainnet" | "mainnet" | "mainnet-beta" | "chain-mainnet" => Ok(Network::Mainnet),
            other => Err(ClientError::InvalidInput {
                field: "network".into(),
                reason: format!(
                    "unknown network {other:?}; expected solana-localnet, solana-devnet or solana-mainnet"
                ),
            }),
        }
    }
}

/// One of trust-gate's own programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    PolicyVault,
    Gate,
    ValidationRegistry,
}

impl Program {
    pub const ALL: [Program; 3] = [
        Program::PolicyVault,
        Program::Gate,
        Program::ValidationRegistry,
    ];

    /// The program's name as in Anchor.toml and the IDL.
    pub fn name(self) -> &'static str {
        match self {
            Program::PolicyVault => "policy_vault",
            Program::Gate => "gate",
            Program::ValidationRegistry => "validation_registry",
        }
    }

    /// The environment variable that overrides the program's id.
    pub fn override_var(self) -> &'static str {
        match self {
            Program::PolicyVault => "POLICY_VAULT_PROGRAM_ID",
            Program::Gate => "GATE_PROGRAM_ID",
            Program::ValidationRegistry => "VALIDATION_REGISTRY_PROGRAM_ID",
        }
    }
}

/// Per-program id overrides (for one's own deployment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub policy_vault: Option<Pubkey>,
    pub gate: Option<Pubkey>,
    pub validation_registry: Option<Pubkey>,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        *self == Overrides::default()
    }

    /// Reads the three `*_PROGRAM_ID` variables through `var`; a set but malformed value is
    /// an error naming the variable.
    pub fn from_env_with(var: impl Fn(&str) -> Option<String>) -> Result<Self, ClientError> {
        let read =
            |p: Program| -> Result<Option<Pubkey>, ClientError> {
                match var(p.override_var()) {
                    None => Ok(None),
                    Some(v) if v.trim().is_empty() => Ok(None),
                    Some(v) => Pubkey::from_str(v.trim()).map(Some).map_err(|e| {
                        ClientError::InvalidInput {
                            field: p.override_var().into(),
                            reason: format!("not a base58 public key: {e}"),
                        }
                    }),
                }
            };
        Ok(Overrides {
            policy_vault: read(Program::PolicyVault)?,
            gate: read(Program::Gate)?,
            validation_registry: read(Program::ValidationRegistry)?,
        })
    }

    /// [`Overrides::from_env_with`] over the process environment.
    pub fn from_env() -> Result<Self, ClientError> {
        Self::from_env_with(|k| std::env::var(k).ok())
    }
}

/// Every program id the SDK needs, for one network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramIds {
    pub network: Network,
    pub policy_vault: Pubkey,
    pub gate: Pubkey,
    pub validation_registry: Pubkey,
    pub agent_registry: Pubkey,
    pub reputation_engine: Pubkey,
    pub mpl_core: Pubkey,
}

impl ProgramIds {
    /// The default ids of `network`; on mainnet trust-gate's own ids are the [`SENTINEL`].
    pub fn for_network(network: Network) -> Self {
        let ours = match network {
            Network::Mainnet => [SENTINEL; 3],
            Network::Localnet | Network::Devnet => {
                [policy_vault::ID, gate::ID, validation_registry::ID]
            }
        };
        let (agent_registry, reputation_engine) = match network {
            Network::Mainnet => (
                external::MAINNET_AGENT_REGISTRY,
                external::MAINNET_REPUTATION_ENGINE,
            ),
            // The localnet's stand-in sits at the devnet ids.
            Network::Localnet | Network::Devnet => (
                external::DEVNET_AGENT_REGISTRY,
                external::DEVNET_REPUTATION_ENGINE,
            ),
        };
        ProgramIds {
            network,
            policy_vault: ours[0],
            gate: ours[1],
            validation_registry: ours[2],
            agent_registry,
            reputation_engine,
            mpl_core: external::MPL_CORE,
        }
    }

    /// Applies per-program overrides; programs without one keep the network's id.
    pub fn with_overrides(mut self, o: Overrides) -> Self {
        self.policy_vault = o.policy_vault.unwrap_or(self.policy_vault);
        self.gate = o.gate.unwrap_or(self.gate);
        self.validation_registry = o.validation_registry.unwrap_or(self.validation_registry);
        self
    }

    /// The id of `program` as configured, sentinel or not.
    pub fn get(&self, program: Program) -> Pubkey {
        match program {
            Program::PolicyVault => self.policy_vault,
            Program::Gate => self.gate,
            Program::ValidationRegistry => self.validation_registry,
        }
    }

    /// The id of `program`, or [`ClientError::ProgramNotConfigured`] when it is the sentinel.
    pub fn require(&self, program: Program) -> Result<Pubkey, ClientError> {
        let id = self.get(program);
        if id == SENTINEL {
            return Err(ClientError::ProgramNotConfigured {
                program: program.name(),
                network: self.network,
                variable: program.override_var(),
            });
        }
        Ok(id)
    }

    /// Whether every one of trust-gate's programs has a usable id.
    pub fn all_configured(&self) -> bool {
        Program::ALL.iter().all(|p| self.require(*p).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devnet_externals_match_what_the_programs_were_built_with() {
        let ids = ProgramIds::for_network(Network::Devnet);
        use trust_gate_program_common::external::ids as built;
        assert_eq!(ids.agent_registry, built::AGENT_REGISTRY);
        assert_eq!(ids.reputation_engine, built::REPUTATION_ENGINE);
        assert_eq!(ids.mpl_core, built::MPL_CORE);
        assert_eq!(ids.gate, gate::ID);
    }

    #[test]
    fn mainnet_uses_the_sentinel_and_partial_overrides_never_fall_back() {
        let ids = ProgramIds::for_network(Network::Mainnet);
        assert!(!ids.all_configured());
        let err = ids.require(Program::Gate).unwrap_err().to_string();
        assert!(err.contains("GATE_PROGRAM_ID"), "{err}");
        assert_eq!(ids.reputation_engine, external::MAINNET_REPUTATION_ENGINE);

        let mine = Pubkey::new_unique();
        let partial = ids.with_overrides(Overrides {
            gate: Some(mine),
            ..Overrides::default()
        });
        assert_eq!(partial.require(Program::Gate).unwrap(), mine);
        assert!(partial.require(Program::PolicyVault).is_err());
        assert_ne!(partial.policy_vault, policy_vault::ID);
    }

    #[test]
    fn network_names_and_aliases() {
        for (s, n) in [
            ("solana-devnet", Network::Devnet),
            ("chain-devnet", Network::Devnet),
            ("mainnet-beta", Network::Mainnet),
            ("chain-mainnet", Network::Mainnet),
            ("localnet", Network::Localnet),
        ] {
            assert_eq!(s.parse::<Network>().unwrap(), n);
        }
        assert!("testnet".parse::<Network>().is_err());
        assert_eq!(Network::Devnet.caip2(None), CAIP2_DEVNET);
        assert_eq!(
            caip2_from_genesis("5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"),
            CAIP2_MAINNET
        );
    }

    #[test]
    fn override_variables_are_validated_by_name() {
        let bad = Overrides::from_env_with(|k| (k == "GATE_PROGRAM_ID").then(|| "nope".into()));
        let err = bad.unwrap_err().to_string();
        assert!(err.contains("GATE_PROGRAM_ID"), "{err}");
        let none = Overrides::from_env_with(|_| None).unwrap();
        assert!(none.is_empty());
    }
}
