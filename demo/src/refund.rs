//! The payee's side of x402's `refund` extension for a held share (docs/holdback.md, "The
//! refund extension"): `POST /refund` takes a payer's signed `RefundRequest` and gives the
//! whole held share of that payment back with the gate's `refund_holdback`, signed by the
//! payee; `GET /refund/{idempotencyKey}` answers a request already decided.
//!
//! Served only by a demo that has its payee's signer (`DemoConfig::payee_signer`, the held
//! service), and advertised only in the 402 of a payment that holds a share back: the share is
//! the only thing this payee can give back without moving its own funds off chain, and the
//! gate gives it back whole, to the payer's wallet, or not at all.

use crate::config::DemoConfig;
use crate::facilitator_client::FacilitatorClient;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use solana_commitment_config::CommitmentConfig;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use trust_gate_client::held::{self, HeldBy};
use trust_gate_client::holdback::{HeldPayment, HoldState};
use trust_gate_client::{chain, receipts, settle, Builder, Overrides, ProgramIds, RpcClient};
use trust_gate_server::error::ApiError;
use trust_gate_x402::holdback::{
    self as wire, CheckedRefund, DenialReason, RefundReceiptPayload, RefundRequest, RefundResponse,
    REFUND_RECEIPT_VERSION,
};

/// The most decided requests kept for their idempotency keys; past it the oldest goes.
pub const MAX_KEPT: usize = 10_000;
/// How long a decided request is kept: longer than the longest hold a schedule may set
/// (30 days), so a key is answered alike for as long as its payment could be refunded.
pub const KEEP: Duration = Duration::from_secs(31 * 86_400);

/// What the refund routes need: the cluster, the gate, the payee's signer and the answers
/// given.
pub struct Refunds {
    rpc: RpcClient,
    builder: Builder,
    payee: Arc<Keypair>,
    /// The payee agent whose held shares it gives back.
    payee_asset: Pubkey,
    /// The facilitator's network (CAIP-2): the only one its payments settled on.
    network: String,
    /// Signs the refund receipts (the service key that signs the challenges).
    service_key: Arc<Keypair>,
    /// The resource the payments paid for, named in the receipts.
    resource_url: String,
    /// Held for the whole of a request's decision, so that one key sent twice at once is
    /// decided once (and two keys for one payment meet the chain one after the other).
    /// Refunds are rare; a demo need not decide them in parallel.
    book: tokio::sync::Mutex<Book>,
}

impl Refunds {
    /// The refund routes' state for `config` on the facilitator's `network` (CAIP-2); `None`
    /// when the config has no payee signer. The program ids are the network's, with the
    /// `*_PROGRAM_ID` overrides of the environment.
    pub async fn open(
        config: &DemoConfig,
        facilitator: &FacilitatorClient,
        network: &str,
    ) -> Result<Option<Refunds>, String> {
        let Some(payee) = config.payee_signer.clone() else {
            return Ok(None);
        };
        let rpc_url = match &config.rpc_url {
            Some(u) => u.clone(),
            None => facilitator_rpc(facilitator).await?,
        };
        let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
        let ids = ProgramIds::for_network(trust_gate_pay::exact::network_of(network))
            .with_overrides(overrides);
        let builder = Builder::new(ids).map_err(|e| format!("refunds: {e}"))?;
        Ok(Some(Refunds {
            rpc: RpcClient::new_with_commitment(rpc_url, CommitmentConfig::confirmed()),
            builder,
            payee,
            payee_asset: config.payee_asset,
            network: network.to_string(),
            service_key: config.service_key.clone(),
            resource_url: config.resource_url(),
            book: tokio::sync::Mutex::new(Book::default()),
        }))
    }
}

/// The JSON-RPC the facilitator reads, as its /healthz names it (an origin: enough for a
/// localnet, not for an RPC whose key is in its path; set `DemoConfig::rpc_url` then).
async fn facilitator_rpc(f: &FacilitatorClient) -> Result<String, String> {
    let url = format!("{}/healthz", f.url);
    let health: serde_json::Value = async {
        f.http
            .get(&url)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await
    }
    .await
    .map_err(|e| format!("refunds: cannot read the facilitator's RPC from {url}: {e}"))?;
    health["rpcUrl"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("refunds: {url} names no rpcUrl; set the demo's rpc_url"))
}

