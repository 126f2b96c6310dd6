//! policy_vault's `release_reservation`, by which a channel's close gives back what the
//! channel did not spend of the deposit its gated open counted.

use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::Discriminator;
use policy_vault::instructions::ReleaseArgs;
use policy_vault::program::PolicyVault;
use trust_gate_program_common::cpi;

use super::evaluation::EVALUATE_SIGNER_SEEDS;

/// The payer's policy and ledger, written by the release; policy_vault checks that they are
/// the payer's (their stored asset and policy id), so they pass through unchecked here.
#[derive(Accounts)]
pub struct ReleaseAccounts<'info> {
    /// The gate's data-less `["evaluate_signer"]` PDA: it signs the call, and
    /// policy_vault checks its address.
    /// CHECK: verified as described above.
    pub evaluate_signer: UncheckedAccount<'info>,
    /// CHECK: the payer's PolicyAccount (checked by policy_vault); its counters change.
    #[account(mut)]
    pub policy: UncheckedAccount<'info>,
    /// CHECK: the payer's VelocityLedger (checked by policy_vault); it changes.
    #[account(mut)]
    pub velocity_ledger: UncheckedAccount<'info>,
    pub policy_vault_program: Program<'info, PolicyVault>,
}

impl ReleaseAccounts<'_> {
    /// Calls policy_vault's `release_reservation` with `args`, signed as an evaluation is.
    pub fn release(&self, args: &ReleaseArgs) -> Result<()> {
        let discriminator = policy_vault::instruction::ReleaseReservation::DISCRIMINATOR;
        let mut data = Vec::with_capacity(discriminator.len() + 108);
        data.extend_from_slice(discriminator);
        args.serialize(&mut data)?;
        let ix = Instruction {
            program_id: policy_vault::ID,
            accounts: vec![
                AccountMeta::new_readonly(self.evaluate_signer.key(), true),
                AccountMeta::new(self.policy.key(), false),
                AccountMeta::new(self.velocity_ledger.key(), false),
            ],
            data,
        };
        let infos: [&AccountInfo; 4] = [
            &self.evaluate_signer,
            &self.policy,
            &self.velocity_ledger,
            &self.policy_vault_program,
        ];
        // Nothing here holds an account's data borrowed across the call.
        cpi::invoke_signed(&ix, &infos, EVALUATE_SIGNER_SEEDS)?;
        Ok(())
    }
}
