use super::helpers::evaluation::*;
use crate::settlement::PaymentArgs;
use anchor_lang::prelude::*;
use trust_gate_program_common::probe;

#[derive(Accounts)]
pub struct GatePayment<'info> {
    pub evaluation: EvaluationAccounts<'info>,
}

/// Read-only decision: never fails on a Deny; the decision is the return data and an event.
/// Every account is read-only, so other programs can CPI it (see `programs/examples`).
/// Remaining accounts: the payment's approval, when there is one (the decision is then the
/// one its settlement would get).
pub fn gate_payment<'info>(
    ctx: Context<'info, GatePayment<'info>>,
    args: PaymentArgs,
) -> Result<()> {
    probe!("entry and accounts");
    // Two probes back to back: the profile takes one probe's cost from this phase.
    probe!("probe");
    args.validate()?;
    let (approval, _) = approval_accounts(ctx.remaining_accounts, false);
    ctx.accounts.evaluation.evaluate(&args, approval)?;
    probe!("the decision reported");
    Ok(())
}
