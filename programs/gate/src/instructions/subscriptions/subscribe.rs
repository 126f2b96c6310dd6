use super::check_pull_mint;
use crate::errors::GateError;
use crate::events::Subscribed;
use crate::instructions::helpers::feedback::canonical_bump;
use crate::instructions::helpers::parties::{check_not_self_dealing, signing_parties};
use crate::state::{seeds, GateAuthority, GatedSubscription};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use policy_vault::state::{funding, PolicyAccount};
use trust_gate_program_common::external::{agent_account, ids};
use trust_gate_program_common::subscriptions::{self, RecurringTerms, SubscriptionAuthority};
use trust_gate_program_common::{cpi, pda_account, runtime};

#[derive(Accounts)]
pub struct Subscribe<'info> {
    /// The payer agent's live owner or agent wallet: the delegation's delegator, whose
    /// associated token account the pulls debit; pays the three accounts' rent.
    #[account(mut)]
    pub delegator: Signer<'info>,
    /// CHECK: the payer agent's MPL Core asset (read by the handler, as the strict gate does).
    pub payer_asset: UncheckedAccount<'info>,
    /// CHECK: the registry's AgentAccount of the payer (checked as the strict gate does).
    #[account(
        owner = ids::AGENT_REGISTRY @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_is_agent_account(&payer_agent) @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_names(&payer_agent, payer_asset.key) @ ErrorCode::ConstraintSeeds,
    )]
    pub payer_agent: UncheckedAccount<'info>,
    /// CHECK: the payee agent's MPL Core asset.
    pub payee_asset: UncheckedAccount<'info>,
    /// CHECK: the registry's AgentAccount of the payee.
    #[account(
        owner = ids::AGENT_REGISTRY @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_is_agent_account(&payee_agent) @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_names(&payee_agent, payee_asset.key) @ ErrorCode::ConstraintSeeds,
    )]
    pub payee_agent: UncheckedAccount<'info>,
    /// CHECK: the payer's policy the pulls are counted under: for the payer asset, the
    /// `policy_id` argument and the mint, paid from the wallet (checked by the handler).
    pub policy: UncheckedAccount<'info>,
    /// CHECK: the facilitator that will send the pulls; it must have a GateAuthority.
    pub facilitator: UncheckedAccount<'info>,
    /// CHECK: the facilitator's GateAuthority (read with `read_for`).
    pub gate_authority: UncheckedAccount<'info>,
    /// CHECK: the subscription's mint (checked as a pull checks it).
    pub mint_account: UncheckedAccount<'info>,
    /// CHECK: the delegator's associated token account of the mint (the Subscriptions
    /// program checks it and approves its SubscriptionAuthority on it).
    #[account(mut)]
    pub delegator_token: UncheckedAccount<'info>,
    /// CHECK: the delegator's SubscriptionAuthority for the mint, created or refreshed by the
    /// Subscriptions program (which checks its address).
    #[account(mut)]
    pub subscription_authority: UncheckedAccount<'info>,
    /// CHECK: the new recurring delegation (the Subscriptions program checks its address).
    #[account(mut)]
    pub delegation: UncheckedAccount<'info>,
    /// CHECK: the gate's delegate `["pull_delegate", payer_asset, payee_asset, facilitator]`
    /// (canonical address checked by the handler).
    pub delegate: UncheckedAccount<'info>,
    /// CHECK: the new GatedSubscription at `["gated_subscription", delegation]` (canonical
    /// address checked by the handler), created by it.
    #[account(mut)]
    pub gated_subscription: UncheckedAccount<'info>,
    /// CHECK: the mint's token program (the Subscriptions program checks it).
    pub token_program: UncheckedAccount<'info>,
    /// CHECK: the Subscriptions program (address enforced).
    #[account(address = subscriptions::ID)]
    pub subscriptions_program: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Subscribes a payer agent to a payee in one instruction: initializes (or refreshes) the
