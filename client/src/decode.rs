//! Decoders: decisions (return data and events), every account type of the three programs
//! and the policy vaults, a policy's funding, the engine's reputation block, and deny code ↔
//! name.

use crate::error::ClientError;
use anchor_lang::prelude::Pubkey;
use anchor_lang::{AccountDeserialize, AnchorDeserialize, Discriminator, Event};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde::{Deserialize, Serialize};

pub use gate::events::{
    AgentRegistered, FeedbackEmitted, GateAuthorityInitialized, GateDecision, PaymentDisputed,
    PaymentRecordsClosed,
};
pub use gate::state::{DisputeRecord, FeedbackLog, GateAuthority, DISPUTE_WINDOW_SECS};
pub use policy_vault::engine::{Decision, DenyReason, Subject};
pub use policy_vault::events::{
    AcceptancePolicySet, ApprovalClosed, AuthorityGuardSet, AuthorityInitialized, AuthorityRotated,
    AuthorityTakenOver, KillSwitchInitialized, KillSwitchSet, PayeeListEdited, PaymentApproved,
    PolicyCreated, PolicyRetired, TakeOverCancelled, TakeOverRequested, VaultOpened,
    VaultWithdrawn,
};
pub use policy_vault::state::{
    AcceptancePolicy, ApprovalTerms, AuthorityGuard, KillSwitchState, PayeeDaySlots, PayeeList,
    PaymentApproval, PolicyAccount, PolicyAuthority, PolicyLimits, PolicyRules, TakeOverRequest,
    VelocityLedger,
};
pub use validation_registry::events::{
    AttestorRegistered, NamespaceRegistered, ValidationRequested, ValidationResponded,
    ValidationRevoked,
};
pub use validation_registry::state::{
    AttestorProfile, CapabilityNamespace, ValidationAttestation, ValidationRequest,
};

// ---------------------------------------------------------------------------------------------
// Decisions
// ---------------------------------------------------------------------------------------------

/// A decision as JSON clients see it: `{"kind":"Allow"}`,
/// `{"kind":"Deny","reasonCode":6,"reasonName":"CounterpartyTierBelowMin"}`,
/// `{"kind":"RequireValidation","capabilityHash":"<hex>","subject":"payer"}`,
/// `{"kind":"RequireApproval"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind")]
pub enum DecisionView {
    /// The payment may proceed.
    Allow,
    /// The payment is refused, with a stable reason code.
    #[serde(rename_all = "camelCase")]
    Deny {
        /// The deny reason code, 1..27 (docs/deny-codes.md).
        reason_code: u8,
        /// The reason's name (CounterpartyTierBelowMin, ...).
        reason_name: String,
    },
    /// A rule asks for an attestation of a capability that no accepted attestor gave.
    #[serde(rename_all = "camelCase")]
    RequireValidation {
        /// The capability required (64 hex characters).
        capability_hash: String,
        /// Who must hold the attestation: payer or payee.
        subject: String,
    },
    /// The amount is above the payer policy's approval threshold and no approval of the
    /// payment's terms was given.
    RequireApproval,
}

impl From<&Decision> for DecisionView {
    fn from(d: &Decision) -> Self {
        match d {
            Decision::Allow => DecisionView::Allow,
            Decision::Deny(r) => DecisionView::Deny {
                reason_code: r.code(),
                reason_name: r.name().to_string(),
            },
            Decision::RequireValidation {
                capability,
                subject,
            } => DecisionView::RequireValidation {
                capability_hash: hex(capability),
                subject: subject_name(*subject).to_string(),
            },
            Decision::RequireApproval => DecisionView::RequireApproval,
        }
    }
}

pub fn subject_name(s: Subject) -> &'static str {
    match s {
        Subject::Payer => "payer",
        Subject::Payee => "payee",
    }
}

/// The decision in `gate_payment`'s return data, which must come from `gate_program`.
pub fn decision_from_return_data(
    gate_program: &Pubkey,
    program_id: &Pubkey,
    data: &[u8],
) -> Result<Decision, ClientError> {
    if program_id != gate_program {
        return Err(ClientError::Decode {
            what: "decision return data".into(),
            reason: format!("set by {program_id}, expected the gate {gate_program}"),
        });
    }
    Decision::from_wire(data).ok_or_else(|| ClientError::Decode {
        what: "decision return data".into(),
        reason: format!("{} bytes that are not a decision", data.len()),
    })
}

