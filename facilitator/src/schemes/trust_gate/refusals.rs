//! Why a `trust-gate` settlement failed, named as `/verify` names it: the gate's decision
//! for a gate refusal, a named program error otherwise, and the refusals of the settle flow.

use super::TrustGate;
use crate::adapter::GateContext;
use crate::payee_account;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::store::StoreUnavailable;
use solana_sdk::instruction::InstructionError;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use solana_sdk::transaction::TransactionError;
use trust_gate_client::decode::{hex, Decision, DenyReason};
use trust_gate_client::errors::{self, summarize_logs};
use trust_gate_client::settle::TokenProgram;

/// The strict gate's error for a Deny is 6000 + reason (1..=15) or 6100 + reason (16 and
/// up: `DenyReason::strict_error_code`); 6016 asks for a validation, 6077 for an approval.
pub(crate) const GATE_VALIDATION_REQUIRED: u32 = 6016;
pub(crate) const GATE_APPROVAL_REQUIRED: u32 = 6077;

/// Whether a gate error code stands for a decision (a Deny, or a validation or an approval
/// asked for).
pub(crate) fn is_decision_code(code: u32) -> bool {
    code == GATE_VALIDATION_REQUIRED
        || code == GATE_APPROVAL_REQUIRED
        || DenyReason::from_strict_error_code(code).is_some()
}

impl TrustGate {
    /// A settlement that failed on chain, named as /verify names it: a gate refusal is the
    /// decision (402 with the Deny or validation headers), any other program error is named
    /// from the IDLs; never a raw hex code.
    pub(crate) async fn failure(
        f: &Facilitator,
        signature: &Signature,
        err: TransactionError,
        gate_index: u8,
        ctx: &GateContext,
    ) -> Rejection {
        let onchain = |what: String| {
            Rejection::new(
                Reason::GateTransactionFailed,
                format!("the settlement transaction {signature} failed on chain: {what}"),
            )
        };
        if let Some(r) = TrustGate::transfer_refused(f, &err, gate_index, ctx).await {
            return r;
        }
        let TransactionError::InstructionError(index, InstructionError::Custom(code)) = err else {
            return onchain(err.to_string());
        };
        if index == gate_index && is_decision_code(code) {
            // A Deny's reason is the code itself; a RequireValidation needs the capability,
            // which the read-only gate tells.
            let decision = match DenyReason::from_strict_error_code(code) {
                Some(reason) => Some(Decision::Deny(reason)),
                None => TrustGate::refusing_decision(f, ctx).await,
            };
            if let Some(d) = decision {
                let mut r = Rejection::decision(d);
                r.message = format!("{} (settlement {signature} failed on chain)", r.message);
                return r;
            }
        }
        // The gate's instruction fails with its own codes or with policy_vault's (by CPI).
        let program = match index.checked_sub(gate_index) {
            Some(0) | Some(2) => Some(f.chain.builder.ids.gate),
            _ => None,
        };
        let named = errors::lookup(program.as_ref(), code)
            .or_else(|| errors::lookup(Some(&f.chain.builder.ids.policy_vault), code))
            .or_else(|| errors::lookup(None, code));
        TrustGate::forget_stale_signer(f, named.as_ref(), ctx);
        onchain(match named {
            Some(n) => format!("instruction {index}: error {} {}", n.code, n.name),
            None => err.to_string(),
        })
    }

    /// The payee's token account refused the transfer for want of a memo (Token-2022's
    /// `NoMemo` at the TransferChecked): 422 `payee_requires_memo`.
    async fn transfer_refused(
        f: &Facilitator,
        err: &TransactionError,
        gate_index: u8,
        ctx: &GateContext,
    ) -> Option<Rejection> {
        let TransactionError::InstructionError(index, InstructionError::Custom(code)) = err else {
            return None;
        };
        if *index != gate_index + 1 || *code != payee_account::NO_MEMO {
            return None;
        }
        let (program, _) = f.mint(&ctx.mint).await.ok()?;
        (program == TokenProgram::Token2022)
            .then(|| payee_account::refusal(&program.associated_account(&ctx.pay_to, &ctx.mint)))
    }

    /// The chain refused the signer for the payer (`PayerSignerMismatch`): the cached agent
    /// that accepted it is stale (sold on MPL Core directly, say), and is read again next time.
    fn forget_stale_signer(f: &Facilitator, named: Option<&errors::NamedError>, ctx: &GateContext) {
        if named.is_some_and(|n| n.name == "PayerSignerMismatch") {
            f.caches.agents.forget(&ctx.payer_asset);
        }
    }

