//! POST /settle: authenticate the challenge, verify the transaction, co-sign, send with
//! preflight (the cluster's simulation), confirm. A replay of a settled transaction returns
//! the first signature.
//!
//! Ed25519 signatures are deterministic, so co-signing the same message again gives the same
//! transaction signature, whose status the cluster knows. The signature is also written for
//! the payment before the send (see [`crate::payment_records`]), so that a retry on any
//! replica answers without sending, and a second transaction of the same payment waits while
//! the first may still land.
//!
//! Settlements of one payer agent run one at a time, across replicas with Redis, so each
//! simulation sees the counters the previous one committed; a settlement that still fails on
//! chain is named exactly as /verify names a refusal (the Deny's code, name and headers). The
//! store failing before the send is 503 `lock_store_unavailable`: nothing is sent without the
//! lock.
//!
//! Before the payer's turn is asked for, the signer must be one that may act for the payer
//! agent ([`crate::payer_signers`]: a stranger holds no victim's turn), the payer must be
//! within its rate limit, and no more than the bound may already wait for its turn. A
//! settlement with a unit price is simulated in its turn before the send, and its unit limit
//! held to the units used ([`crate::budget`]): one more RPC call, only then.

use super::refusals::{already_settled, in_progress, log_exists, unavailable};
use super::TrustGate;
use crate::adapter::{self, GateContext};
use crate::answer::{Detail, SettleReply};
use crate::budget;
use crate::inspect::{self, Expected, Verified};
use crate::payer_locks::LockError;
use crate::payer_signers;
use crate::payment_records::{Claim, PaymentRecord, PendingRecord};
use crate::reject::{Reason, Rejection};
use crate::service::{co_signature, Facilitator, Outcome};
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client_api::config::RpcSimulateTransactionConfig;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::transaction::{TransactionError, VersionedTransaction};
use trust_gate_client::chain;
use trust_gate_client::settle::ComputeBudget;
use trust_gate_x402::FacilitatorRequest;

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

/// What the reads before a send found.
enum Ready {
    /// Send it.
    Send,
    /// Nothing to send: an earlier send of it landed.
    Done(Sent),
    /// Its simulation failed: never sent.
    Refused(TransactionError, Vec<String>),
    /// Its simulation used far fewer units than the priced limit it requests: never sent.
    LimitTooHigh(Rejection),
}

fn landed_as(done: Result<(), TransactionError>, replayed: bool) -> Sent {
    match done {
        Ok(()) => Sent::Landed { replayed },
        Err(err) => Sent::Failed(err),
    }
}

impl TrustGate {
    /// The pay adapter with this facilitator's expectations.
    pub async fn context(
        f: &Facilitator,
        req: &FacilitatorRequest,
    ) -> Result<GateContext, Rejection> {
        let network = f.caip2().await?;
        let facilitator = f.facilitator();
        adapter::read(req, f.expectations(&facilitator, &network))
    }

    /// Decodes and verifies the payment's transaction against `ctx` (no RPC writes).
    pub async fn inspect(
        f: &Facilitator,
        req: &FacilitatorRequest,
        ctx: &GateContext,
    ) -> Result<Verified, Rejection> {
        let tx = inspect::decode(&req.payment_payload.payload.transaction)?;
        let (token_program, decimals) = f.mint(&ctx.mint).await?;
        let collection = f.collection().await?;
        let facilitator = f.facilitator();
        let run = |tables: &[solana_sdk::message::AddressLookupTableAccount]| {
            inspect::verify(
                tx.clone(),
                Expected {
                    builder: &f.chain.builder,
                    ctx,
                    facilitator: &facilitator,
                    collection: &collection,
                    token_program,
                    decimals,
                    tables,
                    compute: &f.settings.compute,
                },
            )
        };
        match run(&f.tables().await) {
            // A table created after boot: read the tables again once.
            Err(r) if r.reason == Reason::LookupTableNotAllowed => {
                f.refresh_tables().await?;
                run(&f.tables().await)
            }
            other => other,
        }
    }

