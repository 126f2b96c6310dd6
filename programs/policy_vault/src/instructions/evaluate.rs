use super::vault_transfer::{release_accounts, transfer_out};
use crate::engine::{self, AttestationView, EvalInput, ExtendedState, ListMode, Party, PayeeDay};
use crate::errors::PolicyVaultError;
use crate::events::VaultReleased;
use crate::state::{
    seeds, AcceptancePolicy, AnyPolicy, KillSwitchState, PayeeList, PolicyAccount, PolicyAccountV2,
    VelocityLedger,
};
use anchor_lang::prelude::*;
use trust_gate_program_common::external::atom_stats;
use trust_gate_program_common::runtime;
use trust_gate_program_common::{pda, pda_account};
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
#[instruction(args: EvaluateArgs)]
pub struct Evaluate<'info> {
    /// The gate program's `["evaluate_signer"]` PDA: only the gate can sign it, so only the
    /// gate can evaluate (and commit).
    #[account(address = seeds::GATE_EVALUATE_SIGNER_ADDRESS)]
    pub gate_signer: Signer<'info>,
    /// The payer's policy, v1 or v2 (read by the handler as an `Account` of either type
    /// is: owner, then discriminator). For it and the next two accounts `is_for` is the seeds
    /// check without deriving the address again; a mismatch answers ConstraintSeeds, as the
    /// derivation did.
    /// CHECK: verified as described above.
    pub policy: UncheckedAccount<'info>,
    #[account(
        constraint = velocity.is_for(&args.payer_asset, args.policy_id) @ ErrorCode::ConstraintSeeds,
    )]
    pub velocity: Account<'info, VelocityLedger>,
    /// The payer's kill switch; must exist (absent: AccountNotInitialized, 3012).
    #[account(constraint = killswitch.is_for(&args.payer_asset) @ ErrorCode::ConstraintSeeds)]
    pub killswitch: Account<'info, KillSwitchState>,
    /// The engine's AtomStats PDA of the payer (address enforced: the account that names
    /// the asset, else the canonical PDA, see `atom_stats::is_account_of`); read by
    /// `atom_stats::read`, which maps absence, wrong owner and bad layout to decisions.
    /// CHECK: verified as described above.
    #[account(constraint = atom_stats::info_is_account_of(&payer_stats, &args.payer_asset) @ ErrorCode::ConstraintSeeds)]
    pub payer_stats: UncheckedAccount<'info>,
    /// CHECK: as `payer_stats`, for the payee.
    #[account(constraint = atom_stats::info_is_account_of(&payee_stats, &args.payee_asset) @ ErrorCode::ConstraintSeeds)]
    pub payee_stats: UncheckedAccount<'info>,
    /// The payee's AcceptancePolicy PDA (address enforced, so it cannot be swapped or
    /// omitted: see [`acceptance_of`]); when it holds no account the payee accepts any payer.
    /// CHECK: verified as described above.
    #[account(
        constraint = acceptance_of(&payee_acceptance, &args.payee_asset) @ ErrorCode::ConstraintSeeds,
    )]
    pub payee_acceptance: UncheckedAccount<'info>,
    /// An attestation about the payer (for the payee's acceptance policy), when the payer has
    /// one: validation_registry's ValidationAttestation (checked and read by [`attestation`]).
    /// CHECK: verified as described above.
    pub payer_attestation: Option<UncheckedAccount<'info>>,
    /// An attestation about the payee (for the payer's policy), when the payee has one.
    /// CHECK: verified as described above.
    pub payee_attestation: Option<UncheckedAccount<'info>>,
    /// The payer policy's PayeeList when the (v2) policy names one: it must be that address
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
#[instruction(args: EvaluateArgs)]
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
    #[account(constraint = killswitch.is_for(&args.payer_asset) @ ErrorCode::ConstraintSeeds)]
    pub killswitch: Account<'info, KillSwitchState>,
    /// CHECK: as in [`Evaluate`].
    #[account(constraint = atom_stats::info_is_account_of(&payer_stats, &args.payer_asset) @ ErrorCode::ConstraintSeeds)]
    pub payer_stats: UncheckedAccount<'info>,
    /// CHECK: as in [`Evaluate`].
    #[account(constraint = atom_stats::info_is_account_of(&payee_stats, &args.payee_asset) @ ErrorCode::ConstraintSeeds)]
    pub payee_stats: UncheckedAccount<'info>,
    /// CHECK: as in [`Evaluate`].
    #[account(
        constraint = acceptance_of(&payee_acceptance, &args.payee_asset) @ ErrorCode::ConstraintSeeds,
    )]
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
    AcceptancePolicy::try_deserialize(&mut &data[..])
        .map(Some)
        .map_err(|_| error!(PolicyVaultError::AcceptancePolicyInvalid))
}

