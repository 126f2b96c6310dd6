//! The HTTP layers every trust-gate server puts in front of its routes (the facilitator, the
//! demo): a body limit, a timeout, and CORS for any origin exposing the payment headers.

use axum::http::{HeaderName, Method, StatusCode};
use axum::Router;
use std::time::Duration;
use tower_http::cors::{Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use trust_gate_x402 as x402;

/// Request bodies above this are refused with 413.
pub const BODY_LIMIT: usize = 64 * 1024;
/// No request runs longer (settlement waits for confirmation within it).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Body limit, timeout and CORS for any origin, exposing the payment headers.
pub fn http_layers(router: Router) -> Router {
    let exposed = [
        x402::PAYMENT_REQUIRED,
        x402::PAYMENT_RESPONSE,
        x402::X_GATE_DECISION,
        x402::X_PAYMENT_REQUIRED,
        x402::X_PAYMENT_REASON_CODE,
        x402::X_PAYMENT_REASON_NAME,
        x402::X_CAPABILITY_REQUIRED,
        x402::X_CAPABILITY_SUBJECT,
        x402::X_GATE_APPROVAL_ID,
        x402::X_PAYMENT_NETWORK,
        x402::X_PAYMENT_RECEIPT,
    ]
    .map(|h| HeaderName::from_bytes(h.to_ascii_lowercase().as_bytes()).expect("valid header name"));
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
        .allow_headers(Any)
        .expose_headers(exposed);
    router
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .layer(cors)
}
