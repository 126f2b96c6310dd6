//! The local stand-in for Solana's payment-channels program (loaded at
//! [`trust_gate_client::channels::PROGRAM_ID`] by [`crate::native::add_channels`]).
//!
//! **This is not the real program.** It is a native program written from the real program's
//! observed behaviour, so that `trust-gate up` serves channels without a third-party build.
//! `--external-programs` (or a test that loads `payment_channels.so`) runs the real bytecode
//! at the same id instead, and the `channels` suite's differential tests (`standin.rs`) run
//! each scenario on both and compare every outcome.
//!
//! What it implements, with the real account layout ([`layout`], 256 bytes) and the real
//! addresses (the channel PDA, the escrow and every party as canonical associated token
//! accounts, the event authority):
//!
//! | tag | instruction | file |
//! |---|---|---|
//! | 1 | `open` (prefund-tolerant: only the rent shortfall is transferred, then Allocate and Assign signed by the channel; CreateIdempotent of the escrow) | [`open`] |
//! | 3 | `top_up` | [`open`] |
//! | 2, 4, 5, 6 | `settle`, `settle_and_seal`, `request_close`, `seal` | [`lifecycle`] |
//! | 7, 8, 9 | `distribute`, `withdraw_payer`, `reclaim` | [`payout`] |
//! | 228 | `emit_event` (the target of the program's own event CPIs) | [`events`] |
//!
//! Arguments are parsed before any account is looked at ([`args`]); every instruction takes
//! an exact account list and answers a short or long one as the real program does, with
//! `ProgramError::NotEnoughAccountKeys` for `open`, `settle`, `seal`, `distribute` and
//! `reclaim` but the program's own custom 9 for the others. Checks run in the real order and
//! fail with the real numbers ([`ChannelsError`]); every failure logs one reason line first.
//! Vouchers are read from the Ed25519 precompile instruction right before, through the
//! instructions sysvar ([`voucher`]); the signature itself is verified by the runtime.
//! Token accounts and mints are parsed as the real program parses them, Token-2022 extension
//! allow-lists included ([`token`]). Payouts to a broken associated token account are
//! redirected to the treasury's (owner `Cs2zdf…`), with the same `PayoutRedirected` event.
//! For SPL Token, two or more payouts go out as one p-token `Batch` (tag 255) CPI, as the
//! real program does: the classic SPL Token of solana-program-test refuses it (custom 12),
//! and so does the stand-in's distribute there.
//!
//! Not reproduced or not verified:
//! - compute units (the stand-in is a builtin) and log lines (its own reason lines);
//! - the errors a malformed Token-2022 mint or account of an exotic length gives are
//!   modelled on the parsing library's documented rules, not compared with the bytecode;
//! - a wrong rent sysvar in `open` fails with `InvalidArgument` (unverified);
//! - the exact bytes of the `Batch` data beyond its tag (only the classic SPL Token, which
//!   refuses the tag, is available to compare with).

pub mod args;
pub mod events;
pub mod layout;
pub mod lifecycle;
pub mod open;
pub mod payout;
pub mod token;
pub mod voucher;

use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use std::result::Result;
use trust_gate_program_common::runtime::log;

