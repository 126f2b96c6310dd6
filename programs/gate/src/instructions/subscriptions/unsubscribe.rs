use crate::errors::GateError;
use crate::events::Unsubscribed;
use crate::state::GatedSubscription;
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use trust_gate_program_common::subscriptions;
use trust_gate_program_common::{cpi, runtime};

#[derive(Accounts)]
pub struct Unsubscribe<'info> {
    /// The delegator that subscribed: gets the record's and the delegation's rent back.
    #[account(mut)]
    pub delegator: Signer<'info>,
    /// The subscription, closed to the delegator.
    #[account(
        mut,
        close = delegator,
        has_one = delegator @ GateError::SubscriptionNotDelegator,
        has_one = delegation @ GateError::SubscriptionDelegationInvalid,
    )]
    pub gated_subscription: Account<'info, GatedSubscription>,
    /// CHECK: the subscription's delegation, revoked when the Subscriptions program still
    /// holds it.
    #[account(mut)]
    pub delegation: UncheckedAccount<'info>,
    /// CHECK: the Subscriptions program (address enforced).
    #[account(address = subscriptions::ID)]
    pub subscriptions_program: UncheckedAccount<'info>,
}

/// Ends a gated subscription: revokes its recurring delegation (the Subscriptions program
/// returns its rent to the delegator) unless it is already gone (revoked directly), and
/// closes the record to the delegator. The delegator's SubscriptionAuthority stays: it may
/// serve other delegations (`revoke_subscription_authority` removes it).
pub fn unsubscribe(ctx: Context<Unsubscribe>) -> Result<()> {
    let a = &ctx.accounts;
    let revoked = a.delegation.owner == &subscriptions::ID;
    if revoked {
        let ix = Instruction {
            program_id: subscriptions::ID,
            accounts: vec![
                AccountMeta::new(a.delegator.key(), true),
                AccountMeta::new(a.delegation.key(), false),
            ],
            data: vec![subscriptions::tag::REVOKE_DELEGATION],
        };
        cpi::invoke_signed(
            &ix,
            &[&a.delegator, &a.delegation, &a.subscriptions_program],
            &[],
        )?;
    }
    runtime::emit(&Unsubscribed {
        gated_subscription: a.gated_subscription.key(),
        delegation: a.delegation.key(),
        delegator: a.delegator.key(),
        revoked,
    });
    Ok(())
}