/// The decision a [`GateDecision`] event carries.
pub fn decision_from_event(e: &GateDecision) -> Option<Decision> {
    let mut wire = [0u8; 35];
    wire[0] = e.kind;
    wire[1] = e.reason_code;
    wire[2] = e.subject;
    wire[3..].copy_from_slice(&e.capability);
    Decision::from_wire(&wire)
}

/// Deny code → name (1..=27).
pub fn deny_name(code: u8) -> Option<&'static str> {
    DenyReason::from_code(code).map(DenyReason::name)
}

/// Deny name → code.
pub fn deny_code(name: &str) -> Option<u8> {
    DenyReason::ALL
        .iter()
        .find(|r| r.name() == name)
        .map(|r| r.code())
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/// Every event of type `T` in transaction logs ("Program data: <base64>" lines).
pub fn events<T: Event + AnchorDeserialize + Discriminator>(logs: &[String]) -> Vec<T> {
    logs.iter()
        .filter_map(|line| line.split_once("Program data: "))
        .filter_map(|(_, b64)| STANDARD.decode(b64.trim()).ok())
        .filter(|bytes| bytes.starts_with(T::DISCRIMINATOR))
        .filter_map(|bytes| T::try_from_slice(&bytes[T::DISCRIMINATOR.len()..]).ok())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Accounts
// ---------------------------------------------------------------------------------------------

/// Decodes an account of ours, checking its discriminator.
pub fn account<T: AccountDeserialize>(what: &str, data: &[u8]) -> Result<T, ClientError> {
    T::try_deserialize(&mut &data[..]).map_err(|e| ClientError::Decode {
        what: what.into(),
        reason: e.to_string(),
    })
}

/// Where a policy's payments come from (`PolicyParams::funding`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Funding {
    /// The payer signer's own token account (`source_token`) pays.
    #[default]
    Wallet,
    /// The payer agent's policy vault pays: the strict gate releases `amount` from it into
    /// `source_token` (the payer signer's account), which the transfer then debits, so the
    /// signer's balance does not change.
    Vault,
}

impl Funding {
    /// The funding a policy declares (any value but the vault's is the wallet's, as the
    /// program validates it at creation).
    pub fn of(params: &policy_vault::state::PolicyParams) -> Funding {
        if params.is_vault_funded() {
            Funding::Vault
        } else {
            Funding::Wallet
        }
    }

    /// `PolicyParams::funding`'s value.
    pub fn to_u8(self) -> u8 {
        match self {
            Funding::Wallet => policy_vault::state::funding::WALLET,
            Funding::Vault => policy_vault::state::funding::VAULT,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Funding::Wallet => "wallet",
            Funding::Vault => "vault",
        }
    }
}

/// A policy vault as the chain holds it: a token account whose authority is its own address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VaultView {
    #[serde(serialize_with = "as_string")]
    pub address: Pubkey,
    #[serde(serialize_with = "as_string")]
    pub mint: Pubkey,
    /// The balance, in the mint's base units.
    pub amount: u64,
    /// The token program that owns it.
    #[serde(serialize_with = "as_string")]
    pub token_program: Pubkey,
}

fn as_string<S: serde::Serializer>(k: &Pubkey, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(k)
}

/// Reads `data` at `address`, owned by `program`, as a vault: a token account (of either
/// token program) that is its own authority. That is the layout of every policy vault;
/// whether it is a given agent's is a matter of its address (`Pdas::vault`).
pub fn vault(address: &Pubkey, program: &Pubkey, data: &[u8]) -> Option<VaultView> {
    let view = trust_gate_program_common::token_account::read(program, data)?;
    (view.owner == *address).then_some(VaultView {
        address: *address,
        mint: view.mint,
        amount: view.amount,
        token_program: *program,
    })
}

/// Decodes a policy account (`["policy", asset, policy_id]`).
pub fn policy(data: &[u8]) -> Result<PolicyAccount, ClientError> {
    account::<PolicyAccount>("PolicyAccount", data)
}

