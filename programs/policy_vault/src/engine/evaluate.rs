//! The decision procedure. First failure wins, in this order:
//! KillSwitch → validity window → payee list → Spending (per transaction, daily, weekly) →
//! monthly, lifetime and per-payee daily caps → Velocity → payee checks (tier, then
//! attestation) → payer checks from the payee's AcceptancePolicy (tier/risk/confidence, then
//! attestation) → the holdback the payer's schedule sets, which the payee must accept → approval
//! (an amount above the policy's approval threshold, unless approved: RequireApproval, asked
//! only of a payment everything else allows). The rules between the kill switch and Spending, and the three caps after
//! it, are the policy's limits ([`LimitRules`]), all off in a policy without them.

use super::config::*;
use super::decision::*;
use super::holdback::{self, Holdback, HoldbackRule};
use super::limits::{self, LimitState, LimitUpdate};
use super::time::{day_index, week_index};
use anchor_lang::prelude::Pubkey;
pub use trust_gate_program_common::external::atom_stats::{Reputation, Stats};

/// Spending counters kept in the PolicyAccount.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpendingCounters {
    pub day_index: i64,
    pub day_spent: u64,
    pub week_index: i64,
    pub week_spent: u64,
}

/// The VelocityLedger's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VelocityState {
    pub cumulative: u64,
    pub window_start: i64,
    pub last_commit: i64,
}

/// An attestation as the engine needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttestationView {
    pub subject: Pubkey,
    pub capability: [u8; 32],
    pub attestor: Pubkey,
    pub revoked: bool,
    /// Unix seconds; 0 = never expires.
    pub expires_at: i64,
}

/// One side of the payment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Party {
    pub asset: Pubkey,
    pub reputation: Reputation,
    /// The attestation supplied for this party, if any.
    pub attestation: Option<AttestationView>,
}

pub struct EvalInput<'a> {
    pub policy: &'a PolicyConfig,
    /// The policy's holdback schedule, if it has one.
    pub holdback: Option<&'a HoldbackRule>,
    pub acceptance: Option<&'a AcceptanceConfig>,
    pub paused: bool,
    pub spending: SpendingCounters,
    pub velocity: VelocityState,
    /// The limits' counters and the payee's slot; `None` for a policy without limits, whose limit rules
    /// are all off and which counts nothing of theirs.
    pub limits: Option<LimitState>,
    /// Whether the payee is on the policy's payee list (inline or in its list account).
    pub payee_listed: bool,
    pub payer: Party,
    pub payee: Party,
    pub amount: u64,
    /// Unix seconds.
    pub now: i64,
    /// The policy's approval threshold: a payment of more needs an approval (0 = none).
    pub approval_threshold: u64,
    /// Whether the payment's terms come with an approval in force.
    pub approved: bool,
}

/// The decision and, for an Allow, the counters to store if the caller commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evaluation {
    pub decision: Decision,
    pub spending: SpendingCounters,
    pub velocity: VelocityState,
    /// What a policy with limits stores on Allow; `None` without limits, and on anything but Allow.
    pub limits: Option<LimitUpdate>,
    /// An Allow's holdback under a policy with a schedule; `None` otherwise.
    pub holdback: Option<Holdback>,
}

/// What an Allow stores, and its holdback.
type Counters = (
    SpendingCounters,
    Option<LimitUpdate>,
    VelocityState,
    Option<Holdback>,
);

/// The velocity cap that applies to a payer. Payers of immediate tier 0, unrated or with
/// unreadable stats get the decayed cap; lower trust is never more permissive.
pub fn velocity_cap(rule: &VelocityRule, payer: &Reputation) -> u64 {
    let full = rule.max_in_window;
    match payer {
        Reputation::Rated(s) if s.tier_immediate >= 1 => full,
        _ => {
            let bps = u128::from(rule.tier0_decay_bps.min(MAX_DECAY_BPS));
            // ≤ full because bps ≤ 10000, so the cast back cannot truncate.
            (u128::from(full) * bps / u128::from(MAX_DECAY_BPS)) as u64
        }
    }
}

