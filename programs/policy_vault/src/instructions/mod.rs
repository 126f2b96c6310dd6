pub mod evaluate;
pub mod init_authority;
pub mod init_killswitch;
pub mod init_policy;
pub mod mint_check;
pub mod retire_policy;
pub mod rotate_authority;
pub mod set_acceptance_policy;
pub mod set_killswitch;

pub use evaluate::*;
pub use init_authority::*;
pub use init_killswitch::*;
pub use init_policy::*;
pub use retire_policy::*;
pub use rotate_authority::*;
pub use set_acceptance_policy::*;
pub use set_killswitch::*;
