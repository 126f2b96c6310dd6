//! A recurring delegation: created under the authority's `init_id`, revoked by its
//! delegator, pulled by its delegatee (`transfer_recurring`, the period rolled over as the
//! real program rolls it), with the pull's `RecurringTransfer` event by a self-CPI.

use super::{
    authority, err, fail_runtime, no_sponsor, require_mint, require_owned, require_system_program,
    require_token_account, require_token_program, SubscriptionsError,
};
use crate::standin::{create_account, require_signer, require_writable};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::program::invoke_signed;
use std::result::Result;
use trust_gate_program_common::subscriptions::{
    at, discriminator, seeds, RecurringDelegation, EVENT_AUTHORITY, LAYOUT_VERSION, MAX_PERIOD_SECS,
};
use trust_gate_program_common::token_mint;

type E = SubscriptionsError;

/// The tag of the program's event self-CPI.
pub const EMIT_EVENT_TAG: u8 = 228;
/// How far in the past a delegation's start may be when it is created.
const START_DRIFT_SECS: i64 = 120;
/// Anchor's event-CPI tag, little-endian, then the event's one-byte kind.
const EVENT_TAG: [u8; 8] = 0x1d9a_cb51_2ea5_45e4u64.to_le_bytes();
const RECURRING_TRANSFER_EVENT: u8 = 4;
const EVENT_AUTHORITY_SEED: &[u8] = b"event_authority";
/// The fixed part every delegation starts with (discriminator, version, bump, delegator,
/// delegatee, payer, init_id).
const HEADER_LEN: usize = 107;

fn i64_at(data: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(data[at..at + 8].try_into().unwrap_or_default())
}

/// `create_recurring_delegation`'s arguments (48 bytes exactly).
pub struct CreateArgs {
    pub nonce: u64,
    pub amount_per_period: u64,
    pub period_length_s: u64,
    pub start_ts: i64,
    pub expiry_ts: i64,
    pub expected_init_id: i64,
}

impl CreateArgs {
    pub fn parse(data: &[u8]) -> Result<CreateArgs, ProgramError> {
        if data.len() != 48 {
            return Err(err(E::InvalidInstructionData, "48 bytes of terms"));
        }
        let u = |at: usize| u64::from_le_bytes(data[at..at + 8].try_into().unwrap_or_default());
        Ok(CreateArgs {
            nonce: u(0),
            amount_per_period: u(8),
            period_length_s: u(16),
            start_ts: i64_at(data, 24),
            expiry_ts: i64_at(data, 32),
            expected_init_id: i64_at(data, 40),
        })
    }

    /// The terms against the clock, in the real program's order.
    fn validate(&self, now: i64) -> ProgramResult {
        if self.start_ts == 0 {
            if self.expiry_ts == 0 {
                return Err(err(
                    E::RecurringDelegationStartOnLandingRequiresExpiry,
                    "a start on landing needs an expiry",
                ));
            }
            if now >= self.expiry_ts {
                return Err(err(
                    E::RecurringDelegationStartTimeGreaterThanExpiry,
                    "expired before it starts",
                ));
            }
        } else {
            if self.start_ts < now.saturating_sub(START_DRIFT_SECS) {
                return Err(err(
                    E::RecurringDelegationStartTimeInPast,
                    "starts in the past",
                ));
            }
            if self.expiry_ts != 0 && self.start_ts >= self.expiry_ts {
                return Err(err(
                    E::RecurringDelegationStartTimeGreaterThanExpiry,
                    "starts at or after its expiry",
                ));
            }
        }
        if self.period_length_s == 0 || self.period_length_s > MAX_PERIOD_SECS {
            return Err(err(E::InvalidPeriodLength, "period length out of range"));
        }
        if self.amount_per_period == 0 {
            return Err(err(
                E::RecurringDelegationAmountZero,
                "zero amount per period",
            ));
        }
        Ok(())
    }
}

