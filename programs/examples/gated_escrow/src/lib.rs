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
//! - The tokens go only to the payee's recipient as the gate sees it (the agent wallet its
//!   live owner set, else its live owner: `AgentView::recipient`), checked when they move.
//! - The depositor gets the tokens back with `refund` once `refund_after` has passed, if the
//!   escrow was not released.
//!
//! Limits a real escrow must weigh (this example leaves them as they are):
//! - **A read-only Allow reserves nothing.** Each release asks for a decision on its own, and
//!   the payer's counters do not move, so N escrows of one payer can each pass under a cap
//!   that admits only one of them. Caps and velocity bind only settlements.
//! - **Anyone may open an escrow citing any payer agent and policy**: the depositor's tokens
//!   are at stake, not the payer's, and the payer's policy only answers whether the payer
//!   would be allowed to pay; nothing ties the depositor to the payer agent.
//!
//! Not deployed by trust-gate's migrations; its id is a placeholder for your own.

#![allow(unexpected_cfgs)]

use anchor_lang::prelude::*;
use anchor_spl::token_interface::{self, Mint, TokenAccount, TokenInterface, TransferChecked};
use gate::cpi::accounts::{EvaluationAccounts, GatePayment};
use gate::program::Gate;
use gate::settlement::PaymentArgs;
use gate::Decision;
use trust_gate_program_common::external::{ids, seeds as ext_seeds};
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
    /// `payee_asset` under the payer's policy `policy_id`, payable to `payee_token` (which
    /// must belong to the payee's recipient when released); refundable to the depositor
    /// from `refund_after` (unix time) unless released by then.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        ctx: Context<Open>,
        escrow_id: u64,
        payer_asset: Pubkey,
        payee_asset: Pubkey,
        policy_id: u32,
        amount: u64,
        refund_after: i64,
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
            depositor_token: a.depositor_token.key(),
            refund_after,
            released: false,
            refunded: false,
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
        require!(!e.refunded, EscrowError::AlreadyRefunded);
        // The payee's recipient now (the agent may have been sold since the escrow opened).
        require!(
            ctx.accounts.payee_token.owner == payee_recipient(&ctx.accounts.payee, &e.payee_asset)?,
            EscrowError::PayeeTokenNotRecipient
        );
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
                        payee_list: g.payee_list.to_account_info(),
                        policy_vault_program: g.policy_vault_program.to_account_info(),
                    },
                },
            )
            .with_remaining_accounts(vec![g.gate_program.to_account_info()]),
            PaymentArgs {
                payer_asset: e.payer_asset,
                payee_asset: e.payee_asset,
                amount: e.amount,
                mint: e.mint,
                policy_id: e.policy_id,
            },
        )?;
        // The decision is the gate's return data (read through the native-execution shim).
        let (program, wire) = runtime::get_return_data().ok_or(EscrowError::NoDecision)?;
        require_keys_eq!(program, gate::ID, EscrowError::NoDecision);
        let decision = Decision::from_wire(&wire).ok_or(EscrowError::NoDecision)?;

        if decision == Decision::Allow {
            let a = &ctx.accounts;
            pay_out(
                &a.escrow,
                &a.vault,
                &a.mint,
                &a.payee_token,
                &a.token_program,
            )?;
            ctx.accounts.escrow.released = true;
        }
        let escrow = &mut ctx.accounts.escrow;
        escrow.last_decision = decision.to_wire();
        runtime::set_return_data(&escrow.last_decision);
        Ok(())
    }

    /// Returns the escrowed tokens to the depositor's account once `refund_after` has passed,
    /// unless the escrow was released. Anyone may send it; the tokens go only back.
    pub fn refund(ctx: Context<Refund>) -> Result<()> {
        let e = &ctx.accounts.escrow;
        require!(!e.released, EscrowError::AlreadyReleased);
        require!(!e.refunded, EscrowError::AlreadyRefunded);
        require!(
            Clock::get()?.unix_timestamp >= e.refund_after,
            EscrowError::RefundTooEarly
        );
        let a = &ctx.accounts;
        pay_out(
            &a.escrow,
            &a.vault,
            &a.mint,
            &a.depositor_token,
            &a.token_program,
        )?;
        ctx.accounts.escrow.refunded = true;
        Ok(())
    }
}

