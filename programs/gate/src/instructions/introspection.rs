//! Reading the transaction through the instructions sysvar.

use anchor_lang::compat::solana_instructions_sysvar::{
    load_current_index_checked, load_instruction_at_checked,
};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::Instruction;

pub use anchor_lang::compat::solana_instructions_sysvar::ID as INSTRUCTIONS_SYSVAR_ID;

/// Index of the executing top-level instruction and the transaction's instruction count.
pub fn position(sysvar: &AccountInfo) -> Result<(u16, u16)> {
    let current = load_current_index_checked(sysvar)?;
    let data = sysvar.try_borrow_data()?;
    // The sysvar starts with the instruction count as u16 LE.
    let count = data
        .get(..2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or(ProgramError::InvalidAccountData)?;
    Ok((current, count))
}

/// The top-level instruction at `index`, if the transaction has one.
pub fn instruction_at(sysvar: &AccountInfo, index: u16) -> Option<Instruction> {
    load_instruction_at_checked(usize::from(index), sysvar).ok()
}
