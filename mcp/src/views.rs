//! Accounts as tool results: typed views whose serialization is the result and whose derived
//! schema is the tool's `outputSchema`. camelCase; keys in base58, hashes in hex, token
//! amounts as decimal strings ([`trust_gate_client::json`]); an all-zero key or hash, which
//! accounts store for "none", is `null`; empty list slots are dropped.

use policy_vault::state::{AcceptanceParams, PolicyParams, PolicyRules};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::decode::{
    AttestorProfile, CapabilityNamespace, Funding, KillSwitchState, PolicyAccount, PolicyAuthority,
    ValidationAttestation, ValidationRequest, VaultView, VelocityLedger,
};
use trust_gate_client::json::{Amount, Hash, Key};

/// A policy kind, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Kind {
    /// The agent's kill switch stops every payment (bit 1).
    KillSwitch,
    /// The per-transaction, daily and weekly caps (bit 2).
    Spending,
    /// The velocity window's cap (bit 4).
    Velocity,
    /// The payee's reputation (bit 8).
    CounterpartyTier,
    /// An attestation the payee must hold (bit 16).
    RequireValidation,
}

impl Kind {
    const ALL: [(u8, Kind); 5] = {
        use policy_vault::engine::config::kinds as k;
        [
            (k::KILL_SWITCH, Kind::KillSwitch),
            (k::SPENDING, Kind::Spending),
            (k::VELOCITY, Kind::Velocity),
            (k::COUNTERPARTY_TIER, Kind::CounterpartyTier),
            (k::REQUIRE_VALIDATION, Kind::RequireValidation),
        ]
    };

    /// The kinds of a bit set.
    pub fn of(kinds: u8) -> Vec<Kind> {
        Kind::ALL
            .into_iter()
            .filter(|(bit, _)| kinds & bit != 0)
            .map(|(_, k)| k)
            .collect()
    }
}

/// Which of the engine's tiers a rule reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GateMode {
    /// The immediate tier (the higher of the trust and candidate tiers).
    Immediate,
    /// The confirmed tier.
    Confirmed,
    /// A value this server does not know.
    Unknown,
}

impl GateMode {
    pub fn of(v: u8) -> GateMode {
        match v {
            0 => GateMode::Immediate,
            1 => GateMode::Confirmed,
            _ => GateMode::Unknown,
        }
    }
}

/// What a rule does with a counterparty the engine has not rated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unrated {
    /// Refused (deny reason 15).
    Deny,
    /// Accepted.
    Allow,
    /// Accepted with an attestation of the rule's capability.
    RequireValidation,
    /// A value this server does not know.
    Unknown,
}

impl Unrated {
    pub fn of(v: u8) -> Unrated {
        match v {
            0 => Unrated::Deny,
            1 => Unrated::Allow,
            2 => Unrated::RequireValidation,
            _ => Unrated::Unknown,
        }
    }
}

/// The spending caps (`"0"`: no cap).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendingCaps {
    /// Largest single payment.
    pub per_tx_cap: Amount,
    /// Cap per UTC day.
    pub daily_cap: Amount,
    /// Cap per week (from Monday 00:00 UTC).
    pub weekly_cap: Amount,
}

/// The velocity rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VelocityRule {
    /// The window's length in seconds.
    pub window_secs: u64,
    /// Cap within one window.
    pub max_in_window: Amount,
    /// Share of the cap (basis points) a tier-0 or unrated payer gets.
    pub tier0_decay_bps: u16,
}

/// What the payee's reputation must be.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CounterpartyRule {
    /// Lowest tier accepted, 0..4.
    pub min_tier: u8,
    /// Which tier counts.
    pub gate_mode: GateMode,
    /// Highest risk score accepted (255: no check).
    pub max_risk: u8,
    /// Lowest confidence accepted, basis points (0: no check).
    pub min_confidence_bps: u16,
    /// What an unrated payee gets.
    pub unrated_treatment: Unrated,
}

