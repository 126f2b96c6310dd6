//! x402's `upto` scheme on Solana, on the wire: the requirements' `extra`, the client's
//! payload and the facilitator's reason strings, as `@x402/svm` 2.27 speaks them (the scheme's
//! SVM specification at the version that package implements), and trust-gate's gated variant.
//!
//! `upto` pays for metered use: the client escrows a ceiling in a payment channel it opens
//! (the payload carries the open transaction, signed by the client, for the facilitator to
//! co-sign and send: the "deposit"), the server serves, then charges the actual amount with a
//! voucher its own key signs (the "claim"), which the facilitator applies, seals and
//! distributes in one transaction. The client never signs a voucher.
//!
//! The gated variant ([`SCHEME_GATED_UPTO`]) is the same exchange with the gate's
//! `gate_channel_open` before the program's `open` (the payer's policy runs on the ceiling and
//! the channel is recorded) and the gate's close in the claim (what was not charged is given
//! back to the policy, the payee gets its feedback). A stock open has no room for the gate's
//! instruction and allows no lookup table, hence a scheme of its own.

use anchor_lang::prelude::Pubkey;
use serde::{Deserialize, Deserializer, Serialize};

/// The stock scheme's name.
pub const SCHEME_UPTO: &str = "upto";
/// The gated variant's name.
pub const SCHEME_GATED_UPTO: &str = "trust-gate-upto";
/// The channel's flow as x402 names it (servers add it to `extra`; facilitators ignore it).
pub const PAYMENT_FLOW_ESCROW: &str = "escrow";
/// The most a client's open may ask per compute unit, and the most units (the scheme's caps:
/// the fee payer pays for them).
pub const MAX_OPEN_UNIT_LIMIT: u32 = 400_000;
pub const MAX_OPEN_UNIT_PRICE_MICRO_LAMPORTS: u64 = 5_000_000;
/// Instructions after the open: Memo or Lighthouse, at most this many, of which at most
/// [`MAX_LIGHTHOUSE`] Lighthouse.
pub const MAX_OPEN_SUFFIX: usize = 4;
pub const MAX_LIGHTHOUSE: usize = 3;
/// The memo a seller may ask for, in UTF-8 bytes.
pub const MAX_MEMO_BYTES: usize = 256;
pub use trust_gate_client::channels::{
    abandoned_after, ABANDON_GRACE_SECS, EXPIRY_SLACK_SECS, MAX_CHANNEL_LIFETIME_SECS,
};

/// `extra` of an `upto` offer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UptoExtra {
    /// The facilitator's sponsor: the transactions' fee payer, the channel's rent payer and
    /// its zero-share payee.
    pub fee_payer: String,
    /// The channel's voucher key: the server's (or, delegated, the facilitator's).
    pub receiver_authorizer: String,
    /// The channel's grace period (seconds, > 0).
    pub withdraw_delay: u32,
    /// The mint's token program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_program: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_flow: Option<String>,
    /// The seller's memo: the open must carry exactly one Memo of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recent_blockhash: Option<String>,
    /// A decimal string as 2.27 sends it; a number is read too.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u64_either"
    )]
    pub last_valid_block_height: Option<WireU64>,
    /// A decimal string as 2.27 sends it (the specification says a number); both are read.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u64_either"
    )]
    pub recent_slot: Option<WireU64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_after: Option<i64>,
}

/// Whether a settle is the deposit (before the server's handler) or the claim (after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UptoSettleType {
    Deposit,
    Claim,
}

/// The client's `upto` payload (`paymentPayload.payload`), with the two fields the server
/// adds for `/settle`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UptoPayload {
    /// The payer's wallet: the open's first account.
    pub from: String,
    /// The ceiling (atomic units): the deposit.
    pub max_amount: String,
    /// Unix seconds, not 0: the claim's voucher expires then.
    pub expires_at: i64,
    pub valid_after: i64,
    /// The open's salt, a decimal u64.
    pub nonce: String,
    /// The open's slot: a decimal string as 2.27 sends it (the specification says a number,
    /// which the stock facilitator refuses); both are read, a string is written.
    #[serde(deserialize_with = "u64_either")]
    pub open_slot: WireU64,
    /// The channel's address.
    pub channel_id: String,
    /// The deposit, equal to `maxAmount`.
    pub deposit: String,
    /// The channel's voucher key, equal to `extra.receiverAuthorizer`.
    pub authorized_signer: String,
    /// Base64 of the client-signed open transaction, the fee payer's signature empty.
    pub open_transaction: String,
    /// The claim's voucher (base58 of the 64-byte signature), added by the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voucher_signature: Option<String>,
    /// Added by the server for `/settle`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub settle_type: Option<UptoSettleType>,
}

/// A u64 as the wire may carry it, written as a decimal string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WireU64(pub u64);

impl Serialize for WireU64 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

