//! What the dashboard reads and how it shows it.

use solana_sdk::pubkey::Pubkey;
use trust_gate_client::ProgramIds;

/// The default port (`trust-gate up` and `trust-gate dashboard`).
pub const DEFAULT_PORT: u16 = 4030;
/// How often an open page reloads itself, by default (each load reads the chain anew).
pub const DEFAULT_REFRESH_SECS: u32 = 15;

/// An agent the first page lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownAgent {
    pub name: String,
    pub asset: Pubkey,
    /// What it is, in a few words (its tier and funding in the demo world).
    pub note: String,
}

#[derive(Clone, Debug)]
pub struct DashboardConfig {
    pub rpc_url: String,
    pub ids: ProgramIds,
    /// The facilitator whose held payments are listed (`GET /approvals`), when known.
    pub facilitator_url: Option<String>,
    pub known: Vec<KnownAgent>,
    /// Seconds between a page's reloads (0: never).
    pub refresh_secs: u32,
}

impl DashboardConfig {
    /// Reads `rpc_url` with the program ids `ids`, listing `known` on the first page.
    pub fn new(
        rpc_url: &str,
        ids: ProgramIds,
        facilitator_url: Option<String>,
        known: Vec<KnownAgent>,
    ) -> Self {
        DashboardConfig {
            rpc_url: rpc_url.to_string(),
            ids,
            facilitator_url: facilitator_url.map(|u| u.trim_end_matches('/').to_string()),
            known,
            refresh_secs: DEFAULT_REFRESH_SECS,
        }
    }
}
