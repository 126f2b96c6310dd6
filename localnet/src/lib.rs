//! The embedded localnet.
//!
//! - [`native`]: our three programs (native builtins, or the SBF builds when `SBF_OUT_DIR`
//!   names them) and the stand-in in a solana-program-test bank.
//! - [`standin`]: the local stand-in for the external agent registry and reputation engine.
//!   It is NOT the real registry: it implements, byte for byte, the account layouts and
//!   instructions that trust-gate reads and calls, so that those reads and CPIs are real.
//! - [`externals`]: the REAL registry, engine and MPL Core, loaded from their SBF builds in
//!   place of the stand-in, and the admin instructions that initialize them.
//! - [`chain`]: the bank with a wall-clock slot timer, and [`index`] of what it executed.
//! - [`rpc`]: Solana JSON-RPC over HTTP on loopback.
//! - [`Localnet`]: all of it started, with the stand-in initialized and IDLs on chain.

pub mod chain;
pub mod externals;
pub mod index;
pub mod native;
pub mod rpc;
pub mod standin;
mod start;

pub use native::Programs;
pub use start::{deterministic_keypair, Localnet, LocalnetConfig, DEFAULT_RPC_ADDR};