/// The attestation a party must hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidationRule {
    /// The capability required (null: none).
    pub required_capability: Option<Hash>,
    /// The attestors accepted (empty: any registered attestor).
    pub accepted_attestors: Vec<Key>,
}

/// A policy's parameters, as stored or as the demo world creates them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyParamsView {
    /// The policy's kinds, a bit set (KillSwitch 1, Spending 2, Velocity 4,
    /// CounterpartyTier 8, RequireValidation 16).
    pub kinds: u8,
    /// The kinds by name.
    pub kind_names: Vec<Kind>,
    /// The policy's token mint (null: none).
    pub mint: Option<Key>,
    /// The spending caps.
    pub spending: SpendingCaps,
    /// The velocity rule.
    pub velocity: VelocityRule,
    /// What the payee's reputation must be.
    pub counterparty: CounterpartyRule,
    /// The attestation the payee must hold.
    pub validation: ValidationRule,
    /// Where payments come from: wallet (the payer signer's account) or vault (the agent's
    /// policy vault).
    pub funding: Funding,
}

impl From<&PolicyParams> for PolicyParamsView {
    fn from(q: &PolicyParams) -> Self {
        PolicyParamsView {
            kinds: q.kinds,
            kind_names: Kind::of(q.kinds),
            mint: Key::opt(&q.mint),
            spending: SpendingCaps {
                per_tx_cap: q.per_tx_cap.into(),
                daily_cap: q.daily_cap.into(),
                weekly_cap: q.weekly_cap.into(),
            },
            velocity: VelocityRule {
                window_secs: q.velocity_window_secs,
                max_in_window: q.velocity_max_in_window.into(),
                tier0_decay_bps: q.tier0_decay_bps,
            },
            counterparty: CounterpartyRule {
                min_tier: q.min_counterparty_tier,
                gate_mode: GateMode::of(q.gate_mode),
                max_risk: q.max_counterparty_risk,
                min_confidence_bps: q.min_counterparty_confidence,
                unrated_treatment: Unrated::of(q.unrated_treatment),
            },
            validation: ValidationRule {
                required_capability: Hash::opt(&q.required_capability),
                accepted_attestors: Key::listed(&q.accepted_attestors),
            },
            funding: Funding::of(q),
        }
    }
}

/// Whether a policy's payee list allows or denies the payees on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ListMode {
    /// No list.
    Off,
    /// Only the listed payees may be paid.
    Allow,
    /// The listed payees may not be paid.
    Deny,
    /// A value this server does not know.
    Unknown,
}

/// The payee allow or deny list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayeeList {
    /// Whether the list allows or denies.
    pub mode: ListMode,
    /// The inline payees.
    pub payees: Vec<Key>,
    /// The payee list account (null: none).
    pub account: Option<Key>,
}

/// The validity window, unix seconds (0: unbounded).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Validity {
    /// Start of validity.
    pub not_before: i64,
    /// End of validity.
    pub not_after: i64,
}

/// A policy's limit rules (`"0"`: off for every cap).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RulesView {
    /// The payee allow or deny list.
    pub payee_list: PayeeList,
    /// The validity window.
    pub validity: Validity,
    /// Cap per calendar month (UTC).
    pub monthly_cap: Amount,
    /// Cap over the policy's life.
    pub lifetime_cap: Amount,
    /// Cap per payee per UTC day.
    pub payee_daily_cap: Amount,
}

impl From<&PolicyRules> for RulesView {
    fn from(r: &PolicyRules) -> Self {
        RulesView {
            payee_list: PayeeList {
                mode: match r.payee_list_mode {
                    0 => ListMode::Off,
                    1 => ListMode::Allow,
                    2 => ListMode::Deny,
                    _ => ListMode::Unknown,
                },
                payees: Key::listed(&r.payees),
                account: r.has_list_account().then_some(Key(r.payee_list)),
            },
            validity: Validity {
                not_before: r.not_before,
                not_after: r.not_after,
            },
            monthly_cap: r.monthly_cap.into(),
            lifetime_cap: r.lifetime_cap.into(),
            payee_daily_cap: r.payee_daily_cap.into(),
        }
    }
}

