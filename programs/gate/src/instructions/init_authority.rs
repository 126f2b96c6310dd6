use crate::errors::GateError;
use crate::events::GateAuthorityInitialized;
use crate::state::{seeds, GateAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

#[derive(Accounts)]
#[instruction(facilitator: Pubkey)]
pub struct InitAuthority<'info> {
    #[account(mut, address = facilitator @ GateError::FacilitatorMismatch)]
    pub facilitator_signer: Signer<'info>,
    /// The new GateAuthority's PDA (seeds enforced), created by the handler so that
    /// lamports sent to the address in advance cannot block it (see `pda_account`).
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::GATE_AUTHORITY, facilitator.as_ref()], bump)]
    pub gate_authority: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn init_authority(ctx: Context<InitAuthority>, facilitator: Pubkey) -> Result<()> {
    let bump = ctx.bumps.gate_authority;
    let a = &ctx.accounts;
    pda_account::init(
        &a.facilitator_signer,
        &a.gate_authority,
        8 + GateAuthority::INIT_SPACE,
        &[seeds::GATE_AUTHORITY, facilitator.as_ref(), &[bump]],
        &GateAuthority {
            facilitator,
            feedback_count: 0,
            settled_count: 0,
            dispute_count: 0,
            created_slot: Clock::get()?.slot,
            bump,
        },
    )?;
    runtime::emit(&GateAuthorityInitialized {
        facilitator,
        gate_authority: a.gate_authority.key(),
    });
    Ok(())
}
