//! The trust-gate x402 demo: a resource priced per request, gated.
//!
//! - [`server`]: the protected resource (`GET /protected`, priced per request, gated by the
//!   payer's and the service's trust policies) and `GET /health`.
//! - [`state`]: what the routes share (the state, error answers, the payer a request names).
//! - [`metered`]: `GET /metered` (x402 `upto`, priced a unit, the units used charged) and
//!   `GET /session` (x402 `batch-settlement`, a voucher a request), each gated or plain.
//! - [`challenge`]: fresh, service-signed x402 v2 challenges with the `gate` extension.
//! - [`facilitator_client`]: the resource server's calls to the facilitator.
//! - [`refund`]: x402's `refund` extension for a held share: `POST /refund` takes the payer's
//!   signed request and the payee gives the share back on chain (the held service only).
//!
//! The paying clients (`trust-gate pay`) are `trust-gate-pay`'s (`trust_gate_pay::exact`,
//! `trust_gate_pay::channels`).
//! - [`dispute`]: the disputing client behind `trust-gate dispute`: the payer signs the
//!   dispute of a settled payment and the facilitator co-signs it.

pub mod challenge;
pub mod config;
pub mod dispute;
pub mod facilitator_client;
pub mod metered;
pub mod refund;
pub mod server;
pub mod state;

pub use config::DemoConfig;
pub use server::{start, Server};

/// Default port of the demo resource server.
pub const DEFAULT_PORT: u16 = 4021;
/// The port `trust-gate up` serves the demo's low-tier payee on ([`DemoConfig::held_service`]).
pub const HELD_DEMO_PORT: u16 = 4022;
/// The request header that picks the demo payer agent, as `X-Payer-Agent`
/// (`trust_gate_x402::X_PAYER_AGENT`, which the paying clients send) does.
pub const X_DEMO_PAYER_AGENT: &str = "X-Demo-Payer-Agent";
