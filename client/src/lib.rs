//! trust-gate client SDK.
//!
//! Its modules, lowest first. Each imports only modules listed before it, so imports run one
//! way (`tools/repo-checks/tests/layers.rs` holds the same list and checks it):
//!
//! - [`redact`]: URLs as services show them (`scheme://host[:port]`: no API key).
//! - [`network`]: the clusters by name and CAIP-2 id.
//! - [`error`]: [`ClientError`], with the named on-chain error and the refused atomicity
//!   setting it carries.
//! - [`ids`]: program ids per network (the mainnet sentinel rule), overrides.
//! - [`token`]: which token program a mint belongs to, its associated token accounts.
//! - [`pda`]: every account address of the three programs and the external registry/engine.
//! - [`instructions`]: a [`Builder`] for every instruction.
//! - [`channels`]: Solana's payment-channels program: a channel's address and layout,
//!   vouchers, every instruction.
//! - [`vouchers`]: a channel's vouchers checked off chain (signature, channel, amount, the
//!   gated deposit, the per-payment cap, the kill switch).
//! - [`decode`]: decisions, events, accounts, engine reputation, deny codes.
//! - [`approvals`]: a payment held for an approval, as a facilitator keeps and answers it.
//! - [`spend`]: a policy's spend at a moment against every cap, and when each window starts
//!   over.
//! - [`x402`]: x402 v2 wire types and headers, the `gate` extension, payment id hashes.
//! - [`payment_identifier`]: x402's `payment-identifier` extension on the wire: a payment's
//!   idempotency key, declared, attached, read and bound to its payload.
//! - [`upto`]: x402's `upto` scheme on Solana on the wire (its `extra`, payload and reason
//!   strings) and trust-gate's gated variant.
//! - [`batch`]: x402's `batch-settlement` scheme on Solana on the wire, client mode (its
//!   `extra`, channel config, vouchers, payloads, reason strings) and the gated variant.
//! - [`chain`]: reads over JSON-RPC.
//! - [`receipts`]: a payment's receipt, from its log or, once closed, the chain's history.
//! - [`idl`]: IDL loaders (explicit, on chain, bundled).
//! - [`errors`]: names of on-chain error codes.
//! - [`settle`]: the atomic three-instruction settlement, its guard, `settle` and `dispute`.
//! - [`session`]: the payer's side of a `batch-settlement` session: the open (gated or
//!   not) and one voucher a request.
//! - [`reclaim`]: a facilitator's closable payment records and the transactions closing them.
//! - [`channel_reclaim`]: the rent of a facilitator's payment channels and of the gate's
//!   records of them.
//! - [`simulate`]: [`gate_payment`], the decision a real gate would make.
//! - [`units`]: the compute-unit limit a settlement asks for.
//! - [`pay`]: the paying client of a `trust-gate` settlement over HTTP: request, read the 402,
//!   settle, retry ([`pay::Request`] any method, headers and body; [`pay::Body`] read up to a
//!   stated size).
//! - [`pay_channels`]: the paying client of the channel schemes (`upto`, sessions), gated or
//!   plain.
//! - [`env`](mod@env): configuration values from the environment, with errors naming the variable.
//!
//! Everything talks to the chain through Solana JSON-RPC, so the same code runs against the
//! embedded localnet, devnet or mainnet.

pub mod approvals;
pub mod batch;
pub mod chain;
pub mod channel_reclaim;
pub mod channels;
pub mod decode;
pub mod env;
pub mod error;
pub mod errors;
pub mod idl;
pub mod ids;
pub mod instructions;
pub mod network;
pub mod pay;
pub mod pay_channels;
pub mod payment_identifier;
pub mod pda;
pub mod receipts;
pub mod reclaim;
pub mod redact;
pub mod session;
pub mod settle;
pub mod simulate;
pub mod spend;
pub mod token;
pub mod units;
pub mod upto;
pub mod vouchers;
pub mod x402;

pub use error::ClientError;
pub use ids::{Network, Overrides, Program, ProgramIds};
pub use instructions::Builder;
pub use settle::{AtomicityEnforced, AtomicityNotEnforcedError};
pub use simulate::{gate_payment, Caller, PaymentQuery};

/// Re-exported so users need no direct dependency to name these types.
pub use solana_rpc_client::nonblocking::rpc_client::RpcClient;
