//! The payer's side of x402's `refund` extension for a held share (docs/holdback.md, "The
//! refund extension"): read the offer in a 402, build the request from the payment settled,
//! sign it as the wallet that paid, POST it to the payee's `refundEndpoint`, read the answer.
//!
//! The wire (the request, its JWS signature, the answer and its receipt) is
//! `trust_gate_x402::holdback`'s.

use solana_sdk::signature::Keypair;
use trust_gate_client::ClientError;
use trust_gate_x402::holdback::{
    sign_refund_request, RefundInfo, RefundReason, RefundRequest, RefundResponse,
};
use trust_gate_x402::{GateExtension, PaymentRequired, PaymentRequirements};

#[derive(Debug, thiserror::Error)]
pub enum RefundError {
    #[error("request to {url} failed: {reason}")]
    Http { url: String, reason: String },
    /// The payee did not take the request (malformed, a signature it refuses, a key reused
    /// for another request, its cluster down): its error answer.
    #[error("{url} answered {status} {code}: {message}")]
    Refused {
        url: String,
        status: u16,
        code: String,
        message: String,
    },
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// The refund terms a 402 advertises (`extensions.refund.info`), if any.
pub fn offered(required: &PaymentRequired) -> Result<Option<RefundInfo>, ClientError> {
    RefundInfo::from_extensions(required.extensions.as_ref())
}

/// The unsigned request for the held share of the payment of `requirements` (the offer paid:
/// its network and `extra.gate.holdback.held`) settled in `tx_hash`, with a fresh idempotency
/// key. An error names `extra.gate.holdback` when the offer held nothing back.
pub fn for_held_payment(
    requirements: &PaymentRequirements,
    tx_hash: &str,
    reason: RefundReason,
) -> Result<RefundRequest, ClientError> {
    const FIELD: &str = "extra.gate.holdback";
    let terms = GateExtension::from_requirements(requirements)?
        .holdback
        .ok_or_else(|| ClientError::input(FIELD, "the offer paid held nothing back"))?;
    let held = terms.quote(FIELD)?.held;
    if held == 0 {
        return Err(ClientError::input(
            FIELD,
            "the offer paid held 0 base units back",
        ));
    }
    Ok(RefundRequest::new(
        tx_hash,
        &requirements.network,
        held,
        reason,
    ))
}

/// Signs `request` as `payer` (the wallet that paid), POSTs it to `endpoint` and reads the
/// payee's answer: executed, pending or denied. An error answer is [`RefundError::Refused`].
pub async fn request(
    http: &reqwest::Client,
    endpoint: &str,
    request: RefundRequest,
    payer: &Keypair,
) -> Result<RefundResponse, RefundError> {
    let signed = sign_refund_request(payer, request)?;
    let res = http
        .post(endpoint)
        .json(&signed)
        .send()
        .await
        .map_err(|e| http_err(endpoint, e))?;
    answer(endpoint, res).await
}

/// The answer a request with `idempotency_key` got (`GET endpoint/{idempotencyKey}`): how a
/// payer follows a `pending` refund.
pub async fn status(
    http: &reqwest::Client,
    endpoint: &str,
    idempotency_key: &str,
) -> Result<RefundResponse, RefundError> {
    let url = format!("{}/{idempotency_key}", endpoint.trim_end_matches('/'));
    let res = http.get(&url).send().await.map_err(|e| http_err(&url, e))?;
    answer(&url, res).await
}

async fn answer(url: &str, res: reqwest::Response) -> Result<RefundResponse, RefundError> {
    let status = res.status();
    let text = res.text().await.map_err(|e| http_err(url, e))?;
    if status.is_success() {
        return serde_json::from_str(&text)
            .map_err(|e| http_err(url, format!("the answer is not a RefundResponse: {e}")));
    }
    // The error envelope `{"error", "message"}`, or whatever else came.
    #[derive(serde::Deserialize)]
    struct Envelope {
        error: String,
        #[serde(default)]
        message: String,
    }
    let (code, message) = match serde_json::from_str::<Envelope>(&text) {
        Ok(e) => (e.error, e.message),
        Err(_) => (String::new(), text.chars().take(500).collect()),
    };
    Err(RefundError::Refused {
        url: url.to_string(),
        status: status.as_u16(),
        code,
        message,
    })
}

fn http_err(url: &str, e: impl std::fmt::Display) -> RefundError {
    RefundError::Http {
        url: url.to_string(),
        reason: e.to_string(),
    }
}