/// Any account of the three programs, recognised by its discriminator.
#[derive(Debug)]
pub enum AnyAccount {
    PolicyAuthority(PolicyAuthority),
    PolicyAccount(Box<PolicyAccount>),
    PayeeList(PayeeList),
    VelocityLedger(VelocityLedger),
    KillSwitchState(KillSwitchState),
    AcceptancePolicy(AcceptancePolicy),
    AuthorityGuard(AuthorityGuard),
    TakeOverRequest(TakeOverRequest),
    GateAuthority(GateAuthority),
    FeedbackLog(FeedbackLog),
    DisputeRecord(DisputeRecord),
    CapabilityNamespace(CapabilityNamespace),
    AttestorProfile(AttestorProfile),
    ValidationRequest(ValidationRequest),
    ValidationAttestation(ValidationAttestation),
    /// A policy vault (a token account, recognised by [`AnyAccount::decode_account`]).
    Vault(VaultView),
}

impl AnyAccount {
    /// Decodes `data` as whichever of our account types its discriminator names.
    pub fn decode(data: &[u8]) -> Result<Self, ClientError> {
        macro_rules! try_types {
            ($($t:ident),*) => {
                $(if data.starts_with(<$t as Discriminator>::DISCRIMINATOR) {
                    return account::<$t>(stringify!($t), data).map(AnyAccount::$t);
                })*
            };
        }
        if data.starts_with(PolicyAccount::DISCRIMINATOR) {
            return policy(data).map(|p| AnyAccount::PolicyAccount(Box::new(p)));
        }
        try_types!(
            PolicyAuthority,
            PayeeList,
            VelocityLedger,
            KillSwitchState,
            AcceptancePolicy,
            AuthorityGuard,
            TakeOverRequest,
            GateAuthority,
            FeedbackLog,
            DisputeRecord,
            CapabilityNamespace,
            AttestorProfile,
            ValidationRequest,
            ValidationAttestation
        );
        Err(ClientError::Decode {
            what: "account".into(),
            reason: "the discriminator is not one of trust-gate's account types".into(),
        })
    }

    /// Decodes the account at `address`: one of our account types by its discriminator, or
    /// a policy vault (a token account that is its own authority).
    pub fn decode_account(
        address: &Pubkey,
        account: &solana_sdk::account::Account,
    ) -> Result<Self, ClientError> {
        if let Some(v) = vault(address, &account.owner, &account.data) {
            return Ok(AnyAccount::Vault(v));
        }
        Self::decode(&account.data)
    }

    /// The account type's name.
    pub fn type_name(&self) -> &'static str {
        match self {
            AnyAccount::PolicyAuthority(_) => "PolicyAuthority",
            AnyAccount::PolicyAccount(_) => "PolicyAccount",
            AnyAccount::PayeeList(_) => "PayeeList",
            AnyAccount::VelocityLedger(_) => "VelocityLedger",
            AnyAccount::KillSwitchState(_) => "KillSwitchState",
            AnyAccount::AcceptancePolicy(_) => "AcceptancePolicy",
            AnyAccount::AuthorityGuard(_) => "AuthorityGuard",
            AnyAccount::TakeOverRequest(_) => "TakeOverRequest",
            AnyAccount::GateAuthority(_) => "GateAuthority",
            AnyAccount::FeedbackLog(_) => "FeedbackLog",
            AnyAccount::DisputeRecord(_) => "DisputeRecord",
            AnyAccount::CapabilityNamespace(_) => "CapabilityNamespace",
            AnyAccount::AttestorProfile(_) => "AttestorProfile",
            AnyAccount::ValidationRequest(_) => "ValidationRequest",
            AnyAccount::ValidationAttestation(_) => "ValidationAttestation",
            AnyAccount::Vault(_) => "Vault",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Engine reputation
// ---------------------------------------------------------------------------------------------

/// The engine's reputation block of an agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EngineReputation {
    /// Tier, immediate (the higher of the trust and candidate tiers), 0..4.
    pub tier_immediate: u8,
    /// Tier, confirmed, 0..4.
    pub tier_confirmed: u8,
    /// Risk score, 0..255.
    pub risk_score: u8,
    /// Confidence, basis points 0..=10000.
    pub confidence: u16,
    /// The stats account's schema version.
    pub schema_version: u8,
}

/// Why a stats account could not be read as a reputation block.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReputationError {
    #[error("no stats account: the agent is unrated")]
    Unrated,
    #[error("the stats account is owned by {owner}, not the reputation engine {engine}")]
    WrongOwner { owner: String, engine: String },
    #[error("the stats account is {len} bytes, expected {expected}")]
    SizeMismatch { len: usize, expected: usize },
    #[error("schema mismatch: {0}")]
    SchemaMismatch(String),
}

