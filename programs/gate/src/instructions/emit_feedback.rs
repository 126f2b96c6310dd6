use super::helpers::feedback::*;
use super::helpers::introspection::{Instructions, INSTRUCTIONS_SYSVAR_ID};
use super::helpers::parties::{agent, token_account_of};
use crate::errors::GateError;
use crate::events::FeedbackEmitted;
use crate::holdback::{self, HeldShare, HoldState};
use crate::settlement;
use crate::state::{seeds, FeedbackLog, GateAuthority};
use anchor_lang::prelude::*;
use policy_vault::state::PolicyAccount;
use trust_gate_program_common::external::instructions::GiveFeedbackArgs;
use trust_gate_program_common::{pda_account, probe, runtime, token_account};

#[derive(Accounts)]
pub struct EmitFeedback<'info> {
    /// The facilitator; pays for the log. Only it can write logs under its key, so nobody can
    /// front-run a payment's feedback log: it must be `args.facilitator` (checked first by the
    /// handler rather than as a constraint, which would deserialize the arguments a second
    /// time).
    #[account(mut)]
    pub facilitator_signer: Signer<'info>,
    /// The facilitator's GateAuthority (its stored facilitator stands for its seeds, see
    /// `GateAuthority::read_for`; the handler writes its counters in place).
    /// CHECK: verified as described above.
    #[account(mut)]
    pub gate_authority: UncheckedAccount<'info>,
    /// The payment's FeedbackLog PDA (canonical address checked by the handler),
    /// created by the handler: one emission per payment, and pre-funding the address cannot
    /// block it.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub feedback_log: UncheckedAccount<'info>,
    pub target: FeedbackTarget<'info>,
    /// CHECK: the instructions sysvar (address enforced).
    #[account(address = INSTRUCTIONS_SYSVAR_ID)]
    pub instructions: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// The arguments of `emit_feedback`, in wire order. The strict gate reads `payee_asset` where
/// it lies in the instruction data (`settlement::parse_feedback_payee`): the first three
/// fields keep their place.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct EmitFeedbackArgs {
    /// The payment's id hash (the x402 memo's: docs/settlement.md): with the facilitator, the
    /// seeds of the payment's FeedbackLog, so a payment gets one emission per facilitator.
    pub payment_id_hash: [u8; 32],
    /// The facilitator: must be `facilitator_signer` (`FacilitatorMismatch`); its
    /// GateAuthority gives the feedback.
    pub facilitator: Pubkey,
    /// The payee agent's asset: the settlement's payee (the strict gate checks it) and
    /// `target.asset`.
    pub payee_asset: Pubkey,
    /// The feedback's score, 0..=100.
    pub score: u8,
    /// The paid amount in the mint's base units: the settlement transfer's amount.
    pub value: u64,
    /// The mint's decimals, as the settlement transfer names them.
    pub value_decimals: u8,
    /// The registry's first tag, at most 32 bytes.
    pub tag1: String,
    /// The registry's second tag, at most 32 bytes.
    pub tag2: String,
    /// The paid endpoint, at most 250 bytes.
    pub endpoint: String,
    /// A URI of the feedback's details, at most 250 bytes.
    pub feedback_uri: String,
}

