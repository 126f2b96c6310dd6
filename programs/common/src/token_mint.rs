//! Token mints as the programs need to see them: owned by SPL Token or Token-2022, and free
//! of the Token-2022 extensions that make a transfer's `amount` untrustworthy.
//!
//! A policy counts `amount` against its caps and a receipt records it as paid. Two Token-2022
//! extensions break that: a **transfer fee** withholds part of every transfer at the
//! destination (the payee receives less than `amount`), and a **permanent delegate** can move
//! tokens out of any account of the mint at any time (a settled payment can be clawed back).
//! Such mints are refused where a policy is created and again at every settlement (a mint with
//! a close authority can be closed and re-created with new extensions at the same address).
//!
//! The TLV walk is written out here rather than pulled from spl-token-2022 so that the
//! programs stay small; `tests` checks it against mints created by Token-2022 itself.

use anchor_lang::prelude::*;

pub const TOKEN_PROGRAM_ID: Pubkey = pubkey!("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
pub const TOKEN_2022_PROGRAM_ID: Pubkey = pubkey!("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");

/// The base mint layout of both programs: 82 bytes, `is_initialized` at 45.
pub const MINT_LEN: usize = 82;
const IS_INITIALIZED: usize = 45;
/// A Token-2022 mint with extensions is padded to the token-account length, then carries one
/// account-type byte, then the TLV extensions.
const EXTENDED_BASE_LEN: usize = 165;
const ACCOUNT_TYPE_MINT: u8 = 1;
const TLV_START: usize = EXTENDED_BASE_LEN + 1;

/// Token-2022 extension type numbers (`spl_token_2022::extension::ExtensionType`).
pub mod extension {
    pub const UNINITIALIZED: u16 = 0;
    pub const TRANSFER_FEE_CONFIG: u16 = 1;
    pub const MINT_CLOSE_AUTHORITY: u16 = 3;
    pub const DEFAULT_ACCOUNT_STATE: u16 = 6;
    pub const PERMANENT_DELEGATE: u16 = 12;
    pub const TRANSFER_HOOK: u16 = 14;
    pub const PAUSABLE: u16 = 26;
}

/// Token-2022's `AccountState::Frozen`, as the DefaultAccountState extension stores it.
const ACCOUNT_STATE_FROZEN: u8 = 2;

/// Where both token programs keep a mint's decimals.
pub const DECIMALS_AT: usize = 44;

/// The most decimals a mint may have where a policy, a vault or a gated channel names it:
/// the registry's feedback states a value's decimals up to 18, and a settlement's or a
/// channel's feedback states its value in the mint's decimals (a channel in a mint of more
/// could never close through the gate).
pub const MAX_DECIMALS: u8 = crate::external::instructions::MAX_VALUE_DECIMALS;

/// A mint's decimals (`None` for data too short to be a mint).
pub fn decimals(data: &[u8]) -> Option<u8> {
    data.get(DECIMALS_AT).copied()
}

pub fn is_token_program(id: &Pubkey) -> bool {
    *id == TOKEN_PROGRAM_ID || *id == TOKEN_2022_PROGRAM_ID
}

/// Why a mint cannot back a policy or a settlement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MintProblem {
    /// Not an initialized mint of SPL Token or Token-2022.
    NotAMint,
    /// Token-2022 transfer-fee extension: the destination receives less than `amount`.
    TransferFee,
    /// Token-2022 permanent delegate (set): it can take a payment back from the payee.
    PermanentDelegate,
}

/// Checks the account at a mint's address: its owner and, for Token-2022, its extensions.
pub fn check(owner: &Pubkey, data: &[u8]) -> core::result::Result<(), MintProblem> {
    if !is_token_program(owner) || data.len() < MINT_LEN || data[IS_INITIALIZED] != 1 {
        return Err(MintProblem::NotAMint);
    }
    if data.len() == MINT_LEN {
        return Ok(());
    }
    // Only Token-2022 mints carry extensions.
    if *owner != TOKEN_2022_PROGRAM_ID
        || data.len() < TLV_START
        || data[EXTENDED_BASE_LEN] != ACCOUNT_TYPE_MINT
    {
        return Err(MintProblem::NotAMint);
    }
    for entry in extensions(data) {
        let (kind, value) = entry.ok_or(MintProblem::NotAMint)?;
        match kind {
            extension::TRANSFER_FEE_CONFIG => return Err(MintProblem::TransferFee),
            // An all-zero delegate is "none" and can never be set again.
            extension::PERMANENT_DELEGATE if value.iter().any(|b| *b != 0) => {
                return Err(MintProblem::PermanentDelegate)
            }
            _ => {}
        }
    }
    Ok(())
}

