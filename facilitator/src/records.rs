//! GET /receipt: the facilitator's on-chain records of a payment (the FeedbackEmissionLog
//! written by settlement, the DisputeRecord written by a dispute).

use crate::error::ApiError;
use crate::service::Facilitator;
use serde_json::{json, Value};
use trust_gate_client::chain;
use trust_gate_client::decode::{self, hex, parse_hex32, FeedbackEmissionLog};

/// Parses the path of /receipt/:paymentIdHashHex.
pub fn parse_receipt_hash(s: &str) -> Result<[u8; 32], ApiError> {
    const FIELD: &str = "paymentIdHashHex";
    if s.len() != 64 {
        return Err(ApiError::input(
            FIELD,
            format!("must be 64 hex characters, got {}", s.len()),
        ));
    }
    parse_hex32(FIELD, s).map_err(|_| ApiError::input(FIELD, "is not hex"))
}

impl Facilitator {
    pub(crate) async fn feedback_log(
        &self,
        hash: &[u8; 32],
    ) -> Result<Option<FeedbackEmissionLog>, ApiError> {
        let key = self.builder.pda.feedback_log(&self.facilitator(), hash);
        match chain::account(&self.rpc, &key).await? {
            Some(acc) if acc.owner == self.builder.ids.gate => {
                Ok(Some(decode::account("FeedbackEmissionLog", &acc.data)?))
            }
            _ => Ok(None),
        }
    }

    /// GET /receipt: the FeedbackEmissionLog of a payment, whether it was disputed, and the
    /// payer agent's policy vault for the mint (its balance now) when it has one.
    pub async fn receipt(&self, hash: [u8; 32]) -> Result<Value, ApiError> {
        let Some(log) = self.feedback_log(&hash).await? else {
            return Ok(json!({"paymentIdHash": hex(&hash), "exists": false}));
        };
        let dispute_key = self.builder.pda.dispute(&self.facilitator(), &hash);
        let vault_key = self.builder.pda.vault(&log.payer_asset, &log.mint);
        let accounts = chain::accounts(&self.rpc, &[dispute_key, vault_key]).await?;
        let disputed = accounts[0].is_some();
        let vault = accounts[1]
            .as_ref()
            .and_then(|a| decode::vault(&vault_key, &a.owner, &a.data))
            .map(|v| json!({"address": v.address.to_string(), "balance": v.amount.to_string()}));
        Ok(json!({
            "paymentIdHash": hex(&hash),
            "exists": true,
            "score": log.score,
            "value": log.value.to_string(),
            "valueDecimals": log.value_decimals,
            "mint": log.mint.to_string(),
            "payee": log.payee_asset.to_string(),
            "payer": log.payer_asset.to_string(),
            "payerWallet": log.payer_wallet.to_string(),
            "emittedAtSlot": log.slot,
            "settledAtomically": log.settled_atomically,
            "disputed": disputed,
            "payerVault": vault,
            "feedbackLog": self.builder.pda.feedback_log(&self.facilitator(), &hash).to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipt_hashes() {
        assert!(parse_receipt_hash("zz").is_err());
        assert_eq!(parse_receipt_hash(&"ab".repeat(32)).unwrap(), [0xab; 32]);
    }
}
