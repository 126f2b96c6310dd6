//! Tool results: a success is a typed result (`rmcp`'s `Json<T>`: the object as
//! `structuredContent` and as text, its schema the tool's `outputSchema`); a failure is
//! `isError: true` with the envelope `{errorCode, message, hint?, cause?}` the same two ways.

use crate::config::Transport;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult};
use serde::Serialize;
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
    /// The stable error code (input_invalid, not_found, chain_error, ...).
    pub error_code: String,
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The underlying error (logs, an upstream answer), cut at [`CAUSE_LIMIT`] characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

/// A tool's result: its typed success, or the envelope.
pub type ToolResult<T> = Result<T, ToolError>;

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

impl ToolError {
    /// The MCP result of this error: `isError: true`, the envelope as text and as
    /// structured content.
    pub fn into_result(self) -> CallToolResult {
        CallToolResult::structured_error(
            serde_json::to_value(&self).expect("an envelope of strings serializes"),
        )
    }
}

/// A tool returns `Result<Json<T>, ToolError>`: rmcp derives its `outputSchema` from `T`
/// and turns an `Err` into this.
impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_result().into())
    }
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
    fn errors_carry_the_same_envelope_as_text_and_structured_content() {
        let err = ToolError::input("amount", "not digits").hint("h");
        let r = match Err::<rmcp::handler::server::wrapper::Json<()>, _>(err)
            .into_call_tool_result()
            .unwrap()
        {
            CallToolResponse::Complete(r) => r,
            other => panic!("{other:?}"),
        };
        assert_eq!(r.is_error, Some(true));
        let s = r.structured_content.unwrap();
        assert_eq!(s["errorCode"], "input_invalid");
        assert_eq!(s["message"], "invalid amount: not digits");
        assert_eq!(s["hint"], "h");
        assert!(s.get("cause").is_none());
        let text = r.content[0].as_text().unwrap().text.clone();
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), s);
    }

    #[test]
    fn causes_are_truncated() {
        let e = ToolError::new("internal", "x").cause("y".repeat(5000));
        assert_eq!(e.cause.unwrap().chars().count(), CAUSE_LIMIT + 1);
    }
}