/// Records the payment's feedback in the registry and its receipt here. Only as the last
/// instruction of a settlement for the same payee (`FeedbackNotSettled` otherwise).
///
/// A held settlement passes [the payer's policy (the strict gate's), the escrow, the payee's
/// token account paid, the payer's AgentAccount and asset] as its remaining accounts, and
/// only a held one: they say that the payment part has four instructions. The share must
/// have gone to a token account of the mint whose authority is the gate's holdback
/// authority; the log records the hold and the arbiter the policy's schedule sets for the
/// quoted tier, the payee's recipient and the payer's keys.
pub fn emit_feedback<'info>(
    ctx: Context<'info, EmitFeedback<'info>>,
    args: EmitFeedbackArgs,
) -> Result<()> {
    let EmitFeedbackArgs {
        payment_id_hash,
        facilitator,
        payee_asset,
        score,
        value,
        value_decimals,
        tag1,
        tag2,
        endpoint,
        feedback_uri,
    } = args;
    probe!("entry and accounts");
    require_keys_eq!(
        ctx.accounts.facilitator_signer.key(),
        facilitator,
        GateError::FacilitatorMismatch
    );
    let mut authority = GateAuthority::read_for(&ctx.accounts.gate_authority, &facilitator)?;
    let bump = canonical_bump(
        &ctx.accounts.feedback_log,
        &[seeds::FEEDBACK_LOG, facilitator.as_ref(), &payment_id_hash],
    )?;
    probe!("gate authority, log address");
    validate_feedback_fields(
        score,
        value_decimals,
        &tag1,
        &tag2,
        &endpoint,
        &feedback_uri,
    )?;

    // Feedback only for a payment settling in this very transaction through this gate: a
    // standalone emission would let anyone with a GateAuthority (permissionless) rate any
    // agent, its own included, as the gate's PDA, which the registry cannot tell apart.
    // A held settlement's emission passes its policy and escrow (see above).
    let is_held = !ctx.remaining_accounts.is_empty();
    let (settled, held) = {
        let sysvar = ctx.accounts.instructions.try_borrow_data()?;
        let transaction = Instructions::new(&sysvar);
        let (current, count) = transaction.position()?;
        let load = |i| transaction.get(i);
        let settled = settlement::settled_payment(current, count, load, &payee_asset, is_held)
            .ok_or(GateError::FeedbackNotSettled)?;
        let held = match is_held {
            false => None,
            true => Some(
                settlement::held_settlement(current, load).ok_or(GateError::FeedbackNotSettled)?,
            ),
        };
        (settled, held)
    };
    // The registry records the value as given: it must be what moved, in the mint's units,
    // not a figure the facilitator makes up (a 1-unit transfer of a worthless token claiming
    // a value of 10^12).
    require!(
        value == settled.args.amount && value_decimals == settled.decimals,
        GateError::FeedbackValueMismatch
    );
    probe!("fields, the transaction");

    ctx.accounts.target.give_feedback(
        &payee_asset,
        PayeeStats::Settled(settled.payee_stats),
        (&ctx.accounts.gate_authority, &authority),
        &ctx.accounts.system_program.to_account_info(),
        &GiveFeedbackArgs {
            value: i128::from(value),
            value_decimals,
            score: Some(score),
            feedback_file_hash: None,
            tag1,
            tag2,
            endpoint,
            feedback_uri,
        },
    )?;

    probe!("the registry's feedback");
    let clock = Clock::get()?;
    authority.count_settled_feedback(&ctx.accounts.gate_authority)?;
    let holdback = match &held {
        None => None,
        Some(held) => Some(held_share(
            &settled,
            held,
            ctx.remaining_accounts,
            clock.unix_timestamp,
        )?),
    };

    let log = FeedbackLog {
        facilitator,
        payment_id_hash,
        payee_asset,
        payer_wallet: settled.payer_wallet,
        mint: settled.args.mint,
        amount: settled.args.amount,
        value_decimals,
        score,
        slot: clock.slot,
        created_at: clock.unix_timestamp,
        deadline: settled.deadline,
    };
    pda_account::init(
        &ctx.accounts.facilitator_signer,
        &ctx.accounts.feedback_log,
        FeedbackLog::space(holdback.is_some()),
        &[
            seeds::FEEDBACK_LOG,
            facilitator.as_ref(),
            &payment_id_hash,
            &[bump],
        ],
        &log,
    )?;
    if let Some(share) = &holdback {
        FeedbackLog::write_held_share(
            &mut ctx.accounts.feedback_log.try_borrow_mut_data()?,
            share,
        )?;
    }
    probe!("counters, the log created");
    runtime::emit(&FeedbackEmitted {
        facilitator,
        payment_id_hash,
        payee_asset,
        payer_asset: settled.args.payer_asset,
        amount: log.amount,
        score,
        deadline: log.deadline,
    });
    probe!("the event");
    Ok(())
}

/// The held share a settlement's log records: its escrow and amount from the transfer, the
/// hold of the quoted tier's term and the arbiter from the payer's policy, the payee's
/// recipient from the account the rest was paid to. `accounts`: the policy, which must be the
/// strict gate's (policy_vault read the same account for the decision), the escrow, which
/// must be one of the gate's (a token account of the mint whose authority is the holdback
/// authority, which only the gate can sign for), the payee's token account the first
/// transfer paid (the strict gate checked that its owner is the payee's recipient), then the
/// payer's AgentAccount and asset (the strict gate's), whose keys never arbitrate.
fn held_share(
    settled: &settlement::SettledPayment,
    held: &settlement::HeldSettlement,
    accounts: &[AccountInfo],
    now: i64,
) -> Result<HeldShare> {
    let mint = &settled.args.mint;
    let [policy, escrow, destination, payer_agent, payer_asset, ..] = accounts else {
        return err!(GateError::HoldbackEscrowInvalid);
    };
    require!(
        *escrow.key == held.transfer.escrow
            && token_account_of(escrow, mint, &holdback::authority::ADDRESS)?,
        GateError::HoldbackEscrowInvalid
    );
    let recipient = token_account::read(destination.owner, &destination.try_borrow_data()?)
        .filter(|d| *destination.key == held.destination && d.mint == *mint)
        .map(|d| d.owner)
        .ok_or(GateError::HoldbackRecipientMismatch)?;
    require_keys_eq!(*policy.key, held.policy, GateError::HoldbackNotInPolicy);
    require!(
        *payer_agent.key == held.payer_agent && *payer_asset.key == settled.args.payer_asset,
        GateError::AgentAccountInvalid
    );
    let payer = agent(payer_agent, payer_asset)?;
    let payer_other = payer
        .keys()
        .into_iter()
        .flatten()
        .find(|k| *k != settled.payer_wallet)
        .unwrap_or_default();
    let rule = PolicyAccount::holdback_in(&policy.try_borrow_data()?)
        .ok_or(GateError::HoldbackNotInPolicy)?;
    // The strict gate compared the quoted tier with the decision's.
    let tier = held.tier.ok_or(GateError::HoldbackTierMissing)?;
    let term = rule
        .terms
        .get(usize::from(tier))
        .ok_or(GateError::HoldbackTierMoved)?;
    Ok(HeldShare {
        escrow: held.transfer.escrow,
        recipient,
        arbiter: rule.arbiter,
        payer_other,
        held: held.transfer.amount,
        hold_until: now.saturating_add(i64::from(term.hold_secs)),
        state: HoldState::Held,
        arbitration_ends: 0,
        dispute_feedback_index: 0,
        dispute_seal_hash: [0; 32],
    })
}
