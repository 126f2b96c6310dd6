//! The instructions that take tokens and lamports out: `distribute`, `withdraw_payer` and
//! `reclaim`.
//!
//! Payouts are cumulative: each share is `floor(settled · bps / 10 000)` minus the same of
//! the payout watermark, so repeated distributes of an open channel never pay a unit twice
//! and the rounding dust stays in the escrow until the sealed distribute sweeps it to the
//! treasury.

use super::args::Distribution;
use super::events::{self, Beneficiary, RedirectReason};
use super::layout::{ChannelState, SignerSeeds, Status};
use super::token::{self, ExtensionError, Invalid, Role, TokenContext, TokenKind};
use super::{exact, fail, fail_with, require_signer, ChannelsError, CountError};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::system_program;
use std::result::Result;
use trust_gate_client::channels::{ALL_BPS, MAX_RECIPIENTS, OPEN_SLOT_WINDOW};

/// `distribute`'s fixed accounts, before one token account per recipient.
const FIXED_ACCOUNTS: usize = 11;
/// Every recipient, the payee, the payer's refund and the treasury's sweep.
const MAX_TRANSFERS: usize = MAX_RECIPIENTS + 3;

/// `floor(amount · bps / 10 000)`, as the program computes it in 128 bits.
fn share(amount: u64, bps: u32) -> Result<u64, ProgramError> {
    let product = u128::from(amount)
        .checked_mul(u128::from(bps))
        .ok_or_else(|| fail(ChannelsError::DistributionAmountOverflow, "share"))?;
    u64::try_from(product / u128::from(ALL_BPS))
        .map_err(|_| fail(ChannelsError::DistributionAmountOverflow, "share"))
}

/// What a `bps` share gains between the payout watermark and the settled amount.
fn delta(state: &ChannelState, bps: u32) -> Result<u64, ProgramError> {
    share(state.settled(), bps)?
        .checked_sub(share(state.payout_watermark(), bps)?)
        .ok_or_else(|| fail(ChannelsError::DistributePoolOverflow, "the watermark"))
}

/// The transfers a distribute sends from the escrow, in the real program's order.
struct Queue<'a> {
    transfers: Vec<(AccountInfo<'a>, u64)>,
    outflow: u64,
}

impl<'a> Queue<'a> {
    fn push(&mut self, to: &AccountInfo<'a>, amount: u64) -> ProgramResult {
        if amount == 0 {
            return Ok(());
        }
        if self.transfers.len() >= MAX_TRANSFERS {
            return Err(fail(
                ChannelsError::DistributeTransferQueueOverflow,
                "too many transfers",
            ));
        }
        self.outflow = self.outflow.checked_add(amount).ok_or_else(|| {
            fail(
                ChannelsError::DistributeBalanceCalculationOverflow,
                "the outflow overflows",
            )
        })?;
        self.transfers.push((to.clone(), amount));
        Ok(())
    }
}

/// Everything a payout needs besides its own account.
struct Payouts<'s, 'a> {
    ctx: &'s TokenContext<'s, 'a>,
    channel: &'s Pubkey,
    treasury: &'s AccountInfo<'a>,
    event_authority: &'s AccountInfo<'a>,
    self_program: &'s AccountInfo<'a>,
}

impl<'s, 'a> Payouts<'s, 'a> {
    /// Where `owner`'s payout of `amount` goes. A wrong address (or a malformed extension
    /// trailer) fails the distribute; any other broken account forfeits the payout to the
    /// treasury, announced by a `PayoutRedirected` event. A zero payout only has its address
    /// checked.
    fn destination(
        &self,
        beneficiary: Beneficiary,
        role: Role,
        account: &'s AccountInfo<'a>,
        owner: &Pubkey,
        amount: u64,
    ) -> Result<&'s AccountInfo<'a>, ProgramError> {
        let hard = |why: Invalid| fail(role.error(why), &format!("{role:?} account: {why:?}"));
        if amount == 0 {
            self.ctx.check_address(account, owner).map_err(hard)?;
            return Ok(account);
        }
        let reason = match self.ctx.check_account(account, owner) {
            Ok(()) => return Ok(account),
            Err(Invalid::Extension(ExtensionError::Unsupported)) => {
                RedirectReason::UnsupportedExtension
            }
            Err(Invalid::Malformed) => RedirectReason::ClosedOrMalformed,
            Err(Invalid::NotInitialized) => RedirectReason::NotInitialized,
            Err(Invalid::Owner) => RedirectReason::ReassignedAuthority,
            Err(why) => return Err(hard(why)),
        };
        trust_gate_program_common::runtime::log(&format!(
            "payment-channels stand-in: {beneficiary:?} payout of {amount} to the treasury ({reason:?})"
        ));
        events::emit(
            self.event_authority,
            self.self_program,
            events::payout_redirected(self.channel, owner, amount, beneficiary, reason),
        )?;
        Ok(self.treasury)
    }
}

