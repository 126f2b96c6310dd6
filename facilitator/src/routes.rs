//! The HTTP surface: thin handlers that parse, call the facilitator, and shape the answer
//! (status, decision headers, x402 bodies), and the per-address rate limit in front of them.

use crate::limits::retry_after_secs;
use crate::redact;
use crate::reject::{Reason, Rejection};
use crate::schemes::{self, Call, Registry, Scheme, Verified};
use crate::service::dispute::DisputeRequest;
use crate::service::holds::{parse_key, Held};
use crate::service::records::parse_receipt_hash;
use crate::service::Facilitator;
use crate::verify::{self, VerifyBody};
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use trust_gate_client::approvals::{HeldPayment, HeldPayments};
use trust_gate_client::decode::{Decision, DecisionView};
pub use trust_gate_server::layers::{http_layers, BODY_LIMIT, REQUEST_TIMEOUT};
use trust_gate_x402::holdback::HoldbackTerms;
use trust_gate_x402::{self as x402, SettlementResponse};

type App = State<Arc<Facilitator>>;

/// The facilitator server's routes, by their first path segment (`/receipt` stands for
/// `/receipt/{hash}`, `/approvals` for `/approvals/{id}` too), in the order `trust-gate up`
/// and the README list them.
pub const ROUTES: [&str; 8] = [
    "/verify",
    "/settle",
    "/dispute",
    "/receipt",
    "/payments",
    "/approvals",
    "/supported",
    "/healthz",
];

/// POST /verify and GET /receipt only (the mountable part).
pub fn mount_routes(f: Arc<Facilitator>) -> Router {
    Router::new()
        .route("/verify", post(verify))
        .route("/receipt/{hash}", get(receipt))
        .with_state(f)
}

/// Every route of the facilitator server.
pub fn all_routes(f: Arc<Facilitator>) -> Router {
    Router::new()
        .route("/settle", post(settle))
        .route("/dispute", post(dispute))
        .route("/supported", get(supported))
        .route("/approvals", get(approvals))
        .route("/approvals/{id}", get(approval))
        .route("/payments", get(payments))
        .route("/healthz", get(healthz))
        .with_state(f.clone())
        .merge(mount_routes(f))
}

/// The per-address rate limit on every route but /healthz (which must answer a load
/// balancer while a caller floods). The address is the HTTP peer's, from the connection
/// (`ConnectInfo`; a router served without it is not limited here): behind a reverse proxy
/// it is the proxy's, so the proxy limits its own clients.
pub fn limit_callers(router: Router, f: Arc<Facilitator>) -> Router {
    router.layer(middleware::from_fn_with_state(f, limit_caller))
}

async fn limit_caller(State(f): App, req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let Some(ip) = peer.filter(|_| req.uri().path() != "/healthz") else {
        return next.run(req).await;
    };
    let Err(wait) = f.limits.caller.check(&ip) else {
        return next.run(req).await;
    };
    let r = Rejection::new(
        Reason::CallerRateLimited,
        format!(
            "{ip} sent more requests than this facilitator takes from one address (RATE_LIMIT_PER_ADDRESS); nothing was done"
        ),
    )
    .retry_after(retry_after_secs(wait))
    .hint("retry after the Retry-After seconds");
    tracing::info!(%ip, "caller rate limited");
    match req.uri().path() {
        "/settle" => {
            let network = f.caip2().await.unwrap_or_default();
            settle_failure(&f, r, network)
        }
        "/verify" => verify_rejection(&f, r),
        _ => r.into_response(),
    }
}

