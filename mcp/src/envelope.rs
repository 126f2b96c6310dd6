//! Tool results: a success is the JSON object as text content plus the same object as
//! `structuredContent`; a failure is `isError: true` with the envelope
//! `{errorCode, message, hint?, cause?}` the same two ways.

use crate::config::Transport;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;
use trust_gate_client::errors::NamedError;
use trust_gate_client::ClientError;

/// Longest `cause` text kept (logs and upstream errors can be long).
pub const CAUSE_LIMIT: usize = 600;

/// The stable error codes of the envelope.
pub mod codes {
    pub const AUTH_REQUIRED: &str = "auth_required";
    pub const INPUT_INVALID: &str = "input_invalid";
    pub const RPC_FAILURE: &str = "rpc_failure";
    pub const CHAIN_ERROR: &str = "chain_error";
    pub const NOT_FOUND: &str = "not_found";
    pub const CONFIG_ERROR: &str = "config_error";
    /// The facilitator (pending approvals) did not answer, or answered an error.
    pub const FACILITATOR_FAILURE: &str = "facilitator_failure";
    /// gate_pay: a URL this server may not request (a non-public address not allowed).
    pub const URL_REFUSED: &str = "url_refused";
    /// gate_pay: the offer asks for more than max_amount; nothing was signed.
    pub const AMOUNT_ABOVE_MAX: &str = "amount_above_max";
    /// gate_pay: the resource did not answer, or answered something that is not x402.
    pub const RESOURCE_FAILURE: &str = "resource_failure";
    /// gate_pay: the payment was sent and not accepted (nothing settled).
    pub const PAYMENT_FAILED: &str = "payment_failed";
    pub const INTERNAL: &str = "internal";
    pub const DOCS_CORPUS_NOT_FOUND: &str = "docs_corpus_not_found";
    pub const WALKTHROUGH_NOT_BUNDLED: &str = "walkthrough_not_bundled";
}

/// A failed tool call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolError {
    pub error_code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

pub type ToolResult = Result<Value, ToolError>;

impl ToolError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        ToolError {
            error_code: code.into(),
            message: message.into(),
            hint: None,
            cause: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn cause(mut self, cause: impl Into<String>) -> Self {
        self.cause = Some(truncate(&cause.into(), CAUSE_LIMIT));
        self
    }

    /// `input_invalid` naming the field.
    pub fn input(field: &str, reason: impl std::fmt::Display) -> Self {
        ToolError::new(codes::INPUT_INVALID, format!("invalid {field}: {reason}"))
    }

    pub fn not_found(what: &str, address: impl std::fmt::Display) -> Self {
        ToolError::new(codes::NOT_FOUND, format!("{what} {address} does not exist"))
    }

    /// A write tool without a signer; the hint says what to do on this transport.
    pub fn auth_required(transport: Transport, tool: &str) -> Self {
        let hint = match transport {
            Transport::Stdio => {
                "set KEYPAIR_B58 (base58 64-byte secret key) or KEYPAIR_PATH (a JSON keypair \
                 file) in the server's environment, or create the Solana CLI default keypair \
                 ~/.config/solana/id.json, then restart the server"
            }
            Transport::Http => {
                "this HTTP server holds no signer and is read-only; install the server locally \
                 (`trust-gate mcp`, stdio) with your own key in KEYPAIR_B58 or KEYPAIR_PATH to \
                 use write tools"
            }
        };
        ToolError::new(
            codes::AUTH_REQUIRED,
            format!("{tool} signs a transaction and this server has no signer"),
        )
        .hint(hint)
    }
}

impl From<ClientError> for ToolError {
    fn from(e: ClientError) -> Self {
        let message = e.to_string();
        match e {
            ClientError::InvalidInput { field, reason } => ToolError::input(&field, reason),
            ClientError::ProgramNotConfigured { variable, .. } => {
                ToolError::new(codes::CONFIG_ERROR, message).hint(format!(
                    "set {variable} (and the other *_PROGRAM_ID variables) to your deployment"
                ))
            }
            // The RPC client quotes the URL it failed on, with any API key in it.
            ClientError::Rpc(cause) => ToolError::new(codes::RPC_FAILURE, "the RPC request failed")
                .cause(trust_gate_client::redact::urls_in(&cause)),
            ClientError::AccountNotFound { what, address } => ToolError::not_found(what, address),
            ClientError::SimulationFailed { named, logs, .. } => chain_error(message, named, logs),
            ClientError::Transaction { named, logs, .. } => chain_error(message, named, logs),
            ClientError::IdlMissing { .. } => ToolError::new(codes::NOT_FOUND, message),
            ClientError::AtomicityNotEnforced(_) | ClientError::Config(_) => {
                ToolError::new(codes::CONFIG_ERROR, message)
            }
            ClientError::Decode { .. } => ToolError::new(codes::INTERNAL, message),
        }
    }
}

/// `chain_error` with the custom error named in the hint ("error 3012
/// AccountNotInitialized: ...").
fn chain_error(message: String, named: Option<NamedError>, logs: String) -> ToolError {
    let mut e = ToolError::new(codes::CHAIN_ERROR, first_line(&message));
    if let Some(n) = named {
        let what = n.message.map(|m| format!(": {m}")).unwrap_or_default();
        e = e.hint(format!("error {} {}{what}", n.code, n.name));
    }
    e.cause(logs)
}

fn first_line(s: &str) -> String {
    // The SDK's message ends with the logs, which go to `cause`.
    s.split("; logs:").next().unwrap_or(s).trim().to_string()
}

pub fn truncate(s: &str, limit: usize) -> String {
    if s.chars().count() <= limit {
        return s.to_string();
    }
    let mut out: String = s.chars().take(limit).collect();
    out.push('…');
    out
}

/// The MCP result of a tool: success or the error envelope, as text and structured content.
pub fn call_result(r: ToolResult) -> CallToolResult {
    let (value, is_error) = match r {
        Ok(v) => (v, false),
        Err(e) => (serde_json::to_value(&e).unwrap_or(Value::Null), true),
    };
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    let mut result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(value);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_error_names_its_code_in_the_hint() {
        let named = trust_gate_client::errors::lookup(None, 3012);
        let e = chain_error(
            "transaction failed: custom program error; logs: a | b".into(),
            named,
            "a | b".into(),
        );
        assert_eq!(e.error_code, "chain_error");
        assert_eq!(e.message, "transaction failed: custom program error");
        assert_eq!(e.hint.as_deref(), Some("error 3012 AccountNotInitialized"));
        assert_eq!(e.cause.as_deref(), Some("a | b"));
    }

    #[test]
    fn results_carry_the_same_object_as_text_and_structured_content() {
        let ok = call_result(Ok(serde_json::json!({"kind": "Allow"})));
        assert_eq!(ok.is_error, Some(false));
        let err = call_result(Err(ToolError::input("amount", "not digits").hint("h")));
        assert_eq!(err.is_error, Some(true));
        let s = err.structured_content.unwrap();
        assert_eq!(s["errorCode"], "input_invalid");
        assert_eq!(s["message"], "invalid amount: not digits");
        assert!(s.get("cause").is_none());
        let text = err.content[0].as_text().unwrap().text.clone();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), s);
    }

    #[test]
    fn causes_are_truncated() {
        let e = ToolError::new("internal", "x").cause("y".repeat(5000));
        assert_eq!(e.cause.unwrap().chars().count(), CAUSE_LIMIT + 1);
    }
}
