use super::helpers::mint_check::check_policy_mint;
use crate::errors::PolicyVaultError;
use crate::events::VaultOpened;
use crate::state::{seeds, vault, PolicyAuthority};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::program::invoke;
use trust_gate_program_common::token_mint::VaultLock;
use trust_gate_program_common::{pda_account, runtime, token_account, token_mint};

#[derive(Accounts)]
#[instruction(asset: Pubkey, mint: Pubkey)]
pub struct OpenVault<'info> {
    /// A member of the agent's policy authority; pays the vault's rent. Further member
    /// signers follow as remaining accounts: opening needs the threshold.
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The vault's PDA (seeds enforced), created here as a token account of `mint` whose
    /// authority is itself.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::VAULT, asset.as_ref(), mint.as_ref()], bump)]
    pub vault: UncheckedAccount<'info>,
    /// The vault's mint: an SPL Token or Token-2022 mint of at most 18 decimals, without a
    /// transfer fee, a permanent delegate (which could empty the vault without the gate) or a
    /// close authority.
    /// CHECK: compared with `mint` and parsed by `check_policy_mint`.
    pub mint_account: UncheckedAccount<'info>,
    /// CHECK: the token program that owns the mint (compared in the handler).
    pub token_program: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
    /// The agent's MPL Core asset: its live owner must be the authority's owner (a sale on
    /// MPL Core ends the seller's authority; the buyer takes it over).
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// Opens the agent's vault for `mint`; needs `threshold` members. Anyone may deposit into it
/// afterwards with a plain token transfer.
pub fn open_vault(ctx: Context<OpenVault>, asset: Pubkey, mint: Pubkey) -> Result<()> {
    let a = &ctx.accounts;
    let signers =
        a.authority
            .require_threshold(&a.agent_asset, &a.member.key(), ctx.remaining_accounts)?;
    check_policy_mint(Some(a.mint_account.as_ref()), &mint)?;
    // Tokens wait in a vault: a mint that can be closed (and re-created with a permanent
    // delegate) while the vault is empty could later take deposits back.
    require!(
        !token_mint::has_close_authority(a.mint_account.owner, &a.mint_account.try_borrow_data()?),
        PolicyVaultError::MintCloseAuthority
    );
    // A mint whose issuer can stop every transfer, or whose new accounts are born frozen,
    // would lock the vault by design.
    match token_mint::vault_lock(a.mint_account.owner, &a.mint_account.try_borrow_data()?) {
        Some(VaultLock::Pausable) => return err!(PolicyVaultError::MintPausable),
        Some(VaultLock::DefaultFrozen) => return err!(PolicyVaultError::MintDefaultFrozen),
        None => {}
    }
    require_keys_eq!(
        *a.mint_account.owner,
        a.token_program.key(),
        PolicyVaultError::TokenProgramMismatch
    );
    let program = a.token_program.to_account_info();
    let space = token_account::account_size(&program, &a.mint_account)?;
    let bump = ctx.bumps.vault;
    vault::with_signer_seeds(&asset, &mint, bump, |signer| {
        pda_account::create_pda(&a.member, &a.vault, program.key, space, signer[0])
    })?;
    // The vault is its own authority: only policy_vault's seeds can move its tokens.
    invoke(
        &token_account::initialize_account3(program.key, a.vault.key, &mint, a.vault.key),
        &[
            a.vault.to_account_info(),
            a.mint_account.to_account_info(),
            program,
        ],
    )?;
    runtime::emit(&VaultOpened {
        asset,
        mint,
        vault: a.vault.key(),
        opened_by: a.member.key(),
        signers,
    });
    Ok(())
}
