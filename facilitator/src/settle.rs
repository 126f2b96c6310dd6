//! POST /settle: authenticate the challenge, verify the transaction, co-sign, send with
//! preflight (the cluster's simulation), confirm. A replay of a settled transaction returns
//! the first signature.
//!
//! Replays need no cache in one process: Ed25519 signatures are deterministic, so co-signing
//! the same message again gives the same transaction signature, whose status the cluster
//! knows. Replicas on Redis also write the signature for the payment before the send (see
//! [`crate::lock_store`]), so that a retry on another replica answers without sending, and a
//! second transaction of the same payment waits while the first may still land.
//!
//! Settlements of one payer agent run one at a time, across replicas with Redis, so each
//! simulation sees the counters the previous one committed; a settlement that still fails on
//! chain is named exactly as /verify names a refusal (the Deny's code, name and headers). The
//! store failing before the send is 503 `lock_store_unavailable`: nothing is sent without the
//! lock.

use crate::adapter::{self, Expectations, GateContext};
use crate::inspect::{self, Expected, Verified};
use crate::lock_store::{Claim, PendingRecord, StoreUnavailable};
use crate::reject::Rejection;
use crate::service::Facilitator;
use axum::http::StatusCode;
use solana_commitment_config::{CommitmentConfig, CommitmentLevel};
use solana_rpc_client_api::config::RpcSendTransactionConfig;
use solana_sdk::instruction::InstructionError;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use solana_sdk::signer::Signer;
use solana_sdk::transaction::{TransactionError, VersionedTransaction};
use std::time::{Duration, Instant};
use trust_gate_client::decode::{Decision, DenyReason};
use trust_gate_client::errors::{self, summarize_logs};
use trust_gate_client::simulate::{now_unix, PaymentQuery};
use trust_gate_client::x402::FacilitatorRequest;

/// A settled payment.
#[derive(Clone, Debug)]
pub struct Settled {
    pub signature: Signature,
    /// The payer's wallet (the transfer authority).
    pub payer: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub feedback_log: Pubkey,
    /// True when this request replayed an already settled transaction.
    pub replayed: bool,
    /// True when the transaction was sent but its outcome was not known by the confirmation
    /// deadline: not a failure (it may still land; a retry of the same request returns it
    /// once it has, and sends nothing new), answered 202 `settlement_pending`.
    pub pending: bool,
}

/// What waiting for a sent transaction found.
enum Outcome {
    Landed(Result<(), TransactionError>),
    Pending,
}

/// How a settlement's turn ended once its transaction was (or may have been) sent.
enum Sent {
    /// Landed and succeeded; `replayed` when an earlier send of it had landed it.
    Landed { replayed: bool },
    /// Outcome not known by the deadline.
    Pending,
    /// Landed and failed.
    Failed(TransactionError),
    /// Refused by the preflight simulation: never sent.
    Refused(TransactionError, Vec<String>),
}

fn landed_as(done: Result<(), TransactionError>, replayed: bool) -> Sent {
    match done {
        Ok(()) => Sent::Landed { replayed },
        Err(err) => Sent::Failed(err),
    }
}

/// A status read gets at least this long, even past the confirmation deadline.
const MIN_READ: Duration = Duration::from_millis(100);

/// Gate errors 6001..=6015 are Deny reasons 1..=15; 6016 asks for a validation.
const GATE_DENY_FIRST: u32 = 6001;
const GATE_VALIDATION_REQUIRED: u32 = 6016;

impl Facilitator {
    /// The pay adapter with this facilitator's expectations.
    pub async fn context(&self, req: &FacilitatorRequest) -> Result<GateContext, Rejection> {
        let network = self.caip2().await?;
        let facilitator = self.facilitator();
        adapter::read(
            req,
            Expectations {
                facilitator: &facilitator,
                network: &network,
                trusted_services: &self.trusted_services,
                now: now_unix(),
                skew: self.clock_skew.as_secs() as i64,
            },
        )
    }