/// The decision headers of the seed: X-Gate-Decision, and the reason or capability; for
/// RequireApproval, the pending approval's id (`held`).
pub fn decision_headers(d: &Decision, network: &str, held: Option<&Held>) -> HeaderMap {
    let mut h = HeaderMap::new();
    let mut put = |k: &'static str, v: String| {
        if let Ok(v) = HeaderValue::from_str(&v) {
            h.insert(k, v);
        }
    };
    match DecisionView::from(d) {
        DecisionView::Allow => put(x402::X_GATE_DECISION, "Allow".into()),
        DecisionView::Deny {
            reason_code,
            reason_name,
        } => {
            put(x402::X_GATE_DECISION, "Deny".into());
            put(x402::X_PAYMENT_REQUIRED, "denied".into());
            put(x402::X_PAYMENT_REASON_CODE, reason_code.to_string());
            put(x402::X_PAYMENT_REASON_NAME, reason_name);
        }
        DecisionView::RequireValidation {
            capability_hash,
            subject,
        } => {
            put(x402::X_GATE_DECISION, "RequireValidation".into());
            put(x402::X_PAYMENT_REQUIRED, "validation".into());
            put(x402::X_CAPABILITY_REQUIRED, capability_hash);
            put(x402::X_CAPABILITY_SUBJECT, subject);
        }
        DecisionView::RequireApproval => {
            put(x402::X_GATE_DECISION, "RequireApproval".into());
            put(x402::X_PAYMENT_REQUIRED, "approval".into());
            if let Some(h) = held {
                put(x402::X_GATE_APPROVAL_ID, h.id.to_string());
            }
        }
    }
    put(x402::X_PAYMENT_NETWORK, network.into());
    h
}

/// The body's `approval` of a payment held for one: its id and the record kept (null when
/// none was: a request the payer did not sign).
fn approval_json(held: &Held) -> Value {
    json!({"id": held.id.to_string(), "pending": held.record})
}

/// A /verify answer for a decision: 200 Allow, 402 otherwise.
fn decision_response(
    f: &Facilitator,
    d: &Decision,
    payer: Option<String>,
    held: Option<&Held>,
    holdback: Option<&HoldbackTerms>,
) -> Response {
    let view = DecisionView::from(d);
    let mut body = json!({"isValid": *d == Decision::Allow, "decision": view});
    match &view {
        DecisionView::Allow => {}
        DecisionView::Deny { reason_name, .. } => {
            body["invalidReason"] = reason_name.clone().into()
        }
        DecisionView::RequireValidation { .. } => {
            body["invalidReason"] = "RequireValidation".into()
        }
        DecisionView::RequireApproval => body["invalidReason"] = "RequireApproval".into(),
    }
    if let Some(p) = payer {
        body["payer"] = p.into();
    }
    if let Some(h) = held {
        body["approval"] = approval_json(h);
    }
    if let Some(t) = holdback {
        body["holdback"] = serde_json::to_value(t).unwrap_or_default();
    }
    let status = if *d == Decision::Allow {
        StatusCode::OK
    } else {
        StatusCode::PAYMENT_REQUIRED
    };
    (
        status,
        decision_headers(d, f.chain.network.name(), held),
        Json(body),
    )
        .into_response()
}

/// An x402 /verify refusal: the x402 fields and the error envelope in one body.
fn verify_rejection(f: &Facilitator, r: Rejection) -> Response {
    if let Some(d) = &r.decision {
        return decision_response(f, d, None, r.held.as_deref(), None);
    }
    let mut body = json!({
        "isValid": false,
        "invalidReason": r.wire_reason(),
        "invalidMessage": r.message,
        "error": r.wire_reason(),
        "message": r.message,
    });
    if let Some(h) = &r.hint {
        body["hint"] = h.clone().into();
    }
    if let Some(extra) = &r.extra {
        body["extra"] = (**extra).clone();
    }
    let mut res = (r.status(), Json(body)).into_response();
    r.put_retry_after(&mut res);
    res
}

/// The scheme an x402 request names (read once, see [`Registry::route`]) and the request.
fn route<'a>(
    body: &'a [u8],
    headers: &'a HeaderMap,
) -> Result<(&'static dyn Scheme, Call<'a>), Rejection> {
    let scheme = schemes::registry().route(body)?;
    Ok((scheme, Call { body, headers }))
}

