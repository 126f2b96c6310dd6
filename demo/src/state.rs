//! What the demo's routes share: its state, and how they answer errors and name the payer.

use crate::config::DemoConfig;
use crate::facilitator_client::{FacilitatorClient, Kind};
use crate::X_DEMO_PAYER_AGENT;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::Value;
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use std::sync::Arc;
use trust_gate_server::error::ApiError;
use trust_gate_server::paid_once::{PaidOnce, Resumed};
use trust_gate_x402::payment_identifier;
use trust_gate_x402::{self as x402, X_PAYER_AGENT};

pub struct DemoState {
    pub config: DemoConfig,
    pub facilitator: FacilitatorClient,
    /// The facilitator's network and fee payer (from its /supported, read at start).
    pub kind: Kind,
    /// The paid routes' payment ids (x402's `payment-identifier`).
    pub paid_once: Arc<PaidOnce>,
    /// The refunds of held shares, when the service has its payee's signer.
    pub refunds: Option<Arc<crate::refund::Refunds>>,
}

impl DemoState {
    /// The `extensions` of every 402: `payment-identifier` declared.
    pub fn extensions(&self) -> Option<serde_json::Map<String, Value>> {
        let mut m = serde_json::Map::new();
        m.insert(payment_identifier::KEY.into(), self.paid_once.declaration());
        Some(m)
    }
}

/// A settlement the facilitator still reports pending after its second wait: 503 with
/// `Retry-After` and the pending settlement in `PAYMENT-RESPONSE`, never a 402 (which asks
/// for a new payment while this one may still land). The same payment sent again with its
/// payment id gets its outcome.
pub fn pending(settlement: &Value, from: &reqwest::header::HeaderMap) -> Response {
    let mut h = decision_headers(from);
    if let Ok(encoded) = x402::encode_header(settlement) {
        h.extend(header(x402::PAYMENT_RESPONSE, &encoded));
    }
    h.extend(header("retry-after", "1"));
    let mut body = settlement.clone();
    body["hint"] = "send the same payment again, with its payment-identifier id: it gets this payment's answer once the transaction lands, and is never settled twice".into();
    (StatusCode::SERVICE_UNAVAILABLE, h, Json(body)).into_response()
}

/// A settlement the facilitator reports as `replayed` (sent by an earlier request), on a
/// request that is not the resend of a payment id still without an answer: the payment was
/// used already, and is not served again.
pub fn already_used(transaction: &str) -> Response {
    ApiError::new(
        StatusCode::CONFLICT,
        "payment_already_settled",
        format!("this payment settled in {transaction} for an earlier request"),
    )
    .with_hint("resend it with the payment-identifier id it was first sent with to get that request's answer, or pay again")
    .into_response()
}

/// Whether the request is the resend of a payment id whose earlier run gave no final answer.
pub fn resumed(r: Option<Extension<Resumed>>) -> bool {
    r.is_some_and(|Extension(Resumed(r))| r)
}

/// The facilitator's error envelope (`{"error","message"}`), so both services answer alike.
pub fn error(status: StatusCode, code: &'static str, message: impl Into<String>) -> Response {
    ApiError::new(status, code, message).into_response()
}

/// The facilitator's decision headers, passed through.
pub fn decision_headers(from: &reqwest::header::HeaderMap) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in from {
        if k.as_str().starts_with("x-gate-")
            || k.as_str().starts_with("x-payment-")
            || k.as_str().starts_with("x-capability-")
        {
            if let Some((k, v)) = v.to_str().ok().and_then(|v| header(k.as_str(), v)) {
                h.insert(k, v);
            }
        }
    }
    h
}

pub fn header(name: &str, value: &str) -> Option<(HeaderName, HeaderValue)> {
    Some((
        HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).ok()?,
        HeaderValue::from_str(value).ok()?,
    ))
}

/// The payer agent a request names (`X-Payer-Agent`, or the demo's `X-Demo-Payer-Agent`),
/// else the demo's default. (A refusal is boxed: an answer is large, the payer small.)
pub fn payer_of(s: &DemoState, headers: &HeaderMap) -> Result<Pubkey, Box<Response>> {
    let named = [X_PAYER_AGENT, X_DEMO_PAYER_AGENT]
        .into_iter()
        .find_map(|h| headers.get(h).map(|v| (h, v)));
    match named {
        Some((name, v)) => v
            .to_str()
            .ok()
            .and_then(|v| Pubkey::from_str(v.trim()).ok())
            .ok_or_else(|| {
                Box::new(error(
                    StatusCode::BAD_REQUEST,
                    "input_invalid",
                    format!("{name}: not a base58 public key"),
                ))
            }),
        None => s.config.default_payer().ok_or_else(|| {
            Box::new(error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "no demo payer configured",
            ))
        }),
    }
}
