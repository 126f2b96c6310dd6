//! The trust-gate x402 demo and the paying client.
//!
//! - [`server`]: the protected resource (`GET /protected`, priced per request, gated by the
//!   payer's and the service's trust policies) and `GET /health`.
//! - [`state`]: what the routes share (the state, error answers, the payer a request names).
//! - [`metered`]: `GET /metered` (x402 `upto`, priced a unit, the units used charged) and
//!   `GET /session` (x402 `batch-settlement`, a voucher a request), each gated or plain.
//! - [`challenge`]: fresh, service-signed x402 v2 challenges with the `gate` extension.
//! - [`facilitator_client`]: the resource server's calls to the facilitator.
//! - [`pay`]: the paying client behind `trust-gate pay`: read the 402, compose the
//!   three-instruction settlement with the SDK, sign as the payer, retry.
//! - [`pay_channels`]: the paying client of the channel schemes behind `trust-gate pay
//!   --scheme upto|batch-settlement`.
//! - [`dispute`]: the disputing client behind `trust-gate dispute`: the payer signs the
//!   dispute of a settled payment and the facilitator co-signs it.

pub mod challenge;
pub mod config;
pub mod dispute;
pub mod facilitator_client;
pub mod metered;
pub mod pay;
pub mod pay_channels;
pub mod server;
pub mod state;

pub use config::DemoConfig;
pub use server::{start, Server};

/// Default port of the demo resource server.
pub const DEFAULT_PORT: u16 = 4021;
/// The request header that picks the demo payer agent.
pub const X_DEMO_PAYER_AGENT: &str = "X-Demo-Payer-Agent";
