use crate::events::KillSwitchSet;
use crate::state::{seeds, KillSwitchState, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct SetKillSwitch<'info> {
    /// A member; further member signers follow as remaining accounts.
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    #[account(mut, seeds = [seeds::KILLSWITCH, asset.as_ref()], bump = killswitch.bump)]
    pub killswitch: Account<'info, KillSwitchState>,
    /// The agent's MPL Core asset (the members in force act whoever owns it, until a
    /// take-over takes effect).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold_in_force`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// Pauses or resumes every payment of the agent; needs `threshold` distinct members of the
/// authority in force: also while a take-over is pending, so that the members can stop an
/// agent whose asset moved.
pub fn set_killswitch(ctx: Context<SetKillSwitch>, asset: Pubkey, paused: bool) -> Result<()> {
    let authority = &ctx.accounts.authority;
    let lead = ctx.accounts.member.key();
    let (signers, _) = authority.require_threshold_in_force(
        &ctx.accounts.agent_asset,
        &lead,
        ctx.remaining_accounts,
    )?;
    let now = Clock::get()?.unix_timestamp;
    let ks = &mut ctx.accounts.killswitch;
    ks.paused = paused;
    if paused {
        ks.paused_at = now;
        ks.paused_by = lead;
    } else {
        ks.unpaused_at = now;
    }
    runtime::emit(&KillSwitchSet {
        asset,
        paused,
        by: lead,
        at: now,
        signers,
    });
    Ok(())
}
