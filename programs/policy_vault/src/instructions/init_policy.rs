use crate::errors::PolicyVaultError;
use crate::events::{KillSwitchInitialized, PolicyCreated};
use crate::state::{
    seeds, KillSwitchState, PolicyAccount, PolicyAuthority, PolicyParams, VelocityLedger,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(asset: Pubkey, policy_id: u32)]
pub struct InitPolicy<'info> {
    /// A member of the agent's policy authority; pays for the accounts.
    #[account(mut, constraint = authority.is_member(&member.key()) @ PolicyVaultError::NotAuthorityMember)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The new policy (immutable once created).
    #[account(
        init,
        payer = member,
        space = 8 + PolicyAccount::INIT_SPACE,
        seeds = [seeds::POLICY, asset.as_ref(), &policy_id.to_le_bytes()],
        bump,
    )]
    pub policy: Account<'info, PolicyAccount>,
    /// The policy's velocity ledger.
    #[account(
        init,
        payer = member,
        space = 8 + VelocityLedger::INIT_SPACE,
        seeds = [seeds::VELOCITY, asset.as_ref(), &policy_id.to_le_bytes()],
        bump,
    )]
    pub velocity: Account<'info, VelocityLedger>,
    /// The agent's kill switch, created here when missing: every payer with a policy has one.
    #[account(
        init_if_needed,
        payer = member,
        space = 8 + KillSwitchState::INIT_SPACE,
        seeds = [seeds::KILLSWITCH, asset.as_ref()],
        bump,
    )]
    pub killswitch: Account<'info, KillSwitchState>,
    pub system_program: Program<'info, System>,
}

pub fn init_policy(
    ctx: Context<InitPolicy>,
    asset: Pubkey,
    policy_id: u32,
    params: PolicyParams,
) -> Result<()> {
    params.validate()?;
    let now = Clock::get()?.unix_timestamp;

    let ks = &mut ctx.accounts.killswitch;
    if ks.asset == Pubkey::default() {
        ks.asset = asset;
        ks.bump = ctx.bumps.killswitch;
        runtime::emit(&KillSwitchInitialized { asset });
    }

    let v = &mut ctx.accounts.velocity;
    v.asset = asset;
    v.policy_id = policy_id;
    v.window_start = now;
    v.bump = ctx.bumps.velocity;

    let p = &mut ctx.accounts.policy;
    p.asset = asset;
    p.policy_id = policy_id;
    p.created_at = now;
    p.bump = ctx.bumps.policy;
    runtime::emit(&PolicyCreated {
        asset,
        policy_id,
        kinds: params.kinds,
        mint: params.mint,
        created_by: ctx.accounts.member.key(),
    });
    p.params = params;
    Ok(())
}