/// `distribute(distribution)`: channel (W), payer (W), rent payer (W), escrow (W), payer's
/// token account (W), payee's (W), treasury's (W), mint, token program, event authority,
/// the program, then each recipient's token account (W) in the distribution's order.
///
/// An open channel pays what was settled since the last distribute; a sealed one also
/// refunds the payer (unless it withdrew), sweeps the rest of the escrow to the treasury,
/// closes the escrow to the rent payer, and either deallocates the channel (its open slot
/// older than the window) or marks it distributed.
pub fn distribute(
    _program_id: &Pubkey,
    accounts: &[AccountInfo],
    distribution: &Distribution,
) -> ProgramResult {
    if accounts.len() < FIXED_ACCOUNTS {
        return Err(fail_with(
            ProgramError::NotEnoughAccountKeys,
            "`distribute` takes at least 11 accounts",
        ));
    }
    let (fixed, recipients) = accounts.split_at(FIXED_ACCOUNTS);
    let [channel, payer, rent_payer, escrow, payer_tokens, payee_tokens, treasury, mint, token_program, event_authority, self_program] =
        <&[AccountInfo; FIXED_ACCOUNTS]>::try_from(fixed)
            .map_err(|_| ProgramError::NotEnoughAccountKeys)?;

    let mut state = ChannelState::load(channel)?;
    let status = Status::from_byte(state.status_byte())?;
    if !matches!(status, Status::Open | Status::Sealed) {
        return Err(fail(
            ChannelsError::ChannelNotDistributable,
            "only an open or sealed channel is distributed",
        ));
    }
    let parties = state.parties();
    if *payer.key != parties.payer {
        return Err(fail(ChannelsError::InvalidChannelPayer, "not the payer"));
    }
    if *mint.key != parties.mint {
        return Err(fail(ChannelsError::InvalidChannelMint, "not the mint"));
    }
    if *rent_payer.key != parties.rent_payer {
        return Err(fail(
            ChannelsError::InvalidChannelRentPayer,
            "not the rent payer",
        ));
    }
    let ctx = TokenContext::new(mint, token_program)?;
    Role::Escrow.check(&ctx, escrow, channel.key)?;
    Role::Treasury.check(&ctx, treasury, &trust_gate_client::channels::TREASURY_OWNER)?;
    if distribution.hash() != state.distribution_hash() {
        return Err(fail(
            ChannelsError::InvalidDistributionHash,
            "not the distribution the channel was opened with",
        ));
    }
    if recipients.len() != distribution.entries.len() {
        return Err(fail(
            ChannelsError::RecipientAccountCountMismatch,
            "one token account per recipient",
        ));
    }
    let unaccounted = state
        .settled()
        .checked_sub(state.payout_watermark())
        .ok_or_else(|| fail(ChannelsError::DistributePoolOverflow, "the watermark"))?;
    if status == Status::Open && unaccounted == 0 {
        return Err(fail(
            ChannelsError::NothingToDistribute,
            "nothing was settled since the last distribute",
        ));
    }

    let payouts = Payouts {
        ctx: &ctx,
        channel: channel.key,
        treasury,
        event_authority,
        self_program,
    };
    let mut queue = Queue {
        transfers: Vec::new(),
        outflow: 0,
    };
    for (entry, account) in distribution.entries.iter().zip(recipients) {
        let amount = delta(&state, u32::from(entry.bps))?;
        let to = payouts.destination(
            Beneficiary::Recipient,
            Role::Recipient,
            account,
            &entry.recipient,
            amount,
        )?;
        queue.push(to, amount)?;
    }
    let payee_amount = delta(&state, distribution.payee_bps())?;
    let to = payouts.destination(
        Beneficiary::Payee,
        Role::Payee,
        payee_tokens,
        &parties.payee,
        payee_amount,
    )?;
    queue.push(to, payee_amount)?;
    if status == Status::Sealed {
        if state.payer_withdrawn_at() == 0 && state.deposit() > state.settled() {
            let refund = state.deposit() - state.settled();
            let to = payouts.destination(
                Beneficiary::Payer,
                Role::Payer,
                payer_tokens,
                &parties.payer,
                refund,
            )?;
            queue.push(to, refund)?;
        }
        // Whatever the escrow holds beyond the scheduled payouts (rounding dust, tokens sent
        // to it by anyone) goes to the treasury: the channel's state, not the balance, is
        // what the parties are owed.
        let sweep = ctx
            .amount(escrow)?
            .checked_sub(queue.outflow)
            .ok_or_else(|| {
                fail(
                    ChannelsError::DistributeBalanceCalculationOverflow,
                    "the escrow holds less than the payouts",
                )
            })?;
        queue.push(treasury, sweep)?;
    }

    let seeds = state.signer_seeds();
    send(&ctx, escrow, channel, &queue.transfers, &seeds)?;
    if status == Status::Sealed {
        token::close_account(&ctx, escrow, rent_payer, channel, &seeds)?;
        let unlock = state
            .open_slot()
            .checked_add(OPEN_SLOT_WINDOW)
            .ok_or_else(|| {
                fail_with(
                    ProgramError::ArithmeticOverflow,
                    "the unlock slot overflows",
                )
            })?;
        if Clock::get()?.slot > unlock {
            return deallocate(channel, rent_payer);
        }
        state.set_status(Status::Distributed);
    } else {
        state.set_payout_watermark(state.settled());
    }
    state.store(channel)
}