/// The decision-only body goes to the gate's decision; an x402 request, to its scheme.
async fn verify(State(f): App, headers: HeaderMap, body: Bytes) -> Response {
    if !Registry::is_x402(&body) {
        return decide(&f, &body).await;
    }
    let verified = match route(&body, &headers) {
        Ok((scheme, call)) => scheme.verify(&f, call).await,
        Err(r) => Err(r),
    };
    match verified {
        Ok(Verified::Valid { payer, extra }) => {
            let mut body = json!({"isValid": true, "payer": payer.to_string()});
            if let Some(extra) = extra {
                body["extra"] = extra;
            }
            Json(body).into_response()
        }
        Ok(Verified::Decided(v)) => decision_response(
            &f,
            &v.decision,
            v.payer.map(|p| p.to_string()),
            v.held.as_ref(),
            v.holdback.as_ref(),
        ),
        Err(r) => verify_rejection(&f, r),
    }
}

/// `/verify`'s decision-only body (a verify context, which names no scheme).
async fn decide(f: &Facilitator, body: &[u8]) -> Response {
    match verify::parse_body(body, f.settings.default_policy_id) {
        Err(e) => e.into_response(),
        Ok(VerifyBody::Context(q)) => match f.decide(q).await {
            Ok(d) => {
                // Nobody signed a context: the id is told, nothing is kept.
                let held = f
                    .hold(&d.decision, &q.approval_terms(), "payment", None, false)
                    .await;
                // The terms a challenge of this payment states (`extra.gate.holdback`).
                let terms = match d.holdback {
                    Some(h) => match f.holdback_terms(&q, &h).await {
                        Ok(t) => Some(t),
                        Err(e) => return e.into_response(),
                    },
                    None => None,
                };
                decision_response(f, &d.decision, None, held.as_ref(), terms.as_ref())
            }
            Err(e) => e.into_response(),
        },
        // x402's keys that the probe could not read (one given twice, say): checked as a
        // trust-gate request.
        Ok(VerifyBody::X402(req)) => match schemes::verify_unprobed(f, &req).await {
            Ok(v) => decision_response(
                f,
                &v.decision,
                v.payer.map(|p| p.to_string()),
                v.held.as_ref(),
                v.holdback.as_ref(),
            ),
            Err(r) => verify_rejection(f, r),
        },
    }
}

async fn settle(State(f): App, headers: HeaderMap, body: Bytes) -> Response {
    let network = f.caip2().await.unwrap_or_default();
    let settled = match route(&body, &headers) {
        Ok((scheme, call)) => scheme.settle(&f, call).await,
        Err(r) => Err(r),
    };
    match settled {
        Ok(s) => s.into_response(network),
        Err(r) => settle_failure(&f, r, network),
    }
}

fn settle_failure(f: &Facilitator, r: Rejection, network: String) -> Response {
    tracing::info!(reason = %r.wire_reason(), message = %r.message, "settlement refused");
    let headers = r
        .decision
        .as_ref()
        .map(|d| decision_headers(d, f.chain.network.name(), r.held.as_deref()))
        .unwrap_or_default();
    let mut body = serde_json::to_value(SettlementResponse {
        success: false,
        error_reason: Some(r.wire_reason()),
        payer: None,
        transaction: String::new(),
        network,
        error_message: Some(r.message.clone()),
        receipt: None,
    })
    .unwrap_or_default();
    if let Some(h) = &r.hint {
        body["hint"] = h.clone().into();
    }
    if let Some(d) = r.decision.as_deref() {
        body["decision"] = serde_json::to_value(DecisionView::from(d)).unwrap_or_default();
    }
    if let Some(h) = &r.held {
        body["approval"] = approval_json(h);
    }
    if let Some(extra) = &r.extra {
        body["extra"] = (**extra).clone();
    }
    let mut res = (r.status(), headers, Json(body)).into_response();
    r.put_retry_after(&mut res);
    res
}

async fn dispute(State(f): App, body: Bytes) -> Result<Json<Value>, Rejection> {
    let d = DisputeRequest::parse(&body)?;
    Ok(Json(f.dispute(d).await?))
}