/// The program's own errors, returned as `ProgramError::Custom(code)` with the real
/// program's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ChannelsError {
    MissingRequiredSignature = 1,
    InvalidChannelStatus = 2,
    InvalidAccountDiscriminator = 3,
    UnsupportedChannelVersion = 4,
    InvalidChannelPayer = 5,
    InvalidChannelPayee = 6,
    InvalidChannelMint = 7,
    InvalidEventAuthority = 8,
    /// The custom flavour of "not enough accounts" some instructions answer.
    NotEnoughAccountKeys = 9,
    InvalidChannelRentPayer = 10,
    ChannelAccountMismatch = 50,
    InvalidChannelTokenAccount = 51,
    InvalidChannelTokenExtensions = 52,
    MintAccountMismatch = 53,
    InvalidMintTokenProgram = 54,
    MalformedMintTokenAccountData = 55,
    MalformedMintTokenExtensions = 56,
    PayerAccountMismatch = 57,
    InvalidPayerTokenAccount = 58,
    InvalidPayerTokenExtensions = 59,
    PayeeAccountMismatch = 60,
    InvalidPayeeTokenAccount = 61,
    InvalidPayeeTokenExtensions = 62,
    DepositMustBeNonZero = 200,
    GracePeriodMustBeNonZero = 201,
    MissingEd25519Verification = 230,
    MalformedEd25519Instruction = 231,
    VoucherChannelMismatch = 232,
    VoucherExpired = 233,
    VoucherWatermarkNotMonotonic = 234,
    VoucherOverDeposit = 235,
    VoucherSignerMismatch = 237,
    VoucherBadMagic = 238,
    InvalidRecipientCount = 260,
    InvalidSplitConfig = 261,
    DistributionPartsOverflow = 262,
    DuplicateRecipient = 263,
    DistributionAmountOverflow = 264,
    DistributionPreimageLengthOverflow = 265,
    ChannelAddressMismatch = 2000,
    PayerPayeeMustDiffer = 2001,
    InvalidAuthorizedSigner = 2002,
    OpenSlotOutOfWindow = 2003,
    TopUpDepositOverflow = 2100,
    SealDeadlineOverflow = 2200,
    SealGracePeriodNotElapsed = 2201,
    PayerAlreadyWithdrawn = 2300,
    RefundCalculationOverflow = 2301,
    ChannelNotDistributable = 2400,
    TreasuryAccountMismatch = 2401,
    InvalidTreasuryTokenAccount = 2402,
    InvalidTreasuryTokenExtensions = 2403,
    RecipientAccountMismatch = 2404,
    InvalidRecipientTokenAccount = 2405,
    InvalidRecipientTokenExtensions = 2406,
    InvalidDistributionHash = 2407,
    NothingToDistribute = 2408,
    RecipientAccountCountMismatch = 2409,
    DistributePoolOverflow = 2410,
    DistributeBalanceCalculationOverflow = 2411,
    RentPayerBalanceOverflow = 2412,
    DistributeTransferQueueOverflow = 2413,
    ChannelCloseTooEarly = 2414,
}

impl ChannelsError {
    pub fn code(self) -> u32 {
        self as u32
    }
}

/// Logs why the instruction fails, then returns the program's custom error.
pub(crate) fn fail(err: ChannelsError, why: &str) -> ProgramError {
    log(&format!("payment-channels stand-in: {err:?}: {why}"));
    ProgramError::Custom(err.code())
}

/// Logs why the instruction fails, then returns a runtime error kind (the real program
/// answers some failures with `ProgramError` variants rather than its own codes).
pub(crate) fn fail_with(err: ProgramError, why: &str) -> ProgramError {
    log(&format!("payment-channels stand-in: {err}: {why}"));
    err
}

/// Which error an instruction answers a wrong account count with: the real program's
/// instructions disagree (see the module docs).
#[derive(Clone, Copy)]
pub(crate) enum CountError {
    Runtime,
    Custom,
}

/// The instruction's accounts as an array of exactly `N`: fewer or more is an error, as
/// in the real program's exact slice patterns.
pub(crate) fn exact<'s, 'a, const N: usize>(
    accounts: &'s [AccountInfo<'a>],
    flavour: CountError,
    instruction: &str,
) -> Result<&'s [AccountInfo<'a>; N], ProgramError> {
    <&[AccountInfo<'a>; N]>::try_from(accounts).map_err(|_| {
        let why = format!(
            "`{instruction}` takes exactly {N} accounts, got {}",
            accounts.len()
        );
        match flavour {
            CountError::Runtime => fail_with(ProgramError::NotEnoughAccountKeys, &why),
            CountError::Custom => fail(ChannelsError::NotEnoughAccountKeys, &why),
        }
    })
}

pub(crate) fn require_signer(account: &AccountInfo, name: &str) -> ProgramResult {
    if account.is_signer {
        Ok(())
    } else {
        Err(fail(
            ChannelsError::MissingRequiredSignature,
            &format!("`{name}` must sign"),
        ))
    }
}

/// The stand-in's entry point: the first data byte picks the instruction, whose arguments
/// are parsed before anything else.
pub fn process_instruction(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    data: &[u8],
) -> ProgramResult {
    match args::Instruction::parse(data)? {
        args::Instruction::Open(a) => open::open(program_id, accounts, &a),
        args::Instruction::Settle => lifecycle::settle(accounts),
        args::Instruction::TopUp(amount) => open::top_up(accounts, amount),
        args::Instruction::SettleAndSeal { has_voucher } => {
            lifecycle::settle_and_seal(accounts, has_voucher)
        }
        args::Instruction::RequestClose => lifecycle::request_close(accounts),
        args::Instruction::Seal => lifecycle::seal(accounts),
        args::Instruction::Distribute(d) => payout::distribute(program_id, accounts, &d),
        args::Instruction::WithdrawPayer => payout::withdraw_payer(accounts),
        args::Instruction::Reclaim => payout::reclaim(accounts),
        args::Instruction::EmitEvent => events::emit_event(accounts),
    }
}