    /// Decodes and verifies the payment's transaction against `ctx` (no RPC writes).
    pub async fn inspect(
        &self,
        req: &FacilitatorRequest,
        ctx: &GateContext,
    ) -> Result<Verified, Rejection> {
        let tx = inspect::decode(&req.payment_payload.payload.transaction)?;
        let (token_program, decimals) = self.mint(&ctx.mint).await?;
        let collection = self.collection().await?;
        let facilitator = self.facilitator();
        let run = |tables: &[solana_sdk::message::AddressLookupTableAccount]| {
            inspect::verify(
                tx.clone(),
                Expected {
                    builder: &self.builder,
                    ctx,
                    facilitator: &facilitator,
                    collection: &collection,
                    token_program,
                    decimals,
                    tables,
                    max_compute_unit_price: self.max_compute_unit_price,
                },
            )
        };
        match run(&self.tables().await) {
            // A table created after boot: read the tables again once.
            Err(r) if r.reason == "lookup_table_not_allowed" => {
                self.refresh_tables().await?;
                run(&self.tables().await)
            }
            other => other,
        }
    }

    /// The whole settlement.
    pub async fn settle(&self, req: &FacilitatorRequest) -> Result<Settled, Rejection> {
        let Some(keypair) = self.key.keypair() else {
            return Err(Rejection::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "facilitator_not_signing",
                "this facilitator is configured with a public key only and cannot settle",
            ));
        };
        let ctx = self.context(req).await?;
        let Verified {
            mut tx,
            payer,
            gate_index,
            ..
        } = self.inspect(req, &ctx).await?;
        let signature = keypair.sign_message(&tx.message.serialize());
        tx.signatures[0] = signature;
        let feedback_log = self
            .builder
            .pda
            .feedback_log(&self.facilitator(), &ctx.payment_id_hash);
        let settled = |replayed, pending| Settled {
            signature,
            payer,
            payment_id_hash: ctx.payment_id_hash,
            feedback_log,
            replayed,
            pending,
        };
        let failed = |err: TransactionError| self.failure(&signature, err, gate_index, &ctx);

        let record = PendingRecord {
            signature,
            blockhash: *tx.message.recent_blockhash(),
        };
        let store = &self.lock_store;
        let fac = self.facilitator();
        let id = &ctx.payment_id_hash;