/// `GET /approvals[?payer=ASSET]`: the payments held for an approval.
async fn approvals(
    State(f): App,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<HeldPayments>, Rejection> {
    if let Some(unknown) = q.keys().find(|k| k.as_str() != "payer") {
        return Err(Rejection::input(
            unknown,
            "unknown parameter; the only one is payer",
        ));
    }
    let payer = q.get("payer").map(|p| parse_key("payer", p)).transpose()?;
    Ok(Json(f.pending_approvals(payer.as_ref()).await?))
}

/// `GET /payments?payer=ASSET[&limit=N]`: the payer's payments this facilitator keeps records
/// of, newest first.
async fn payments(
    State(f): App,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Value>, Rejection> {
    if let Some(unknown) = q.keys().find(|k| !["payer", "limit"].contains(&k.as_str())) {
        return Err(Rejection::input(
            unknown,
            "unknown parameter; they are payer and limit",
        ));
    }
    let payer = parse_key(
        "payer",
        q.get("payer")
            .ok_or_else(|| Rejection::input("payer", "missing: the payer agent's asset"))?,
    )?;
    let max = crate::service::records::PAYMENTS_LIMIT_MAX;
    let limit = match q.get("limit") {
        None => max,
        Some(l) => l
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| Rejection::input("limit", format!("{l:?}: must be 1..={max}")))?,
    };
    Ok(Json(f.payments(&payer, limit).await?))
}

/// `GET /approvals/{id}`: one of them, with its approval on chain.
async fn approval(State(f): App, Path(id): Path<String>) -> Result<Json<HeldPayment>, Rejection> {
    let id = parse_key("id", &id)?;
    Ok(Json(f.pending_approval(&id).await?))
}

async fn receipt(State(f): App, Path(hash): Path<String>) -> Result<Json<Value>, Rejection> {
    let hash = parse_receipt_hash(&hash)?;
    Ok(Json(f.receipt(hash).await?))
}

/// The kinds the registry serves, in its order.
async fn supported(State(f): App) -> Result<Json<Value>, Rejection> {
    let network = f.caip2().await?;
    let mut kinds = Vec::new();
    for scheme in schemes::registry().iter() {
        for name in scheme.names() {
            kinds.push(json!({
                "x402Version": 2,
                "scheme": name,
                "network": network,
                "extra": scheme.extra(&f, name).await,
            }));
        }
    }
    Ok(Json(json!({
        "kinds": kinds,
        "extensions": [x402::GATE_EXTENSION],
        "signers": {"solana:*": [f.facilitator().to_string()]},
    })))
}

/// Always 200 while the process serves; `ok` is false when the lock store does not answer
/// (then /settle answers 503 `lock_store_unavailable`; /verify and /receipt still work). The
/// RPC is named by its origin only: this route answers anyone.
async fn healthz(State(f): App) -> Json<Value> {
    let mut store = crate::store::health(&*f.store).await;
    store.error = store.error.map(|e| redact::urls_in(&e));
    Json(json!({
        "ok": store.ok,
        "settle": if store.ok { "available" } else { "unavailable: lock store" },
        "lockStore": store,
        "service": "trust-gate-facilitator",
        "version": env!("CARGO_PKG_VERSION"),
        "network": f.chain.network.name(),
        "caip2": f.caip2().await.ok(),
        "rpcUrl": f.chain.rpc_origin,
        "facilitator": f.facilitator().to_string(),
        "signing": f.key.keypair().is_some(),
        "uptimeSeconds": f.uptime().as_secs(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// [`ROUTES`] names every route the routers above serve, and nothing else.
    #[test]
    fn routes_name_every_route_served() {
        let source = include_str!("routes.rs");
        // Not written out whole, so that this test's own text does not match.
        let call = concat!(".route", "(\"");
        let served: BTreeSet<String> = source
            .match_indices(call)
            .map(|(at, _)| {
                let path = &source[at + call.len()..];
                let path = &path[..path.find('"').unwrap()];
                let first = path.split('/').nth(1).unwrap();
                format!("/{first}")
            })
            .collect();
        let listed: BTreeSet<String> = ROUTES.iter().map(|r| r.to_string()).collect();
        assert_eq!(listed.len(), ROUTES.len(), "listed once each");
        assert_eq!(served, listed);
    }
}
