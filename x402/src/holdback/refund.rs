//! x402's `refund` extension for a held share: what the 402 advertises, the payer's signed
//! request and the payee's answer with its signed receipt.

use super::jws::{canonical_json, did_pkh, jws_open, jws_sign, solana_reference};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use std::str::FromStr;
use trust_gate_client::ClientError;

/// The `refund` extension's key in a challenge's `extensions`.
pub const REFUND: &str = "refund";

/// `extensions.refund.info`: where and how long the payer may ask the payee for its held share
/// back (x402's `refund` extension). Only a held share is refunded here, whole, by the payee's
/// `refund_holdback`: partial refunds are not offered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefundInfo {
    /// The payee's endpoint that takes a `RefundRequest` (POST).
    pub refund_endpoint: String,
    /// How long after the settlement a refund may be asked for: the hold.
    pub window_seconds: u64,
    pub partial_refunds: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_url: Option<String>,
}

impl RefundInfo {
    /// The extension as a challenge carries it: `{"info": {...}, "schema": ...}`.
    pub fn extension(&self) -> Value {
        serde_json::json!({ "info": self, "schema": refund_info_schema() })
    }

    /// The refund terms a 402's `extensions` advertise: `None` when it advertises none; an
    /// error naming `extensions.refund.info` when they are not readable.
    pub fn from_extensions(
        extensions: Option<&Map<String, Value>>,
    ) -> Result<Option<RefundInfo>, ClientError> {
        let Some(ext) = extensions.and_then(|e| e.get(REFUND)) else {
            return Ok(None);
        };
        let info = ext.get("info").cloned().unwrap_or(Value::Null);
        serde_json::from_value(info)
            .map(Some)
            .map_err(|e| ClientError::input("extensions.refund.info", e.to_string()))
    }
}

/// The JSON Schema of `extensions.refund.info`, which a 402 carries next to it (as x402's
/// extensions declare what their `info` holds).
pub fn refund_info_schema() -> Value {
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "refundEndpoint": {"type": "string", "format": "uri"},
            "windowSeconds": {"type": "integer", "minimum": 0},
            "partialRefunds": {"type": "boolean"},
            "policyUrl": {"type": "string", "format": "uri"},
        },
        "required": ["refundEndpoint", "windowSeconds", "partialRefunds"],
    })
}

/// Why the payer asks for a refund (the extension's reason codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundReason {
    ServiceNotDelivered,
    ServiceDefective,
    DuplicatePayment,
    Overcharge,
    CustomerRequest,
    Other,
}

/// The settled payment a refund request is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PaymentReference {
    /// The settlement transaction's signature (base58).
    pub tx_hash: String,
    /// The settlement's CAIP-2 network (`solana:<genesis hash prefix>`).
    pub network: String,
    /// The `payment-identifier` id the payment was sent with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_id: Option<String>,
}

/// The most characters of `reasonDetail`, and of an `idempotencyKey` (kept by the payee).
pub const MAX_REASON_DETAIL: usize = 1_024;
pub const MAX_IDEMPOTENCY_KEY: usize = 128;

/// A payer's request to be refunded (POSTed to `refundEndpoint`). `payerSignature` is empty
/// until [`sign_refund_request`] fills it; it is what proves the request is the payer's.
/// Unknown fields are refused: a signature over fields the payee does not read would let a
/// request say more than the payee checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefundRequest {
    /// Always 2.
    pub x402_version: u8,
    pub payment_reference: PaymentReference,
    /// The amount asked back, in the asset's base units (a decimal string).
    pub amount: String,
    pub reason: RefundReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_detail: Option<String>,
    /// Where the refund goes (an address on the payment's network); the payer when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_to: Option<String>,
    /// The payer's key for this request: the payee answers a key it saw with the first
    /// answer, never with a second transfer.
    pub idempotency_key: String,
    /// The service's receipt of the payment, when it gave one (opaque here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Value>,
    /// The payer's compact JWS over the request without this field.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub payer_signature: String,
}

/// What a well-formed [`RefundRequest`] says, typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckedRefund {
    pub tx: Signature,
    pub amount: u64,
    pub refund_to: Option<Pubkey>,
}

impl RefundRequest {
    /// An unsigned request for `amount` of the payment settled in `tx_hash` on `network`, with
    /// a fresh idempotency key.
    pub fn new(tx_hash: &str, network: &str, amount: u64, reason: RefundReason) -> RefundRequest {
        RefundRequest {
            x402_version: crate::X402_VERSION,
            payment_reference: PaymentReference {
                tx_hash: tx_hash.to_string(),
                network: network.to_string(),
                payment_id: None,
            },
            amount: amount.to_string(),
            reason,
            reason_detail: None,
            refund_to: None,
            idempotency_key: new_idempotency_key(),
            receipt: None,
            payer_signature: String::new(),
        }
    }

