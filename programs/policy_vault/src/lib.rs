//! policy_vault: per-agent spending policies, velocity ledger, kill switch and policy
//! authority. The decision logic lives in the pure [`engine`] module; the instructions are
//! thin glue that read accounts, call it and store its results. Only the gate program can
//! run [`policy_vault::evaluate`].

#![deny(arithmetic_overflow)]
// Anchor's macros expand to cfgs and patterns this lint set does not know about.
#![allow(unexpected_cfgs)]

use anchor_lang::prelude::*;

pub mod engine;
pub mod errors;
pub mod events;
pub mod instructions;
pub mod state;

use instructions::*;
use state::{AcceptanceParams, ApprovalTerms};

declare_id!("P482jihHSam2nzEtQxAo7yZqVr1wMVHauywJq2YxLb3");

trust_gate_program_common::security_txt!("policy_vault");

#[program]
pub mod policy_vault {
    use super::*;

    // The evaluations come first, the settlement's first of all: Anchor dispatches by
    // comparing the instruction's discriminator with each instruction's in this order.
    /// Evaluates a payment (CPI from the gate's strict settlement only) and on Allow applies
    /// the spending and velocity deltas and, for a vault-funded policy, releases `amount`
    /// from the vault to the payer's token account. Return data: the 35-byte decision.
    pub fn evaluate_and_commit<'info>(
        ctx: Context<'info, EvaluateAndCommit<'info>>,
        args: EvaluateArgs,
    ) -> Result<()> {
        instructions::evaluate_and_commit(ctx, args)
    }

    /// Evaluates a payment (CPI from the gate only), read-only. Return data: the 35-byte
    /// decision.
    pub fn evaluate<'info>(ctx: Context<'info, Evaluate<'info>>, args: EvaluateArgs) -> Result<()> {
        instructions::evaluate(ctx, args)
    }

    /// Gives back part of an amount `evaluate_and_commit` counted (CPI from the gate only:
    /// what a payment channel it let open did not spend), to the counters that still count
    /// the windows it was counted in, never below zero.
    pub fn release_reservation(ctx: Context<ReleaseReservation>, args: ReleaseArgs) -> Result<()> {
        instructions::release_reservation(ctx, args)
    }

    /// Creates the agent's policy authority. The signer must be the live owner of the
    /// agent's MPL Core asset.
    pub fn init_authority(
        ctx: Context<InitAuthority>,
        asset: Pubkey,
        members: Vec<Pubkey>,
        threshold: u8,
    ) -> Result<()> {
        instructions::init_authority(ctx, asset, members, threshold)
    }

    /// The asset's live owner asks to take over the authority its previous owner created,
    /// with new members and threshold. It takes effect no sooner than the authority's
    /// take-over delay from now, and lapses that delay later; until then the old members stay
    /// in force.
    pub fn request_take_over(
        ctx: Context<RequestTakeOver>,
        asset: Pubkey,
        members: Vec<Pubkey>,
        threshold: u8,
    ) -> Result<()> {
        instructions::request_take_over(ctx, asset, members, threshold)
    }

    /// Completes a take-over whose delay has passed and which has not lapsed, while its new
    /// owner still owns the asset; anyone may send it. The guard goes back to the default
    /// delay without a recovery key, and the earlier members' payment approvals are void.
    pub fn complete_take_over(ctx: Context<CompleteTakeOver>, asset: Pubkey) -> Result<()> {
        instructions::complete_take_over(ctx, asset)
    }

    /// The members in force cancel a pending take-over; needs `threshold` members.
    pub fn cancel_take_over(ctx: Context<CancelTakeOver>, asset: Pubkey) -> Result<()> {
        instructions::cancel_take_over(ctx, asset)
    }

    /// The members in force accept a pending take-over that has not lapsed at once (a sale
    /// they agree to); needs `threshold` members. The hand-over is a completion's.
    pub fn accept_take_over(ctx: Context<AcceptTakeOver>, asset: Pubkey) -> Result<()> {
        instructions::accept_take_over(ctx, asset)
    }

    /// Closes a take-over request that lapsed (past its `effective_at` plus its delay) to its
    /// rent payer; anyone may send it.
    pub fn close_lapsed_take_over(ctx: Context<CloseLapsedTakeOver>, asset: Pubkey) -> Result<()> {
        instructions::close_lapsed_take_over(ctx, asset)
    }

    /// Sets the take-over delay and the recovery key the members may withdraw to while the
    /// asset is with another owner; needs `threshold` members of a current authority.
    pub fn set_authority_guard(
        ctx: Context<SetAuthorityGuard>,
        asset: Pubkey,
        take_over_delay_secs: u32,
        recovery: Pubkey,
    ) -> Result<()> {
        instructions::set_authority_guard(ctx, asset, take_over_delay_secs, recovery)
    }

    /// Replaces the authority's members and threshold; needs `threshold` current members.
    pub fn rotate_authority(
        ctx: Context<RotateAuthority>,
        asset: Pubkey,
        members: Vec<Pubkey>,
        threshold: u8,
    ) -> Result<()> {
        instructions::rotate_authority(ctx, asset, members, threshold)
    }

    /// Creates the agent's kill switch (not paused); any member.
    pub fn init_killswitch(ctx: Context<InitKillSwitch>, asset: Pubkey) -> Result<()> {
        instructions::init_killswitch(ctx, asset)
    }

    /// Pauses or resumes all of the agent's payments; needs `threshold` members of the
    /// authority in force (also while the asset is with another owner, until a take-over
    /// takes effect).
    pub fn set_killswitch(ctx: Context<SetKillSwitch>, asset: Pubkey, paused: bool) -> Result<()> {
        instructions::set_killswitch(ctx, asset, paused)
    }

    /// Creates an immutable spending policy, its velocity ledger and (if missing) the kill
    /// switch; needs `threshold` members. The mint account comes with a policy that names a
    /// mint, and the payee list account (created empty) with rules that name one (see
    /// `InitPolicyArgs`).
    pub fn init_policy<'info>(
        ctx: Context<'info, InitPolicy<'info>>,
        args: InitPolicyArgs,
    ) -> Result<()> {
        instructions::init_policy(ctx, args)
    }

    /// Approves one payment of exactly `terms` (payer and payee agents, mint, amount,
    /// policy) above the policy's approval threshold, until `expires_at` (at most a week);
    /// needs `threshold` members of the authority in force. The payment passes once against
    /// it and closes it to the member who sent it.
    pub fn approve_payment(
        ctx: Context<ApprovePayment>,
        terms: ApprovalTerms,
        expires_at: i64,
    ) -> Result<()> {
        instructions::approve_payment(ctx, terms, expires_at)
    }

    /// Closes an unused approval to its rent payer: the member who sent it at any time,
    /// anyone once it has expired.
    pub fn close_approval(ctx: Context<CloseApproval>) -> Result<()> {
        instructions::close_approval(ctx)
    }

    /// Adds and removes payees of a policy's list account (at most 256 entries); needs
    /// `threshold` members. The list's meaning (allow or deny) is the policy's.
    pub fn edit_payee_list(ctx: Context<EditPayeeList>, args: EditPayeeListArgs) -> Result<()> {
        instructions::edit_payee_list(ctx, args)
    }

    /// Retires a policy for good (both gates then refuse it with `PolicyRetired`); needs
    /// `threshold` members.
    pub fn retire_policy(ctx: Context<RetirePolicy>, asset: Pubkey, policy_id: u32) -> Result<()> {
        instructions::retire_policy(ctx, asset, policy_id)
    }

    /// Names the one key that may pay from the vault under a vault-funded policy; needs
    /// `threshold` members.
    pub fn set_vault_spender(
        ctx: Context<SetVaultSpender>,
        asset: Pubkey,
        policy_id: u32,
        spender: Pubkey,
    ) -> Result<()> {
        instructions::set_vault_spender(ctx, asset, policy_id, spender)
    }

    /// Creates or replaces the agent's acceptance policy (who may pay it); needs `threshold`.
    pub fn set_acceptance_policy(
        ctx: Context<SetAcceptancePolicy>,
        asset: Pubkey,
        params: AcceptanceParams,
    ) -> Result<()> {
        instructions::set_acceptance_policy(ctx, asset, params)
    }

    /// Opens the agent's vault for `mint`: a token account at `["vault", asset, mint]` whose
    /// authority is itself, that only a settlement under a vault-funded policy or a
    /// withdrawal can empty; needs `threshold` members. Anyone may deposit into it.
    pub fn open_vault(ctx: Context<OpenVault>, asset: Pubkey, mint: Pubkey) -> Result<()> {
        instructions::open_vault(ctx, asset, mint)
    }

    /// Moves `amount` out of the agent's vault for `mint` to any token account of the mint;
    /// needs `threshold` members. While the asset is with another owner (before a take-over
    /// takes effect), only to a token account of the recovery key.
    pub fn withdraw<'info>(
        ctx: Context<'info, Withdraw<'info>>,
        asset: Pubkey,
        mint: Pubkey,
        amount: u64,
    ) -> Result<()> {
        instructions::withdraw(ctx, asset, mint, amount)
    }
}
