//! Fixtures shared by the program integration suites (`tests/programs/`).
//!
//! Every suite runs real transactions against a solana-program-test bank holding our three
//! programs natively, the registry/engine stand-in at the external ids, and SPL Token,
//! Token-2022 and the Associated Token Account program.

use anchor_lang::solana_program::system_instruction;
use anchor_lang::{prelude::Pubkey, AccountDeserialize};
use solana_banks_interface::TransactionMetadata;
use solana_program_test::{BanksClientError, ProgramTestContext};
use solana_sdk::{
    account::Account,
    clock::Clock,
    instruction::{Instruction, InstructionError},
    signature::{Keypair, Signer},
    transaction::{Transaction, TransactionError, VersionedTransaction},
};

pub mod channels;
pub mod compute_units;
pub mod differential;
pub mod externals;
pub mod fixture;
pub mod holdback;
pub mod hook;
pub mod mints;
pub mod registry;
pub mod subscriptions;
pub mod transfers;
pub mod world;
pub mod wrapper;

/// Starts a bank with every program trust-gate touches.
pub async fn start() -> ProgramTestContext {
    trust_gate_localnet::native::program_test()
        .start_with_context()
        .await
}

/// Sends one transaction paid by the context's payer, signed by it and `signers`.
pub async fn send(
    ctx: &mut ProgramTestContext,
    ixs: &[Instruction],
    signers: &[&Keypair],
) -> Result<(), BanksClientError> {
    let tx = transaction(ctx, ixs, signers).await;
    process(ctx, tx).await
}

/// Executes `tx` on the working bank and returns once its account locks are released.
///
/// Every test transaction goes through this path. `BanksClient::process_transaction`
/// hands the transaction to a background thread that publishes the signature status
/// before it unlocks the accounts, so a transaction executed right after one sent that
/// way could fail with `AccountInUse`. The direct path does not check signatures, so this
/// does first, as a validator would.
pub async fn execute(
    ctx: &mut ProgramTestContext,
    tx: impl Into<VersionedTransaction>,
) -> Result<TransactionMetadata, BanksClientError> {
    let tx: VersionedTransaction = tx.into();
    if tx.verify_with_results().iter().any(|ok| !ok) {
        return Err(BanksClientError::TransactionError(
            TransactionError::SignatureFailure,
        ));
    }
    let outcome = ctx
        .banks_client
        .process_transaction_with_metadata(tx)
        .await?;
    outcome.result.map_err(BanksClientError::TransactionError)?;
    Ok(outcome
        .metadata
        .expect("an executed transaction has metadata"))
}

/// [`execute`] without the metadata.
pub async fn process(
    ctx: &mut ProgramTestContext,
    tx: impl Into<VersionedTransaction>,
) -> Result<(), BanksClientError> {
    execute(ctx, tx).await.map(|_| ())
}

/// Builds and signs a transaction paid by the context's payer with a recent blockhash.
pub async fn transaction(
    ctx: &mut ProgramTestContext,
    ixs: &[Instruction],
    signers: &[&Keypair],
) -> Transaction {
    let payer = ctx.payer.insecure_clone();
    transaction_paid_by(ctx, ixs, &payer, signers).await
}

/// Builds a transaction paid by `fee_payer` with a recent blockhash, signed by it and
/// `signers`.
pub async fn transaction_paid_by(
    ctx: &mut ProgramTestContext,
    ixs: &[Instruction],
    fee_payer: &Keypair,
    signers: &[&Keypair],
) -> Transaction {
    let blockhash = ctx.banks_client.get_latest_blockhash().await.unwrap();
    let mut all: Vec<&Keypair> = vec![fee_payer];
    all.extend(
        signers
            .iter()
            .copied()
            .filter(|k| k.pubkey() != fee_payer.pubkey()),
    );
    Transaction::new_signed_with_payer(ixs, Some(&fee_payer.pubkey()), &all, blockhash)
}

/// Sends one transaction paid by `fee_payer` and signed by it and `signers`.
pub async fn send_tx(
    ctx: &mut ProgramTestContext,
    ixs: &[Instruction],
    fee_payer: &Keypair,
    signers: &[&Keypair],
) -> Result<(), BanksClientError> {
    let tx = transaction_paid_by(ctx, ixs, fee_payer, signers).await;
    process(ctx, tx).await
}

