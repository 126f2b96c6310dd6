//! What the instructions share: the evaluation's accounts and their reading, the mint a
//! policy may name, and moving tokens out of a vault.

pub mod evaluation;
pub mod mint_check;
pub mod vault_transfer;

pub use evaluation::EvaluationRefs;