fn check_spending(
    caps: &SpendingCaps,
    c: SpendingCounters,
    amount: u64,
    now: i64,
    enforce: bool,
) -> Result<SpendingCounters, DenyReason> {
    let day = day_index(now);
    let week = week_index(now);
    let day_spent = if c.day_index == day { c.day_spent } else { 0 };
    let week_spent = if c.week_index == week {
        c.week_spent
    } else {
        0
    };
    if enforce {
        if amount > caps.per_tx {
            return Err(DenyReason::SpendingPerTxExceeded);
        }
        // Overflow counts as exceeded.
        match day_spent.checked_add(amount) {
            Some(total) if total <= caps.daily => {}
            _ => return Err(DenyReason::SpendingDailyExceeded),
        }
        match week_spent.checked_add(amount) {
            Some(total) if total <= caps.weekly => {}
            _ => return Err(DenyReason::SpendingWeeklyExceeded),
        }
    }
    Ok(SpendingCounters {
        day_index: day,
        day_spent: day_spent.saturating_add(amount),
        week_index: week,
        week_spent: week_spent.saturating_add(amount),
    })
}

fn check_velocity(
    rule: &VelocityRule,
    v: VelocityState,
    payer: &Reputation,
    amount: u64,
    now: i64,
    enforce: bool,
) -> Result<VelocityState, DenyReason> {
    let window = i64::try_from(rule.window_secs).unwrap_or(i64::MAX);
    let window_end = v.window_start.saturating_add(window);
    // An expired window (or a clock that moved backwards) restarts at now.
    let (cumulative, window_start) = if now >= window_end || now < v.window_start {
        (0, now)
    } else {
        (v.cumulative, v.window_start)
    };
    if enforce {
        match cumulative.checked_add(amount) {
            Some(total) if total <= velocity_cap(rule, payer) => {}
            _ => return Err(DenyReason::VelocityWindowExceeded),
        }
    }
    Ok(VelocityState {
        cumulative: cumulative.saturating_add(amount),
        window_start,
        last_commit: now,
    })
}

/// Checks a counterparty's reputation against a requirement. `Ok(true)` means the party is
/// unrated and the treatment asks for an attestation of the rule's capability.
fn check_trust(req: &TrustRequirement, rep: &Reputation) -> Result<bool, DenyReason> {
    match rep {
        Reputation::Unrated => match req.unrated {
            UnratedTreatment::Deny => Err(DenyReason::UnratedTreatmentDeny),
            UnratedTreatment::Allow => Ok(false),
            UnratedTreatment::RequireValidation => Ok(true),
        },
        Reputation::WrongOwner => Err(DenyReason::AtomStatsWrongOwner),
        Reputation::SchemaMismatch => Err(DenyReason::AtomStatsSchemaMismatch),
        Reputation::Rated(s) => {
            let tier = match req.gate_mode {
                GateMode::Immediate => s.tier_immediate,
                GateMode::Confirmed => s.tier_confirmed,
            };
            if tier < req.min_tier {
                return Err(DenyReason::CounterpartyTierBelowMin);
            }
            if req.max_risk != RISK_CHECK_OFF && s.risk_score > req.max_risk {
                return Err(DenyReason::CounterpartyRiskAboveMax);
            }
            if req.min_confidence != 0 && s.confidence < req.min_confidence {
                return Err(DenyReason::CounterpartyConfidenceBelow);
            }
            Ok(false)
        }
    }
}

/// Checks the attestation supplied for `party` against `rule`.
fn check_attestation(
    rule: &ValidationRule,
    party: &Party,
    subject: Subject,
    now: i64,
) -> Option<Decision> {
    let Some(a) = party.attestation else {
        return Some(Decision::RequireValidation {
            capability: rule.capability,
            subject,
        });
    };
    let reason = if a.subject != party.asset || a.capability != rule.capability {
        DenyReason::AttestationMissing
    } else if !rule.attestors.is_empty() && !rule.attestors.contains(&a.attestor) {
        DenyReason::AttestationAttestorRejected
    } else if a.revoked {
        DenyReason::AttestationRevoked
    } else if a.expires_at != 0 && now >= a.expires_at {
        DenyReason::AttestationExpired
    } else {
        return None;
    };
    Some(Decision::Deny(reason))
}

