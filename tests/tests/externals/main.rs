//! The gate against the REAL 8004 agent registry, its ATOM reputation engine and MPL Core:
//! their SBF builds from `../shared/fixtures/8004` (the fixtures' README says where they come
//! from), loaded through the upgradeable loader and initialized by their own instructions;
//! our programs as in the other suites (natively, or the SBF builds when `SBF_OUT_DIR` names
//! them).
//!
//! Without the fixtures the suite prints `externals SKIPPED: …` once and passes; with
//! `TRUST_GATE_REQUIRE_EXTERNALS=1` (CI) a missing fixture fails every test instead.

mod common;
mod differential;
mod fixtures;
mod holdback;
mod reputation;
mod settlement;
mod unit_limit;