/// Sends the queued transfers: one `TransferChecked` each, except two or more in SPL Token,
/// which the real program batches (see [`token::batch_transfers`]).
fn send<'a>(
    ctx: &TokenContext<'_, 'a>,
    escrow: &AccountInfo<'a>,
    channel: &AccountInfo<'a>,
    transfers: &[(AccountInfo<'a>, u64)],
    seeds: &SignerSeeds,
) -> ProgramResult {
    if ctx.kind == TokenKind::Spl && transfers.len() >= 2 {
        return token::batch_transfers(ctx, escrow, channel, transfers, seeds);
    }
    for (to, amount) in transfers {
        token::transfer_checked(ctx, escrow, to, channel, *amount, Some(seeds))?;
    }
    Ok(())
}

/// Gives every lamport of the channel to the rent payer and leaves no account behind.
fn deallocate(channel: &AccountInfo, rent_payer: &AccountInfo) -> ProgramResult {
    let drained = channel.lamports();
    let total = rent_payer.lamports().checked_add(drained).ok_or_else(|| {
        fail(
            ChannelsError::RentPayerBalanceOverflow,
            "the rent payer's balance overflows",
        )
    })?;
    **rent_payer.try_borrow_mut_lamports()? = total;
    **channel.try_borrow_mut_lamports()? = 0;
    channel.resize(0)?;
    channel.assign(&system_program::ID);
    Ok(())
}

/// `withdraw_payer`: payer (S), channel (W), escrow (W), payer's token account (W), mint,
/// token program. The payer takes the unsettled deposit of a sealed channel back, once.
pub fn withdraw_payer(accounts: &[AccountInfo]) -> ProgramResult {
    let [payer, channel, escrow, payer_tokens, mint, token_program] =
        exact::<6>(accounts, CountError::Custom, "withdraw_payer")?;
    let now = Clock::get()?.unix_timestamp;
    require_signer(payer, "payer")?;
    let mut state = ChannelState::load(channel)?;
    if state.status_byte() != Status::Sealed as u8 {
        return Err(fail(
            ChannelsError::InvalidChannelStatus,
            "only a sealed channel refunds its payer",
        ));
    }
    let parties = state.parties();
    if *payer.key != parties.payer {
        return Err(fail(ChannelsError::InvalidChannelPayer, "not the payer"));
    }
    if state.payer_withdrawn_at() != 0 {
        return Err(fail(
            ChannelsError::PayerAlreadyWithdrawn,
            "the payer already withdrew",
        ));
    }
    if *mint.key != parties.mint {
        return Err(fail(ChannelsError::InvalidChannelMint, "not the mint"));
    }
    let ctx = TokenContext::new(mint, token_program)?;
    Role::Escrow.check(&ctx, escrow, channel.key)?;
    Role::Payer.check(&ctx, payer_tokens, payer.key)?;
    // The time is the "already withdrew" flag.
    state.set_payer_withdrawn_at(now);
    state.store(channel)?;
    let refund = state
        .deposit()
        .checked_sub(state.settled())
        .ok_or_else(|| fail(ChannelsError::RefundCalculationOverflow, "refund"))?;
    if refund == 0 {
        return Ok(());
    }
    token::transfer_checked(
        &ctx,
        escrow,
        payer_tokens,
        channel,
        refund,
        Some(&state.signer_seeds()),
    )
}

/// `reclaim`: channel (W), rent payer (W). Anyone closes a distributed channel once its open
/// slot is older than the window, every lamport to the rent payer.
pub fn reclaim(accounts: &[AccountInfo]) -> ProgramResult {
    let [channel, rent_payer] = exact::<2>(accounts, CountError::Runtime, "reclaim")?;
    let state = ChannelState::load(channel)?;
    if state.status_byte() != Status::Distributed as u8 {
        return Err(fail(
            ChannelsError::InvalidChannelStatus,
            "only a distributed channel is reclaimed",
        ));
    }
    if *rent_payer.key != state.parties().rent_payer {
        return Err(fail(
            ChannelsError::InvalidChannelRentPayer,
            "not the rent payer",
        ));
    }
    let unlock = state
        .open_slot()
        .checked_add(OPEN_SLOT_WINDOW)
        .ok_or_else(|| fail_with(ProgramError::ArithmeticOverflow, "the unlock slot"))?;
    let slot = Clock::get()?.slot;
    if slot <= unlock {
        return Err(fail(
            ChannelsError::ChannelCloseTooEarly,
            &format!("the channel can be reclaimed after slot {unlock}, it is {slot}"),
        ));
    }
    deallocate(channel, rent_payer)
}

#[cfg(test)]
mod tests {
    #[test]
    fn shares_floor_in_128_bits() {
        assert_eq!(super::share(300_000, 10_000).unwrap(), 300_000);
        assert_eq!(super::share(333, 3_333).unwrap(), 110);
        assert_eq!(super::share(u64::MAX, 10_000).unwrap(), u64::MAX);
    }
}