/// A day's counter as stored (written only when a payment commits).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DayCounter {
    /// The UTC day it counts (days since the epoch).
    pub day_index: i64,
    /// Spent that day.
    pub spent: Amount,
}

/// A week's counter as stored (written only when a payment commits).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeekCounter {
    /// The week it counts.
    pub week_index: i64,
    /// Spent that week.
    pub spent: Amount,
}

/// A month's counter as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MonthCounter {
    /// The month it counts.
    pub month_index: i64,
    /// Spent that month.
    pub spent: Amount,
}

/// A per-payee slot in use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayeeSlot {
    /// The payee agent.
    pub payee: Key,
    /// Paid to it that day.
    pub spent: Amount,
}

/// The limits' counters, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LimitCounters {
    /// The month counter.
    pub month: MonthCounter,
    /// Spent over the policy's life.
    pub lifetime_spent: Amount,
    /// The UTC day the per-payee slots count (null without a per-payee cap).
    pub payee_day: Option<i64>,
    /// The per-payee slots in use.
    pub payees: Vec<PayeeSlot>,
}

/// A spending policy (PolicyAccount) of an agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyView {
    /// The policy's address.
    pub address: Key,
    /// The agent's asset.
    pub asset: Key,
    /// The policy id.
    pub policy_id: u32,
    /// The day counter.
    pub day_spent: DayCounter,
    /// The week counter.
    pub week_spent: WeekCounter,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Whether the policy is retired.
    pub retired: bool,
    /// Unix seconds of retirement (0: not retired).
    pub retired_at: i64,
    /// The one key that may pay from the vault (null for a wallet-funded policy, or until
    /// named).
    pub spender: Option<Key>,
    /// Above it a payment needs an approval; `"0"`: never.
    pub approval_threshold: Amount,
    #[serde(flatten)]
    pub params: PolicyParamsView,
    /// The limit rules, when the policy sets any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<RulesView>,
    /// The limits' counters, with the rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<LimitCounters>,
}

impl PolicyView {
    pub fn new(address: &Pubkey, p: &PolicyAccount) -> Self {
        PolicyView {
            address: Key(*address),
            asset: Key(p.asset),
            policy_id: p.policy_id,
            day_spent: DayCounter {
                day_index: p.day_index,
                spent: p.day_spent.into(),
            },
            week_spent: WeekCounter {
                week_index: p.week_index,
                spent: p.week_spent.into(),
            },
            created_at: p.created_at,
            retired: p.is_retired(),
            retired_at: p.retired_at,
            spender: Key::opt(&p.spender).filter(|_| p.params.is_vault_funded()),
            approval_threshold: p.approval_threshold.into(),
            params: PolicyParamsView::from(&p.params),
            rules: p.limits.as_ref().map(|l| RulesView::from(&l.rules)),
            counters: p.limits.as_ref().map(|l| LimitCounters {
                month: MonthCounter {
                    month_index: l.month_index,
                    spent: l.month_spent.into(),
                },
                lifetime_spent: l.lifetime_spent.into(),
                payee_day: p.payee_day.as_ref().map(|d| d.day),
                payees: p
                    .payee_day
                    .iter()
                    .flat_map(|d| d.slots.iter())
                    .filter(|s| s.payee != Pubkey::default())
                    .map(|s| PayeeSlot {
                        payee: Key(s.payee),
                        spent: s.spent.into(),
                    })
                    .collect(),
            }),
        }
    }
}

/// An agent's policy vault for a mint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VaultAccount {
    /// The vault's address (a token account that is its own authority).
    pub address: Key,
    /// The agent's asset.
    pub asset: Key,
    /// The vault's mint.
    pub mint: Key,
    /// The vault's balance.
    pub balance: Amount,
    /// The token program that owns it.
    pub token_program: Key,
}

impl VaultAccount {
    pub fn new(asset: &Pubkey, v: &VaultView) -> Self {
        VaultAccount {
            address: Key(v.address),
            asset: Key(*asset),
            mint: Key(v.mint),
            balance: v.amount.into(),
            token_program: Key(v.token_program),
        }
    }
}

