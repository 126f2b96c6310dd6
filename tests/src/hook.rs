//! A Token-2022 transfer-hook program that rejects every transfer, and the mint set-up that
//! wires it in. Used to prove that a reverted transfer leaves the gate's counters untouched.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::{
    account_info::AccountInfo, entrypoint::ProgramResult, program_error::ProgramError,
};
use sha2::{Digest, Sha256};

/// The hook's program id in tests.
pub const REJECTING_HOOK_ID: Pubkey = Pubkey::new_from_array([0xB1; 32]);
/// What the hook fails with.
pub const HOOK_REJECTION: u32 = 0xB10C;

/// Fails every call, Execute included: the transfer it guards is refused.
pub fn reject_transfer(
    _program_id: &Pubkey,
    _accounts: &[AccountInfo],
    _data: &[u8],
) -> ProgramResult {
    Err(ProgramError::Custom(HOOK_REJECTION))
}

/// The validation account Token-2022 reads before calling a hook: `["extra-account-metas", mint]`.
pub fn extra_account_metas_address(mint: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(&[b"extra-account-metas", mint.as_ref()], &REJECTING_HOOK_ID).0
}

/// An ExtraAccountMetaList with no extra accounts: one TLV entry keyed by the Execute
/// instruction's discriminator, holding a zero-length list.
pub fn empty_extra_account_metas() -> Vec<u8> {
    let discriminator = &Sha256::digest(b"spl-transfer-hook-interface:execute")[..8];
    let mut data = discriminator.to_vec();
    data.extend_from_slice(&4u32.to_le_bytes()); // value length
    data.extend_from_slice(&0u32.to_le_bytes()); // zero ExtraAccountMeta entries
    data
}
