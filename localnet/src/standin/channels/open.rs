//! The instructions that put tokens in: `open` and `top_up`.

use super::args::OpenArgs;
use super::layout::{ChannelState, Parties, SignerSeeds, Status, CHANNEL_SEED};
use super::token::{self, Role, TokenContext};
use super::{events, exact, fail, require_signer, ChannelsError, CountError};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::program::invoke_signed;
use anchor_lang::solana_program::system_instruction;
use solana_sdk::sysvar::rent;
use trust_gate_client::channels::{CHANNEL_LEN, OPEN_SLOT_WINDOW};

/// `open`: 14 accounts — payer (S,W), rent payer (S,W), payee, mint, authorized signer,
/// channel (W), payer's token account (W), escrow (W), token program, system program, rent
/// sysvar, associated token program, event authority, the program itself.
pub fn open(program_id: &Pubkey, accounts: &[AccountInfo], args: &OpenArgs) -> ProgramResult {
    let [payer, rent_payer, payee, mint, authorized_signer, channel, payer_tokens, escrow, token_program, system, rent_sysvar, ata_program, event_authority, self_program] =
        exact::<14>(accounts, CountError::Runtime, "open")?;
    require_signer(payer, "payer")?;
    require_signer(rent_payer, "rent_payer")?;
    if payer.key == payee.key {
        return Err(fail(
            ChannelsError::PayerPayeeMustDiffer,
            "the payer cannot be the payee",
        ));
    }
    if args.deposit == 0 {
        return Err(fail(ChannelsError::DepositMustBeNonZero, "a zero deposit"));
    }
    if args.grace_period == 0 {
        return Err(fail(
            ChannelsError::GracePeriodMustBeNonZero,
            "a zero grace period",
        ));
    }
    // Vouchers are Ed25519 signatures: a key off the curve could never sign one.
    if !authorized_signer.key.is_on_curve() {
        return Err(fail(
            ChannelsError::InvalidAuthorizedSigner,
            "the authorized signer is not an Ed25519 key",
        ));
    }
    let slot = Clock::get()?.slot;
    let too_old = slot
        .checked_sub(args.open_slot)
        .is_none_or(|age| age > OPEN_SLOT_WINDOW);
    if too_old {
        return Err(fail(
            ChannelsError::OpenSlotOutOfWindow,
            &format!(
                "open slot {} is not within 1500 slots before {slot}",
                args.open_slot
            ),
        ));
    }
    let parties = Parties {
        payer: *payer.key,
        payee: *payee.key,
        authorized_signer: *authorized_signer.key,
        mint: *mint.key,
        rent_payer: *rent_payer.key,
    };
    let (address, bump) = Pubkey::find_program_address(
        &[
            CHANNEL_SEED,
            parties.payer.as_ref(),
            parties.payee.as_ref(),
            parties.mint.as_ref(),
            parties.authorized_signer.as_ref(),
            &args.salt.to_le_bytes(),
            &args.open_slot.to_le_bytes(),
        ],
        program_id,
    );
    // The channel signs its escrow's transfers: it must not be paid a share of itself.
    if args
        .distribution
        .entries
        .iter()
        .any(|e| e.recipient == address)
    {
        return Err(fail(
            ChannelsError::InvalidSplitConfig,
            "the channel cannot be a recipient",
        ));
    }
    if *channel.key != address {
        return Err(fail(
            ChannelsError::ChannelAddressMismatch,
            "the channel is not at its derived address",
        ));
    }
    let ctx = TokenContext::new(mint, token_program)?;
    // The escrow does not exist yet: only its address is checked.
    ctx.check_address(escrow, &address).map_err(|why| {
        fail(
            ChannelsError::ChannelAccountMismatch,
            &format!("escrow: {why:?}"),
        )
    })?;
    Role::Payer.check(&ctx, payer_tokens, payer.key)?;

    let seeds = SignerSeeds::new(&parties, args.salt, args.open_slot, bump);
    create_channel(rent_payer, channel, system, rent_sysvar, &seeds, program_id)?;
    token::create_idempotent(&ctx, rent_payer, escrow, channel, system, ata_program)?;
    token::transfer_checked(&ctx, payer_tokens, escrow, payer, args.deposit, None)?;
    ChannelState::new_open(
        bump,
        args.salt,
        args.deposit,
        args.grace_period,
        args.distribution.hash(),
        &parties,
        args.open_slot,
    )
    .store(channel)?;
    events::emit(
        event_authority,
        self_program,
        events::opened(&address, args.open_slot),
    )
}

/// Makes the channel account tolerant of lamports sent to its address beforehand: only the
/// rent shortfall is transferred, then the channel allocates and assigns itself (a
/// `CreateAccount` would fail on a funded address).
fn create_channel<'a>(
    rent_payer: &AccountInfo<'a>,
    channel: &AccountInfo<'a>,
    system: &AccountInfo<'a>,
    rent_sysvar: &AccountInfo<'a>,
    seeds: &SignerSeeds,
    program_id: &Pubkey,
) -> ProgramResult {
    if *rent_sysvar.key != rent::ID {
        return Err(super::fail_with(
            ProgramError::InvalidArgument,
            "not the rent sysvar",
        ));
    }
    let required = Rent::get()?.minimum_balance(CHANNEL_LEN);
    let shortfall = required.saturating_sub(channel.lamports());
    if shortfall > 0 {
        let ix = system_instruction::transfer(rent_payer.key, channel.key, shortfall);
        invoke_signed(
            &ix,
            &[rent_payer.clone(), channel.clone(), system.clone()],
            &[],
        )?;
    }
    let signer = seeds.as_seeds();
    let ix = system_instruction::allocate(channel.key, CHANNEL_LEN as u64);
    invoke_signed(&ix, &[channel.clone(), system.clone()], &[&signer])?;
    let ix = system_instruction::assign(channel.key, program_id);
    invoke_signed(&ix, &[channel.clone(), system.clone()], &[&signer])
}

/// `top_up(amount)`: 6 accounts — payer (S,W), channel (W), payer's token account (W),
/// escrow (W), mint, token program. Raises the deposit, and with it the voucher cap.
pub fn top_up(accounts: &[AccountInfo], amount: u64) -> ProgramResult {
    let [payer, channel, payer_tokens, escrow, mint, token_program] =
        exact::<6>(accounts, CountError::Custom, "top_up")?;
    require_signer(payer, "payer")?;
    if amount == 0 {
        return Err(fail(ChannelsError::DepositMustBeNonZero, "a zero top-up"));
    }
    let mut state = ChannelState::load(channel)?;
    if state.status_byte() != Status::Open as u8 {
        return Err(fail(
            ChannelsError::InvalidChannelStatus,
            "only an open channel takes a top-up",
        ));
    }
    let parties = state.parties();
    if *payer.key != parties.payer {
        return Err(fail(ChannelsError::InvalidChannelPayer, "not the payer"));
    }
    if *mint.key != parties.mint {
        return Err(fail(ChannelsError::InvalidChannelMint, "not the mint"));
    }
    let ctx = TokenContext::new(mint, token_program)?;
    Role::Escrow.check(&ctx, escrow, channel.key)?;
    Role::Payer.check(&ctx, payer_tokens, payer.key)?;
    let deposit = state
        .deposit()
        .checked_add(amount)
        .ok_or_else(|| fail(ChannelsError::TopUpDepositOverflow, "the deposit overflows"))?;
    state.set_deposit(deposit);
    state.store(channel)?;
    token::transfer_checked(&ctx, payer_tokens, escrow, payer, amount, None)
}
