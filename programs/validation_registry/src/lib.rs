//! # validation_registry
//!
//! Capability namespaces, attestors, validation requests and attestations. A policy that
//! requires a capability (by its namespace hash, `sha256(name)`) is satisfied by a live,
//! unrevoked [`ValidationAttestation`] from an accepted attestor.
//!
//! Layout: one file per instruction under [`instructions`], one account type per file under
//! [`state`], PDA seed prefixes in [`state::seeds`], errors in [`errors`], events in
//! [`events`], pure helpers (PDAs, the signed attestation message, Ed25519 parsing) in
//! [`utils`].

#![deny(arithmetic_overflow)]

use anchor_lang::prelude::*;

pub mod constants;
pub mod errors;
pub mod events;
pub mod instructions;
pub mod state;
pub mod utils;

pub use constants::*;
pub use errors::*;
pub use events::*;
pub use instructions::*;
pub use state::*;
pub use utils::{attestation_message, pda};

declare_id!("EDZqimhLV8Lponpkxk8PX8rtiB6RsGFMqJfc9iYStdex");

trust_gate_program_common::security_txt!("validation_registry");

#[program]
pub mod validation_registry {
    use super::*;

    /// Registers the capability namespace `name` at `["capability", sha256(name)]`, the hash
    /// computed on chain. First come, permanent.
    pub fn register_namespace(
        ctx: Context<RegisterNamespace>,
        name: String,
        version: String,
        schema_uri: String,
    ) -> Result<()> {
        RegisterNamespace::handler(ctx, name, version, schema_uri)
    }

    /// Registers the signer as an attestor (`["attestor", attestor]`), required before it can
    /// respond to validations.
    pub fn register_attestor(
        ctx: Context<RegisterAttestor>,
        display_name_uri: String,
    ) -> Result<()> {
        RegisterAttestor::handler(ctx, display_name_uri)
    }

    /// Asks attestors to validate `subject_asset` for an existing capability namespace by
    /// `deadline_slot`.
    pub fn request_validation(
        ctx: Context<RequestValidation>,
        args: RequestValidationArgs,
    ) -> Result<()> {
        RequestValidation::handler(ctx, args)
    }

    /// Issues or renews the signer's attestation that `subject_asset` holds the capability,
    /// verifying an optional Ed25519 signature placed in the preceding instruction.
    pub fn respond_to_validation(
        ctx: Context<RespondToValidation>,
        args: RespondToValidationArgs,
    ) -> Result<()> {
        RespondToValidation::handler(ctx, args)
    }

    /// Revokes the signer's own attestation about `subject_asset` for the capability.
    pub fn revoke_validation(
        ctx: Context<RevokeValidation>,
        subject_asset: Pubkey,
        capability_hash: [u8; 32],
        reason_hash: [u8; 32],
    ) -> Result<()> {
        RevokeValidation::handler(ctx, subject_asset, capability_hash, reason_hash)
    }
}
