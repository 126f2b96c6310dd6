//! What the gate's instructions share: the evaluation's accounts and the call into
//! policy_vault ([`evaluation`]), the parties' and the mint's checks ([`parties`]), the
//! transaction read in place ([`introspection`]), the registry's feedback ([`feedback`]) and
//! the release of a channel's reservation ([`release`]).

pub mod evaluation;
pub mod feedback;
pub mod introspection;
pub mod parties;
pub mod release;

pub use evaluation::*;
pub use feedback::*;
pub use release::*;
