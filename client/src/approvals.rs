//! A pending approval: a payment (or a gated channel's deposit) the gate held because its
//! amount is above the payer policy's approval threshold, as a facilitator keeps it and
//! answers it (`GET /approvals`, the `approval.pending` of a 402). Its id is the address of
//! the payment's approval on chain, derived from its terms: whoever approves checks the terms
//! against the id ([`PendingApproval::check_id`]), so a facilitator cannot swap them.

use crate::decode::ApprovalTerms;
use crate::error::ClientError;
use crate::instructions::Builder;
use crate::json::{self, Amount, Key};
use anchor_lang::prelude::Pubkey;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The longest an approval stands on chain (`approve_payment` refuses a later expiry).
pub use policy_vault::state::MAX_APPROVAL_SECS;

/// A payment held for an approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    /// The pending id: the address of the payment's approval on chain (`Pdas::approval` of
    /// the terms).
    #[serde(with = "json::key")]
    #[schemars(with = "Key")]
    pub id: Pubkey,
    /// The payer agent.
    #[serde(with = "json::key")]
    #[schemars(with = "Key")]
    pub payer_agent_asset: Pubkey,
    /// The payee agent.
    #[serde(with = "json::key")]
    #[schemars(with = "Key")]
    pub payee_agent_asset: Pubkey,
    /// The token mint.
    #[serde(with = "json::key")]
    #[schemars(with = "Key")]
    pub mint: Pubkey,
    /// The amount, atomic units (x402 writes amounts as decimal strings).
    #[serde(with = "json::amount")]
    #[schemars(with = "Amount")]
    pub amount: u64,
    /// The payer's policy id.
    pub policy_id: u32,
    /// What was held: `payment` (a trust-gate settlement) or `channel` (a gated channel's
    /// deposit, `upto` or a session).
    pub kind: String,
    /// The x402 resource the payment was for, when the request named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Unix seconds when the payment was last held.
    pub held_at: i64,
    /// Unix seconds when the record goes.
    pub expires_at: i64,
}

/// Where a held payment stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalState {
    /// No approval of its terms on chain yet.
    Pending,
    /// An approval stands: the same payment passes once, until its expiry.
    Approved,
    /// An approval was made and has expired (anyone may close it).
    Expired,
}

/// The approval of a held payment on chain, when a member made it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StandingApproval {
    /// Unix seconds it stands until.
    pub expires_at: i64,
    /// Unix seconds of the approval.
    pub approved_at: i64,
    /// Who paid its rent (back to it when the payment uses it or anyone closes it).
    pub rent_payer: Key,
    /// How many members signed.
    pub signers: u8,
}

/// A held payment as a facilitator answers it (`GET /approvals/{id}`, each of
/// `GET /approvals`): the record, its state and its approval on chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeldPayment {
    #[serde(flatten)]
    pub record: PendingApproval,
    /// Where it stands: pending, approved or expired.
    pub state: ApprovalState,
    /// The approval on chain, when a member made it.
    pub approval: Option<StandingApproval>,
}

/// A facilitator's `GET /approvals[?payer=]` answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeldPayments {
    /// The payer agent listed (null: every payer's).
    pub payer_agent_asset: Option<Key>,
    /// The held payments.
    pub approvals: Vec<HeldPayment>,
    /// How long the facilitator keeps a pending record, seconds.
    pub pending_secs: u64,
    /// How many pending records it keeps per payer.
    pub per_payer: usize,
}

impl PendingApproval {
    /// The record of `terms` held at `now` (unix seconds) for `pending`.
    pub fn new(
        b: &Builder,
        terms: &ApprovalTerms,
        kind: &str,
        resource: Option<String>,
        now: i64,
        pending: Duration,
    ) -> Self {
        PendingApproval {
            id: b.pda.approval(terms),
            payer_agent_asset: terms.payer_asset,
            payee_agent_asset: terms.payee_asset,
            mint: terms.mint,
            amount: terms.amount,
            policy_id: terms.policy_id,
            kind: kind.to_string(),
            resource,
            held_at: now,
            expires_at: now.saturating_add(i64::try_from(pending.as_secs()).unwrap_or(i64::MAX)),
        }
    }

    /// The terms an approval of it binds.
    pub fn terms(&self) -> ApprovalTerms {
        ApprovalTerms {
            payer_asset: self.payer_agent_asset,
            payee_asset: self.payee_agent_asset,
            mint: self.mint,
            amount: self.amount,
            policy_id: self.policy_id,
        }
    }

    /// Refuses a record whose id is not the approval address of its terms (a facilitator
    /// showing other terms than the ones it held under that id).
    pub fn check_id(&self, b: &Builder) -> Result<(), ClientError> {
        let want = b.pda.approval(&self.terms());
        if self.id != want {
            return Err(ClientError::input(
                "id",
                format!(
                    "{} is not the approval address of the terms shown ({want}): refusing to approve terms other than the id's",
                    self.id
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Network, ProgramIds};

    #[test]
    fn a_record_reads_back_and_its_id_is_checked_against_its_terms() {
        let b = Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap();
        let terms = ApprovalTerms {
            payer_asset: Pubkey::new_unique(),
            payee_asset: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            amount: u64::MAX,
            policy_id: 1,
        };
        let a = PendingApproval::new(&b, &terms, "channel", None, 5, Duration::from_secs(10));
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["amount"], u64::MAX.to_string());
        assert_eq!(json["id"], a.id.to_string());
        assert_eq!(json["expiresAt"], 15);
        assert!(json.get("resource").is_none());
        assert_eq!(serde_json::from_value::<PendingApproval>(json).unwrap(), a);
        a.check_id(&b).unwrap();
        // Other terms under the same id: refused by name.
        let swapped = PendingApproval {
            amount: 1,
            ..a.clone()
        };
        let e = swapped.check_id(&b).unwrap_err().to_string();
        assert!(
            e.contains("id") && e.contains("not the approval address"),
            "{e}"
        );
    }
}
