//! POST /dispute and GET /receipt: the facilitator's on-chain records of a payment (the
//! FeedbackEmissionLog written by settlement, the DisputeRecord written by a dispute).

use crate::error::ApiError;
use crate::service::Facilitator;
use axum::http::StatusCode;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use trust_gate_client::decode::{self, hex, parse_hex32, DisputeRecord, FeedbackEmissionLog};
use trust_gate_client::{chain, settle, ClientError};

/// The longest feedback URI the gate stores.
const MAX_URI: usize = 250;

/// A parsed /dispute body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisputeRequest {
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    pub reason_hash: [u8; 32],
    pub feedback_uri: String,
}

const DISPUTE_FIELDS: [&str; 5] = [
    "paymentIdHash",
    "payeeAgentAsset",
    "reason",
    "reasonHash",
    "feedbackUri",
];

impl DisputeRequest {
    pub fn parse(body: &[u8]) -> Result<Self, ApiError> {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::input("body", format!("not JSON: {e}")))?;
        let Value::Object(map) = v else {
            return Err(ApiError::input("body", "must be a JSON object"));
        };
        if let Some(unknown) = map.keys().find(|k| !DISPUTE_FIELDS.contains(&k.as_str())) {
            return Err(ApiError::input(unknown, "unknown field"));
        }
        let s = |f: &str| -> Result<Option<&str>, ApiError> {
            match map.get(f) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(other) => Err(ApiError::input(f, format!("must be a string, got {other}"))),
            }
        };
        let required = |f: &str| s(f)?.ok_or_else(|| ApiError::input(f, "missing"));
        let payment_id_hash = hex32("paymentIdHash", required("paymentIdHash")?)?;
        let payee = required("payeeAgentAsset")?;
        let payee_asset = Pubkey::from_str(payee).map_err(|_| {
            ApiError::input(
                "payeeAgentAsset",
                format!("{payee:?} is not a base58 public key"),
            )
        })?;
        let reason_hash = match (s("reason")?, s("reasonHash")?) {
            (Some(_), Some(_)) => {
                return Err(ApiError::input(
                    "reason",
                    "give reason or reasonHash, not both",
                ))
            }
            (Some(text), None) if !text.trim().is_empty() => Sha256::digest(text.as_bytes()).into(),
            (None, Some(h)) => {
                let h = hex32("reasonHash", h)?;
                if h == [0; 32] {
                    return Err(ApiError::input("reasonHash", "must not be all zeros"));
                }
                h
            }
            _ => {
                return Err(ApiError::input(
                    "reason",
                    "missing: give reason (text) or reasonHash (64 hex)",
                ))
            }
        };
        let feedback_uri = s("feedbackUri")?.unwrap_or_default().to_string();
        if feedback_uri.len() > MAX_URI {
            return Err(ApiError::input(
                "feedbackUri",
                format!("{} bytes; at most {MAX_URI}", feedback_uri.len()),
            ));
        }
        Ok(DisputeRequest {
            payment_id_hash,
            payee_asset,
            reason_hash,
            feedback_uri,
        })
    }
}

fn hex32(field: &str, s: &str) -> Result<[u8; 32], ApiError> {
    if s.len() != 64 {
        return Err(ApiError::input(
            field,
            format!("must be 64 hex characters, got {}", s.len()),
        ));
    }
    parse_hex32(field, s).map_err(|_| ApiError::input(field, "is not hex"))
}

/// Parses the path of /receipt/:paymentIdHashHex.
pub fn parse_receipt_hash(s: &str) -> Result<[u8; 32], ApiError> {
    hex32("paymentIdHashHex", s)
}

impl Facilitator {
    async fn feedback_log(&self, hash: &[u8; 32]) -> Result<Option<FeedbackEmissionLog>, ApiError> {
        let key = self.builder.pda.feedback_log(&self.facilitator(), hash);
        match chain::account(&self.rpc, &key).await? {
            Some(acc) if acc.owner == self.builder.ids.gate => {
                Ok(Some(decode::account("FeedbackEmissionLog", &acc.data)?))
            }
            _ => Ok(None),
        }
    }

    /// GET /receipt: the FeedbackEmissionLog of a payment, and whether it was disputed.
    pub async fn receipt(&self, hash: [u8; 32]) -> Result<Value, ApiError> {
        let Some(log) = self.feedback_log(&hash).await? else {
            return Ok(json!({"paymentIdHash": hex(&hash), "exists": false}));
        };
        let dispute_key = self.builder.pda.dispute(&self.facilitator(), &hash);
        let disputed = chain::account(&self.rpc, &dispute_key).await?.is_some();
        Ok(json!({
            "paymentIdHash": hex(&hash),
            "exists": true,
            "score": log.score,
            "value": log.value.to_string(),
            "valueDecimals": log.value_decimals,
            "mint": log.mint.to_string(),
            "payee": log.payee_asset.to_string(),
            "payer": log.payer_asset.to_string(),
            "emittedAtSlot": log.slot,
            "settledAtomically": log.settled_atomically,
            "disputed": disputed,
            "feedbackLog": self.builder.pda.feedback_log(&self.facilitator(), &hash).to_string(),
        }))
    }