/// The answers given, by idempotency key, bound to the request's digest: bounded in count
/// and age. Forgetting a key is safe: the chain pays a share out once, so a key decided again
/// is never a second transfer (it is then `already_refunded`).
#[derive(Default)]
struct Book {
    kept: HashMap<String, Kept>,
    order: VecDeque<(String, Instant)>,
}

struct Kept {
    digest: [u8; 32],
    response: RefundResponse,
}

impl Book {
    fn get(&mut self, key: &str) -> Option<&Kept> {
        self.expire();
        self.kept.get(key)
    }

    fn keep(&mut self, key: String, digest: [u8; 32], response: RefundResponse) {
        self.expire();
        while self.kept.len() >= MAX_KEPT {
            let Some((old, _)) = self.order.pop_front() else {
                break;
            };
            self.kept.remove(&old);
        }
        self.order.push_back((key.clone(), Instant::now()));
        self.kept.insert(key, Kept { digest, response });
    }

    fn expire(&mut self) {
        while let Some((key, at)) = self.order.front() {
            if at.elapsed() < KEEP {
                break;
            }
            self.kept.remove(key);
            self.order.pop_front();
        }
    }
}

/// POST /refund: a payer's signed request for its held share. Every decision is a
/// `RefundResponse` (200), kept for its idempotency key: `executed` with the refund's
/// transaction and the service's signed receipt, or `denied` with the reason. A request that
/// is not one (400 naming the field, or `payerSignature`), a key reused for another request
/// (409) and a cluster that does not answer (502) are errors, not kept.
pub async fn refund(
    State(r): State<Arc<Refunds>>,
    body: Result<Json<RefundRequest>, JsonRejection>,
) -> Response {
    // axum's rejection names the field path (`paymentReference.txHash: ...`); a body that
    // is not a request is 400 as every other bad field here (axum says 422).
    let req = match body {
        Ok(Json(req)) => req,
        Err(e) => {
            let status = match e.status() {
                StatusCode::UNPROCESSABLE_ENTITY => StatusCode::BAD_REQUEST,
                other => other,
            };
            return ApiError::new(status, "input_invalid", e.body_text()).into_response();
        }
    };
    let checked = match req.check() {
        Ok(c) => c,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let signer = match wire::verify_payer_signature(&req) {
        Ok(k) => k,
        Err(e) => {
            return ApiError::new(StatusCode::BAD_REQUEST, "payer_signature_invalid", e.to_string())
                .with_hint("sign the request without payerSignature as a compact JWS (EdDSA, kid did:pkh:solana:<reference>:<payer wallet>) and change nothing after")
                .into_response()
        }
    };
    // Decided in a task of its own: a client that hangs up, or the request's timeout, must
    // not cut a refund between its transaction and the answer kept for its key.
    let task = tokio::spawn(async move { decide_once(&r, req, checked, signer).await });
    task.await
        .unwrap_or_else(|e| ApiError::internal(e).into_response())
}

/// The answer kept for the request's key, or the decision on it, kept.
async fn decide_once(
    r: &Refunds,
    req: RefundRequest,
    checked: CheckedRefund,
    signer: Pubkey,
) -> Response {
    let digest = req.digest();
    let mut book = r.book.lock().await;
    if let Some(k) = book.get(&req.idempotency_key) {
        if k.digest == digest {
            return Json(k.response.clone()).into_response();
        }
        return ApiError::new(
            StatusCode::CONFLICT,
            "idempotency_key_reused",
            "idempotencyKey: this key was used for another refund request",
        )
        .with_hint("a new request takes a new idempotency key; the same request again gets its first answer")
        .into_response();
    }
    match decide(r, &req, &checked, signer).await {
        Ok(response) => {
            book.keep(req.idempotency_key.clone(), digest, response.clone());
            Json(response).into_response()
        }
        Err(e) => e.into_response(),
    }
}

/// GET /refund/{idempotencyKey}: the answer a request with that key got (404 for none).
pub async fn kept(State(r): State<Arc<Refunds>>, Path(key): Path<String>) -> Response {
    let found = r.book.lock().await.get(&key).map(|k| k.response.clone());
    match found {
        Some(response) => Json(response).into_response(),
        None => ApiError::not_found(format!("no refund request with the idempotencyKey {key:?}"))
            .into_response(),
    }
}

/// The decision on a well-formed request signed by `signer`, in the order a payer can act on:
/// which payment, whose, still held, how much, where to.
async fn decide(
    r: &Refunds,
    req: &RefundRequest,
    checked: &CheckedRefund,
    signer: Pubkey,
) -> Result<RefundResponse, ApiError> {
    let denied = |reason| Ok(RefundResponse::denied(&req.amount, reason));
    if req.payment_reference.network != r.network {
        return denied(DenialReason::UnknownPayment);
    }
    let Some(p) = held_payment(r, &checked.tx).await? else {
        return denied(DenialReason::UnknownPayment);
    };
    // The wallet that paid (the settlement's transfer authority) and nobody else.
    if signer != p.payer_wallet {
        return denied(DenialReason::NotPayer);
    }
    match p.state {
        HoldState::Refunded | HoldState::Upheld => return denied(DenialReason::AlreadyRefunded),
        HoldState::Released | HoldState::Rejected | HoldState::Lapsed => {
            return denied(DenialReason::OutsideWindow)
        }
        HoldState::Held | HoldState::Disputed => {}
    }
    // The window advertised is the hold, on the cluster's clock (the one the gate reads).
    let now = chain::unix_time(&r.rpc).await.map_err(ApiError::rpc)?;
    if now >= p.hold_until {
        return denied(DenialReason::OutsideWindow);
    }
    if checked.amount > p.held {
        return denied(DenialReason::AmountExceedsSettled);
    }
    // The gate refunds the whole share to the payer's wallet, or nothing.
    if checked.amount < p.held || checked.refund_to.is_some_and(|to| to != p.payer_wallet) {
        return denied(DenialReason::PolicyDenied);
    }
    let (to, tx) = send_refund(r, &p).await?;
    let payload = RefundReceiptPayload {
        version: REFUND_RECEIPT_VERSION,
        network: r.network.clone(),
        resource_url: r.resource_url.clone(),
        payer: p.payer_wallet.to_string(),
        issued_at: now,
        payment_tx_hash: checked.tx.to_string(),
        refund_tx_hash: tx.to_string(),
        amount: p.held.to_string(),
        asset: p.mint.to_string(),
        refund_to: to.to_string(),
        escrow: p.escrow.to_string(),
    };
    let receipt = wire::sign_refund_receipt(&r.service_key, &payload)?;
    Ok(RefundResponse::executed(p.held, &tx, receipt))
}

/// The held payment to this payee that transaction `tx` settled: among the payee's open held
/// payments, the one whose emit_feedback (with its strict gate and transfer) is in `tx`.
async fn held_payment(r: &Refunds, tx: &Signature) -> Result<Option<HeldPayment>, ApiError> {
    let Some(landed) = receipts::transaction(&r.rpc, tx)
        .await
        .map_err(ApiError::rpc)?
    else {
        return Ok(None);
    };
    let gate = r.builder.ids.gate;
    let held = held::list(&r.rpc, &gate, HeldBy::Payee(r.payee_asset))
        .await
        .map_err(ApiError::rpc)?;
    Ok(held.into_iter().map(|l| l.payment).find(|p| {
        receipts::settled_in(&gate, &landed, &p.facilitator, &p.payment_id_hash).is_some()
    }))
}

/// `[create the payer wallet's token account if missing, refund_holdback]`, signed and paid by
/// the payee: the token account credited and the transaction.
async fn send_refund(r: &Refunds, p: &HeldPayment) -> Result<(Pubkey, Signature), ApiError> {
    let payee = r.payee.pubkey();
    let (to, create) = p.payout_account(true, &payee)?;
    let ixs = [create, r.builder.refund_holdback(&payee, p, &to)];
    let blockhash = r.rpc.get_latest_blockhash().await.map_err(ApiError::rpc)?;
    let tx = settle::transaction(&payee, &ixs, &[], blockhash, &[r.payee.as_ref()])?;
    // Not kept when it fails: the same key sent again decides again, and finds the share
    // refunded if this transaction landed after all.
    let sig = settle::send(&r.rpc, &tx).await.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "refund_failed",
            format!("the refund transaction failed: {e}"),
        )
    })?;
    Ok((to, sig))
}
