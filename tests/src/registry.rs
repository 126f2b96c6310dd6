//! Instruction builders for validation_registry, shared by its suite and the test world.

use anchor_lang::{prelude::Pubkey, InstructionData, ToAccountMetas};
use solana_sdk::{instruction::Instruction, sysvar};
use validation_registry::{accounts, attestation_message, instruction, pda};

/// sha256 of a capability namespace name: the capability hash.
pub fn capability_hash(name: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(name.as_bytes()).into()
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
    instruction(
        register_namespace_accounts(registrant, name),
        instruction::RegisterNamespace {
            name: name.into(),
            version: version.into(),
            schema_uri: schema_uri.into(),
        },
    )
}

pub fn register_attestor_ix(attestor: &Pubkey, display_name_uri: &str) -> Instruction {
    instruction(
        accounts::RegisterAttestor {
            attestor: *attestor,
            attestor_profile: pda::attestor_profile(attestor).0,
            system_program: anchor_lang::system_program::ID,
        },
        instruction::RegisterAttestor {
            display_name_uri: display_name_uri.into(),
        },
    )
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
    instruction(
        request_accounts(requester, subject, capability),
        instruction::RequestValidation {
            subject_asset: *subject,
            capability_hash: *capability,
            claim_uri_hash,
            deadline_slot,
        },
    )
}

/// The claim an attestor answers with.
#[derive(Clone, Copy)]
pub struct Claim {
    pub subject: Pubkey,
    pub capability: [u8; 32],
    pub payload: [u8; 32],
    pub uri: [u8; 32],
    pub expires_at_slot: u64,
}

impl Claim {
    pub fn message(&self) -> Vec<u8> {
        attestation_message(
            &self.subject,
            &self.capability,
            &self.payload,
            &self.uri,
            self.expires_at_slot,
        )
    }

    pub fn data(&self) -> instruction::RespondToValidation {
        instruction::RespondToValidation {
            subject_asset: self.subject,
            capability_hash: self.capability,
            claim_payload_hash: self.payload,
            claim_uri_hash: self.uri,
            expires_at_slot: self.expires_at_slot,
        }
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
    instruction(respond_accounts(attestor, claim), claim.data())
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
    instruction(
        revoke_accounts(attestor, subject, capability),
        instruction::RevokeValidation {
            subject_asset: *subject,
            capability_hash: *capability,
            reason_hash: reason,
        },
    )
}