    /// The read-only gate's decision for the payment now, when it refuses it.
    async fn refusing_decision(f: &Facilitator, ctx: &GateContext) -> Option<Decision> {
        let d = f.decide(ctx.query()).await.ok()?.decision;
        (d != Decision::Allow).then_some(d)
    }

    /// Why the send's preflight simulation refused the settlement: a gate refusal is the
    /// decision itself; a feedback log that already exists means another transaction
    /// settled this payment; anything else is named from the IDLs.
    pub(crate) async fn refusal(
        f: &Facilitator,
        err: TransactionError,
        logs: &[String],
        gate_index: u8,
        feedback_log: &Pubkey,
        ctx: &GateContext,
    ) -> Rejection {
        if err == TransactionError::BlockhashNotFound {
            return Rejection::new(
                Reason::BlockhashExpired,
                "the transaction's recent blockhash is no longer valid",
            )
            .hint("build the transaction again with a fresh blockhash");
        }
        if log_exists(&err, gate_index) {
            let by = format!("another transaction (feedback log {feedback_log})");
            return already_settled(&ctx.payment_id_hash, &by);
        }
        if let Some(r) = TrustGate::transfer_refused(f, &err, gate_index, ctx).await {
            return r;
        }
        let named = errors::explain(&err, logs);
        TrustGate::forget_stale_signer(f, named.as_ref(), ctx);
        if named.as_ref().is_some_and(errors::is_engine_paused) {
            return engine_paused(&f.chain.builder.ids.reputation_engine, "the settlement");
        }
        let gate = f.chain.builder.ids.gate.to_string();
        let gate_refused = named.as_ref().is_some_and(|n| {
            n.program.as_deref() == Some(gate.as_str()) && is_decision_code(n.code)
        });
        // The read-only gate gives the full decision (reason, or capability and subject).
        if gate_refused {
            if let Some(d) = TrustGate::refusing_decision(f, ctx).await {
                return Rejection::decision(d);
            }
        }
        let what = named
            .map(|n| format!("error {} {}", n.code, n.name))
            .unwrap_or_else(|| err.to_string());
        Rejection::new(
            Reason::TransactionSimulationFailed,
            format!(
                "the settlement would fail: {what}; {}",
                summarize_logs(logs)
            ),
        )
    }
}

/// A settlement or dispute refused in preflight because the reputation engine is paused: the
/// payee's feedback cannot be recorded, so nothing can land until it resumes. Nothing was
/// sent, so nothing was paid.
pub(crate) fn engine_paused(engine: &Pubkey, what: &str) -> Rejection {
    Rejection::new(
        Reason::ReputationEnginePaused,
        format!(
            "the reputation engine {engine} is paused: the payee's feedback cannot be recorded, \
             so {what} cannot land; nothing was sent (no fee)"
        ),
    )
    .hint("retry once the engine resumes; payees without engine stats are still paid")
}

/// The lock store failed before anything was sent: 503, fail closed.
pub(crate) fn unavailable(e: StoreUnavailable) -> Rejection {
    Rejection::store_unavailable(format!("{e}; nothing was sent (no fee)")).hint(
        "retry once the store answers again (GET /healthz reports it); /verify does not need it",
    )
}

/// Whether a settlement failed because the payment's feedback log exists: emit_feedback
/// creates it, and when one exists its creation fails (the runtime's
/// AccountAlreadyInitialized, or the system program's AccountAlreadyInUse, 0).
pub(crate) fn log_exists(err: &TransactionError, gate_index: u8) -> bool {
    matches!(
        err,
        TransactionError::InstructionError(
            i,
            InstructionError::AccountAlreadyInitialized | InstructionError::Custom(0)
        ) if *i == gate_index + 2
    )
}

/// 409: the payment `id` was settled `by` another transaction.
pub(crate) fn already_settled(id: &[u8; 32], by: &str) -> Rejection {
    Rejection::new(
        Reason::PaymentAlreadySettled,
        format!("payment {} was already settled by {by}", hex(id)),
    )
    .hint("request a fresh challenge: every payment needs its own memo")
}

/// 409: another transaction of the payment `id` was sent and may still land.
pub(crate) fn in_progress(id: &[u8; 32], earlier: &Signature) -> Rejection {
    Rejection::new(
        Reason::SettlementInProgress,
        format!(
            "payment {} has another settlement transaction, {earlier}, that may still land",
            hex(id)
        ),
    )
    .hint("retry the request that sent it (it returns its outcome), or this one once its blockhash has expired (about a minute)")
}
