//! Solana's Subscriptions program for the `subscriptions` suite: its real SBF build from the
//! folder `TRUST_GATE_SUBSCRIPTIONS_DIR` names, else `../shared/fixtures/subscriptions` beside
//! the repository.

use crate::fixture::Fixture;
use solana_program_test::ProgramTest;

pub const FIXTURE: Fixture = Fixture {
    id: trust_gate_client::subscriptions::PROGRAM_ID,
    name: "subscriptions",
    folder: "subscriptions",
    file: "subscriptions_program.so",
    dir_var: "TRUST_GATE_SUBSCRIPTIONS_DIR",
};

/// `pt` with the real program at its id.
pub fn add_to(pt: &mut ProgramTest) {
    FIXTURE.add_to(pt);
}
