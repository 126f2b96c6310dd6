use super::payout::*;
use crate::errors::GateError;
use crate::state::ArbiterSet;
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct ArbitrateHoldback<'info> {
    /// The arbiter the payer's policy named (the log's): a key that signs, or an arbiter
    /// set, whose members sign as remaining accounts.
    /// CHECK: compared with the log; a set is read in the handler.
    pub arbiter: UncheckedAccount<'info>,
    pub payout: HeldPayout<'info>,
}

/// The arbiter decides a disputed held share within its arbitration period: `uphold` gives it
/// back to the payer, otherwise it goes to the payee. Remaining accounts: for an arbiter set,
/// the signing members. The payer's keys at settlement never count as an arbiter.
pub fn arbitrate_holdback<'info>(
    ctx: Context<'info, ArbitrateHoldback<'info>>,
    uphold: bool,
) -> Result<()> {
    let payout = &ctx.accounts.payout;
    let share = payout.share()?;
    let next = share.arbitrate(uphold, Clock::get()?.unix_timestamp)?;
    let arbiter = &ctx.accounts.arbiter;
    require_keys_eq!(
        arbiter.key(),
        share.arbiter,
        GateError::ArbiterSignatureMissing
    );
    // The payer's keys at settlement: the settlement refused them as a key arbiter, and
    // they never count among a set's members either.
    let payer = [payout.feedback_log.payer_wallet, share.payer_other];
    require!(!payer.contains(arbiter.key), GateError::ArbiterIsPayer);
    // A key decides by its signature; an arbiter set (the gate's account) by its members'.
    let decided = arbiter.is_signer
        || (arbiter.owner == &crate::ID
            && ArbiterSet::read(arbiter)
                .is_ok_and(|set| set.signed_by(ctx.remaining_accounts, &payer)));
    require!(decided, GateError::ArbiterSignatureMissing);
    payout.pay_out(next)
}