/// Whether the payee is on a v2 policy's list: its inline payees, then the list account the
/// policy names, which must be the one given (`PayeeListMissing` when the caller passed the
/// policy account in its place, as for a policy without one; `PayeeListMismatch` for any
/// other account). Read only when the policy has a list (`mode`, from its configuration).
fn payee_listed(
    policy: &AnyPolicy,
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
    require!(list.key != policy_key, PolicyVaultError::PayeeListMissing);
    require_keys_eq!(
        *list.key,
        rules.payee_list,
        PolicyVaultError::PayeeListMismatch
    );
    // The policy names the address, and policy_vault creates a PayeeList only at the PDA
    // of the asset and id it stores (compared below): owner, then discriminator.
    require!(
        list.owner == &crate::ID,
        ErrorCode::AccountOwnedByWrongProgram
    );
    let data = list.try_borrow_data()?;
    let base = policy.base();
    PayeeList::contains_in(&data, &base.asset, base.policy_id, payee)
        .ok_or_else(|| error!(ErrorCode::AccountDiscriminatorMismatch))
}

/// What one evaluation reads, borrowed from either accounts struct.
struct Inputs<'a, 'info> {
    policy: &'a AnyPolicy,
    /// The policy's account, whose v2 slots are read in place.
    policy_data: &'a AccountInfo<'info>,
    velocity: &'a VelocityLedger,
    killswitch: &'a KillSwitchState,
    payer_stats: &'a AccountInfo<'info>,
    payee_stats: &'a AccountInfo<'info>,
    payee_acceptance: &'a AccountInfo<'info>,
    payer_attestation: &'a Option<UncheckedAccount<'info>>,
    payee_attestation: &'a Option<UncheckedAccount<'info>>,
    payee_list: &'a AccountInfo<'info>,
}

/// Runs the engine over the accounts. A retired policy or another mint is a hard error.
fn decide(i: Inputs, args: &EvaluateArgs) -> Result<engine::Evaluation> {
    let base = i.policy.base();
    require!(!base.is_retired(), PolicyVaultError::PolicyRetired);
    let params = &base.params;
    require!(
        params.mint == Pubkey::default() || params.mint == args.mint,
        PolicyVaultError::PolicyMintMismatch
    );
    let policy = params.to_config_with(i.policy.rules())?;
    let payee_listed = payee_listed(
        i.policy,
        policy.extended.list_mode,
        i.policy_data.key,
        i.payee_list,
        &args.payee_asset,
    )?;
    // A v1 policy counts none; a v2 policy's slots are read only under a per-payee cap.
    let extended = match i.policy {
        AnyPolicy::V1(_) => None,
        AnyPolicy::V2(p) => Some(ExtendedState {
            counters: p.counters,
            payee_day: if p.rules.payee_daily_cap == 0 {
                PayeeDay::default()
            } else {
                let data = i.policy_data.try_borrow_data()?;
                PolicyAccountV2::payee_day_in(&data, &args.payee_asset)
            },
        }),
    };
    let acceptance_account = acceptance(i.payee_acceptance)?;
    let acceptance = acceptance_account
        .as_ref()
        .map(|acc| acc.params.to_config())
        .transpose()?;
    let payer_reputation = stats(i.payer_stats)?;
    let payee_reputation = stats(i.payee_stats)?;
    let payer_attestation = attestation(i.payer_attestation)?;
    let payee_attestation = attestation(i.payee_attestation)?;
    let now = Clock::get()?.unix_timestamp;
    Ok(engine::evaluate(&EvalInput {
        policy: &policy,
        acceptance: acceptance.as_ref(),
        paused: i.killswitch.paused,
        spending: base.counters(),
        velocity: i.velocity.state(),
        extended,
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
    }))
}

