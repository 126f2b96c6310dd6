//! The SDK's error type, and two types its variants carry: a named on-chain error (named by
//! `errors`) and a refused atomicity setting (refused by `settle::AtomicityEnforced`). They
//! are here, at the bottom, so that every module can return a `ClientError`.

use crate::network::Network;
use serde::Serialize;
use solana_sdk::transaction::TransactionError;

/// A named on-chain error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NamedError {
    pub code: u32,
    pub name: String,
    /// The program's message, when known.
    pub message: Option<String>,
    /// The program that raised it, when known.
    pub program: Option<String>,
}

/// Configuration tried to turn atomic settlement off (or spelled "on" as anything but the
/// boolean `true`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("atomicityEnforced must be the boolean true, got {got}: trust-gate never settles a payment outside one transaction of [gate_payment_strict, TransferChecked, emit_feedback]")]
pub struct AtomicityNotEnforcedError {
    /// What the configuration held, as JSON.
    pub got: String,
}

/// Everything the SDK can fail with. Variants carry what a caller needs to act: the field
/// that was wrong, the program id variable to set, the log summary of a failed simulation.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid {field}: {reason}")]
    InvalidInput { field: String, reason: String },

    #[error("program {program} has no id on {network}: set {variable} to your deployment's id")]
    ProgramNotConfigured {
        program: &'static str,
        network: Network,
        variable: &'static str,
    },

    #[error("RPC request failed: {0}")]
    Rpc(String),

    #[error("{what} {address} does not exist")]
    AccountNotFound { what: &'static str, address: String },

    #[error("cannot decode {what}: {reason}")]
    Decode { what: String, reason: String },

    /// A gate simulation that produced no decision. `logs` is a ~400-character summary.
    #[error("gate simulation returned no decision ({}{}); logs: {logs}", err.as_ref().map(|e| e.to_string()).unwrap_or_else(|| "no error".into()), named_text(named))]
    SimulationFailed {
        err: Option<TransactionError>,
        /// The custom program error, named, when there is one.
        named: Option<NamedError>,
        logs: String,
    },

    /// A transaction (or its preflight simulation) failed on chain.
    #[error("transaction failed: {err}{}; logs: {logs}", named_text(named))]
    Transaction {
        err: TransactionError,
        /// The custom program error, named from the failing program's IDL when known.
        named: Option<NamedError>,
        logs: String,
    },

    #[error(transparent)]
    AtomicityNotEnforced(#[from] AtomicityNotEnforcedError),

    #[error("no IDL for {program}: {remediation}")]
    IdlMissing {
        program: String,
        remediation: String,
    },

    #[error("{0}")]
    Config(String),
}

fn named_text(named: &Option<NamedError>) -> String {
    match named {
        Some(n) => format!(" (error {} {})", n.code, n.name),
        None => String::new(),
    }
}

impl From<solana_rpc_client_api::client_error::Error> for ClientError {
    fn from(e: solana_rpc_client_api::client_error::Error) -> Self {
        ClientError::Rpc(e.to_string())
    }
}

impl ClientError {
    /// The custom error code of a failed transaction.
    pub fn code(&self) -> Option<u32> {
        match self {
            ClientError::Transaction { named, .. } => named.as_ref().map(|n| n.code),
            _ => None,
        }
    }

    /// Bad input: `field` names what was wrong, `reason` why.
    pub fn input(field: &str, reason: impl Into<String>) -> Self {
        ClientError::InvalidInput {
            field: field.into(),
            reason: reason.into(),
        }
    }
}
