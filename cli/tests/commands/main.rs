//! The `trust-gate` command's subcommands as a user runs them: the built binary as a child
//! process against a seeded in-process localnet.

#[path = "../../../tests/tests/localnet/fixture.rs"]
#[allow(dead_code)]
mod fixture;

mod reclaim;