/// `create_recurring_delegation`: delegator (S,W), authority, delegation (W), delegatee,
/// system program.
pub fn create(program_id: &Pubkey, accounts: &[AccountInfo], args: &CreateArgs) -> ProgramResult {
    let now = Clock::get()?.unix_timestamp;
    args.validate(now)?;
    let [delegator, authority_account, delegation, delegatee, system, rest @ ..] = accounts else {
        return Err(err(E::NotEnoughAccountKeys, "five accounts"));
    };
    require_signer::<E>(delegator, "delegator")?;
    require_writable::<E>(delegator, "delegator")?;
    require_writable::<E>(delegation, "delegation_account")?;
    require_system_program(system)?;
    authority::require_open(authority_account, program_id)?;
    no_sponsor(rest)?;
    if !delegation.data_is_empty() {
        return Err(err(E::DelegationAlreadyExists, "the delegation exists"));
    }
    let stored = authority::load(authority_account)?;
    if stored.user != *delegator.key {
        return Err(err(E::Unauthorized, "not the authority's user"));
    }
    if stored.init_id != args.expected_init_id {
        return Err(err(
            E::StaleSubscriptionAuthority,
            "the authority's init_id is another",
        ));
    }
    let nonce = args.nonce.to_le_bytes();
    let (expected, bump) = Pubkey::find_program_address(
        &[
            seeds::DELEGATION,
            authority_account.key.as_ref(),
            delegator.key.as_ref(),
            delegatee.key.as_ref(),
            &nonce,
        ],
        program_id,
    );
    if *delegation.key != expected {
        return Err(err(E::InvalidDelegatePda, "not the delegation's address"));
    }
    let bump_seed = [bump];
    let signer = [
        seeds::DELEGATION,
        authority_account.key.as_ref(),
        delegator.key.as_ref(),
        delegatee.key.as_ref(),
        &nonce,
        &bump_seed,
    ];
    create_account::<E>(
        delegator,
        delegation,
        system,
        RecurringDelegation::LEN,
        program_id,
        &signer,
        "delegation_account",
    )?;
    let mut data = delegation.try_borrow_mut_data()?;
    let mut put = |at: usize, bytes: &[u8]| data[at..at + bytes.len()].copy_from_slice(bytes);
    put(
        0,
        &[discriminator::RECURRING_DELEGATION, LAYOUT_VERSION, bump],
    );
    put(at::DELEGATOR, delegator.key.as_ref());
    put(at::DELEGATEE, delegatee.key.as_ref());
    put(at::PAYER, delegator.key.as_ref());
    put(at::INIT_ID, &stored.init_id.to_le_bytes());
    put(at::SUBSCRIPTION_AUTHORITY, authority_account.key.as_ref());
    put(at::MINT, stored.mint.as_ref());
    let start = if args.start_ts == 0 {
        now
    } else {
        args.start_ts
    };
    put(at::PERIOD_START, &start.to_le_bytes());
    put(at::PERIOD_LENGTH, &args.period_length_s.to_le_bytes());
    put(at::EXPIRY, &args.expiry_ts.to_le_bytes());
    put(at::AMOUNT_PER_PERIOD, &args.amount_per_period.to_le_bytes());
    put(at::PULLED_IN_PERIOD, &0u64.to_le_bytes());
    Ok(())
}

/// `revoke_delegation` of a recurring delegation: its delegator (S,W) at any time, or the
/// payer of its rent once it expired; the rent goes back to that payer.
pub fn revoke(program_id: &Pubkey, accounts: &[AccountInfo]) -> ProgramResult {
    let [signer, delegation, rest @ ..] = accounts else {
        return Err(err(E::NotEnoughAccountKeys, "two accounts"));
    };
    require_signer::<E>(signer, "authority")?;
    require_writable::<E>(signer, "authority")?;
    require_writable::<E>(delegation, "delegation_account")?;
    if delegation.owner != program_id {
        return Err(fail_runtime(
            ProgramError::InvalidAccountOwner,
            "the delegation is not the program's",
        ));
    }
    let d = {
        let data = delegation.try_borrow_data()?;
        if data.len() < HEADER_LEN {
            return Err(err(E::InvalidHeaderData, "shorter than a header"));
        }
        if data[0] != discriminator::RECURRING_DELEGATION {
            return Err(err(
                E::InvalidAccountDiscriminator,
                "not a recurring delegation (the only kind in the stand-in)",
            ));
        }
        RecurringDelegation::read(&data)
            .ok_or_else(|| err(E::InvalidAccountData, "not a recurring delegation's size"))?
    };
    if d.delegator != *signer.key {
        if d.payer != *signer.key {
            return Err(err(E::Unauthorized, "neither its delegator nor its payer"));
        }
        let expired = d.expiry_ts != 0 && Clock::get()?.unix_timestamp > d.expiry_ts;
        if !expired {
            return Err(err(E::Unauthorized, "its payer revokes it once it expired"));
        }
    }
    if d.payer != *signer.key {
        return match rest.first() {
            None => Err(err(E::NotEnoughAccountKeys, "the payer's receiver")),
            Some(_) => no_sponsor(rest),
        };
    }
    super::close(delegation, signer)
}