    /// The whole settlement.
    pub async fn settle_payment(
        f: &Facilitator,
        req: &FacilitatorRequest,
    ) -> Result<SettleReply, Rejection> {
        let Some(keypair) = f.key.keypair() else {
            return Err(Rejection::not_signing("settle"));
        };
        let ctx = TrustGate::context(f, req).await?;
        let verified = TrustGate::inspect(f, req, &ctx).await?;
        let settlement = &verified.settlement;
        // Nothing of the payer's is held for a signer that may not act for it, nor past the
        // payer's rate (counted only for its own signers, so a stranger spends none of it).
        TrustGate::authorize_payer(f, &ctx.payer_asset, &settlement.payer_signer).await?;
        f.limit_payer(&ctx.payer_asset, || {
            format!(
                "payer agent {} sent more settlements than this facilitator takes from one payer (RATE_LIMIT_PER_PAYER); nothing was sent (no fee)",
                ctx.payer_asset
            )
        })?;
        // A payment above the approval threshold is held for its approval (the payer signed
        // it, so nobody else fills the payer's list); one that used its approval forgets it.
        let terms = settlement.approval_terms();
        let used = settlement.approval;
        match TrustGate::send_settlement(f, keypair, verified, &ctx).await {
            Err(r) => Err(f
                .held(
                    r,
                    &terms,
                    "payment",
                    crate::service::holds::resource(Some(&ctx.resource_url)),
                )
                .await),
            Ok(s) => {
                if let Some(a) = used.filter(|_| !s.pending) {
                    f.forget_approval(&a.address, &terms.payer_asset).await;
                }
                Ok(s)
            }
        }
    }

