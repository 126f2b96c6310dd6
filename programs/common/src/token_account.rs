//! Token accounts as the programs need to see them, and the few token-program instructions
//! they invoke (a policy vault's creation and its transfers).
//!
//! Both token programs share the base layout (165 bytes: mint 0..32, owner 32..64, amount
//! 64..72, ..., state at 108) and encode these instructions the same way, so one set of
//! readers and builders serves both. They are written out rather than pulled from the
//! spl-token crates to keep the programs small.

use crate::token_mint::{extensions, is_token_program, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};

/// The base token-account length (an SPL Token account, and a Token-2022 account without
/// extensions).
pub const ACCOUNT_LEN: usize = 165;
const STATE: usize = 108;
/// Token-2022's account-type byte (at 165) of a token account with extensions.
const ACCOUNT_TYPE_ACCOUNT: u8 = 2;
/// A multisig's length, which the token programs never read as an account's.
const MULTISIG_LEN: usize = 355;
const STATE_INITIALIZED: u8 = 1;
/// Offset of the decimals byte in a mint (both programs).
const MINT_DECIMALS: usize = 44;

/// Instruction tags shared by SPL Token and Token-2022.
pub mod tag {
    pub const TRANSFER_CHECKED: u8 = 12;
    pub const INITIALIZE_ACCOUNT3: u8 = 18;
    pub const GET_ACCOUNT_DATA_SIZE: u8 = 21;
}

/// The fields of an initialized token account that the programs read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenAccountView {
    pub mint: Pubkey,
    /// The account's authority (the "owner" field, not the owning program).
    pub owner: Pubkey,
    pub amount: u64,
}

fn key(data: &[u8], at: usize) -> Pubkey {
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(&data[at..at + 32]);
    Pubkey::new_from_array(bytes)
}

/// Reads an initialized (or frozen) token account owned by a token program; `None` for
/// anything else. The length is the token program's own: an SPL Token account is exactly
/// 165 bytes; a Token-2022 account is 165, or more with the account-type byte 2 and
/// well-formed extensions after it, and never a multisig's length.
pub fn read(program: &Pubkey, data: &[u8]) -> Option<TokenAccountView> {
    if !is_token_program(program) || data.len() < ACCOUNT_LEN || data[STATE] < STATE_INITIALIZED {
        return None;
    }
    if data.len() > ACCOUNT_LEN {
        let extended = *program == TOKEN_2022_PROGRAM_ID
            && data.len() != MULTISIG_LEN
            && data[ACCOUNT_LEN] == ACCOUNT_TYPE_ACCOUNT
            && extensions(data).all(|entry| entry.is_some());
        if !extended {
            return None;
        }
    }
    Some(TokenAccountView {
        mint: key(data, 0),
        owner: key(data, 32),
        amount: u64::from_le_bytes(data[64..72].try_into().ok()?),
    })
}

/// The decimals of a mint's data (checked as a mint by `token_mint::check` first).
pub fn mint_decimals(data: &[u8]) -> Option<u8> {
    data.get(MINT_DECIMALS).copied()
}

/// TransferChecked of `amount` from `source` to `destination` signed by `authority`;
/// `extra` are appended (a Token-2022 transfer hook's program and accounts).
#[allow(clippy::too_many_arguments)]
pub fn transfer_checked(
    program: &Pubkey,
    source: &Pubkey,
    mint: &Pubkey,
    destination: &Pubkey,
    authority: &Pubkey,
    amount: u64,
    decimals: u8,
    extra: impl IntoIterator<Item = AccountMeta>,
) -> Instruction {
    let mut data = Vec::with_capacity(10);
    data.push(tag::TRANSFER_CHECKED);
    data.extend_from_slice(&amount.to_le_bytes());
    data.push(decimals);
    let mut accounts = vec![
        AccountMeta::new(*source, false),
        AccountMeta::new_readonly(*mint, false),
        AccountMeta::new(*destination, false),
        AccountMeta::new_readonly(*authority, true),
    ];
    accounts.extend(extra);
    Instruction {
        program_id: *program,
        accounts,
        data,
    }
}

/// InitializeAccount3: makes `account` a token account of `mint` whose authority is `owner`
/// (no rent sysvar, no signature).
pub fn initialize_account3(
    program: &Pubkey,
    account: &Pubkey,
    mint: &Pubkey,
    owner: &Pubkey,
) -> Instruction {
    let mut data = vec![tag::INITIALIZE_ACCOUNT3];
    data.extend_from_slice(owner.as_ref());
    Instruction {
        program_id: *program,
        accounts: vec![
            AccountMeta::new(*account, false),
            AccountMeta::new_readonly(*mint, false),
        ],
        data,
    }
}

/// GetAccountDataSize: the size a token account of `mint` needs (Token-2022 adds the
/// extensions the mint requires of its accounts, a transfer hook's say), as u64 return data.
pub fn get_account_data_size(program: &Pubkey, mint: &Pubkey) -> Instruction {
    Instruction {
        program_id: *program,
        accounts: vec![AccountMeta::new_readonly(*mint, false)],
        data: vec![tag::GET_ACCOUNT_DATA_SIZE],
    }
}

