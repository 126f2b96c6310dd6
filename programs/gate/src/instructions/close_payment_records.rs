use crate::errors::GateError;
use crate::events::PaymentRecordsClosed;
use crate::state::{seeds, ClosableLog, DisputeRecord};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda, runtime};

#[derive(Accounts)]
pub struct ClosePaymentRecords<'info> {
    /// The payment's FeedbackLog, read in the
    /// handler: the gate wrote it at the canonical PDA of the facilitator and payment it
    /// stores, so those stand for its seeds.
    /// CHECK: verified as described above.
    #[account(mut, owner = crate::ID @ GateError::PaymentLogInvalid)]
    pub feedback_log: UncheckedAccount<'info>,
    /// The log's facilitator, which paid its rent and is the only account it returns to.
    /// CHECK: compared with the log in the handler.
    #[account(mut)]
    pub facilitator: UncheckedAccount<'info>,
    /// The payment's DisputeRecord address (checked in the handler): closed with the log when
    /// the payment was disputed, so no record outlives its log; anything else there is left.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub dispute: UncheckedAccount<'info>,
    /// The dispute record's rent payer when there is a record (checked against it);
    /// otherwise unused (clients pass the facilitator).
    /// CHECK: verified as described above.
    #[account(mut)]
    pub dispute_rent_payer: UncheckedAccount<'info>,
}

/// Closes a payment's records once it can be neither disputed nor settled again. No signer:
/// the lamports can only go back where they came from, so anyone may (the facilitator's
/// crank, `trust-gate reclaim`, or anyone else paying the fee).
pub fn close_payment_records(ctx: Context<ClosePaymentRecords>) -> Result<()> {
    let a = &ctx.accounts;
    let log = ClosableLog::read(&a.feedback_log.try_borrow_data()?)
        .ok_or(GateError::PaymentLogInvalid)?;
    require_keys_eq!(
        a.facilitator.key(),
        log.facilitator,
        GateError::RentRecipientMismatch
    );
    require!(!log.holds_share, GateError::HoldbackOutstanding);
    require!(
        Clock::get()?.unix_timestamp > log.closes_after,
        GateError::PaymentRecordsOpen
    );
    let seeds: &[&[u8]] = &[
        seeds::DISPUTE,
        log.facilitator.as_ref(),
        &log.payment_id_hash,
    ];
    require!(
        pda::is_canonical(a.dispute.key, seeds, &crate::ID),
        GateError::DisputeAddressMismatch
    );

    let mut dispute_lamports = 0;
    if a.dispute.owner == &crate::ID {
        let recipient = DisputeRecord::rent_recipient(&a.dispute.try_borrow_data()?)
            .ok_or(GateError::DisputeAddressMismatch)?;
        require_keys_eq!(
            a.dispute_rent_payer.key(),
            recipient,
            GateError::RentRecipientMismatch
        );
        dispute_lamports = close(&a.dispute, &a.dispute_rent_payer)?;
    }
    let log_lamports = close(&a.feedback_log, &a.facilitator)?;
    runtime::emit(&PaymentRecordsClosed {
        facilitator: log.facilitator,
        payment_id_hash: log.payment_id_hash,
        log_lamports,
        dispute_lamports,
    });
    Ok(())
}

/// Closes the gate-owned `account` to `to` (see `pda_account::close`).
fn close(account: &AccountInfo, to: &AccountInfo) -> Result<u64> {
    trust_gate_program_common::pda_account::close(account, to)
}
