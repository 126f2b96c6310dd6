use super::mint_check::check_policy_mint;
use crate::events::{KillSwitchInitialized, PolicyCreated};
use crate::state::{
    seeds, vault, KillSwitchState, PolicyAccount, PolicyAuthority, PolicyParams, VelocityLedger,
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

pub fn init_policy(
    ctx: Context<InitPolicy>,
    asset: Pubkey,
    policy_id: u32,
    params: PolicyParams,
) -> Result<()> {
    params.validate()?;
    let a = &ctx.accounts;
    let signers =
        a.authority
            .require_threshold(&a.agent_asset, &a.member.key(), ctx.remaining_accounts)?;
    if params.mint != Pubkey::default() {
        check_policy_mint(a.mint.as_ref().map(|m| m.as_ref()), &params.mint)?;
    }
    let now = Clock::get()?.unix_timestamp;
    let id = policy_id.to_le_bytes();

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
    });
    let vault_bump = if params.is_vault_funded() {
        vault::find(&asset, &params.mint).1
    } else {
        0
    };
    let bump = ctx.bumps.policy;
    pda_account::init(
        &a.member,
        &a.policy,
        8 + PolicyAccount::INIT_SPACE,
        &[seeds::POLICY, asset.as_ref(), &id, &[bump]],
        &PolicyAccount {
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
        },
    )?;
    Ok(())
}
