//! x402 v2 wire types, header names, the `gate` extension of `extra`, and the payment id
//! hash derived from a memo.
//!
//! Field names follow the x402 v2 specification (camelCase); headers carry standard base64
//! (with padding) of the UTF-8 JSON.

use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use trust_gate_client::error::ClientError;

/// Response header of a 402: the base64 `PaymentRequired`.
pub const PAYMENT_REQUIRED: &str = "PAYMENT-REQUIRED";
/// Request header of a paid retry: the base64 `PaymentPayload`.
pub const PAYMENT_SIGNATURE: &str = "PAYMENT-SIGNATURE";
/// Response header after settlement: the base64 `SettlementResponse`.
pub const PAYMENT_RESPONSE: &str = "PAYMENT-RESPONSE";
/// trust-gate's decision headers.
pub const X_GATE_DECISION: &str = "X-Gate-Decision";
pub const X_PAYMENT_REQUIRED: &str = "X-Payment-Required";
pub const X_PAYMENT_REASON_CODE: &str = "X-Payment-Reason-Code";
pub const X_PAYMENT_REASON_NAME: &str = "X-Payment-Reason-Name";
pub const X_CAPABILITY_REQUIRED: &str = "X-Capability-Required";
pub const X_CAPABILITY_SUBJECT: &str = "X-Capability-Subject";
/// With `X-Gate-Decision: RequireApproval`: the pending approval's id, which is the address of
/// the payment's approval on chain (`Pdas::approval` of its terms).
pub const X_GATE_APPROVAL_ID: &str = "X-Gate-Approval-Id";
pub const X_PAYMENT_NETWORK: &str = "X-Payment-Network";
pub const X_PAYMENT_RECEIPT: &str = "X-Payment-Receipt";
/// Request header of a paying agent: its agent asset (base58), so that a resource server
/// puts the right payer in the challenge's `extra.gate`.
pub const X_PAYER_AGENT: &str = "X-Payer-Agent";

pub const X402_VERSION: u8 = 2;
/// The x402 scheme of a trust-gate settlement: an exact amount of a token, paid by ONE
/// transaction of [gate_payment_strict, TransferChecked, emit_feedback] (after at most a
/// ComputeBudget unit limit and unit price), with `extra.feePayer`, `extra.memo` and
/// `extra.gate` in the requirements and `{"transaction": <base64>}` as the payload. It is
/// not the `exact` scheme, whose transaction is [ComputeBudget x2, TransferChecked, Memo]: a
/// client that knows only `exact` finds no offer it supports instead of sending a transfer
/// the gate must refuse.
pub const SCHEME_TRUST_GATE: &str = "trust-gate";
/// The standard scheme of x402 on Solana, which a trust-gate facilitator does not settle.
pub const SCHEME_EXACT: &str = "exact";
/// The extension key trust-gate adds to `extra` and lists in `/supported`.
pub const GATE_EXTENSION: &str = "gate";

/// `resource` of a PaymentRequired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// One entry of `accepts`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequirements {
    pub scheme: String,
    /// CAIP-2 (`solana:<genesis prefix>`).
    pub network: String,
    /// Atomic units, decimal digits.
    pub amount: String,
    /// The mint.
    pub asset: String,
    /// The recipient wallet (not its token account).
    pub pay_to: String,
    pub max_timeout_seconds: u64,
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl PaymentRequirements {
    /// `extra.feePayer`: the facilitator that pays the fee and settles the offer.
    pub fn fee_payer(&self) -> Option<&str> {
        self.extra.get("feePayer").and_then(|v| v.as_str())
    }
}

/// The decoded `PAYMENT-REQUIRED` header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequired {
    pub x402_version: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub resource: ResourceInfo,
    pub accepts: Vec<PaymentRequirements>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The scheme payload of the trust-gate scheme (the same shape as the exact scheme's on
/// Solana): the settlement transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExactSvmPayload {
    /// Base64 of the serialized, partially signed transaction.
    pub transaction: String,
}

