//! The evaluation's accounts (declared once, by policy_vault's `evaluation_accounts!`), the
//! call into policy_vault that decides and, when committing, counts a payment, and the
//! decision it returns: shared by gate_payment (read-only), the strict gate and the gated
//! channel open.

use crate::errors::GateError;
use crate::events::GateDecision;
use crate::settlement::PaymentArgs;
use crate::state::seeds;
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::Discriminator;
use policy_vault::engine::{Decision, DenyReason, Holdback};
use policy_vault::instructions::{EvaluateArgs, EvaluationRefs};
use policy_vault::program::PolicyVault;
use policy_vault::state::seeds::GATE_EVALUATE_SIGNER_BUMP as EVALUATE_SIGNER_BUMP;
use trust_gate_program_common::{cpi, probe, runtime};

/// The seeds the gate signs policy_vault's evaluation with (the bump is a compile-time
/// constant, so the whole signer is).
pub(crate) const EVALUATE_SIGNER_SEEDS: &[&[&[u8]]] =
    &[&[seeds::EVALUATE_SIGNER, &[EVALUATE_SIGNER_BUMP]]];

policy_vault::evaluation_accounts! {
    /// What policy_vault::evaluate needs, all read-only: a decision takes no write lock, so
    /// nobody can contend for a payer's policy by flooding decisions, and any program can ask
    /// for one by CPI. policy_vault checks every account of the evaluation (the gate passes
    /// them through: a check in both programs would cost its units twice).
    pub struct EvaluationAccounts<'info> [] {
        /// The gate's data-less `["evaluate_signer"]` PDA: it signs the call, and
        /// policy_vault checks its address.
        /// CHECK: verified as described above.
        pub evaluate_signer: UncheckedAccount<'info>,
    } {
        pub policy_vault_program: Program<'info, PolicyVault>,
    }
}

policy_vault::evaluation_accounts! {
    /// [`EvaluationAccounts`] with the policy and the velocity ledger writable: the strict gate
    /// and the gated channel open commit the counters on Allow.
    pub struct CommitEvaluationAccounts<'info> [mut] {
        /// The gate's `["evaluate_signer"]` PDA, as in [`EvaluationAccounts`].
        /// CHECK: verified as described above.
        pub evaluate_signer: UncheckedAccount<'info>,
    } {
        pub policy_vault_program: Program<'info, PolicyVault>,
    }
}

/// The accounts of policy_vault's evaluation, borrowed from either accounts struct.
macro_rules! vault_accounts {
    ($a:expr) => {
        VaultAccounts {
            signer: &$a.evaluate_signer,
            evaluation: $a.evaluation(),
            program: &$a.policy_vault_program,
        }
    };
}

struct VaultAccounts<'a, 'info> {
    signer: &'a AccountInfo<'info>,
    evaluation: EvaluationRefs<'a, 'info>,
    program: &'a AccountInfo<'info>,
}

impl<'info> VaultAccounts<'_, 'info> {
    /// Calls policy_vault's `evaluate`, or with `commit` its `evaluate_and_commit` (the policy
    /// and the ledger then writable), `extra` following as remaining accounts. Built by hand
    /// and invoked without `invoke_signed`'s scan of every meta against every account info
    /// (about 1 000 compute units with these thirteen) and with the infos by reference
    /// (`cpi::invoke_signed`): nothing here holds an account's data borrowed across the call.
    /// An absent attestation is encoded as policy_vault's id, as Anchor does, so
    /// policy_vault's program account travels among the account infos.
    fn call(&self, commit: bool, args: &PaymentArgs, extra: &[&AccountInfo<'info>]) -> Result<()> {
        let meta = |info: &AccountInfo, writable: bool| AccountMeta {
            pubkey: *info.key,
            is_signer: false,
            is_writable: writable,
        };
        let optional = |info: Option<&AccountInfo>| {
            AccountMeta::new_readonly(info.map_or(policy_vault::ID, |i| *i.key), false)
        };
        let e = &self.evaluation;
        let mut metas = Vec::with_capacity(10 + extra.len());
        metas.extend([
            AccountMeta::new_readonly(*self.signer.key, true),
            meta(e.policy, commit),
            meta(e.velocity_ledger, commit),
            meta(e.killswitch, false),
            meta(e.payer_stats, false),
            meta(e.payee_stats, false),
            meta(e.payee_acceptance, false),
            optional(e.payer_attestation),
            optional(e.payee_attestation),
            meta(e.payee_list, false),
        ]);
        metas.extend(extra.iter().map(|a| AccountMeta {
            pubkey: *a.key,
            is_signer: a.is_signer,
            is_writable: a.is_writable,
        }));
        let mut infos = Vec::with_capacity(11 + extra.len());
        infos.extend(
            [
                self.signer,
                e.policy,
                e.velocity_ledger,
                e.killswitch,
                e.payer_stats,
                e.payee_stats,
                e.payee_acceptance,
                e.payee_list,
                self.program,
            ]
            .into_iter()
            .chain(e.payer_attestation)
            .chain(e.payee_attestation),
        );
        infos.extend(extra);
        let discriminator = if commit {
            policy_vault::instruction::EvaluateAndCommit::DISCRIMINATOR
        } else {
            policy_vault::instruction::Evaluate::DISCRIMINATOR
        };
        let mut data = Vec::with_capacity(discriminator.len() + 108);
        data.extend_from_slice(discriminator);
        evaluate_args(args).serialize(&mut data)?;
        let ix = Instruction {
            program_id: policy_vault::ID,
            accounts: metas,
            data,
        };
        probe!("the call built");
        cpi::invoke_signed(&ix, &infos, EVALUATE_SIGNER_SEEDS)?;
        probe!("the call");
        Ok(())
    }
}

