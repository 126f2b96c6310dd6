//! x402 v2 on the wire, as trust-gate speaks it: what the facilitator, resource servers (the
//! demo) and the paying clients share. Built on the on-chain SDK (`trust-gate-client`), with
//! no HTTP client or server.
//!
//! Its modules:
//!
//! - [`wire`]: the v2 types and headers, the `gate` extension, signed offers and service
//!   requests, payment id hashes (re-exported here: `trust_gate_x402::PaymentRequirements`).
//! - [`holdback`]: a held payment's terms in the challenge, and x402's `refund` extension: its
//!   offer, the payer's signed request (a compact JWS by a Solana key), the payee's answer and
//!   signed receipt.
//! - [`reason`]: every refusal reason, its wire string and HTTP status, one table.
//! - [`payment_identifier`]: x402's `payment-identifier` extension: a payment's idempotency
//!   key, declared, attached, read and bound to its payload.
//! - [`upto`]: x402's `upto` scheme on Solana (its `extra`, payload and terms) and trust-gate's
//!   gated variant.
//! - [`batch`]: x402's `batch-settlement` scheme on Solana, client mode (its `extra`, channel
//!   config, vouchers, payloads) and the gated variant.

pub mod batch;
pub mod holdback;
pub mod payment_identifier;
pub mod reason;
pub mod upto;
pub mod wire;

pub use wire::*;
