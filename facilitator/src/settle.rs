//! POST /settle: authenticate the challenge, verify the transaction, co-sign, simulate,
//! send, confirm. A replay of a settled transaction returns the first signature.
//!
//! Replays need no cache: Ed25519 signatures are deterministic, so co-signing the same
//! message again gives the same transaction signature, whose status the cluster knows.
//!
//! Settlements of one payer agent run one at a time (see [`crate::payer_locks`]), so each
//! simulation sees the counters the previous one committed; a settlement that still fails on
//! chain is named exactly as /verify names a refusal (the Deny's code, name and headers).

use crate::adapter::{self, Expectations, GateContext};
use crate::inspect::{self, Expected, Verified};
use crate::reject::Rejection;
use crate::service::Facilitator;
use axum::http::StatusCode;
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client_api::config::{RpcSendTransactionConfig, RpcSimulateTransactionConfig};
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
}

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
        let settled = |replayed| Settled {
            signature,
            payer,
            payment_id_hash: ctx.payment_id_hash,
            feedback_log,
            replayed,
        };
        let failed = |err: TransactionError| self.failure(&signature, err, gate_index, &ctx);

        let _turn = self.payer_locks.lock(ctx.payer_asset).await;
        if let Some(done) = self.landed(&signature).await? {
            tracing::info!(%signature, "replayed settlement");
            return match done {
                Ok(()) => Ok(settled(true)),
                Err(err) => Err(failed(err).await),
            };
        }
        if self
            .rpc
            .get_account_with_commitment(&feedback_log, CommitmentConfig::confirmed())
            .await
            .map_err(|e| rpc_rejection(e.to_string()))?
            .value
            .is_some()
        {
            return Err(Rejection::new(
                StatusCode::CONFLICT,
                "payment_already_settled",
                format!(
                    "payment {} was already settled by another transaction (feedback log {feedback_log})",
                    trust_gate_client::decode::hex(&ctx.payment_id_hash)
                ),
            )
            .hint("request a fresh challenge: every payment needs its own memo"));
        }

        self.simulate(&tx, &ctx).await?;
        let sent = self
            .rpc
            .send_transaction_with_config(
                &tx,
                RpcSendTransactionConfig {
                    skip_preflight: true,
                    ..RpcSendTransactionConfig::default()
                },
            )
            .await;
        if let Err(e) = sent {
            // A concurrent request may have sent the same transaction first.
            if let Some(done) = self.landed(&signature).await? {
                return match done {
                    Ok(()) => Ok(settled(true)),
                    Err(err) => Err(failed(err).await),
                };
            }
            return Err(rpc_rejection(e.to_string()));
        }
        match self.confirm(&signature).await? {
            Ok(()) => {
                tracing::info!(%signature, %payer, "settled");
                Ok(settled(false))
            }
            Err(err) => Err(failed(err).await),
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

    async fn confirm(
        &self,
        signature: &Signature,
    ) -> Result<Result<(), TransactionError>, Rejection> {
        let start = Instant::now();
        loop {
            if let Some(done) = self.landed(signature).await? {
                return Ok(done);
            }
            if start.elapsed() > self.confirm_timeout {
                return Err(Rejection::new(
                    StatusCode::GATEWAY_TIMEOUT,
                    "confirmation_timeout",
                    format!(
                        "{signature} was sent but not confirmed within {} s",
                        self.confirm_timeout.as_secs()
                    ),
                )
                .hint("look the signature up later; a replay of the same payment returns it once it lands"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Simulates the co-signed transaction; a gate refusal becomes the decision itself.
    async fn simulate(
        &self,
        tx: &VersionedTransaction,
        ctx: &GateContext,
    ) -> Result<(), Rejection> {
        let sim = self
            .rpc
            .simulate_transaction_with_config(
                tx,
                RpcSimulateTransactionConfig {
                    sig_verify: true,
                    replace_recent_blockhash: false,
                    commitment: Some(CommitmentConfig::confirmed()),
                    ..RpcSimulateTransactionConfig::default()
                },
            )
            .await
            .map_err(|e| rpc_rejection(e.to_string()))?
            .value;
        let Some(err) = sim.err else {
            return Ok(());
        };
        let err: TransactionError = err.into();
        let logs = sim.logs.unwrap_or_default();
        if err == TransactionError::BlockhashNotFound {
            return Err(Rejection::bad(
                "blockhash_expired",
                "the transaction's recent blockhash is no longer valid",
            )
            .hint("build the transaction again with a fresh blockhash"));
        }
        let named = errors::explain(&err, &logs);
        let gate_code = named
            .as_ref()
            .filter(|n| n.program.as_deref() == Some(self.builder.ids.gate.to_string().as_str()))
            .map(|n| n.code)
            .filter(|c| (GATE_DENY_FIRST..=GATE_VALIDATION_REQUIRED).contains(c));
        if gate_code.is_some() {
            // The read-only gate gives the full decision (reason, or capability and subject).
            if let Ok(d) = self.decide(query(ctx)).await {
                if d != Decision::Allow {
                    return Err(Rejection::decision(d));
                }
            }
        }
        let what = named
            .map(|n| format!("error {} {}", n.code, n.name))
            .unwrap_or_else(|| err.to_string());
        Err(Rejection::new(
            StatusCode::PAYMENT_REQUIRED,
            "transaction_simulation_failed",
            format!(
                "the settlement would fail: {what}; {}",
                summarize_logs(&logs, 400)
            ),
        ))
    }
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

fn rpc_rejection(e: impl std::fmt::Display) -> Rejection {
    Rejection::new(
        StatusCode::BAD_GATEWAY,
        "rpc_failure",
        format!("the Solana RPC backend failed: {e}"),
    )
}
