//! The facilitator, the demo and the paying client over real HTTP on loopback, against the
//! in-process localnet with the demo world seeded; the TypeScript SDK's tests run against
//! them too.

mod audit4;
mod audit5;
mod batch;
mod channels;
mod concurrency;
mod conformance;
mod decisions;
mod demo;
mod dispute;
mod faults;
#[path = "../localnet/fixture.rs"]
#[allow(dead_code)]
mod fixture;
mod floods;
mod holdback;
mod hostile;
mod metered;
#[path = "../localnet/node.rs"]
mod node;
mod paid_once;
mod real_registry;
mod records;
mod refund;
mod replicas;
mod services;
mod settle;
mod soak;
mod stock_upto;
mod subscriptions;
mod ts_batch;
mod ts_upto;
mod ts_x402;
mod upto;
mod verify;
