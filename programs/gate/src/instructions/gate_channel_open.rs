use super::helpers::evaluation::*;
use super::helpers::feedback::canonical_bump;
use super::helpers::introspection::{Instructions, INSTRUCTIONS_SYSVAR_ID};
use super::helpers::parties::{check_mint, check_not_self_dealing, signing_parties};
use crate::channel::{check_channel_bundle, check_open, ExpectedOpen};
use crate::errors::GateError;
use crate::settlement::PaymentArgs;
use crate::state::{seeds, ChannelRecord};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{get_stack_height, TRANSACTION_LEVEL_STACK_HEIGHT};
use policy_vault::engine::time::{day_index, month_index, week_index};
use policy_vault::state::{funding, PolicyAccount};
use trust_gate_program_common::external::{agent_account, ids};
use trust_gate_program_common::{pda_account, token_mint};

#[derive(Accounts)]
pub struct GateChannelOpen<'info> {
    pub evaluation: CommitEvaluationAccounts<'info>,
    /// The payer agent's live owner or agent wallet: the channel's payer, signing the open.
    pub payer_signer: Signer<'info>,
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
    /// CHECK: the channel's mint (the payer's policy must be for it); its extensions checked
    /// as a settlement's.
    pub mint_account: UncheckedAccount<'info>,
    /// The channel's payee and rent payer; pays the record's rent.
    #[account(mut)]
    pub facilitator: Signer<'info>,
    /// CHECK: the new ChannelRecord at `["channel_record", channel]` (canonical address
    /// checked by the handler), created by it.
    #[account(mut)]
    pub channel_record: UncheckedAccount<'info>,
    /// CHECK: the instructions sysvar (address enforced).
    #[account(address = INSTRUCTIONS_SYSVAR_ID)]
    pub instructions: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// The gated open of a payment channel, a top-level instruction only. Fails unless the
/// transaction is [≤2 ComputeBudget, this, the payment-channels program's `open`, ≤2 Memo]
/// and the open deposits `deposit` of the mint from the payer agent's signer, pays 100 % of
/// the channel to the payee agent's recipient, and is held by the facilitator (payee and
/// rent payer). Then runs the payer's policy and the payee's acceptance policy on the deposit
/// as the strict gate runs them on a payment, counts it on Allow (fails with the reason
/// otherwise, as the strict gate does) and records the channel. A vault-funded policy is
/// refused: the channel would refund its deposit to the signer, not to the vault, and so is a
/// mint of more than 18 decimals (`MintDecimalsTooLarge`: the close's feedback could not
/// state its value).
pub fn gate_channel_open<'info>(
    ctx: Context<'info, GateChannelOpen<'info>>,
    deposit: u64,
    policy_id: u32,
) -> Result<()> {
    let a = &ctx.accounts;
    let args = PaymentArgs {
        payer_asset: a.payer_asset.key(),
        payee_asset: a.payee_asset.key(),
        amount: deposit,
        mint: a.mint_account.key(),
        policy_id,
    };
    args.validate()?;
    require!(
        get_stack_height() == TRANSACTION_LEVEL_STACK_HEIGHT,
        GateError::StrictGateNotTopLevel
    );
    let signer = a.payer_signer.key();
    let (payer, payee) = signing_parties(
        &a.payer_agent,
        &a.payer_asset,
        &a.payee_agent,
        &a.payee_asset,
        &signer,
    )?;
    let recipient = payee.recipient();
    // As for a payment: the channel must pay another party than the payer, and the payee may
    // not be the payer under another agent.
    require!(!payer.may_sign(&recipient), GateError::PaymentToPayer);
    check_not_self_dealing(&payer, &payee)?;
    check_mint(&a.mint_account)?;
    let decimals =
        token_mint::decimals(&a.mint_account.try_borrow_data()?).ok_or(GateError::MintInvalid)?;
    // The close's feedback states the settled value in the mint's decimals, which the
    // registry takes up to 18: a channel in a mint of more could never close through the gate.
    require!(
        decimals <= token_mint::MAX_DECIMALS,
        GateError::MintDecimalsTooLarge
    );
    let open = {
        let sysvar = a.instructions.try_borrow_data()?;
        let transaction = Instructions::new(&sysvar);
        let (current, count) = transaction.position()?;
        check_channel_bundle(current, count, |i| transaction.get(i))?
    };
    check_open(
        &open,
        &ExpectedOpen {
            deposit,
            mint: args.mint,
            payer: signer,
            recipient,
            facilitator: a.facilitator.key(),
        },
    )?;
    let vault_funded = {
        let policy = &a.evaluation.policy;
        let data = policy.try_borrow_data()?;
        policy.owner == &policy_vault::ID
            && PolicyAccount::funding_in(&data) == Some(funding::VAULT)
    };
    require!(!vault_funded, GateError::ChannelVaultFunded);

    // Remaining accounts: the deposit's approval and its rent payer, when it has one.
    let (approval, _) = approval_accounts(ctx.remaining_accounts, true);
    let (decision, holdback) = a
        .evaluation
        .evaluate_and_commit(&args, approval, None, &[])?;
    require_allowed_in_full(decision, holdback, GateError::ChannelHoldback)?;

    let bump = canonical_bump(
        &a.channel_record,
        &[seeds::CHANNEL_RECORD, open.channel.as_ref()],
    )?;
    let now = Clock::get()?.unix_timestamp;
    pda_account::init(
        &a.facilitator,
        &a.channel_record,
        8 + ChannelRecord::INIT_SPACE,
        &[seeds::CHANNEL_RECORD, open.channel.as_ref(), &[bump]],
        &ChannelRecord {
            channel: open.channel,
            payer_asset: args.payer_asset,
            payee_asset: args.payee_asset,
            payer_signer: signer,
            facilitator: a.facilitator.key(),
            mint: args.mint,
            decimals,
            authorized_signer: open.authorized_signer,
            policy_id,
            deposit,
            open_slot: open.open_slot,
            day_index: day_index(now),
            week_index: week_index(now),
            month_index: month_index(now),
            created_at: now,
            bump,
        },
    )
}
