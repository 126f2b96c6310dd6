//! POST /verify: the body (a verify context or an x402 v2 facilitator request) and the
//! decision it gets. Nothing is written.

use crate::reject::Rejection;
use serde_json::{Map, Value};
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use trust_gate_client::decode::Decision;
use trust_gate_client::simulate::PaymentQuery;
use trust_gate_x402::FacilitatorRequest;

/// A parsed /verify body.
#[derive(Clone, Debug)]
pub enum VerifyBody {
    Context(PaymentQuery),
    X402(Box<FacilitatorRequest>),
}

const CONTEXT_FIELDS: [&str; 5] = [
    "payerAgentAsset",
    "payeeAgentAsset",
    "amount",
    "mint",
    "policyId",
];

/// Parses a /verify body; every error names the field.
pub fn parse_body(body: &[u8], default_policy_id: Option<u32>) -> Result<VerifyBody, Rejection> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| Rejection::input("body", format!("not JSON: {e}")))?;
    let Value::Object(map) = v else {
        return Err(Rejection::input("body", "must be a JSON object"));
    };
    if map.contains_key("paymentPayload") || map.contains_key("x402Version") {
        return parse_x402(Value::Object(map)).map(|r| VerifyBody::X402(Box::new(r)));
    }
    parse_context(&map, default_policy_id).map(VerifyBody::Context)
}

/// An x402 v2 facilitator request (also the /settle body).
pub fn parse_x402(v: Value) -> Result<FacilitatorRequest, Rejection> {
    serde_json::from_value(v)
        .map_err(|e| Rejection::input("body", format!("not an x402 v2 facilitator request: {e}")))
}

fn parse_context(
    map: &Map<String, Value>,
    default_policy_id: Option<u32>,
) -> Result<PaymentQuery, Rejection> {
    if let Some(unknown) = map.keys().find(|k| !CONTEXT_FIELDS.contains(&k.as_str())) {
        return Err(Rejection::input(
            unknown,
            format!(
                "unknown field; a verify context has {}",
                CONTEXT_FIELDS.join(", ")
            ),
        ));
    }
    let policy_id = match map.get("policyId") {
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                Rejection::input(
                    "policyId",
                    format!("{v} is not an integer 0..={}", u32::MAX),
                )
            })?,
        None => default_policy_id.ok_or_else(|| {
            Rejection::input(
                "policyId",
                "missing, and this facilitator has no default policy id",
            )
        })?,
    };
    Ok(PaymentQuery {
        payer_asset: pubkey(map, "payerAgentAsset")?,
        payee_asset: pubkey(map, "payeeAgentAsset")?,
        amount: amount(map)?,
        mint: pubkey(map, "mint")?,
        policy_id,
    })
}

fn string<'a>(map: &'a Map<String, Value>, field: &str) -> Result<&'a str, Rejection> {
    match map.get(field) {
        None => Err(Rejection::input(field, "missing")),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(Rejection::input(
            field,
            format!("must be a string, got {other}"),
        )),
    }
}

fn pubkey(map: &Map<String, Value>, field: &str) -> Result<Pubkey, Rejection> {
    let s = string(map, field)?;
    Pubkey::from_str(s)
        .map_err(|_| Rejection::input(field, format!("{s:?} is not a base58 public key")))
}

/// The amount: a JSON string of decimal digits that fit in u64.
fn amount(map: &Map<String, Value>) -> Result<u64, Rejection> {
    let s = string(map, "amount")?;
    crate::adapter::decimal_u64(s).map_err(|why| Rejection::input("amount", format!("{s:?} {why}")))
}

/// The outcome of an x402 /verify.
pub struct X402Verified {
    pub decision: Decision,
    pub payer: Option<Pubkey>,
    /// For RequireApproval: the pending approval, recorded when the payer signed the request.
    pub held: Option<crate::service::holds::Held>,
    /// For an Allow: the holdback terms the challenge states, which the gate's are.
    pub holdback: Option<trust_gate_x402::holdback::HoldbackTerms>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> String {
        let e = parse_body(body.as_bytes(), None).unwrap_err();
        assert_eq!(e.status(), 400);
        assert_eq!(e.reason, "input_invalid");
        e.message
    }

    #[test]
    fn context_errors_name_the_field() {
        let k = Pubkey::new_unique().to_string();
        let ok = format!(
            r#"{{"payerAgentAsset":"{k}","payeeAgentAsset":"{k}","amount":"5","mint":"{k}","policyId":1}}"#
        );
        assert!(
            matches!(parse_body(ok.as_bytes(), None).unwrap(), VerifyBody::Context(q) if q.amount == 5)
        );
        assert!(err("[1]").starts_with("body"));
        assert!(err("{").starts_with("body: not JSON"));
        assert!(err(&ok.replace(r#""amount":"5""#, r#""amount":"5x""#)).starts_with("amount"));
        assert!(
            err(&ok.replace(r#""amount":"5""#, r#""amount":"18446744073709551616""#))
                .contains("u64")
        );
        assert!(err(&ok.replace(r#""amount":"5""#, r#""amount":5"#))
            .starts_with("amount: must be a string"));
        assert!(
            err(&ok.replace(&format!(r#""mint":"{k}""#), r#""mint":"0OIl""#)).starts_with("mint")
        );
        assert!(
            err(&ok.replace(&format!(r#""payerAgentAsset":"{k}","#), ""))
                .starts_with("payerAgentAsset: missing")
        );
        assert!(
            err(&ok.replace(r#""policyId":1"#, r#""policyId":1,"extra":2"#))
                .starts_with("extra: unknown field")
        );
        assert!(err(&ok.replace(r#","policyId":1"#, "")).starts_with("policyId: missing"));
        assert!(err(&ok.replace(r#""policyId":1"#, r#""policyId":-1"#)).starts_with("policyId"));
        let defaulted = parse_body(ok.replace(r#","policyId":1"#, "").as_bytes(), Some(7)).unwrap();
        assert!(matches!(defaulted, VerifyBody::Context(q) if q.policy_id == 7));
    }
}