/// What a payee asks of its payers (its AcceptancePolicy).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AcceptanceView {
    /// Lowest payer tier accepted, 0..4.
    pub min_payer_tier: u8,
    /// Which tier counts.
    pub gate_mode: GateMode,
    /// Highest payer risk score accepted (255: no check).
    pub max_payer_risk: u8,
    /// Lowest payer confidence accepted, basis points (0: no check).
    pub min_payer_confidence_bps: u16,
    /// What an unrated payer gets.
    pub unrated_treatment: Unrated,
    /// The capability a payer must be attested for (null: none).
    pub required_capability: Option<Hash>,
    /// The attestors accepted (empty: any registered attestor).
    pub accepted_attestors: Vec<Key>,
}

impl From<&AcceptanceParams> for AcceptanceView {
    fn from(a: &AcceptanceParams) -> Self {
        AcceptanceView {
            min_payer_tier: a.min_payer_tier,
            gate_mode: GateMode::of(a.gate_mode),
            max_payer_risk: a.max_payer_risk,
            min_payer_confidence_bps: a.min_payer_confidence,
            unrated_treatment: Unrated::of(a.unrated_treatment),
            required_capability: Hash::opt(&a.required_capability),
            accepted_attestors: Key::listed(&a.accepted_attestors),
        }
    }
}

/// The velocity ledger of an agent's policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VelocityView {
    /// The ledger's address.
    pub address: Key,
    /// The agent's asset.
    pub asset: Key,
    /// The policy id.
    pub policy_id: u32,
    /// Committed in the window that started at windowStart.
    pub cumulative: Amount,
    /// Unix seconds the window started (0: none yet).
    pub window_start: i64,
    /// Unix seconds of the last commit.
    pub last_commit: i64,
}

impl VelocityView {
    pub fn new(address: &Pubkey, v: &VelocityLedger) -> Self {
        VelocityView {
            address: Key(*address),
            asset: Key(v.asset),
            policy_id: v.policy_id,
            cumulative: v.cumulative.into(),
            window_start: v.window_start,
            last_commit: v.last_commit,
        }
    }
}

/// An agent's kill switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KillSwitchView {
    /// The kill switch's address.
    pub address: Key,
    /// The agent's asset.
    pub asset: Key,
    /// Whether every payment of the agent is denied.
    pub paused: bool,
    /// Unix seconds of the last pause.
    pub paused_at: i64,
    /// Who paused it (null: never paused).
    pub paused_by: Option<Key>,
    /// Unix seconds of the last release.
    pub unpaused_at: i64,
    /// How many times the authority changed hands: payment approvals given before the
    /// latest hand-over approve nothing.
    pub authority_generation: u32,
}

impl KillSwitchView {
    pub fn new(address: &Pubkey, k: &KillSwitchState) -> Self {
        KillSwitchView {
            address: Key(*address),
            asset: Key(k.asset),
            paused: k.paused,
            paused_at: k.paused_at,
            paused_by: Key::opt(&k.paused_by),
            unpaused_at: k.unpaused_at,
            authority_generation: k.authority_generation,
        }
    }
}

/// An agent's policy authority.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorityView {
    /// The authority's address.
    pub address: Key,
    /// The agent's asset.
    pub asset: Key,
    /// The asset's owner who created (or took over) the authority: it acts only while that
    /// key owns the asset.
    pub owner: Key,
    /// The members.
    pub members: Vec<Key>,
    /// How many member signatures an action needs.
    pub threshold: u8,
}

impl AuthorityView {
    pub fn new(address: &Pubkey, a: &PolicyAuthority) -> Self {
        AuthorityView {
            address: Key(*address),
            asset: Key(a.asset),
            owner: Key(a.owner),
            members: a.members.iter().map(Key::from).collect(),
            threshold: a.threshold,
        }
    }
}