        // A retry of a settlement that a replica (this one or another) sent: its outcome,
        // without sending again or waiting for the payer's turn.
        let replayed = match store.pending(&fac, id).await.map_err(unavailable)? {
            Some(r) if r == record => self.landed(&signature).await?,
            _ => None,
        };
        let outcome = match replayed {
            Some(done) => landed_as(done, true),
            None => {
                let turn = store.lock(ctx.payer_asset).await.map_err(unavailable)?;
                let outcome = self.settle_in_turn(&tx, &record, &ctx).await;
                turn.release().await;
                outcome?
            }
        };
        match outcome {
            Sent::Landed { replayed: false } => {
                tracing::info!(%signature, %payer, "settled");
                Ok(settled(false, false))
            }
            Sent::Landed { replayed: true } => {
                tracing::info!(%signature, "replayed settlement");
                Ok(settled(true, false))
            }
            Sent::Pending => {
                tracing::warn!(%signature, "sent, not confirmed in time: pending");
                Ok(settled(false, true))
            }
            Sent::Failed(err) => Err(failed(err).await),
            // Named after the turn: the payer's next settlement need not wait for it.
            Sent::Refused(err, logs) => Err(self
                .refusal(err, &logs, gate_index, &feedback_log, &ctx)
                .await),
        }
    }

    /// The payer's turn: claim the payment for this transaction, send it with preflight (the
    /// cluster simulates it; a gate refusal comes back as the simulation's error) and read
    /// its status: two RPC round trips when all goes well. A replay or a payment settled by
    /// another transaction is recognized from the send's own error, never by reads up front.
    ///
    /// How long it may hold the payer's lock is bounded (see `Config::lock_ttl`): the reads
    /// before the send within one send timeout, the send within another, then the
    /// confirmation within its timeout or, after a refusal, one status read within a send
    /// timeout.
    async fn settle_in_turn(
        &self,
        tx: &VersionedTransaction,
        record: &PendingRecord,
        ctx: &GateContext,
    ) -> Result<Sent, Rejection> {
        let (store, fac, id) = (&self.lock_store, self.facilitator(), &ctx.payment_id_hash);
        let signature = &record.signature;
        match store.claim(&fac, id, record).await.map_err(unavailable)? {
            Claim::Ours => {}
            // This transaction was claimed before (a retry). Landed: its outcome. Not yet:
            // its replica may have died before the send, so it is sent again: the same
            // signature, of which the cluster lands at most one.
            Claim::Same => {
                if let Some(done) = self.within(self.landed(signature)).await? {
                    return Ok(landed_as(done, true));
                }
            }
            Claim::Other(earlier) => self.within(self.take_over(&earlier, record, ctx)).await?,
        }
        let config = RpcSendTransactionConfig {
            skip_preflight: false,
            preflight_commitment: Some(CommitmentLevel::Confirmed),
            ..RpcSendTransactionConfig::default()
        };
        let sent = tokio::time::timeout(
            self.send_timeout,
            self.rpc.send_transaction_with_config(tx, config),
        )
        .await;
        let refused = match sent {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => preflight_failure(&e).or_else(|| {
                tracing::warn!(%signature, error = %e, "send unanswered; waiting for the outcome");
                None
            }),
            Err(_) => {
                tracing::warn!(%signature, "send not answered in time; waiting for the outcome");
                None
            }
        };
        let Some((err, logs)) = refused else {
            // Sent, or perhaps sent (no answer from the RPC: the transaction may have
            // reached the cluster): its outcome, or pending.
            return Ok(match self.confirm(signature).await {
                Outcome::Landed(done) => landed_as(done, false),
                Outcome::Pending => Sent::Pending,
            });
        };
        // The same transaction may have landed already (a retry, or a concurrent
        // request): its status says so, and the first signature is the answer.
        if let Some(done) = self.within(self.landed(signature)).await? {
            return Ok(landed_as(done, true));
        }
        // Refused in preflight, so never sent: another transaction of the payment may go.
        store.forget(&fac, id, record).await;
        Ok(Sent::Refused(err, logs))
    }

    /// `work`'s answer, or 502 when the RPC has not given it within the send timeout.
    async fn within<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, Rejection>>,
    ) -> Result<T, Rejection> {
        tokio::time::timeout(self.send_timeout, work)
            .await
            .unwrap_or_else(|_| {
                Err(rpc_rejection(format!(
                    "no answer within {} s",
                    self.send_timeout.as_secs_f64()
                )))
            })
    }

    /// Another transaction of this payment was claimed before `ours`. While its blockhash is
    /// valid it may still land, so this one waits (409 `settlement_in_progress`), unless it
    /// has landed (409 `payment_already_settled`) or failed; once its blockhash has expired
    /// it can no longer land, and `ours` takes the payment (if it did land, the payment's
    /// feedback log exists and the preflight says so).
    async fn take_over(
        &self,
        earlier: &PendingRecord,
        ours: &PendingRecord,
        ctx: &GateContext,
    ) -> Result<(), Rejection> {
        let payment = trust_gate_client::decode::hex(&ctx.payment_id_hash);
        let live = self
            .rpc
            .is_blockhash_valid(&earlier.blockhash, CommitmentConfig::processed())
            .await
            .map_err(rpc_rejection)?;
        if live {
            match self.landed(&earlier.signature).await? {
                Some(Ok(())) => {
                    return Err(already_settled(
                        &payment,
                        &format!("transaction {}", earlier.signature),
                    ))
                }
                Some(Err(_)) => {}
                None => return Err(in_progress(&payment, &earlier.signature)),
            }
        }
        let (fac, id) = (self.facilitator(), &ctx.payment_id_hash);
        match self.lock_store.replace(&fac, id, earlier, ours).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(in_progress(&payment, &earlier.signature)),
            Err(e) => Err(unavailable(e)),
        }
    }

    /// A settlement that failed on chain, named as /verify names it: a gate refusal is the
    /// decision (402 with the Deny or validation headers), any other program error is named
    /// from the IDLs; never a raw hex code.
    async fn failure(
        &self,
        signature: &Signature,
        err: TransactionError,
        gate_index: u8,
        ctx: &GateContext,
    ) -> Rejection {
        let onchain = |what: String| {
            Rejection::new(
                StatusCode::PAYMENT_REQUIRED,
                "transaction_failed",
                format!("the settlement transaction {signature} failed on chain: {what}"),
            )
        };
        let TransactionError::InstructionError(index, InstructionError::Custom(code)) = &err else {
            return onchain(err.to_string());
        };
        let (index, code) = (*index, *code);
        if index == gate_index && (GATE_DENY_FIRST..=GATE_VALIDATION_REQUIRED).contains(&code) {
            if let Some(d) = self.gate_decision(code, ctx).await {
                let mut r = Rejection::decision(d);
                r.message = format!("{} (settlement {signature} failed on chain)", r.message);
                return r;
            }
        }
        // The gate's instruction fails with its own codes or with policy_vault's (by CPI).
        let program = match index.checked_sub(gate_index) {
            Some(0) | Some(2) => Some(self.builder.ids.gate),
            _ => None,
        };
        let named = errors::lookup(program.as_ref(), code)
            .or_else(|| errors::lookup(Some(&self.builder.ids.policy_vault), code))
            .or_else(|| errors::lookup(None, code));
        onchain(match named {
            Some(n) => format!("instruction {index}: error {} {}", n.code, n.name),
            None => err.to_string(),
        })
    }

    /// The decision behind a gate error code: a Deny's reason is the code itself; a
    /// RequireValidation needs the capability, which the read-only gate tells.
    async fn gate_decision(&self, code: u32, ctx: &GateContext) -> Option<Decision> {
        if code < GATE_VALIDATION_REQUIRED {
            let reason = u8::try_from(code - GATE_DENY_FIRST + 1).ok()?;
            return DenyReason::from_code(reason).map(Decision::Deny);
        }
        let d = self.decide(query(ctx)).await.ok()?;
        (d != Decision::Allow).then_some(d)
    }

    /// `Some(result)` once `signature` has landed: `Ok` or the transaction's error.
    async fn landed(
        &self,
        signature: &Signature,
    ) -> Result<Option<Result<(), TransactionError>>, Rejection> {
        let statuses = self
            .rpc
            .get_signature_statuses(&[*signature])
            .await
            .map_err(|e| rpc_rejection(e.to_string()))?
            .value;
        Ok(statuses.into_iter().flatten().next().map(|s| match s.err {
            None => Ok(()),
            Some(err) => Err(err),
        }))
    }

    /// Waits until `signature` lands: reads its status at once, then backs off from 2 ms,
    /// doubling up to 200 ms, for at most the confirmation timeout (a read that hangs is cut
    /// there too). A status read that fails (the RPC backend down for a moment) is retried
    /// like one that finds nothing yet: the transaction was sent, so until the deadline the
    /// only honest answers are its outcome or pending, never a failure the client would pay
    /// again for.
    async fn confirm(&self, signature: &Signature) -> Outcome {
        let deadline = Instant::now() + self.confirm_timeout;
        let mut wait = Duration::from_millis(2);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left.max(MIN_READ), self.landed(signature)).await {
                Ok(Ok(Some(done))) => return Outcome::Landed(done),
                Ok(Ok(None)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(%signature, error = %e.message, "status read failed; retrying")
                }
                Err(_) => tracing::warn!(%signature, "status read not answered in time"),
            }
            if Instant::now() >= deadline {
                return Outcome::Pending;
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_millis(200));
        }
    }

    /// Why the send's preflight simulation refused the settlement: a gate refusal is the
    /// decision itself; a feedback log that already exists means another transaction
    /// settled this payment; anything else is named from the IDLs.
    async fn refusal(
        &self,
        err: TransactionError,
        logs: &[String],
        gate_index: u8,
        feedback_log: &Pubkey,
        ctx: &GateContext,
    ) -> Rejection {
        if err == TransactionError::BlockhashNotFound {
            return Rejection::bad(
                "blockhash_expired",
                "the transaction's recent blockhash is no longer valid",
            )
            .hint("build the transaction again with a fresh blockhash");
        }
        // emit_feedback creates the payment's feedback log; when one exists, its creation
        // fails (the runtime's AccountAlreadyInitialized, or the system program's
        // AccountAlreadyInUse, 0).
        let exists = matches!(
            &err,
            TransactionError::InstructionError(
                i,
                InstructionError::AccountAlreadyInitialized | InstructionError::Custom(0)
            ) if *i == gate_index + 2
        );
        if exists {
            return already_settled(
                &trust_gate_client::decode::hex(&ctx.payment_id_hash),
                &format!("another transaction (feedback log {feedback_log})"),
            );
        }
        let named = errors::explain(&err, logs);
        if named.as_ref().is_some_and(errors::is_engine_paused) {
            return engine_paused(&self.builder.ids.reputation_engine, "the settlement");
        }
        let gate_code = named
            .as_ref()
            .filter(|n| n.program.as_deref() == Some(self.builder.ids.gate.to_string().as_str()))
            .map(|n| n.code)
            .filter(|c| (GATE_DENY_FIRST..=GATE_VALIDATION_REQUIRED).contains(c));
        if gate_code.is_some() {
            // The read-only gate gives the full decision (reason, or capability and subject).
            if let Ok(d) = self.decide(query(ctx)).await {
                if d != Decision::Allow {
                    return Rejection::decision(d);
                }
            }
        }
        let what = named
            .map(|n| format!("error {} {}", n.code, n.name))
            .unwrap_or_else(|| err.to_string());
        Rejection::new(
            StatusCode::PAYMENT_REQUIRED,
            "transaction_simulation_failed",
            format!(
                "the settlement would fail: {what}; {}",
                summarize_logs(logs, 400)
            ),
        )
    }
}

