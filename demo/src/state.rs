//! What the demo's routes share: its state, and how they answer errors and name the payer.

use crate::config::DemoConfig;
use crate::facilitator_client::{FacilitatorClient, Kind};
use crate::X_DEMO_PAYER_AGENT;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use trust_gate_client::x402::X_PAYER_AGENT;
use trust_gate_facilitator::error::ApiError;

pub struct DemoState {
    pub config: DemoConfig,
    pub facilitator: FacilitatorClient,
    /// The facilitator's network and fee payer (from its /supported, read at start).
    pub kind: Kind,
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
