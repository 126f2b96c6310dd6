//! validation_registry: namespaces, attestors, requests, responses, revocations.

use super::Builder;
use anchor_lang::prelude::Pubkey;
use anchor_lang::system_program;
use sha2::{Digest, Sha256};
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{Keypair, Signature, Signer};
use solana_sdk::sysvar;
use validation_registry::{
    accounts, attestation_message, instruction, RequestValidationArgs, RespondToValidationArgs,
};

/// sha256 of a capability namespace name: the capability hash.
pub fn capability_hash(name: &str) -> [u8; 32] {
    Sha256::digest(name.as_bytes()).into()
}

/// What an attestor vouches for in `respond_to_validation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub subject: Pubkey,
    pub capability: [u8; 32],
    pub payload_hash: [u8; 32],
    pub uri_hash: [u8; 32],
    /// Expiry slot (the registry also stores it as unix time at 400 ms per slot).
    pub expires_at_slot: u64,
}

impl Claim {
    /// The message an attestor's optional Ed25519 signature covers.
    pub fn message(&self) -> Vec<u8> {
        attestation_message(
            &self.subject,
            &self.capability,
            &self.payload_hash,
            &self.uri_hash,
            self.expires_at_slot,
        )
    }
}

/// An Ed25519 precompile instruction carrying `signer`'s signature over `message` inline;
/// placed right before `respond_to_validation` it marks the attestation as signature-verified.
pub fn ed25519_verify(signer: &Keypair, message: &[u8]) -> Instruction {
    ed25519_instruction(&signer.pubkey(), &signer.sign_message(message), message)
}

/// The Ed25519 precompile instruction checking `signature` by `pubkey` over `message` (a
/// signature made elsewhere: a voucher received over the wire).
pub fn ed25519_instruction(pubkey: &Pubkey, signature: &Signature, message: &[u8]) -> Instruction {
    // One signature; offsets point into this instruction's own data (index u16::MAX).
    const HEADER: u16 = 2 + 14;
    let (pubkey_at, signature_at) = (HEADER, HEADER + 32);
    let message_at = signature_at + 64;
    let mut data = vec![1u8, 0];
    for v in [
        signature_at,
        u16::MAX,
        pubkey_at,
        u16::MAX,
        message_at,
        message.len() as u16,
        u16::MAX,
    ] {
        data.extend_from_slice(&v.to_le_bytes());
    }
    data.extend_from_slice(pubkey.as_ref());
    data.extend_from_slice(signature.as_ref());
    data.extend_from_slice(message);
    Instruction {
        program_id: solana_sdk::ed25519_program::ID,
        accounts: vec![],
        data,
    }
}

impl Builder {
    /// Registers a capability namespace; the program computes the hash from `name`.
    pub fn register_namespace(
        &self,
        registrant: &Pubkey,
        name: &str,
        version: &str,
        schema_uri: &str,
    ) -> Instruction {
        self.ix(
            self.ids.validation_registry,
            accounts::RegisterNamespace {
                registrant: *registrant,
                namespace: self.pda.namespace(&capability_hash(name)),
                system_program: system_program::ID,
            },
            instruction::RegisterNamespace {
                name: name.into(),
                version: version.into(),
                schema_uri: schema_uri.into(),
            },
        )
    }

    /// Registers the signer as an attestor.
    pub fn register_attestor(&self, attestor: &Pubkey, display_name_uri: &str) -> Instruction {
        self.ix(
            self.ids.validation_registry,
            accounts::RegisterAttestor {
                attestor: *attestor,
                attestor_profile: self.pda.attestor_profile(attestor),
                system_program: system_program::ID,
            },
            instruction::RegisterAttestor {
                display_name_uri: display_name_uri.into(),
            },
        )
    }

    /// Asks for an attestation of `capability` about `subject`.
    pub fn request_validation(
        &self,
        requester: &Pubkey,
        subject: &Pubkey,
        capability: &[u8; 32],
        claim_uri_hash: [u8; 32],
        deadline_slot: u64,
    ) -> Instruction {
        self.ix(
            self.ids.validation_registry,
            accounts::RequestValidation {
                requester: *requester,
                namespace: self.pda.namespace(capability),
                request: self.pda.validation_request(subject, capability, requester),
                system_program: system_program::ID,
            },
            instruction::RequestValidation {
                args: RequestValidationArgs {
                    subject_asset: *subject,
                    capability_hash: *capability,
                    claim_uri_hash,
                    deadline_slot,
                },
            },
        )
    }

    /// Creates or renews the attestor's attestation of `claim`.
    pub fn respond_to_validation(&self, attestor: &Pubkey, claim: &Claim) -> Instruction {
        self.ix(
            self.ids.validation_registry,
            accounts::RespondToValidation {
                attestor: *attestor,
                attestor_profile: self.pda.attestor_profile(attestor),
                namespace: self.pda.namespace(&claim.capability),
                attestation: self
                    .pda
                    .attestation(&claim.subject, &claim.capability, attestor),
                instructions: sysvar::instructions::ID,
                system_program: system_program::ID,
            },
            instruction::RespondToValidation {
                args: RespondToValidationArgs {
                    subject_asset: claim.subject,
                    capability_hash: claim.capability,
                    claim_payload_hash: claim.payload_hash,
                    claim_uri_hash: claim.uri_hash,
                    expires_at_slot: claim.expires_at_slot,
                },
            },
        )
    }

    /// Revokes the attestor's attestation about `subject`.
    pub fn revoke_validation(
        &self,
        attestor: &Pubkey,
        subject: &Pubkey,
        capability: &[u8; 32],
        reason_hash: [u8; 32],
    ) -> Instruction {
        self.ix(
            self.ids.validation_registry,
            accounts::RevokeValidation {
                attestor: *attestor,
                attestor_profile: self.pda.attestor_profile(attestor),
                attestation: self.pda.attestation(subject, capability, attestor),
            },
            instruction::RevokeValidation {
                subject_asset: *subject,
                capability_hash: *capability,
                reason_hash,
            },
        )
    }
}
