//! trust-gate's paying clients over HTTP: request, read the 402, build and sign the payment
//! with the on-chain SDK (`trust-gate-client`) and the wire (`trust-gate-x402`), retry with
//! `PAYMENT-SIGNATURE`. Behind `trust-gate pay` and the MCP tool `gate_pay`.
//!
//! Its modules:
//!
//! - [`session`]: the payer's side of the channel schemes: a channel's open (gated or not),
//!   a session's vouchers, an `upto` payload.
//! - [`exact`]: the paying client of a `trust-gate` settlement: request, read the 402, settle,
//!   retry ([`exact::Request`] any method, headers and body; [`exact::Body`] read up to a
//!   stated size).
//! - [`channels`]: the paying client of the channel schemes (`upto`, sessions), gated or
//!   plain.
//! - [`refund`]: x402's `refund` extension, the payer's side: ask the payee for a held share
//!   back with a request signed by the wallet that paid.

pub mod channels;
pub mod exact;
pub mod refund;
pub mod session;
