//! The embedded localnet.
//!
//! - [`native`]: our three programs and the stand-in as native builtins of a
//!   solana-program-test bank.
//! - [`standin`]: the local stand-in for the external agent registry and reputation engine.
//!   It is NOT the real registry: it implements, byte for byte, the account layouts and
//!   instructions that trust-gate reads and calls, so that those reads and CPIs are real.

pub mod native;
pub mod standin;
