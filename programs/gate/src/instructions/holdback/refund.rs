use super::payout::*;
use crate::errors::GateError;
use crate::instructions::helpers::parties::agent;
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct RefundHoldback<'info> {
    /// The payee agent's live owner, or the agent wallet that owner set.
    pub payee_signer: Signer<'info>,
    pub payout: HeldPayout<'info>,
}

/// The payee gives a held share back to the payer: at any time before it is paid out,
/// disputed or not.
pub fn refund_holdback(ctx: Context<RefundHoldback>) -> Result<()> {
    let payout = &ctx.accounts.payout;
    let payee = {
        let response = payout.response();
        let (agent_account, asset) = response.payee(&payout.feedback_log)?;
        agent(agent_account, asset)?
    };
    require!(
        payee.may_sign(ctx.accounts.payee_signer.key),
        GateError::NotPaymentPayee
    );
    let next = payout.share()?.refund()?;
    payout.pay_out(next)
}
