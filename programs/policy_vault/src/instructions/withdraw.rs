use super::helpers::vault_transfer::{transfer_out, vault_balance, VaultTransfer};
use crate::errors::PolicyVaultError;
use crate::events::VaultWithdrawn;
use crate::state::{load_guard, seeds, PolicyAuthority};
use anchor_lang::prelude::*;
use trust_gate_program_common::{runtime, token_account};

#[derive(Accounts)]
#[instruction(asset: Pubkey, mint: Pubkey)]
pub struct Withdraw<'info> {
    /// A member of the agent's policy authority. Further member signers follow as remaining
    /// accounts (a withdrawal needs the threshold), and after them, when the mint has a
    /// Token-2022 transfer hook, the hook's accounts.
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// CHECK: the agent's vault for `mint` (seeds enforced; a token account checked by the
    /// token program, which also refuses it if it is not the vault's authority).
    #[account(mut, seeds = [seeds::VAULT, asset.as_ref(), mint.as_ref()], bump)]
    pub vault: UncheckedAccount<'info>,
    /// CHECK: the mint (address enforced; the token program checks it against the vault).
    #[account(address = mint @ PolicyVaultError::MintAccountMismatch)]
    pub mint_account: UncheckedAccount<'info>,
    /// Any token account of the mint; the owners choose where the funds go (while the asset
    /// is with another owner, one of the recovery key's).
    /// CHECK: the token program checks it; its authority is read when it must be the
    /// recovery key's.
    #[account(mut)]
    pub destination: UncheckedAccount<'info>,
    /// CHECK: the token program that owns the mint (compared in the handler).
    pub token_program: UncheckedAccount<'info>,
    /// The agent's MPL Core asset: while its live owner is not the authority's owner (a sale
    /// on MPL Core, before the take-over takes effect), the members may withdraw only to the
    /// recovery key.
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold_in_force`.
    pub agent_asset: UncheckedAccount<'info>,
    /// The authority's guard (the recovery key), when its threshold set one.
    /// CHECK: address enforced by seeds; read only when policy_vault owns it.
    #[account(seeds = [seeds::AUTHORITY_GUARD, asset.as_ref()], bump)]
    pub authority_guard: UncheckedAccount<'info>,
}

/// Moves `amount` out of the agent's vault for `mint`; needs `threshold` members, never the
/// agent's hot key (unless the owners made it a member). While the asset is with another
/// owner, only to a token account of the recovery key named before.
pub fn withdraw<'info>(
    ctx: Context<'info, Withdraw<'info>>,
    asset: Pubkey,
    mint: Pubkey,
    amount: u64,
) -> Result<()> {
    require!(amount > 0, PolicyVaultError::AmountZero);
    let a = &ctx.accounts;
    let (signers, current) = a.authority.require_threshold_in_force(
        &a.agent_asset,
        &a.member.key(),
        ctx.remaining_accounts,
    )?;
    if !current {
        // The asset is with another owner, who may be taking the authority over: the vault
        // goes only where the members said before that it may.
        let recovery = load_guard(&a.authority_guard)?
            .and_then(|g| g.recovery())
            .ok_or(PolicyVaultError::RecoveryNotSet)?;
        let to = token_account::read(a.destination.owner, &a.destination.try_borrow_data()?)
            .ok_or(PolicyVaultError::WithdrawalNotToRecovery)?;
        require_keys_eq!(
            to.owner,
            recovery,
            PolicyVaultError::WithdrawalNotToRecovery
        );
    }
    transfer_out(
        &VaultTransfer {
            asset,
            mint: &a.mint_account,
            vault: &a.vault,
            vault_bump: ctx.bumps.vault,
            to: &a.destination,
            token_program: &a.token_program,
            extra: ctx.remaining_accounts,
            balance: vault_balance(&a.vault)?,
        },
        amount,
    )?;
    runtime::emit(&VaultWithdrawn {
        asset,
        mint,
        amount,
        destination: a.destination.key(),
        by: a.member.key(),
        signers,
    });
    Ok(())
}
