//! The accounts and CPIs shared by gate_payment (read-only) and gate_payment_strict
//! (committing).

use crate::errors::GateError;
use crate::events::GateDecision;
use crate::settlement::PaymentArgs;
use crate::state::seeds;
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::Discriminator;
use policy_vault::engine::Decision;
use policy_vault::instructions::EvaluateArgs;
use policy_vault::program::PolicyVault;
use policy_vault::state::seeds::{
    GATE_EVALUATE_SIGNER_ADDRESS as EVALUATE_SIGNER_ADDRESS,
    GATE_EVALUATE_SIGNER_BUMP as EVALUATE_SIGNER_BUMP,
};
use trust_gate_program_common::{cpi, probe, runtime};

/// The seeds the gate signs policy_vault's evaluation with (the bump is a compile-time
/// constant, so the whole signer is).
pub(crate) const EVALUATE_SIGNER_SEEDS: &[&[&[u8]]] =
    &[&[seeds::EVALUATE_SIGNER, &[EVALUATE_SIGNER_BUMP]]];

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
    /// CHECK: the payer policy's PayeeList when its policy names one, else the policy
    /// account again, which policy_vault then ignores (checked by policy_vault). An account
    /// already in the instruction costs less than an absent one's placeholder.
    pub payee_list: UncheckedAccount<'info>,
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
    /// CHECK: as in [`EvaluationAccounts`].
    pub payee_list: UncheckedAccount<'info>,
    pub policy_vault_program: Program<'info, PolicyVault>,
}

/// The accounts of policy_vault's evaluation, borrowed from either accounts struct (same
/// fields, in policy_vault's order).
macro_rules! vault_accounts {
    ($a:expr) => {
        VaultAccounts {
            signer: &$a.evaluate_signer,
            policy: &$a.policy,
            velocity: &$a.velocity_ledger,
            killswitch: &$a.killswitch,
            payer_stats: &$a.payer_stats,
            payee_stats: &$a.payee_stats,
            payee_acceptance: &$a.payee_acceptance,
            payer_attestation: $a.payer_attestation.as_ref().map(|a| &**a),
            payee_attestation: $a.payee_attestation.as_ref().map(|a| &**a),
            payee_list: &$a.payee_list,
            program: &$a.policy_vault_program,
        }
    };
}

struct VaultAccounts<'a, 'info> {
    signer: &'a AccountInfo<'info>,
    policy: &'a AccountInfo<'info>,
    velocity: &'a AccountInfo<'info>,
    killswitch: &'a AccountInfo<'info>,
    payer_stats: &'a AccountInfo<'info>,
    payee_stats: &'a AccountInfo<'info>,
    payee_acceptance: &'a AccountInfo<'info>,
    payer_attestation: Option<&'a AccountInfo<'info>>,
    payee_attestation: Option<&'a AccountInfo<'info>>,
    payee_list: &'a AccountInfo<'info>,
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
        let mut metas = Vec::with_capacity(10 + extra.len());
        metas.extend([
            AccountMeta::new_readonly(*self.signer.key, true),
            meta(self.policy, commit),
            meta(self.velocity, commit),
            meta(self.killswitch, false),
            meta(self.payer_stats, false),
            meta(self.payee_stats, false),
            meta(self.payee_acceptance, false),
            optional(self.payer_attestation),
            optional(self.payee_attestation),
            meta(self.payee_list, false),
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
                self.policy,
                self.velocity,
                self.killswitch,
                self.payer_stats,
                self.payee_stats,
                self.payee_acceptance,
                self.payee_list,
                self.program,
            ]
            .into_iter()
            .chain(self.payer_attestation)
            .chain(self.payee_attestation),
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
    use anchor_lang::Discriminator;
    let is_approval = remaining.first().is_some_and(|a| {
        a.owner == &policy_vault::ID
            && a.try_borrow_data()
                .is_ok_and(|d| d.starts_with(policy_vault::state::PaymentApproval::DISCRIMINATOR))
    });
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
    ) -> Result<Decision> {
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
    ) -> Result<Decision> {
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

/// Reads policy_vault's decision from the CPI's return data and sets it as this
/// instruction's return data; gate_payment (not `strict`) also emits [`GateDecision`].
fn report(args: &PaymentArgs, strict: bool) -> Result<Decision> {
    let (program, data) = runtime::get_return_data().ok_or(GateError::DecisionMissing)?;
    require_keys_eq!(program, policy_vault::ID, GateError::DecisionMissing);
    let decision = Decision::from_wire(&data).ok_or(GateError::DecisionMissing)?;

    let wire = decision.to_wire();
    // A settlement logs no decision: it is Allow or the transaction fails, and
    // emit_feedback records the payment (about 430 compute units saved per settlement).
    if strict {
        runtime::set_return_data(&wire);
        return Ok(decision);
    }
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
    runtime::set_return_data(&wire);
    Ok(decision)
}
