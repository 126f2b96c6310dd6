//! What the differential tests of a stand-in against a third party's real program share (the
//! `channels` and `subscriptions` suites' `standin.rs`): what a step is expected to answer,
//! a failure described without what differs between two banks, and both banks' clocks set
//! alike.

use solana_program_test::{BanksClientError, ProgramTestContext};
use solana_sdk::clock::Clock;
use solana_sdk::transaction::TransactionError;

/// What the real program is expected to answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Ok,
    Code(u32),
    /// A runtime error kind (an `InstructionError` variant's name).
    Kind(&'static str),
}

impl Expect {
    /// Whether `result` (as [`describe`] tells a failure) is what was expected.
    pub fn matches(self, result: &Result<(), String>) -> bool {
        match (result, self) {
            (Ok(()), Expect::Ok) => true,
            (Err(e), Expect::Code(code)) => e.ends_with(&format!("Custom({code})")),
            (Err(e), Expect::Kind(kind)) => e.ends_with(kind),
            _ => false,
        }
    }
}

/// The failing instruction and its error, without anything that differs between runs.
pub fn describe(e: BanksClientError) -> String {
    match e {
        BanksClientError::TransactionError(TransactionError::InstructionError(at, err))
        | BanksClientError::SimulationError {
            err: TransactionError::InstructionError(at, err),
            ..
        } => format!("instruction {at}: {err:?}"),
        other => format!("{other:?}"),
    }
}

/// Moves the bank to `slot` (when it is behind) and its clock to `unix_timestamp`.
pub async fn set_clock(ctx: &mut ProgramTestContext, slot: u64, unix_timestamp: i64) {
    if ctx.banks_client.get_sysvar::<Clock>().await.unwrap().slot < slot {
        ctx.warp_to_slot(slot).unwrap();
    }
    let mut clock: Clock = ctx.banks_client.get_sysvar().await.unwrap();
    clock.unix_timestamp = unix_timestamp;
    ctx.set_sysvar(&clock);
}
