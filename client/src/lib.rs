//! trust-gate's on-chain SDK: what a program integrator needs to call the gate from Rust.
//! The x402 wire is the `trust-gate-x402` crate, the paying clients over HTTP
//! `trust-gate-pay`; both build on this one.
//!
//! Its modules, lowest first. Each imports only modules listed before it, so imports run one
//! way (`tools/repo-checks/tests/layers.rs` holds the same list and checks it):
//!
//! - [`redact`]: URLs as services show them (`scheme://host[:port]`: no API key).
//! - [`json`]: keys, amounts and hashes as views write them in JSON, with their schemas.
//! - [`network`]: the clusters by name and CAIP-2 id.
//! - [`error`]: [`ClientError`], with the named on-chain error and the refused atomicity
//!   setting it carries.
//! - [`ids`]: program ids per network (the mainnet sentinel rule), overrides.
//! - [`token`]: which token program a mint belongs to, its associated token accounts.
//! - [`pda`]: every account address of the three programs and the external registry/engine.
//! - [`subscriptions`]: Solana's Subscriptions program: the recurring delegations a gated
//!   subscription pulls, their accounts, the instructions a delegator sends it.
//! - [`holdback`]: the holdback a settlement carries and a held payment's share.
//! - [`instructions`]: a [`Builder`] for every instruction.
//! - [`channels`]: Solana's payment-channels program: a channel's address and layout,
//!   vouchers, every instruction.
//! - [`vouchers`]: a channel's vouchers checked off chain (signature, channel, amount, the
//!   gated deposit, the per-payment cap, the kill switch).
//! - [`decode`]: decisions, events, accounts, engine reputation, deny codes.
//! - [`approvals`]: a payment held for an approval, as a facilitator keeps and answers it.
//! - [`spend`]: a policy's spend at a moment against every cap, and when each window starts
//!   over.
//! - [`chain`]: reads over JSON-RPC.
//! - [`receipts`]: a payment's receipt, from its log or, once closed, the chain's history.
//! - [`held`]: the held payments whose logs are open, found on chain.
//! - [`pulls`]: the gated subscriptions on chain, each with its delegation, and when a pull
//!   is due.
//! - [`idl`]: IDL loaders (explicit, on chain, bundled).
//! - [`errors`]: names of on-chain error codes.
//! - [`settle`]: the atomic three-instruction settlement, its guard, `settle` and `dispute`.
//! - [`reclaim`]: a facilitator's closable payment records and the transactions closing them.
//! - [`channel_reclaim`]: the rent of a facilitator's payment channels and of the gate's
//!   records of them.
//! - [`simulate`]: [`gate_payment`], the decision a real gate would make.
//! - [`units`]: the compute-unit limit a settlement asks for.
//! - [`standin`]: the localnet's registry and engine stand-ins: layouts and instructions.
//! - [`env`](mod@env): configuration values from the environment, with errors naming the variable.
//!
//! Everything talks to the chain through Solana JSON-RPC, so the same code runs against the
//! embedded localnet, devnet or mainnet.

pub mod approvals;
pub mod chain;
pub mod channel_reclaim;
pub mod channels;
pub mod decode;
pub mod env;
pub mod error;
pub mod errors;
pub mod held;
pub mod holdback;
pub mod idl;
pub mod ids;
pub mod instructions;
pub mod json;
pub mod network;
pub mod pda;
pub mod pulls;
pub mod receipts;
pub mod reclaim;
pub mod redact;
pub mod settle;
pub mod simulate;
pub mod spend;
pub mod standin;
pub mod subscriptions;
pub mod token;
pub mod units;
pub mod vouchers;

pub use error::ClientError;
pub use ids::{Network, Overrides, Program, ProgramIds};
pub use instructions::Builder;
pub use settle::{AtomicityEnforced, AtomicityNotEnforcedError};
pub use simulate::{gate_payment, Caller, PaymentQuery};

/// Re-exported so users need no direct dependency to name these types.
pub use solana_rpc_client::nonblocking::rpc_client::RpcClient;