impl ReputationError {
    /// The stable error code tools report (`wrong_owner`, `size_mismatch`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            ReputationError::Unrated => "unrated",
            ReputationError::WrongOwner { .. } => "wrong_owner",
            ReputationError::SizeMismatch { .. } => "size_mismatch",
            ReputationError::SchemaMismatch(_) => "schema_mismatch",
        }
    }
}

/// Reads an AtomStats account: the owner canary, the size, the discriminator, the schema
/// version canary and the tier range, then the fields.
pub fn engine_reputation(
    engine: &Pubkey,
    owner: &Pubkey,
    lamports: u64,
    data: &[u8],
) -> Result<EngineReputation, ReputationError> {
    use trust_gate_program_common::external::atom_stats as s;
    use trust_gate_program_common::external::discriminators;
    if lamports == 0 || data.is_empty() {
        return Err(ReputationError::Unrated);
    }
    if owner != engine {
        return Err(ReputationError::WrongOwner {
            owner: owner.to_string(),
            engine: engine.to_string(),
        });
    }
    if data.len() != s::LEN {
        return Err(ReputationError::SizeMismatch {
            len: data.len(),
            expected: s::LEN,
        });
    }
    if data[..8] != discriminators::ATOM_STATS {
        return Err(ReputationError::SchemaMismatch(
            "not an AtomStats discriminator".into(),
        ));
    }
    let schema_version = data[s::SCHEMA_VERSION];
    if schema_version != s::SUPPORTED_SCHEMA {
        return Err(ReputationError::SchemaMismatch(format!(
            "schema version {schema_version}, expected {}",
            s::SUPPORTED_SCHEMA
        )));
    }
    let (trust, candidate, tier_confirmed) = (
        data[s::TIER_IMMEDIATE],
        data[s::TIER_CANDIDATE],
        data[s::TIER_CONFIRMED],
    );
    if trust > s::MAX_TIER || candidate > s::MAX_TIER || tier_confirmed > s::MAX_TIER {
        return Err(ReputationError::SchemaMismatch(format!(
            "tier out of range 0..={}: trust {trust}, candidate {candidate}, confirmed {tier_confirmed}",
            s::MAX_TIER
        )));
    }
    // As the gate reads it: the higher of the trust tier and the candidacy's tier.
    let tier_immediate = s::immediate_tier(trust, candidate);
    Ok(EngineReputation {
        tier_immediate,
        tier_confirmed,
        risk_score: data[s::RISK_SCORE],
        confidence: u16::from_le_bytes([data[s::CONFIDENCE], data[s::CONFIDENCE + 1]]),
        schema_version,
    })
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses exactly 64 hex characters into 32 bytes; `field` names the input in the error.
pub fn parse_hex32(field: &str, s: &str) -> Result<[u8; 32], ClientError> {
    let s = s.trim();
    if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ClientError::input(
            field,
            format!("expected 64 hex characters, got {:?}", truncate(s, 80)),
        ));
    }
    let mut out = [0u8; 32];
    for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
        let pair = std::str::from_utf8(chunk).unwrap_or("00");
        out[i] = u8::from_str_radix(pair, 16).unwrap_or(0);
    }
    Ok(out)
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_program_common::external::atom_stats as s;
    use trust_gate_program_common::external::discriminators;

    fn stats(tier: u8, schema: u8) -> Vec<u8> {
        let mut d = vec![0u8; s::LEN];
        d[..8].copy_from_slice(&discriminators::ATOM_STATS);
        d[s::TIER_IMMEDIATE] = tier;
        d[s::TIER_CONFIRMED] = tier;
        d[s::RISK_SCORE] = 12;
        d[s::CONFIDENCE..s::CONFIDENCE + 2].copy_from_slice(&7_500u16.to_le_bytes());
        d[s::SCHEMA_VERSION] = schema;
        d
    }

    #[test]
    fn reputation_canaries() {
        let engine = Pubkey::new_unique();
        let ok = engine_reputation(&engine, &engine, 1, &stats(3, 1)).unwrap();
        assert_eq!(
            (
                ok.tier_immediate,
                ok.risk_score,
                ok.confidence,
                ok.schema_version
            ),
            (3, 12, 7_500, 1)
        );
        let other = Pubkey::new_unique();
        let wrong = engine_reputation(&engine, &other, 1, &stats(3, 1)).unwrap_err();
        assert_eq!(wrong.code(), "wrong_owner");
        let short = engine_reputation(&engine, &engine, 1, &stats(3, 1)[..100]).unwrap_err();
        assert_eq!(short.code(), "size_mismatch");
        let schema = engine_reputation(&engine, &engine, 1, &stats(3, 2)).unwrap_err();
        assert_eq!(schema.code(), "schema_mismatch");
        let tier = engine_reputation(&engine, &engine, 1, &stats(5, 1)).unwrap_err();
        assert_eq!(tier.code(), "schema_mismatch");
        // As the real engine writes them: trust tier = confirmed tier, a candidacy pending.
        let mut pending = stats(1, 1);
        pending[s::TIER_CANDIDATE] = 3;
        let r = engine_reputation(&engine, &engine, 1, &pending).unwrap();
        assert_eq!((r.tier_immediate, r.tier_confirmed), (3, 1));
        pending[s::TIER_CANDIDATE] = 5;
        let bad = engine_reputation(&engine, &engine, 1, &pending).unwrap_err();
        assert_eq!(bad.code(), "schema_mismatch");
        assert_eq!(
            engine_reputation(&engine, &engine, 0, &[]).unwrap_err(),
            ReputationError::Unrated
        );
    }

    #[test]
    fn deny_codes_and_names_round_trip() {
        for code in 1..=27u8 {
            let name = deny_name(code).unwrap();
            assert_eq!(deny_code(name), Some(code));
        }
        assert_eq!(deny_name(6), Some("CounterpartyTierBelowMin"));
        assert_eq!(deny_name(16), Some("PolicyNotYetValid"));
        assert_eq!(deny_name(23), Some("PayeeSlotsFull"));
        assert_eq!(deny_name(24), Some("HoldbackNotAccepted"));
        assert_eq!(deny_name(27), Some("HoldbackArbiterNotAccepted"));
        assert_eq!(deny_name(0), None);
        assert_eq!(deny_name(28), None);
    }

    #[test]
    fn decision_views_serialize_as_the_contract_says() {
        let deny = serde_json::to_value(DecisionView::from(&Decision::Deny(
            DenyReason::CounterpartyTierBelowMin,
        )))
        .unwrap();
        assert_eq!(
            deny,
            serde_json::json!({"kind":"Deny","reasonCode":6,"reasonName":"CounterpartyTierBelowMin"})
        );
        let allow = serde_json::to_value(DecisionView::from(&Decision::Allow)).unwrap();
        assert_eq!(allow, serde_json::json!({"kind":"Allow"}));
        let rv = serde_json::to_value(DecisionView::from(&Decision::RequireValidation {
            capability: [0xab; 32],
            subject: Subject::Payer,
        }))
        .unwrap();
        assert_eq!(rv["subject"], "payer");
        assert_eq!(rv["capabilityHash"], "ab".repeat(32));
    }

    #[test]
    fn hex_parsing_names_the_field() {
        let h = "0f".repeat(32);
        assert_eq!(parse_hex32("payment_id_hash", &h).unwrap(), [0x0f; 32]);
        let err = parse_hex32("payment_id_hash", "xyz")
            .unwrap_err()
            .to_string();
        assert!(err.contains("payment_id_hash"), "{err}");
    }
}