    /// The request as its payer signs it: without `payerSignature`.
    pub fn unsigned(&self) -> RefundRequest {
        RefundRequest {
            payer_signature: String::new(),
            ..self.clone()
        }
    }

    /// sha256 of the unsigned request's canonical JSON: what a payee binds an idempotency key
    /// to.
    pub fn digest(&self) -> [u8; 32] {
        let v = serde_json::to_value(self.unsigned()).unwrap_or_default();
        Sha256::digest(canonical_json(&v).as_bytes()).into()
    }

    /// Its fields checked and typed; an error names the first one that is wrong (the
    /// signature aside: [`verify_payer_signature`]).
    pub fn check(&self) -> Result<CheckedRefund, ClientError> {
        if self.x402_version != crate::X402_VERSION {
            return Err(ClientError::input("x402Version", "must be 2"));
        }
        let r = &self.payment_reference;
        let tx = Signature::from_str(&r.tx_hash).map_err(|_| {
            ClientError::input(
                "paymentReference.txHash",
                "not a base58 transaction signature",
            )
        })?;
        solana_reference(&r.network, "paymentReference.network")?;
        if r.payment_id
            .as_ref()
            .is_some_and(|id| !crate::payment_identifier::is_valid(id))
        {
            return Err(ClientError::input(
                "paymentReference.paymentId",
                "16 to 128 of [A-Za-z0-9_-]",
            ));
        }
        let amount = parse_amount(&self.amount).ok_or_else(|| {
            ClientError::input("amount", "a positive decimal integer of base units (u64)")
        })?;
        if self
            .reason_detail
            .as_ref()
            .is_some_and(|d| d.chars().count() > MAX_REASON_DETAIL)
        {
            return Err(ClientError::input(
                "reasonDetail",
                format!("at most {MAX_REASON_DETAIL} characters"),
            ));
        }
        let refund_to = match &self.refund_to {
            None => None,
            Some(to) => Some(
                Pubkey::from_str(to)
                    .map_err(|_| ClientError::input("refundTo", "not a base58 address"))?,
            ),
        };
        let key = &self.idempotency_key;
        // The key is also a path segment (GET refundEndpoint/{idempotencyKey}): URL-safe only.
        if key.is_empty()
            || key.len() > MAX_IDEMPOTENCY_KEY
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
        {
            return Err(ClientError::input(
                "idempotencyKey",
                format!("1 to {MAX_IDEMPOTENCY_KEY} of [A-Za-z0-9._~-] (a UUID)"),
            ));
        }
        Ok(CheckedRefund {
            tx,
            amount,
            refund_to,
        })
    }
}

/// A decimal u64 without sign, spaces or leading zeros ("0" itself is not an amount).
fn parse_amount(s: &str) -> Option<u64> {
    let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0');
    digits.then(|| s.parse().ok()).flatten()
}

/// A fresh idempotency key: a random (version 4) UUID.
pub fn new_idempotency_key() -> String {
    let mut b = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = trust_gate_client::decode::hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// Whether a refund was made, is queued, or was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundStatus {
    Executed,
    Pending,
    Denied,
}

/// Why a refund was refused (the extension's denial reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialReason {
    OutsideWindow,
    NotPayer,
    AlreadyRefunded,
    AmountExceedsSettled,
    PolicyDenied,
    UnknownPayment,
}

/// How a signed artifact is signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactFormat {
    Jws,
    Eip712,
}

/// A signed artifact as x402's offer-and-receipt extension shapes it: for `jws`, the compact
/// JWS in `signature` and no `payload` (it is inside the JWS).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedArtifact {
    pub format: ArtifactFormat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    pub signature: String,
}

/// The payee's answer to a [`RefundRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefundResponse {
    pub status: RefundStatus,
    /// The amount refunded, or asked for when denied.
    pub amount: String,
    /// The refund's transaction (executed only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_tx_hash: Option<String>,
    /// Why it was refused (denied only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denial_reason: Option<DenialReason>,
    /// The payee's signed receipt of the refund (executed only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_receipt: Option<SignedArtifact>,
}

impl RefundResponse {
    pub fn denied(amount: &str, reason: DenialReason) -> RefundResponse {
        RefundResponse {
            status: RefundStatus::Denied,
            amount: amount.to_string(),
            refund_tx_hash: None,
            denial_reason: Some(reason),
            refund_receipt: None,
        }
    }

    pub fn executed(amount: u64, tx: &Signature, receipt: SignedArtifact) -> RefundResponse {
        RefundResponse {
            status: RefundStatus::Executed,
            amount: amount.to_string(),
            refund_tx_hash: Some(tx.to_string()),
            denial_reason: None,
            refund_receipt: Some(receipt),
        }
    }
}