/// The accounts of a vault's release, passed on to policy_vault::evaluate_and_commit.
pub struct VaultRelease<'a, 'info> {
    pub vault: &'a AccountInfo<'info>,
    pub payer_token: &'a AccountInfo<'info>,
    pub mint: &'a AccountInfo<'info>,
    pub token_program: &'a AccountInfo<'info>,
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

/// A payment's approval among an instruction's remaining accounts, first: an account
/// policy_vault owns holding a PaymentApproval (policy_vault checks its terms), then, for a
/// commit, its rent payer. Returns the approval's accounts (none, one or two) and the rest.
pub fn approval_accounts<'a, 'info>(
    remaining: &'a [AccountInfo<'info>],
    commit: bool,
) -> (&'a [AccountInfo<'info>], &'a [AccountInfo<'info>]) {
    let is_approval = remaining
        .first()
        .is_some_and(policy_vault::state::PaymentApproval::is_in);
    let n = match (is_approval, commit) {
        (false, _) => 0,
        (true, false) => 1,
        (true, true) => 2.min(remaining.len()),
    };
    remaining.split_at(n)
}

impl<'info> EvaluationAccounts<'info> {
    /// Runs policy_vault::evaluate (read-only) and returns its decision; sets it as this
    /// instruction's return data and emits a [`GateDecision`] event. `approval`: the
    /// payment's approval, if the caller passed one (see [`approval_accounts`]).
    pub fn evaluate(
        &self,
        args: &PaymentArgs,
        approval: &[AccountInfo<'info>],
    ) -> Result<(Decision, Option<Holdback>)> {
        let approval: Vec<&AccountInfo<'info>> = approval.iter().collect();
        vault_accounts!(self).call(false, args, &approval)?;
        report(args, false)
    }
}

impl<'info> CommitEvaluationAccounts<'info> {
    /// Runs policy_vault::evaluate_and_commit, which stores the counters on Allow (and
    /// closes the payment's `approval` [approval, its rent payer] when the payment needed it,
    /// and makes the vault's `release`, if any, with `extra`, a transfer hook's accounts,
    /// passed on to its transfer); reports the decision as [`EvaluationAccounts::evaluate`]
    /// does.
    pub fn evaluate_and_commit(
        &self,
        args: &PaymentArgs,
        approval: &[AccountInfo<'info>],
        release: Option<VaultRelease<'_, 'info>>,
        extra: &[AccountInfo<'info>],
    ) -> Result<(Decision, Option<Holdback>)> {
        // The approval, then a release's accounts, in the order policy_vault reads them.
        let mut remaining: Vec<&AccountInfo<'info>> = approval.iter().collect();
        if let Some(r) = release {
            remaining.extend([r.vault, r.payer_token, r.mint, r.token_program]);
            remaining.extend(extra);
        }
        vault_accounts!(self).call(true, args, &remaining)?;
        report(args, true)
    }
}

/// Reads policy_vault's decision from the CPI's return data (an Allow's holdback in it, see
/// `Holdback::from_wire`); gate_payment (not `strict`) sets it as its own return data and
/// emits [`GateDecision`].
fn report(args: &PaymentArgs, strict: bool) -> Result<(Decision, Option<Holdback>)> {
    let (program, data) = runtime::get_return_data().ok_or(GateError::DecisionMissing)?;
    require_keys_eq!(program, policy_vault::ID, GateError::DecisionMissing);
    let decision = Decision::from_wire(&data).ok_or(GateError::DecisionMissing)?;
    let holdback = Holdback::from_wire(&data);
    // A settlement neither returns nor logs the decision: it is Allow or the transaction
    // fails, and emit_feedback records the payment (about 530 compute units saved per
    // settlement).
    if strict {
        return Ok((decision, holdback));
    }
    runtime::set_return_data(&data);
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
        strict: false,
    });
    Ok((decision, holdback))
}

/// Passes an Allow that holds nothing back; fails otherwise as the strict gate does (the deny
/// reason's error, `ValidationRequired`, `ApprovalRequired`), and with `held_error` when the
/// payer's policy would hold a share back: a channel's deposit and a pull pay their payee in
/// full, so such a payment is refused rather than paid around the holdback.
pub fn require_allowed_in_full(
    decision: Decision,
    holdback: Option<Holdback>,
    held_error: GateError,
) -> Result<()> {
    match decision {
        Decision::Allow if holdback.is_some_and(|h| h.held != 0) => Err(held_error.into()),
        Decision::Allow => Ok(()),
        Decision::Deny(reason) => Err(deny_error(reason)),
        Decision::RequireValidation { .. } => err!(GateError::ValidationRequired),
        Decision::RequireApproval => err!(GateError::ApprovalRequired),
    }
}

/// The error for a deny reason: `6000 + code` for codes 1..=15 (the gate's own errors of
/// those numbers), `6100 + code` for the limit rules' and the holdback's reasons (16 and up), whose numbers
/// after 6015 the gate's other errors had taken (see `DenyReason::strict_error_code`).
pub fn deny_error(reason: DenyReason) -> Error {
    let low = match reason {
        DenyReason::KillSwitchEngaged => GateError::KillSwitchEngaged,
        DenyReason::SpendingPerTxExceeded => GateError::SpendingPerTxExceeded,
        DenyReason::SpendingDailyExceeded => GateError::SpendingDailyExceeded,
        DenyReason::SpendingWeeklyExceeded => GateError::SpendingWeeklyExceeded,
        DenyReason::VelocityWindowExceeded => GateError::VelocityWindowExceeded,
        DenyReason::CounterpartyTierBelowMin => GateError::CounterpartyTierBelowMin,
        DenyReason::CounterpartyRiskAboveMax => GateError::CounterpartyRiskAboveMax,
        DenyReason::CounterpartyConfidenceBelow => GateError::CounterpartyConfidenceBelow,
        DenyReason::AtomStatsWrongOwner => GateError::AtomStatsWrongOwner,
        DenyReason::AtomStatsSchemaMismatch => GateError::AtomStatsSchemaMismatch,
        DenyReason::AttestationMissing => GateError::AttestationMissing,
        DenyReason::AttestationExpired => GateError::AttestationExpired,
        DenyReason::AttestationRevoked => GateError::AttestationRevoked,
        DenyReason::AttestationAttestorRejected => GateError::AttestationAttestorRejected,
        DenyReason::UnratedTreatmentDeny => GateError::UnratedTreatmentDeny,
        DenyReason::PolicyNotYetValid
        | DenyReason::PolicyExpired
        | DenyReason::PayeeNotAllowed
        | DenyReason::PayeeDenied
        | DenyReason::SpendingMonthlyExceeded
        | DenyReason::SpendingLifetimeExceeded
        | DenyReason::PayeeDailyExceeded
        | DenyReason::PayeeSlotsFull
        | DenyReason::HoldbackNotAccepted
        | DenyReason::HoldbackShareNotAccepted
        | DenyReason::HoldbackHoldNotAccepted
        | DenyReason::HoldbackArbiterNotAccepted => {
            // An Anchor error like the gate's own (Anchor logs its name and number), with a
            // number outside the gate's enum.
            return Error::from(anchor_lang::error::AnchorError {
                error_name: reason.name().to_string(),
                error_code_number: reason.strict_error_code(),
                error_msg: "payment denied by the payer's policy".to_string(),
                error_origin: None,
                compared_values: None,
            });
        }
    };
    low.into()
}
