use super::vault_transfer::{release_accounts, transfer_out};
use crate::engine::{self, AttestationView, EvalInput, LimitState, ListMode, Party, PayeeDay};
use crate::errors::PolicyVaultError;
use crate::events::ApprovalClosed;
use crate::state::{
    fixed, seeds, AcceptancePolicy, ApprovalTerms, KillSwitchState, PayeeList, PaymentApproval,
    PolicyAccount, VelocityLedger,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::external::atom_stats;
use trust_gate_program_common::{pda, pda_account};
use trust_gate_program_common::{probe, runtime};
use validation_registry::state::attestation;

/// What the gate asks policy_vault to evaluate.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvaluateArgs {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub amount: u64,
    pub mint: Pubkey,
    pub policy_id: u32,
}

/// The accounts of a read-only evaluation. Nothing is writable, so a decision takes no write
/// lock on the payer's policy or ledger and any program can ask for one (through the gate).
#[derive(Accounts)]
pub struct Evaluate<'info> {
    /// The gate program's `["evaluate_signer"]` PDA: only the gate can sign it, so only the
    /// gate can evaluate (and commit).
    #[account(address = seeds::GATE_EVALUATE_SIGNER_ADDRESS)]
    pub gate_signer: Signer<'info>,
    /// The payer's policy (read by the handler as an `Account` is: owner, then
    /// discriminator, its fields in place: see `PolicyAccount::read`). For it and
    /// the next two accounts `is_for` is the seeds check without deriving the address again;
    /// a mismatch answers ConstraintSeeds, as the derivation did.
    /// CHECK: verified as described above.
    pub policy: UncheckedAccount<'info>,
    /// The payer's VelocityLedger (the handler checks that it is the payer's).
    pub velocity: Account<'info, VelocityLedger>,
    /// The payer's kill switch; must exist (absent: AccountNotInitialized, 3012). Read by the
    /// handler as `policy` is.
    /// CHECK: verified as described above.
    pub killswitch: UncheckedAccount<'info>,
    /// The engine's AtomStats PDA of the payer (address enforced: the account that names
    /// the asset, else the canonical PDA, see `atom_stats::is_account_of`); read by
    /// `atom_stats::read`, which maps absence, wrong owner and bad layout to decisions.
    /// CHECK: verified as described above.
    pub payer_stats: UncheckedAccount<'info>,
    /// CHECK: as `payer_stats`, for the payee.
    pub payee_stats: UncheckedAccount<'info>,
    /// The payee's AcceptancePolicy PDA (address enforced, so it cannot be swapped or
    /// omitted: see [`acceptance_of`]); when it holds no account the payee accepts any payer.
    /// CHECK: verified as described above.
    pub payee_acceptance: UncheckedAccount<'info>,
    /// An attestation about the payer (for the payee's acceptance policy), when the payer has
    /// one: validation_registry's ValidationAttestation (checked and read by [`attestation`]).
    /// CHECK: verified as described above.
    pub payer_attestation: Option<UncheckedAccount<'info>>,
    /// An attestation about the payee (for the payer's policy), when the payee has one.
    /// CHECK: verified as described above.
    pub payee_attestation: Option<UncheckedAccount<'info>>,
    /// The payer policy's PayeeList when the policy names one: it must be that address
    /// (owner and discriminator checked when read, see [`payee_listed`]). Otherwise any
    /// account, ignored: the gate passes the policy account again.
    /// CHECK: verified as described above.
    pub payee_list: UncheckedAccount<'info>,
}

