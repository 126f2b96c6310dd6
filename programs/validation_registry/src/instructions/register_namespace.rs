use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, runtime};

use crate::errors::ValidationRegistryError;
use crate::events::NamespaceRegistered;
use crate::state::{
    seeds, CapabilityNamespace, MAX_NAME_LEN, MAX_SCHEMA_URI_LEN, MAX_VERSION_LEN, MIN_NAME_LEN,
};

#[derive(Accounts)]
#[instruction(name: String)]
pub struct RegisterNamespace<'info> {
    /// Pays for the namespace account and is recorded as its registrant.
    #[account(mut)]
    pub registrant: Signer<'info>,
    /// The new namespace at `["capability", sha256(name)]`; the hash is computed here from
    /// `name`, so the address of any other hash fails the seeds check. Creating it once makes the
    /// first registration permanent.
    /// Created by the handler (not `init`), so lamports sent to the address in
    /// advance cannot block the registration; see `trust_gate_program_common::pda_account`.
    /// CHECK: verified as described above.
    #[account(
        mut,
        seeds = [seeds::CAPABILITY, &CapabilityNamespace::hash_name(&name)],
        bump,
    )]
    pub namespace: UncheckedAccount<'info>,
    /// Creates the namespace account.
    pub system_program: Program<'info, System>,
}

impl RegisterNamespace<'_> {
    fn validate(name: &str, version: &str, schema_uri: &str) -> Result<()> {
        require!(
            name.len() >= MIN_NAME_LEN,
            ValidationRegistryError::NameTooShort
        );
        require!(
            name.len() <= MAX_NAME_LEN,
            ValidationRegistryError::NameTooLong
        );
        require!(
            !name.contains(':'),
            ValidationRegistryError::NameContainsColon
        );
        require!(
            version.len() <= MAX_VERSION_LEN,
            ValidationRegistryError::VersionTooLong
        );
        require!(
            schema_uri.len() <= MAX_SCHEMA_URI_LEN,
            ValidationRegistryError::SchemaUriTooLong
        );
        Ok(())
    }

    pub fn handler(
        ctx: Context<Self>,
        name: String,
        version: String,
        schema_uri: String,
    ) -> Result<()> {
        Self::validate(&name, &version, &schema_uri)?;
        let slot = Clock::get()?.slot;
        let hash = CapabilityNamespace::hash_name(&name);
        let registrant = ctx.accounts.registrant.key();

        let bump = ctx.bumps.namespace;
        let namespace = &ctx.accounts.namespace;
        pda_account::init(
            &ctx.accounts.registrant,
            namespace,
            8 + CapabilityNamespace::INIT_SPACE,
            &[seeds::CAPABILITY, &hash, &[bump]],
            &CapabilityNamespace {
                hash,
                name: name.clone(),
                version: version.clone(),
                schema_uri: schema_uri.clone(),
                registrant,
                created_slot: slot,
                bump,
            },
        )?;

        runtime::emit(&NamespaceRegistered {
            namespace: namespace.key(),
            hash,
            name,
            version,
            schema_uri,
            registrant,
            slot,
        });
        Ok(())
    }
}
