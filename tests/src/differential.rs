//! What the differential tests of a stand-in against a third party's real program share (the
//! `channels` and `subscriptions` suites' `standin.rs`): a scenario run step by step on either
//! engine and compared, what a step is expected to answer, a failure described without what
//! differs between two banks, fixed keys, unique sends and both banks' clocks set alike.

use solana_program_test::{BanksClientError, ProgramTestContext};
use solana_sdk::clock::Clock;
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use solana_sdk::transaction::TransactionError;
use std::fmt::Debug;

/// Which program a scenario runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The third party's bytecode.
    Real,
    /// Our stand-in of it.
    StandIn,
}

/// A bank a scenario runs in: one step at a time, and what the bank shows after each.
#[allow(async_fn_in_trait)] // awaited in place by the tests: no `Send` bound is needed
pub trait Scenario {
    type Step: Copy + Debug;
    type Observed: PartialEq + Debug;
    async fn run(&mut self, step: Self::Step) -> Result<(), String>;
    async fn observe(&mut self, step: Self::Step, result: Result<(), String>) -> Self::Observed;
}

/// Runs `steps` in `bank` (set up on `engine`), each answering what it expects; what the bank
/// showed after each.
pub async fn run_on<S: Scenario>(
    mut bank: S,
    engine: Engine,
    steps: &[(S::Step, Expect)],
) -> Vec<S::Observed> {
    let mut seen = Vec::with_capacity(steps.len());
    for (i, (step, expect)) in steps.iter().enumerate() {
        let result = bank.run(*step).await;
        assert!(
            expect.matches(&result),
            "{engine:?}, step {i} {step:?}: expected {expect:?}, got {result:?}"
        );
        seen.push(bank.observe(*step, result).await);
    }
    seen
}

/// Every step showed the same on the stand-in as on the real program.
pub fn assert_alike<O: PartialEq + Debug>(real: &[O], standin: &[O]) {
    for (i, (r, s)) in real.iter().zip(standin).enumerate() {
        assert_eq!(
            s, r,
            "step {i}: the stand-in (left) differs from the real program (right)"
        );
    }
    assert_eq!(real.len(), standin.len());
}

/// The key of 32 bytes `n`: the same in both banks.
pub fn key(n: u8) -> Keypair {
    Keypair::new_from_array([n; 32])
}

const COMPUTE_BUDGET: Pubkey = solana_sdk::pubkey!("ComputeBudget111111111111111111111111111111");

/// Sends `ixs` with a trailing compute-unit limit unique to the bank's `sent`-th send (which
/// it counts), so that a step repeated on purpose is executed, not refused as already
/// processed; a failure as [`describe`] tells it.
pub async fn send_unique(
    ctx: &mut ProgramTestContext,
    sent: &mut u32,
    mut ixs: Vec<Instruction>,
    signers: &[&Keypair],
) -> Result<(), String> {
    *sent += 1;
    let mut unique = vec![2u8];
    unique.extend_from_slice(&(1_000_000 + *sent).to_le_bytes());
    ixs.push(Instruction::new_with_bytes(COMPUTE_BUDGET, &unique, vec![]));
    crate::send(ctx, &ixs, signers).await.map_err(describe)
}

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
