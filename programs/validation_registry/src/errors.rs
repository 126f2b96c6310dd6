//! Errors of the validation registry. Codes are Anchor's: 6000 + the variant's index.

use anchor_lang::prelude::*;

#[error_code]
pub enum ValidationRegistryError {
    /// 6000
    #[msg("name is shorter than 3 bytes")]
    NameTooShort,
    /// 6001
    #[msg("name is longer than 32 bytes")]
    NameTooLong,
    /// 6002
    #[msg("name must not contain ':'")]
    NameContainsColon,
    /// 6003
    #[msg("version is longer than 16 bytes")]
    VersionTooLong,
    /// 6004
    #[msg("schema_uri is longer than 160 bytes")]
    SchemaUriTooLong,
    /// 6005
    #[msg("display_name_uri is longer than 100 bytes")]
    DisplayNameUriTooLong,
    /// 6006
    #[msg("deadline_slot must be after the current slot")]
    DeadlineInPast,
    /// 6007
    #[msg("deadline_slot is more than MAX_DEADLINE_SLOTS after the current slot")]
    DeadlineTooFar,
    /// 6008
    #[msg("expires_at_slot must be after the current slot")]
    ExpiryInPast,
    /// 6009
    #[msg("expires_at_slot is too far ahead to convert to unix time")]
    ExpiryOverflow,
    /// 6010
    #[msg(
        "the preceding Ed25519 instruction must carry exactly one signature with its data inline"
    )]
    Ed25519InstructionMalformed,
    /// 6011
    #[msg("the Ed25519 signature's public key is not the attestor")]
    SignaturePublicKeyMismatch,
    /// 6012
    #[msg("the Ed25519 signature's message is not the attestation message")]
    SignatureMessageMismatch,
    /// 6013
    #[msg("the attestation is already revoked")]
    AlreadyRevoked,
    /// 6014
    #[msg("a counter would overflow")]
    CounterOverflow,
}
