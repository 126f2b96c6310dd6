//! The facilitator, the demo and the paying client over real HTTP on loopback, against the
//! in-process localnet with the demo world seeded.

mod concurrency;
mod conformance;
mod demo;
mod dispute;
#[path = "../localnet/fixture.rs"]
#[allow(dead_code)]
mod fixture;
mod services;
mod settle;
mod verify;
