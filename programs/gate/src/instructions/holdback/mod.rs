//! A held share's instructions: its escrow, its release, the payee's refund, the arbiter's
//! decision and the arbiter sets (the rules in [`crate::holdback`]; docs/holdback.md).

mod arbiter_set;
mod arbitrate;
mod open_escrow;
pub mod payout;
mod refund;
mod release;
pub mod response;

pub use arbiter_set::*;
pub use arbitrate::*;
pub use open_escrow::*;
pub use payout::*;
pub use refund::*;
pub use release::*;
pub use response::*;