/// `transfer_recurring`'s data: the amount, the delegator and the mint (72 bytes exactly).
pub struct TransferArgs {
    pub amount: u64,
    pub delegator: Pubkey,
    pub mint: Pubkey,
}

impl TransferArgs {
    pub fn parse(data: &[u8]) -> Result<TransferArgs, ProgramError> {
        if data.len() != 72 {
            return Err(err(E::InvalidInstructionData, "72 bytes of transfer data"));
        }
        Ok(TransferArgs {
            amount: u64::from_le_bytes(data[..8].try_into().unwrap_or_default()),
            delegator: crate::standin::key_at(data, 8).unwrap_or_default(),
            mint: crate::standin::key_at(data, 40).unwrap_or_default(),
        })
    }
}

/// The period a pull at `now` counts in, rolled over as the program rolls it (the shared
/// reader's `period_at`), then the pull checked against it: zero (`InvalidAmount`), past the
/// expiry (`DelegationExpired`), before the start (`DelegationNotStarted`), above what is
/// left (`AmountExceedsPeriodLimit`). Returns the period's start and what it has pulled with
/// this pull.
fn pull_within_period(
    d: &RecurringDelegation,
    amount: u64,
    now: i64,
) -> Result<(i64, u64), ProgramError> {
    if amount == 0 {
        return Err(err(E::InvalidAmount, "a zero amount"));
    }
    if d.expiry_ts != 0 && now > d.expiry_ts {
        return Err(err(E::DelegationExpired, "the delegation expired"));
    }
    if i64::try_from(d.period_length_s).map_or(true, |l| l == 0) {
        return Err(err(E::InvalidPeriodLength, "no period length"));
    }
    if now < d.current_period_start_ts {
        return Err(err(
            E::DelegationNotStarted,
            "before the delegation's start",
        ));
    }
    let (start, pulled) = d.period_at(now);
    let left = d.amount_per_period.saturating_sub(pulled);
    if amount > left {
        return Err(err(
            E::AmountExceedsPeriodLimit,
            &format!("{amount} is above the {left} left in the period"),
        ));
    }
    Ok((start, pulled + amount))
}

