//! Reading the transaction through the instructions sysvar, in place.
//!
//! The sysvar's own `load_instruction_at_checked` copies an instruction into an `Instruction`
//! (a vector of account metas and one of data), about 60 compute units per account; a
//! settlement's gate instruction alone has twenty accounts. The settlement rule reads a few
//! keys and bytes of each instruction, so these views read them where they are.
//!
//! Layout (`solana-instructions-sysvar`): u16 instruction count, one u16 offset per
//! instruction, then each instruction as u16 account count, per account a flags byte (bit 0
//! signer) and its 32-byte key, the 32-byte program id, u16 data length, the data; the runtime
//! keeps the executing instruction's index in the last two bytes.

use crate::settlement::TxInstruction;
use anchor_lang::prelude::*;

pub use anchor_lang::compat::solana_instructions_sysvar::ID as INSTRUCTIONS_SYSVAR_ID;

const META_LEN: usize = 33;
const IS_SIGNER: u8 = 1;

fn u16_at(data: &[u8], at: usize) -> Option<usize> {
    let b = data.get(at..at + 2)?;
    Some(usize::from(u16::from_le_bytes([b[0], b[1]])))
}

/// The instructions sysvar's data.
#[derive(Clone, Copy)]
pub struct Instructions<'a>(&'a [u8]);

impl<'a> Instructions<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Instructions(data)
    }

    /// Index of the executing top-level instruction and the transaction's instruction count.
    pub fn position(&self) -> Result<(u16, u16)> {
        let len = self.0.len();
        let current = len.checked_sub(2).and_then(|at| u16_at(self.0, at));
        let count = u16_at(self.0, 0);
        match (current, count) {
            (Some(current), Some(count)) => Ok((current as u16, count as u16)),
            _ => Err(ProgramError::InvalidAccountData.into()),
        }
    }

    /// The top-level instruction at `index`, if the transaction has one and its bytes are
    /// whole.
    pub fn get(&self, index: u16) -> Option<SysvarInstruction<'a>> {
        let index = usize::from(index);
        if index >= u16_at(self.0, 0)? {
            return None;
        }
        let start = u16_at(self.0, 2 + 2 * index)?;
        let accounts = u16_at(self.0, start)?;
        let metas_at = start + 2;
        let program_at = metas_at + accounts * META_LEN;
        let data_len = u16_at(self.0, program_at + 32)?;
        let data_at = program_at + 34;
        let data = self.0.get(data_at..data_at + data_len)?;
        Some(SysvarInstruction {
            metas: self.0.get(metas_at..program_at)?,
            program_id: self.0.get(program_at..program_at + 32)?,
            data,
        })
    }
}

/// One instruction's bytes in the sysvar.
#[derive(Clone, Copy)]
pub struct SysvarInstruction<'a> {
    metas: &'a [u8],
    program_id: &'a [u8],
    data: &'a [u8],
}

fn key(bytes: &[u8]) -> Pubkey {
    let mut key = [0u8; 32];
    key.copy_from_slice(bytes);
    Pubkey::new_from_array(key)
}

impl TxInstruction for SysvarInstruction<'_> {
    fn is_program(&self, id: &Pubkey) -> bool {
        self.program_id == id.as_ref()
    }
    fn program_id(&self) -> Pubkey {
        key(self.program_id)
    }
    fn data(&self) -> &[u8] {
        self.data
    }
    fn account_count(&self) -> usize {
        self.metas.len() / META_LEN
    }
    fn account_key(&self, i: usize) -> Option<Pubkey> {
        let at = i.checked_mul(META_LEN)? + 1;
        self.metas.get(at..at + 32).map(key)
    }
    fn account_is_signer(&self, i: usize) -> Option<bool> {
        self.metas
            .get(i.checked_mul(META_LEN)?)
            .map(|f| f & IS_SIGNER != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::compat::solana_instructions_sysvar::construct_instructions_data;
    use anchor_lang::solana_program::instruction::{
        AccountMeta, BorrowedAccountMeta, BorrowedInstruction, Instruction,
    };

    #[test]
    fn views_read_what_the_sysvar_holds() {
        let ixs = [
            Instruction::new_with_bytes(Pubkey::new_unique(), &[1, 2, 3], vec![]),
            Instruction::new_with_bytes(
                Pubkey::new_unique(),
                &[9; 300],
                vec![
                    AccountMeta::new(Pubkey::new_unique(), true),
                    AccountMeta::new_readonly(Pubkey::new_unique(), false),
                    AccountMeta::new_readonly(Pubkey::new_unique(), true),
                ],
            ),
        ];
        let borrowed: Vec<_> = ixs.iter().map(borrowed).collect();
        // The runtime's bytes, with room for the executing index at the end.
        let mut data = construct_instructions_data(&borrowed);
        let end = data.len();
        data[end - 2..].copy_from_slice(&1u16.to_le_bytes());
        let sysvar = Instructions::new(&data);
        assert_eq!(sysvar.position().unwrap(), (1, 2));
        for (i, ix) in ixs.iter().enumerate() {
            let view = sysvar.get(i as u16).unwrap();
            assert_eq!(view.program_id(), ix.program_id);
            assert!(view.is_program(&ix.program_id));
            assert_eq!(view.data(), &ix.data[..]);
            assert_eq!(view.account_count(), ix.accounts.len());
            for (j, meta) in ix.accounts.iter().enumerate() {
                assert_eq!(view.account_key(j), Some(meta.pubkey));
                assert_eq!(view.account_is_signer(j), Some(meta.is_signer));
            }
            assert_eq!(view.account_key(ix.accounts.len()), None);
        }
        assert!(sysvar.get(2).is_none());
        // Cut short anywhere, the bytes yield no instruction rather than a wrong one.
        for len in 0..data.len() - 2 {
            let cut = Instructions::new(&data[..len]);
            if let Some(view) = cut.get(1) {
                panic!(
                    "a view of {} data bytes from {len} bytes",
                    view.data().len()
                );
            }
        }
    }

    fn borrowed(ix: &Instruction) -> BorrowedInstruction<'_> {
        BorrowedInstruction {
            program_id: &ix.program_id,
            accounts: ix
                .accounts
                .iter()
                .map(|m| BorrowedAccountMeta {
                    pubkey: &m.pubkey,
                    is_signer: m.is_signer,
                    is_writable: m.is_writable,
                })
                .collect(),
            data: &ix.data,
        }
    }
}
