use super::helpers::feedback::*;
use super::holdback::response;
use crate::errors::GateError;
use crate::events::PaymentDisputed;
use crate::state::{seeds, DisputeRecord, FeedbackLog, GateAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::external::agent_account;
use trust_gate_program_common::external::instructions::GiveFeedbackArgs;
use trust_gate_program_common::{pda_account, runtime};

pub use crate::state::{DISPUTE_SCORE, DISPUTE_TAG, DISPUTE_WINDOW_SECS};

/// The arguments of `dispute_payment`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct DisputePaymentArgs {
    /// The disputed payment's id hash: with the facilitator, the seeds of its FeedbackLog and
    /// of the DisputeRecord created here.
    pub payment_id_hash: [u8; 32],
    /// The facilitator that settled the payment (its GateAuthority gives the feedback; it
    /// need not sign).
    pub facilitator: Pubkey,
    /// The payment's payee agent: the one its FeedbackLog names (`FeedbackLogPayeeMismatch`)
    /// and `target.asset`.
    pub payee_asset: Pubkey,
    /// A hash of the payer's reason, recorded in the DisputeRecord; not zero
    /// (`DisputeReasonMissing`).
    pub dispute_reason_hash: [u8; 32],
    /// A URI of the dispute's details for the feedback, at most 250 bytes.
    pub feedback_uri: String,
}

#[derive(Accounts)]
#[instruction(args: DisputePaymentArgs)]
pub struct DisputePayment<'info> {
    /// Whoever pays for the dispute record: the payer itself, or the facilitator as a service
    /// (its `POST /dispute` co-signs). The facilitator's signature is not needed, so it cannot
    /// veto a dispute of a payment it settled; its GateAuthority PDA signs the registry
    /// feedback either way.
    #[account(mut)]
    pub rent_payer: Signer<'info>,
    /// The payment's payer: the wallet that authorized its transfer (compared with the
    /// feedback log in the handler). Nobody else can lower a payee's reputation this way.
    pub payer_signer: Signer<'info>,
    /// The facilitator's GateAuthority (its stored facilitator stands for its seeds, see
    /// `GateAuthority::is_for`). An `Account` here, unlike in emit_feedback (which writes
    /// its counters in place): a dispute's cost matters less than the account's place in
    /// the IDL, which names account types from the instructions that take them.
    #[account(
        mut,
        constraint = gate_authority.is_for(&args.facilitator) @ ErrorCode::ConstraintSeeds,
    )]
    pub gate_authority: Account<'info, GateAuthority>,
    /// The facilitator's own receipt of the payment; must exist (its stored facilitator and
    /// payment id stand for its seeds, see `FeedbackLog::is_for`). Writable: a dispute within
    /// a held payment's hold freezes its share (docs/holdback.md).
    #[account(
        mut,
        constraint = feedback_log.is_for(&args.facilitator, &args.payment_id_hash) @ ErrorCode::ConstraintSeeds,
    )]
    pub feedback_log: Account<'info, FeedbackLog>,
    /// The DisputeRecord PDA (canonical address checked by the handler), created by the
    /// handler: a payment is disputed once, and pre-funding the address cannot block it.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub dispute: UncheckedAccount<'info>,
    pub target: FeedbackTarget<'info>,
    pub system_program: Program<'info, System>,
}

/// Disputes a settled payment: records the dispute and a low-score "dispute" feedback. Only
/// the payment's payer may, within [`DISPUTE_WINDOW_SECS`] of the settlement (or, for a held
/// payment, until its hold ends if that is later). Within a held payment's hold, the dispute
/// also freezes the held share for the arbitration (`HeldShare::dispute`).
pub fn dispute_payment(ctx: Context<DisputePayment>, args: DisputePaymentArgs) -> Result<()> {
    let DisputePaymentArgs {
        payment_id_hash,
        facilitator,
        payee_asset,
        dispute_reason_hash,
        feedback_uri,
    } = args;
    let bump = canonical_bump(
        &ctx.accounts.dispute,
        &[seeds::DISPUTE, facilitator.as_ref(), &payment_id_hash],
    )?;
    require!(
        dispute_reason_hash != [0u8; 32],
        GateError::DisputeReasonMissing
    );
    validate_feedback_fields(DISPUTE_SCORE, 0, DISPUTE_TAG, "", "", &feedback_uri)?;
    let log = &ctx.accounts.feedback_log;
    require_keys_eq!(
        log.payee_asset,
        payee_asset,
        GateError::FeedbackLogPayeeMismatch
    );
    let payer = ctx.accounts.payer_signer.key();
    require_keys_eq!(log.payer_wallet, payer, GateError::NotPaymentPayer);
    let clock = Clock::get()?;
    let log_info = ctx.accounts.feedback_log.to_account_info();
    let mut held = FeedbackLog::held_share_in(&log_info.try_borrow_data()?);
    require!(
        clock.unix_timestamp <= log.dispute_window_ends(held.as_ref()),
        GateError::DisputeWindowClosed
    );
    // The dispute's feedback is the payee's next one: its index and seal are what the
    // outcome of a held share's dispute answers.
    let froze = match held.as_mut() {
        Some(share) => {
            let data = ctx.accounts.target.agent_account.try_borrow_data()?;
            let index =
                agent_account::feedback_count(&data).ok_or(GateError::AgentAccountInvalid)?;
            let seal = response::dispute_seal_hash(&feedback_uri);
            share.dispute(clock.unix_timestamp, index, seal)
        }
        None => false,
    };
    if let (true, Some(share)) = (froze, &held) {
        FeedbackLog::write_held_share(&mut log_info.try_borrow_mut_data()?, share)?;
    }

    ctx.accounts.target.give_feedback(
        &payee_asset,
        PayeeStats::Derived,
        (
            ctx.accounts.gate_authority.as_ref(),
            &ctx.accounts.gate_authority,
        ),
        &ctx.accounts.system_program.to_account_info(),
        &GiveFeedbackArgs {
            value: 0,
            value_decimals: 0,
            score: Some(DISPUTE_SCORE),
            feedback_file_hash: None,
            tag1: DISPUTE_TAG.to_string(),
            tag2: String::new(),
            endpoint: String::new(),
            feedback_uri,
        },
    )?;

    let authority = &mut ctx.accounts.gate_authority;
    authority.dispute_count = authority
        .dispute_count
        .checked_add(1)
        .ok_or(GateError::CounterOverflow)?;
    pda_account::init(
        &ctx.accounts.rent_payer,
        &ctx.accounts.dispute,
        8 + DisputeRecord::INIT_SPACE,
        &[
            seeds::DISPUTE,
            facilitator.as_ref(),
            &payment_id_hash,
            &[bump],
        ],
        &DisputeRecord {
            facilitator,
            payment_id_hash,
            reason_hash: dispute_reason_hash,
            disputed_by: payer,
            rent_payer: ctx.accounts.rent_payer.key(),
            created_at: clock.unix_timestamp,
        },
    )?;
    runtime::emit(&PaymentDisputed {
        facilitator,
        payment_id_hash,
        payee_asset,
        reason_hash: dispute_reason_hash,
        disputed_by: payer,
        holdback_frozen: froze,
    });
    Ok(())
}
