//! Pieces shared by the three trust-gate programs.
//!
//! - [`external`]: facts about the external agent registry and reputation engine (program ids,
//!   PDA seeds, discriminators, byte offsets) and pure readers of their accounts.
//! - [`runtime`]: return data, logs and events that behave the same when a program runs
//!   natively (solana-program-test `processor!`, the embedded localnet) and as SBF.
//! - [`cpi`]: cross-program invocations that pass account infos by reference.
//! - [`pda`]: program-derived addresses for a fifth of the runtime's compute units.
//! - [`pda_account`]: creating PDA accounts so that pre-funding their address cannot block it.
//! - [`subscriptions`]: facts about Solana's Subscriptions program, whose recurring delegations
//!   the gate pulls as a delegatee (ids, seeds, tags, account layouts).
//! - [`security_txt!`]: the `security.txt` each program's SBF build carries.
//! - [`token_mint`]: which mints may back a policy or a settlement (no Token-2022 transfer fee
//!   or permanent delegate).
//! - [`token_account`]: reading token accounts, and the token instructions a policy vault
//!   invokes.

pub mod cpi;
pub mod external;
pub mod keys;
pub mod pda;
pub mod pda_account;
pub mod runtime;
pub mod security_txt;
pub mod subscriptions;
pub mod token_account;
pub mod token_mint;

/// For [`security_txt!`]: the programs name it through this crate.
pub use solana_security_txt;

// Named so that it is linked: nothing calls it by name, the compiler's own memcpy calls do.
#[cfg(target_arch = "bpf")]
use solana_compiler_builtins as _;
