use crate::events::AcceptancePolicySet;
use crate::state::{
    seeds, AcceptanceParams, AcceptancePolicy, PolicyAuthority, ACCEPTANCE_VERSION,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
#[instruction(asset: Pubkey)]
pub struct SetAcceptancePolicy<'info> {
    /// A member (pays when the account is created); further member signers follow as
    /// remaining accounts.
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The agent's AcceptancePolicy PDA (seeds enforced); created by the handler when
    /// missing, else replaced.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::ACCEPTANCE, asset.as_ref()], bump)]
    pub acceptance: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
    /// The agent's MPL Core asset: its live owner must be the authority's owner (a sale on
    /// MPL Core ends the seller's authority; the buyer takes it over).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// Creates or replaces the agent's acceptance policy; needs the authority's threshold.
pub fn set_acceptance_policy(
    ctx: Context<SetAcceptancePolicy>,
    asset: Pubkey,
    params: AcceptanceParams,
) -> Result<()> {
    params.validate()?;
    let a = &ctx.accounts;
    a.authority
        .require_threshold(&a.agent_asset, &a.member.key(), ctx.remaining_accounts)?;
    let bump = ctx.bumps.acceptance;
    // Seeds enforced: an account policy_vault owns here is the agent's acceptance policy,
    // whatever layout version it was written with.
    let replaced = a.acceptance.owner == &crate::ID && !a.acceptance.data_is_empty();
    runtime::emit(&AcceptancePolicySet {
        asset,
        min_payer_tier: params.min_payer_tier,
        required_capability: params.required_capability,
        replaced,
    });
    let value = AcceptancePolicy {
        asset,
        params,
        updated_at: Clock::get()?.unix_timestamp,
        bump,
        version: ACCEPTANCE_VERSION,
    };
    if replaced {
        pda_account::store_grown(
            &a.member,
            &a.acceptance,
            8 + AcceptancePolicy::INIT_SPACE,
            &value,
        )?;
    } else {
        pda_account::init(
            &a.member,
            &a.acceptance,
            8 + AcceptancePolicy::INIT_SPACE,
            &[seeds::ACCEPTANCE, asset.as_ref(), &[bump]],
            &value,
        )?;
    }
    Ok(())
}
