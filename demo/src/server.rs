//! The demo resource server: GET /protected (x402 v2 with the gate), the metered routes GET
//! /metered and GET /session (`crate::metered`), GET /health, and, for a payee whose signer it
//! has, POST /refund and GET /refund/{idempotencyKey} (`crate::refund`).

use crate::challenge;
use crate::config::DemoConfig;
use crate::facilitator_client::{is_pending, FacilitatorClient};
use crate::state::{self, decision_headers, error, header, payer_of, DemoState};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use trust_gate_client::simulate::now_unix;
use trust_gate_server::paid_once::{PaidOnce, Resumed};
use trust_gate_x402::holdback::{HoldbackTerms, RefundInfo, REFUND};
use trust_gate_x402::{
    self as x402, FacilitatorRequest, PaymentPayload, PaymentRequired, X402_VERSION,
};

type App = State<Arc<DemoState>>;

/// The least time a payment id is kept (the challenges' lifetime when longer).
pub const PAYMENT_ID_TTL_SECS: u64 = 3_600;

pub fn router(state: Arc<DemoState>) -> Router {
    // The paid routes look a payment's id up before anything verifies the payment.
    let paid = Router::new()
        .route("/protected", get(protected))
        .route("/metered", get(crate::metered::metered))
        .route("/session", get(crate::metered::session))
        .route_layer(axum::middleware::from_fn_with_state(
            state.paid_once.clone(),
            PaidOnce::layer,
        ));
    let mut r = paid.route("/health", get(health)).with_state(state.clone());
    if let Some(refunds) = state.refunds.clone() {
        r = r.merge(
            Router::new()
                .route("/refund", post(crate::refund::refund))
                .route("/refund/{key}", get(crate::refund::kept))
                .with_state(refunds),
        );
    }
    trust_gate_server::layers::http_layers(r)
}

/// A running demo server; dropping it stops the server.
pub struct Server {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads the facilitator's /supported (it must be up), binds `addr` and serves.
pub async fn start(config: DemoConfig, addr: SocketAddr) -> Result<Server, String> {
    let facilitator = FacilitatorClient::new(reqwest::Client::new(), &config.facilitator_url);
    let kind = facilitator
        .supported()
        .await
        .map_err(|e| format!("FACILITATOR_URL: {e}"))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    // Payment ids are kept at least as long as a challenge stays payable.
    let ttl = Duration::from_secs(config.max_timeout_seconds.max(PAYMENT_ID_TTL_SECS));
    let paid_once = match &config.redis_url {
        Some(url) => PaidOnce::redis(url, ttl, config.payment_id_required)
            .map_err(|e| format!("DEMO_REDIS_URL: {e}"))?,
        None => PaidOnce::in_process(ttl, config.payment_id_required),
    };
    let refunds = crate::refund::Refunds::open(&config, &facilitator, &kind.network)
        .await?
        .map(Arc::new);
    let app = router(Arc::new(DemoState {
        config,
        facilitator,
        kind,
        paid_once: Arc::new(paid_once),
        refunds,
    }));
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("demo server stopped: {e}");
        }
    });
    Ok(Server { addr, task })
}

/// 402 with a fresh signed challenge in `PAYMENT-REQUIRED` (and, for people reading with
/// curl, in the body).
fn challenge_response(
    s: &DemoState,
    payer: &Pubkey,
    refusal: Option<&str>,
    holdback: Option<HoldbackTerms>,
) -> Response {
    let refund = refund_offer(s, holdback.as_ref());
    let mut pr: PaymentRequired = challenge::issue_with_terms(
        &s.config,
        &s.kind.network,
        &s.kind.fee_payer,
        payer,
        now_unix(),
        holdback,
    );
    if let Some(e) = refusal {
        pr.error = Some(e.to_string());
    }
    pr.extensions = s.extensions();
    if let (Some(ext), Some(info)) = (pr.extensions.as_mut(), refund) {
        ext.insert(REFUND.into(), info.extension());
    }
    let Ok(encoded) = x402::encode_header(&pr) else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "cannot encode the challenge",
        );
    };
    let mut h = HeaderMap::new();
    h.extend(header(x402::PAYMENT_REQUIRED, &encoded));
    h.extend(header("cache-control", "no-store"));
    (StatusCode::PAYMENT_REQUIRED, h, Json(pr)).into_response()
}

/// x402's `refund` extension for a payment that holds a share back, when this service
/// refunds held shares: the share can be asked back for as long as it is held, whole.
fn refund_offer(s: &DemoState, holdback: Option<&HoldbackTerms>) -> Option<RefundInfo> {
    let terms = holdback.filter(|t| t.held != "0")?;
    s.refunds.as_ref()?;
    Some(RefundInfo {
        refund_endpoint: s.config.refund_url(),
        window_seconds: u64::from(terms.hold_seconds),
        partial_refunds: false,
        policy_url: None,
    })
}

async fn protected(
    State(s): App,
    resumed: Option<Extension<Resumed>>,
    headers: HeaderMap,
) -> Response {
    match headers.get(x402::PAYMENT_SIGNATURE) {
        None => unpaid(&s, &headers).await,
        Some(v) => paid(&s, v.to_str().unwrap_or_default(), state::resumed(resumed)).await,
    }
}

/// No payment yet: the gate decides for the chosen payer; Allow gets a challenge.
async fn unpaid(s: &DemoState, headers: &HeaderMap) -> Response {
    let payer = match payer_of(s, headers) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    decided_challenge(s, &payer, None).await
}