    /// POST /dispute: `dispute_payment` signed by the facilitator. 404 when the payment was
    /// never settled here, 409 when already disputed.
    pub async fn dispute(&self, d: DisputeRequest) -> Result<Value, ApiError> {
        let Some(keypair) = self.key.keypair() else {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "signer_required",
                "this facilitator is configured with a public key only and cannot dispute",
            ));
        };
        let hash_hex = hex(&d.payment_id_hash);
        let Some(log) = self.feedback_log(&d.payment_id_hash).await? else {
            return Err(ApiError::not_found(format!(
                "payment {hash_hex} was never settled by this facilitator (no feedback log)"
            )));
        };
        if log.payee_asset != d.payee_asset {
            return Err(ApiError::input(
                "payeeAgentAsset",
                format!(
                    "payment {hash_hex} paid {}, not {}",
                    log.payee_asset, d.payee_asset
                ),
            ));
        }
        let record = self
            .builder
            .pda
            .dispute(&self.facilitator(), &d.payment_id_hash);
        let conflict = || {
            ApiError::new(
                StatusCode::CONFLICT,
                "already_disputed",
                format!("payment {hash_hex} is already disputed (record {record})"),
            )
        };
        if chain::account(&self.rpc, &record).await?.is_some() {
            return Err(conflict());
        }
        let dispute = settle::Dispute {
            collection: self.collection().await?,
            payment_id_hash: d.payment_id_hash,
            payee_asset: d.payee_asset,
            reason_hash: d.reason_hash,
            feedback_uri: d.feedback_uri,
        };
        let sig = match settle::dispute(&self.rpc, &self.builder, keypair, &dispute).await {
            Ok(sig) => sig,
            // Lost a race with a concurrent dispute of the same payment.
            Err(ClientError::Transaction { .. })
                if chain::account(&self.rpc, &record).await?.is_some() =>
            {
                return Err(conflict())
            }
            Err(e @ ClientError::Transaction { .. }) => {
                return Err(ApiError::new(
                    StatusCode::BAD_GATEWAY,
                    "transaction_failed",
                    e.to_string(),
                ))
            }
            Err(e) => return Err(e.into()),
        };
        let record_acc = chain::account(&self.rpc, &record).await?;
        let view = match record_acc {
            Some(acc) => {
                let r: DisputeRecord = decode::account("DisputeRecord", &acc.data)?;
                json!({
                    "address": record.to_string(),
                    "paymentIdHash": hex(&r.payment_id_hash),
                    "payee": r.payee_asset.to_string(),
                    "reasonHash": hex(&r.reason_hash),
                    "slot": r.slot,
                })
            }
            None => json!({"address": record.to_string()}),
        };
        Ok(json!({"success": true, "transaction": sig.to_string(), "disputeRecord": view}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispute_bodies() {
        let k = Pubkey::new_unique();
        let h = "ab".repeat(32);
        let ok = DisputeRequest::parse(
            format!(
                r#"{{"paymentIdHash":"{h}","payeeAgentAsset":"{k}","reason":"not delivered"}}"#
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(ok.payment_id_hash, [0xab; 32]);
        assert_eq!(
            ok.reason_hash,
            <[u8; 32]>::from(Sha256::digest(b"not delivered"))
        );
        let bad = |body: String, field: &str| {
            let e = DisputeRequest::parse(body.as_bytes()).unwrap_err();
            assert!(e.message.starts_with(field), "{}", e.message);
        };
        bad(
            format!(r#"{{"paymentIdHash":"ab","payeeAgentAsset":"{k}","reason":"x"}}"#),
            "paymentIdHash",
        );
        bad(
            format!(r#"{{"paymentIdHash":"{h}","payeeAgentAsset":"nope","reason":"x"}}"#),
            "payeeAgentAsset",
        );
        bad(
            format!(r#"{{"paymentIdHash":"{h}","payeeAgentAsset":"{k}"}}"#),
            "reason",
        );
        bad(
            format!(
                r#"{{"paymentIdHash":"{h}","payeeAgentAsset":"{k}","reasonHash":"{}"}}"#,
                "00".repeat(32)
            ),
            "reasonHash",
        );
        bad(
            format!(r#"{{"paymentIdHash":"{h}","payeeAgentAsset":"{k}","reason":"x","y":1}}"#),
            "y",
        );
        assert!(parse_receipt_hash("zz").is_err());
        assert_eq!(parse_receipt_hash(&h).unwrap(), [0xab; 32]);
    }
}
