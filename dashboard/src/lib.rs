//! trust-gate's owner's dashboard: what the person behind an agent wants to see, in the
//! browser, read-only. An agent's policies with every cap and the spend against it (day, week,
//! month, lifetime, per payee), the velocity window's use, the kill switch, the vault's
//! balance and spender, the engine's tiers, recent settlements with their receipts, spend per
//! day, the shares held back from its payments and from payments to it (the holdback), the
//! gated subscriptions it pays and those paid to it (the period's use, the next pull), open
//! channels and payments held for an approval. The page reloads itself while open
//! and holds no key: what to do about what it shows is the exact command or MCP call.
//!
//! - [`config`]: the cluster, the facilitator, the agents the first page lists.
//! - [`view`]: what a page shows, as data, and its pure helpers (amounts, UTC times, spend
//!   per day).
//! - [`gather`]: reading an agent's page over JSON-RPC and from the facilitator.
//! - [`subscriptions`]: the Subscriptions section's rows: their reading from the chain and
//!   what they say (the period's use, the next pull, the state).
//! - [`pages`]: the HTML and its SVG charts (maud templates), the Subscriptions section's in
//!   `pages::subscriptions`.
//! - [`server`]: the routes.

pub mod config;
pub mod gather;
pub mod pages;
pub mod server;
pub mod subscriptions;
pub mod view;

pub use config::{DashboardConfig, KnownAgent, DEFAULT_PORT};
pub use server::{start, Server};
