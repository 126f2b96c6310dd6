//! `gate_init_policy`'s arguments → the program's `PolicyParams`, checked the way the program
//! checks them (the engine's `validate_policy`), with errors that name the argument.
//!
//! Defaults: unspecified spending caps take the largest specified cap; velocity is never
//! defaulted (required whenever the Velocity kind is on); counterparty settings default to
//! "no requirement" (tier 0, risk check off, confidence off, unrated allowed, confirmed tier).

use crate::args::{digits, pubkey};
use crate::envelope::ToolError;
use policy_vault::engine::config::{kinds, needs_mint, validate_policy, ConfigError};
use policy_vault::engine::config::{validate_limits, LimitRules, ListMode};
use policy_vault::state::{PolicyParams, PolicyRules, INLINE_PAYEES};
use schemars::JsonSchema;
use serde::Deserialize;
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::instructions::capability_hash;
use trust_gate_client::settle::Funding;

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct SpendingInput {
    /// Cap per payment, in the mint's smallest units (decimal digits).
    pub per_tx: Option<String>,
    /// Cap per UTC day (decimal digits).
    pub daily: Option<String>,
    /// Cap per week starting Monday 00:00 UTC (decimal digits).
    pub weekly: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct VelocityInput {
    /// The rolling window, in seconds (at least 1).
    #[schemars(range(min = 1))]
    pub window_secs: u64,
    /// Most that may be paid within one window, in the mint's smallest units (decimal digits).
    pub max_in_window: String,
    /// Share of `max_in_window` allowed to a payer of immediate tier 0 (or unrated), in
    /// basis points 0..10000.
    #[schemars(range(max = 10000))]
    pub tier0_decay_bps: u16,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct CounterpartyInput {
    /// Minimum reputation tier of the payee, 0..4 (default 0).
    #[schemars(range(max = 4))]
    pub min_tier: Option<u8>,
    /// Which tier to compare: "immediate" or "confirmed" (default "confirmed").
    pub gate_mode: Option<String>,
    /// Maximum risk score 0..255; 255 turns the check off (default 255).
    pub max_risk: Option<u8>,
    /// Minimum confidence in basis points 0..10000; 0 turns the check off (default 0).
    #[schemars(range(max = 10000))]
    pub min_confidence_bps: Option<u16>,
    /// A payee without a rating: "deny", "allow" or "require_validation" (default "allow").
    pub unrated_treatment: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ValidationInput {
    /// The capability the payee must be attested for, by namespace name.
    pub capability_name: Option<String>,
    /// The same as a capability hash (64 hex characters), when no name is given.
    pub capability_hash: Option<String>,
    /// Up to two accepted attestors (base58); none = any registered attestor.
    pub accepted_attestors: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PayeeListInput {
    /// "allow" (only the listed payees) or "deny" (every payee but them).
    pub mode: String,
    /// Payee agents (assets, base58) listed inline, immutable: at most 4.
    pub payees: Option<Vec<String>>,
    /// Also create the policy's editable list account (its entries are added and removed by
    /// the authority's threshold with the SDKs' edit_payee_list); default false.
    pub account: Option<bool>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ValidityInput {
    /// Unix seconds: no payment before this second (omitted: no bound).
    pub not_before: Option<i64>,
    /// Unix seconds: no payment after this second, itself included (omitted: no bound).
    pub not_after: Option<i64>,
}

/// The policy part of `gate_init_policy`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PolicyInput {
    /// Enabled rules, a bit set: 1 KillSwitch, 2 Spending, 4 Velocity, 8 CounterpartyTier,
    /// 16 RequireValidation (for example 7 = kill switch + spending + velocity).
    #[schemars(range(max = 31))]
    pub kinds: u8,
    /// Spending caps; required with the Spending kind. Unspecified caps default to the
    /// largest specified one.
    pub spending: Option<SpendingInput>,
    /// Velocity rule; required with the Velocity kind, never defaulted.
    pub velocity: Option<VelocityInput>,
    /// What the payee must have (CounterpartyTier kind).
    pub counterparty: Option<CounterpartyInput>,
    /// A capability the payee must be attested for (RequireValidation kind).
    pub validation: Option<ValidationInput>,
    /// The policy's token mint (base58); required with the Spending or Velocity kind (caps
    /// are counted in its smallest units); omitted = any mint.
    pub mint: Option<String>,
    /// Where payments under the policy come from: "wallet" (the payer signer's own token
    /// account; the default) or "vault" (the agent's policy vault for `mint`, which only a
    /// gated settlement or the authority's threshold can empty; needs `mint`).
    pub funding: Option<String>,
    /// A payee allow or deny list. This and the caps and window below are the policy's limits.
    pub payee_list: Option<PayeeListInput>,
    /// When the policy is valid (UTC unix seconds, both ends included).
    pub validity: Option<ValidityInput>,
    /// Cap per calendar month (UTC), in the mint's smallest units (decimal digits).
    pub monthly_cap: Option<String>,
    /// Cap over the policy's whole life (decimal digits).
    pub lifetime_cap: Option<String>,
    /// Cap to any one payee per UTC day (decimal digits); the policy counts at most 16
    /// payees a day, a 17th is denied (PayeeSlotsFull).
    pub payee_daily_cap: Option<String>,
    /// A payment (or a channel deposit) above this amount (decimal digits, the mint's
    /// smallest units) needs the authority's members to approve it on chain first
    /// (RequireApproval); "0" or omitted: never.
    pub approval_threshold: Option<String>,
}

impl PolicyInput {
    /// The approval threshold (0: none).
    pub fn approval_threshold(&self) -> Result<u64, ToolError> {
        self.approval_threshold
            .as_deref()
            .map(|v| digits("approval_threshold", v))
            .transpose()
            .map(|t| t.unwrap_or(0))
    }
}

/// The limit rules of `input` (all zero when it gives none: the policy then has no limits),
/// checked as the program checks them; `list_account` is the policy's PayeeList address,
/// named when the list has an account.
pub fn rules(input: &PolicyInput, list_account: Pubkey) -> Result<PolicyRules, ToolError> {
    let cap = |field: &str, v: &Option<String>| -> Result<u64, ToolError> {
        v.as_deref()
            .map(|v| digits(field, v))
            .transpose()
            .map(|c| c.unwrap_or(0))
    };
    let mut r = PolicyRules {
        monthly_cap: cap("monthly_cap", &input.monthly_cap)?,
        lifetime_cap: cap("lifetime_cap", &input.lifetime_cap)?,
        payee_daily_cap: cap("payee_daily_cap", &input.payee_daily_cap)?,
        ..PolicyRules::default()
    };
    if let Some(v) = &input.validity {
        r.not_before = v.not_before.unwrap_or(0);
        r.not_after = v.not_after.unwrap_or(0);
    }
    if let Some(list) = &input.payee_list {
        r.payee_list_mode = match list.mode.as_str() {
            "allow" => ListMode::Allow as u8,
            "deny" => ListMode::Deny as u8,
            other => {
                return Err(ToolError::input(
                    "payee_list.mode",
                    format!("{other:?}: expected \"allow\" or \"deny\""),
                ))
            }
        };
        let payees = list.payees.as_deref().unwrap_or_default();
        if payees.len() > INLINE_PAYEES {
            return Err(ToolError::input(
                "payee_list.payees",
                format!(
                    "at most {INLINE_PAYEES} payees inline, got {}: set account true and add more with edit_payee_list",
                    payees.len()
                ),
            ));
        }
        for (i, p) in payees.iter().enumerate() {
            let k = pubkey("payee_list.payees", p)?;
            if k == Pubkey::default() || r.payees[..i].contains(&k) {
                return Err(ToolError::input(
                    "payee_list.payees",
                    format!("{k}: the default key, or listed twice"),
                ));
            }
            r.payees[i] = k;
        }
        if list.account.unwrap_or(false) {
            r.payee_list = list_account;
        }
        if payees.is_empty() && !r.has_list_account() {
            return Err(ToolError::input(
                "payee_list",
                "give payees, or account true for a list edited later",
            ));
        }
    }
    validate_limits(&LimitRules {
        not_before: r.not_before,
        not_after: r.not_after,
        ..LimitRules::OFF
    })
    .map_err(config_error)?;
    Ok(r)
}

/// The program's parameters for `input`, with the spending defaults applied.
pub fn params(input: &PolicyInput) -> Result<PolicyParams, ToolError> {
    let spending = input.spending.as_ref();
    let caps = spending_caps(spending)?;
    if input.kinds & kinds::SPENDING != 0 && caps.is_none() {
        return Err(ToolError::input(
            "spending",
            "required when kinds includes Spending (2): give at least one of per_tx, daily, weekly",
        ));
    }
    let (per_tx, daily, weekly) = caps.unwrap_or((0, 0, 0));
    let velocity = match (&input.velocity, input.kinds & kinds::VELOCITY != 0) {
        (Some(v), _) => (
            v.window_secs,
            digits("velocity.max_in_window", &v.max_in_window)?,
            v.tier0_decay_bps,
        ),
        (None, true) => {
            return Err(ToolError::input(
                "velocity",
                "required when kinds includes Velocity (4): window_secs, max_in_window and \
                 tier0_decay_bps are never defaulted",
            ))
        }
        (None, false) => (0, 0, 0),
    };
    let c = input.counterparty.as_ref();
    let gate_mode = match c
        .and_then(|c| c.gate_mode.as_deref())
        .unwrap_or("confirmed")
    {
        "immediate" => 0,
        "confirmed" => 1,
        other => {
            return Err(ToolError::input(
                "counterparty.gate_mode",
                format!("{other:?}: expected \"immediate\" or \"confirmed\""),
            ))
        }
    };
    let unrated = match c
        .and_then(|c| c.unrated_treatment.as_deref())
        .unwrap_or("allow")
    {
        "deny" => 0,
        "allow" => 1,
        "require_validation" => 2,
        other => {
            return Err(ToolError::input(
                "counterparty.unrated_treatment",
                format!("{other:?}: expected \"deny\", \"allow\" or \"require_validation\""),
            ))
        }
    };
    let v = input.validation.as_ref();
    let required_capability = match v {
        Some(v) => match (v.capability_name.as_deref(), v.capability_hash.as_deref()) {
            (Some(n), _) if !n.trim().is_empty() => capability_hash(n.trim()),
            (_, Some(h)) => crate::args::hex32("validation.capability_hash", h)?,
            _ => [0u8; 32],
        },
        None => [0u8; 32],
    };
    let attestors = v.and_then(|v| v.accepted_attestors.as_ref());
    let mut accepted = [Pubkey::default(); 2];
    if let Some(list) = attestors {
        if list.len() > 2 {
            return Err(ToolError::input(
                "validation.accepted_attestors",
                format!("at most 2 attestors, got {}", list.len()),
            ));
        }
        for (slot, a) in accepted.iter_mut().zip(list) {
            *slot = pubkey("validation.accepted_attestors", a)?;
        }
    }
    let amount_caps = [
        &input.monthly_cap,
        &input.lifetime_cap,
        &input.payee_daily_cap,
    ]
    .iter()
    .any(|c| {
        c.as_deref()
            .is_some_and(|c| !c.trim_start_matches('0').is_empty())
    });
    let mint = match &input.mint {
        Some(m) => pubkey("mint", m)?,
        None if needs_mint(input.kinds) || amount_caps => {
            return Err(ToolError::input(
                "mint",
                "required when kinds includes Spending (2) or Velocity (4), or a monthly, lifetime or per-payee cap is set: caps are counted in the mint's smallest units",
            ))
        }
        None => Pubkey::default(),
    };
    let funding = match input.funding.as_deref().unwrap_or("wallet") {
        "wallet" => Funding::Wallet,
        "vault" if mint == Pubkey::default() => {
            return Err(ToolError::input(
                "mint",
                "required when funding is \"vault\": a vault holds one mint",
            ))
        }
        "vault" => Funding::Vault,
        other => {
            return Err(ToolError::input(
                "funding",
                format!("{other:?}: expected \"wallet\" or \"vault\""),
            ))
        }
    };
    let p = PolicyParams {
        kinds: input.kinds,
        gate_mode,
        mint,
        per_tx_cap: per_tx,
        daily_cap: daily,
        weekly_cap: weekly,
        velocity_window_secs: velocity.0,
        velocity_max_in_window: velocity.1,
        tier0_decay_bps: velocity.2,
        min_counterparty_tier: c.and_then(|c| c.min_tier).unwrap_or(0),
        max_counterparty_risk: c.and_then(|c| c.max_risk).unwrap_or(u8::MAX),
        min_counterparty_confidence: c.and_then(|c| c.min_confidence_bps).unwrap_or(0),
        unrated_treatment: unrated,
        required_capability,
        accepted_attestors: accepted,
        funding: funding.to_u8(),
    };
    let config = p
        .to_config()
        .map_err(|e| ToolError::input("policy", e.to_string()))?;
    validate_policy(&config).map_err(config_error)?;
    Ok(p)
}

/// The three caps with the default rule applied; `None` when none is given.
fn spending_caps(s: Option<&SpendingInput>) -> Result<Option<(u64, u64, u64)>, ToolError> {
    let Some(s) = s else { return Ok(None) };
    let parse =
        |field: &str, v: &Option<String>| v.as_deref().map(|v| digits(field, v)).transpose();
    let given = [
        parse("spending.per_tx", &s.per_tx)?,
        parse("spending.daily", &s.daily)?,
        parse("spending.weekly", &s.weekly)?,
    ];
    let Some(max) = given.iter().flatten().max().copied() else {
        return Ok(None);
    };
    let [a, b, c] = given.map(|v| v.unwrap_or(max));
    Ok(Some((a, b, c)))
}

/// The engine's validation error, named after the tool argument.
fn config_error(e: ConfigError) -> ToolError {
    let (field, reason) = match e {
        ConfigError::UnknownKindBits => ("kinds", "only bits 1, 2, 4, 8 and 16 exist"),
        ConfigError::SpendingCapZero => ("spending", "caps must be above 0 with the Spending kind"),
        ConfigError::VelocityWindowZero => ("velocity.window_secs", "must be at least 1"),
        ConfigError::VelocityMaxZero => ("velocity.max_in_window", "must be above 0"),
        ConfigError::DecayOutOfRange => ("velocity.tier0_decay_bps", "must be 0..10000"),
        ConfigError::MinTierOutOfRange => ("counterparty.min_tier", "must be 0..4"),
        ConfigError::MinConfidenceOutOfRange => {
            ("counterparty.min_confidence_bps", "must be 0..10000")
        }
        ConfigError::RequiredCapabilityMissing => (
            "validation",
            "the RequireValidation kind (16) needs a capability_name or capability_hash",
        ),
        ConfigError::UnratedValidationWithoutCapability => (
            "counterparty.unrated_treatment",
            "require_validation needs validation.capability_name or capability_hash",
        ),
        ConfigError::TooManyAttestors => ("validation.accepted_attestors", "at most 2"),
        ConfigError::DuplicateAttestor => (
            "validation.accepted_attestors",
            "the two attestors are the same",
        ),
        ConfigError::ValidityNegative => ("validity", "not_before and not_after must be >= 0"),
        ConfigError::ValidityInverted => (
            "validity.not_before",
            "must be at or before validity.not_after",
        ),
        ConfigError::Holdback(_) => (
            "holdback",
            "shares 0..10000 bps with holds of at most 30 days, never more for a better tier",
        ),
    };
    ToolError::input(field, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: serde_json::Value) -> PolicyInput {
        serde_json::from_value(v).unwrap()
    }

    const MINT: &str = "So11111111111111111111111111111111111111112";

    #[test]
    fn limits_need_a_mint() {
        for kinds in [2, 4] {
            let e = params(&input(json!({"kinds": kinds, "spending": {"daily": "7"}, "velocity": {"window_secs": 60, "max_in_window": "10", "tier0_decay_bps": 0}}))).unwrap_err();
            assert!(e.message.starts_with("invalid mint:"), "{}", e.message);
        }
        // Rules without amounts may apply to any mint.
        assert!(params(&input(json!({"kinds": 9}))).is_ok());
    }

    #[test]
    fn unspecified_caps_take_the_largest_specified_cap() {
        let p = params(&input(
            json!({"kinds": 2, "spending": {"per_tx": "5", "weekly": "90"}, "mint": MINT}),
        ))
        .unwrap();
        assert_eq!((p.per_tx_cap, p.daily_cap, p.weekly_cap), (5, 90, 90));
        let p = params(&input(
            json!({"kinds": 2, "spending": {"daily": "7"}, "mint": MINT}),
        ))
        .unwrap();
        assert_eq!((p.per_tx_cap, p.daily_cap, p.weekly_cap), (7, 7, 7));
        let e = params(&input(json!({"kinds": 2, "spending": {}}))).unwrap_err();
        assert!(e.message.starts_with("invalid spending:"), "{}", e.message);
        let e = params(&input(json!({"kinds": 2, "spending": {"daily": "x"}}))).unwrap_err();
        assert!(
            e.message.starts_with("invalid spending.daily:"),
            "{}",
            e.message
        );
    }

    #[test]
    fn velocity_is_never_defaulted() {
        let e = params(&input(json!({"kinds": 4}))).unwrap_err();
        assert!(e.message.starts_with("invalid velocity:"), "{}", e.message);
        let p = params(&input(json!({"kinds": 4, "velocity": {"window_secs": 60, "max_in_window": "10", "tier0_decay_bps": 5000}, "mint": MINT}))).unwrap();
        assert_eq!(
            (
                p.velocity_window_secs,
                p.velocity_max_in_window,
                p.tier0_decay_bps
            ),
            (60, 10, 5000)
        );
        let e = params(&input(json!({"kinds": 4, "velocity": {"window_secs": 0, "max_in_window": "10", "tier0_decay_bps": 0}, "mint": MINT}))).unwrap_err();
        assert!(
            e.message.starts_with("invalid velocity.window_secs:"),
            "{}",
            e.message
        );
    }

    #[test]
    fn engine_rules_are_named_after_the_argument() {
        let e = params(&input(json!({"kinds": 64}))).unwrap_err();
        assert!(e.message.starts_with("invalid kinds:"), "{}", e.message);
        let e = params(&input(json!({"kinds": 16}))).unwrap_err();
        assert!(
            e.message.starts_with("invalid validation:"),
            "{}",
            e.message
        );
        let e = params(&input(json!({"kinds": 8, "counterparty": {"min_tier": 5}}))).unwrap_err();
        assert!(
            e.message.starts_with("invalid counterparty.min_tier:"),
            "{}",
            e.message
        );
        let e = params(&input(
            json!({"kinds": 8, "counterparty": {"gate_mode": "fast"}}),
        ))
        .unwrap_err();
        assert!(
            e.message.starts_with("invalid counterparty.gate_mode:"),
            "{}",
            e.message
        );
        let p = params(&input(json!({"kinds": 24, "counterparty": {"min_tier": 2}, "validation": {"capability_name": "kyc"}}))).unwrap();
        assert_eq!(p.required_capability, capability_hash("kyc"));
        assert_eq!(
            (
                p.min_counterparty_tier,
                p.gate_mode,
                p.max_counterparty_risk
            ),
            (2, 1, 255)
        );
    }

    #[test]
    fn an_approval_threshold_is_read_and_named_when_wrong() {
        let list = Pubkey::new_unique();
        let i = input(json!({"kinds": 0, "approval_threshold": "150"}));
        assert_eq!(i.approval_threshold().unwrap(), 150);
        assert_eq!(rules(&i, list).unwrap(), PolicyRules::default());
        assert_eq!(input(json!({"kinds": 0})).approval_threshold().unwrap(), 0);
        let e = input(json!({"kinds": 0, "approval_threshold": "1.5"}))
            .approval_threshold()
            .unwrap_err();
        assert!(e.message.contains("approval_threshold"), "{}", e.message);
    }

    #[test]
    fn limit_rules_are_read_and_named_after_the_argument() {
        let list = Pubkey::new_unique();
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        // No limit: none.
        assert_eq!(
            rules(&input(json!({"kinds": 0})), list).unwrap(),
            PolicyRules::default()
        );
        let r = rules(
            &input(json!({"kinds": 0, "mint": MINT, "payee_list": {"mode": "deny", "payees": [a.to_string(), b.to_string()], "account": true}, "validity": {"not_before": 10, "not_after": 20}, "monthly_cap": "500", "lifetime_cap": "5000", "payee_daily_cap": "20"})),
            list,
        )
        .unwrap();
        assert_eq!(r.payee_list_mode, 2);
        assert_eq!(&r.payees[..2], &[a, b]);
        assert_eq!(r.payees[2], Pubkey::default());
        assert_eq!(r.payee_list, list);
        assert_eq!((r.not_before, r.not_after), (10, 20));
        assert_eq!(
            (r.monthly_cap, r.lifetime_cap, r.payee_daily_cap),
            (500, 5000, 20)
        );
        // Without `account`, no list account is named.
        let r = rules(
            &input(json!({"kinds": 0, "payee_list": {"mode": "allow", "payees": [a.to_string()]}})),
            list,
        )
        .unwrap();
        assert_eq!((r.payee_list_mode, r.payee_list), (1, Pubkey::default()));
        // A cap counts in the mint's units.
        let e = params(&input(json!({"kinds": 0, "monthly_cap": "5"}))).unwrap_err();
        assert!(e.message.starts_with("invalid mint:"), "{}", e.message);
        let five: Vec<String> = (0..5).map(|_| Pubkey::new_unique().to_string()).collect();
        for (v, field) in [
            (
                json!({"mode": "maybe", "payees": [a.to_string()]}),
                "payee_list.mode",
            ),
            (
                json!({"mode": "allow", "payees": five}),
                "payee_list.payees",
            ),
            (
                json!({"mode": "allow", "payees": [a.to_string(), a.to_string()]}),
                "payee_list.payees",
            ),
            (
                json!({"mode": "allow", "payees": [Pubkey::default().to_string()]}),
                "payee_list.payees",
            ),
            (json!({"mode": "deny"}), "payee_list"),
        ] {
            let e = rules(&input(json!({"kinds": 0, "payee_list": v})), list).unwrap_err();
            assert!(
                e.message.starts_with(&format!("invalid {field}:")),
                "{}",
                e.message
            );
        }
        for (v, field) in [
            (
                json!({"not_before": 20, "not_after": 10}),
                "validity.not_before",
            ),
            (json!({"not_after": -1}), "validity"),
        ] {
            let e = rules(&input(json!({"kinds": 0, "validity": v})), list).unwrap_err();
            assert!(
                e.message.starts_with(&format!("invalid {field}:")),
                "{}",
                e.message
            );
        }
    }
}
