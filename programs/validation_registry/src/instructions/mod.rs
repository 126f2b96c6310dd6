//! One file per instruction: its `#[derive(Accounts)]` struct and its handler.

pub mod register_attestor;
pub mod register_namespace;
pub mod request_validation;
pub mod respond_to_validation;
pub mod revoke_validation;

pub use register_attestor::*;
pub use register_namespace::*;
pub use request_validation::*;
pub use respond_to_validation::*;
pub use revoke_validation::*;
