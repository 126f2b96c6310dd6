//! What a facilitator keeps of each payment it settled, beyond the chain: the settlement's
//! signature and payer agent (written when it lands), and, once its crank closes the log, what
//! the log held and whether it was disputed.
//!
//! It is what lets /settle refuse a payment id it settled before even after the log is gone
//! (the chain alone refuses the same deadline, see docs/settlement.md) and /receipt answer
//! for a closed payment without the chain's history. Kept in process, or in Redis for
//! replicas (see [`crate::lock_store`]), for [`RECORD_TTL`].

use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::str::FromStr;
use std::time::Duration;
use trust_gate_client::receipts::Receipt;

/// How long a payment's record is kept: 90 days, well past the 7-day dispute window and
/// the crank's close; after that /receipt rebuilds a closed payment from the chain's
/// history (where the RPC node still has it).
pub const RECORD_TTL: Duration = Duration::from_secs(90 * 24 * 60 * 60);

/// A payment's record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PaymentRecord {
    /// The settlement transaction.
    pub signature: Option<Signature>,
    pub payer_asset: Option<Pubkey>,
    /// What the log held, kept when this facilitator closed it.
    pub receipt: Option<Receipt>,
    /// Whether the payment was disputed (known once closed).
    pub disputed: bool,
    /// The transaction that closed the log.
    pub closed_by: Option<Signature>,
}

impl PaymentRecord {
    pub fn encode(&self) -> String {
        json!({
            "signature": self.signature.map(|s| s.to_string()),
            "payerAsset": self.payer_asset.map(|p| p.to_string()),
            "receipt": self.receipt.as_ref().map(Receipt::to_json),
            "disputed": self.disputed,
            "closedBy": self.closed_by.map(|s| s.to_string()),
        })
        .to_string()
    }

    /// `None` for anything [`PaymentRecord::encode`] did not write.
    pub fn decode(s: &str) -> Option<PaymentRecord> {
        let v: Value = serde_json::from_str(s).ok()?;
        let sig = |f: &str| match &v[f] {
            Value::Null => Some(None),
            s => Signature::from_str(s.as_str()?).ok().map(Some),
        };
        Some(PaymentRecord {
            signature: sig("signature")?,
            payer_asset: match &v["payerAsset"] {
                Value::Null => None,
                p => Some(Pubkey::from_str(p.as_str()?).ok()?),
            },
            receipt: match &v["receipt"] {
                Value::Null => None,
                r => Some(Receipt::from_json(r)?),
            },
            disputed: v["disputed"].as_bool()?,
            closed_by: sig("closedBy")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_and_nothing_else_does() {
        let mut r = PaymentRecord {
            signature: Some(Signature::from([1; 64])),
            payer_asset: Some(Pubkey::new_unique()),
            ..PaymentRecord::default()
        };
        assert_eq!(PaymentRecord::decode(&r.encode()), Some(r.clone()));
        r.receipt = Some(Receipt {
            payment_id_hash: [2; 32],
            facilitator: Pubkey::new_unique(),
            payee_asset: Pubkey::new_unique(),
            payer_asset: r.payer_asset,
            payer_wallet: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            amount: 10,
            value_decimals: 6,
            score: 90,
            slot: 4,
            created_at: 5,
            deadline: Some(6),
            signature: r.signature,
        });
        r.disputed = true;
        r.closed_by = Some(Signature::from([3; 64]));
        assert_eq!(PaymentRecord::decode(&r.encode()), Some(r));
        for bad in ["", "{}", "[]", r#"{"signature":"x","disputed":false}"#] {
            assert_eq!(PaymentRecord::decode(bad), None, "{bad:?}");
        }
    }
}
