use crate::errors::GateError;
use crate::events::ChannelRecordClosed;
use crate::state::ChannelRecord;
use anchor_lang::prelude::*;
use trust_gate_program_common::external::ids::PAYMENT_CHANNELS;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
pub struct CloseChannelRecord<'info> {
    /// The record of a channel that no longer exists, closed to its facilitator.
    #[account(
        mut,
        close = facilitator,
        has_one = facilitator @ GateError::RentRecipientMismatch,
    )]
    pub channel_record: Account<'info, ChannelRecord>,
    /// The record's facilitator, which paid its rent.
    /// CHECK: compared with the record.
    #[account(mut)]
    pub facilitator: UncheckedAccount<'info>,
    /// The record's channel: the program must have deleted it.
    /// CHECK: verified as described above.
    #[account(address = channel_record.channel @ GateError::ChannelAccountInvalid)]
    pub channel: UncheckedAccount<'info>,
}

/// Closes the record of a channel the payment-channels program deleted before the gate saw
/// it sealed (someone else ran the sealed `distribute` after the channel's slot window, or
/// `reclaim`): its settled amount is gone with it, so there is no feedback and nothing is
/// given back to the payer's policy (the whole deposit stays counted). No signer: the rent
/// can only go back to the facilitator that paid it.
pub fn close_channel_record(ctx: Context<CloseChannelRecord>) -> Result<()> {
    let a = &ctx.accounts;
    // Only the program can own its channel's address (a PDA it signs for, and one that can
    // never open again: its open slot is a seed and only recent slots open), so another
    // owner (the system program, with or without lamports sent since) means it deleted it.
    require!(
        a.channel.owner != &PAYMENT_CHANNELS,
        GateError::ChannelStillOpen
    );
    runtime::emit(&ChannelRecordClosed {
        channel: a.channel_record.channel,
        facilitator: a.facilitator.key(),
        deposit: a.channel_record.deposit,
    });
    Ok(())
}
