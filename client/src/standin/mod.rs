//! The localnet's stand-ins for the agent registry and reputation engine, as their callers
//! see them: the accounts' layouts and the instructions (what the localnet's programs run,
//! `trust_gate_localnet::standin`, and what seeds a localnet's demo world,
//! `trust_gate_migrations`, send). Localnet only: on a real cluster the real programs answer,
//! and their localnet-only admin instructions do not exist.

pub mod chains;
pub mod instructions;
pub mod layout;