/// The accounts of an evaluation that commits: [`Evaluate`]'s, with the policy (spending
/// counters) and the velocity ledger writable. Reached only from the gate's strict,
/// atomic settlement. A vault-funded payment's vault accounts come as remaining accounts
/// (see [`evaluate_and_commit`]).
#[derive(Accounts)]
pub struct EvaluateAndCommit<'info> {
    /// As in [`Evaluate`].
    #[account(address = seeds::GATE_EVALUATE_SIGNER_ADDRESS)]
    pub gate_signer: Signer<'info>,
    /// As in [`Evaluate`]: the stored fields stand for the seeds. Read by the handler, as
    /// an `Account` is (`pda_account::read`: owner, discriminator; then those fields), which
    /// writes the counters back in place: as an `Account` field Anchor would serialize the
    /// whole account again on exit.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub policy: UncheckedAccount<'info>,
    /// As `policy`.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub velocity: UncheckedAccount<'info>,
    /// As in [`Evaluate`].
    /// CHECK: verified as described above.
    pub killswitch: UncheckedAccount<'info>,
    /// CHECK: as in [`Evaluate`].
    pub payer_stats: UncheckedAccount<'info>,
    /// CHECK: as in [`Evaluate`].
    pub payee_stats: UncheckedAccount<'info>,
    /// CHECK: as in [`Evaluate`].
    pub payee_acceptance: UncheckedAccount<'info>,
    /// CHECK: as in [`Evaluate`].
    pub payer_attestation: Option<UncheckedAccount<'info>>,
    /// CHECK: as in [`Evaluate`].
    pub payee_attestation: Option<UncheckedAccount<'info>>,
    /// CHECK: as in [`Evaluate`].
    pub payee_list: UncheckedAccount<'info>,
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
fn attestation(a: &Option<UncheckedAccount>) -> Result<Option<AttestationView>> {
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

fn acceptance(account: &AccountInfo) -> Result<Option<AcceptancePolicy>> {
    if account.owner != &crate::ID || account.data_is_empty() {
        return Ok(None);
    }
    let data = account.try_borrow_data()?;
    fixed::from_data::<AcceptancePolicy>(&data)
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
fn approval_in<'a, 'info>(
    remaining: &'a [AccountInfo<'info>],
) -> (Option<&'a AccountInfo<'info>>, &'a [AccountInfo<'info>]) {
    let accounts = match remaining.split_first() {
        Some((first, rest)) if first.key == &crate::ID => rest,
        _ => remaining,
    };
    match accounts.split_first() {
        Some((first, rest))
            if first.owner == &crate::ID
                && first
                    .try_borrow_data()
                    .is_ok_and(|d| d.starts_with(PaymentApproval::DISCRIMINATOR)) =>
        {
            (Some(first), rest)
        }
        _ => (None, accounts),
    }
}

