use anchor_lang::prelude::*;
use policy_vault::program::PolicyVault;

#[derive(Accounts)]
pub struct InitKillSwitch<'info> {
    /// A member of the agent's policy authority; pays for the account.
    #[account(mut)]
    pub member: Signer<'info>,
    /// CHECK: the agent's PolicyAuthority (checked by policy_vault).
    pub authority: UncheckedAccount<'info>,
    /// CHECK: the KillSwitchState PDA to create (checked by policy_vault).
    #[account(mut)]
    pub killswitch: UncheckedAccount<'info>,
    pub policy_vault_program: Program<'info, PolicyVault>,
    pub system_program: Program<'info, System>,
}

/// Convenience: creates the agent's kill switch through policy_vault, so a client can
/// bootstrap an agent through the gate alone.
pub fn init_killswitch(ctx: Context<InitKillSwitch>, asset: Pubkey) -> Result<()> {
    let a = &ctx.accounts;
    policy_vault::cpi::init_killswitch(
        CpiContext::new(
            policy_vault::ID,
            policy_vault::cpi::accounts::InitKillSwitch {
                member: a.member.to_account_info(),
                authority: a.authority.to_account_info(),
                killswitch: a.killswitch.to_account_info(),
                system_program: a.system_program.to_account_info(),
            },
        ),
        asset,
    )
}