/// Substitutes `to` for the account `from` in `ix` (what an attacker swapping accounts does).
#[track_caller]
pub fn replace_account(ix: &mut Instruction, from: &Pubkey, to: Pubkey) {
    let meta = ix
        .accounts
        .iter_mut()
        .find(|m| m.pubkey == *from)
        .unwrap_or_else(|| panic!("{from} is not an account of the instruction"));
    meta.pubkey = to;
}

/// A fresh 32-byte payment id hash.
pub fn payment_id() -> [u8; 32] {
    Pubkey::new_unique().to_bytes()
}

/// The custom program error code a failed transaction carries, if any.
pub fn custom_code(err: &BanksClientError) -> Option<u32> {
    match err {
        BanksClientError::TransactionError(TransactionError::InstructionError(
            _,
            InstructionError::Custom(code),
        ))
        | BanksClientError::SimulationError {
            err: TransactionError::InstructionError(_, InstructionError::Custom(code)),
            ..
        } => Some(*code),
        _ => None,
    }
}

/// The instruction error a failed transaction carries, if any.
pub fn instruction_error(err: &BanksClientError) -> Option<InstructionError> {
    match err {
        BanksClientError::TransactionError(TransactionError::InstructionError(_, e))
        | BanksClientError::SimulationError {
            err: TransactionError::InstructionError(_, e),
            ..
        } => Some(e.clone()),
        _ => None,
    }
}

/// Asserts that `result` failed with Anchor error/custom code `code`.
#[track_caller]
pub fn assert_code<T: std::fmt::Debug>(result: Result<T, BanksClientError>, code: u32) {
    match result {
        Ok(v) => panic!("expected error code {code}, got success {v:?}"),
        Err(e) => assert_eq!(custom_code(&e), Some(code), "unexpected error: {e:?}"),
    }
}

/// Asserts that creating an account that already exists was refused
/// (`pda_account::create_pda` answers `AccountAlreadyInitialized`).
#[track_caller]
pub fn assert_already_in_use<T: std::fmt::Debug>(result: Result<T, BanksClientError>) {
    match result {
        Ok(v) => panic!("re-initialization succeeded: {v:?}"),
        Err(e) => assert_eq!(
            instruction_error(&e),
            Some(InstructionError::AccountAlreadyInitialized),
            "unexpected error: {e:?}"
        ),
    }
}

/// Transfers lamports from the payer to `to`.
pub async fn fund(ctx: &mut ProgramTestContext, to: &Pubkey, lamports: u64) {
    let ix = system_instruction::transfer(&ctx.payer.pubkey(), to, lamports);
    send(ctx, &[ix], &[]).await.unwrap();
}

/// A new keypair with 10 SOL.
pub async fn funded_keypair(ctx: &mut ProgramTestContext) -> Keypair {
    let k = Keypair::new();
    fund(ctx, &k.pubkey(), 10_000_000_000).await;
    k
}

pub async fn raw_account(ctx: &mut ProgramTestContext, address: &Pubkey) -> Option<Account> {
    ctx.banks_client.get_account(*address).await.unwrap()
}

/// Fetches and decodes an Anchor account; `None` when it does not exist.
pub async fn fetch<T: AccountDeserialize>(
    ctx: &mut ProgramTestContext,
    address: &Pubkey,
) -> Option<T> {
    let account = raw_account(ctx, address).await?;
    Some(T::try_deserialize(&mut account.data.as_slice()).expect("account decodes"))
}

pub async fn clock(ctx: &mut ProgramTestContext) -> Clock {
    ctx.banks_client.get_sysvar::<Clock>().await.unwrap()
}

/// Moves the bank's unix time forward by `seconds` (slots untouched).
pub async fn advance_time(ctx: &mut ProgramTestContext, seconds: i64) {
    let mut c = clock(ctx).await;
    c.unix_timestamp += seconds;
    ctx.set_sysvar(&c);
}

/// Sets the bank's unix time.
pub async fn set_time(ctx: &mut ProgramTestContext, unix_timestamp: i64) {
    let mut c = clock(ctx).await;
    c.unix_timestamp = unix_timestamp;
    ctx.set_sysvar(&c);
}

/// Moves the bank forward by `slots` slots.
pub async fn advance_slots(ctx: &mut ProgramTestContext, slots: u64) {
    let slot = clock(ctx).await.slot;
    ctx.warp_to_slot(slot + slots).unwrap();
}