/// The decoded `PAYMENT-SIGNATURE` header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentPayload {
    pub x402_version: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceInfo>,
    pub accepted: PaymentRequirements,
    pub payload: ExactSvmPayload,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The decoded `PAYMENT-RESPONSE` header and the `/settle` body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettlementResponse {
    pub success: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payer: Option<String>,
    /// The transaction signature; `""` on failure (clients require the field).
    pub transaction: String,
    pub network: String,
    /// Free text that explains `errorReason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<serde_json::Value>,
}

/// The `PAYMENT-RESPONSE` of a channel scheme (`upto`, a session's deposit, voucher or
/// refund): x402's settle answer with what this request charged. Its fields in alphabetical
/// order, as the answer has always been written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelSettlement {
    /// What this request settled, atomic units in decimal: the deposit, the charge or the
    /// refund's claim.
    pub amount: String,
    /// A session's state after this request (`channelState`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<serde_json::Value>,
    /// The CAIP-2 network.
    pub network: String,
    /// The payer (the channel's payer key).
    pub payer: String,
    /// Whether an earlier attempt of the same payment sent it (this answer repeats it).
    pub replayed: bool,
    pub success: bool,
    /// The transaction signature; empty for a voucher kept off chain.
    pub transaction: String,
}

/// The `/verify` body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyResponse {
    pub is_valid: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payer: Option<String>,
}

/// A facilitator request (`/verify`, `/settle`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FacilitatorRequest {
    pub x402_version: u8,
    pub payment_payload: PaymentPayload,
    pub payment_requirements: PaymentRequirements,
}

/// `extra.gate`: the payment's trust context, signed by the service that issued the
/// challenge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateExtension {
    pub payer_agent_asset: String,
    pub payee_agent_asset: String,
    /// The wallet that receives the payment; must equal `payTo`.
    pub payee_recipient: String,
    pub policy_id: u32,
    /// Unix seconds.
    pub issued_at: i64,
    /// The holdback the payer's policy takes of this payment, when it takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdback: Option<crate::holdback::HoldbackTerms>,
    /// Base58 Ed25519 signature of the service key over [`challenge_message`].
    pub service_signature: String,
}

impl GateExtension {
    /// Reads `extra.gate` of a requirement.
    pub fn from_requirements(r: &PaymentRequirements) -> Result<Self, ClientError> {
        let v = r
            .extra
            .get(GATE_EXTENSION)
            .ok_or_else(|| ClientError::input("extra.gate", "missing"))?;
        serde_json::from_value(v.clone())
            .map_err(|e| ClientError::input("extra.gate", e.to_string()))
    }
}

