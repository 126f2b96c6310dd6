//! The agent's policy vault: a token account at `["vault", asset, mint]` whose authority is
//! its own address. Nothing but policy_vault can sign for a PDA of policy_vault, and
//! policy_vault signs for a vault in exactly two places: the release of a settlement's
//! amount (reached only from the gate's strict, top-level settlement, on Allow) and a
//! withdrawal by the authority's threshold. There is no separate authority account, so a
//! settlement carries one extra address for the vault, not two.

use super::seeds;
use anchor_lang::prelude::*;

/// The vault's address for `asset` and `mint` with a known bump; `None` when the bump is not
/// the vault's (create_program_address fails only for points on the curve).
pub fn address(asset: &Pubkey, mint: &Pubkey, bump: u8) -> Option<Pubkey> {
    trust_gate_program_common::pda::create(
        &[seeds::VAULT, asset.as_ref(), mint.as_ref()],
        bump,
        &crate::ID,
    )
}

/// The vault's address and bump (a search: for set-up, not for settlements).
pub fn find(asset: &Pubkey, mint: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(&[seeds::VAULT, asset.as_ref(), mint.as_ref()], &crate::ID)
}

/// Calls `f` with the seeds that sign for the vault of `asset` and `mint`.
pub fn with_signer_seeds<R>(
    asset: &Pubkey,
    mint: &Pubkey,
    bump: u8,
    f: impl FnOnce(&[&[&[u8]]]) -> R,
) -> R {
    let bump = [bump];
    let seeds: &[&[u8]] = &[seeds::VAULT, asset.as_ref(), mint.as_ref(), &bump];
    f(&[seeds])
}