    /// The checked settlement `tx` of a payer whose signer may act for it: co-signed, sent in
    /// the payer's turn (or found sent before) and its outcome named.
    async fn send_settlement(
        f: &Facilitator,
        keypair: &solana_sdk::signature::Keypair,
        verified: Verified,
        ctx: &GateContext,
    ) -> Result<SettleReply, Rejection> {
        let Verified {
            mut tx,
            gate_index,
            settlement,
        } = verified;
        let payer = settlement.payer_signer;
        let signature = co_signature(&tx, keypair);
        tx.signatures[0] = signature;
        let feedback_log = f
            .chain
            .builder
            .pda
            .feedback_log(&f.facilitator(), &ctx.payment_id_hash);
        let settled = |replayed, pending| SettleReply {
            transaction: signature.to_string(),
            payer,
            pending,
            detail: Detail::Receipt {
                payment_id_hash: ctx.payment_id_hash,
                feedback_log,
                replayed,
            },
        };
        let record = PendingRecord {
            signature,
            blockhash: *tx.message.recent_blockhash(),
        };
        let records = &f.payment_records;
        let id = &ctx.payment_id_hash;

        // Both of the payment's records, in one round trip.
        let (pending, earlier) = records.lookup(id).await.map_err(unavailable)?;
        // A payment id settles once, even after its log is closed (the chain then refuses
        // only the same deadline): the record of an earlier settlement refuses another.
        if let Some(earlier) = earlier {
            let by = earlier
                .signature
                .or(earlier.receipt.as_ref().and_then(|r| r.signature));
            if by != Some(signature) {
                let closed = if earlier.receipt.is_some() {
                    ", its records since closed"
                } else {
                    ""
                };
                let by = by.map_or_else(
                    || "an earlier transaction".to_string(),
                    |s| format!("transaction {s}{closed}"),
                );
                return Err(already_settled(id, &by));
            }
        }

        // A retry of a settlement that a replica (this one or another) sent: its outcome,
        // without sending again or waiting for the payer's turn.
        let replayed = match pending {
            Some(r) if r == record => f.landed(&signature).await?,
            _ => None,
        };
        let outcome = match replayed {
            Some(done) => landed_as(done, true),
            None => {
                let turn = f.turns.lock(ctx.payer_asset).await.map_err(|e| match e {
                    LockError::Unavailable(e) => unavailable(e),
                    LockError::Busy(busy) => Rejection::new(
                        Reason::PayerBusy,
                        format!("{busy} (MAX_WAITING_PER_PAYER); nothing was sent (no fee)"),
                    )
                    .retry_after(1)
                    .hint("retry in a moment: one payer's settlements run one at a time"),
                })?;
                let outcome = TrustGate::settle_in_turn(
                    f,
                    &tx,
                    &record,
                    ctx,
                    gate_index,
                    &settlement.compute_budget,
                )
                .await;
                turn.release().await;
                outcome?
            }
        };
        if matches!(outcome, Sent::Landed { .. }) {
            let record = PaymentRecord {
                signature: Some(signature),
                payer_asset: Some(ctx.payer_asset),
                ..PaymentRecord::default()
            };
            if let Err(e) = records.keep(id, &record).await {
                // Landed all the same; the chain still holds the payment id until its log
                // closes, and /receipt falls back to the chain.
                tracing::warn!(%signature, error = %e, "could not keep the payment's record");
            }
        }
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
            Sent::Failed(err) => Err(TrustGate::failure(f, &signature, err, gate_index, ctx).await),
            // Named after the turn: the payer's next settlement need not wait for it.
            Sent::Refused(err, logs) => {
                Err(TrustGate::refusal(f, err, &logs, gate_index, &feedback_log, ctx).await)
            }
        }
    }

    /// Whether `signer` may act for the payer agent `asset` (see [`crate::payer_signers`]):
    /// from the cache when it accepts the signer, else from the AgentAccount and the asset,
    /// read in one call (cut at the send timeout) and cached.
    async fn authorize_payer(
        f: &Facilitator,
        asset: &Pubkey,
        signer: &Pubkey,
    ) -> Result<(), Rejection> {
        if f.caches
            .agents
            .get(asset)
            .is_some_and(|a| a.may_sign(signer))
        {
            return Ok(());
        }
        let keys = [f.chain.builder.pda.agent_account(asset), *asset];
        let read = f
            .within(async {
                chain::accounts(&f.chain.rpc, &keys)
                    .await
                    .map_err(Rejection::rpc)
            })
            .await?;
        let seen = |i: usize| read.get(i).and_then(Option::as_ref);
        let agent =
            payer_signers::read(&f.chain.builder.ids.agent_registry, asset, seen(0), seen(1))?;
        f.caches.agents.put(*asset, agent);
        payer_signers::judge(asset, &agent, signer)
    }

    /// The payer's turn: claim the payment for this transaction, send it with preflight (the
    /// cluster simulates it; a gate refusal comes back as the simulation's error) and read
    /// its status: two RPC round trips when all goes well; a priced settlement is simulated
    /// first, to hold its unit limit to the units it uses (a third). A replay or a payment
    /// settled by another transaction is recognized from the send's own error, never by
    /// reads up front.
    ///
    /// How long it may hold the payer's lock is bounded (see `Config::lock_ttl`): the reads
    /// before the send within one send timeout, the send within another, then the
    /// confirmation within its timeout or, after a refusal, one status read within a send
    /// timeout.
    async fn settle_in_turn(
        f: &Facilitator,
        tx: &VersionedTransaction,
        record: &PendingRecord,
        ctx: &GateContext,
        gate_index: u8,
        budget: &ComputeBudget,
    ) -> Result<Sent, Rejection> {
        let (records, id) = (&f.payment_records, &ctx.payment_id_hash);
        let signature = &record.signature;
        let claim = records.claim(id, record).await.map_err(unavailable)?;
        // This very transaction was claimed before, so perhaps sent (by any replica).
        let retry = matches!(claim, Claim::Same);
        let ready = f
            .within(TrustGate::before_send(f, claim, tx, record, ctx, budget))
            .await?;
        let refused = match ready {
            Ready::Done(sent) => return Ok(sent),
            Ready::LimitTooHigh(r) => {
                // Never sent: a transaction with a lower limit may take the payment at once.
                records.forget(id, record).await;
                return Err(r);
            }
            Ready::Refused(err, logs) => Some((err, logs)),
            Ready::Send => f.send(tx).await,
        };
        let Some((err, logs)) = refused else {
            // Sent, or perhaps sent (no answer from the RPC: the transaction may have
            // reached the cluster): its outcome, or pending.
            return Ok(match f.confirm(signature).await {
                Outcome::Landed(done) => landed_as(done, false),
                Outcome::Pending => Sent::Pending,
            });
        };
        // The same transaction may have landed already (a retry, or a concurrent
        // request): its status says so, and the first signature is the answer.
        if let Some(done) = f.within(f.landed(signature)).await? {
            return Ok(landed_as(done, true));
        }
        // A retry of this very transaction, refused because the payment's log exists: the
        // first attempt sent it and it landed, though its status is not visible yet. Its
        // outcome once it is, else pending; never a refusal the client would pay again for.
        if retry && log_exists(&err, gate_index) {
            return Ok(match f.confirm(signature).await {
                Outcome::Landed(done) => landed_as(done, true),
                Outcome::Pending => Sent::Pending,
            });
        }
        // Refused in preflight, so never sent: another transaction of the payment may go.
        records.forget(id, record).await;
        Ok(Sent::Refused(err, logs))
    }

    /// The reads before the send. This transaction was claimed before (a retry): landed,
    /// its outcome; not yet, its replica may have died before the send, so it is sent again
    /// (the same signature, of which the cluster lands at most one). Another transaction of
    /// the payment was claimed: see [`Self::take_over`]. Then, with a unit price, the
    /// simulation that measures the units it uses.
    async fn before_send(
        f: &Facilitator,
        claim: Claim,
        tx: &VersionedTransaction,
        record: &PendingRecord,
        ctx: &GateContext,
        budget: &ComputeBudget,
    ) -> Result<Ready, Rejection> {
        match claim {
            Claim::Ours => {}
            Claim::Same => {
                if let Some(done) = f.landed(&record.signature).await? {
                    return Ok(Ready::Done(landed_as(done, true)));
                }
            }
            Claim::Other(earlier) => TrustGate::take_over(f, &earlier, record, ctx).await?,
        }
        // Without a price the limit costs the fee payer nothing: no simulation.
        if !budget::priced(budget) {
            return Ok(Ready::Send);
        }
        let config = RpcSimulateTransactionConfig {
            sig_verify: false,
            replace_recent_blockhash: false,
            commitment: Some(CommitmentConfig::confirmed()),
            ..RpcSimulateTransactionConfig::default()
        };
        let sim = f
            .chain
            .rpc
            .simulate_transaction_with_config(tx, config)
            .await
            .map_err(Rejection::rpc)?
            .value;
        if let Some(err) = sim.err {
            return Ok(Ready::Refused(err.into(), sim.logs.unwrap_or_default()));
        }
        let used = sim
            .units_consumed
            .ok_or_else(|| Rejection::rpc("the simulation did not say how many units it used"))?;
        // A settlement's payment part is its instructions after the ComputeBudget ones: three,
        // four with a held share's transfer.
        let held = ctx.holdback_quote().is_some_and(|q| q.held != 0);
        let limit = budget::effective_limit(budget, if held { 4 } else { 3 });
        Ok(
            match budget::check_measured(limit, used, &f.settings.compute) {
                Ok(()) => Ready::Send,
                Err(r) => Ready::LimitTooHigh(r),
            },
        )
    }

    /// Another transaction of this payment was claimed before `ours`. While its blockhash is
    /// valid it may still land, so this one waits (409 `settlement_in_progress`), unless it
    /// has landed (409 `payment_already_settled`) or failed; once its blockhash has expired
    /// it can no longer land, and `ours` takes the payment (if it did land, the payment's
    /// feedback log exists and the preflight says so).
    async fn take_over(
        f: &Facilitator,
        earlier: &PendingRecord,
        ours: &PendingRecord,
        ctx: &GateContext,
    ) -> Result<(), Rejection> {
        let id = &ctx.payment_id_hash;
        let live = f
            .chain
            .rpc
            .is_blockhash_valid(&earlier.blockhash, CommitmentConfig::processed())
            .await
            .map_err(Rejection::rpc)?;
        if live {
            match f.landed(&earlier.signature).await? {
                Some(Ok(())) => {
                    let by = format!("transaction {}", earlier.signature);
                    return Err(already_settled(id, &by));
                }
                Some(Err(_)) => {}
                None => return Err(in_progress(id, &earlier.signature)),
            }
        }
        match f.payment_records.replace(id, earlier, ours).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(in_progress(id, &earlier.signature)),
            Err(e) => Err(unavailable(e)),
        }
    }
}
