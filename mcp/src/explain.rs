//! Deny reason codes 1..27 explained: name, category, meaning and a remediation that holds for
//! this implementation (see docs/deny-codes.md); decisions as tools report them.

use policy_vault::engine::DenyReason;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use trust_gate_client::decode::DecisionView;

/// One deny reason explained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explanation {
    pub code: u8,
    pub name: &'static str,
    /// kill_switch | spending | velocity | counterparty | reputation_integrity | validation |
    /// unrated | validity | payee_list | holdback
    pub category: &'static str,
    /// One line: what the gate found.
    pub meaning: &'static str,
    /// What the payer or payee can do, true for this implementation.
    pub remediation: &'static str,
}

pub const EXPLANATIONS: [Explanation; 27] = [
    Explanation {
        code: 1,
        name: "KillSwitchEngaged",
        category: "kill_switch",
        meaning: "The payer agent's kill switch is paused, so every payment it makes is denied whatever its policies say.",
        remediation: "Members of the payer's policy authority reaching its threshold release it with set_killswitch paused=false, all signatures in one transaction (gate_set_killswitch does it only when the threshold is 1). gate_get_killswitch shows the state.",
    },
    Explanation {
        code: 2,
        name: "SpendingPerTxExceeded",
        category: "spending",
        meaning: "The amount is larger than the per_tx_cap of the payer's policy.",
        remediation: "Waiting does not help and policies are immutable: pay a smaller amount, or create a policy with a higher per_tx_cap under another policy_id (gate_init_policy) and pay under that id. gate_get_policy shows the caps.",
    },
    Explanation {
        code: 3,
        name: "SpendingDailyExceeded",
        category: "spending",
        meaning: "The amount settled under this policy today (UTC day) plus this payment would exceed its daily_cap.",
        remediation: "The daily counter restarts at 00:00 UTC; otherwise create a policy with a higher daily_cap under another policy_id (gate_init_policy), since policies are immutable. gate_get_policy shows day_spent.",
    },
    Explanation {
        code: 4,
        name: "SpendingWeeklyExceeded",
        category: "spending",
        meaning: "The amount settled under this policy this week (from Monday 00:00 UTC) plus this payment would exceed its weekly_cap.",
        remediation: "The weekly counter restarts on Monday 00:00 UTC; otherwise create a policy with a higher weekly_cap under another policy_id (gate_init_policy), since policies are immutable.",
    },
    Explanation {
        code: 5,
        name: "VelocityWindowExceeded",
        category: "velocity",
        meaning: "The amount committed in the current velocity window plus this payment would exceed the window cap, which is scaled by tier0_decay_bps for a payer of immediate tier 0, unrated or with unreadable stats.",
        remediation: "Wait until window_start + velocity_window_secs (gate_get_velocity_ledger shows both); the next payment then starts a new window. A payer whose immediate tier reaches 1 gets the full cap, and another cap needs a new policy_id.",
    },
    Explanation {
        code: 6,
        name: "CounterpartyTierBelowMin",
        category: "counterparty",
        meaning: "The counterparty's reputation tier is below the minimum: the payee's under the payer's policy, or the payer's under the payee's AcceptancePolicy.",
        remediation: "Tiers are read from the reputation engine, immediate or confirmed per the rule's gate_mode (gate_get_engine_reputation shows them), and only the engine raises them. Otherwise pay another counterparty, or the rule's owner lowers the minimum (a new payer policy_id, or set_acceptance_policy).",
    },
    Explanation {
        code: 7,
        name: "CounterpartyRiskAboveMax",
        category: "counterparty",
        meaning: "The counterparty's engine risk score is above the rule's maximum (max_counterparty_risk or max_payer_risk; 255 turns the check off).",
        remediation: "trust-gate reads the risk score (gate_get_engine_reputation) and cannot change it. Deal with another counterparty, or the rule's owner relaxes it (a new payer policy_id, or set_acceptance_policy).",
    },
    Explanation {
        code: 8,
        name: "CounterpartyConfidenceBelow",
        category: "counterparty",
        meaning: "The counterparty's engine confidence (basis points) is below the rule's minimum (min_counterparty_confidence or min_payer_confidence; 0 turns the check off).",
        remediation: "trust-gate reads the confidence (gate_get_engine_reputation) and cannot change it. Deal with another counterparty, or the rule's owner relaxes it (a new payer policy_id, or set_acceptance_policy).",
    },
    Explanation {
        code: 9,
        name: "AtomStatsWrongOwner",
        category: "reputation_integrity",
        meaning: "The counterparty's reputation account at the engine's address holds data but is not owned by the reputation engine.",
        remediation: "This is an integrity canary that no setting fixes: treat the counterparty as untrusted and do not pay it. gate_get_engine_reputation reports errorCode wrong_owner.",
    },
    Explanation {
        code: 10,
        name: "AtomStatsSchemaMismatch",
        category: "reputation_integrity",
        meaning: "The counterparty's reputation account has the wrong size, discriminator or schema version, or a tier above 4.",
        remediation: "It signals a changed or malformed engine account, not a policy problem. gate_get_engine_reputation reports errorCode size_mismatch or schema_mismatch.",
    },
    Explanation {
        code: 11,
        name: "AttestationMissing",
        category: "validation",
        meaning: "The attestation supplied for the party is about another subject or another capability than the rule requires.",
        remediation: "Supply the attestation of the required capability about that party (gate_get_validation_attestation finds it); if none exists, ask for it with gate_request_validation and have an accepted attestor issue it with gate_respond_to_validation.",
    },
    Explanation {
        code: 12,
        name: "AttestationExpired",
        category: "validation",
        meaning: "The supplied attestation's expiry (expires_at, converted from the attestor's expiry slot) has passed.",
        remediation: "The attestor renews it by responding again with a later expires_at_slot (gate_respond_to_validation). gate_get_validation_attestation shows the expiry.",
    },
    Explanation {
        code: 13,
        name: "AttestationRevoked",
        category: "validation",
        meaning: "The supplied attestation was revoked by its attestor.",
        remediation: "Only that attestor can reinstate it, by responding again (gate_respond_to_validation clears the revocation); otherwise obtain an attestation from another accepted attestor.",
    },
    Explanation {
        code: 14,
        name: "AttestationAttestorRejected",
        category: "validation",
        meaning: "The rule names accepted attestors and the supplied attestation comes from another attestor.",
        remediation: "Get an attestation of the capability from one of the accepted attestors (gate_get_policy lists them for a payer policy); a rule without accepted attestors takes any registered attestor.",
    },
    Explanation {
        code: 15,
        name: "UnratedTreatmentDeny",
        category: "unrated",
        meaning: "The counterparty has no reputation account in the engine and the rule's unrated_treatment is Deny (0).",
        remediation: "Agents registered through register_agent_via_cpi get engine stats at registration, so they are not unrated. Otherwise the rule's owner accepts unrated counterparties (unrated_treatment 1, or 2 with a required capability) in a new payer policy_id or with set_acceptance_policy.",
    },
    Explanation {
        code: 16,
        name: "PolicyNotYetValid",
        category: "validity",
        meaning: "The payer's policy has a validity window that has not started: the chain's clock is before its not_before.",
        remediation: "Wait until not_before (gate_get_policy shows it), or pay under another policy_id whose window is open.",
    },
    Explanation {
        code: 17,
        name: "PolicyExpired",
        category: "validity",
        meaning: "The payer's policy has a validity window that has ended: the chain's clock is after its not_after.",
        remediation: "Policies are immutable: the authority's threshold creates a new policy under another policy_id (gate_init_policy) and the payer pays under that id.",
    },
    Explanation {
        code: 18,
        name: "PayeeNotAllowed",
        category: "payee_list",
        meaning: "The payer's policy has an allow list and the payee agent is not on it (neither inline nor in its list account).",
        remediation: "Pay a listed payee, or, when the policy has a list account, the authority's threshold adds the payee with edit_payee_list (an instruction of the SDKs' builders). Inline entries are immutable.",
    },
    Explanation {
        code: 19,
        name: "PayeeDenied",
        category: "payee_list",
        meaning: "The payer's policy has a deny list and the payee agent is on it.",
        remediation: "Pay another payee; when the payee is in the policy's list account, the authority's threshold can remove it with edit_payee_list. Inline entries are immutable.",
    },
    Explanation {
        code: 20,
        name: "SpendingMonthlyExceeded",
        category: "spending",
        meaning: "This payment would take the payer's spending this calendar month (UTC) over the policy's monthly_cap.",
        remediation: "Wait for the first second of the next month (UTC), pay less, or pay under another policy_id.",
    },
    Explanation {
        code: 21,
        name: "SpendingLifetimeExceeded",
        category: "spending",
        meaning: "This payment would take everything ever paid under the policy over its lifetime_cap.",
        remediation: "The lifetime cap never resets: pay less (what is left is lifetime_cap minus lifetimeSpent in gate_get_policy), or pay under another policy_id.",
    },
    Explanation {
        code: 22,
        name: "PayeeDailyExceeded",
        category: "spending",
        meaning: "This payment would take what the payer paid this payee today (UTC) over the policy's payee_daily_cap.",
        remediation: "Wait for the next UTC day, pay less, or pay another payee.",
    },
    Explanation {
        code: 23,
        name: "PayeeSlotsFull",
        category: "spending",
        meaning: "The policy has a per-payee daily cap and has already paid 16 other payees today (UTC): its 16 per-payee slots are taken.",
        remediation: "Wait for the next UTC day (every slot frees), or pay one of today's payees, or pay under another policy_id.",
    },
    Explanation {
        code: 24,
        name: "HoldbackNotAccepted",
        category: "holdback",
        meaning: "The payer's policy holds back a share of payments to a payee of this tier, and the payee has no acceptance policy or one that accepts no holdback.",
        remediation: "The payee accepts a holdback in its acceptance policy (set_acceptance_policy's holdback), or the payer pays under a policy without a holdback schedule.",
    },
    Explanation {
        code: 25,
        name: "HoldbackShareNotAccepted",
        category: "holdback",
        meaning: "The share the payer's policy holds back from a payee of this tier is above the largest the payee accepts.",
        remediation: "The payee accepts a larger share, its tier rises (a better tier holds less), or the payer pays under another policy.",
    },
    Explanation {
        code: 26,
        name: "HoldbackHoldNotAccepted",
        category: "holdback",
        meaning: "The hold the payer's policy sets for a payee of this tier is longer than the payee accepts.",
        remediation: "The payee accepts a longer hold, its tier rises, or the payer pays under another policy.",
    },
    Explanation {
        code: 27,
        name: "HoldbackArbiterNotAccepted",
        category: "holdback",
        meaning: "The payer's policy names an arbiter of disputes that the payee does not accept.",
        remediation: "The payee adds the arbiter to its acceptance policy's arbiters, or the payer pays under a policy naming an arbiter the payee accepts (or none).",
    },
];