/// A settlement or dispute refused in preflight because the reputation engine is paused: the
/// payee's feedback cannot be recorded, so nothing can land until it resumes. Nothing was
/// sent, so nothing was paid.
pub(crate) fn engine_paused(engine: &Pubkey, what: &str) -> Rejection {
    Rejection::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "reputation_engine_paused",
        format!(
            "the reputation engine {engine} is paused: the payee's feedback cannot be recorded, \
             so {what} cannot land; nothing was sent (no fee)"
        ),
    )
    .hint("retry once the engine resumes; payees without engine stats are still paid")
}

/// The simulation error and logs of a send refused in preflight.
fn preflight_failure(
    e: &solana_rpc_client_api::client_error::Error,
) -> Option<(TransactionError, Vec<String>)> {
    use solana_rpc_client_api::client_error::ErrorKind;
    use solana_rpc_client_api::request::{RpcError, RpcResponseErrorData};
    let ErrorKind::RpcError(RpcError::RpcResponseError {
        data: RpcResponseErrorData::SendTransactionPreflightFailure(sim),
        ..
    }) = e.kind()
    else {
        return None;
    };
    let err = sim.err.clone()?;
    Some((err.into(), sim.logs.clone().unwrap_or_default()))
}

fn query(ctx: &GateContext) -> PaymentQuery {
    PaymentQuery {
        payer_asset: ctx.payer_asset,
        payee_asset: ctx.payee_asset,
        amount: ctx.amount,
        mint: ctx.mint,
        policy_id: ctx.policy_id,
    }
}

