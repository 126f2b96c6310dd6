//! Accounts of the validation registry. Layouts are Borsh after the 8-byte Anchor
//! discriminator, in field order.

pub mod attestation;
pub mod attestor;
pub mod namespace;
pub mod request;
pub mod seeds;

pub use attestation::*;
pub use attestor::*;
pub use namespace::*;
pub use request::*;
