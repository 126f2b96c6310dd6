//! Solana's payment-channels program for the `channels` suite: its real SBF build from the
//! folder `TRUST_GATE_CHANNELS_DIR` names, else `../shared/fixtures/payment-channels` beside the
//! repository, beside everything `crate::start` has.

use crate::fixture::Fixture;
use solana_program_test::{ProgramTest, ProgramTestContext};

pub const FIXTURE: Fixture = Fixture {
    id: trust_gate_client::channels::PROGRAM_ID,
    name: "payment-channels",
    folder: "payment-channels",
    file: "payment_channels.so",
    dir_var: "TRUST_GATE_CHANNELS_DIR",
};

/// `pt` with the real program at its id.
pub fn add_to(pt: &mut ProgramTest) {
    FIXTURE.add_to(pt);
}

/// A bank with every program trust-gate touches and the real payment-channels program.
pub async fn start() -> ProgramTestContext {
    let mut pt = trust_gate_localnet::native::program_test();
    add_to(&mut pt);
    pt.start_with_context().await
}
