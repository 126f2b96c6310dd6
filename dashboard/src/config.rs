//! What the dashboard reads and how it shows it.

use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use trust_gate_client::{Network, ProgramIds};
use trust_gate_migrations::DemoWorld;

/// The default port (`trust-gate up` and `trust-gate dashboard`).
pub const DEFAULT_PORT: u16 = 4030;
/// How often an open page reloads itself, by default.
pub const DEFAULT_REFRESH_SECS: u32 = 5;

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
    /// Reads `rpc_url` with the program ids of `network`; on a localnet the demo world's
    /// agents are the known ones.
    pub fn new(rpc_url: &str, ids: ProgramIds, facilitator_url: Option<String>) -> Self {
        let known = if ids.network == Network::Localnet {
            demo_agents()
        } else {
            Vec::new()
        };
        DashboardConfig {
            rpc_url: rpc_url.to_string(),
            ids,
            facilitator_url: facilitator_url.map(|u| u.trim_end_matches('/').to_string()),
            known,
            refresh_secs: DEFAULT_REFRESH_SECS,
        }
    }
}

/// The demo world's agents: its payers and its service.
pub fn demo_agents() -> Vec<KnownAgent> {
    let w = DemoWorld::new();
    let mut out: Vec<KnownAgent> = w
        .payers
        .iter()
        .map(|a| KnownAgent {
            name: a.name.to_string(),
            asset: a.asset.pubkey(),
            note: format!(
                "payer, engine tier {}, {}",
                a.tier,
                if a.hot_key.is_some() {
                    "pays from its vault"
                } else {
                    "pays from its wallet"
                }
            ),
        })
        .collect();
    out.push(KnownAgent {
        name: w.service.name.to_string(),
        asset: w.service.asset.pubkey(),
        note: "the demo service (payee)".into(),
    });
    out
}
