//! Policy configuration as the engine sees it, and its validation.

use anchor_lang::prelude::Pubkey;

/// Bits of `PolicyConfig::kinds`.
pub mod kinds {
    /// Accepted for compatibility; a paused kill switch denies every payment regardless.
    pub const KILL_SWITCH: u8 = 0x01;
    pub const SPENDING: u8 = 0x02;
    pub const VELOCITY: u8 = 0x04;
    pub const COUNTERPARTY_TIER: u8 = 0x08;
    pub const REQUIRE_VALIDATION: u8 = 0x10;
    pub const ALL: u8 = KILL_SWITCH | SPENDING | VELOCITY | COUNTERPARTY_TIER | REQUIRE_VALIDATION;
}

/// Rules whose limits are amounts of one token: a policy with any of them must name its mint
/// (5 000 000 raw units is 5 USDC but 0.05 of an 8-decimal token).
pub fn needs_mint(kinds: u8) -> bool {
    kinds & (kinds::SPENDING | kinds::VELOCITY) != 0
}

pub const MAX_TIER: u8 = 4;
pub const MAX_CONFIDENCE_BPS: u16 = 10_000;
pub const MAX_DECAY_BPS: u16 = 10_000;
/// `max_risk` value that disables the risk check.
pub const RISK_CHECK_OFF: u8 = u8::MAX;
pub const MAX_ACCEPTED_ATTESTORS: usize = 2;

/// Which reputation tier a trust requirement compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum GateMode {
    /// The engine's fast-path tier.
    Immediate = 0,
    /// The tier after vesting; what production policies should prefer.
    Confirmed = 1,
}

impl GateMode {
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(GateMode::Immediate),
            1 => Some(GateMode::Confirmed),
            _ => None,
        }
    }
}

/// What to do with a counterparty that has no rating yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum UnratedTreatment {
    Deny = 0,
    Allow = 1,
    /// Accept an unrated counterparty only with an attestation of the rule's capability.
    RequireValidation = 2,
}

impl UnratedTreatment {
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(UnratedTreatment::Deny),
            1 => Some(UnratedTreatment::Allow),
            2 => Some(UnratedTreatment::RequireValidation),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpendingCaps {
    pub per_tx: u64,
    /// Per UTC day.
    pub daily: u64,
    /// Per week starting Monday 00:00 UTC.
    pub weekly: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VelocityRule {
    pub window_secs: u64,
    pub max_in_window: u64,
    /// Share of `max_in_window` allowed to a payer of immediate tier 0 (or unrated), in bps.
    pub tier0_decay_bps: u16,
}

/// Minimum reputation asked of a counterparty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrustRequirement {
    pub min_tier: u8,
    pub gate_mode: GateMode,
    /// 255 = off.
    pub max_risk: u8,
    /// Basis points; 0 = off.
    pub min_confidence: u16,
    pub unrated: UnratedTreatment,
}

impl TrustRequirement {
    /// A requirement every counterparty meets, rated or not.
    pub const NONE: TrustRequirement = TrustRequirement {
        min_tier: 0,
        gate_mode: GateMode::Immediate,
        max_risk: RISK_CHECK_OFF,
        min_confidence: 0,
        unrated: UnratedTreatment::Allow,
    };
}

/// A required capability and who may attest it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationRule {
    /// sha256 of the capability namespace name; all zero = no capability required.
    pub capability: [u8; 32],
    /// Accepted attestors; empty = any registered attestor.
    pub attestors: Vec<Pubkey>,
}

impl ValidationRule {
    pub fn is_required(&self) -> bool {
        self.capability != [0u8; 32]
    }
}

/// What a policy's payee list means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum ListMode {
    /// No list: any payee.
    #[default]
    Off = 0,
    /// Only the payees on the list.
    Allow = 1,
    /// Any payee but those on the list.
    Deny = 2,
}

impl ListMode {
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(ListMode::Off),
            1 => Some(ListMode::Allow),
            2 => Some(ListMode::Deny),
            _ => None,
        }
    }
}

/// A policy's limit rules; all off in a policy without them. Zero turns a bound or cap off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimitRules {
    /// The payee list's meaning; whether the payee is on it is an input of the evaluation.
    pub list_mode: ListMode,
    /// Unix seconds: no payment before this second.
    pub not_before: i64,
    /// Unix seconds: no payment after this second (it is itself still valid).
    pub not_after: i64,
    /// Per calendar month (UTC).
    pub monthly_cap: u64,
    /// Over the policy's whole life.
    pub lifetime_cap: u64,
    /// Per payee per UTC day.
    pub payee_daily_cap: u64,
}

impl LimitRules {
    pub const OFF: LimitRules = LimitRules {
        list_mode: ListMode::Off,
        not_before: 0,
        not_after: 0,
        monthly_cap: 0,
        lifetime_cap: 0,
        payee_daily_cap: 0,
    };