/// The TLV entries (type, value) of a Token-2022 mint's or account's extensions (both start
/// after the account-type byte at 165), in order, up to the first uninitialized one; `None`
/// for an entry that runs past the data (and nothing after it).
pub(crate) fn extensions(data: &[u8]) -> impl Iterator<Item = Option<(u16, &[u8])>> + '_ {
    let mut at = TLV_START;
    core::iter::from_fn(move || {
        if at + 4 > data.len() {
            return None;
        }
        let kind = u16::from_le_bytes([data[at], data[at + 1]]);
        let len = usize::from(u16::from_le_bytes([data[at + 2], data[at + 3]]));
        let value = data.get(at + 4..at + 4 + len);
        // Stop after a truncated entry or at the end of the initialized ones.
        at = match value {
            Some(_) if kind != extension::UNINITIALIZED => at + 4 + len,
            _ => data.len(),
        };
        match value {
            None => Some(None),
            Some(_) if kind == extension::UNINITIALIZED => None,
            Some(v) => Some(Some((kind, v))),
        }
    })
}

/// Whether a mint (checked by [`check`] first) has a Token-2022 close authority set. A mint
/// with no supply can then be closed and created again at the same address with other
/// extensions (a permanent delegate), which matters where tokens wait, as in a policy vault.
pub fn has_close_authority(owner: &Pubkey, data: &[u8]) -> bool {
    *owner == TOKEN_2022_PROGRAM_ID
        && extensions(data)
            .map_while(|entry| entry)
            .find(|(kind, _)| *kind == extension::MINT_CLOSE_AUTHORITY)
            // An all-zero close authority is "none".
            .is_some_and(|(_, value)| value.iter().any(|b| *b != 0))
}

/// The program a Token-2022 mint's transfers call (its TransferHook extension: an authority,
/// then the program, each all zeros for none), if any. A client cannot know what that program
/// costs, so it requests no compute-unit limit of its own for such a mint.
pub fn transfer_hook_program(owner: &Pubkey, data: &[u8]) -> Option<Pubkey> {
    if *owner != TOKEN_2022_PROGRAM_ID {
        return None;
    }
    extensions(data)
        .map_while(|entry| entry)
        .find(|(kind, _)| *kind == extension::TRANSFER_HOOK)
        .and_then(|(_, value)| value.get(32..64))
        .filter(|program| program.iter().any(|b| *b != 0))
        .map(|program| Pubkey::new_from_array(program.try_into().unwrap_or([0; 32])))
}

/// Whether a Token-2022 mint has a TransferHook extension that names a program or an
/// authority (which can name a program later): all zeros is no hook and no way to add one.
pub fn may_call_transfer_hook(owner: &Pubkey, data: &[u8]) -> bool {
    *owner == TOKEN_2022_PROGRAM_ID
        && extensions(data)
            .map_while(|entry| entry)
            .find(|(kind, _)| *kind == extension::TRANSFER_HOOK)
            .is_some_and(|(_, value)| value.iter().any(|b| *b != 0))
}

/// What lets a mint's issuer lock a policy vault's tokens outright, refused for vault mints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VaultLock {
    /// Token-2022 Pausable: its authority can stop every transfer of the mint.
    Pausable,
    /// Token-2022 DefaultAccountState(Frozen): a new vault would be born frozen.
    DefaultFrozen,
}