/// `transfer_recurring`: delegation (W), authority, delegator's associated token account
/// (W), receiver token account (W), mint, token program, delegatee (S), event authority,
/// the program.
pub fn transfer(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &TransferArgs,
) -> ProgramResult {
    let [delegation, authority_account, source, receiver, mint, token_program, delegatee, event_authority, self_program, ..] =
        accounts
    else {
        return Err(err(E::NotEnoughAccountKeys, "nine accounts"));
    };
    if delegation.owner != program_id {
        return Err(fail_runtime(
            ProgramError::InvalidAccountOwner,
            "the delegation is not the program's",
        ));
    }
    require_writable::<E>(delegation, "delegation_pda")?;
    require_writable::<E>(source, "delegator_ata")?;
    require_writable::<E>(receiver, "receiver_ata")?;
    authority::require_open(authority_account, program_id)?;
    require_token_program(token_program)?;
    require_mint(mint, token_program)?;
    require_token_account(source, token_program)?;
    require_token_account(receiver, token_program)?;
    require_signer::<E>(delegatee, "delegatee")?;
    let now = Clock::get()?.unix_timestamp;

    let d = {
        let data = delegation.try_borrow_data()?;
        if data.len() <= at::VERSION {
            return Err(err(E::InvalidAccountData, "no layout version"));
        }
        if data[0] != discriminator::RECURRING_DELEGATION {
            return Err(err(
                E::InvalidAccountDiscriminator,
                "not a recurring delegation",
            ));
        }
        if data[at::VERSION] != LAYOUT_VERSION {
            return Err(err(E::DelegationVersionMismatch, "another layout version"));
        }
        RecurringDelegation::read(&data)
            .ok_or_else(|| err(E::InvalidAccountData, "not a recurring delegation's size"))?
    };
    if d.delegator != args.delegator || d.delegatee != *delegatee.key {
        return Err(err(E::Unauthorized, "another delegator or delegatee"));
    }
    if d.subscription_authority != *authority_account.key {
        return Err(err(E::InvalidDelegatePda, "another authority's delegation"));
    }
    if d.mint != args.mint {
        return Err(err(E::MintMismatch, "another mint's delegation"));
    }
    let (period_start, pulled) = pull_within_period(&d, args.amount, now)?;
    {
        let mut data = delegation.try_borrow_mut_data()?;
        data[at::PERIOD_START..at::PERIOD_START + 8].copy_from_slice(&period_start.to_le_bytes());
        data[at::PULLED_IN_PERIOD..at::PULLED_IN_PERIOD + 8].copy_from_slice(&pulled.to_le_bytes());
    }
    let (_, receiver_owner) = super::mint_and_owner(receiver)?;

    // The transfer, signed by the authority as the source's delegate.
    if *mint.key != args.mint {
        return Err(err(E::MintMismatch, "another mint"));
    }
    let stored = authority::load(authority_account)?;
    if stored.user != args.delegator || stored.mint != args.mint {
        return Err(err(
            E::InvalidDelegatePda,
            "another user's or mint's authority",
        ));
    }
    if stored.init_id != d.init_id {
        return Err(err(
            E::StaleSubscriptionAuthority,
            "the authority was initialized again after the delegation",
        ));
    }
    require_owned(source, &args.delegator, &args.mint)?;
    super::require_associated(source, &args.delegator, &args.mint, token_program.key)?;
    let (receiver_mint, _) = super::mint_and_owner(receiver)?;
    if receiver_mint != args.mint {
        return Err(err(E::MintMismatch, "the receiver is of another mint"));
    }
    let decimals = {
        let data = mint.try_borrow_data()?;
        if token_mint::transfer_hook_program(mint.owner, &data).is_some() {
            return Err(err(
                E::InvalidInstruction,
                "transfer-hook mints are not in the stand-in",
            ));
        }
        token_mint::decimals(&data).ok_or_else(|| err(E::InvalidAccountData, "no decimals"))?
    };
    let transfer = crate::standin::channels::token::transfer_checked_instruction(
        token_program.key,
        [source.key, mint.key, receiver.key, authority_account.key],
        args.amount,
        decimals,
    );
    let bump = [stored.bump];
    let signer: &[&[u8]] = &[
        seeds::SUBSCRIPTION_AUTHORITY,
        args.delegator.as_ref(),
        args.mint.as_ref(),
        &bump,
    ];
    invoke_signed(
        &transfer,
        &[
            source.clone(),
            mint.clone(),
            receiver.clone(),
            authority_account.clone(),
            token_program.clone(),
        ],
        &[signer],
    )?;

    let length = i64::try_from(d.period_length_s).unwrap_or(i64::MAX);
    let mut period_end = period_start.saturating_add(length);
    if d.expiry_ts != 0 && period_end > d.expiry_ts {
        period_end = d.expiry_ts;
    }
    let mut event = EVENT_TAG.to_vec();
    event.push(RECURRING_TRANSFER_EVENT);
    for part in [
        delegation.key.as_ref(),
        args.delegator.as_ref(),
        delegatee.key.as_ref(),
        args.mint.as_ref(),
        &args.amount.to_le_bytes(),
        &period_start.to_le_bytes(),
        &period_end.to_le_bytes(),
        &pulled.to_le_bytes(),
        receiver_owner.as_ref(),
        receiver.key.as_ref(),
    ] {
        event.extend_from_slice(part);
    }
    emit(program_id, event_authority, self_program, event)
}

/// The event by a self-CPI signed by the event authority.
fn emit<'a>(
    program_id: &Pubkey,
    event_authority: &AccountInfo<'a>,
    self_program: &AccountInfo<'a>,
    event: Vec<u8>,
) -> ProgramResult {
    if *event_authority.key != EVENT_AUTHORITY {
        return Err(err(E::InvalidEventAuthority, "not the event authority"));
    }
    if self_program.key != program_id {
        return Err(err(E::InvalidSelfProgram, "not the program"));
    }
    let (_, bump) = Pubkey::find_program_address(&[EVENT_AUTHORITY_SEED], program_id);
    let mut data = vec![EMIT_EVENT_TAG];
    data.extend(event);
    let ix = Instruction {
        program_id: *program_id,
        accounts: vec![AccountMeta::new_readonly(EVENT_AUTHORITY, true)],
        data,
    };
    invoke_signed(
        &ix,
        &[event_authority.clone(), self_program.clone()],
        &[&[EVENT_AUTHORITY_SEED, &[bump]]],
    )
}

/// `emit_event`: only the program itself, signing as its event authority.
pub fn emit_event(accounts: &[AccountInfo]) -> ProgramResult {
    let [event_authority] = accounts else {
        return Err(fail_runtime(
            ProgramError::NotEnoughAccountKeys,
            "one account",
        ));
    };
    if !event_authority.is_signer {
        return Err(fail_runtime(
            ProgramError::MissingRequiredSignature,
            "the event authority must sign",
        ));
    }
    match *event_authority.key == EVENT_AUTHORITY {
        true => Ok(()),
        false => Err(err(E::InvalidEventAuthority, "not the event authority")),
    }
}
