//! Errors as the routes answer them: always JSON `{"error","message","hint"}` with the
//! status that tells a client what to do, never a stack trace, and never more of a URL than
//! its origin (the RPC client's errors quote the URL it called, API key and all).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use trust_gate_client::ClientError;

use trust_gate_client::redact;

/// A request the facilitator refuses (or could not serve).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    /// Stable machine code: `input_invalid`, `not_found`, `policy_mismatch`, `conflict`,
    /// `rpc_failure`, `signer_required`, `caller_rate_limited`, `internal`.
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

impl ApiError {
    /// The message with every URL in it cut to its origin, here once for every route.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: redact::urls_in(&message.into()),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// 400 `input_invalid` naming the field.
    pub fn input(field: &str, reason: impl std::fmt::Display) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "input_invalid",
            format!("{field}: {reason}"),
        )
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 502: the Solana JSON-RPC backend failed.
    pub fn rpc(e: impl std::fmt::Display) -> Self {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "rpc_failure",
            format!("the Solana RPC backend failed: {e}"),
        )
        .with_hint("check that RPC_URL points at a running cluster or localnet")
    }

    pub fn internal(e: impl std::fmt::Display) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
    }

    pub fn body(&self) -> serde_json::Value {
        let mut v = serde_json::json!({"error": self.code, "message": self.message});
        if let Some(h) = &self.hint {
            v["hint"] = h.clone().into();
        }
        v
    }
}

impl From<ClientError> for ApiError {
    /// SDK errors that reach a route unhandled: input errors are the caller's, RPC errors
    /// the backend's, everything else ours.
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::InvalidInput { field, reason } => ApiError::input(&field, reason),
            ClientError::Rpc(m) => ApiError::rpc(m),
            ClientError::AccountNotFound { .. } => ApiError::not_found(e.to_string()),
            other => ApiError::internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::warn!(code = self.code, message = %self.message, "request failed");
        }
        (self.status, Json(self.body())).into_response()
    }
}

impl From<crate::redis_store::StoreUnavailable> for ApiError {
    /// The record store (in Redis) did not answer: 503, as /settle answers it.
    fn from(e: crate::redis_store::StoreUnavailable) -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "lock_store_unavailable",
            e.to_string(),
        )
    }
}
