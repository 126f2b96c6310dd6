use super::mint_check::check_policy_mint;
use crate::engine::PAYEE_SLOTS;
use crate::errors::PolicyVaultError;
use crate::events::{KillSwitchInitialized, PolicyCreated};
use crate::state::PayeeSlot;
use crate::state::{
    seeds, vault, KillSwitchState, PayeeList, PolicyAccount, PolicyAccountV2, PolicyAuthority,
    PolicyParams, PolicyRules, VelocityLedger,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
#[instruction(asset: Pubkey, policy_id: u32)]
pub struct InitPolicy<'info> {
    /// A member of the agent's policy authority; pays for the accounts. Further member
    /// signers follow as remaining accounts: creating a policy needs the threshold, because
    /// a payer pays under the policy it names.
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The new PolicyAccount's PDA (seeds enforced), created by the handler; policies
    /// are immutable once created.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::POLICY, asset.as_ref(), &policy_id.to_le_bytes()], bump)]
    pub policy: UncheckedAccount<'info>,
    /// CHECK: the policy's VelocityLedger PDA (seeds enforced), created by the handler.
    #[account(mut, seeds = [seeds::VELOCITY, asset.as_ref(), &policy_id.to_le_bytes()], bump)]
    pub velocity: UncheckedAccount<'info>,
    /// The agent's KillSwitchState PDA (seeds enforced), created here when missing:
    /// every payer with a policy has one.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::KILLSWITCH, asset.as_ref()], bump)]
    pub killswitch: UncheckedAccount<'info>,
    /// The policy's mint (required when the policy names one): an SPL Token or Token-2022
    /// mint without a transfer fee or permanent delegate.
    /// CHECK: compared with `params.mint` and parsed by `check_policy_mint`.
    pub mint: Option<UncheckedAccount<'info>>,
    pub system_program: Program<'info, System>,
    /// The agent's MPL Core asset: its live owner must be the authority's owner (a sale on
    /// MPL Core ends the seller's authority; the buyer takes it over).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// `init_policy`'s accounts and, for a v2 policy whose list has an account, its
/// [`PayeeList`]: created empty here, at its PDA.
#[derive(Accounts)]
#[instruction(asset: Pubkey, policy_id: u32)]
pub struct InitPolicyV2<'info> {
    /// As in [`InitPolicy`].
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The new v2 policy, created at its PDA (an existing v1 or v2 policy there fails).
    #[account(
        init,
        payer = member,
        space = 8 + PolicyAccountV2::INIT_SPACE,
        seeds = [seeds::POLICY, asset.as_ref(), &policy_id.to_le_bytes()],
        bump,
    )]
    pub policy: Box<Account<'info, PolicyAccountV2>>,
    /// CHECK: as in [`InitPolicy`].
    #[account(mut, seeds = [seeds::VELOCITY, asset.as_ref(), &policy_id.to_le_bytes()], bump)]
    pub velocity: UncheckedAccount<'info>,
    /// CHECK: as in [`InitPolicy`].
    #[account(mut, seeds = [seeds::KILLSWITCH, asset.as_ref()], bump)]
    pub killswitch: UncheckedAccount<'info>,
    /// CHECK: as in [`InitPolicy`].
    pub mint: Option<UncheckedAccount<'info>>,
    /// The policy's PayeeList PDA (seeds enforced), required when `rules.payee_list` names
    /// it, which must be this address.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::PAYEE_LIST, asset.as_ref(), &policy_id.to_le_bytes()], bump)]
    pub payee_list: Option<UncheckedAccount<'info>>,
    pub system_program: Program<'info, System>,
    /// CHECK: as in [`InitPolicy`].
    pub agent_asset: UncheckedAccount<'info>,
}

/// The accounts both versions create, borrowed from either accounts struct.
struct Create<'a, 'info> {
    member: &'a Signer<'info>,
    authority: &'a PolicyAuthority,
    policy_bump: u8,
    velocity: &'a AccountInfo<'info>,
    velocity_bump: u8,
    killswitch: &'a AccountInfo<'info>,
    killswitch_bump: u8,
    mint: Option<&'a AccountInfo<'info>>,
    agent_asset: &'a AccountInfo<'info>,
    remaining: &'a [AccountInfo<'info>],
}