/// Moves the whole escrowed amount from the escrow's vault to `to`, signed by the escrow PDA.
fn pay_out<'info>(
    escrow: &Account<'info, Escrow>,
    vault: &InterfaceAccount<'info, TokenAccount>,
    mint: &InterfaceAccount<'info, Mint>,
    to: &InterfaceAccount<'info, TokenAccount>,
    token_program: &Interface<'info, TokenInterface>,
) -> Result<()> {
    let id = escrow.escrow_id.to_le_bytes();
    let seeds: &[&[u8]] = &[ESCROW, escrow.depositor.as_ref(), &id, &[escrow.bump]];
    token_interface::transfer_checked(
        CpiContext::new_with_signer(
            token_program.key(),
            TransferChecked {
                from: vault.to_account_info(),
                mint: mint.to_account_info(),
                to: to.to_account_info(),
                authority: escrow.to_account_info(),
            },
            &[seeds],
        ),
        escrow.amount,
        mint.decimals,
    )
}

/// The payee's recipient as the gate pays it: the registry's AgentAccount of `payee_asset`
/// (its agent wallet) and the live owner of its MPL Core asset.
fn payee_recipient(p: &PayeeAccounts, payee_asset: &Pubkey) -> Result<Pubkey> {
    use trust_gate_program_common::external::live_agent;
    require_keys_eq!(p.asset.key(), *payee_asset, EscrowError::PayeeInvalid);
    let agent = live_agent::read(
        &p.agent.try_borrow_data()?,
        p.asset.key,
        p.asset.owner,
        &p.asset.try_borrow_data()?,
    )
    .map_err(|_| EscrowError::PayeeInvalid)?;
    Ok(agent.recipient())
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
    /// Where the tokens go on Allow (fixed at opening; must belong to the payee's recipient
    /// when they move).
    pub payee_token: Pubkey,
    /// Where a refund goes (the account the deposit came from).
    pub depositor_token: Pubkey,
    /// Unix time from which the depositor may take the tokens back (unless released).
    pub refund_after: i64,
    pub released: bool,
    pub refunded: bool,
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
    /// CHECK: the payer policy's payee list when its policy names one, else the policy.
    pub payee_list: UncheckedAccount<'info>,
    /// CHECK: policy_vault (the gate checks its id).
    pub policy_vault_program: UncheckedAccount<'info>,
    pub gate_program: Program<'info, Gate>,
}

/// The payee agent as the registry and MPL Core hold it.
#[derive(Accounts)]
pub struct PayeeAccounts<'info> {
    /// CHECK: the registry's AgentAccount of the payee (PDA and owner enforced).
    #[account(
        seeds = [ext_seeds::AGENT, asset.key().as_ref()],
        bump,
        seeds::program = ids::AGENT_REGISTRY,
        owner = ids::AGENT_REGISTRY @ EscrowError::PayeeInvalid,
    )]
    pub agent: UncheckedAccount<'info>,
    /// CHECK: the payee's MPL Core asset (address and owner checked in `payee_recipient`).
    pub asset: UncheckedAccount<'info>,
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
    pub payee: PayeeAccounts<'info>,
}

#[derive(Accounts)]
pub struct Refund<'info> {
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
    #[account(mut, address = escrow.depositor_token)]
    pub depositor_token: InterfaceAccount<'info, TokenAccount>,
    pub token_program: Interface<'info, TokenInterface>,
}

#[error_code]
pub enum EscrowError {
    #[msg("amount must be greater than 0")]
    AmountZero,
    #[msg("the escrow was released already")]
    AlreadyReleased,
    #[msg("the gate returned no decision")]
    NoDecision,
    #[msg("the escrow was refunded already")]
    AlreadyRefunded,
    #[msg("payee_token does not belong to the payee's recipient (its agent wallet, else its live owner)")]
    PayeeTokenNotRecipient,
    #[msg("the payee's AgentAccount or MPL Core asset is not the escrow's payee's")]
    PayeeInvalid,
    #[msg("the refund deadline has not passed")]
    RefundTooEarly,
}
