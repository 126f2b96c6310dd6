//! The local stand-in for Solana's Subscriptions program (loaded at
//! [`trust_gate_client::subscriptions::PROGRAM_ID`] by [`crate::native::add_subscriptions`]).
//!
//! **This is not the real program.** It is a native program written from the real program's
//! observed behaviour (program v0.4.0), limited to what a gated subscription uses, so that
//! `trust-gate up` serves subscriptions without a third-party build. `--external-programs`
//! (or a test that loads `subscriptions_program.so`) runs the real bytecode at the same id
//! instead, and the `subscriptions` suite's differential test (`standin.rs`) runs each
//! scenario on both and compares every outcome.
//!
//! What it implements, with the real account layouts (`SubscriptionAuthority` 106 bytes,
//! `RecurringDelegation` 211 bytes: `trust_gate_program_common::subscriptions::at`) and
//! addresses:
//!
//! | tag | instruction | file |
//! |---|---|---|
//! | 0 | `initialize_subscription_authority` (created in the slot's `init_id`, or its SPL approval refreshed) | [`authority`] |
//! | 6 | `close_subscription_authority` | [`authority`] |
//! | 14 | `revoke_subscription_authority` (the SPL approval revoked when it is the authority's, the authority closed when open) | [`authority`] |
//! | 2 | `create_recurring_delegation` | [`delegation`] |
//! | 3 | `revoke_delegation` (a recurring delegation, by its delegator) | [`delegation`] |
//! | 5 | `transfer_recurring` (and its `RecurringTransfer` event) | [`delegation`] |
//! | 228 | `emit_event` (the target of the event self-CPI) | [`delegation`] |
//!
//! Checks run in the real program's order and fail with its numbers ([`SubscriptionsError`]);
//! every failure logs one reason line first.
//!
//! Not reproduced: fixed delegations, plans and subscriptions (their tags answer
//! `InvalidInstruction`); sponsors (the optional trailing `payer` and `receiver` accounts: a
//! trailing account is refused with `InvalidInstruction` rather than used); Token-2022
//! transfer hooks (a mint with one is refused with `InvalidInstruction`: the gate never pulls
//! one); lazy migrations of older layouts; compute units and log lines.

pub mod authority;
pub mod delegation;

use super::{fail, StandinError};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use std::result::Result;
use trust_gate_program_common::subscriptions::tag;
use trust_gate_program_common::token_mint::{TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID};

/// The program's own errors, returned as `ProgramError::Custom(code)` with the real
/// program's numbers (those the implemented instructions answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum SubscriptionsError {
    NotSigner = 100,
    InvalidSubscriptionAuthorityPda = 103,
    NotSystemProgram = 104,
    InvalidTokenProgram = 105,
    InvalidToken2022MintAccountData = 106,
    InvalidToken2022TokenAccountData = 107,
    InvalidAssociatedTokenAccountDerivedAddress = 108,
    InvalidTokenSplMintAccountData = 109,
    InvalidTokenSplTokenAccountData = 110,
    InvalidAccountData = 111,
    InvalidInstructionData = 112,
    NotEnoughAccountKeys = 113,
    InvalidInstruction = 114,
    ArithmeticOverflow = 115,
    InvalidAccountDiscriminator = 117,
    MintMismatch = 125,
    InvalidDelegatePda = 126,
    InvalidHeaderData = 127,
    DelegationExpired = 128,
    InvalidAmount = 129,
    Unauthorized = 130,
    AccountNotWritable = 131,
    DelegationVersionMismatch = 133,
    DelegationAlreadyExists = 135,
    StaleSubscriptionAuthority = 136,
    AmountExceedsPeriodLimit = 400,
    InvalidPeriodLength = 402,
    RecurringDelegationStartTimeInPast = 404,
    RecurringDelegationStartTimeGreaterThanExpiry = 405,
    RecurringDelegationAmountZero = 406,
    DelegationNotStarted = 407,
    RecurringDelegationStartOnLandingRequiresExpiry = 408,
    InvalidEventAuthority = 600,
    InvalidSelfProgram = 601,
}

impl StandinError for SubscriptionsError {
    const PROGRAM: &'static str = "subscriptions";
    const NOT_ENOUGH_ACCOUNTS: Self = Self::NotEnoughAccountKeys;
    const MISSING_SIGNER: Self = Self::NotSigner;
    const NOT_WRITABLE: Self = Self::AccountNotWritable;
    const ALREADY_INITIALIZED: Self = Self::DelegationAlreadyExists;
    const INVALID_INSTRUCTION_DATA: Self = Self::InvalidInstructionData;
    fn code(self) -> u32 {
        self as u32
    }
}

