//! Moving tokens out of an agent's vault: the release of a settlement and a withdrawal. Both
//! go through [`transfer_out`], the only place policy_vault signs for a vault.

use crate::errors::PolicyVaultError;
use crate::state::{vault, PolicyAccount};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::AccountMeta;
use trust_gate_program_common::token_mint::is_token_program;
use trust_gate_program_common::{cpi, token_account};

/// A transfer out of the vault of (`asset`, `mint`).
pub struct VaultTransfer<'a, 'info> {
    pub asset: Pubkey,
    pub mint: &'a AccountInfo<'info>,
    pub vault: &'a AccountInfo<'info>,
    pub vault_bump: u8,
    pub to: &'a AccountInfo<'info>,
    pub token_program: &'a AccountInfo<'info>,
    /// The vault's balance, as read when the vault was checked ([`vault_balance`]).
    pub balance: u64,
    /// Passed on to the token program: a Token-2022 transfer hook's program and accounts
    /// (the token programs ignore accounts they do not need).
    pub extra: &'a [AccountInfo<'info>],
}

/// TransferChecked of `amount` from the vault to `t.to`, signed with the vault's seeds. A
/// balance below `amount` is refused by name rather than by the token program.
pub fn transfer_out(t: &VaultTransfer, amount: u64) -> Result<()> {
    let program = t.token_program.key;
    require!(
        is_token_program(program) && t.mint.owner == program,
        PolicyVaultError::TokenProgramMismatch
    );
    require!(
        t.balance >= amount,
        PolicyVaultError::VaultInsufficientFunds
    );
    let decimals = token_account::mint_decimals(&t.mint.try_borrow_data()?)
        .ok_or(PolicyVaultError::MintInvalid)?;
    // Passed on without signer rights: a hook has no use for them, and among the accounts
    // may be signers of ours (a withdrawal's members, the gate's evaluate signer).
    let extra = t.extra.iter().map(|a| AccountMeta {
        pubkey: *a.key,
        is_signer: false,
        is_writable: a.is_writable,
    });
    let ix = token_account::transfer_checked(
        program,
        t.vault.key,
        t.mint.key,
        t.to.key,
        t.vault.key,
        amount,
        decimals,
        extra,
    );
    let mut infos: Vec<&AccountInfo> = Vec::with_capacity(4 + t.extra.len());
    infos.extend([t.vault, t.mint, t.to, t.token_program]);
    infos.extend(t.extra);
    // Without `invoke_signed`'s scan of every meta against every account info, the infos by
    // reference: the callers hold no borrow of these accounts' data across the call.
    vault::with_signer_seeds(&t.asset, t.mint.key, t.vault_bump, |signer| {
        cpi::invoke_signed(&ix, &infos, signer)
    })?;
    Ok(())
}

/// The balance of `vault`, a token account (`VaultAccountInvalid` otherwise).
pub fn vault_balance(vault: &AccountInfo) -> Result<u64> {
    token_account::read(vault.owner, &vault.try_borrow_data()?)
        .map(|v| v.amount)
        .ok_or_else(|| error!(PolicyVaultError::VaultAccountInvalid))
}

/// The release a committing evaluation makes on Allow, read from its remaining accounts
/// (after policy_vault's own account, when the gate passed it) and checked against the
/// policy's funding: `None` for a wallet-funded policy, which must carry no vault accounts,
/// so that a vault is never emptied under the caps of a policy not written for it. The
/// balance is checked only when releasing, so that a Deny keeps its reason code.
pub fn release_accounts<'a, 'info>(
    policy: &PolicyAccount,
    mint: &Pubkey,
    remaining: &'a [AccountInfo<'info>],
) -> Result<Option<VaultTransfer<'a, 'info>>> {
    let accounts = match remaining.split_first() {
        Some((first, rest)) if first.key == &crate::ID => rest,
        _ => remaining,
    };
    if !policy.params.is_vault_funded() {
        require!(accounts.is_empty(), PolicyVaultError::PolicyNotVaultFunded);
        return Ok(None);
    }
    // A vault-funded policy names its mint; the vault is the one for that mint.
    require_keys_eq!(
        policy.params.mint,
        *mint,
        PolicyVaultError::PolicyMintMismatch
    );
    let [vault, to, mint_account, token_program, extra @ ..] = accounts else {
        return err!(PolicyVaultError::VaultAccountsMissing);
    };
    // Only the spender the threshold named may receive a release, so only the spender can
    // sign a payment from the vault: no other key, the owner's included, walks around the
    // threshold.
    require_keys_neq!(
        policy.spender,
        Pubkey::default(),
        PolicyVaultError::VaultSpenderNotSet
    );
    token_account::read(to.owner, &to.try_borrow_data()?)
        .filter(|t| t.mint == *mint && t.owner == policy.spender)
        .ok_or(PolicyVaultError::NotVaultSpender)?;
    require_keys_eq!(
        *mint_account.key,
        *mint,
        PolicyVaultError::MintAccountMismatch
    );
    // The vault's address, stored at creation (no derivation); a wrong account fails here.
    require_keys_eq!(
        policy.vault,
        *vault.key,
        PolicyVaultError::VaultAccountInvalid
    );
    let balance = token_account::read(vault.owner, &vault.try_borrow_data()?)
        .filter(|v| v.mint == *mint && v.owner == *vault.key)
        .ok_or(PolicyVaultError::VaultAccountInvalid)?
        .amount;
    Ok(Some(VaultTransfer {
        asset: policy.asset,
        mint: mint_account,
        vault,
        vault_bump: policy.vault_bump,
        to,
        token_program,
        extra,
        balance,
    }))
}
