//! Decisions and the stable deny reason codes.

/// Why a payment was denied. The numeric code is the public contract (1..=27: 16 to 23 for
/// the limit rules, 24 and up for the holdback); the names are the strings clients see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DenyReason {
    KillSwitchEngaged = 1,
    SpendingPerTxExceeded = 2,
    SpendingDailyExceeded = 3,
    SpendingWeeklyExceeded = 4,
    VelocityWindowExceeded = 5,
    CounterpartyTierBelowMin = 6,
    CounterpartyRiskAboveMax = 7,
    CounterpartyConfidenceBelow = 8,
    AtomStatsWrongOwner = 9,
    AtomStatsSchemaMismatch = 10,
    AttestationMissing = 11,
    AttestationExpired = 12,
    AttestationRevoked = 13,
    AttestationAttestorRejected = 14,
    UnratedTreatmentDeny = 15,
    /// Before the policy's `not_before`.
    PolicyNotYetValid = 16,
    /// After the policy's `not_after`.
    PolicyExpired = 17,
    /// The policy has an allow list and the payee is not on it.
    PayeeNotAllowed = 18,
    /// The policy has a deny list and the payee is on it.
    PayeeDenied = 19,
    /// Over the cap of the calendar month (UTC).
    SpendingMonthlyExceeded = 20,
    /// Over the cap of the policy's whole life.
    SpendingLifetimeExceeded = 21,
    /// Over the cap paid to this one payee in the UTC day.
    PayeeDailyExceeded = 22,
    /// Every per-payee slot of the UTC day is taken by other payees.
    PayeeSlotsFull = 23,
    /// The payer's policy holds back a share from this payee, which has no acceptance policy
    /// or accepts no holdback.
    HoldbackNotAccepted = 24,
    /// The share held back from this payee is above the largest its acceptance policy takes.
    HoldbackShareNotAccepted = 25,
    /// The hold is longer than the payee's acceptance policy takes.
    HoldbackHoldNotAccepted = 26,
    /// The policy's arbiter is not one the payee accepts.
    HoldbackArbiterNotAccepted = 27,
}

