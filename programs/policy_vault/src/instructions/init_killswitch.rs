use crate::errors::PolicyVaultError;
use crate::events::KillSwitchInitialized;
use crate::state::{seeds, KillSwitchState, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct InitKillSwitch<'info> {
    /// A member of the agent's policy authority; pays for the account.
    #[account(mut, constraint = authority.is_member(&member.key()) @ PolicyVaultError::NotAuthorityMember)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The new kill switch (not paused).
    #[account(
        init,
        payer = member,
        space = 8 + KillSwitchState::INIT_SPACE,
        seeds = [seeds::KILLSWITCH, asset.as_ref()],
        bump,
    )]
    pub killswitch: Account<'info, KillSwitchState>,
    pub system_program: Program<'info, System>,
}

pub fn init_killswitch(ctx: Context<InitKillSwitch>, asset: Pubkey) -> Result<()> {
    let ks = &mut ctx.accounts.killswitch;
    ks.asset = asset;
    ks.bump = ctx.bumps.killswitch;
    runtime::emit(&KillSwitchInitialized { asset });
    Ok(())
}