/// A capability namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceView {
    /// The namespace's address.
    pub address: Key,
    /// The capability hash: sha256 of the name.
    pub hash: Hash,
    /// The namespace's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its schema's URI.
    pub schema_uri: String,
    /// Who registered it.
    pub registrant: Key,
    /// Slot of registration.
    pub created_slot: u64,
}

impl NamespaceView {
    pub fn new(address: &Pubkey, n: &CapabilityNamespace) -> Self {
        NamespaceView {
            address: Key(*address),
            hash: Hash(n.hash),
            name: n.name.clone(),
            version: n.version.clone(),
            schema_uri: n.schema_uri.clone(),
            registrant: Key(n.registrant),
            created_slot: n.created_slot,
        }
    }
}

/// An attestor's profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttestorView {
    /// The profile's address.
    pub address: Key,
    /// The attestor.
    pub attestor: Key,
    /// The attestor's display name URI.
    pub display_name_uri: String,
    /// Attestations issued.
    pub attestations_issued: u64,
    /// Attestations revoked.
    pub revocations: u64,
    /// Slot of registration.
    pub created_slot: u64,
}

impl AttestorView {
    pub fn new(address: &Pubkey, a: &AttestorProfile) -> Self {
        AttestorView {
            address: Key(*address),
            attestor: Key(a.attestor),
            display_name_uri: a.display_name_uri.clone(),
            attestations_issued: a.attestations_issued,
            revocations: a.revocations,
            created_slot: a.created_slot,
        }
    }
}

/// A validation request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestView {
    /// The request's address.
    pub address: Key,
    /// The agent it is about.
    pub subject: Key,
    /// The capability.
    pub capability_hash: Hash,
    /// Who asked.
    pub requester: Key,
    /// Hash of the claim's URI (null: none).
    pub claim_uri_hash: Option<Hash>,
    /// Slot by which it should be answered.
    pub deadline_slot: u64,
    /// Slot of the request.
    pub created_slot: u64,
}

impl RequestView {
    pub fn new(address: &Pubkey, r: &ValidationRequest) -> Self {
        RequestView {
            address: Key(*address),
            subject: Key(r.subject),
            capability_hash: Hash(r.capability),
            requester: Key(r.requester),
            claim_uri_hash: Hash::opt(&r.claim_uri_hash),
            deadline_slot: r.deadline_slot,
            created_slot: r.created_slot,
        }
    }
}

/// An attestation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttestationView {
    /// The attestation's address.
    pub address: Key,
    /// The agent it is about.
    pub subject: Key,
    /// The capability.
    pub capability_hash: Hash,
    /// Who attested.
    pub attestor: Key,
    /// Hash of the claim's payload (null: none).
    pub claim_payload_hash: Option<Hash>,
    /// Hash of the claim's URI (null: none).
    pub claim_uri_hash: Option<Hash>,
    /// Slot of issue.
    pub issued_slot: u64,
    /// Unix seconds of issue.
    pub issued_at: i64,
    /// Slot of expiry.
    pub expires_at_slot: u64,
    /// Unix seconds of expiry.
    pub expires_at: i64,
    /// Whether its attestor revoked it.
    pub revoked: bool,
    /// Unix seconds of the revocation (0: none).
    pub revoked_at: i64,
    /// How many times it was renewed.
    pub renewals: u32,
    /// Whether the attestor's Ed25519 signature was verified.
    pub signature_verified: bool,
}

impl AttestationView {
    pub fn new(address: &Pubkey, a: &ValidationAttestation) -> Self {
        AttestationView {
            address: Key(*address),
            subject: Key(a.subject),
            capability_hash: Hash(a.capability),
            attestor: Key(a.attestor),
            claim_payload_hash: Hash::opt(&a.claim_payload_hash),
            claim_uri_hash: Hash::opt(&a.claim_uri_hash),
            issued_slot: a.issued_slot,
            issued_at: a.issued_at,
            expires_at_slot: a.expires_at_slot,
            expires_at: a.expires_at,
            revoked: a.revoked,
            revoked_at: a.revoked_at,
            renewals: a.renewals,
            signature_verified: a.signature_verified,
        }
    }
}
