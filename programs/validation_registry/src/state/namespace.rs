use anchor_lang::prelude::*;

pub const MIN_NAME_LEN: usize = 3;
pub const MAX_NAME_LEN: usize = 32;
pub const MAX_VERSION_LEN: usize = 16;
pub const MAX_SCHEMA_URI_LEN: usize = 160;

/// A capability namespace such as `kyc.tier-1.v1`. First come, permanent. Its address is
/// derived from `sha256(name)`, computed on chain.
#[account]
#[derive(InitSpace, Debug)]
pub struct CapabilityNamespace {
    /// sha256(name): the capability hash policies and attestations refer to.
    pub hash: [u8; 32],
    #[max_len(MAX_NAME_LEN)]
    pub name: String,
    #[max_len(MAX_VERSION_LEN)]
    pub version: String,
    #[max_len(MAX_SCHEMA_URI_LEN)]
    pub schema_uri: String,
    pub registrant: Pubkey,
    pub created_slot: u64,
    pub bump: u8,
}

impl CapabilityNamespace {
    /// The capability hash of a namespace name: `sha256(name)` (the `sol_sha256` syscall on
    /// chain). Clients use it to derive the namespace's address.
    pub fn hash_name(name: &str) -> [u8; 32] {
        solana_sha256_hasher::hashv(&[name.as_bytes()]).to_bytes()
    }
}
