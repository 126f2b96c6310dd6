//! EXAMPLE: calling the gate from your program.
//!
//! An escrow that releases its tokens to the payee only when trust-gate allows the payment.
//! `release` asks `gate::gate_payment` for a decision by CPI, reads it from the return data,
//! and acts on it: Allow moves the escrowed amount; Deny or RequireValidation moves nothing,
//! records the decision and returns it as this program's own return data.
//!
//! What this shows, and what it does not:
//! - `gate::gate_payment` is read-only (every account read-only), so any program can CPI it
//!   without write access to the payer's policy; it never fails on a Deny.
//! - A decision commits nothing: the payer's spending and velocity counters advance only in
//!   an atomic settlement, whose `gate::gate_payment_strict` must be a top-level instruction
//!   (it reads the transaction around it; a program calling it could commit the counters more
//!   than once for one transfer, so the gate refuses to be called that way).
//!
//! Not deployed by trust-gate's migrations; its id is a placeholder for your own.

#![allow(unexpected_cfgs)]

use anchor_lang::prelude::*;
use anchor_spl::token_interface::{self, Mint, TokenAccount, TokenInterface, TransferChecked};
use gate::cpi::accounts::{EvaluationAccounts, GatePayment};
use gate::program::Gate;
use gate::Decision;
use trust_gate_program_common::runtime;

declare_id!("dkWr7HqQwg6AaFxgkAtEgGAin1An2x9PGxSKaJ3JuKL");

trust_gate_program_common::security_txt!("gated_escrow");

/// `["escrow", depositor, escrow_id u64 LE]` -> [`Escrow`]
pub const ESCROW: &[u8] = b"escrow";
/// `["vault", escrow]` -> the escrow's token account (its authority is the escrow PDA)
pub const VAULT: &[u8] = b"vault";

#[program]
pub mod gated_escrow {
    use super::*;

    /// Locks `amount` of the depositor's tokens for a payment from `payer_asset` to
    /// `payee_asset` under the payer's policy `policy_id`, payable to `payee_token`.
    pub fn open(
        ctx: Context<Open>,
        escrow_id: u64,
        payer_asset: Pubkey,
        payee_asset: Pubkey,
        policy_id: u32,
        amount: u64,
    ) -> Result<()> {
        require!(amount > 0, EscrowError::AmountZero);
        let a = &ctx.accounts;
        token_interface::transfer_checked(
            CpiContext::new(
                a.token_program.key(),
                TransferChecked {
                    from: a.depositor_token.to_account_info(),
                    mint: a.mint.to_account_info(),
                    to: a.vault.to_account_info(),
                    authority: a.depositor.to_account_info(),
                },
            ),
            amount,
            a.mint.decimals,
        )?;
        ctx.accounts.escrow.set_inner(Escrow {
            depositor: a.depositor.key(),
            escrow_id,
            payer_asset,
            payee_asset,
            policy_id,
            mint: a.mint.key(),
            amount,
            payee_token: a.payee_token.key(),
            released: false,
            last_decision: [0; 35],
            bump: ctx.bumps.escrow,
            vault_bump: ctx.bumps.vault,
        });
        Ok(())
    }

    /// Asks the gate; releases the escrow on Allow. Return data: the gate's 35-byte decision.
    pub fn release(ctx: Context<Release>) -> Result<()> {
        let e = &ctx.accounts.escrow;
        require!(!e.released, EscrowError::AlreadyReleased);
        let g = &ctx.accounts.gate;
        gate::cpi::gate_payment(
            // Absent attestations are encoded as the gate's id, so its account travels along.
            CpiContext::new(
                gate::ID,
                GatePayment {
                    evaluation: EvaluationAccounts {
                        evaluate_signer: g.evaluate_signer.to_account_info(),
                        policy: g.policy.to_account_info(),
                        velocity_ledger: g.velocity_ledger.to_account_info(),
                        killswitch: g.killswitch.to_account_info(),
                        payer_stats: g.payer_stats.to_account_info(),
                        payee_stats: g.payee_stats.to_account_info(),
                        payee_acceptance: g.payee_acceptance.to_account_info(),
                        payer_attestation: g
                            .payer_attestation
                            .as_ref()
                            .map(|a| a.to_account_info()),
                        payee_attestation: g
                            .payee_attestation
                            .as_ref()
                            .map(|a| a.to_account_info()),
                        policy_vault_program: g.policy_vault_program.to_account_info(),
                    },
                },
            )
            .with_remaining_accounts(vec![g.gate_program.to_account_info()]),
            e.payer_asset,
            e.payee_asset,
            e.amount,
            e.mint,
            e.policy_id,
        )?;
        // The decision is the gate's return data (read through the native-execution shim).
        let (program, wire) = runtime::get_return_data().ok_or(EscrowError::NoDecision)?;
        require_keys_eq!(program, gate::ID, EscrowError::NoDecision);
        let decision = Decision::from_wire(&wire).ok_or(EscrowError::NoDecision)?;

        if decision == Decision::Allow {
            let a = &ctx.accounts;
            let depositor = e.depositor;
            let id = e.escrow_id.to_le_bytes();
            let seeds: &[&[u8]] = &[ESCROW, depositor.as_ref(), &id, &[e.bump]];
            token_interface::transfer_checked(
                CpiContext::new_with_signer(
                    a.token_program.key(),
                    TransferChecked {
                        from: a.vault.to_account_info(),
                        mint: a.mint.to_account_info(),
                        to: a.payee_token.to_account_info(),
                        authority: a.escrow.to_account_info(),
                    },
                    &[seeds],
                ),
                e.amount,
                a.mint.decimals,
            )?;
            ctx.accounts.escrow.released = true;
        }
        let escrow = &mut ctx.accounts.escrow;
        escrow.last_decision = decision.to_wire();
        runtime::set_return_data(&escrow.last_decision);
        Ok(())
    }
}

