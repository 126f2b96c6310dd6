//! Accounts owned by the gate. Borsh after the 8-byte discriminator, in field order.

pub mod arbiter_set;
pub mod channel_record;
pub mod dispute;
pub mod feedback_log;
pub mod gate_authority;
pub mod gated_subscription;
pub mod seeds;

pub use arbiter_set::*;
pub use channel_record::*;
pub use dispute::*;
pub use feedback_log::*;
pub use gate_authority::*;
pub use gated_subscription::*;
