//! Moving tokens out of an agent's vault: the release of a settlement and a withdrawal. Both
//! go through [`transfer_out`], the only place policy_vault signs for a vault.

use crate::errors::PolicyVaultError;
use crate::state::{vault, PolicyAccount};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::AccountMeta;
use anchor_lang::solana_program::program::invoke_signed;
use trust_gate_program_common::token_account;
use trust_gate_program_common::token_mint::is_token_program;

/// A transfer out of the vault of (`asset`, `mint`).
pub struct VaultTransfer<'a, 'info> {
    pub asset: Pubkey,
    pub mint: &'a AccountInfo<'info>,
    pub vault: &'a AccountInfo<'info>,
    pub vault_bump: u8,
    pub to: &'a AccountInfo<'info>,
    pub token_program: &'a AccountInfo<'info>,
    /// Passed on to the token program: a Token-2022 transfer hook's program and accounts
    /// (the token programs ignore accounts they do not need).
    pub extra: &'a [AccountInfo<'info>],
}

/// TransferChecked of `amount` from the vault to `t.to`, signed with the vault's seeds.
pub fn transfer_out(t: &VaultTransfer, amount: u64) -> Result<()> {
    let program = t.token_program.key;
    require!(
        is_token_program(program) && t.mint.owner == program,
        PolicyVaultError::TokenProgramMismatch
    );
    let decimals = token_account::mint_decimals(&t.mint.try_borrow_data()?)
        .ok_or(PolicyVaultError::MintInvalid)?;
    let extra = t.extra.iter().map(|a| AccountMeta {
        pubkey: *a.key,
        is_signer: a.is_signer,
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
    let mut infos = vec![
        t.vault.clone(),
        t.mint.clone(),
        t.to.clone(),
        t.token_program.clone(),
    ];
    infos.extend(t.extra.iter().cloned());
    vault::with_signer_seeds(&t.asset, t.mint.key, t.vault_bump, |signer| {
        invoke_signed(&ix, &infos, signer)
    })?;
    Ok(())
}

/// The vault accounts a committing evaluation may carry (all four or none).
pub struct ReleaseAccounts<'a, 'info> {
    pub vault: Option<&'a AccountInfo<'info>>,
    pub payer_token: Option<&'a AccountInfo<'info>>,
    pub mint: Option<&'a AccountInfo<'info>>,
    pub token_program: Option<&'a AccountInfo<'info>>,
}

impl<'a, 'info> ReleaseAccounts<'a, 'info> {
    /// Checks the accounts against the policy's funding and returns the release to make on
    /// Allow: `None` for a wallet-funded policy (which must carry no vault, so that a vault
    /// is never emptied under the caps of a policy not written for it).
    pub fn release(
        &self,
        policy: &PolicyAccount,
        mint: &Pubkey,
        amount: u64,
        extra: &'a [AccountInfo<'info>],
    ) -> Result<Option<VaultTransfer<'a, 'info>>> {
        if !policy.params.is_vault_funded() {
            require!(self.vault.is_none(), PolicyVaultError::PolicyNotVaultFunded);
            return Ok(None);
        }
        let (Some(vault), Some(to), Some(mint_account), Some(token_program)) =
            (self.vault, self.payer_token, self.mint, self.token_program)
        else {
            return err!(PolicyVaultError::VaultAccountsMissing);
        };
        require_keys_eq!(
            *mint_account.key,
            *mint,
            PolicyVaultError::MintAccountMismatch
        );
        // The stored bump stands for the seeds search; a wrong account fails here.
        require!(
            vault::address(&policy.asset, mint, policy.vault_bump) == Some(*vault.key),
            PolicyVaultError::VaultAccountInvalid
        );
        let view = token_account::read(vault.owner, &vault.try_borrow_data()?)
            .filter(|v| v.mint == *mint && v.owner == *vault.key)
            .ok_or(PolicyVaultError::VaultAccountInvalid)?;
        require!(
            view.amount >= amount,
            PolicyVaultError::VaultInsufficientFunds
        );
        Ok(Some(VaultTransfer {
            asset: policy.asset,
            mint: mint_account,
            vault,
            vault_bump: policy.vault_bump,
            to,
            token_program,
            extra,
        }))
    }
}