/// A gate decision as a tool reports it: its kind and, for every decision but Allow, what it
/// means and what to do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionReport {
    /// Allow, Deny, RequireValidation or RequireApproval.
    pub kind: String,
    /// A Deny's reason code, 1..27.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<u8>,
    /// A Deny's reason name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_name: Option<String>,
    /// A Deny's category (kill_switch, spending, velocity, counterparty,
    /// reputation_integrity, validation, unrated, validity or payee_list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// What the gate found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning: Option<String>,
    /// What to do about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
    /// The strict gate's error code for it (a Deny's: 6000 + code for 1..=15, 6100 + code
    /// from 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_error_code: Option<u32>,
    /// A RequireValidation's capability (64 hex characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability_hash: Option<String>,
    /// A RequireValidation's subject: who must hold the attestation, payer or payee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// A RequireApproval's pending id (gate_approve takes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
}

impl DecisionReport {
    /// `d` with its meaning and remediation.
    pub fn new(d: &DecisionView) -> DecisionReport {
        match d {
            DecisionView::Allow => DecisionReport::of_kind("Allow"),
            DecisionView::Deny {
                reason_code,
                reason_name,
            } => DecisionReport::deny(Some(*reason_code), Some(reason_name.clone())),
            DecisionView::RequireValidation {
                capability_hash,
                subject,
            } => DecisionReport {
                capability_hash: Some(capability_hash.clone()),
                subject: Some(subject.clone()),
                ..DecisionReport::of_kind("RequireValidation")
            },
            DecisionView::RequireApproval => DecisionReport::of_kind("RequireApproval"),
        }
    }

