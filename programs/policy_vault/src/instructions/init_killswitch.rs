use crate::errors::PolicyVaultError;
use crate::events::KillSwitchInitialized;
use crate::state::{seeds, KillSwitchState, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct InitKillSwitch<'info> {
    /// A member of the agent's policy authority; pays for the account.
    #[account(mut, constraint = authority.is_member(&member.key()) @ PolicyVaultError::NotAuthorityMember)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// CHECK: the new KillSwitchState's PDA (seeds enforced), created by the handler.
    #[account(mut, seeds = [seeds::KILLSWITCH, asset.as_ref()], bump)]
    pub killswitch: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn init_killswitch(ctx: Context<InitKillSwitch>, asset: Pubkey) -> Result<()> {
    let bump = ctx.bumps.killswitch;
    pda_account::init(
        &ctx.accounts.member,
        &ctx.accounts.killswitch,
        8 + KillSwitchState::INIT_SPACE,
        &[seeds::KILLSWITCH, asset.as_ref(), &[bump]],
        &KillSwitchState::new(asset, bump),
    )?;
    runtime::emit(&KillSwitchInitialized { asset });
    Ok(())
}
