//! Why a payment is refused: an x402 reason string (`invalidReason` / `errorReason`), a
//! message that says exactly what was wrong, and the status to answer with.

use axum::http::StatusCode;
use trust_gate_client::decode::Decision;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub status: StatusCode,
    /// Stable reason string (docs/facilitator.md lists them with the checks that give them).
    pub reason: String,
    pub message: String,
    pub hint: Option<String>,
    /// The gate's decision when the refusal is a Deny or RequireValidation (the response
    /// then carries the decision headers).
    pub decision: Option<Box<Decision>>,
    /// Seconds after which the request may be tried again (the `Retry-After` header of a
    /// 429). Small, so that a refusal stays small: a wait at the lowest rate a limit takes
    /// is 1 000 s.
    pub retry_after: Option<u16>,
    /// For RequireApproval: the pending approval (see [`crate::holds`]).
    pub held: Option<Box<crate::approvals::Held>>,
    /// The scheme's state the refusal answers with, as the answer's `extra` (a session's
    /// `channelState` and `voucherState`, from which a resource server builds its corrective
    /// 402).
    pub extra: Option<Box<serde_json::Value>>,
}

impl Rejection {
    /// 400: a malformed or mismatched request or transaction.
    pub fn bad(reason: &str, message: impl Into<String>) -> Self {
        Rejection::new(StatusCode::BAD_REQUEST, reason, message)
    }

    /// The message with every URL in it cut to its origin (the RPC client's errors quote the
    /// URL they called, API key and all), here once for every refusal.
    pub fn new(status: StatusCode, reason: &str, message: impl Into<String>) -> Self {
        Rejection {
            status,
            reason: reason.to_string(),
            message: trust_gate_client::redact::urls_in(&message.into()),
            hint: None,
            decision: None,
            retry_after: None,
            held: None,
            extra: None,
        }
    }

    /// 429 `reason`: too many requests; retry after `secs` seconds.
    pub fn too_many(reason: &str, message: impl Into<String>, secs: u64) -> Self {
        Rejection {
            retry_after: Some(u16::try_from(secs).unwrap_or(u16::MAX)),
            ..Rejection::new(StatusCode::TOO_MANY_REQUESTS, reason, message)
        }
    }

    /// 503 `facilitator_not_signing`: configured with a public key only, it cannot `what`.
    pub fn not_signing(what: &str) -> Self {
        Rejection::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "facilitator_not_signing",
            format!("this facilitator is configured with a public key only and cannot {what}"),
        )
    }

    /// 503 `lock_store_unavailable`: the shared store did not answer.
    pub fn store_unavailable(e: impl std::fmt::Display) -> Self {
        Rejection::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "lock_store_unavailable",
            e.to_string(),
        )
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The refusal with the scheme's state (its answer's `extra`).
    pub fn with_extra(mut self, extra: serde_json::Value) -> Self {
        self.extra = Some(Box::new(extra));
        self
    }

    /// 402: the gate denied the payment or asks for a validation or an approval.
    pub fn decision(d: Decision) -> Self {
        let view = trust_gate_client::decode::DecisionView::from(&d);
        let (reason, message) = match &view {
            trust_gate_client::decode::DecisionView::Deny {
                reason_code,
                reason_name,
            } => (
                reason_name.clone(),
                format!("the gate denied the payment: reason {reason_code} {reason_name}"),
            ),
            trust_gate_client::decode::DecisionView::RequireValidation {
                capability_hash,
                subject,
            } => (
                "RequireValidation".to_string(),
                format!(
                    "the {subject} needs an attestation of capability {capability_hash} from an accepted attestor"
                ),
            ),
            trust_gate_client::decode::DecisionView::RequireApproval => (
                "RequireApproval".to_string(),
                "the amount is above the payer policy's approval threshold: the payer authority's members approve these terms on chain (approve_payment), then the same payment passes once".to_string(),
            ),
            trust_gate_client::decode::DecisionView::Allow => {
                ("Allow".to_string(), "allowed".to_string())
            }
        };
        Rejection {
            status: StatusCode::PAYMENT_REQUIRED,
            reason,
            message,
            hint: None,
            decision: Some(Box::new(d)),
            retry_after: None,
            held: None,
            extra: None,
        }
    }
}

impl From<trust_gate_server::error::ApiError> for Rejection {
    fn from(e: trust_gate_server::error::ApiError) -> Self {
        Rejection {
            status: e.status,
            reason: e.code.to_string(),
            message: e.message,
            hint: e.hint,
            decision: None,
            retry_after: None,
            held: None,
            extra: None,
        }
    }
}