    /// A decision of `kind` alone (its explanation added when it asks for something).
    pub fn of_kind(kind: &str) -> DecisionReport {
        let mut r = DecisionReport {
            kind: kind.into(),
            ..Default::default()
        };
        if let Some(e) = explain_decision(kind) {
            r.meaning = Some(e.meaning.into());
            r.remediation = Some(e.remediation.into());
            r.gate_error_code = Some(e.gate_error_code);
        }
        r
    }

    /// A Deny, explained by its code when it has a known one.
    pub fn deny(reason_code: Option<u8>, reason_name: Option<String>) -> DecisionReport {
        let e = reason_code.and_then(explain);
        DecisionReport {
            kind: "Deny".into(),
            reason_code,
            reason_name: reason_name.or_else(|| e.map(|e| e.name.to_string())),
            category: e.map(|e| e.category.into()),
            meaning: e.map(|e| e.meaning.into()),
            remediation: e.map(|e| e.remediation.into()),
            gate_error_code: e
                .and_then(|e| DenyReason::from_code(e.code))
                .map(|r| r.strict_error_code()),
            ..Default::default()
        }
    }
}

/// A decision explained by `gate_explain_decision`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Explained {
    /// Deny, RequireValidation or RequireApproval.
    pub decision: String,
    /// A Deny's reason code, 1..27.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<u8>,
    /// A Deny's reason name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A Deny's category (kill_switch, spending, velocity, counterparty,
    /// reputation_integrity, validation, unrated, validity or payee_list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// What the gate found.
    pub meaning: String,
    /// What to do about it.
    pub remediation: String,
    /// The strict gate's error code for it (6000 + code for 1..=15, 6100 + code from 16 for
    /// a Deny).
    pub gate_error_code: Option<u32>,
}

