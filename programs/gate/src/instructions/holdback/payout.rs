//! Paying a held share out of the escrow: the accounts every move takes, and the transfer.

use super::response::*;
use crate::errors::GateError;
use crate::events::HoldbackPaidOut;
use crate::holdback::{authority, HeldShare, HoldState};
use crate::instructions::helpers::parties::token_account_of;
use crate::state::FeedbackLog;
use anchor_lang::prelude::*;
use trust_gate_program_common::{cpi, runtime, token_account, token_mint};

/// The accounts of a move of a held share.
#[derive(Accounts)]
pub struct HeldPayout<'info> {
    /// The held payment's FeedbackLog: the share, its state and where it may go.
    #[account(mut)]
    pub feedback_log: Account<'info, FeedbackLog>,
    /// The escrow the share went to (the log's).
    /// CHECK: compared with the log.
    #[account(mut)]
    pub escrow: UncheckedAccount<'info>,
    /// Where the share goes: a token account of the mint owned by the payee's recipient at
    /// settlement when it goes to the payee, by the payer's wallet when it goes back.
    /// CHECK: compared with the log.
    #[account(mut)]
    pub to: UncheckedAccount<'info>,
    /// CHECK: the payment's mint (compared with the log).
    pub mint: UncheckedAccount<'info>,
    /// CHECK: the gate's holdback authority, which signs the transfer (address enforced).
    #[account(address = authority::ADDRESS)]
    pub holdback_authority: UncheckedAccount<'info>,
    /// CHECK: the escrow's token program (compared with the escrow's owner).
    pub token_program: UncheckedAccount<'info>,
    /// The payee's AgentAccount and asset: needed by the payee's refund (who may sign) and
    /// when the move ends a dispute, whose outcome is attached to the dispute's feedback
    /// (`append_response`) with the facilitator's GateAuthority (the feedback's client) and
    /// the registry program.
    /// CHECK: owner, layout and asset checked when used (`ResponseAccounts::payee`).
    #[account(mut)]
    pub agent_account: Option<UncheckedAccount<'info>>,
    /// CHECK: the log's payee (compared when used).
    pub payee_asset: Option<UncheckedAccount<'info>>,
    /// CHECK: read as the log facilitator's GateAuthority when used.
    pub gate_authority: Option<UncheckedAccount<'info>>,
    /// CHECK: the agent registry program (address compared when used).
    pub registry_program: Option<UncheckedAccount<'info>>,
}

impl<'info> HeldPayout<'info> {
    /// The payee's registry accounts, as given.
    pub fn response(&self) -> ResponseAccounts<'_, 'info> {
        ResponseAccounts {
            agent_account: self.agent_account.as_deref(),
            payee_asset: self.payee_asset.as_deref(),
            gate_authority: self.gate_authority.as_deref(),
            registry_program: self.registry_program.as_deref(),
        }
    }

    /// The log's held share (`HoldbackNotHeld` for a payment that held nothing).
    pub fn share(&self) -> Result<HeldShare> {
        FeedbackLog::held_share_in(&self.feedback_log.to_account_info().try_borrow_data()?)
            .ok_or_else(|| error!(GateError::HoldbackNotHeld))
    }

    /// Pays the share to `to` as `next` says (the payer for a refund or an upheld dispute,
    /// the payee's recipient otherwise), records `next`, and answers the dispute's
    /// feedback when the move ends a dispute.
    pub fn pay_out(&self, next: HoldState) -> Result<()> {
        let mut share = self.share()?;
        let log = &self.feedback_log;
        require!(
            self.escrow.key() == share.escrow
                && self.mint.key() == log.mint
                && self.token_program.key() == *self.escrow.owner
            // The holdback authority signs this call: never for another program.
            && token_mint::is_token_program(self.token_program.key),
            GateError::HoldbackEscrowMismatch
        );
        let owner = if next.to_payer() {
            &log.payer_wallet
        } else {
            &share.recipient
        };
        let recipient_ok = token_account_of(&self.to, &log.mint, owner)?;
        require!(recipient_ok, GateError::HoldbackRecipientMismatch);

        let ix = token_account::transfer_checked(
            self.token_program.key,
            self.escrow.key,
            self.mint.key,
            self.to.key,
            &authority::ADDRESS,
            share.held,
            log.value_decimals,
            [],
        );
        let infos = [
            self.escrow.as_ref(),
            self.mint.as_ref(),
            self.to.as_ref(),
            self.holdback_authority.as_ref(),
            self.token_program.as_ref(),
        ];
        cpi::invoke_signed(&ix, &infos, &[&[authority::SEED, &[authority::BUMP]]])?;
        if share.ends_dispute() {
            self.response()
                .answer(log, &share, next, &self.holdback_authority)?;
        }
        runtime::emit(&HoldbackPaidOut {
            facilitator: log.facilitator,
            payment_id_hash: log.payment_id_hash,
            payee_asset: log.payee_asset,
            to: self.to.key(),
            amount: share.held,
            outcome: next,
        });
        share.state = next;
        FeedbackLog::write_held_share(
            &mut self.feedback_log.to_account_info().try_borrow_mut_data()?,
            &share,
        )
    }
}
