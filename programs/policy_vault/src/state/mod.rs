//! Accounts owned by policy_vault. Each is Borsh after the 8-byte Anchor discriminator, in
//! field order; fixed-size fields come first so that the documented offsets hold and
//! `getProgramAccounts` memcmp filters work.

pub mod acceptance;
pub mod approval;
pub mod authority;
pub mod fixed;
pub mod holdback;
pub mod killswitch;
pub mod payee_list;
pub mod policy;
pub mod rules;
pub mod seeds;
pub mod take_over;
pub mod vault;
pub mod velocity;

pub use acceptance::*;
pub use approval::*;
pub use authority::*;
pub use fixed::FixedLayout;
pub use holdback::*;
pub use killswitch::*;
pub use payee_list::*;
pub use policy::*;
pub use rules::*;
pub use take_over::*;
pub use velocity::*;