/// The account size for `mint` under `program`: SPL Token's is fixed, Token-2022 is asked.
pub fn account_size<'info>(
    program: &AccountInfo<'info>,
    mint: &AccountInfo<'info>,
) -> Result<usize> {
    if *program.key == TOKEN_PROGRAM_ID {
        return Ok(ACCOUNT_LEN);
    }
    anchor_lang::solana_program::program::invoke(
        &get_account_data_size(program.key, mint.key),
        &[mint.clone(), program.clone()],
    )?;
    let (from, data) = crate::runtime::get_return_data().ok_or(ProgramError::InvalidAccountData)?;
    if from != *program.key {
        return Err(ProgramError::InvalidAccountData.into());
    }
    let size: [u8; 8] = data
        .as_slice()
        .try_into()
        .map_err(|_| ProgramError::InvalidAccountData)?;
    usize::try_from(u64::from_le_bytes(size)).map_err(|_| ProgramError::InvalidAccountData.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(mint: Pubkey, owner: Pubkey, amount: u64) -> Vec<u8> {
        let mut d = vec![0u8; ACCOUNT_LEN];
        d[..32].copy_from_slice(mint.as_ref());
        d[32..64].copy_from_slice(owner.as_ref());
        d[64..72].copy_from_slice(&amount.to_le_bytes());
        d[STATE] = STATE_INITIALIZED;
        d
    }

    #[test]
    fn reads_initialized_accounts_of_both_programs() {
        let (mint, owner) = (Pubkey::new_unique(), Pubkey::new_unique());
        let d = account(mint, owner, 42);
        let want = Some(TokenAccountView {
            mint,
            owner,
            amount: 42,
        });
        assert_eq!(read(&TOKEN_PROGRAM_ID, &d), want);
        let mut extended = d.clone();
        extended.extend_from_slice(&[2, 0, 0]);
        assert_eq!(read(&TOKEN_2022_PROGRAM_ID, &extended), want);
    }

    #[test]
    fn refuses_anything_else() {
        let d = account(Pubkey::new_unique(), Pubkey::new_unique(), 1);
        assert_eq!(read(&Pubkey::new_unique(), &d), None);
        assert_eq!(read(&TOKEN_PROGRAM_ID, &d[..164]), None);
        let mut uninit = d.clone();
        uninit[STATE] = 0;
        assert_eq!(read(&TOKEN_PROGRAM_ID, &uninit), None);
        // A Token-2022 mint padded to the account length (account type 1).
        let mut mint = d.clone();
        mint.extend_from_slice(&[1, 0, 0]);
        assert_eq!(read(&TOKEN_2022_PROGRAM_ID, &mint), None);
    }

    /// I-1: an SPL Token account is read only at its own length, and a Token-2022 account
    /// only with the account-type byte and well-formed extensions, never at a multisig's
    /// length: the base bytes of anything longer are not a token account's.
    #[test]
    fn audit4_i1_only_the_token_programs_own_account_lengths_are_read() {
        let d = account(Pubkey::new_unique(), Pubkey::new_unique(), 1);
        // SPL Token: 165 bytes exactly, whatever follows.
        for tail in [&[2u8][..], &[2, 0, 0, 0, 0], &[0; 190]] {
            let mut longer = d.clone();
            longer.extend_from_slice(tail);
            assert_eq!(read(&TOKEN_PROGRAM_ID, &longer), None, "{}", longer.len());
        }
        // Token-2022: the account-type byte, then TLV entries that fit.
        let ext = |tlv: &[u8]| {
            let mut x = d.clone();
            x.push(ACCOUNT_TYPE_ACCOUNT);
            x.extend_from_slice(tlv);
            x
        };
        // ImmutableOwner (7, no value), then MemoTransfer (8, one byte).
        let good = ext(&[7, 0, 0, 0, 8, 0, 1, 0, 1]);
        assert!(read(&TOKEN_2022_PROGRAM_ID, &good).is_some());
        // An entry that runs past the data.
        assert_eq!(read(&TOKEN_2022_PROGRAM_ID, &ext(&[8, 0, 9, 0, 1])), None);
        // A multisig's length, whatever its byte 165 says.
        let mut multisig = ext(&[]);
        multisig.resize(MULTISIG_LEN, 0);
        assert_eq!(read(&TOKEN_2022_PROGRAM_ID, &multisig), None);
    }

    #[test]
    fn instruction_data_is_the_token_programs_encoding() {
        let k = || Pubkey::new_unique();
        let t = transfer_checked(&TOKEN_PROGRAM_ID, &k(), &k(), &k(), &k(), 7, 6, []);
        assert_eq!(t.data, [12, 7, 0, 0, 0, 0, 0, 0, 0, 6]);
        assert!(t.accounts[3].is_signer && t.accounts[0].is_writable);
        let owner = k();
        let i = initialize_account3(&TOKEN_PROGRAM_ID, &k(), &k(), &owner);
        assert_eq!(i.data[0], 18);
        assert_eq!(&i.data[1..], owner.as_ref());
    }
}