impl Explained {
    /// Deny reason `code`, or None outside 1..=27.
    pub fn deny(code: u8) -> Option<Explained> {
        let e = explain(code)?;
        Some(Explained {
            decision: "Deny".into(),
            reason_code: Some(e.code),
            name: Some(e.name.into()),
            category: Some(e.category.into()),
            meaning: e.meaning.into(),
            remediation: e.remediation.into(),
            gate_error_code: DenyReason::from_code(e.code).map(|r| r.strict_error_code()),
        })
    }

    /// `RequireValidation` or `RequireApproval`, or None.
    pub fn decision(decision: &str) -> Option<Explained> {
        let e = explain_decision(decision)?;
        Some(Explained {
            decision: e.decision.into(),
            reason_code: None,
            name: None,
            category: None,
            meaning: e.meaning.into(),
            remediation: e.remediation.into(),
            gate_error_code: Some(e.gate_error_code),
        })
    }
}

/// What a decision other than Allow and Deny asks for.
#[derive(Debug, PartialEq, Eq)]
pub struct DecisionExplanation {
    pub decision: &'static str,
    pub meaning: &'static str,
    pub remediation: &'static str,
    /// The strict gate's error for it.
    pub gate_error_code: u32,
}

const DECISIONS: [DecisionExplanation; 2] = [
    DecisionExplanation {
        decision: "RequireValidation",
        meaning: "A rule asks for an attestation of a capability (the payer's policy about the payee, or the payee's acceptance policy about the payer) and no attestation from an accepted attestor stands.",
        remediation: "The subject requests a validation (gate_request_validation) and an accepted attestor attests it (gate_respond_to_validation); the X-Capability-Required and X-Capability-Subject headers name what and whom. Then pay again.",
        gate_error_code: 6016,
    },
    DecisionExplanation {
        decision: "RequireApproval",
        meaning: "The amount is above the payer policy's approval_threshold and no approval of exactly these terms (payer, payee, mint, amount, policy) stands on chain. It is not a Deny: everything else allows the payment.",
        remediation: "Members of the payer's policy authority approve it on chain, up to its threshold: gate_approve with the pending id (X-Gate-Approval-Id, or gate_list_approvals) when the threshold is 1, else `trust-gate approve ID --keypair A --keypair B`. The same payment then passes once, within the approval's expiry. Or pay at most the threshold.",
        gate_error_code: 6077,
    },
];

/// The explanation of a decision that asks for something (`RequireValidation`,
/// `RequireApproval`), or None.
pub fn explain_decision(decision: &str) -> Option<&'static DecisionExplanation> {
    DECISIONS.iter().find(|d| d.decision == decision)
}

/// The explanation of `code`, or None outside 1..=27.
pub fn explain(code: u8) -> Option<&'static Explanation> {
    EXPLANATIONS.get(usize::from(code).checked_sub(1)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy_vault::engine::DenyReason;

    const CATEGORIES: [&str; 10] = [
        "kill_switch",
        "spending",
        "velocity",
        "counterparty",
        "reputation_integrity",
        "validation",
        "unrated",
        "validity",
        "payee_list",
        "holdback",
    ];

    #[test]
    fn codes_are_one_to_twenty_seven_in_order() {
        for (i, e) in EXPLANATIONS.iter().enumerate() {
            assert_eq!(usize::from(e.code), i + 1, "{}", e.name);
            assert_eq!(explain(e.code), Some(e));
        }
        assert_eq!(EXPLANATIONS.len(), DenyReason::ALL.len());
        assert_eq!(explain(0), None);
        assert_eq!(explain(28), None);
    }

    #[test]
    fn names_are_the_engine_names() {
        for e in EXPLANATIONS.iter() {
            assert_eq!(e.name, DenyReason::from_code(e.code).unwrap().name());
        }
    }

    #[test]
    fn every_entry_is_filled_in() {
        for e in EXPLANATIONS.iter() {
            assert!(
                CATEGORIES.contains(&e.category),
                "{}: {}",
                e.name,
                e.category
            );
            assert!(!e.meaning.is_empty(), "{}", e.name);
            assert!(!e.remediation.is_empty(), "{}", e.name);
        }
    }
}