/// Returns the 35-byte decision as return data. No event: the gate, the only caller (its
/// evaluate signer), logs gate_payment's decision and payment as its `GateDecision` event
/// (a settlement's is Allow or the transaction fails), and an event here as well cost about
/// 600 compute units per payment.
fn report(decision: &engine::Decision) {
    runtime::set_return_data(&decision.to_wire());
}

/// Decides a payment without writing anything. Return data: the 35-byte decision.
pub fn evaluate(ctx: Context<Evaluate>, args: EvaluateArgs) -> Result<()> {
    let a = &ctx.accounts;
    let policy = AnyPolicy::read(&a.policy)?;
    require!(
        policy.base().is_for(&args.payer_asset, args.policy_id),
        ErrorCode::ConstraintSeeds
    );
    let evaluation = decide(
        Inputs {
            policy: &policy,
            policy_data: &a.policy,
            velocity: &a.velocity,
            killswitch: &a.killswitch,
            payer_stats: &a.payer_stats,
            payee_stats: &a.payee_stats,
            payee_acceptance: &a.payee_acceptance,
            payer_attestation: &a.payer_attestation,
            payee_attestation: &a.payee_attestation,
            payee_list: a.payee_list.as_ref(),
        },
        &args,
    )?;
    report(&evaluation.decision);
    Ok(())
}

/// Decides a payment and, on Allow, stores the new spending counters and velocity state and,
/// for a vault-funded policy, releases `amount` from the vault to the payer's token account.
/// Return data: the 35-byte decision.
///
/// Remaining accounts: policy_vault's own (the gate passes it for absent attestations), then
/// for a vault-funded policy [vault (w), payer_token (w), mint, token_program, a transfer
/// hook's accounts...]. They are remaining accounts rather than optional ones so that a
/// wallet-funded settlement's CPI carries no extra account metas.
pub fn evaluate_and_commit<'info>(
    ctx: Context<'info, EvaluateAndCommit<'info>>,
    args: EvaluateArgs,
) -> Result<()> {
    let a = &ctx.accounts;
    let policy = AnyPolicy::read(&a.policy)?;
    require!(
        policy.base().is_for(&args.payer_asset, args.policy_id),
        ErrorCode::ConstraintSeeds
    );
    let velocity: VelocityLedger = pda_account::read(&a.velocity)?;
    require!(
        velocity.is_for(&args.payer_asset, args.policy_id),
        ErrorCode::ConstraintSeeds
    );
    let evaluation = decide(
        Inputs {
            policy: &policy,
            policy_data: &a.policy,
            velocity: &velocity,
            killswitch: &a.killswitch,
            payer_stats: &a.payer_stats,
            payee_stats: &a.payee_stats,
            payee_acceptance: &a.payee_acceptance,
            payer_attestation: &a.payer_attestation,
            payee_attestation: &a.payee_attestation,
            payee_list: a.payee_list.as_ref(),
        },
        &args,
    )?;
    // After the hard errors of `decide` (a retired policy, another mint), before the
    // decision is acted on: a wrong shape fails whatever the decision.
    let release = release_accounts(policy.base(), &args.mint, ctx.remaining_accounts)?;
    let committed = evaluation.decision.is_allow();
    if committed {
        if let Some(t) = &release {
            transfer_out(t, args.amount)?;
            runtime::emit(&VaultReleased {
                asset: args.payer_asset,
                mint: args.mint,
                policy_id: args.policy_id,
                amount: args.amount,
                payer_token: t.to.key(),
            });
        }
    }
    if committed {
        let mut data = a.policy.try_borrow_mut_data()?;
        PolicyAccount::write_counters(&mut data, &evaluation.spending);
        if let Some(update) = &evaluation.extended {
            PolicyAccountV2::write_extended(&mut data, update);
        }
        drop(data);
        VelocityLedger::write_state(&mut a.velocity.try_borrow_mut_data()?, &evaluation.velocity);
    }
    // Last, so that nothing the release invoked overwrites the decision.
    report(&evaluation.decision);
    Ok(())
}