/// Shorthand for the stand-in's failures.
pub(crate) fn err(e: SubscriptionsError, why: &str) -> ProgramError {
    fail(e, why)
}

/// The stand-in's entry point: the first data byte picks the instruction, whose data is
/// checked before any account.
pub fn process_instruction(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    data: &[u8],
) -> ProgramResult {
    let (&which, rest) = data
        .split_first()
        .ok_or_else(|| err(SubscriptionsError::InvalidInstruction, "no instruction tag"))?;
    match which {
        tag::INIT_SUBSCRIPTION_AUTHORITY => authority::initialize(program_id, accounts),
        tag::CLOSE_SUBSCRIPTION_AUTHORITY => authority::close(program_id, accounts),
        tag::REVOKE_SUBSCRIPTION_AUTHORITY => authority::revoke(program_id, accounts),
        tag::CREATE_RECURRING_DELEGATION => {
            delegation::create(program_id, accounts, &delegation::CreateArgs::parse(rest)?)
        }
        tag::REVOKE_DELEGATION => delegation::revoke(program_id, accounts),
        tag::TRANSFER_RECURRING => delegation::transfer(
            program_id,
            accounts,
            &delegation::TransferArgs::parse(rest)?,
        ),
        delegation::EMIT_EVENT_TAG => delegation::emit_event(accounts),
        other => Err(err(
            SubscriptionsError::InvalidInstruction,
            &format!("instruction {other} is not in the stand-in"),
        )),
    }
}

/// Logs why the instruction fails, then returns a runtime error kind (the real program
/// answers some failures with `ProgramError` variants rather than its own codes).
pub(crate) fn fail_runtime(e: ProgramError, why: &str) -> ProgramError {
    trust_gate_program_common::runtime::log(&format!("subscriptions stand-in: {e}: {why}"));
    e
}

/// No trailing account: the real program would read one as a sponsor, which the stand-in
/// does not reproduce.
pub(crate) fn no_sponsor(rest: &[AccountInfo]) -> ProgramResult {
    match rest.is_empty() {
        true => Ok(()),
        false => Err(err(
            SubscriptionsError::InvalidInstruction,
            "a sponsor (trailing payer or receiver account) is not in the stand-in",
        )),
    }
}

pub(crate) fn require_system_program(account: &AccountInfo) -> ProgramResult {
    match *account.key == anchor_lang::system_program::ID {
        true => Ok(()),
        false => Err(err(
            SubscriptionsError::NotSystemProgram,
            "not the system program",
        )),
    }
}

pub(crate) fn require_token_program(account: &AccountInfo) -> ProgramResult {
    match *account.key == TOKEN_PROGRAM_ID || *account.key == TOKEN_2022_PROGRAM_ID {
        true => Ok(()),
        false => Err(err(
            SubscriptionsError::InvalidTokenProgram,
            "neither SPL Token nor Token-2022",
        )),
    }
}

/// A mint's and a token account's base sizes.
const MINT_LEN: usize = 82;
const ACCOUNT_LEN: usize = 165;
const MINT_IS_INITIALIZED: usize = 45;
/// Token-2022's account-type byte after the base account (a mint's 82 bytes padded to 165).
const ACCOUNT_TYPE: usize = 165;
const ACCOUNT_TYPE_MINT: u8 = 1;
const ACCOUNT_TYPE_ACCOUNT: u8 = 2;

/// A mint of `token_program`, checked as the real program checks one: by its owner's rules
/// (SPL Token: exactly 82 bytes, initialized; Token-2022: at least 82, initialized, with the
/// mint account type when longer), then that its owner is `token_program`.
pub(crate) fn require_mint(mint: &AccountInfo, token_program: &AccountInfo) -> ProgramResult {
    let data = mint.try_borrow_data()?;
    let len = MINT_LEN;
    if *mint.owner == TOKEN_2022_PROGRAM_ID {
        let ok = data.len() >= len
            && data[MINT_IS_INITIALIZED] == 1
            && (data.len() == len || data.get(ACCOUNT_TYPE) == Some(&ACCOUNT_TYPE_MINT));
        if !ok {
            return Err(err(
                SubscriptionsError::InvalidToken2022MintAccountData,
                "not a Token-2022 mint",
            ));
        }
    } else if *mint.owner != TOKEN_PROGRAM_ID || data.len() != len || data[MINT_IS_INITIALIZED] != 1
    {
        return Err(err(
            SubscriptionsError::InvalidTokenSplMintAccountData,
            "not an SPL Token mint",
        ));
    }
    match mint.owner == token_program.key {
        true => Ok(()),
        false => Err(err(
            SubscriptionsError::InvalidTokenProgram,
            "the mint is another token program's",
        )),
    }
}

