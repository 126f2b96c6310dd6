//! Why a request is refused: a [`Reason`] (its wire string and HTTP status from the wire
//! crate's one table), a message that says exactly what was wrong, and what the answer adds.
//! Every route turns a `Rejection` into its response: `/verify` and `/settle` in x402's
//! shapes ([`crate::routes`]), the others as the error envelope (`error`, `message`, `hint`).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use trust_gate_client::decode::{Decision, DecisionView};
use trust_gate_client::ClientError;
pub use trust_gate_x402::reason::Reason;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub reason: Reason,
    pub message: String,
    pub hint: Option<String>,
    /// The gate's decision when the refusal is a Deny, RequireValidation or RequireApproval
    /// (the response then carries the decision headers).
    pub decision: Option<Box<Decision>>,
    /// Seconds after which the request may be tried again (the `Retry-After` header of a
    /// 429). Small, so that a refusal stays small: a wait at the lowest rate a limit takes
    /// is 1 000 s.
    pub retry_after: Option<u16>,
    /// For RequireApproval: the pending approval (see [`crate::service::holds`]).
    pub held: Option<Box<crate::approvals::Held>>,
    /// The scheme's state the refusal answers with, as the answer's `extra` (a session's
    /// `channelState` and `voucherState`, from which a resource server builds its corrective
    /// 402).
    pub extra: Option<Box<serde_json::Value>>,
}

impl Rejection {
    /// The message with every URL in it cut to its origin (the RPC client's errors quote the
    /// URL they called, API key and all), here once for every refusal.
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        Rejection {
            reason,
            message: trust_gate_client::redact::urls_in(&message.into()),
            hint: None,
            decision: None,
            retry_after: None,
            held: None,
            extra: None,
        }
    }

    /// 400 `input_invalid` naming the field.
    pub fn input(field: &str, why: impl std::fmt::Display) -> Self {
        Rejection::new(Reason::InputInvalid, format!("{field}: {why}"))
    }

    /// 502 `rpc_failure`.
    pub fn rpc(e: impl std::fmt::Display) -> Self {
        Rejection::new(
            Reason::RpcFailure,
            format!("the Solana RPC backend failed: {e}"),
        )
    }

    /// 503 `facilitator_not_signing`: configured with a public key only, it cannot `what`.
    pub fn not_signing(what: &str) -> Self {
        Rejection::new(
            Reason::FacilitatorNotSigning,
            format!("this facilitator is configured with a public key only and cannot {what}"),
        )
    }

    /// 503 `lock_store_unavailable`: the shared store did not answer.
    pub fn store_unavailable(e: impl std::fmt::Display) -> Self {
        Rejection::new(Reason::LockStoreUnavailable, e.to_string())
    }

    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.reason.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The reason on the wire: a Deny's is the gate's reason name.
    pub fn wire_reason(&self) -> String {
        match self.decision.as_deref().map(DecisionView::from) {
            Some(DecisionView::Deny { reason_name, .. }) => reason_name,
            _ => self.reason.wire().to_string(),
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Retry after `secs` seconds (a 429's `Retry-After`).
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(u16::try_from(secs).unwrap_or(u16::MAX));
        self
    }

    /// The refusal with the scheme's state (its answer's `extra`).
    pub fn with_extra(mut self, extra: serde_json::Value) -> Self {
        self.extra = Some(Box::new(extra));
        self
    }

    /// 402: the gate denied the payment or asks for a validation or an approval.
    pub fn decision(d: Decision) -> Self {
        let (reason, message) = match DecisionView::from(&d) {
            DecisionView::Deny {
                reason_code,
                reason_name,
            } => (
                Reason::Denied,
                format!("the gate denied the payment: reason {reason_code} {reason_name}"),
            ),
            DecisionView::RequireValidation {
                capability_hash,
                subject,
            } => (
                Reason::RequireValidation,
                format!(
                    "the {subject} needs an attestation of capability {capability_hash} from an accepted attestor"
                ),
            ),
            DecisionView::RequireApproval => (
                Reason::RequireApproval,
                "the amount is above the payer policy's approval threshold: the payer authority's members approve these terms on chain (approve_payment), then the same payment passes once".to_string(),
            ),
            // Never asked for: every caller answers an Allow itself.
            DecisionView::Allow => (Reason::Internal, "allowed".to_string()),
        };
        Rejection {
            decision: Some(Box::new(d)),
            ..Rejection::new(reason, message)
        }
    }

    /// Sets `Retry-After` on `res` when the refusal has a wait.
    pub fn put_retry_after(&self, res: &mut Response) {
        if let Some(v) = self
            .retry_after
            .and_then(|s| HeaderValue::from_str(&s.to_string()).ok())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
    }
}

impl From<ClientError> for Rejection {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::InvalidInput { field, reason } => Rejection::input(&field, reason),
            ClientError::Rpc(m) => {
                Rejection::rpc(m).hint("check that RPC_URL points at a running cluster or localnet")
            }
            ClientError::AccountNotFound { .. } => Rejection::new(Reason::NotFound, e.to_string()),
            other => Rejection::new(Reason::Internal, other.to_string()),
        }
    }
}

/// A wire-crate check's refusal: its reason and the message naming the field.
impl From<(Reason, String)> for Rejection {
    fn from((reason, message): (Reason, String)) -> Self {
        Rejection::new(reason, message)
    }
}

impl From<crate::store::StoreUnavailable> for Rejection {
    fn from(e: crate::store::StoreUnavailable) -> Self {
        Rejection::store_unavailable(e)
    }
}

/// The error envelope every route but `/verify` and `/settle` answers with.
impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::warn!(reason = %self.reason, message = %self.message, "request failed");
        }
        let mut body = serde_json::json!({"error": self.wire_reason(), "message": self.message});
        if let Some(h) = &self.hint {
            body["hint"] = h.clone().into();
        }
        let mut res = (status, Json(body)).into_response();
        self.put_retry_after(&mut res);
        res
    }
}
