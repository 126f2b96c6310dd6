//! The accounts and CPIs shared by gate_payment (read-only) and gate_payment_strict
//! (committing).

use crate::errors::GateError;
use crate::events::GateDecision;
use crate::settlement::PaymentArgs;
use crate::state::seeds;
use anchor_lang::prelude::*;
use policy_vault::engine::Decision;
use policy_vault::instructions::EvaluateArgs;
use policy_vault::program::PolicyVault;
use policy_vault::state::seeds::{
    GATE_EVALUATE_SIGNER_ADDRESS as EVALUATE_SIGNER_ADDRESS,
    GATE_EVALUATE_SIGNER_BUMP as EVALUATE_SIGNER_BUMP,
};
use trust_gate_program_common::runtime;

/// The seeds the gate signs policy_vault's evaluation with (the bump is a compile-time
/// constant, so the whole signer is).
const EVALUATE_SIGNER_SEEDS: &[&[&[u8]]] = &[&[seeds::EVALUATE_SIGNER, &[EVALUATE_SIGNER_BUMP]]];

/// What policy_vault::evaluate needs, all read-only: a decision takes no write lock, so
/// nobody can contend for a payer's policy by flooding decisions, and any program can ask for
/// one by CPI. policy_vault constrains every account (seeds of the payer's policy, ledger and
/// kill switch; the engine's stats PDAs; the payee's acceptance PDA; owner checks), so they
/// pass through unchecked here.
#[derive(Accounts)]
pub struct EvaluationAccounts<'info> {
    /// CHECK: the gate's data-less `["evaluate_signer"]` PDA; signs the CPI.
    #[account(address = EVALUATE_SIGNER_ADDRESS)]
    pub evaluate_signer: UncheckedAccount<'info>,
    /// CHECK: the payer's PolicyAccount (checked by policy_vault).
    pub policy: UncheckedAccount<'info>,
    /// CHECK: the payer's VelocityLedger (checked by policy_vault).
    pub velocity_ledger: UncheckedAccount<'info>,
    /// CHECK: the payer's KillSwitchState (checked by policy_vault).
    pub killswitch: UncheckedAccount<'info>,
    /// CHECK: the payer's AtomStats PDA (checked by policy_vault).
    pub payer_stats: UncheckedAccount<'info>,
    /// CHECK: the payee's AtomStats PDA (checked by policy_vault).
    pub payee_stats: UncheckedAccount<'info>,
    /// CHECK: the payee's AcceptancePolicy PDA, existing or not (checked by policy_vault).
    pub payee_acceptance: UncheckedAccount<'info>,
    /// CHECK: an attestation about the payer (checked by policy_vault).
    pub payer_attestation: Option<UncheckedAccount<'info>>,
    /// CHECK: an attestation about the payee (checked by policy_vault).
    pub payee_attestation: Option<UncheckedAccount<'info>>,
    pub policy_vault_program: Program<'info, PolicyVault>,
}

/// [`EvaluationAccounts`] with the policy and the velocity ledger writable: the strict gate
/// commits the counters on Allow.
#[derive(Accounts)]
pub struct CommitEvaluationAccounts<'info> {
    /// CHECK: as in [`EvaluationAccounts`].
    #[account(address = EVALUATE_SIGNER_ADDRESS)]
    pub evaluate_signer: UncheckedAccount<'info>,
    /// CHECK: the payer's PolicyAccount (checked by policy_vault); its counters change.
    #[account(mut)]
    pub policy: UncheckedAccount<'info>,
    /// CHECK: the payer's VelocityLedger (checked by policy_vault); it changes.
    #[account(mut)]
    pub velocity_ledger: UncheckedAccount<'info>,
    /// CHECK: as in [`EvaluationAccounts`].
    pub killswitch: UncheckedAccount<'info>,
    /// CHECK: as in [`EvaluationAccounts`].
    pub payer_stats: UncheckedAccount<'info>,
    /// CHECK: as in [`EvaluationAccounts`].
    pub payee_stats: UncheckedAccount<'info>,
    /// CHECK: as in [`EvaluationAccounts`].
    pub payee_acceptance: UncheckedAccount<'info>,
    /// CHECK: as in [`EvaluationAccounts`].
    pub payer_attestation: Option<UncheckedAccount<'info>>,
    /// CHECK: as in [`EvaluationAccounts`].
    pub payee_attestation: Option<UncheckedAccount<'info>>,
    pub policy_vault_program: Program<'info, PolicyVault>,
}

