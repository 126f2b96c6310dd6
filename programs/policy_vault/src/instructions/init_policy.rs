use super::helpers::mint_check::check_policy_mint;
use crate::errors::PolicyVaultError;
use crate::events::{KillSwitchInitialized, PolicyCreated};
use crate::state::{
    seeds, vault, HoldbackSchedule, KillSwitchState, PayeeDaySlots, PayeeList, PolicyAccount,
    PolicyAuthority, PolicyLimits, PolicyParams, PolicyRules, VelocityLedger, POLICY_VERSION,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

/// The arguments of `init_policy`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct InitPolicyArgs {
    /// The agent's MPL Core asset: the policy is the asset's, and its authority's members
    /// create it.
    pub asset: Pubkey,
    /// The policy's id among the asset's policies; payments name it.
    pub policy_id: u32,
    /// The core rules. A policy with Spending or Velocity names its mint, whose account is
    /// checked (no Token-2022 transfer fee or permanent delegate).
    pub params: PolicyParams,
    /// The limits: validity window, payee allow or deny list, monthly, lifetime and per-payee
    /// daily caps. None, or all zero: no limits (an option so that a policy without them
    /// costs one byte of the transaction). When they name a payee list account, that account
    /// (created empty) must be given.
    pub rules: Option<PolicyRules>,
    /// A payment of more needs the members' `approve_payment` (0 = none).
    pub approval_threshold: u64,
    /// The holdback schedule: the share of each payment held back from a payee of each tier,
    /// and for how long (docs/holdback.md); none: nothing held.
    pub holdback: Option<HoldbackSchedule>,
}

#[derive(Accounts)]
#[instruction(args: InitPolicyArgs)]
pub struct InitPolicy<'info> {
    /// A member of the agent's policy authority; pays for the accounts. Further member
    /// signers follow as remaining accounts: creating a policy needs the threshold, because
    /// a payer pays under the policy it names.
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, args.asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The new PolicyAccount's PDA (seeds enforced), created by the handler at the size its
    /// rules need (an address someone pre-funded is topped up, not refused); policies are
    /// immutable once created.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::POLICY, args.asset.as_ref(), &args.policy_id.to_le_bytes()], bump)]
    pub policy: UncheckedAccount<'info>,
    /// CHECK: the policy's VelocityLedger PDA (seeds enforced), created by the handler.
    #[account(mut, seeds = [seeds::VELOCITY, args.asset.as_ref(), &args.policy_id.to_le_bytes()], bump)]
    pub velocity: UncheckedAccount<'info>,
    /// The agent's KillSwitchState PDA (seeds enforced), created here when missing:
    /// every payer with a policy has one.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::KILLSWITCH, args.asset.as_ref()], bump)]
    pub killswitch: UncheckedAccount<'info>,
    /// The policy's mint (required when the policy names one): an SPL Token or Token-2022
    /// mint without a transfer fee or permanent delegate.
    /// CHECK: compared with `params.mint` and parsed by `check_policy_mint`.
    pub mint: Option<UncheckedAccount<'info>>,
    /// The policy's PayeeList PDA (seeds enforced), required when `rules.payee_list` names
    /// it, which must be this address; created empty here.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::PAYEE_LIST, args.asset.as_ref(), &args.policy_id.to_le_bytes()], bump)]
    pub payee_list: Option<UncheckedAccount<'info>>,
    pub system_program: Program<'info, System>,
    /// The agent's MPL Core asset: its live owner must be the authority's owner (a sale on
    /// MPL Core ends the seller's authority; the buyer takes it over).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// Creates a policy: its core `params`, its limit `rules` (none, or all zero: no limits
/// section in the account) and its approval threshold; the velocity ledger, the kill switch
/// when missing, and the payee list account when the rules name one.
pub fn init_policy<'info>(
    ctx: Context<'info, InitPolicy<'info>>,
    args: InitPolicyArgs,
) -> Result<()> {
    let InitPolicyArgs {
        asset,
        policy_id,
        params,
        rules,
        approval_threshold,
        holdback,
    } = args;
    let a = &ctx.accounts;
    let rules = rules.filter(|r| *r != PolicyRules::default());
    params.validate(rules.as_ref())?;
    if let Some(h) = &holdback {
        h.validate()?;
    }
    let signers =
        a.authority
            .require_threshold(&a.agent_asset, &a.member.key(), ctx.remaining_accounts)?;
    if params.mint != Pubkey::default() {
        check_policy_mint(a.mint.as_ref().map(|m| m.as_ref()), &params.mint)?;
    }
    let now = Clock::get()?.unix_timestamp;
    let id = policy_id.to_le_bytes();
    // The list account the rules name must be the one given, at its PDA.
    if let Some(r) = rules.as_ref().filter(|r| r.has_list_account()) {
        let (Some(list), Some(bump)) = (&a.payee_list, ctx.bumps.payee_list) else {
            return err!(PolicyVaultError::PayeeListMismatch);
        };
        require_keys_eq!(
            list.key(),
            r.payee_list,
            PolicyVaultError::PayeeListMismatch
        );
        pda_account::init(
            &a.member,
            list,
            PayeeList::space(0),
            &[seeds::PAYEE_LIST, asset.as_ref(), &id, &[bump]],
            &PayeeList {
                asset,
                policy_id,
                bump,
                payees: vec![],
            },
        )?;
    }

    if pda_account::load::<KillSwitchState>(&a.killswitch)?.is_none() {
        let bump = ctx.bumps.killswitch;
        pda_account::init(
            &a.member,
            &a.killswitch,
            8 + KillSwitchState::INIT_SPACE,
            &[seeds::KILLSWITCH, asset.as_ref(), &[bump]],
            &KillSwitchState::new(asset, bump),
        )?;
        runtime::emit(&KillSwitchInitialized { asset });
    }

    let bump = ctx.bumps.velocity;
    pda_account::init(
        &a.member,
        &a.velocity,
        8 + VelocityLedger::INIT_SPACE,
        &[seeds::VELOCITY, asset.as_ref(), &id, &[bump]],
        &VelocityLedger {
            asset,
            policy_id,
            cumulative: 0,
            window_start: now,
            last_commit: 0,
            bump,
        },
    )?;

    runtime::emit(&PolicyCreated {
        asset,
        policy_id,
        kinds: params.kinds,
        mint: params.mint,
        funding: params.funding,
        created_by: a.member.key(),
        signers,
        approval_threshold,
        limits: rules.is_some(),
    });
    let (vault, vault_bump) = if params.is_vault_funded() {
        vault::find(&asset, &params.mint)
    } else {
        (Pubkey::default(), 0)
    };
    let bump = ctx.bumps.policy;
    let policy = PolicyAccount {
        asset,
        policy_id,
        params,
        day_index: 0,
        day_spent: 0,
        week_index: 0,
        week_spent: 0,
        created_at: now,
        retired_at: 0,
        bump,
        vault_bump,
        spender: Pubkey::default(),
        vault,
        approval_threshold,
        version: POLICY_VERSION,
        payee_day: rules
            .filter(|r| r.payee_daily_cap != 0)
            .map(|_| PayeeDaySlots::default()),
        limits: rules.map(|rules| PolicyLimits {
            rules,
            month_index: 0,
            month_spent: 0,
            lifetime_spent: 0,
        }),
        holdback,
    };
    pda_account::init(
        &a.member,
        &a.policy,
        PolicyAccount::space(rules.as_ref(), holdback.is_some()),
        &[seeds::POLICY, asset.as_ref(), &id, &[bump]],
        &policy,
    )
}
