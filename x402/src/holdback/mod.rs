//! The holdback over x402 (docs/holdback.md): the terms a challenge states for a payment the
//! payer's policy holds a share of ([`HoldbackTerms`]), and x402's `refund` extension
//! (`specs/extensions/refund.md`) through which the payer asks the payee for that share back:
//!
//! - [`refund`]: the 402's [`RefundInfo`], the payer's [`RefundRequest`] signed as a compact
//!   JWS ([`sign_refund_request`], [`verify_payer_signature`]) and the payee's
//!   [`RefundResponse`] with its signed receipt ([`sign_refund_receipt`],
//!   [`verify_refund_receipt`]);
//! - [`jws`]: compact JWS of Solana keys (Ed25519, `EdDSA`, named by a `did:pkh`) over
//!   canonical JSON.

pub mod jws;
pub mod refund;

pub use jws::*;
pub use refund::*;

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

/// One line a person reads before paying: the share, how long, where, who decides.
impl std::fmt::Display for HoldbackTerms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} base units ({} bps, payee tier {}) held {} s in escrow {}, then released to the payee",
            self.held, self.share_bps, self.payee_tier, self.hold_seconds, self.escrow
        )?;
        match &self.arbiter {
            Some(a) => write!(f, "; a dispute within the hold is decided by {a}"),
            None => f.write_str("; no arbiter: a dispute ends when the payee refunds or the arbitration period passes"),
        }
    }
}

#[cfg(test)]
mod tests;
