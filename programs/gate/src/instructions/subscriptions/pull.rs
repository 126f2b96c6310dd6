use super::check_pull_mint;
use crate::errors::GateError;
use crate::events::Pulled;
use crate::instructions::helpers::evaluation::*;
use crate::instructions::helpers::feedback::*;
use crate::instructions::helpers::parties::{agent, check_not_self_dealing, token_account_of};
use crate::settlement::PaymentArgs;
use crate::state::{seeds, FeedbackLog, GateAuthority, GatedSubscription};
use crate::subscription::{delegate_seeds, payment_id_hash, pullable};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use trust_gate_program_common::external::instructions::GiveFeedbackArgs;
use trust_gate_program_common::external::{agent_account, ids};
use trust_gate_program_common::subscriptions;
use trust_gate_program_common::{cpi, pda_account, runtime};

#[derive(Accounts)]
pub struct GatePull<'info> {
    pub evaluation: CommitEvaluationAccounts<'info>,
    /// The subscription's facilitator: the only sender of its pulls; pays the receipt's rent.
    #[account(mut)]
    pub facilitator: Signer<'info>,
    /// The facilitator's GateAuthority (read with `read_for`, its counters written in place);
    /// signs the registry feedback.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub gate_authority: UncheckedAccount<'info>,
    /// The subscription pulled. The gate creates one only at the canonical PDA of the
    /// delegation it stores, so its delegation stands for its seeds.
    #[account(
        constraint = gated_subscription.delegation == delegation.key() @ GateError::SubscriptionDelegationInvalid,
    )]
    pub gated_subscription: Account<'info, GatedSubscription>,
    /// CHECK: the payer agent's MPL Core asset (the subscription's).
    #[account(address = gated_subscription.payer_asset @ GateError::AssetMismatch)]
    pub payer_asset: UncheckedAccount<'info>,
    /// CHECK: the registry's AgentAccount of the payer (checked as the strict gate does).
    #[account(
        owner = ids::AGENT_REGISTRY @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_is_agent_account(&payer_agent) @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_names(&payer_agent, payer_asset.key) @ ErrorCode::ConstraintSeeds,
    )]
    pub payer_agent: UncheckedAccount<'info>,
    /// CHECK: the pull's mint: the delegation's and the policy's (checked by the handler and
    /// policy_vault).
    pub mint_account: UncheckedAccount<'info>,
    /// CHECK: where the pull pays: a token account of the mint owned by the payee agent's
    /// recipient (checked by the handler).
    #[account(mut)]
    pub destination_token: UncheckedAccount<'info>,
    /// CHECK: the subscription's recurring delegation (read by the handler), which the
    /// Subscriptions program updates.
    #[account(mut, owner = subscriptions::ID @ GateError::SubscriptionDelegationInvalid)]
    pub delegation: UncheckedAccount<'info>,
    /// CHECK: the delegator's SubscriptionAuthority (the Subscriptions program checks it).
    pub subscription_authority: UncheckedAccount<'info>,
    /// CHECK: the delegator's associated token account (the Subscriptions program checks it).
    #[account(mut)]
    pub delegator_token: UncheckedAccount<'info>,
    /// CHECK: the mint's token program (the Subscriptions program checks it).
    pub token_program: UncheckedAccount<'info>,
    /// CHECK: the delegatee the gate signs the pull as: the delegation's, and the
    /// subscription's delegate PDA (the runtime derives it from the signing seeds).
    pub delegate: UncheckedAccount<'info>,
    /// CHECK: the Subscriptions program's event authority (address enforced).
    #[account(address = subscriptions::EVENT_AUTHORITY)]
    pub event_authority: UncheckedAccount<'info>,
    /// CHECK: the Subscriptions program (address enforced).
    #[account(address = subscriptions::ID)]
    pub subscriptions_program: UncheckedAccount<'info>,
    /// CHECK: the pull's receipt, a FeedbackLog at `["feedback_log", facilitator,
    /// subscription::payment_id_hash(..)]` (canonical address checked by the handler),
    /// created by it.
    #[account(mut)]
    pub feedback_log: UncheckedAccount<'info>,
    /// The payee's registry accounts: its AgentAccount and asset are also the payee agent
    /// the handler checks the destination against.
    pub target: FeedbackTarget<'info>,
    pub system_program: Program<'info, System>,
}