/// A token account checked by its owner's rules (SPL Token: exactly 165 bytes; Token-2022:
/// 165, or longer with the account type), then that its owner is `token_program`.
pub(crate) fn require_token_account(
    account: &AccountInfo,
    token_program: &AccountInfo,
) -> ProgramResult {
    let len = ACCOUNT_LEN;
    if *account.owner == TOKEN_2022_PROGRAM_ID {
        let data = account.try_borrow_data()?;
        if data.len() != len && data.get(ACCOUNT_TYPE) != Some(&ACCOUNT_TYPE_ACCOUNT) {
            return Err(err(
                SubscriptionsError::InvalidToken2022TokenAccountData,
                "not a Token-2022 token account",
            ));
        }
    } else if *account.owner != TOKEN_PROGRAM_ID || account.data_len() != len {
        return Err(err(
            SubscriptionsError::InvalidTokenSplTokenAccountData,
            "not an SPL Token account",
        ));
    }
    match account.owner == token_program.key {
        true => Ok(()),
        false => Err(err(
            SubscriptionsError::InvalidTokenProgram,
            "the token account is another token program's",
        )),
    }
}

/// A token account's mint (0) and owner (32), as the program reads them: an account too
/// short for them is `InvalidAccountData`.
pub(crate) fn mint_and_owner(account: &AccountInfo) -> Result<(Pubkey, Pubkey), ProgramError> {
    let data = account.try_borrow_data()?;
    match (super::key_at(&data, 0), super::key_at(&data, 32)) {
        (Some(mint), Some(owner)) => Ok((mint, owner)),
        _ => Err(err(
            SubscriptionsError::InvalidAccountData,
            "too short for a token account",
        )),
    }
}

/// That a token account is `owner`'s (`Unauthorized`) and of `mint` (`MintMismatch`).
pub(crate) fn require_owned(account: &AccountInfo, owner: &Pubkey, mint: &Pubkey) -> ProgramResult {
    let (its_mint, its_owner) = mint_and_owner(account)?;
    if its_owner != *owner {
        return Err(err(
            SubscriptionsError::Unauthorized,
            "the token account is not the user's",
        ));
    }
    match its_mint == *mint {
        true => Ok(()),
        false => Err(err(
            SubscriptionsError::MintMismatch,
            "the token account is of another mint",
        )),
    }
}

/// That `account` is `owner`'s associated token account of `mint` under `token_program`.
pub(crate) fn require_associated(
    account: &AccountInfo,
    owner: &Pubkey,
    mint: &Pubkey,
    token_program: &Pubkey,
) -> ProgramResult {
    match *account.key == super::channels::token::ata(owner, token_program, mint) {
        true => Ok(()),
        false => Err(err(
            SubscriptionsError::InvalidAssociatedTokenAccountDerivedAddress,
            "not the associated token account",
        )),
    }
}

/// Closes `account` to `to`: its lamports moved, its data emptied, the system program its
/// owner.
pub(crate) fn close(account: &AccountInfo, to: &AccountInfo) -> ProgramResult {
    let lamports = account.lamports();
    let total = to.lamports().checked_add(lamports).ok_or_else(|| {
        err(
            SubscriptionsError::ArithmeticOverflow,
            "the destination's lamports overflow",
        )
    })?;
    **to.try_borrow_mut_lamports()? = total;
    **account.try_borrow_mut_lamports()? = 0;
    account.resize(0)?;
    account.assign(&anchor_lang::system_program::ID);
    Ok(())
}

/// `Approve` (tag 4) of `amount` to `delegate` on `source`, by its `owner` (SPL Token and
/// Token-2022 alike).
pub(crate) fn approve(
    program: &Pubkey,
    source: &Pubkey,
    delegate: &Pubkey,
    owner: &Pubkey,
    amount: u64,
) -> Instruction {
    let mut data = vec![4];
    data.extend_from_slice(&amount.to_le_bytes());
    Instruction {
        program_id: *program,
        accounts: vec![
            AccountMeta::new(*source, false),
            AccountMeta::new_readonly(*delegate, false),
            AccountMeta::new_readonly(*owner, true),
        ],
        data,
    }
}

/// `Revoke` (tag 5) of `source`'s delegate, by its `owner`.
pub(crate) fn revoke_delegate(program: &Pubkey, source: &Pubkey, owner: &Pubkey) -> Instruction {
    Instruction {
        program_id: *program,
        accounts: vec![
            AccountMeta::new(*source, false),
            AccountMeta::new_readonly(*owner, true),
        ],
        data: vec![5],
    }
}
