use super::helpers::evaluation::{approval_in, approval_of, decide, in_force, read_payer, report};
use super::helpers::vault_transfer::{release_accounts, transfer_out};
use crate::errors::PolicyVaultError;
use crate::events::ApprovalClosed;
use crate::state::{seeds, PolicyAccount, VelocityLedger};
use anchor_lang::prelude::*;
use trust_gate_program_common::{pda_account, probe, runtime};

/// What the gate asks policy_vault to evaluate.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvaluateArgs {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub amount: u64,
    pub mint: Pubkey,
    pub policy_id: u32,
}

crate::evaluation_accounts! {
    /// The accounts of a read-only evaluation. Nothing is writable, so a decision takes no
    /// write lock on the payer's policy or ledger and any program can ask for one (through
    /// the gate).
    pub struct Evaluate<'info> [] {
        /// The gate program's `["evaluate_signer"]` PDA: only the gate can sign it, so only
        /// the gate can evaluate (and commit).
        #[account(address = seeds::GATE_EVALUATE_SIGNER_ADDRESS)]
        pub gate_signer: Signer<'info>,
    } {}
}

crate::evaluation_accounts! {
    /// The accounts of an evaluation that commits: [`Evaluate`]'s, with the policy (spending
    /// counters) and the velocity ledger writable. Reached only from the gate's strict,
    /// atomic settlement. A vault-funded payment's vault accounts come as remaining accounts
    /// (see [`evaluate_and_commit`]).
    pub struct EvaluateAndCommit<'info> [mut] {
        /// As in [`Evaluate`].
        #[account(address = seeds::GATE_EVALUATE_SIGNER_ADDRESS)]
        pub gate_signer: Signer<'info>,
    } {}
}

/// Decides a payment without writing anything. Return data: the 35-byte decision.
///
/// Remaining accounts: the payment's approval (see `approve_payment`), when the caller has
/// one: the decision is then the one a settlement passing it would get.
pub fn evaluate<'info>(ctx: Context<'info, Evaluate<'info>>, args: EvaluateArgs) -> Result<()> {
    probe!("entry and accounts");
    let e = ctx.accounts.evaluation();
    let payer = read_payer(&e, &args)?;
    let (approval, _) = approval_in(ctx.remaining_accounts);
    let approval = in_force(approval, e.killswitch);
    probe!("ledger, approval found");
    let evaluation = decide(&e, &payer, approval, &args)?;
    report(&evaluation);
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
    let e = ctx.accounts.evaluation();
    let payer = read_payer(&e, &args)?;
    let (approval, rest) = approval_in(ctx.remaining_accounts);
    // An approval is followed by its rent payer, to whom the payment closes it.
    let (rent_payer, rest) = match (approval, rest.split_first()) {
        (Some(_), Some((rent_payer, rest))) => (Some(rent_payer), rest),
        (Some(_), None) => return err!(PolicyVaultError::ApprovalRentPayerMismatch),
        (None, _) => (None, rest),
    };
    let approval = in_force(approval, e.killswitch);
    probe!("ledger, approval found");
    let evaluation = decide(&e, &payer, approval, &args)?;
    // After the hard errors of `decide` (a retired policy, another mint), before the
    // decision is acted on: a wrong shape fails whatever the decision.
    let release = release_accounts(&payer.policy, &args.mint, rest)?;
    probe!("release accounts");
    let committed = evaluation.decision.is_allow();
    if committed {
        if let Some(t) = &release {
            transfer_out(t, args.amount)?;
            probe!("the release");
        }
    }
    if committed {
        let mut data = e.policy.try_borrow_mut_data()?;
        PolicyAccount::write_counters(&mut data, &evaluation.spending);
        if let Some(update) = &evaluation.limits {
            PolicyAccount::write_limits(&mut data, update);
        }
        drop(data);
        VelocityLedger::write_state(
            &mut e.velocity_ledger.try_borrow_mut_data()?,
            &evaluation.velocity,
        );
        // An approval the payment needed is used up: closed to the member who paid for it.
        if let (Some(info), Some(rent_payer)) = (approval, rent_payer) {
            let now = Clock::get()?.unix_timestamp;
            if let Some(used) = approval_of(Some(info), &payer.policy, &args, now)? {
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
    report(&evaluation);
    probe!("the decision returned");
    Ok(())
}
