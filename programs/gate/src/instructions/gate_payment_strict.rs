use super::helpers::evaluation::*;
use super::helpers::introspection::{Instructions, INSTRUCTIONS_SYSVAR_ID};
use super::helpers::parties::{
    agent, check_holdable_mint, check_mint, check_not_self_dealing, signing_parties,
    token_account_of,
};
use crate::errors::GateError;
use crate::settlement::{self, check_deadline, Expected, HeldTransfer, PaymentArgs};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{get_stack_height, TRANSACTION_LEVEL_STACK_HEIGHT};
use policy_vault::engine::{Decision, Holdback};
use policy_vault::state::PolicyAccount;
use trust_gate_program_common::external::{agent_account, ids};
use trust_gate_program_common::probe;

#[derive(Accounts)]
pub struct GatePaymentStrict<'info> {
    pub evaluation: CommitEvaluationAccounts<'info>,
    /// The payer agent's live owner or the agent wallet that owner set; must also authorize
    /// the transfer, so nobody else can spend an agent's budget.
    pub payer_signer: Signer<'info>,
    /// The payer agent's MPL Core asset: the agent's identity, and the authority on who owns
    /// it now (owner and layout checked in the handler).
    /// CHECK: verified as described above.
    pub payer_asset: UncheckedAccount<'info>,
    /// The registry's AgentAccount of the payer (owner enforced, and that it names the asset,
    /// which stands for its seeds: see `agent_account::names`; content read in the handler).
    /// CHECK: verified as described above.
    #[account(
        owner = ids::AGENT_REGISTRY @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_is_agent_account(&payer_agent) @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_names(&payer_agent, payer_asset.key) @ ErrorCode::ConstraintSeeds,
    )]
    pub payer_agent: UncheckedAccount<'info>,
    /// The payee agent's MPL Core asset: its live owner is the recipient unless the agent
    /// wallet that owner set is (checked in the handler).
    /// CHECK: verified as described above.
    pub payee_asset: UncheckedAccount<'info>,
    /// The registry's AgentAccount of the payee (checked as `payer_agent`): names the
    /// payee's agent wallet.
    /// CHECK: verified as described above.
    #[account(
        owner = ids::AGENT_REGISTRY @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_is_agent_account(&payee_agent) @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_names(&payee_agent, payee_asset.key) @ ErrorCode::ConstraintSeeds,
    )]
    pub payee_agent: UncheckedAccount<'info>,
    /// The transfer's destination; must be a token account of the mint owned by the
    /// payee's recipient (checked in the handler).
    /// CHECK: verified as described above.
    pub destination_token: UncheckedAccount<'info>,
    /// The gated mint (the payer's policy must be for it); its extensions are checked in
    /// the handler.
    /// CHECK: verified as described above.
    pub mint_account: UncheckedAccount<'info>,
    /// CHECK: the instructions sysvar (address enforced).
    #[account(address = INSTRUCTIONS_SYSVAR_ID)]
    pub instructions: UncheckedAccount<'info>,
    /// A vault-funded settlement only: the payer agent's vault for the mint (policy_vault
    /// checks it against the policy, which must be vault-funded). On Allow policy_vault
    /// releases `amount` from it to `payer_token`. A Token-2022 transfer hook's accounts for
    /// that release follow as remaining accounts.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub vault: Option<UncheckedAccount<'info>>,
    /// With `vault`: payer_signer's token account of the mint, credited by the release and
    /// debited by the transfer (both checked in the handler).
    /// CHECK: verified as described above.
    #[account(mut)]
    pub payer_token: Option<UncheckedAccount<'info>>,
    /// CHECK: with `vault`: the mint's token program (policy_vault compares it).
    pub token_program: Option<UncheckedAccount<'info>>,
}

/// The vault accounts of a settlement: all three or none.
fn vault_release<'a, 'info>(
    a: &'a GatePaymentStrict<'info>,
    signer: &Pubkey,
    mint: &Pubkey,
) -> Result<Option<VaultRelease<'a, 'info>>> {
    let (vault, payer_token, token_program) = match (&a.vault, &a.payer_token, &a.token_program) {
        (None, None, None) => return Ok(None),
        (Some(v), Some(p), Some(t)) => (v, p, t),
        _ => return err!(GateError::VaultAccountsIncomplete),
    };
    require!(
        token_account_of(payer_token, mint, signer)?,
        GateError::PayerTokenMismatch
    );
    Ok(Some(VaultRelease {
        vault,
        payer_token,
        mint: &a.mint_account,
        token_program,
    }))
}

/// Who pays and who is paid: the signer acts for the payer agent, the destination is the
/// payee's recipient's, and the two agents are distinct parties.
fn check_parties(a: &GatePaymentStrict, signer: &Pubkey, mint: &Pubkey) -> Result<()> {
    let (payer, payee) = signing_parties(
        &a.payer_agent,
        &a.payer_asset,
        &a.payee_agent,
        &a.payee_asset,
        signer,
    )?;
    let recipient = payee.recipient();
    require!(
        token_account_of(&a.destination_token, mint, &recipient)?,
        GateError::RecipientMismatch
    );
    // A payment to the payer's own keys, or into a vault, moves nothing between parties but
    // would be counted, logged as settled and rated.
    require!(!payer.may_sign(&recipient), GateError::PaymentToPayer);
    require_keys_neq!(
        recipient,
        a.destination_token.key(),
        GateError::PaymentToVault
    );
    check_not_self_dealing(&payer, &payee)
}

