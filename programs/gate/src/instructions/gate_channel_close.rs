use super::helpers::feedback::*;
use super::helpers::release::*;
use crate::channel::{final_settled, payment_id_hash};
use crate::errors::GateError;
use crate::events::ChannelClosed;
use crate::state::{seeds, ChannelRecord, FeedbackLog, GateAuthority};
use anchor_lang::prelude::*;
use policy_vault::instructions::ReleaseArgs;
use trust_gate_program_common::external::ids::PAYMENT_CHANNELS;
use trust_gate_program_common::external::instructions::GiveFeedbackArgs;
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
pub struct GateChannelClose<'info> {
    /// The record's facilitator (the channel's payee and rent payer): pays the receipt's
    /// rent and gets the record's back. Only it gives a channel's feedback, as only it gives
    /// a payment's.
    #[account(mut)]
    pub facilitator: Signer<'info>,
    /// The facilitator's GateAuthority (as in emit_feedback: read with `read_for`, its
    /// counters written in place); signs the registry feedback.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub gate_authority: UncheckedAccount<'info>,
    /// The channel's record, closed to the facilitator: a channel closes once. The gate
    /// creates a record only at the canonical PDA of the channel it stores.
    #[account(
        mut,
        close = facilitator,
        constraint = channel_record.facilitator == facilitator.key() @ GateError::ChannelFacilitatorMismatch,
    )]
    pub channel_record: Account<'info, ChannelRecord>,
    /// The record's channel, sealed or distributed (read by the handler).
    /// CHECK: verified as described above.
    #[account(
        address = channel_record.channel @ GateError::ChannelAccountInvalid,
        owner = PAYMENT_CHANNELS @ GateError::ChannelAccountInvalid,
    )]
    pub channel: UncheckedAccount<'info>,
    /// The channel's receipt, a FeedbackLog at `["feedback_log", facilitator,
    /// channel::payment_id_hash(channel)]`, created by the handler when money moved
    /// (settled > 0); unused otherwise.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub feedback_log: UncheckedAccount<'info>,
    pub target: FeedbackTarget<'info>,
    pub release: ReleaseAccounts<'info>,
    pub system_program: Program<'info, System>,
}

/// Closes a channel the gate let open, once it is sealed (its settled amount final): gives
/// back to the payer's policy what the channel refunds of the deposit the gate counted
/// (`deposit − min(settled, deposit)`), in the windows that still count it; when the channel
/// settled anything, gives the payee one feedback of value = settled (in the mint's units)
/// and writes its receipt, which the payer may dispute as a payment's; closes the record.
/// Anywhere in a transaction: before the sealed `distribute` (which may delete the channel
/// once its slot window has passed) or after it.
pub fn gate_channel_close(ctx: Context<GateChannelClose>, args: FeedbackDetails) -> Result<()> {
    let FeedbackDetails {
        score,
        tag1,
        tag2,
        endpoint,
        feedback_uri,
    } = args;
    let a = &ctx.accounts;
    let record = &a.channel_record;
    let facilitator = a.facilitator.key();
    validate_feedback_fields(
        score,
        record.decimals,
        &tag1,
        &tag2,
        &endpoint,
        &feedback_uri,
    )?;
    let mut authority = GateAuthority::read_for(&a.gate_authority, &facilitator)?;
    let settled = final_settled(&a.channel.try_borrow_data()?)?;

    // Top-ups need no gate, so the channel may have settled more than the gate counted:
    // nothing comes back then, and nothing more is counted (the gated deposit is what binds).
    let refund = record.deposit.saturating_sub(settled);
    if refund > 0 {
        a.release.release(&ReleaseArgs {
            payer_asset: record.payer_asset,
            policy_id: record.policy_id,
            payee_asset: record.payee_asset,
            amount: refund,
            day_index: record.day_index,
            week_index: record.week_index,
            month_index: record.month_index,
            reserved_at: record.created_at,
        })?;
    }

    let payment_id_hash = payment_id_hash(&record.channel);
    let clock = Clock::get()?;
    if settled > 0 {
        let bump = canonical_bump(
            &a.feedback_log,
            &[seeds::FEEDBACK_LOG, facilitator.as_ref(), &payment_id_hash],
        )?;
        a.target.give_feedback(
            &record.payee_asset,
            PayeeStats::Derived,
            (&a.gate_authority, &authority),
            &a.system_program.to_account_info(),
            &GiveFeedbackArgs {
                value: i128::from(settled),
                value_decimals: record.decimals,
                score: Some(score),
                feedback_file_hash: None,
                tag1,
                tag2,
                endpoint,
                feedback_uri,
            },
        )?;
        authority.count_settled_feedback(&a.gate_authority)?;
        pda_account::init(
            &a.facilitator,
            &a.feedback_log,
            FeedbackLog::space(false),
            &[
                seeds::FEEDBACK_LOG,
                facilitator.as_ref(),
                &payment_id_hash,
                &[bump],
            ],
            &FeedbackLog {
                facilitator,
                payment_id_hash,
                payee_asset: record.payee_asset,
                // The channel's payer, which signed its open: the key that may dispute.
                payer_wallet: record.payer_signer,
                mint: record.mint,
                amount: settled,
                value_decimals: record.decimals,
                score,
                slot: clock.slot,
                created_at: clock.unix_timestamp,
                // Nothing of the channel can settle any more.
                deadline: clock.unix_timestamp,
            },
        )?;
    }
    runtime::emit(&ChannelClosed {
        channel: record.channel,
        facilitator,
        payer_asset: record.payer_asset,
        payee_asset: record.payee_asset,
        deposit: record.deposit,
        settled,
        refunded: refund,
        payment_id_hash,
        feedback: settled > 0,
    });
    Ok(())
}
