use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

use crate::errors::ValidationRegistryError;
use crate::events::AttestorRegistered;
use crate::state::{seeds, AttestorProfile, MAX_DISPLAY_NAME_URI_LEN};

#[derive(Accounts)]
pub struct RegisterAttestor<'info> {
    /// The attestor registering itself; pays for its profile.
    #[account(mut)]
    pub attestor: Signer<'info>,
    /// The new profile at `["attestor", attestor]`; `init` rejects a second registration.
    /// Created by the handler (not `init`), so lamports sent to the address in
    /// advance cannot block it; see `trust_gate_program_common::pda_account`.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::ATTESTOR, attestor.key().as_ref()], bump)]
    pub attestor_profile: UncheckedAccount<'info>,
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

        let bump = ctx.bumps.attestor_profile;
        let profile = &ctx.accounts.attestor_profile;
        pda_account::init(
            &ctx.accounts.attestor,
            profile,
            8 + AttestorProfile::INIT_SPACE,
            &[seeds::ATTESTOR, attestor.as_ref(), &[bump]],
            &AttestorProfile {
                attestor,
                display_name_uri: display_name_uri.clone(),
                attestations_issued: 0,
                revocations: 0,
                created_slot: slot,
                bump,
            },
        )?;

        runtime::emit(&AttestorRegistered {
            profile: profile.key(),
            attestor,
            display_name_uri,
            slot,
        });
        Ok(())
    }
}
