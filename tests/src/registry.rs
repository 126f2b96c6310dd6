//! validation_registry instructions for its suite and the test world: the SDK's builders,
//! plus the Anchor account structs the attack tests tamper with.

use anchor_lang::{prelude::Pubkey, InstructionData, ToAccountMetas};
use solana_sdk::{instruction::Instruction, sysvar};
pub use trust_gate_client::instructions::{capability_hash, Claim};
use trust_gate_client::{Builder, Network, ProgramIds};
use validation_registry::{accounts, instruction, pda};

/// The SDK's builder at the ids the programs were built with.
pub fn builder() -> Builder {
    Builder::new(ProgramIds::for_network(Network::Devnet)).expect("devnet ids are configured")
}

pub fn instruction(accounts: impl ToAccountMetas, data: impl InstructionData) -> Instruction {
    Instruction {
        program_id: validation_registry::ID,
        accounts: accounts.to_account_metas(None),
        data: data.data(),
    }
}

pub fn register_namespace_accounts(registrant: &Pubkey, name: &str) -> accounts::RegisterNamespace {
    accounts::RegisterNamespace {
        registrant: *registrant,
        namespace: pda::namespace(&capability_hash(name)).0,
        system_program: anchor_lang::system_program::ID,
    }
}

pub fn register_namespace_ix(
    registrant: &Pubkey,
    name: &str,
    version: &str,
    schema_uri: &str,
) -> Instruction {
    builder().register_namespace(registrant, name, version, schema_uri)
}

pub fn register_attestor_ix(attestor: &Pubkey, display_name_uri: &str) -> Instruction {
    builder().register_attestor(attestor, display_name_uri)
}

pub fn request_accounts(
    requester: &Pubkey,
    subject: &Pubkey,
    capability: &[u8; 32],
) -> accounts::RequestValidation {
    accounts::RequestValidation {
        requester: *requester,
        namespace: pda::namespace(capability).0,
        request: pda::request(subject, capability, requester).0,
        system_program: anchor_lang::system_program::ID,
    }
}

pub fn request_ix(
    requester: &Pubkey,
    subject: &Pubkey,
    capability: &[u8; 32],
    claim_uri_hash: [u8; 32],
    deadline_slot: u64,
) -> Instruction {
    builder().request_validation(
        requester,
        subject,
        capability,
        claim_uri_hash,
        deadline_slot,
    )
}

/// The instruction data of a response to `claim`.
pub fn respond_data(claim: &Claim) -> instruction::RespondToValidation {
    instruction::RespondToValidation {
        args: validation_registry::RespondToValidationArgs {
            subject_asset: claim.subject,
            capability_hash: claim.capability,
            claim_payload_hash: claim.payload_hash,
            claim_uri_hash: claim.uri_hash,
            expires_at_slot: claim.expires_at_slot,
        },
    }
}

pub fn respond_accounts(attestor: &Pubkey, claim: &Claim) -> accounts::RespondToValidation {
    accounts::RespondToValidation {
        attestor: *attestor,
        attestor_profile: pda::attestor_profile(attestor).0,
        namespace: pda::namespace(&claim.capability).0,
        attestation: pda::attestation(&claim.subject, &claim.capability, attestor).0,
        instructions: sysvar::instructions::ID,
        system_program: anchor_lang::system_program::ID,
    }
}

pub fn respond_ix(attestor: &Pubkey, claim: &Claim) -> Instruction {
    builder().respond_to_validation(attestor, claim)
}

pub fn revoke_accounts(
    attestor: &Pubkey,
    subject: &Pubkey,
    capability: &[u8; 32],
) -> accounts::RevokeValidation {
    accounts::RevokeValidation {
        attestor: *attestor,
        attestor_profile: pda::attestor_profile(attestor).0,
        attestation: pda::attestation(subject, capability, attestor).0,
    }
}

pub fn revoke_ix(
    attestor: &Pubkey,
    subject: &Pubkey,
    capability: &[u8; 32],
    reason: [u8; 32],
) -> Instruction {
    builder().revoke_validation(attestor, subject, capability, reason)
}
