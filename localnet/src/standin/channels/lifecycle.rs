//! The instructions that move a channel's watermark and status without moving tokens:
//! `settle`, `settle_and_seal`, `request_close` and `seal`.

use super::layout::{ChannelState, Status};
use super::{exact, fail, fail_with, require_signer, voucher, ChannelsError, CountError};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;

/// `settle`: channel (W), instructions sysvar. Anyone applies the voucher in the instruction
/// before; only an open channel takes one (a closing one only through the payee's
/// `settle_and_seal`).
pub fn settle(accounts: &[AccountInfo]) -> ProgramResult {
    let [channel, instructions] = exact::<2>(accounts, CountError::Runtime, "settle")?;
    let now = Clock::get()?.unix_timestamp;
    let mut state = ChannelState::load(channel)?;
    if state.status_byte() != Status::Open as u8 {
        return Err(fail(
            ChannelsError::InvalidChannelStatus,
            "only an open channel is settled",
        ));
    }
    let cumulative = voucher::verify(channel.key, &state, instructions, now)?;
    state.set_settled(cumulative);
    state.store(channel)
}

/// `settle_and_seal(has_voucher)`: payee (S), channel (W), instructions sysvar. The payee
/// seals an open channel, or a closing one while its grace period runs, applying the voucher
/// before it first when `has_voucher`.
pub fn settle_and_seal(accounts: &[AccountInfo], has_voucher: bool) -> ProgramResult {
    let [payee, channel, instructions] =
        exact::<3>(accounts, CountError::Custom, "settle_and_seal")?;
    require_signer(payee, "payee")?;
    let now = Clock::get()?.unix_timestamp;
    let mut state = ChannelState::load(channel)?;
    match Status::from_byte(state.status_byte())? {
        Status::Open => {}
        Status::Closing => {
            let deadline = state
                .closure_started_at()
                .checked_add(i64::from(state.grace_period()))
                .ok_or_else(|| {
                    fail_with(
                        ProgramError::ArithmeticOverflow,
                        "the grace deadline overflows",
                    )
                })?;
            if now >= deadline {
                return Err(fail(
                    ChannelsError::InvalidChannelStatus,
                    "the grace period is over",
                ));
            }
        }
        Status::Sealed | Status::Distributed => {
            return Err(fail(
                ChannelsError::InvalidChannelStatus,
                "the channel is already sealed",
            ));
        }
    }
    if *payee.key != state.parties().payee {
        return Err(fail(ChannelsError::InvalidChannelPayee, "not the payee"));
    }
    if has_voucher {
        let cumulative = voucher::verify(channel.key, &state, instructions, now)?;
        state.set_settled(cumulative);
    }
    state.set_status(Status::Sealed);
    state.set_closure_started_at(0);
    state.store(channel)
}

/// `request_close`: payer (S), channel (W). Starts the grace period; the channel takes no
/// more `settle` or `top_up`.
pub fn request_close(accounts: &[AccountInfo]) -> ProgramResult {
    let [payer, channel] = exact::<2>(accounts, CountError::Custom, "request_close")?;
    require_signer(payer, "payer")?;
    let now = Clock::get()?.unix_timestamp;
    let mut state = ChannelState::load(channel)?;
    if state.status_byte() != Status::Open as u8 {
        return Err(fail(
            ChannelsError::InvalidChannelStatus,
            "only an open channel can start closing",
        ));
    }
    if *payer.key != state.parties().payer {
        return Err(fail(ChannelsError::InvalidChannelPayer, "not the payer"));
    }
    state.set_closure_started_at(now);
    state.set_status(Status::Closing);
    state.store(channel)
}

/// `seal`: channel (W). Anyone seals a closing channel once its grace period is over.
pub fn seal(accounts: &[AccountInfo]) -> ProgramResult {
    let [channel] = exact::<1>(accounts, CountError::Runtime, "seal")?;
    let now = Clock::get()?.unix_timestamp;
    let mut state = ChannelState::load(channel)?;
    if state.status_byte() != Status::Closing as u8 {
        return Err(fail(
            ChannelsError::InvalidChannelStatus,
            "only a closing channel is sealed",
        ));
    }
    let deadline = state
        .closure_started_at()
        .checked_add(i64::from(state.grace_period()))
        .ok_or_else(|| {
            fail(
                ChannelsError::SealDeadlineOverflow,
                "the deadline overflows",
            )
        })?;
    if now < deadline {
        return Err(fail(
            ChannelsError::SealGracePeriodNotElapsed,
            &format!("the grace period runs until {deadline}, it is {now}"),
        ));
    }
    state.set_status(Status::Sealed);
    state.set_closure_started_at(0);
    state.store(channel)
}
