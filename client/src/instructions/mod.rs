//! Instruction builders for every instruction of the three programs, and for the external
//! registry's instructions our tools send.
//!
//! Built from the programs' Anchor-generated client types (`accounts::*`, `instruction::*`),
//! so account order and argument encoding are the programs' own. A [`Builder`] only exists
//! for ids that are all configured (never the mainnet sentinel), so its methods cannot
//! produce an instruction for a program that is not there.

mod gate;
mod holdback;
mod policy_vault;
mod registry;
mod validation_registry;

pub use self::gate::{
    ApprovalUse, Attestations, FeedbackArgs, FeedbackDetails, RegistrationAccounts, Subscription,
    VaultRelease,
};
pub use self::registry::{wallet_set_message, MAX_WALLET_DEADLINE_SECS, WALLET_SET_PREFIX};
pub use self::validation_registry::{capability_hash, ed25519_instruction, ed25519_verify, Claim};

use crate::error::ClientError;
use crate::ids::{Program, ProgramIds};
use crate::pda::Pdas;
use anchor_lang::prelude::Pubkey;
use anchor_lang::{InstructionData, ToAccountMetas};
use solana_sdk::instruction::{AccountMeta, Instruction};

#[derive(Clone, Copy, Debug)]
pub struct Builder {
    pub ids: ProgramIds,
    pub pda: Pdas,
}

impl Builder {
    /// A builder for `ids`; fails with `ProgramNotConfigured` when one of our programs has
    /// the sentinel id.
    pub fn new(ids: ProgramIds) -> Result<Self, ClientError> {
        for p in Program::ALL {
            ids.require(p)?;
        }
        Ok(Builder {
            ids,
            pda: Pdas::new(ids),
        })
    }

    fn ix(
        &self,
        program_id: Pubkey,
        accounts: impl ToAccountMetas,
        data: impl InstructionData,
    ) -> Instruction {
        Instruction {
            program_id,
            accounts: accounts.to_account_metas(None),
            data: data.data(),
        }
    }

    /// An instruction of `program_id` whose absent optional accounts Anchor encoded as the
    /// program crate's compiled-in id (`compiled_id`): those become the configured id.
    fn ix_with_optionals(
        &self,
        program_id: Pubkey,
        compiled_id: Pubkey,
        accounts: impl ToAccountMetas,
        data: impl InstructionData,
    ) -> Instruction {
        let mut ix = self.ix(program_id, accounts, data);
        for meta in ix.accounts.iter_mut() {
            if meta.pubkey == compiled_id {
                meta.pubkey = program_id;
            }
        }
        ix
    }
}

/// Appends extra authority members as read-only signers (threshold instructions).
fn with_cosigners(mut ix: Instruction, cosigners: &[Pubkey]) -> Instruction {
    ix.accounts.extend(
        cosigners
            .iter()
            .map(|k| AccountMeta::new_readonly(*k, true)),
    );
    ix
}
