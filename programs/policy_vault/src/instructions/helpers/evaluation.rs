//! The evaluation's accounts, declared once for both programs ([`evaluation_accounts!`]), and
//! how policy_vault reads and checks them. Each check is made here only: the gate passes the
//! accounts through unchecked (a constraint in both programs would cost its units twice).

use super::super::EvaluateArgs;
use crate::engine::{
    self, AcceptanceConfig, AttestationView, EvalInput, LimitState, ListMode, Party, PayeeDay,
};
use crate::errors::PolicyVaultError;
use crate::state::{
    fixed, seeds, AcceptancePolicy, ApprovalTerms, KillSwitchState, PayeeList, PaymentApproval,
    PolicyAccount, VelocityLedger,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::external::atom_stats;
use trust_gate_program_common::{pda, pda_account, probe, runtime};
use validation_registry::state::attestation;

/// Declares an `Accounts` struct that holds the evaluation's accounts, in the one order both
/// programs use: the payer's policy, velocity ledger and kill switch, the parties' engine
/// stats, the payee's acceptance policy, the attestations about the payer and the payee, and
/// the payer policy's payee list. `[mut]` makes the policy and the ledger writable (an
/// evaluation that commits); the struct's own accounts come before and after them. It also
/// gives the struct `evaluation()`, the accounts as [`EvaluationRefs`].
///
/// ```ignore
/// evaluation_accounts! {
///     /// The struct's docs.
///     pub struct Name<'info> [mut] {
///         // accounts before the evaluation's
///     } {
///         // accounts after them
///     }
/// }
/// ```
#[macro_export]
macro_rules! evaluation_accounts {
    (
        $(#[$attr:meta])*
        pub struct $name:ident<'info> [$($writable:ident)?] {
            $($before:tt)*
        } {
            $($after:tt)*
        }
    ) => {
        $(#[$attr])*
        #[derive(Accounts)]
        pub struct $name<'info> {
            $($before)*
            /// The payer's PolicyAccount, read as an `Account` is (owner, then discriminator,
            /// its fields in place: `PolicyAccount::read`); its stored asset and policy id
            /// stand for its seeds (a mismatch answers ConstraintSeeds). Checked by
            /// policy_vault, which writes its counters in place when it commits.
            /// CHECK: verified as described above.
            $(#[account($writable)])?
            pub policy: UncheckedAccount<'info>,
            /// The payer's VelocityLedger, read and checked as `policy`.
            /// CHECK: verified as described above.
            $(#[account($writable)])?
            pub velocity_ledger: UncheckedAccount<'info>,
            /// The payer's kill switch, read as `policy`; it must exist (absent:
            /// AccountNotInitialized, 3012).
            /// CHECK: verified as described above.
            pub killswitch: UncheckedAccount<'info>,
            /// The engine's AtomStats of the payer: the account that names the asset, else
            /// the canonical PDA (`atom_stats::is_account_of`; ConstraintSeeds otherwise);
            /// absence, a wrong owner or layout are decisions (`atom_stats::read`).
            /// CHECK: verified as described above.
            pub payer_stats: UncheckedAccount<'info>,
            /// CHECK: as `payer_stats`, for the payee.
            pub payee_stats: UncheckedAccount<'info>,
            /// The payee's AcceptancePolicy: the account that names the asset, else the
            /// canonical PDA, so that it cannot be swapped or omitted; holding no account,
            /// the payee accepts any payer.
            /// CHECK: verified as described above.
            pub payee_acceptance: UncheckedAccount<'info>,
            /// An attestation about the payer (for the payee's acceptance policy), when the
            /// payer has one: validation_registry's ValidationAttestation, read in place and
            /// checked as an `Account` of it would be; its stored subject, capability and
            /// attestor stand for its seeds.
            /// CHECK: verified as described above.
            pub payer_attestation: Option<UncheckedAccount<'info>>,
            /// CHECK: as `payer_attestation`: about the payee (for the payer's policy).
            pub payee_attestation: Option<UncheckedAccount<'info>>,
            /// The payer policy's PayeeList when the policy names one: it must be that address
            /// (owner and discriminator checked when read). Otherwise the policy account
            /// again, ignored: an account already in the instruction costs less than an
            /// absent one's placeholder.
            /// CHECK: verified as described above.
            pub payee_list: UncheckedAccount<'info>,
            $($after)*
        }

        impl<'info> $name<'info> {
            /// The evaluation's accounts.
            pub fn evaluation(&self) -> $crate::instructions::EvaluationRefs<'_, 'info> {
                $crate::instructions::EvaluationRefs {
                    policy: &self.policy,
                    velocity_ledger: &self.velocity_ledger,
                    killswitch: &self.killswitch,
                    payer_stats: &self.payer_stats,
                    payee_stats: &self.payee_stats,
                    payee_acceptance: &self.payee_acceptance,
                    payer_attestation: self.payer_attestation.as_deref(),
                    payee_attestation: self.payee_attestation.as_deref(),
                    payee_list: &self.payee_list,
                }
            }
        }
    };
}

/// The evaluation's accounts, borrowed from a struct [`evaluation_accounts!`] declares.
pub struct EvaluationRefs<'a, 'info> {
    pub policy: &'a AccountInfo<'info>,
    pub velocity_ledger: &'a AccountInfo<'info>,
    pub killswitch: &'a AccountInfo<'info>,
    pub payer_stats: &'a AccountInfo<'info>,
    pub payee_stats: &'a AccountInfo<'info>,
    pub payee_acceptance: &'a AccountInfo<'info>,
    pub payer_attestation: Option<&'a AccountInfo<'info>>,
    pub payee_attestation: Option<&'a AccountInfo<'info>>,
    pub payee_list: &'a AccountInfo<'info>,
}

/// Whether `info` is `asset`'s AcceptancePolicy account, existing or not: an account
/// policy_vault owns that names the asset (policy_vault creates one only at the canonical
/// PDA of the asset it stores), else the canonical PDA itself, searched for.
fn acceptance_of(info: &AccountInfo, asset: &Pubkey) -> bool {
    let names = info.owner == &crate::ID
        && info.try_borrow_data().is_ok_and(|data| {
            data.starts_with(AcceptancePolicy::DISCRIMINATOR)
                && data.get(8..40) == Some(asset.as_ref())
        });
    names || pda::is_canonical(info.key, &[seeds::ACCEPTANCE, asset.as_ref()], &crate::ID)
}

fn stats(account: &AccountInfo) -> Result<atom_stats::Reputation> {
    let data = account.try_borrow_data()?;
    Ok(atom_stats::read(account.owner, account.lamports(), &data))
}

/// Reads an attestation in place, checked as an `Account` of validation_registry's
/// ValidationAttestation would be (the same errors). validation_registry creates an
/// attestation only at the canonical PDA of the subject, capability and attestor it stores,
/// so those fields are the account's seeds; the engine compares them with the party and the
/// rule.
fn attestation(a: Option<&AccountInfo>) -> Result<Option<AttestationView>> {
    let Some(info) = a else { return Ok(None) };
    pda_account::check_owner(info, &validation_registry::ID)?;
    let data = info.try_borrow_data()?;
    let f = attestation::fields(&data).ok_or(ErrorCode::AccountDiscriminatorMismatch)?;
    Ok(Some(AttestationView {
        subject: f.subject,
        capability: f.capability,
        attestor: f.attestor,
        revoked: f.revoked,
        expires_at: f.expires_at,
    }))
}

/// The payee's acceptance policy as the engine sees it, when the payee has one; its accepted
/// holdback only with `holdback`.
fn acceptance(account: &AccountInfo, holdback: bool) -> Result<Option<AcceptanceConfig>> {
    if account.owner != &crate::ID || account.data_is_empty() {
        return Ok(None);
    }
    let data = account.try_borrow_data()?;
    AcceptancePolicy::config_in(&data, holdback)
        .map(Some)
        .map_err(|_| error!(PolicyVaultError::AcceptancePolicyInvalid))
}

/// Whether the payee is on the policy's list: its inline payees, then the list account the
/// policy names, which must be the one given (`PayeeListMissing` when the caller passed the
/// policy account in its place, as for a policy without one; `PayeeListMismatch` for any
/// other account). Read only when the policy has a list (`mode`, from its configuration).
fn payee_listed(
    policy: &PolicyAccount,
    mode: ListMode,
    policy_key: &Pubkey,
    list: &AccountInfo,
    payee: &Pubkey,
) -> Result<bool> {
    let Some(rules) = policy.rules().filter(|_| mode != ListMode::Off) else {
        return Ok(false);
    };
    if rules.lists_inline(payee) {
        return Ok(true);
    }
    if !rules.has_list_account() {
        return Ok(false);
    }
    if list.key != &rules.payee_list {
        // The policy account in the list's place is what a caller passes for a policy
        // without a list account.
        return Err(if list.key == policy_key {
            error!(PolicyVaultError::PayeeListMissing)
        } else {
            error!(PolicyVaultError::PayeeListMismatch).with_pubkeys((*list.key, rules.payee_list))
        });
    }
    // The policy names the address, and policy_vault creates a PayeeList only at the PDA
    // of the asset and id it stores (compared below): owner, then discriminator.
    require!(
        list.owner == &crate::ID,
        ErrorCode::AccountOwnedByWrongProgram
    );
    let data = list.try_borrow_data()?;
    PayeeList::contains_in(&data, &policy.asset, policy.policy_id, payee)
        .ok_or_else(|| error!(ErrorCode::AccountDiscriminatorMismatch))
}

/// The approval among `remaining` (an evaluation's remaining accounts, after policy_vault's
/// own when the caller passed it): the first account when policy_vault owns it and it starts
/// with PaymentApproval's discriminator, then the rest. Only found here: it is read only when
/// the payment needs it (see [`approval_of`]), so that a settlement without one pays nothing
/// for the feature.
pub(crate) fn approval_in<'a, 'info>(
    remaining: &'a [AccountInfo<'info>],
) -> (Option<&'a AccountInfo<'info>>, &'a [AccountInfo<'info>]) {
    let accounts = match remaining.split_first() {
        Some((first, rest)) if first.key == &crate::ID => rest,
        _ => remaining,
    };
    match accounts.split_first() {
        Some((first, rest)) if PaymentApproval::is_in(first) => (Some(first), rest),
        _ => (None, accounts),
    }
}

/// `approval` when it still counts: given in the payer's authority generation (its kill
/// switch's, `killswitch` checked by [`payer_accounts`]), not before a hand-over, which voids
/// earlier approvals. Read only when the caller passed an approval.
pub(crate) fn in_force<'a, 'info>(
    approval: Option<&'a AccountInfo<'info>>,
    killswitch: &AccountInfo,
) -> Option<&'a AccountInfo<'info>> {
    approval.filter(|info| {
        let generation = killswitch
            .try_borrow_data()
            .ok()
            .and_then(|d| KillSwitchState::authority_generation_in(&d));
        generation.is_some_and(|g| {
            info.try_borrow_data()
                .is_ok_and(|d| PaymentApproval::given_in(&d, g))
        })
    })
}

/// The approval in `info` when the payment needs one (its amount above the policy's approval
/// threshold) and it approves the payment's terms at `now`. policy_vault creates an approval
/// only at the address of the terms it stores, so its stored terms are compared, not its
/// address.
pub(crate) fn approval_of(
    info: Option<&AccountInfo>,
    policy: &PolicyAccount,
    args: &EvaluateArgs,
    now: i64,
) -> Result<Option<PaymentApproval>> {
    let threshold = policy.approval_threshold;
    let Some(info) = info.filter(|_| threshold != 0 && args.amount > threshold) else {
        return Ok(None);
    };
    let approval: PaymentApproval = fixed::from_data(&info.try_borrow_data()?)?;
    Ok(approval.approves(&terms_of(args), now).then_some(approval))
}

fn terms_of(args: &EvaluateArgs) -> ApprovalTerms {
    ApprovalTerms {
        payer_asset: args.payer_asset,
        payee_asset: args.payee_asset,
        mint: args.mint,
        amount: args.amount,
        policy_id: args.policy_id,
    }
}

/// The payer's accounts as read by [`read_payer`].
pub(crate) struct Payer {
    pub(crate) policy: Box<PolicyAccount>,
    pub(crate) velocity: VelocityLedger,
    /// Whether the payer's kill switch is paused.
    pub(crate) paused: bool,
}

/// The accounts an evaluation reads, checked: the parties' (engine stats, the payee's
/// acceptance policy, see [`check_party_accounts`]), then the payer's policy, kill switch and
/// ledger, each read as an `Account` is and checked to be the payer's (their stored asset and
/// policy id stand for their seeds).
pub(crate) fn read_payer(e: &EvaluationRefs, args: &EvaluateArgs) -> Result<Payer> {
    check_party_accounts(e.payer_stats, e.payee_stats, e.payee_acceptance, args)?;
    probe!("party accounts");
    let (policy, paused) = payer_accounts(e.policy, e.killswitch, args)?;
    probe!("policy, kill switch");
    let velocity: VelocityLedger = fixed::read(e.velocity_ledger)?;
    require!(
        velocity.is_for(&args.payer_asset, args.policy_id),
        ErrorCode::ConstraintSeeds
    );
    Ok(Payer {
        policy,
        velocity,
        paused,
    })
}

/// Runs the engine over the accounts: `payer` as [`read_payer`] read it, `approval` the
/// approval the caller passed, if any, and in force (see [`approval_in`], [`in_force`]). A
/// retired policy or another mint is a hard error.
pub(crate) fn decide(
    e: &EvaluationRefs,
    payer: &Payer,
    approval: Option<&AccountInfo>,
    args: &EvaluateArgs,
) -> Result<engine::Evaluation> {
    let account = &*payer.policy;
    require!(!account.is_retired(), PolicyVaultError::PolicyRetired);
    let params = &account.params;
    require!(
        params.mint == Pubkey::default() || params.mint == args.mint,
        PolicyVaultError::PolicyMintMismatch
    );
    let policy = params.to_config_with(account.rules())?;
    probe!("the policy's rules");
    let payee_listed = payee_listed(
        account,
        policy.limits.list_mode,
        e.policy.key,
        e.payee_list,
        &args.payee_asset,
    )?;
    // A policy without limits counts none; the slots are read only under a per-payee cap.
    let limits = match &account.limits {
        None => None,
        Some(l) => Some(LimitState {
            counters: l.counters(),
            payee_day: if l.rules.payee_daily_cap == 0 {
                PayeeDay::default()
            } else {
                let data = e.policy.try_borrow_data()?;
                PolicyAccount::payee_day_in(&data, &args.payee_asset)
            },
        }),
    };
    let holdback = PolicyAccount::holdback_in(&e.policy.try_borrow_data()?);
    probe!("list, limits, holdback");
    let acceptance = acceptance(e.payee_acceptance, holdback.is_some())?;
    probe!("the acceptance policy");
    let payer_reputation = stats(e.payer_stats)?;
    let payee_reputation = stats(e.payee_stats)?;
    let payer_attestation = attestation(e.payer_attestation)?;
    let payee_attestation = attestation(e.payee_attestation)?;
    probe!("stats, attestations");
    let now = Clock::get()?.unix_timestamp;
    let approved = approval_of(approval, account, args, now)?.is_some();
    probe!("clock, approval");
    let evaluation = engine::evaluate(&EvalInput {
        policy: &policy,
        holdback: holdback.as_ref(),
        acceptance: acceptance.as_ref(),
        paused: payer.paused,
        spending: account.counters(),
        velocity: payer.velocity.state(),
        limits,
        payee_listed,
        payer: Party {
            asset: args.payer_asset,
            reputation: payer_reputation,
            attestation: payer_attestation,
        },
        payee: Party {
            asset: args.payee_asset,
            reputation: payee_reputation,
            attestation: payee_attestation,
        },
        amount: args.amount,
        now,
        approval_threshold: account.approval_threshold,
        approved,
    });
    probe!("the engine");
    Ok(evaluation)
}

/// The engine's stats accounts of both parties and the payee's acceptance policy must be
/// theirs (`ConstraintSeeds` naming the account, as an Anchor constraint would; checked here
/// so that the instruction's arguments are deserialized once, for the handler).
fn check_party_accounts(
    payer_stats: &AccountInfo,
    payee_stats: &AccountInfo,
    payee_acceptance: &AccountInfo,
    args: &EvaluateArgs,
) -> Result<()> {
    let checks = [
        (
            atom_stats::info_is_account_of(payer_stats, &args.payer_asset),
            "payer_stats",
        ),
        (
            atom_stats::info_is_account_of(payee_stats, &args.payee_asset),
            "payee_stats",
        ),
        (
            acceptance_of(payee_acceptance, &args.payee_asset),
            "payee_acceptance",
        ),
    ];
    for (ok, name) in checks {
        if !ok {
            return Err(error!(ErrorCode::ConstraintSeeds).with_account_name(name));
        }
    }
    Ok(())
}

/// The payer's policy and whether its kill switch is paused, each read as an `Account` is
/// and checked to be the payer's (their stored asset and policy id stand for their seeds).
fn payer_accounts(
    policy: &AccountInfo,
    killswitch: &AccountInfo,
    args: &EvaluateArgs,
) -> Result<(Box<PolicyAccount>, bool)> {
    let policy = PolicyAccount::read(policy)?;
    require!(
        policy.is_for(&args.payer_asset, args.policy_id),
        ErrorCode::ConstraintSeeds
    );
    let paused = KillSwitchState::paused_in(killswitch, &args.payer_asset)?;
    Ok((policy, paused))
}

/// Returns the 35-byte decision (an Allow's holdback in it) as return data. No event: the gate, the only caller (its
/// evaluate signer), logs gate_payment's decision and payment as its `GateDecision` event
/// (a settlement's is Allow or the transaction fails), and an event here as well cost about
/// 600 compute units per payment.
pub(crate) fn report(evaluation: &engine::Evaluation) {
    runtime::set_return_data(&evaluation.to_wire());
}