impl DenyReason {
    pub const ALL: [DenyReason; 27] = [
        DenyReason::KillSwitchEngaged,
        DenyReason::SpendingPerTxExceeded,
        DenyReason::SpendingDailyExceeded,
        DenyReason::SpendingWeeklyExceeded,
        DenyReason::VelocityWindowExceeded,
        DenyReason::CounterpartyTierBelowMin,
        DenyReason::CounterpartyRiskAboveMax,
        DenyReason::CounterpartyConfidenceBelow,
        DenyReason::AtomStatsWrongOwner,
        DenyReason::AtomStatsSchemaMismatch,
        DenyReason::AttestationMissing,
        DenyReason::AttestationExpired,
        DenyReason::AttestationRevoked,
        DenyReason::AttestationAttestorRejected,
        DenyReason::UnratedTreatmentDeny,
        DenyReason::PolicyNotYetValid,
        DenyReason::PolicyExpired,
        DenyReason::PayeeNotAllowed,
        DenyReason::PayeeDenied,
        DenyReason::SpendingMonthlyExceeded,
        DenyReason::SpendingLifetimeExceeded,
        DenyReason::PayeeDailyExceeded,
        DenyReason::PayeeSlotsFull,
        DenyReason::HoldbackNotAccepted,
        DenyReason::HoldbackShareNotAccepted,
        DenyReason::HoldbackHoldNotAccepted,
        DenyReason::HoldbackArbiterNotAccepted,
    ];
    /// The highest code of the first set, whose strict-gate errors are `6000 + code`; codes
    /// after it fail the strict gate with `6100 + code` (the gate's errors 6016 and up were
    /// taken when they came).
    pub const LAST_6000_CODE: u8 = 15;

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code).checked_sub(1)?).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            DenyReason::KillSwitchEngaged => "KillSwitchEngaged",
            DenyReason::SpendingPerTxExceeded => "SpendingPerTxExceeded",
            DenyReason::SpendingDailyExceeded => "SpendingDailyExceeded",
            DenyReason::SpendingWeeklyExceeded => "SpendingWeeklyExceeded",
            DenyReason::VelocityWindowExceeded => "VelocityWindowExceeded",
            DenyReason::CounterpartyTierBelowMin => "CounterpartyTierBelowMin",
            DenyReason::CounterpartyRiskAboveMax => "CounterpartyRiskAboveMax",
            DenyReason::CounterpartyConfidenceBelow => "CounterpartyConfidenceBelow",
            DenyReason::AtomStatsWrongOwner => "AtomStatsWrongOwner",
            DenyReason::AtomStatsSchemaMismatch => "AtomStatsSchemaMismatch",
            DenyReason::AttestationMissing => "AttestationMissing",
            DenyReason::AttestationExpired => "AttestationExpired",
            DenyReason::AttestationRevoked => "AttestationRevoked",
            DenyReason::AttestationAttestorRejected => "AttestationAttestorRejected",
            DenyReason::UnratedTreatmentDeny => "UnratedTreatmentDeny",
            DenyReason::PolicyNotYetValid => "PolicyNotYetValid",
            DenyReason::PolicyExpired => "PolicyExpired",
            DenyReason::PayeeNotAllowed => "PayeeNotAllowed",
            DenyReason::PayeeDenied => "PayeeDenied",
            DenyReason::SpendingMonthlyExceeded => "SpendingMonthlyExceeded",
            DenyReason::SpendingLifetimeExceeded => "SpendingLifetimeExceeded",
            DenyReason::PayeeDailyExceeded => "PayeeDailyExceeded",
            DenyReason::PayeeSlotsFull => "PayeeSlotsFull",
            DenyReason::HoldbackNotAccepted => "HoldbackNotAccepted",
            DenyReason::HoldbackShareNotAccepted => "HoldbackShareNotAccepted",
            DenyReason::HoldbackHoldNotAccepted => "HoldbackHoldNotAccepted",
            DenyReason::HoldbackArbiterNotAccepted => "HoldbackArbiterNotAccepted",
        }
    }

    /// The strict gate's error code for this reason: `6000 + code` for codes 1..=15,
    /// `6100 + code` for 16 and up.
    pub fn strict_error_code(self) -> u32 {
        let code = u32::from(self.code());
        if self.code() <= Self::LAST_6000_CODE {
            6000 + code
        } else {
            6100 + code
        }
    }

    /// The reason a strict-gate error code stands for, if any.
    pub fn from_strict_error_code(error: u32) -> Option<Self> {
        let code = match error {
            6001..=6015 => error - 6000,
            6116..=6199 => error - 6100,
            _ => return None,
        };
        Self::from_code(u8::try_from(code).ok()?)
    }
}

/// Whose attestation a RequireValidation asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Subject {
    /// The payer must be attested (asked by the payee's AcceptancePolicy).
    Payer = 0,
    /// The payee must be attested (asked by the payer's policy).
    Payee = 1,
}

