//! Pieces shared by the three trust-gate programs.
//!
//! - [`external`]: facts about the external agent registry and reputation engine (program ids,
//!   PDA seeds, discriminators, byte offsets) and pure readers of their accounts.
//! - [`runtime`]: return data, logs and events that behave the same when a program runs
//!   natively (solana-program-test `processor!`, the embedded localnet) and as SBF.
//! - [`pda_account`]: creating PDA accounts so that pre-funding their address cannot block it.
//! - [`token_mint`]: which mints may back a policy or a settlement (no Token-2022 transfer fee
//!   or permanent delegate).

pub mod external;
pub mod pda_account;
pub mod runtime;
pub mod token_mint;
