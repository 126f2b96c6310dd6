//! Token-2022 transfer-hook programs for tests, and the mint set-up that wires one in. Used to
//! prove that a reverted transfer leaves the gate's counters (and a vault) untouched.

use crate::mints::Extension;
use crate::world::World;
use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::{
    account_info::AccountInfo, entrypoint::ProgramResult, instruction::AccountMeta,
    program_error::ProgramError,
};
use sha2::{Digest, Sha256};
use solana_sdk::account::AccountSharedData;

/// The rejecting hook's program id in tests.
pub const REJECTING_HOOK_ID: Pubkey = Pubkey::new_from_array([0xB1; 32]);
/// The program id of the hook that lets only self-authorized transfers through.
pub const SELF_AUTHORIZED_HOOK_ID: Pubkey = Pubkey::new_from_array([0xB2; 32]);
/// What the hooks fail with.
pub const HOOK_REJECTION: u32 = 0xB10C;

/// Execute's accounts start [source, mint, destination, authority, ...]: fails unless the
/// authority is the source itself, as for a policy vault's transfers. So a vault's release
/// passes and the payer's own transfer is refused.
pub fn reject_unless_self_authorized(
    _program_id: &Pubkey,
    accounts: &[AccountInfo],
    _data: &[u8],
) -> ProgramResult {
    match accounts {
        [source, _, _, authority, ..] if source.key == authority.key => Ok(()),
        _ => Err(ProgramError::Custom(HOOK_REJECTION)),
    }
}

/// Fails every call, Execute included: the transfer it guards is refused.
pub fn reject_transfer(
    _program_id: &Pubkey,
    _accounts: &[AccountInfo],
    _data: &[u8],
) -> ProgramResult {
    Err(ProgramError::Custom(HOOK_REJECTION))
}

/// The validation account Token-2022 reads before calling the rejecting hook:
/// `["extra-account-metas", mint]`.
pub fn extra_account_metas_address(mint: &Pubkey) -> Pubkey {
    extra_account_metas_of(&REJECTING_HOOK_ID, mint)
}

/// `hook`'s validation account for `mint`.
pub fn extra_account_metas_of(hook: &Pubkey, mint: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(&[b"extra-account-metas", mint.as_ref()], hook).0
}

/// What a transfer of a mint with `hook` must carry after its four accounts (and what a
/// vault's release needs passed on): the hook program and its validation account.
pub fn hook_accounts(hook: &Pubkey, mint: &Pubkey) -> [AccountMeta; 2] {
    [
        AccountMeta::new_readonly(*hook, false),
        AccountMeta::new_readonly(extra_account_metas_of(hook, mint), false),
    ]
}

impl World {
    /// A new Token-2022 mint (world's mint authority, 6 decimals) whose transfers call
    /// `hook` (which must be loaded), with its validation account holding no extra accounts.
    pub async fn hook_mint(&mut self, hook: Pubkey) -> Pubkey {
        let mint = self.token_2022_mint(&[Extension::TransferHook(hook)]).await;
        let rent = self.ctx.banks_client.get_rent().await.unwrap();
        let metas = empty_extra_account_metas();
        let mut account =
            AccountSharedData::new(rent.minimum_balance(metas.len()), metas.len(), &hook);
        account.set_data_from_slice(&metas);
        self.ctx
            .set_account(&extra_account_metas_of(&hook, &mint), &account);
        mint
    }
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
