//! The mint a policy names must be one whose transfers deliver exactly `amount` and cannot be
//! taken back (see `trust_gate_program_common::token_mint`), of at most 18 decimals (what a
//! payment's feedback can state: `token_mint::MAX_DECIMALS`).

use crate::errors::PolicyVaultError;
use anchor_lang::prelude::*;
use trust_gate_program_common::token_mint::{self, MintProblem};

/// Checks `mint` (the account passed for the policy's mint `expected`).
pub fn check_policy_mint(mint: Option<&AccountInfo>, expected: &Pubkey) -> Result<()> {
    let mint = mint.ok_or(PolicyVaultError::MintAccountMismatch)?;
    require_keys_eq!(*mint.key, *expected, PolicyVaultError::MintAccountMismatch);
    let data = mint.try_borrow_data()?;
    token_mint::check(mint.owner, &data).map_err(|p| {
        error!(match p {
            MintProblem::NotAMint => PolicyVaultError::MintInvalid,
            MintProblem::TransferFee => PolicyVaultError::MintTransferFee,
            MintProblem::PermanentDelegate => PolicyVaultError::MintPermanentDelegate,
        })
    })?;
    // A checked mint holds its decimals.
    let decimals = token_mint::decimals(&data).ok_or(PolicyVaultError::MintInvalid)?;
    require!(
        decimals <= token_mint::MAX_DECIMALS,
        PolicyVaultError::MintDecimalsTooLarge
    );
    Ok(())
}