    /// Whether a cap counted in the mint's units is set.
    pub fn has_amount_caps(&self) -> bool {
        self.monthly_cap != 0 || self.lifetime_cap != 0 || self.payee_daily_cap != 0
    }
}

/// A payer's spending policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyConfig {
    pub kinds: u8,
    pub spending: SpendingCaps,
    pub velocity: VelocityRule,
    /// Asked of the payee (bit COUNTERPARTY_TIER).
    pub counterparty: TrustRequirement,
    /// Asked of the payee (bit REQUIRE_VALIDATION, and by unrated treatment RequireValidation).
    pub validation: ValidationRule,
    /// The limit rules ([`LimitRules::OFF`] for a policy without them).
    pub limits: LimitRules,
}

impl PolicyConfig {
    pub fn has(&self, kind: u8) -> bool {
        self.kinds & kind != 0
    }
}

/// A payee's rules for who may pay it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcceptanceConfig {
    pub payer: TrustRequirement,
    /// Required payer capability (zero capability = none).
    pub validation: ValidationRule,
    /// The holdback the payee accepts (all zero: none).
    pub holdback: super::AcceptedHoldback,
}

/// Why a configuration is invalid. Each names the offending field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    UnknownKindBits,
    SpendingCapZero,
    VelocityWindowZero,
    VelocityMaxZero,
    DecayOutOfRange,
    MinTierOutOfRange,
    MinConfidenceOutOfRange,
    RequiredCapabilityMissing,
    UnratedValidationWithoutCapability,
    TooManyAttestors,
    DuplicateAttestor,
    /// `not_before` or `not_after` is negative.
    ValidityNegative,
    /// `not_before` is after `not_after`.
    ValidityInverted,
    /// A holdback schedule's or acceptance's error.
    Holdback(super::HoldbackConfigError),
}

fn validate_trust(t: &TrustRequirement, v: &ValidationRule) -> Result<(), ConfigError> {
    if t.min_tier > MAX_TIER {
        return Err(ConfigError::MinTierOutOfRange);
    }
    if t.min_confidence > MAX_CONFIDENCE_BPS {
        return Err(ConfigError::MinConfidenceOutOfRange);
    }
    if t.unrated == UnratedTreatment::RequireValidation && !v.is_required() {
        return Err(ConfigError::UnratedValidationWithoutCapability);
    }
    Ok(())
}

fn validate_attestors(v: &ValidationRule) -> Result<(), ConfigError> {
    if v.attestors.len() > MAX_ACCEPTED_ATTESTORS {
        return Err(ConfigError::TooManyAttestors);
    }
    if v.attestors.len() == 2 && v.attestors[0] == v.attestors[1] {
        return Err(ConfigError::DuplicateAttestor);
    }
    Ok(())
}

/// Checks every field of a policy. Rules of kinds that are off are still range-checked
/// only where a value could later be misread (tiers, confidence, decay).
pub fn validate_policy(p: &PolicyConfig) -> Result<(), ConfigError> {
    if p.kinds & !kinds::ALL != 0 {
        return Err(ConfigError::UnknownKindBits);
    }
    if p.has(kinds::SPENDING)
        && (p.spending.per_tx == 0 || p.spending.daily == 0 || p.spending.weekly == 0)
    {
        return Err(ConfigError::SpendingCapZero);
    }
    if p.velocity.tier0_decay_bps > MAX_DECAY_BPS {
        return Err(ConfigError::DecayOutOfRange);
    }
    if p.has(kinds::VELOCITY) {
        if p.velocity.window_secs == 0 {
            return Err(ConfigError::VelocityWindowZero);
        }
        if p.velocity.max_in_window == 0 {
            return Err(ConfigError::VelocityMaxZero);
        }
    }
    if p.has(kinds::REQUIRE_VALIDATION) && !p.validation.is_required() {
        return Err(ConfigError::RequiredCapabilityMissing);
    }
    validate_trust(&p.counterparty, &p.validation)?;
    validate_attestors(&p.validation)?;
    validate_limits(&p.limits)
}

/// The bounds of a policy's validity window. Its payee list is checked where its entries
/// are (`state::rules`, `instructions::evaluate`).
pub fn validate_limits(r: &LimitRules) -> Result<(), ConfigError> {
    if r.not_before < 0 || r.not_after < 0 {
        return Err(ConfigError::ValidityNegative);
    }
    if r.not_before != 0 && r.not_after != 0 && r.not_before > r.not_after {
        return Err(ConfigError::ValidityInverted);
    }
    Ok(())
}

pub fn validate_acceptance(a: &AcceptanceConfig) -> Result<(), ConfigError> {
    validate_trust(&a.payer, &a.validation)?;
    validate_attestors(&a.validation)?;
    a.holdback.validate().map_err(ConfigError::Holdback)
}