fn u64_either<'de, D: Deserializer<'de>>(d: D) -> Result<WireU64, D::Error> {
    number_or_decimal(d).map(WireU64)
}

fn opt_u64_either<'de, D: Deserializer<'de>>(d: D) -> Result<Option<WireU64>, D::Error> {
    u64_either(d).map(Some)
}

/// A u64 the wire writes as a JSON number or as a decimal string (the channel schemes' slots,
/// salts and delays, which clients write either way).
pub(crate) fn number_or_decimal<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    // A visitor rather than an untagged enum, which would buffer the value first: every
    // voucher's channel config has one.
    struct NumberOrDecimal;
    impl serde::de::Visitor<'_> for NumberOrDecimal {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a u64, as a number or a decimal string")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_str<E: serde::de::Error>(self, t: &str) -> Result<u64, E> {
            decimal(t).ok_or_else(|| E::custom(format!("{t:?} is not a decimal u64")))
        }
    }
    d.deserialize_any(NumberOrDecimal)
}

/// `value` as a u64 when it is decimal digits only (no sign, no space) and fits.
pub(crate) fn decimal(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

use crate::reason::Reason;

/// A payload field that must name a key, or the reason and message naming it.
pub fn key(field: &str, value: &str) -> Result<Pubkey, (Reason, String)> {
    value.parse().map_err(|_| {
        (
            Reason::UnsupportedPayloadType,
            format!("{field} is not a base58 address: {value:?}"),
        )
    })
}

/// A payload field that must hold a decimal amount.
pub fn amount(field: &str, value: &str) -> Result<u64, (Reason, String)> {
    decimal(value).ok_or_else(|| {
        (
            Reason::UptoAmount,
            format!("{field} is not a decimal amount of atomic units: {value:?}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload() -> serde_json::Value {
        json!({
            "from": Pubkey::new_unique().to_string(),
            "maxAmount": "5000000",
            "expiresAt": 1_800_000_300,
            "validAfter": 1_800_000_000,
            "nonce": "18446744073709551615",
            "openSlot": "123456",
            "channelId": Pubkey::new_unique().to_string(),
            "deposit": "5000000",
            "authorizedSigner": Pubkey::new_unique().to_string(),
            "openTransaction": "AQ==",
        })
    }

    #[test]
    fn the_payload_reads_as_2_27_sends_it_and_writes_the_same() {
        let v = payload();
        let p: UptoPayload = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.open_slot, WireU64(123_456));
        assert_eq!(
            (p.voucher_signature.as_deref(), p.settle_type),
            (None, None)
        );
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        // The specification's number is read too, and written as 2.27 writes it.
        let mut n = v.clone();
        n["openSlot"] = json!(123_456);
        let q: UptoPayload = serde_json::from_value(n).unwrap();
        assert_eq!(serde_json::to_value(&q).unwrap(), v);
        // The server's additions.
        let mut s = v;
        s["type"] = json!("claim");
        s["voucherSignature"] = json!("sig");
        let c: UptoPayload = serde_json::from_value(s).unwrap();
        assert_eq!(c.settle_type, Some(UptoSettleType::Claim));
        for bad in [json!("12x"), json!(-1), json!(1.5), json!(null)] {
            let mut b = payload();
            b["openSlot"] = bad.clone();
            assert!(serde_json::from_value::<UptoPayload>(b).is_err(), "{bad}");
        }
        let mut t = payload();
        t["type"] = json!("refund");
        assert!(serde_json::from_value::<UptoPayload>(t).is_err());
    }

    #[test]
    fn the_extra_reads_string_and_number_slots() {
        let fee_payer = Pubkey::new_unique().to_string();
        let e: UptoExtra = serde_json::from_value(json!({
            "feePayer": fee_payer,
            "receiverAuthorizer": Pubkey::new_unique().to_string(),
            "withdrawDelay": 900,
            "paymentFlow": "escrow",
            "recentSlot": "77",
            "lastValidBlockHeight": 99,
        }))
        .unwrap();
        assert_eq!(
            (e.recent_slot, e.last_valid_block_height),
            (Some(WireU64(77)), Some(WireU64(99)))
        );
        assert_eq!(e.fee_payer, fee_payer);
        let out = serde_json::to_value(&e).unwrap();
        assert_eq!(out["recentSlot"], "77");
        assert!(out.get("memo").is_none());
        assert!(serde_json::from_value::<UptoExtra>(json!({"feePayer": fee_payer})).is_err());
    }

    #[test]
    fn fields_are_named_in_their_errors() {
        let (r, m) = key("from", "nope").unwrap_err();
        assert_eq!(r, Reason::UnsupportedPayloadType);
        assert!(m.contains("from"));
        let (r, m) = amount("maxAmount", "-5").unwrap_err();
        assert_eq!(r, Reason::UptoAmount);
        assert!(m.contains("maxAmount"));
        assert_eq!(amount("deposit", "42"), Ok(42));
    }
}
