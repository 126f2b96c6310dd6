//! The holdback over x402 (docs/holdback.md): the terms a challenge states for a payment the
//! payer's policy holds a share of, and the `refund` extension that advertises the payee's way
//! back for that share.

use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use trust_gate_client::holdback::{Holdback, HoldbackQuote};
use trust_gate_client::ClientError;

/// `extra.gate.holdback`: the terms the payer's policy and the payee's acceptance imply for
/// this payment, as the gate decided them when the challenge was issued. Signed with the rest
/// of the challenge; the settlement must carry exactly these (the strict gate refuses a tier
/// that moved since, `HoldbackTierMoved`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HoldbackTerms {
    /// The payee's tier the terms were quoted for: 0..=4, or 5 for a payee without engine
    /// stats.
    pub payee_tier: u8,
    /// The tier's share, in basis points of the amount.
    pub share_bps: u16,
    /// How long the share is held after settlement.
    pub hold_seconds: u32,
    /// The share of this amount held back, in base units (a decimal string, as `amount`);
    /// "0" when it rounds down to nothing (the settlement then has one transfer).
    pub held: String,
    /// The payee's escrow token account in the payment's mint.
    pub escrow: String,
    /// Who decides a dispute: a key or an arbiter set; absent for none (the payee's refusal
    /// then ends a dispute in its favour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arbiter: Option<String>,
}

impl HoldbackTerms {
    /// The terms of a decision's holdback `h`, paid into `escrow`, under `arbiter` (the
    /// default key for none).
    pub fn new(h: &Holdback, escrow: &Pubkey, arbiter: &Pubkey) -> HoldbackTerms {
        HoldbackTerms {
            payee_tier: h.tier,
            share_bps: h.share_bps,
            hold_seconds: h.hold_secs,
            held: h.held.to_string(),
            escrow: escrow.to_string(),
            arbiter: (*arbiter != Pubkey::default()).then(|| arbiter.to_string()),
        }
    }

    /// The quote a settlement carries; `field` names these terms in errors.
    pub fn quote(&self, field: &str) -> Result<HoldbackQuote, ClientError> {
        let held = self
            .held
            .parse()
            .map_err(|_| ClientError::input(&format!("{field}.held"), "not a u64"))?;
        let escrow = Pubkey::from_str(&self.escrow)
            .map_err(|_| ClientError::input(&format!("{field}.escrow"), "not a public key"))?;
        Ok(HoldbackQuote {
            tier: self.payee_tier,
            held,
            escrow,
        })
    }

    /// Whether these terms are the decision's `h` (the escrow and arbiter aside).
    pub fn states(&self, h: &Holdback) -> bool {
        self.payee_tier == h.tier
            && self.share_bps == h.share_bps
            && self.hold_seconds == h.hold_secs
            && self.held == h.held.to_string()
    }

    /// The canonical lines a service signs of them (`challenge_message`).
    pub(crate) fn lines(&self) -> [(&'static str, String); 6] {
        [
            ("holdbackPayeeTier", self.payee_tier.to_string()),
            ("holdbackShareBps", self.share_bps.to_string()),
            ("holdbackHoldSeconds", self.hold_seconds.to_string()),
            ("holdbackHeld", self.held.clone()),
            ("holdbackEscrow", self.escrow.clone()),
            ("holdbackArbiter", self.arbiter.clone().unwrap_or_default()),
        ]
    }
}

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
    /// The extension as a challenge carries it: `{"info": {...}}`.
    pub fn extension(&self) -> serde_json::Value {
        serde_json::json!({ "info": self })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h() -> Holdback {
        Holdback {
            tier: 1,
            share_bps: 2_000,
            hold_secs: 86_400,
            held: 200,
        }
    }

    #[test]
    fn terms_round_trip_to_the_quote_and_state_their_decision() {
        let escrow = Pubkey::new_unique();
        let t = HoldbackTerms::new(&h(), &escrow, &Pubkey::default());
        assert_eq!(t.arbiter, None, "the default key is no arbiter");
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["payeeTier"], 1);
        assert_eq!(v["held"], "200");
        assert!(v.get("arbiter").is_none());
        assert_eq!(
            t.quote("extra.gate.holdback").unwrap(),
            HoldbackQuote {
                tier: 1,
                held: 200,
                escrow
            }
        );
        assert!(t.states(&h()));
        assert!(!t.states(&Holdback { held: 199, ..h() }));
        assert!(!t.states(&Holdback { tier: 2, ..h() }));
    }

    #[test]
    fn bad_terms_name_their_field() {
        let mut t = HoldbackTerms::new(&h(), &Pubkey::new_unique(), &Pubkey::new_unique());
        t.held = "-1".into();
        let e = t.quote("extra.gate.holdback").unwrap_err().to_string();
        assert!(e.contains("extra.gate.holdback.held"), "{e}");
        t.held = "1".into();
        t.escrow = "nope".into();
        let e = t.quote("extra.gate.holdback").unwrap_err().to_string();
        assert!(e.contains("extra.gate.holdback.escrow"), "{e}");
        let unknown = serde_json::json!({"payeeTier":1,"shareBps":1,"holdSeconds":1,"held":"1","escrow":"x","more":1});
        assert!(serde_json::from_value::<HoldbackTerms>(unknown).is_err());
    }
}
