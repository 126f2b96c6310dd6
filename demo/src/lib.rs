//! The trust-gate x402 demo and the paying client.
//!
//! - [`server`]: the protected resource (`GET /protected`, priced per request, gated by the
//!   payer's and the service's trust policies) and `GET /health`.
//! - [`challenge`]: fresh, service-signed x402 v2 challenges with the `gate` extension.
//! - [`facilitator_client`]: the resource server's calls to the facilitator.
//! - [`pay`]: the paying client behind `trust-gate pay`: read the 402, compose the
//!   three-instruction settlement with the SDK, sign as the payer, retry.
//! - [`dispute`]: the disputing client behind `trust-gate dispute`: the payer signs the
//!   dispute of a settled payment and the facilitator co-signs it.

pub mod challenge;
pub mod config;
pub mod dispute;
pub mod facilitator_client;
pub mod pay;
pub mod server;

pub use config::DemoConfig;
pub use server::{start, Server};

/// Default port of the demo resource server.
pub const DEFAULT_PORT: u16 = 4021;
/// The request header that picks the demo payer agent.
pub const X_DEMO_PAYER_AGENT: &str = "X-Demo-Payer-Agent";
