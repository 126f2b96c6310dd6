//! The program integration suite: one test binary, one module per area. Every test runs
//! real transactions in a solana-program-test bank (see `trust_gate_program_tests`).

mod adversarial;
mod approvals;
mod audit3;
mod audit4;
mod audit5;
mod compute_units;
mod cpi_example;
mod decisions;
mod engine_standin;
mod funding;
mod hardening;
mod holdback;
mod instruction_data;
mod limits;
mod records;
mod sbf_artifacts;
mod settlement;
mod transaction_size;
mod validation_registry;
mod vault;
