use super::evaluation::*;
use crate::settlement::PaymentArgs;
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct GatePayment<'info> {
    pub evaluation: EvaluationAccounts<'info>,
}

/// Read-only decision: never fails on a Deny; the decision is the return data and an event.
/// Every account is read-only, so other programs can CPI it (see `programs/examples`).
pub fn gate_payment(ctx: Context<GatePayment>, args: PaymentArgs) -> Result<()> {
    args.validate()?;
    ctx.accounts.evaluation.evaluate(&args)?;
    Ok(())
}
