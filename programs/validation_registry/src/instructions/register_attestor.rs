use anchor_lang::prelude::*;
use trust_gate_program_common::runtime;

use crate::errors::ValidationRegistryError;
use crate::events::AttestorRegistered;
use crate::state::{seeds, AttestorProfile, MAX_DISPLAY_NAME_URI_LEN};

#[derive(Accounts)]
pub struct RegisterAttestor<'info> {
    /// The attestor registering itself; pays for its profile.
    #[account(mut)]
    pub attestor: Signer<'info>,
    /// The new profile at `["attestor", attestor]`; `init` rejects a second registration.
    #[account(
        init,
        payer = attestor,
        space = 8 + AttestorProfile::INIT_SPACE,
        seeds = [seeds::ATTESTOR, attestor.key().as_ref()],
        bump,
    )]
    pub attestor_profile: Account<'info, AttestorProfile>,
    /// Creates the profile account.
    pub system_program: Program<'info, System>,
}

impl RegisterAttestor<'_> {
    fn validate(display_name_uri: &str) -> Result<()> {
        require!(
            display_name_uri.len() <= MAX_DISPLAY_NAME_URI_LEN,
            ValidationRegistryError::DisplayNameUriTooLong
        );
        Ok(())
    }

    pub fn handler(ctx: Context<Self>, display_name_uri: String) -> Result<()> {
        Self::validate(&display_name_uri)?;
        let slot = Clock::get()?.slot;
        let attestor = ctx.accounts.attestor.key();

        let profile = &mut ctx.accounts.attestor_profile;
        profile.set_inner(AttestorProfile {
            attestor,
            display_name_uri: display_name_uri.clone(),
            attestations_issued: 0,
            revocations: 0,
            created_slot: slot,
            bump: ctx.bumps.attestor_profile,
        });

        runtime::emit(&AttestorRegistered {
            profile: profile.key(),
            attestor,
            display_name_uri,
            slot,
        });
        Ok(())
    }
}