impl Subject {
    pub fn name(self) -> &'static str {
        match self {
            Subject::Payer => "payer",
            Subject::Payee => "payee",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny(DenyReason),
    /// An attestation of `capability` (sha256 of the namespace name) about `subject` is needed.
    RequireValidation {
        capability: [u8; 32],
        subject: Subject,
    },
    /// Everything else allows it, but the amount is above the policy's approval threshold
    /// and no approval of the payment's terms was given: the authority's members approve it
    /// on chain (`approve_payment`), then the same payment passes once.
    RequireApproval,
}

/// The fixed 35-byte wire form of a decision (return data of `evaluate` and of
/// `gate::gate_payment`, and the body of the decision events):
///
/// | byte | field |
/// |---|---|
/// | 0 | kind: 0 Allow, 1 Deny, 2 RequireValidation, 3 RequireApproval |
/// | 1 | deny reason code 1..=27 (0 unless Deny) |
/// | 2 | subject: 0 payer, 1 payee (0 unless RequireValidation) |
/// | 3..35 | capability hash (zero unless RequireValidation) |
///
/// An Allow under a policy with a holdback schedule carries its terms in bytes 1..17
/// (`Holdback::from_wire`); [`Decision::from_wire`] ignores them.
pub const DECISION_WIRE_LEN: usize = 35;

impl Decision {
    pub const KIND_ALLOW: u8 = 0;
    pub const KIND_DENY: u8 = 1;
    pub const KIND_REQUIRE_VALIDATION: u8 = 2;
    pub const KIND_REQUIRE_APPROVAL: u8 = 3;

    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow)
    }

    pub fn to_wire(&self) -> [u8; DECISION_WIRE_LEN] {
        let mut out = [0u8; DECISION_WIRE_LEN];
        match self {
            Decision::Allow => out[0] = Self::KIND_ALLOW,
            Decision::Deny(reason) => {
                out[0] = Self::KIND_DENY;
                out[1] = reason.code();
            }
            Decision::RequireValidation {
                capability,
                subject,
            } => {
                out[0] = Self::KIND_REQUIRE_VALIDATION;
                out[2] = *subject as u8;
                out[3..].copy_from_slice(capability);
            }
            Decision::RequireApproval => out[0] = Self::KIND_REQUIRE_APPROVAL,
        }
        out
    }

    /// Parses the wire form; `None` for anything malformed.
    pub fn from_wire(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != DECISION_WIRE_LEN {
            return None;
        }
        match bytes[0] {
            Self::KIND_ALLOW => Some(Decision::Allow),
            Self::KIND_DENY => DenyReason::from_code(bytes[1]).map(Decision::Deny),
            Self::KIND_REQUIRE_VALIDATION => Some(Decision::RequireValidation {
                capability: bytes[3..].try_into().ok()?,
                subject: match bytes[2] {
                    0 => Subject::Payer,
                    1 => Subject::Payee,
                    _ => return None,
                },
            }),
            Self::KIND_REQUIRE_APPROVAL => Some(Decision::RequireApproval),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_round_trip() {
        for (i, r) in DenyReason::ALL.iter().enumerate() {
            assert_eq!(usize::from(r.code()), i + 1);
            assert_eq!(DenyReason::from_code(r.code()), Some(*r));
        }
        assert_eq!(DenyReason::from_code(0), None);
        assert_eq!(DenyReason::from_code(28), None);
        assert_eq!(DenyReason::PayeeSlotsFull.code(), 23);
        assert_eq!(DenyReason::CounterpartyTierBelowMin.code(), 6);
        assert_eq!(
            DenyReason::SpendingPerTxExceeded.name(),
            "SpendingPerTxExceeded"
        );
    }

    #[test]
    fn strict_error_codes_are_two_ranges() {
        assert_eq!(DenyReason::KillSwitchEngaged.strict_error_code(), 6001);
        assert_eq!(DenyReason::UnratedTreatmentDeny.strict_error_code(), 6015);
        assert_eq!(DenyReason::PolicyNotYetValid.strict_error_code(), 6116);
        assert_eq!(DenyReason::PayeeSlotsFull.strict_error_code(), 6123);
        for r in DenyReason::ALL {
            assert_eq!(
                DenyReason::from_strict_error_code(r.strict_error_code()),
                Some(r)
            );
        }
        assert_eq!(
            DenyReason::HoldbackArbiterNotAccepted.strict_error_code(),
            6127
        );
        for unrelated in [6000, 6016, 6068, 6100, 6115, 6128] {
            assert_eq!(DenyReason::from_strict_error_code(unrelated), None);
        }
    }

    #[test]
    fn wire_round_trip() {
        let cases = [
            Decision::Allow,
            Decision::Deny(DenyReason::UnratedTreatmentDeny),
            Decision::RequireValidation {
                capability: [7; 32],
                subject: Subject::Payer,
            },
            Decision::RequireApproval,
        ];
        for d in cases {
            assert_eq!(Decision::from_wire(&d.to_wire()), Some(d));
        }
        assert_eq!(Decision::from_wire(&[1, 0, 0]), None);
        let mut bad = Decision::Deny(DenyReason::KillSwitchEngaged).to_wire();
        bad[1] = 99;
        assert_eq!(Decision::from_wire(&bad), None);
    }
}