/// policy_vault's CPI accounts (`$ty`) from either accounts struct (`$a`): same fields.
macro_rules! vault_accounts {
    ($($ty:ident)::+, $a:expr) => {
        $($ty)::+ {
            gate_signer: $a.evaluate_signer.to_account_info(),
            policy: $a.policy.to_account_info(),
            velocity: $a.velocity_ledger.to_account_info(),
            killswitch: $a.killswitch.to_account_info(),
            payer_stats: $a.payer_stats.to_account_info(),
            payee_stats: $a.payee_stats.to_account_info(),
            payee_acceptance: $a.payee_acceptance.to_account_info(),
            payer_attestation: $a.payer_attestation.as_ref().map(|a| a.to_account_info()),
            payee_attestation: $a.payee_attestation.as_ref().map(|a| a.to_account_info()),
        }
    };
}

/// The accounts of a vault's release, passed on to policy_vault::evaluate_and_commit.
pub struct VaultRelease<'info> {
    pub vault: AccountInfo<'info>,
    pub payer_token: AccountInfo<'info>,
    pub mint: AccountInfo<'info>,
    pub token_program: AccountInfo<'info>,
}

fn evaluate_args(args: &PaymentArgs) -> EvaluateArgs {
    EvaluateArgs {
        payer_asset: args.payer_asset,
        payee_asset: args.payee_asset,
        amount: args.amount,
        mint: args.mint,
        policy_id: args.policy_id,
    }
}

impl<'info> EvaluationAccounts<'info> {
    /// Runs policy_vault::evaluate (read-only) and returns its decision; sets it as this
    /// instruction's return data and emits a [`GateDecision`] event.
    pub fn evaluate(&self, args: &PaymentArgs) -> Result<Decision> {
        policy_vault::cpi::evaluate(
            // The program's own account travels along: absent optional accounts are encoded
            // as the callee's program id, and every meta of a CPI needs its AccountInfo.
            CpiContext::new_with_signer(
                policy_vault::ID,
                vault_accounts!(policy_vault::cpi::accounts::Evaluate, self),
                EVALUATE_SIGNER_SEEDS,
            )
            .with_remaining_accounts(vec![self.policy_vault_program.to_account_info()]),
            evaluate_args(args),
        )?;
        report(args, false)
    }
}

impl<'info> CommitEvaluationAccounts<'info> {
    /// Runs policy_vault::evaluate_and_commit, which stores the counters on Allow (and
    /// makes the vault's `release`, if any, with `extra`, a transfer hook's accounts, passed
    /// on to its transfer); reports the decision as [`EvaluationAccounts::evaluate`] does.
    pub fn evaluate_and_commit(
        &self,
        args: &PaymentArgs,
        release: Option<VaultRelease<'info>>,
        extra: &[AccountInfo<'info>],
    ) -> Result<Decision> {
        // policy_vault's own account travels first (absent attestations are encoded as its
        // id); a release's accounts follow, in the order policy_vault reads them.
        let mut remaining = vec![self.policy_vault_program.to_account_info()];
        if let Some(r) = release {
            remaining.extend([r.vault, r.payer_token, r.mint, r.token_program]);
            remaining.extend(extra.iter().cloned());
        }
        policy_vault::cpi::evaluate_and_commit(
            CpiContext::new_with_signer(
                policy_vault::ID,
                vault_accounts!(policy_vault::cpi::accounts::EvaluateAndCommit, self),
                EVALUATE_SIGNER_SEEDS,
            )
            .with_remaining_accounts(remaining),
            evaluate_args(args),
        )?;
        report(args, true)
    }
}

/// Reads policy_vault's decision from the CPI's return data, emits [`GateDecision`] and sets
/// the decision as this instruction's return data.
fn report(args: &PaymentArgs, strict: bool) -> Result<Decision> {
    let (program, data) = runtime::get_return_data().ok_or(GateError::DecisionMissing)?;
    require_keys_eq!(program, policy_vault::ID, GateError::DecisionMissing);
    let decision = Decision::from_wire(&data).ok_or(GateError::DecisionMissing)?;

    let wire = decision.to_wire();
    runtime::emit(&GateDecision {
        payer_asset: args.payer_asset,
        payee_asset: args.payee_asset,
        amount: args.amount,
        mint: args.mint,
        policy_id: args.policy_id,
        kind: wire[0],
        reason_code: wire[1],
        subject: wire[2],
        capability: wire[3..].try_into().unwrap_or_default(),
        strict,
    });
    runtime::set_return_data(&wire);
    Ok(decision)
}