/// What the payee's refund receipt states (the payload of its JWS): version 1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefundReceiptPayload {
    pub version: u32,
    /// The CAIP-2 network of both transactions.
    pub network: String,
    /// The service refunding (the paid resource), which the signing key speaks for.
    pub resource_url: String,
    /// The payer's wallet refunded.
    pub payer: String,
    /// Unix seconds.
    pub issued_at: i64,
    pub payment_tx_hash: String,
    pub refund_tx_hash: String,
    pub amount: String,
    /// The mint.
    pub asset: String,
    /// The token account credited.
    pub refund_to: String,
    /// The escrow the share left.
    pub escrow: String,
}

/// The refund receipt payload's version.
pub const REFUND_RECEIPT_VERSION: u32 = 1;

/// The request signed by its payer: `payerSignature` is a compact JWS whose payload is the
/// request without it, whose `kid` is the payer's `did:pkh` on the request's network. An
/// error names `paymentReference.network` when that is not a Solana network.
pub fn sign_refund_request(
    payer: &Keypair,
    request: RefundRequest,
) -> Result<RefundRequest, ClientError> {
    let unsigned = request.unsigned();
    let kid = did_pkh(
        &unsigned.payment_reference.network,
        &payer.pubkey(),
        "paymentReference.network",
    )?;
    let payload = serde_json::to_value(&unsigned)
        .map_err(|e| ClientError::input("refund request", e.to_string()))?;
    Ok(RefundRequest {
        payer_signature: jws_sign(payer, &kid, &payload),
        ..unsigned
    })
}

/// Who signed the request: the key its `payerSignature`'s `kid` names, once the signature
/// verifies, the `kid` names the request's network and the signed payload is exactly the
/// request without its signature. Any failure is an error naming `payerSignature`.
pub fn verify_payer_signature(request: &RefundRequest) -> Result<Pubkey, ClientError> {
    const FIELD: &str = "payerSignature";
    if request.payer_signature.is_empty() {
        return Err(ClientError::input(
            FIELD,
            "missing: the payer signs the request (a compact JWS)",
        ));
    }
    let opened = jws_open(&request.payer_signature, FIELD)?;
    let network = &request.payment_reference.network;
    if opened.network != *network {
        return Err(ClientError::input(
            FIELD,
            format!(
                "its kid names the network {}, the request {network}",
                opened.network
            ),
        ));
    }
    // Compared as requests, not bytes: a field the signer wrote as null is the field absent.
    let signed: RefundRequest = serde_json::from_value(opened.payload).map_err(|e| {
        ClientError::input(FIELD, format!("its payload is not a refund request: {e}"))
    })?;
    if !signed.payer_signature.is_empty() || signed != request.unsigned() {
        return Err(ClientError::input(
            FIELD,
            "it signs another request: its payload is not this request without payerSignature",
        ));
    }
    Ok(opened.signer)
}

/// The payee's refund receipt: `payload` as a compact JWS signed by `service` (its `did:pkh`
/// on the payload's network as `kid`).
pub fn sign_refund_receipt(
    service: &Keypair,
    payload: &RefundReceiptPayload,
) -> Result<SignedArtifact, ClientError> {
    let kid = did_pkh(&payload.network, &service.pubkey(), "refundReceipt.network")?;
    let v = serde_json::to_value(payload)
        .map_err(|e| ClientError::input("refundReceipt", e.to_string()))?;
    Ok(SignedArtifact {
        format: ArtifactFormat::Jws,
        payload: None,
        signature: jws_sign(service, &kid, &v),
    })
}

/// The key that signed a refund receipt and what it states. Whether that key speaks for the
/// service is the verifier's to know (the service's published key, as for its challenges).
pub fn verify_refund_receipt(
    receipt: &SignedArtifact,
) -> Result<(Pubkey, RefundReceiptPayload), ClientError> {
    const FIELD: &str = "refundReceipt.signature";
    if receipt.format != ArtifactFormat::Jws || receipt.payload.is_some() {
        return Err(ClientError::input(
            "refundReceipt.format",
            "only a jws receipt (its payload inside the JWS) is read here",
        ));
    }
    let opened = jws_open(&receipt.signature, FIELD)?;
    let payload: RefundReceiptPayload = serde_json::from_value(opened.payload).map_err(|e| {
        ClientError::input(FIELD, format!("its payload is not a refund receipt: {e}"))
    })?;
    if payload.version != REFUND_RECEIPT_VERSION {
        return Err(ClientError::input(FIELD, "its payload's version is not 1"));
    }
    if payload.network != opened.network {
        return Err(ClientError::input(
            FIELD,
            "its kid names another network than its payload",
        ));
    }
    Ok((opened.signer, payload))
}