/// `name=value` lines, one a field: the canonical bytes a service signs.
fn canonical_lines(lines: &[(&str, String)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in lines {
        out.extend_from_slice(k.as_bytes());
        out.push(b'=');
        out.extend_from_slice(v.as_bytes());
        out.push(b'\n');
    }
    out
}

/// An offer's own terms, as every message a service signs of it lists them after its tag.
fn offer_lines(r: &PaymentRequirements) -> [(&'static str, String); 6] {
    [
        ("scheme", r.scheme.clone()),
        ("network", r.network.clone()),
        ("amount", r.amount.clone()),
        ("asset", r.asset.clone()),
        ("payTo", r.pay_to.clone()),
        ("maxTimeoutSeconds", r.max_timeout_seconds.to_string()),
    ]
}

/// A `<service key>:<issued at>:<signature>` value, read; `field` names it in errors.
fn keyed_signature(
    field: &str,
    value: &str,
) -> Result<
    (
        solana_sdk::pubkey::Pubkey,
        i64,
        solana_sdk::signature::Signature,
    ),
    String,
> {
    let mut parts = value.trim().splitn(3, ':');
    let (Some(key), Some(at), Some(sig)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("{field} is <service key>:<issued at>:<signature>"));
    };
    Ok((
        key.parse()
            .map_err(|_| format!("{field}: the service key is not base58"))?,
        at.parse()
            .map_err(|_| format!("{field}: the time is not unix seconds"))?,
        sig.parse()
            .map_err(|_| format!("{field}: the signature is not base58"))?,
    ))
}

/// The canonical bytes a service signs: every requirement field and every gate field except
/// the signature, one `name=value` line each, in a fixed order.
pub fn challenge_message(
    r: &PaymentRequirements,
    resource_url: &str,
    g: &GateExtension,
) -> Vec<u8> {
    let memo = r
        .extra
        .get("memo")
        .and_then(|m| m.as_str())
        .unwrap_or_default();
    let fee_payer = r.fee_payer().unwrap_or_default();
    let mut lines = vec![("x402", "trust-gate-challenge-v1".to_string())];
    lines.extend(offer_lines(r));
    lines.extend([
        ("resource", resource_url.to_string()),
        ("memo", memo.to_string()),
        ("feePayer", fee_payer.to_string()),
        ("payerAgentAsset", g.payer_agent_asset.clone()),
        ("payeeAgentAsset", g.payee_agent_asset.clone()),
        ("payeeRecipient", g.payee_recipient.clone()),
        ("policyId", g.policy_id.to_string()),
        ("issuedAt", g.issued_at.to_string()),
    ]);
    // Only a held payment's challenge has these lines: others sign what they always did.
    if let Some(h) = &g.holdback {
        lines.extend(h.lines());
    }
    canonical_lines(&lines)
}

/// Signs a challenge as the service: fills `gate.service_signature` with the base58
/// signature of `service` over [`challenge_message`] (the field itself is not signed).
pub fn sign_challenge(
    service: &solana_sdk::signature::Keypair,
    r: &PaymentRequirements,
    resource_url: &str,
    g: &mut GateExtension,
) {
    use solana_sdk::signer::Signer;
    g.service_signature = service
        .sign_message(&challenge_message(r, resource_url, g))
        .to_string();
}

/// Checks `gate.service_signature` against `service`.
pub fn challenge_signed_by(
    service: &solana_sdk::pubkey::Pubkey,
    r: &PaymentRequirements,
    resource_url: &str,
    g: &GateExtension,
) -> bool {
    g.service_signature
        .parse::<solana_sdk::signature::Signature>()
        .is_ok_and(|sig| sig.verify(service.as_ref(), &challenge_message(r, resource_url, g)))
}

/// Request header of a resource server's own call to its facilitator (a session's `claim`,
/// `settle` or `seal`): `<service key>:<issued at>:<signature>`, the service key one the
/// facilitator trusts (`TRUSTED_SERVICE_KEYS`), its signature over
/// [`service_request_digest`] of the route and the exact body.
pub const X_SERVICE_AUTHORIZATION: &str = "X-Service-Authorization";
/// The domain of a service request's digest.
pub const SERVICE_REQUEST_DOMAIN: &str = "trust-gate:service-request:v1";

/// What a service signs to authenticate one request: SHA-256 of `UTF8(domain) || 0x00 ||
/// u16(len(path)).le || UTF8(path) || i64(issued_at).le || SHA-256(body)`.
pub fn service_request_digest(path: &str, issued_at: i64, body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(SERVICE_REQUEST_DOMAIN.as_bytes());
    h.update([0u8]);
    h.update((path.len().min(usize::from(u16::MAX)) as u16).to_le_bytes());
    h.update(path.as_bytes());
    h.update(issued_at.to_le_bytes());
    h.update(Sha256::digest(body));
    h.finalize().into()
}

/// The `X-Service-Authorization` value of `body` sent to `path` at `issued_at` by `service`.
pub fn sign_service_request(
    service: &solana_sdk::signature::Keypair,
    path: &str,
    issued_at: i64,
    body: &[u8],
) -> String {
    use solana_sdk::signer::Signer;
    let sig = service.sign_message(&service_request_digest(path, issued_at, body));
    format!("{}:{issued_at}:{sig}", service.pubkey())
}

/// The trusted service that signed `header` for `body` at `path`, issued within `skew`
/// seconds of `now`; else why not (a message for the refusal).
pub fn service_request_signer(
    header: &str,
    path: &str,
    body: &[u8],
    now: i64,
    skew: i64,
    trusted: &[solana_sdk::pubkey::Pubkey],
) -> Result<solana_sdk::pubkey::Pubkey, String> {
    let (key, at, sig) = keyed_signature(X_SERVICE_AUTHORIZATION, header)?;
    if !trusted.contains(&key) {
        return Err(format!(
            "{key} is not a service this facilitator trusts (TRUSTED_SERVICE_KEYS)"
        ));
    }
    if now.abs_diff(at) > skew.unsigned_abs() {
        return Err(format!(
            "{X_SERVICE_AUTHORIZATION} was issued at {at}, more than {skew} s from now ({now})"
        ));
    }
    if !sig.verify(key.as_ref(), &service_request_digest(path, at, body)) {
        return Err(format!(
            "{X_SERVICE_AUTHORIZATION} is not {key}'s signature of this request"
        ));
    }
    Ok(key)
}

/// `extra` field of a plain channel offer (`upto`, `batch-settlement`) a trusted service
/// signed: `<service key>:<issued at>:<signature>` over [`plain_offer_message`]. A
/// facilitator configured to sponsor channels only for known services' offers checks it at the
/// open.
pub const OFFER_SIGNATURE: &str = "offerSignature";

/// What a service signs of a plain offer: its terms, one `name=value` line each (the
/// signature itself and corrective fields aside).
pub fn plain_offer_message(r: &PaymentRequirements, issued_at: i64) -> Vec<u8> {
    let text = |k: &str| {
        r.extra
            .get(k)
            .map(|v| v.as_str().map_or_else(|| v.to_string(), String::from))
            .unwrap_or_default()
    };
    let mut lines = vec![("x402", "trust-gate-plain-offer-v1".to_string())];
    lines.extend(offer_lines(r));
    lines.extend([
        ("feePayer", text("feePayer")),
        ("receiverAuthorizer", text("receiverAuthorizer")),
        ("withdrawDelay", text("withdrawDelay")),
        ("issuedAt", issued_at.to_string()),
    ]);
    canonical_lines(&lines)
}

/// Signs a plain offer as `service` at `issued_at` (sets `extra.offerSignature`).
pub fn sign_plain_offer(
    service: &solana_sdk::signature::Keypair,
    r: &mut PaymentRequirements,
    issued_at: i64,
) {
    use solana_sdk::signer::Signer;
    let sig = service.sign_message(&plain_offer_message(r, issued_at));
    r.extra.insert(
        OFFER_SIGNATURE.into(),
        format!("{}:{issued_at}:{sig}", service.pubkey()).into(),
    );
}

/// The trusted service that signed plain offer `r`, issued at most `max_age` seconds before
/// `now` (and not after it, but for `skew`); else why not.
pub fn plain_offer_signer(
    r: &PaymentRequirements,
    now: i64,
    max_age: i64,
    skew: i64,
    trusted: &[solana_sdk::pubkey::Pubkey],
) -> Result<solana_sdk::pubkey::Pubkey, String> {
    let field = format!("extra.{OFFER_SIGNATURE}");
    let value = r
        .extra
        .get(OFFER_SIGNATURE)
        .and_then(|v| v.as_str())
        .ok_or_else(|| format!("{field} is missing: this facilitator sponsors plain channels only for offers a service it trusts signed"))?;
    let (key, at, sig) = keyed_signature(&field, value)?;
    if !trusted.contains(&key) {
        return Err(format!(
            "{field}: {key} is not a service this facilitator trusts"
        ));
    }
    if at > now.saturating_add(skew) || now.saturating_sub(at) > max_age.saturating_add(skew) {
        return Err(format!(
            "{field} was issued at {at}; now is {now}: the offer expired"
        ));
    }
    let mut unsigned = r.clone();
    unsigned.extra.remove(OFFER_SIGNATURE);
    if !sig.verify(key.as_ref(), &plain_offer_message(&unsigned, at)) {
        return Err(format!("{field} is not {key}'s signature of this offer"));
    }
    Ok(key)
}

/// A challenge's expiry and so its payment's deadline (the strict gate's argument): its
/// `issuedAt` plus the requirements' `maxTimeoutSeconds`, saturating. Both are signed by the
/// service, so the facilitator derives the same deadline and refuses any other.
pub fn deadline(r: &PaymentRequirements, g: &GateExtension) -> i64 {
    let timeout = i64::try_from(r.max_timeout_seconds).unwrap_or(i64::MAX);
    g.issued_at.saturating_add(timeout)
}

/// The payment id hash of a memo: the bytes themselves when the memo is 64 hex characters,
/// else sha256 of its UTF-8 bytes.
pub fn payment_id_hash(memo: &str) -> [u8; 32] {
    if let Ok(h) = trust_gate_client::decode::parse_hex32("memo", memo) {
        if memo.len() == 64 {
            return h;
        }
    }
    Sha256::digest(memo.as_bytes()).into()
}

pub use trust_gate_client::settle::encode_transaction;

/// Standard base64 of the JSON of `v` (header encoding).
pub fn encode_header<T: Serialize>(v: &T) -> Result<String, ClientError> {
    let json = serde_json::to_vec(v).map_err(|e| ClientError::input("header", e.to_string()))?;
    Ok(STANDARD.encode(json))
}

/// Decodes a base64 JSON header; `header` names it in the error.
pub fn decode_header<T: serde::de::DeserializeOwned>(
    header: &str,
    value: &str,
) -> Result<T, ClientError> {
    let bytes = STANDARD
        .decode(value.trim())
        .map_err(|e| ClientError::input(header, format!("not standard base64: {e}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ClientError::input(header, format!("not the expected JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn requirements() -> PaymentRequirements {
        serde_json::from_value(json!({
            "scheme": "trust-gate",
            "network": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
            "amount": "1000",
            "asset": "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
            "payTo": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
            "maxTimeoutSeconds": 300,
            "extra": {"feePayer": "F1", "memo": "order-7", "gate": {
                "payerAgentAsset": "A", "payeeAgentAsset": "B", "payeeRecipient": "C",
                "policyId": 1, "issuedAt": 1700000000, "serviceSignature": "S"}}
        }))
        .unwrap()
    }

    #[test]
    fn a_plain_offer_is_taken_signed_by_a_trusted_service_while_fresh() {
        use solana_sdk::signature::{Keypair, Signer};
        let service = Keypair::new();
        let trusted = [service.pubkey()];
        let mut r = requirements();
        r.scheme = "upto".into();
        sign_plain_offer(&service, &mut r, 1_000);
        assert_eq!(
            plain_offer_signer(&r, 1_200, 300, 30, &trusted),
            Ok(service.pubkey())
        );
        assert!(plain_offer_signer(&r, 1_400, 300, 30, &trusted)
            .unwrap_err()
            .contains("expired"));
        assert!(plain_offer_signer(&r, 1_000, 300, 30, &[])
            .unwrap_err()
            .contains("trusts"));
        let mut changed = r.clone();
        changed.amount = "1001".into();
        assert!(plain_offer_signer(&changed, 1_000, 300, 30, &trusted)
            .unwrap_err()
            .contains("not"));
        let mut unsigned = r.clone();
        unsigned.extra.remove(OFFER_SIGNATURE);
        assert!(plain_offer_signer(&unsigned, 1_000, 300, 30, &trusted)
            .unwrap_err()
            .contains("missing"));
    }

    #[test]
    fn a_service_request_is_the_trusted_services_signature_of_its_route_and_body() {
        use solana_sdk::signature::{Keypair, Signer};
        let service = Keypair::new();
        let trusted = [service.pubkey()];
        let body = br#"{"x":1}"#;
        let h = sign_service_request(&service, "/settle", 1_000, body);
        let ok = |h: &str, path: &str, body: &[u8], now: i64| {
            service_request_signer(h, path, body, now, 60, &trusted)
        };
        assert_eq!(ok(&h, "/settle", body, 1_030), Ok(service.pubkey()));
        assert!(ok(&h, "/verify", body, 1_000).is_err(), "another route");
        assert!(
            ok(&h, "/settle", br#"{"x":2}"#, 1_000).is_err(),
            "another body"
        );
        let late = ok(&h, "/settle", body, 1_061).unwrap_err();
        assert!(late.contains("issued at 1000"), "{late}");
        let stranger = sign_service_request(&Keypair::new(), "/settle", 1_000, body);
        assert!(ok(&stranger, "/settle", body, 1_000)
            .unwrap_err()
            .contains("TRUSTED_SERVICE_KEYS"));
        for junk in ["", "a:b", "x:1:y"] {
            assert!(ok(junk, "/settle", body, 1_000).is_err(), "{junk}");
        }
    }

    #[test]
    fn the_spec_example_round_trips() {
        let pr = json!({"x402Version":2,"error":"Payment required",
            "resource":{"url":"https://api.example.com/paid","description":"Paid data","mimeType":"application/json"},
            "accepts":[{"scheme":"exact","network":"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1","amount":"1000",
              "asset":"4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU","payTo":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
              "maxTimeoutSeconds":300,"extra":{"feePayer":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}}]});
        let typed: PaymentRequired = serde_json::from_value(pr.clone()).unwrap();
        assert_eq!(serde_json::to_value(&typed).unwrap(), pr);
        let header = encode_header(&typed).unwrap();
        assert!(header
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c)));
        let back: PaymentRequired = decode_header(PAYMENT_REQUIRED, &header).unwrap();
        assert_eq!(back, typed);
    }

    #[test]
    fn a_failed_settlement_still_carries_an_empty_transaction() {
        let r = SettlementResponse {
            success: false,
            error_reason: Some("gate_instructions_missing".into()),
            payer: None,
            transaction: String::new(),
            network: "solana:x".into(),
            error_message: None,
            receipt: None,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["transaction"], "");
        assert_eq!(v["errorReason"], "gate_instructions_missing");
    }

    #[test]
    fn the_gate_extension_is_read_and_every_field_is_signed() {
        let r = requirements();
        let g = GateExtension::from_requirements(&r).unwrap();
        assert_eq!(g.policy_id, 1);
        let base = challenge_message(&r, "https://x/protected", &g);
        let mut changed = r.clone();
        changed.amount = "1001".into();
        assert_ne!(challenge_message(&changed, "https://x/protected", &g), base);
        let mut g2 = g.clone();
        g2.issued_at += 1;
        assert_ne!(challenge_message(&r, "https://x/protected", &g2), base);
        assert_ne!(challenge_message(&r, "https://x/other", &g), base);
        let mut no_gate = r.clone();
        no_gate.extra.remove("gate");
        let err = GateExtension::from_requirements(&no_gate)
            .unwrap_err()
            .to_string();
        assert!(err.contains("extra.gate"), "{err}");
    }

    #[test]
    fn payment_id_hash_from_memo() {
        let hex = "ab".repeat(32);
        assert_eq!(payment_id_hash(&hex), [0xab; 32]);
        let h = payment_id_hash("order-7");
        assert_eq!(h, <[u8; 32]>::from(Sha256::digest(b"order-7")));
        assert_ne!(payment_id_hash("order-8"), h);
    }

    #[test]
    fn bad_headers_name_themselves() {
        let err = decode_header::<PaymentPayload>(PAYMENT_SIGNATURE, "***").unwrap_err();
        assert!(err.to_string().contains("PAYMENT-SIGNATURE"));
    }
}