/// `approval` when it still counts: given in the payer's authority generation (its kill
/// switch's, `killswitch` checked by [`payer_accounts`]), not before a hand-over, which voids
/// earlier approvals. Read only when the caller passed an approval.
fn in_force<'a, 'info>(
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
fn approval_of(
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

/// What one evaluation reads, borrowed from either accounts struct.
struct Inputs<'a, 'info> {
    policy: &'a PolicyAccount,
    /// The policy's account, whose per-payee slots are read in place.
    policy_data: &'a AccountInfo<'info>,
    velocity: &'a VelocityLedger,
    /// Whether the payer's kill switch is paused.
    paused: bool,
    payer_stats: &'a AccountInfo<'info>,
    payee_stats: &'a AccountInfo<'info>,
    payee_acceptance: &'a AccountInfo<'info>,
    payer_attestation: &'a Option<UncheckedAccount<'info>>,
    payee_attestation: &'a Option<UncheckedAccount<'info>>,
    payee_list: &'a AccountInfo<'info>,
    /// The approval the caller passed, if any (see [`approval_in`]).
    approval: Option<&'a AccountInfo<'info>>,
}

/// Runs the engine over the accounts. A retired policy or another mint is a hard error.
fn decide(i: Inputs, args: &EvaluateArgs) -> Result<engine::Evaluation> {
    require!(!i.policy.is_retired(), PolicyVaultError::PolicyRetired);
    let params = &i.policy.params;
    require!(
        params.mint == Pubkey::default() || params.mint == args.mint,
        PolicyVaultError::PolicyMintMismatch
    );
    let policy = params.to_config_with(i.policy.rules())?;
    probe!("the policy's rules");
    let payee_listed = payee_listed(
        i.policy,
        policy.limits.list_mode,
        i.policy_data.key,
        i.payee_list,
        &args.payee_asset,
    )?;
    // A policy without limits counts none; the slots are read only under a per-payee cap.
    let limits = match &i.policy.limits {
        None => None,
        Some(l) => Some(LimitState {
            counters: l.counters(),
            payee_day: if l.rules.payee_daily_cap == 0 {
                PayeeDay::default()
            } else {
                let data = i.policy_data.try_borrow_data()?;
                PolicyAccount::payee_day_in(&data, &args.payee_asset)
            },
        }),
    };
    probe!("list, limits");
    let acceptance_account = acceptance(i.payee_acceptance)?;
    let acceptance = acceptance_account
        .as_ref()
        .map(|acc| acc.params.to_config())
        .transpose()?;
    probe!("the acceptance policy");
    let payer_reputation = stats(i.payer_stats)?;
    let payee_reputation = stats(i.payee_stats)?;
    let payer_attestation = attestation(i.payer_attestation)?;
    let payee_attestation = attestation(i.payee_attestation)?;
    probe!("stats, attestations");
    let now = Clock::get()?.unix_timestamp;
    let approved = approval_of(i.approval, i.policy, args, now)?.is_some();
    probe!("clock, approval");
    let evaluation = engine::evaluate(&EvalInput {
        policy: &policy,
        acceptance: acceptance.as_ref(),
        paused: i.paused,
        spending: i.policy.counters(),
        velocity: i.velocity.state(),
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
        approval_threshold: i.policy.approval_threshold,
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

fn check_velocity(velocity: &VelocityLedger, args: &EvaluateArgs) -> Result<()> {
    require!(
        velocity.is_for(&args.payer_asset, args.policy_id),
        ErrorCode::ConstraintSeeds
    );
    Ok(())
}

/// Returns the 35-byte decision as return data. No event: the gate, the only caller (its
/// evaluate signer), logs gate_payment's decision and payment as its `GateDecision` event
/// (a settlement's is Allow or the transaction fails), and an event here as well cost about
/// 600 compute units per payment.
fn report(decision: &engine::Decision) {
    runtime::set_return_data(&decision.to_wire());
}

/// Decides a payment without writing anything. Return data: the 35-byte decision.
///
/// Remaining accounts: the payment's approval (see `approve_payment`), when the caller has
/// one: the decision is then the one a settlement passing it would get.
pub fn evaluate<'info>(ctx: Context<'info, Evaluate<'info>>, args: EvaluateArgs) -> Result<()> {
    probe!("entry and accounts");
    let a = &ctx.accounts;
    check_party_accounts(&a.payer_stats, &a.payee_stats, &a.payee_acceptance, &args)?;
    probe!("party accounts");
    let (policy, paused) = payer_accounts(&a.policy, &a.killswitch, &args)?;
    probe!("policy, kill switch");
    check_velocity(&a.velocity, &args)?;
    let (approval, _) = approval_in(ctx.remaining_accounts);
    let approval = in_force(approval, &a.killswitch);
    probe!("ledger, approval found");
    let evaluation = decide(
        Inputs {
            policy: &policy,
            policy_data: &a.policy,
            velocity: &a.velocity,
            paused,
            payer_stats: &a.payer_stats,
            payee_stats: &a.payee_stats,
            payee_acceptance: &a.payee_acceptance,
            payer_attestation: &a.payer_attestation,
            payee_attestation: &a.payee_attestation,
            payee_list: a.payee_list.as_ref(),
            approval,
        },
        &args,
    )?;
    report(&evaluation.decision);
    probe!("the decision returned");
    Ok(())
}

/// Decides a payment and, on Allow, stores the new spending counters and velocity state and,
/// for a vault-funded policy, releases `amount` from the vault to the payer's token account.
/// Return data: the 35-byte decision.
///
/// Remaining accounts: policy_vault's own (the gate passes it for absent attestations), then
/// the payment's approval (w) and its rent payer (w) when the caller has one (see
/// `approve_payment`: a payment above the policy's approval threshold passes against it
/// once and closes it to its rent payer), then for a vault-funded policy [vault (w),
/// payer_token (w), mint, token_program, a transfer hook's accounts...]. They are remaining
/// accounts rather than optional ones so that a settlement without them carries no extra
/// account metas.
pub fn evaluate_and_commit<'info>(
    ctx: Context<'info, EvaluateAndCommit<'info>>,
    args: EvaluateArgs,
) -> Result<()> {
    probe!("entry and accounts");
    let a = &ctx.accounts;
    check_party_accounts(&a.payer_stats, &a.payee_stats, &a.payee_acceptance, &args)?;
    probe!("party accounts");
    let (policy, paused) = payer_accounts(&a.policy, &a.killswitch, &args)?;
    probe!("policy, kill switch");
    let velocity: VelocityLedger = fixed::read(&a.velocity)?;
    check_velocity(&velocity, &args)?;
    let (approval, rest) = approval_in(ctx.remaining_accounts);
    // An approval is followed by its rent payer, to whom the payment closes it.
    let (rent_payer, rest) = match (approval, rest.split_first()) {
        (Some(_), Some((rent_payer, rest))) => (Some(rent_payer), rest),
        (Some(_), None) => return err!(PolicyVaultError::ApprovalRentPayerMismatch),
        (None, _) => (None, rest),
    };
    let approval = in_force(approval, &a.killswitch);
    probe!("ledger, approval found");
    let evaluation = decide(
        Inputs {
            policy: &policy,
            policy_data: &a.policy,
            velocity: &velocity,
            paused,
            payer_stats: &a.payer_stats,
            payee_stats: &a.payee_stats,
            payee_acceptance: &a.payee_acceptance,
            payer_attestation: &a.payer_attestation,
            payee_attestation: &a.payee_attestation,
            payee_list: a.payee_list.as_ref(),
            approval,
        },
        &args,
    )?;
    // After the hard errors of `decide` (a retired policy, another mint), before the
    // decision is acted on: a wrong shape fails whatever the decision.
    let release = release_accounts(&policy, &args.mint, rest)?;
    probe!("release accounts");
    let committed = evaluation.decision.is_allow();
    if committed {
        if let Some(t) = &release {
            transfer_out(t, args.amount)?;
            probe!("the release");
        }
    }
    if committed {
        let mut data = a.policy.try_borrow_mut_data()?;
        PolicyAccount::write_counters(&mut data, &evaluation.spending);
        if let Some(update) = &evaluation.limits {
            PolicyAccount::write_limits(&mut data, update);
        }
        drop(data);
        VelocityLedger::write_state(&mut a.velocity.try_borrow_mut_data()?, &evaluation.velocity);
        // An approval the payment needed is used up: closed to the member who paid for it.
        if let (Some(info), Some(rent_payer)) = (approval, rent_payer) {
            let now = Clock::get()?.unix_timestamp;
            if let Some(used) = approval_of(Some(info), &policy, &args, now)? {
                require_keys_eq!(
                    *rent_payer.key,
                    used.rent_payer,
                    PolicyVaultError::ApprovalRentPayerMismatch
                );
                pda_account::close(info, rent_payer)?;
                runtime::emit(&ApprovalClosed {
                    approval: *info.key,
                    payer_asset: used.payer_asset,
                    consumed: true,
                });
            }
        }
    }
    probe!("counters written");
    // Last, so that nothing the release invoked overwrites the decision.
    report(&evaluation.decision);
    probe!("the decision returned");
    Ok(())
}
