use super::payout::*;
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct ReleaseHoldback<'info> {
    pub payout: HeldPayout<'info>,
}

/// Releases a held share to a token account of the payee's recipient at settlement: after
/// the hold when nobody disputed it, after the arbitration period when a dispute stayed
/// undecided. No signer: the share can only go to whom the log says (anyone may send it: the
/// facilitator's crank, the payee, ...), into any token account of the mint that one owns,
/// so that the account paid being closed, frozen or restricted since cannot lock it.
pub fn release_holdback(ctx: Context<ReleaseHoldback>) -> Result<()> {
    let payout = &ctx.accounts.payout;
    let next = payout.share()?.release(Clock::get()?.unix_timestamp)?;
    payout.pay_out(next)
}
