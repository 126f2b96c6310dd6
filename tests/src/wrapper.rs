//! A program that calls the gate's strict instruction itself, twice: the attack on a strict
//! gate that checks only its position in the transaction (a wrapper at index 0 could commit
//! the counters several times for one transfer).

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::{
    account_info::AccountInfo,
    entrypoint::ProgramResult,
    instruction::{AccountMeta, Instruction},
    program::invoke,
    program_error::ProgramError,
};

/// The wrapper's program id in tests.
pub const WRAPPER_ID: Pubkey = Pubkey::new_from_array([0xC4; 32]);

/// Accounts: the program to call, then that instruction's accounts; data: its data.
/// Calls it twice with the same accounts and privileges.
pub fn call_twice(_program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    let (target, rest) = accounts
        .split_first()
        .ok_or(ProgramError::NotEnoughAccountKeys)?;
    let ix = Instruction {
        program_id: *target.key,
        accounts: rest
            .iter()
            .map(|a| AccountMeta {
                pubkey: *a.key,
                is_signer: a.is_signer,
                is_writable: a.is_writable,
            })
            .collect(),
        data: data.to_vec(),
    };
    invoke(&ix, accounts)?;
    invoke(&ix, accounts)
}

/// `inner` wrapped: the wrapper instruction that calls `inner` twice.
pub fn wrap(inner: &Instruction) -> Instruction {
    let mut accounts = vec![AccountMeta::new_readonly(inner.program_id, false)];
    accounts.extend(inner.accounts.iter().cloned());
    Instruction {
        program_id: WRAPPER_ID,
        accounts,
        data: inner.data.clone(),
    }
}
