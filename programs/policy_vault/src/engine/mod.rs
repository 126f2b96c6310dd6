//! The policy engine: pure Rust, no Anchor types in its API, no I/O.
//!
//! The program (`crate::instructions::evaluate`) reads accounts, turns them into the plain
//! values below, calls [`evaluate`], and writes the returned counters back on a committed
//! Allow. Everything that decides a payment lives here, so it is unit- and property-tested
//! without a runtime.

pub mod config;
pub mod decision;
pub mod evaluate;
pub mod holdback;
pub mod limits;
pub mod reservation;
pub mod time;

pub use config::*;
pub use decision::*;
pub use evaluate::*;
pub use holdback::{AcceptedHoldback, HoldTerm, Holdback, HoldbackConfigError, HoldbackRule};
pub use limits::{
    LimitCounters, LimitState, LimitUpdate, PayeeDay, PayeeSlot, SlotWrite, PAYEE_SLOTS,
};
