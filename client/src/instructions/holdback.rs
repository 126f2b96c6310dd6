//! gate: a held share's instructions (docs/holdback.md): the escrow, the release, the payee's
//! refund, the arbiter's decision and arbiter sets.

use super::Builder;
use crate::holdback::HeldPayment;
use anchor_lang::prelude::Pubkey;
use anchor_lang::system_program;
use gate::{accounts, instruction};
use solana_sdk::instruction::{AccountMeta, Instruction};

impl Builder {
    /// Opens the escrow of `payee_asset` in `mint` (`Pdas::holdback_escrow`); `payer` pays
    /// its rent and signs.
    pub fn open_holdback_escrow(
        &self,
        payer: &Pubkey,
        payee_asset: &Pubkey,
        mint: &Pubkey,
        token_program: &Pubkey,
    ) -> Instruction {
        self.gate_ix(
            accounts::OpenHoldbackEscrow {
                payer: *payer,
                escrow: self.pda.holdback_escrow(payee_asset, mint),
                mint_account: *mint,
                token_program: *token_program,
                system_program: system_program::ID,
            },
            instruction::OpenHoldbackEscrow {
                payee_asset: *payee_asset,
                mint: *mint,
            },
        )
    }

    /// The accounts of a move of `p`'s held share to `to`.
    fn held_payout(&self, p: &HeldPayment, to: &Pubkey) -> accounts::HeldPayout {
        let disputed = p.disputed;
        accounts::HeldPayout {
            feedback_log: self.pda.feedback_log(&p.facilitator, &p.payment_id_hash),
            escrow: p.escrow,
            to: *to,
            mint: p.mint,
            holdback_authority: self.pda.holdback_authority(),
            token_program: p.token_program,
            agent_account: Some(self.pda.agent_account(&p.payee_asset)),
            payee_asset: Some(p.payee_asset),
            gate_authority: disputed.then(|| self.pda.gate_authority(&p.facilitator)),
            registry_program: disputed.then_some(self.ids.agent_registry),
        }
    }

    /// Releases `p`'s held share to `to`, a token account of the mint owned by its recipient
    /// (after the hold, or an undecided arbitration). Nobody signs but the fee payer.
    pub fn release_holdback(&self, p: &HeldPayment, to: &Pubkey) -> Instruction {
        self.gate_ix(
            accounts::ReleaseHoldback {
                payout: self.held_payout(p, to),
            },
            instruction::ReleaseHoldback {},
        )
    }

    /// The payee's refund of `p`'s held share to `to`, a token account of the mint owned by
    /// the payer's wallet; `payee_signer` (the payee's live owner or agent wallet) signs.
    pub fn refund_holdback(
        &self,
        payee_signer: &Pubkey,
        p: &HeldPayment,
        to: &Pubkey,
    ) -> Instruction {
        self.gate_ix(
            accounts::RefundHoldback {
                payee_signer: *payee_signer,
                payout: self.held_payout(p, to),
            },
            instruction::RefundHoldback {},
        )
    }

    /// The arbiter's decision on `p`'s disputed held share, paid to `to`: upheld, a token
    /// account of the mint owned by the payer's wallet; rejected, one owned by the share's
    /// recipient. A key arbiter signs itself; for an arbiter set, pass the signing members in
    /// `members` (they sign).
    pub fn arbitrate_holdback(
        &self,
        p: &HeldPayment,
        uphold: bool,
        to: &Pubkey,
        members: &[Pubkey],
    ) -> Instruction {
        let mut ix = self.gate_ix(
            accounts::ArbitrateHoldback {
                arbiter: p.arbiter,
                payout: self.held_payout(p, to),
            },
            instruction::ArbitrateHoldback { uphold },
        );
        if members.is_empty() {
            if let Some(m) = ix.accounts.first_mut() {
                m.is_signer = true;
            }
        }
        ix.accounts
            .extend(members.iter().map(|m| AccountMeta::new_readonly(*m, true)));
        ix
    }

    /// Creates the arbiter set of `members` (sorted here) deciding by `threshold`; `payer`
    /// pays its rent and signs.
    pub fn create_arbiter_set(
        &self,
        payer: &Pubkey,
        threshold: u8,
        members: &[Pubkey],
    ) -> Instruction {
        let mut members = members.to_vec();
        members.sort();
        self.gate_ix(
            accounts::CreateArbiterSet {
                payer: *payer,
                arbiter_set: self.pda.arbiter_set(threshold, &members),
                system_program: system_program::ID,
            },
            instruction::CreateArbiterSet { threshold, members },
        )
    }
}