/// The holdback the decision sets against the one the transaction carries: the tier the
/// settlement was quoted for and the held share's transfer; a held share's mint lets the
/// gate pay it out (`check_holdable_mint`) and its arbiter is never a key of the payer.
/// (emit_feedback checks that the share went to an escrow of the gate.)
fn check_holdback(
    a: &GatePaymentStrict,
    quoted_tier: Option<u8>,
    decided: Option<Holdback>,
    held: Option<HeldTransfer>,
) -> Result<()> {
    let decided = match (quoted_tier, decided) {
        // No holdback: no transfer besides the payment's either.
        (None, None) => {
            require!(held.is_none(), GateError::HoldbackNotInPolicy);
            return Ok(());
        }
        (None, Some(_)) => return err!(GateError::HoldbackTierMissing),
        (Some(_), None) => return err!(GateError::HoldbackNotInPolicy),
        (Some(quoted), Some(d)) => {
            require!(quoted == d.tier, GateError::HoldbackTierMoved);
            d
        }
    };
    require!(
        held.map_or(0, |h| h.amount) == decided.held,
        GateError::HoldbackTransferMismatch
    );
    if held.is_none() {
        return Ok(());
    }
    check_holdable_mint(&a.mint_account)?;
    let arbiter = PolicyAccount::holdback_in(&a.evaluation.policy.try_borrow_data()?)
        .map(|r| r.arbiter)
        .unwrap_or_default();
    // Read again rather than kept from `check_parties`: a settlement without a holdback
    // does not pay for carrying the payer agent this far.
    let payer = agent(&a.payer_agent, &a.payer_asset)?;
    require!(!payer.may_sign(&arbiter), GateError::ArbiterIsPayer);
    Ok(())
}

/// The committing gate of a settlement. It is a top-level instruction by design: it reads
/// the transaction around it, and a program calling it could call it several times for one
/// transfer. Fails unless the transaction is [≤2 ComputeBudget, this, TransferChecked of the
/// same amount and mint from `payer_signer` to the payee's recipient, emit_feedback for the
/// same payee]; then commits the counters on Allow and fails on anything else, so the
/// counters move only together with the money.
///
/// `deadline` (unix seconds) bounds when the payment may land (see
/// [`settlement::check_deadline`]): emit_feedback stores it in the log, which closes only
/// after it, so a payment id settles once even after its log is gone.
///
/// A vault-funded settlement carries the payer's vault and `payer_token`: the transfer must
/// debit `payer_token`, which policy_vault credits from the vault on Allow, so the payer
/// signer's balance ends where it started and the vault pays.
///
/// `holdback_tier`: under a policy with a holdback schedule, the payee tier the terms were
/// quoted for; the transaction then holds back the share the policy sets for the payee's
/// tier as read now, before this payment's feedback (docs/holdback.md).
pub fn gate_payment_strict<'info>(
    ctx: Context<'info, GatePaymentStrict<'info>>,
    amount: u64,
    policy_id: u32,
    deadline: i64,
    holdback_tier: Option<u8>,
) -> Result<()> {
    probe!("entry and accounts");
    // Two probes back to back: the profile takes one probe's cost from this phase.
    probe!("probe");
    let a = &ctx.accounts;
    let args = PaymentArgs {
        payer_asset: a.payer_asset.key(),
        payee_asset: a.payee_asset.key(),
        amount,
        mint: a.mint_account.key(),
        policy_id,
    };
    args.validate()?;
    check_deadline(deadline, Clock::get()?.unix_timestamp)?;
    require!(
        get_stack_height() == TRANSACTION_LEVEL_STACK_HEIGHT,
        GateError::StrictGateNotTopLevel
    );
    let signer = a.payer_signer.key();
    probe!("arguments, deadline, top level");
    check_parties(a, &signer, &args.mint)?;
    probe!("parties");
    check_mint(&a.mint_account)?;
    probe!("mint");
    let release = vault_release(a, &signer, &args.mint)?;
    probe!("vault accounts");

    let held = {
        let sysvar = a.instructions.try_borrow_data()?;
        let transaction = Instructions::new(&sysvar);
        let (current, count) = transaction.position()?;
        settlement::check_strict_bundle(
            current,
            count,
            |i| transaction.get(i),
            &Expected {
                args,
                destination: a.destination_token.key(),
                authority: signer,
                source: release.as_ref().map(|r| r.payer_token.key()),
            },
        )?
    };
    probe!("the transaction");

    // Remaining accounts: the payment's approval and its rent payer, when it has one, then
    // a vault release's transfer hook accounts.
    let (approval, extra) = approval_accounts(ctx.remaining_accounts, true);
    let (decision, holdback) = ctx
        .accounts
        .evaluation
        .evaluate_and_commit(&args, approval, release, extra)?;
    probe!("the decision reported");
    match decision {
        Decision::Allow => {
            check_holdback(ctx.accounts, holdback_tier, holdback, held)?;
            probe!("the holdback");
            Ok(())
        }
        Decision::Deny(reason) => Err(deny_error(reason)),
        Decision::RequireValidation { .. } => Err(GateError::ValidationRequired.into()),
        Decision::RequireApproval => Err(GateError::ApprovalRequired.into()),
    }
}