/// The accounts both versions create, borrowed from either accounts struct (same fields).
macro_rules! create_accounts {
    ($ctx:expr) => {
        Create {
            member: &$ctx.accounts.member,
            authority: &$ctx.accounts.authority,
            policy_bump: $ctx.bumps.policy,
            velocity: &$ctx.accounts.velocity,
            velocity_bump: $ctx.bumps.velocity,
            killswitch: &$ctx.accounts.killswitch,
            killswitch_bump: $ctx.bumps.killswitch,
            mint: $ctx.accounts.mint.as_ref().map(|m| m.as_ref()),
            agent_asset: &$ctx.accounts.agent_asset,
            remaining: $ctx.remaining_accounts,
        }
    };
}

pub fn init_policy<'info>(
    ctx: Context<'info, InitPolicy<'info>>,
    asset: Pubkey,
    policy_id: u32,
    params: PolicyParams,
) -> Result<()> {
    let a = &ctx.accounts;
    let base = create(create_accounts!(ctx), asset, policy_id, &params, None)?;
    let id = policy_id.to_le_bytes();
    pda_account::init(
        &a.member,
        &a.policy,
        8 + PolicyAccount::INIT_SPACE,
        &[seeds::POLICY, asset.as_ref(), &id, &[base.bump]],
        &base,
    )
}

/// Creates a v2 policy: `params` as `init_policy`'s, and the `rules` a v1 policy lacks.
pub fn init_policy_v2<'info>(
    ctx: Context<'info, InitPolicyV2<'info>>,
    asset: Pubkey,
    policy_id: u32,
    params: PolicyParams,
    rules: PolicyRules,
    approval_threshold: u64,
) -> Result<()> {
    let id = policy_id.to_le_bytes();
    let a = &ctx.accounts;
    // The list account the rules name must be the one given, at its PDA.
    let list = match (rules.has_list_account(), &a.payee_list) {
        (false, _) => None,
        (true, Some(list)) if list.key() == rules.payee_list => Some(list),
        (true, _) => return err!(PolicyVaultError::PayeeListMismatch),
    };
    let base = create(
        create_accounts!(ctx),
        asset,
        policy_id,
        &params,
        Some(&rules),
    )?;
    if let Some(list) = list {
        let bump = ctx
            .bumps
            .payee_list
            .ok_or(PolicyVaultError::PayeeListMismatch)?;
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
    let vault = if base.params.is_vault_funded() {
        vault::address(&asset, &base.params.mint, base.vault_bump).unwrap_or_default()
    } else {
        Pubkey::default()
    };
    ctx.accounts.policy.set_inner(PolicyAccountV2 {
        base,
        rules,
        month_index: 0,
        month_spent: 0,
        lifetime_spent: 0,
        payee_day: 0,
        payee_slots: [PayeeSlot::default(); PAYEE_SLOTS],
        vault,
        approval_threshold,
    });
    Ok(())
}

/// Checks the policy and the threshold, creates the kill switch (when missing) and the
/// velocity ledger, emits `PolicyCreated`, and returns the policy's v1 fields for the caller
/// to store in the account of its version.
fn create(
    a: Create,
    asset: Pubkey,
    policy_id: u32,
    params: &PolicyParams,
    rules: Option<&PolicyRules>,
) -> Result<PolicyAccount> {
    params.validate(rules)?;
    let signers = a
        .authority
        .require_threshold(a.agent_asset, &a.member.key(), a.remaining)?;
    if params.mint != Pubkey::default() {
        check_policy_mint(a.mint, &params.mint)?;
    }
    let now = Clock::get()?.unix_timestamp;
    let id = policy_id.to_le_bytes();

    if pda_account::load::<KillSwitchState>(a.killswitch)?.is_none() {
        let bump = a.killswitch_bump;
        pda_account::init(
            a.member,
            a.killswitch,
            8 + KillSwitchState::INIT_SPACE,
            &[seeds::KILLSWITCH, asset.as_ref(), &[bump]],
            &KillSwitchState::new(asset, bump),
        )?;
        runtime::emit(&KillSwitchInitialized { asset });
    }

    let bump = a.velocity_bump;
    pda_account::init(
        a.member,
        a.velocity,
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
        version: if rules.is_some() { 2 } else { 1 },
    });
    let vault_bump = if params.is_vault_funded() {
        vault::find(&asset, &params.mint).1
    } else {
        0
    };
    Ok(PolicyAccount {
        asset,
        policy_id,
        params: params.clone(),
        day_index: 0,
        day_spent: 0,
        week_index: 0,
        week_spent: 0,
        created_at: now,
        retired_at: 0,
        bump: a.policy_bump,
        vault_bump,
        spender: Pubkey::default(),
    })
}