/// Trust then attestation for one party; `None` when the party passes.
fn check_party(
    req: &TrustRequirement,
    enforce_trust: bool,
    rule: &ValidationRule,
    enforce_validation: bool,
    party: &Party,
    subject: Subject,
    now: i64,
) -> Option<Decision> {
    let mut needs_attestation = enforce_validation;
    if enforce_trust {
        match check_trust(req, &party.reputation) {
            Err(reason) => return Some(Decision::Deny(reason)),
            Ok(unrated_needs_attestation) => needs_attestation |= unrated_needs_attestation,
        }
    }
    if needs_attestation && rule.is_required() {
        return check_attestation(rule, party, subject, now);
    }
    None
}

fn decide(input: &EvalInput) -> Result<Counters, Decision> {
    let p = input.policy;
    let deny = |r| Decision::Deny(r);
    if input.paused {
        return Err(deny(DenyReason::KillSwitchEngaged));
    }
    limits::check_validity(&p.limits, input.now).map_err(deny)?;
    limits::check_list(p.limits.list_mode, input.payee_listed).map_err(deny)?;
    let spending = check_spending(
        &p.spending,
        input.spending,
        input.amount,
        input.now,
        p.has(kinds::SPENDING),
    )
    .map_err(deny)?;
    let limits = match &input.limits {
        Some(state) => Some(
            limits::check_caps(
                &p.limits,
                state,
                &input.payee.asset,
                input.amount,
                input.now,
            )
            .map_err(deny)?,
        ),
        None => None,
    };
    let velocity = check_velocity(
        &p.velocity,
        input.velocity,
        &input.payer.reputation,
        input.amount,
        input.now,
        p.has(kinds::VELOCITY),
    )
    .map_err(deny)?;
    if let Some(d) = check_party(
        &p.counterparty,
        p.has(kinds::COUNTERPARTY_TIER),
        &p.validation,
        p.has(kinds::REQUIRE_VALIDATION),
        &input.payee,
        Subject::Payee,
        input.now,
    ) {
        return Err(d);
    }
    if let Some(a) = input.acceptance {
        if let Some(d) = check_party(
            &a.payer,
            true,
            &a.validation,
            a.validation.is_required(),
            &input.payer,
            Subject::Payer,
            input.now,
        ) {
            return Err(d);
        }
    }
    let holdback = match input.holdback {
        Some(rule) => Some(
            holdback::holdback(
                rule,
                p.counterparty.gate_mode,
                input.acceptance.map(|a| &a.holdback),
                &input.payee.reputation,
                input.amount,
            )
            .map_err(deny)?,
        ),
        None => None,
    };
    if input.approval_threshold != 0 && input.amount > input.approval_threshold && !input.approved {
        return Err(Decision::RequireApproval);
    }
    Ok((spending, limits, velocity, holdback))
}

/// Evaluates a payment. On anything but Allow the returned counters equal the inputs.
pub fn evaluate(input: &EvalInput) -> Evaluation {
    match decide(input) {
        Ok((spending, limits, velocity, holdback)) => Evaluation {
            decision: Decision::Allow,
            spending,
            velocity,
            limits,
            holdback,
        },
        Err(decision) => Evaluation {
            decision,
            spending: input.spending,
            velocity: input.velocity,
            limits: None,
            holdback: None,
        },
    }
}

impl Evaluation {
    /// The decision's wire form, an Allow's holdback in it.
    pub fn to_wire(&self) -> [u8; DECISION_WIRE_LEN] {
        let mut wire = self.decision.to_wire();
        if let (Decision::Allow, Some(h)) = (self.decision, &self.holdback) {
            h.write_wire(&mut wire);
        }
        wire
    }
}

#[cfg(test)]
mod tests;
