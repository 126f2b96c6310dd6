use crate::errors::GateError;
use crate::events::GateAuthorityInitialized;
use crate::state::{seeds, GateAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

#[derive(Accounts)]
#[instruction(facilitator: Pubkey)]
pub struct InitAuthority<'info> {
    #[account(mut, address = facilitator @ GateError::FacilitatorMismatch)]
    pub facilitator_signer: Signer<'info>,
    #[account(
        init,
        payer = facilitator_signer,
        space = 8 + GateAuthority::INIT_SPACE,
        seeds = [seeds::GATE_AUTHORITY, facilitator.as_ref()],
        bump,
    )]
    pub gate_authority: Account<'info, GateAuthority>,
    pub system_program: Program<'info, System>,
}

pub fn init_authority(ctx: Context<InitAuthority>, facilitator: Pubkey) -> Result<()> {
    let a = &mut ctx.accounts.gate_authority;
    a.facilitator = facilitator;
    a.created_slot = Clock::get()?.slot;
    a.bump = ctx.bumps.gate_authority;
    runtime::emit(&GateAuthorityInitialized {
        facilitator,
        gate_authority: a.key(),
    });
    Ok(())
}