/// The lock store failed before anything was sent: 503, fail closed.
fn unavailable(e: StoreUnavailable) -> Rejection {
    Rejection::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "lock_store_unavailable",
        format!("{e}; nothing was sent (no fee)"),
    )
    .hint("retry once the store answers again (GET /healthz reports it); /verify does not need it")
}

/// 409: the payment was settled `by` another transaction.
fn already_settled(payment: &str, by: &str) -> Rejection {
    Rejection::new(
        StatusCode::CONFLICT,
        "payment_already_settled",
        format!("payment {payment} was already settled by {by}"),
    )
    .hint("request a fresh challenge: every payment needs its own memo")
}

/// 409: another transaction of the payment was sent and may still land.
fn in_progress(payment: &str, earlier: &Signature) -> Rejection {
    Rejection::new(
        StatusCode::CONFLICT,
        "settlement_in_progress",
        format!(
            "payment {payment} has another settlement transaction, {earlier}, that may still land"
        ),
    )
    .hint("retry the request that sent it (it returns its outcome), or this one once its blockhash has expired (about a minute)")
}

fn rpc_rejection(e: impl std::fmt::Display) -> Rejection {
    Rejection::new(
        StatusCode::BAD_GATEWAY,
        "rpc_failure",
        format!("the Solana RPC backend failed: {e}"),
    )
}
