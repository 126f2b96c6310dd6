//! The SDK against the embedded localnet over real JSON-RPC on loopback: every builder lands
//! a transaction, every decoder reads what the programs wrote, the settlement composer
//! passes the on-chain introspection, and the RPC answers with a cluster's shapes. The
//! TypeScript SDK's tests run here too, against what the Rust SDK computes.

mod fixture;
mod node;
mod rpc;
mod sdk;
mod subscriptions;
mod ts_sdk;