/// One pull of a gated subscription, sent by its facilitator: the payer's policy decides and
/// counts `amount` as a payment to the payee (the subscription's policy; above its approval
/// threshold, with the payment's approval as the first remaining accounts, as a settlement),
/// then the gate signs `transfer_recurring` as the delegation's delegatee into the payee
/// agent's recipient, gives the payee `feedback` of value = amount and writes the pull's
/// receipt, disputable as a payment's. Refused unless the delegation is the subscription's,
/// its delegator still a key of the payer agent, and the policy holds nothing back from the
/// payee (`subscribe` refused a vault-funded policy, and a policy's funding never changes).
/// The Subscriptions program then refuses what its delegation does not allow: more than the
/// period's remainder, before the start, after the expiry, a re-initialized authority.
pub fn gate_pull<'info>(
    ctx: Context<'info, GatePull<'info>>,
    amount: u64,
    feedback: FeedbackDetails,
) -> Result<()> {
    let a = &ctx.accounts;
    let record = &a.gated_subscription;
    let facilitator = a.facilitator.key();
    require_keys_eq!(
        record.facilitator,
        facilitator,
        GateError::SubscriptionFacilitatorMismatch
    );
    let mut authority = GateAuthority::read_for(&a.gate_authority, &facilitator)?;
    let decimals = check_pull_mint(&a.mint_account)?;
    validate_feedback_fields(
        feedback.score,
        decimals,
        &feedback.tag1,
        &feedback.tag2,
        &feedback.endpoint,
        &feedback.feedback_uri,
    )?;
    let mint = a.mint_account.key();
    let args = PaymentArgs {
        payer_asset: record.payer_asset,
        payee_asset: record.payee_asset,
        amount,
        mint,
        policy_id: record.policy_id,
    };
    args.validate()?;

    // The parties: the delegator still acts for the payer agent, the pull pays the payee's
    // recipient, and the two are distinct parties (as a settlement's).
    require_keys_eq!(
        a.target.asset.key(),
        record.payee_asset,
        GateError::AssetMismatch
    );
    let payer = agent(&a.payer_agent, &a.payer_asset)?;
    let payee = agent(&a.target.agent_account, &a.target.asset)?;
    let delegation = pullable(&a.delegation.try_borrow_data()?, &mint, a.delegate.key)?;
    require!(
        payer.may_sign(&delegation.delegator),
        GateError::SubscriptionDelegatorMismatch
    );
    let recipient = payee.recipient();
    require!(
        token_account_of(&a.destination_token, &mint, &recipient)?,
        GateError::RecipientMismatch
    );
    require!(!payer.may_sign(&recipient), GateError::PaymentToPayer);
    require_keys_neq!(
        recipient,
        a.destination_token.key(),
        GateError::PaymentToVault
    );
    check_not_self_dealing(&payer, &payee)?;
    let (approval, _) = approval_accounts(ctx.remaining_accounts, true);
    let (decision, holdback) = a
        .evaluation
        .evaluate_and_commit(&args, approval, None, &[])?;
    require_allowed_in_full(decision, holdback, GateError::SubscriptionHoldback)?;

    let payment_id_hash = payment_id_hash(&a.delegation.key(), &delegation);
    // The receipt's address names the delegation's state the pull was built from: a pull
    // built before another landed is refused, so a pull sent twice pays once.
    let log_bump = canonical_bump(
        &a.feedback_log,
        &[seeds::FEEDBACK_LOG, facilitator.as_ref(), &payment_id_hash],
    )
    .map_err(|_| error!(GateError::SubscriptionPullStale))?;
    pull(a, record, amount, &delegation.delegator, &mint)?;

    a.target.give_feedback(
        &record.payee_asset,
        PayeeStats::Settled(a.evaluation.payee_stats.key()),
        (&a.gate_authority, &authority),
        &a.system_program.to_account_info(),
        &GiveFeedbackArgs {
            value: i128::from(amount),
            value_decimals: decimals,
            score: Some(feedback.score),
            feedback_file_hash: None,
            tag1: feedback.tag1,
            tag2: feedback.tag2,
            endpoint: feedback.endpoint,
            feedback_uri: feedback.feedback_uri,
        },
    )?;
    authority.count_settled_feedback(&a.gate_authority)?;
    let clock = Clock::get()?;
    pda_account::init(
        &a.facilitator,
        &a.feedback_log,
        FeedbackLog::space(false),
        &[
            seeds::FEEDBACK_LOG,
            facilitator.as_ref(),
            &payment_id_hash,
            &[log_bump],
        ],
        &FeedbackLog {
            facilitator,
            payment_id_hash,
            payee_asset: record.payee_asset,
            // The wallet that paid: the key that may dispute the pull.
            payer_wallet: delegation.delegator,
            mint,
            amount,
            value_decimals: decimals,
            score: feedback.score,
            slot: clock.slot,
            created_at: clock.unix_timestamp,
            // Nothing of this pull can land again.
            deadline: clock.unix_timestamp,
        },
    )?;
    runtime::emit(&Pulled {
        delegation: a.delegation.key(),
        facilitator,
        payer_asset: record.payer_asset,
        payee_asset: record.payee_asset,
        amount,
        payment_id_hash,
        score: feedback.score,
    });
    Ok(())
}

/// `transfer_recurring` of `amount` into the destination, signed as the subscription's
/// delegate.
fn pull(
    a: &GatePull,
    record: &GatedSubscription,
    amount: u64,
    delegator: &Pubkey,
    mint: &Pubkey,
) -> Result<()> {
    let ix = Instruction {
        program_id: subscriptions::ID,
        accounts: vec![
            AccountMeta::new(a.delegation.key(), false),
            AccountMeta::new_readonly(a.subscription_authority.key(), false),
            AccountMeta::new(a.delegator_token.key(), false),
            AccountMeta::new(a.destination_token.key(), false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new_readonly(a.token_program.key(), false),
            AccountMeta::new_readonly(a.delegate.key(), true),
            AccountMeta::new_readonly(subscriptions::EVENT_AUTHORITY, false),
            AccountMeta::new_readonly(subscriptions::ID, false),
        ],
        data: subscriptions::transfer_recurring_data(amount, delegator, mint),
    };
    let bump = [record.delegate_bump];
    let signer = delegate_seeds(
        &record.payer_asset,
        &record.payee_asset,
        &record.facilitator,
        &bump,
    );
    cpi::invoke_signed(
        &ix,
        &[
            &a.delegation,
            &a.subscription_authority,
            &a.delegator_token,
            &a.destination_token,
            &a.mint_account,
            &a.token_program,
            &a.delegate,
            &a.event_authority,
            &a.subscriptions_program,
        ],
        &[&signer],
    )?;
    Ok(())
}