/// delegator's SubscriptionAuthority for the mint, creates the recurring delegation of
/// `terms` to the gate's delegate for these parties and this facilitator under the
/// authority's `init_id` as it is now (read between the two calls, so that both fit one
/// transaction whether the authority existed or not), and records the subscription. Refuses
/// what no pull could ever pay: a delegator that is not a key of the payer agent, a payee that
/// is the payer, a mint a pull refuses, a policy that is not the payer's for the mint or is
/// vault-funded, a facilitator without a GateAuthority.
pub fn subscribe(ctx: Context<Subscribe>, policy_id: u32, terms: RecurringTerms) -> Result<()> {
    let a = &ctx.accounts;
    let delegator = a.delegator.key();
    let (payer, payee) = signing_parties(
        &a.payer_agent,
        &a.payer_asset,
        &a.payee_agent,
        &a.payee_asset,
        &delegator,
    )?;
    require!(
        !payer.may_sign(&payee.recipient()),
        GateError::PaymentToPayer
    );
    check_not_self_dealing(&payer, &payee)?;
    check_pull_mint(&a.mint_account)?;
    let mint = a.mint_account.key();
    {
        let policy = PolicyAccount::read(&a.policy)?;
        require!(
            policy.asset == a.payer_asset.key()
                && policy.policy_id == policy_id
                && policy.params.mint == mint,
            GateError::SubscriptionPolicyMismatch
        );
        require!(
            policy.params.funding != funding::VAULT,
            GateError::SubscriptionVaultFunded
        );
    }
    let facilitator = a.facilitator.key();
    GateAuthority::read_for(&a.gate_authority, &facilitator)?;
    let (payer_asset, payee_asset) = (a.payer_asset.key(), a.payee_asset.key());
    let delegate_bump = canonical_bump(
        &a.delegate,
        &[
            seeds::PULL_DELEGATE,
            payer_asset.as_ref(),
            payee_asset.as_ref(),
            facilitator.as_ref(),
        ],
    )?;
    let delegation = a.delegation.key();
    let bump = canonical_bump(
        &a.gated_subscription,
        &[seeds::GATED_SUBSCRIPTION, delegation.as_ref()],
    )?;

    // The authority, then the delegation under the authority's init_id as it now is.
    let init = Instruction {
        program_id: subscriptions::ID,
        accounts: vec![
            AccountMeta::new(delegator, true),
            AccountMeta::new(a.subscription_authority.key(), false),
            AccountMeta::new_readonly(mint, false),
            AccountMeta::new(a.delegator_token.key(), false),
            AccountMeta::new_readonly(a.system_program.key(), false),
            AccountMeta::new_readonly(a.token_program.key(), false),
        ],
        data: vec![subscriptions::tag::INIT_SUBSCRIPTION_AUTHORITY],
    };
    cpi::invoke_signed(
        &init,
        &[
            &a.delegator,
            &a.subscription_authority,
            &a.mint_account,
            &a.delegator_token,
            &a.system_program,
            &a.token_program,
            &a.subscriptions_program,
        ],
        &[],
    )?;
    let init_id = {
        let data = a.subscription_authority.try_borrow_data()?;
        SubscriptionAuthority::read(&data)
            .ok_or(GateError::SubscriptionDelegationInvalid)?
            .init_id
    };
    let create = Instruction {
        program_id: subscriptions::ID,
        accounts: vec![
            AccountMeta::new(delegator, true),
            AccountMeta::new_readonly(a.subscription_authority.key(), false),
            AccountMeta::new(delegation, false),
            AccountMeta::new_readonly(a.delegate.key(), false),
            AccountMeta::new_readonly(a.system_program.key(), false),
        ],
        data: subscriptions::create_recurring_delegation_data(&terms, init_id),
    };
    cpi::invoke_signed(
        &create,
        &[
            &a.delegator,
            &a.subscription_authority,
            &a.delegation,
            &a.delegate,
            &a.system_program,
            &a.subscriptions_program,
        ],
        &[],
    )?;
    // Only the Subscriptions program creates accounts there: check what it made anyway.
    require_keys_eq!(
        *a.delegation.owner,
        subscriptions::ID,
        GateError::SubscriptionDelegationInvalid
    );

    let created_at = Clock::get()?.unix_timestamp;
    pda_account::init(
        &a.delegator,
        &a.gated_subscription,
        8 + GatedSubscription::INIT_SPACE,
        &[seeds::GATED_SUBSCRIPTION, delegation.as_ref(), &[bump]],
        &GatedSubscription {
            payer_asset,
            payee_asset,
            facilitator,
            delegation,
            delegator,
            policy_id,
            delegate_bump,
            created_at,
            bump,
        },
    )?;
    runtime::emit(&Subscribed {
        gated_subscription: a.gated_subscription.key(),
        delegation,
        payer_asset,
        payee_asset,
        facilitator,
        delegator,
        mint,
        policy_id,
        amount_per_period: terms.amount_per_period,
        period_length_s: terms.period_length_s,
    });
    Ok(())
}