/// One escrowed payment.
#[account]
#[derive(InitSpace)]
pub struct Escrow {
    pub depositor: Pubkey,
    pub escrow_id: u64,
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub policy_id: u32,
    pub mint: Pubkey,
    pub amount: u64,
    /// Where the tokens go on Allow (fixed at opening).
    pub payee_token: Pubkey,
    pub released: bool,
    /// The latest decision in the gate's wire form (byte 0 kind, byte 1 reason code, byte 2
    /// subject, then the capability hash).
    pub last_decision: [u8; 35],
    pub bump: u8,
    pub vault_bump: u8,
}

#[derive(Accounts)]
#[instruction(escrow_id: u64)]
pub struct Open<'info> {
    #[account(mut)]
    pub depositor: Signer<'info>,
    #[account(
        init,
        payer = depositor,
        space = 8 + Escrow::INIT_SPACE,
        seeds = [ESCROW, depositor.key().as_ref(), &escrow_id.to_le_bytes()],
        bump,
    )]
    pub escrow: Account<'info, Escrow>,
    #[account(
        init,
        payer = depositor,
        seeds = [VAULT, escrow.key().as_ref()],
        bump,
        token::mint = mint,
        token::authority = escrow,
        token::token_program = token_program,
    )]
    pub vault: InterfaceAccount<'info, TokenAccount>,
    pub mint: InterfaceAccount<'info, Mint>,
    #[account(mut, token::mint = mint, token::authority = depositor)]
    pub depositor_token: InterfaceAccount<'info, TokenAccount>,
    #[account(token::mint = mint)]
    pub payee_token: InterfaceAccount<'info, TokenAccount>,
    pub token_program: Interface<'info, TokenInterface>,
    pub system_program: Program<'info, System>,
}

/// The accounts `gate::gate_payment` reads, all read-only (the SDK's
/// `Builder::gate_payment` lists them for a payment).
#[derive(Accounts)]
pub struct GateAccounts<'info> {
    /// CHECK: the gate checks every account below.
    pub evaluate_signer: UncheckedAccount<'info>,
    /// CHECK: the payer's PolicyAccount.
    pub policy: UncheckedAccount<'info>,
    /// CHECK: the payer's VelocityLedger.
    pub velocity_ledger: UncheckedAccount<'info>,
    /// CHECK: the payer's KillSwitchState.
    pub killswitch: UncheckedAccount<'info>,
    /// CHECK: the payer's AtomStats PDA.
    pub payer_stats: UncheckedAccount<'info>,
    /// CHECK: the payee's AtomStats PDA.
    pub payee_stats: UncheckedAccount<'info>,
    /// CHECK: the payee's AcceptancePolicy PDA.
    pub payee_acceptance: UncheckedAccount<'info>,
    /// CHECK: an attestation about the payer.
    pub payer_attestation: Option<UncheckedAccount<'info>>,
    /// CHECK: an attestation about the payee.
    pub payee_attestation: Option<UncheckedAccount<'info>>,
    /// CHECK: policy_vault (the gate checks its id).
    pub policy_vault_program: UncheckedAccount<'info>,
    pub gate_program: Program<'info, Gate>,
}

#[derive(Accounts)]
pub struct Release<'info> {
    #[account(
        mut,
        seeds = [ESCROW, escrow.depositor.as_ref(), &escrow.escrow_id.to_le_bytes()],
        bump = escrow.bump,
    )]
    pub escrow: Account<'info, Escrow>,
    #[account(mut, seeds = [VAULT, escrow.key().as_ref()], bump = escrow.vault_bump)]
    pub vault: InterfaceAccount<'info, TokenAccount>,
    #[account(address = escrow.mint)]
    pub mint: InterfaceAccount<'info, Mint>,
    #[account(mut, address = escrow.payee_token)]
    pub payee_token: InterfaceAccount<'info, TokenAccount>,
    pub token_program: Interface<'info, TokenInterface>,
    pub gate: GateAccounts<'info>,
}

#[error_code]
pub enum EscrowError {
    #[msg("amount must be greater than 0")]
    AmountZero,
    #[msg("the escrow was released already")]
    AlreadyReleased,
    #[msg("the gate returned no decision")]
    NoDecision,
}