/// Whether a mint (checked by [`check`] first) carries an extension that locks a vault by
/// design. A freeze authority and a transfer hook can lock one too (by freezing the vault, or
/// by swapping in a hook that always fails); those are common on stablecoins and are
/// documented rather than refused (docs/policies.md, "Funding").
pub fn vault_lock(owner: &Pubkey, data: &[u8]) -> Option<VaultLock> {
    if *owner != TOKEN_2022_PROGRAM_ID {
        return None;
    }
    extensions(data)
        .map_while(|entry| entry)
        .find_map(|(kind, value)| match kind {
            extension::PAUSABLE => Some(VaultLock::Pausable),
            extension::DEFAULT_ACCOUNT_STATE if value.first() == Some(&ACCOUNT_STATE_FROZEN) => {
                Some(VaultLock::DefaultFrozen)
            }
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mint(extensions: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut d = vec![0u8; MINT_LEN];
        d[IS_INITIALIZED] = 1;
        if extensions.is_empty() {
            return d;
        }
        d.resize(EXTENDED_BASE_LEN, 0);
        d.push(ACCOUNT_TYPE_MINT);
        for (kind, value) in extensions {
            d.extend_from_slice(&kind.to_le_bytes());
            d.extend_from_slice(&(value.len() as u16).to_le_bytes());
            d.extend_from_slice(value);
        }
        d
    }

    #[test]
    fn plain_mints_of_both_programs_pass() {
        assert_eq!(check(&TOKEN_PROGRAM_ID, &mint(&[])), Ok(()));
        assert_eq!(check(&TOKEN_2022_PROGRAM_ID, &mint(&[])), Ok(()));
        // A transfer hook (14) and metadata pointer (18) do not change what arrives.
        let ok = mint(&[(14, vec![7; 64]), (18, vec![1; 64])]);
        assert_eq!(check(&TOKEN_2022_PROGRAM_ID, &ok), Ok(()));
    }

    #[test]
    fn fee_and_delegate_extensions_are_refused() {
        let fee = mint(&[
            (14, vec![7; 64]),
            (extension::TRANSFER_FEE_CONFIG, vec![0; 108]),
        ]);
        assert_eq!(
            check(&TOKEN_2022_PROGRAM_ID, &fee),
            Err(MintProblem::TransferFee)
        );
        let delegate = mint(&[(extension::PERMANENT_DELEGATE, vec![9; 32])]);
        assert_eq!(
            check(&TOKEN_2022_PROGRAM_ID, &delegate),
            Err(MintProblem::PermanentDelegate)
        );
        let no_delegate = mint(&[(extension::PERMANENT_DELEGATE, vec![0; 32])]);
        assert_eq!(check(&TOKEN_2022_PROGRAM_ID, &no_delegate), Ok(()));
    }

    #[test]
    fn vault_locks_are_pausable_and_a_frozen_default_only() {
        let p = &TOKEN_2022_PROGRAM_ID;
        let state = |s: u8| {
            mint(&[
                (14, vec![7; 64]),
                (extension::DEFAULT_ACCOUNT_STATE, vec![s]),
            ])
        };
        assert_eq!(vault_lock(p, &state(2)), Some(VaultLock::DefaultFrozen));
        assert_eq!(vault_lock(p, &state(1)), None);
        let pausable = mint(&[(extension::PAUSABLE, vec![0; 33])]);
        assert_eq!(vault_lock(p, &pausable), Some(VaultLock::Pausable));
        assert_eq!(vault_lock(&TOKEN_PROGRAM_ID, &mint(&[])), None);
    }

    #[test]
    fn a_close_authority_is_seen_only_when_set() {
        let p = &TOKEN_2022_PROGRAM_ID;
        let close = |key: u8| {
            mint(&[
                (14, vec![7; 64]),
                (extension::MINT_CLOSE_AUTHORITY, vec![key; 32]),
            ])
        };
        assert!(has_close_authority(p, &close(9)));
        assert!(!has_close_authority(p, &close(0)));
        assert!(!has_close_authority(p, &mint(&[(14, vec![7; 64])])));
        assert!(!has_close_authority(p, &mint(&[])));
        assert!(!has_close_authority(&TOKEN_PROGRAM_ID, &close(9)));
    }

    #[test]
    fn anything_else_is_not_a_mint() {
        let m = mint(&[]);
        assert_eq!(check(&Pubkey::default(), &m), Err(MintProblem::NotAMint));
        let mut uninit = m.clone();
        uninit[IS_INITIALIZED] = 0;
        assert_eq!(
            check(&TOKEN_PROGRAM_ID, &uninit),
            Err(MintProblem::NotAMint)
        );
        assert_eq!(
            check(&TOKEN_PROGRAM_ID, &m[..40]),
            Err(MintProblem::NotAMint)
        );
        // Extensions on an SPL Token account, a token account (type 2), a truncated entry.
        let ext = mint(&[(14, vec![7; 64])]);
        assert_eq!(check(&TOKEN_PROGRAM_ID, &ext), Err(MintProblem::NotAMint));
        let mut account = ext.clone();
        account[EXTENDED_BASE_LEN] = 2;
        assert_eq!(
            check(&TOKEN_2022_PROGRAM_ID, &account),
            Err(MintProblem::NotAMint)
        );
        let truncated = &ext[..ext.len() - 1];
        assert_eq!(
            check(&TOKEN_2022_PROGRAM_ID, truncated),
            Err(MintProblem::NotAMint)
        );
    }
}