/// The gate's decision for `payer` paying the demo: Allow gets a challenge stating the
/// decision's holdback terms (the payer's policy may hold a share back from this payee);
/// `refusal` is its `error` when it answers a payment that was not ours.
async fn decided_challenge(s: &DemoState, payer: &Pubkey, refusal: Option<&str>) -> Response {
    let c = &s.config;
    let answer = match s
        .facilitator
        .verify(payer, &c.payee_asset, c.price, &c.mint, c.policy_id)
        .await
    {
        Ok(a) => a,
        Err(e) => {
            return error(
                StatusCode::BAD_GATEWAY,
                "facilitator_unavailable",
                e.to_string(),
            )
        }
    };
    let approval = answer
        .headers
        .get(x402::X_GATE_DECISION)
        .is_some_and(|d| d == "RequireApproval");
    let holdback = match answer
        .body
        .get("holdback")
        .cloned()
        .map(serde_json::from_value)
    {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            return error(
                StatusCode::BAD_GATEWAY,
                "facilitator_unexpected",
                format!("the facilitator's holdback terms are not readable: {e}"),
            )
        }
    };
    match answer.status.as_u16() {
        200 => challenge_response(s, payer, refusal, holdback),
        // Above the payer's approval threshold: the payment may pass once the payer's
        // members approve it, so it gets a challenge (its paid attempt is what the
        // facilitator holds for them), with the decision headers.
        402 if approval => {
            let mut r = challenge_response(s, payer, refusal, holdback);
            r.headers_mut().extend(decision_headers(&answer.headers));
            r
        }
        // Deny or RequireValidation: no challenge, the decision headers say why.
        402 => (
            StatusCode::PAYMENT_REQUIRED,
            decision_headers(&answer.headers),
            Json(answer.body),
        )
            .into_response(),
        status => (
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
            Json(answer.body),
        )
            .into_response(),
    }
}

/// A payment: it must answer one of our challenges; the facilitator settles it. A payment
/// the facilitator settled for an earlier request (`receipt.replayed`) is served only to the
/// resend of a payment id that got no answer yet (`resumed`).
async fn paid(s: &DemoState, header_value: &str, resumed: bool) -> Response {
    let mut payload: PaymentPayload =
        match x402::decode_header(x402::PAYMENT_SIGNATURE, header_value) {
            Ok(p) => p,
            Err(e) => return error(StatusCode::BAD_REQUEST, "invalid_payment", e.to_string()),
        };
    let accepted = payload.accepted.clone();
    if payload.x402_version != X402_VERSION || !challenge::is_ours(&s.config, &accepted) {
        let payer = trust_gate_x402::GateExtension::from_requirements(&accepted)
            .ok()
            .and_then(|g| Pubkey::from_str(&g.payer_agent_asset).ok())
            .or_else(|| s.config.default_payer())
            .unwrap_or_default();
        return decided_challenge(s, &payer, Some("No matching payment requirements")).await;
    }
    // The resource is ours, whatever the client copied.
    payload.resource = Some(x402::ResourceInfo {
        url: s.config.resource_url(),
        description: None,
        mime_type: None,
    });
    let req = FacilitatorRequest {
        x402_version: X402_VERSION,
        payment_payload: payload,
        payment_requirements: accepted,
    };
    let (answer, settlement) = match s.facilitator.settle(&req).await {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_GATEWAY,
                "facilitator_unavailable",
                e.to_string(),
            )
        }
    };
    if is_pending(&answer.body) {
        return state::pending(&answer.body, &answer.headers);
    }
    let mut h = decision_headers(&answer.headers);
    if let Ok(encoded) = x402::encode_header(&settlement) {
        h.extend(header(x402::PAYMENT_RESPONSE, &encoded));
    }
    if !settlement.success {
        return (StatusCode::PAYMENT_REQUIRED, h, Json(answer.body)).into_response();
    }
    let replayed = settlement
        .receipt
        .as_ref()
        .is_some_and(|r| r["replayed"] == true);
    if replayed && !resumed {
        return state::already_used(&settlement.transaction);
    }
    h.extend(header(x402::X_PAYMENT_RECEIPT, &settlement.transaction));
    h.extend(header("cache-control", "private"));
    let receipt = settlement.receipt.clone().unwrap_or(Value::Null);
    let body = json!({
        "report": "trust-gate demo report: the gate allowed this payment and settled it in one transaction",
        "paidBy": settlement.payer,
        "transaction": settlement.transaction,
        "receipt": receipt,
    });
    (StatusCode::OK, h, Json(body)).into_response()
}

async fn health(State(s): App) -> Json<Value> {
    let c = &s.config;
    Json(json!({
        "ok": true,
        "service": "trust-gate-demo",
        "version": env!("CARGO_PKG_VERSION"),
        "network": s.kind.network,
        "facilitator": c.facilitator_url,
        "feePayer": s.kind.fee_payer.to_string(),
        "serviceKey": solana_sdk::signer::Signer::pubkey(c.service_key.as_ref()).to_string(),
        "payee": c.payee_asset.to_string(),
        "payTo": c.pay_to.to_string(),
        "price": {"amount": c.price.to_string(), "mint": c.mint.to_string()},
        "refundEndpoint": s.refunds.as_ref().map(|_| c.refund_url()),
        "counterparties": c.counterparties.iter().map(|p| json!({"tier": p.tier, "asset": p.asset.to_string(), "funding": p.funding})).collect::<Vec<_>>(),
    }))
}
