//! The holdback: the share of a payment the payer's policy holds back from a payee, priced by
//! the payee's reputation tier, and what the payee accepts of it.
//!
//! The payer's policy gives, for each payee tier (0..=4) and for a payee without engine stats,
//! a share in basis points and a hold period; the payee's acceptance policy gives the largest
//! share and the longest hold it accepts, and the arbiters it accepts. The evaluation picks the
//! term of the payee's tier as read before this payment's own feedback, and refuses terms the
//! payee did not accept (a payee without an acceptance policy accepts no holdback). The gate
//! moves the held share to its escrow in the same transaction (docs/holdback.md).

use super::config::GateMode;
use super::decision::DenyReason;
use anchor_lang::prelude::Pubkey;
use trust_gate_program_common::external::atom_stats::Reputation;

/// The schedule's terms: one per payee tier 0..=4, then the unrated payee's.
pub const TERMS: usize = 6;
/// The index of the unrated payee's term, and the tier a holdback reports for such a payee.
pub const UNRATED_TIER: u8 = 5;
pub const MAX_SHARE_BPS: u16 = 10_000;
/// The longest hold a schedule may set: 30 days. A held payment's log stays open until its
/// hold and any arbitration end, so the bound keeps every log closable.
pub const MAX_HOLD_SECS: u32 = 30 * 24 * 60 * 60;

/// One term of a schedule: hold back `share_bps` of the amount for `hold_secs`. Both zero:
/// no holdback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HoldTerm {
    pub share_bps: u16,
    pub hold_secs: u32,
}

/// A payer policy's holdback schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HoldbackRule {
    /// By payee tier 0..=4, then the unrated payee's ([`UNRATED_TIER`]).
    pub terms: [HoldTerm; TERMS],
    /// Who decides a dispute of a held payment: a key, or the address of the gate's k-of-n
    /// arbiter set; the default key for none (the payee's refusal then ends a dispute in its
    /// favour, once the arbitration period is over).
    pub arbiter: Pubkey,
}

/// What a payee accepts of a holdback. All zero: none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AcceptedHoldback {
    pub max_share_bps: u16,
    pub max_hold_secs: u32,
    /// The arbiters the payee accepts (keys or arbiter sets); default keys are empty slots.
    /// A schedule without an arbiter needs none of them.
    pub arbiters: [Pubkey; 2],
}

/// The terms a payment is settled under: its payee's tier, the share and hold of that tier,
/// and the amount held (the share of the amount, rounded down; zero means the payment is not
/// held, though the tier still binds the settlement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holdback {
    pub tier: u8,
    pub share_bps: u16,
    pub hold_secs: u32,
    pub held: u64,
}

/// Why a schedule or an accepted holdback is invalid (each becomes a `ConfigError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldbackConfigError {
    /// A share above 10 000 bps.
    ShareOutOfRange,
    /// A hold above [`MAX_HOLD_SECS`].
    HoldOutOfRange,
    /// A share without a hold or a hold without a share.
    TermIncomplete,
    /// A higher tier holds back more, or longer, than a lower one.
    NotDecreasing,
    /// No term holds anything back.
    Empty,
    /// The same arbiter accepted twice.
    DuplicateArbiter,
}

fn validate_term(t: &HoldTerm) -> Result<(), HoldbackConfigError> {
    if t.share_bps > MAX_SHARE_BPS {
        return Err(HoldbackConfigError::ShareOutOfRange);
    }
    if t.hold_secs > MAX_HOLD_SECS {
        return Err(HoldbackConfigError::HoldOutOfRange);
    }
    if (t.share_bps == 0) != (t.hold_secs == 0) {
        return Err(HoldbackConfigError::TermIncomplete);
    }
    Ok(())
}

impl HoldbackRule {
    /// Every term in range and complete; a better tier never holds more or longer (the
    /// unrated term is free); something held somewhere.
    pub fn validate(&self) -> Result<(), HoldbackConfigError> {
        self.terms.iter().try_for_each(validate_term)?;
        let tiers = &self.terms[..usize::from(UNRATED_TIER)];
        if tiers
            .windows(2)
            .any(|w| w[1].share_bps > w[0].share_bps || w[1].hold_secs > w[0].hold_secs)
        {
            return Err(HoldbackConfigError::NotDecreasing);
        }
        if self.terms.iter().all(|t| t.share_bps == 0) {
            return Err(HoldbackConfigError::Empty);
        }
        Ok(())
    }

    /// The term for the payee's reputation, compared by `mode` as the policy's counterparty
    /// rule compares it, and its tier. Stats of the wrong owner or schema deny as the trust
    /// rule does: a payee could otherwise pick its term.
    pub fn term_for(
        &self,
        payee: &Reputation,
        mode: GateMode,
    ) -> Result<(u8, HoldTerm), DenyReason> {
        let tier = match payee {
            Reputation::Unrated => UNRATED_TIER,
            Reputation::WrongOwner => return Err(DenyReason::AtomStatsWrongOwner),
            Reputation::SchemaMismatch => return Err(DenyReason::AtomStatsSchemaMismatch),
            Reputation::Rated(s) => match mode {
                GateMode::Immediate => s.tier_immediate,
                GateMode::Confirmed => s.tier_confirmed,
            }
            .min(UNRATED_TIER - 1),
        };
        Ok((tier, self.terms[usize::from(tier)]))
    }
}

impl AcceptedHoldback {
    /// Whether the payee accepts any holdback (all zero: none).
    pub fn accepts_any(&self) -> bool {
        self.max_share_bps != 0
    }

    /// Both limits in range and given together; no arbiter twice.
    pub fn validate(&self) -> Result<(), HoldbackConfigError> {
        validate_term(&HoldTerm {
            share_bps: self.max_share_bps,
            hold_secs: self.max_hold_secs,
        })?;
        let [a, b] = self.arbiters;
        if a != Pubkey::default() && a == b {
            return Err(HoldbackConfigError::DuplicateArbiter);
        }
        Ok(())
    }

    fn accepts_arbiter(&self, arbiter: &Pubkey) -> bool {
        *arbiter == Pubkey::default() || self.arbiters.contains(arbiter)
    }
}

/// The holdback of a payment of `amount` under `rule` to a payee of `reputation`, checked
/// against what the payee `accepted` (`None`: the payee has no acceptance policy). Terms that
/// hold nothing of this amount need no acceptance.
pub fn holdback(
    rule: &HoldbackRule,
    mode: GateMode,
    accepted: Option<&AcceptedHoldback>,
    payee: &Reputation,
    amount: u64,
) -> Result<Holdback, DenyReason> {
    let (tier, term) = rule.term_for(payee, mode)?;
    // ≤ amount because share ≤ 10 000 bps, so the cast back cannot truncate.
    let held = (u128::from(amount) * u128::from(term.share_bps.min(MAX_SHARE_BPS))
        / u128::from(MAX_SHARE_BPS)) as u64;
    if held != 0 {
        let accepted = accepted
            .filter(|a| a.accepts_any())
            .ok_or(DenyReason::HoldbackNotAccepted)?;
        if term.share_bps > accepted.max_share_bps {
            return Err(DenyReason::HoldbackShareNotAccepted);
        }
        if term.hold_secs > accepted.max_hold_secs {
            return Err(DenyReason::HoldbackHoldNotAccepted);
        }
        if !accepted.accepts_arbiter(&rule.arbiter) {
            return Err(DenyReason::HoldbackArbiterNotAccepted);
        }
    }
    Ok(Holdback {
        tier,
        share_bps: term.share_bps,
        hold_secs: term.hold_secs,
        held,
    })
}

/// Where an Allow's wire form (see `decision::DECISION_WIRE_LEN`) carries its holdback, in
/// the bytes an Allow leaves zero: 1 the flag (1: the policy has a schedule), 2 the tier,
/// 3..5 the share, 5..9 the hold, 9..17 the amount held (little endian).
mod wire {
    pub const FLAG: usize = 1;
    pub const TIER: usize = 2;
    pub const SHARE: usize = 3;
    pub const HOLD: usize = 5;
    pub const HELD: usize = 9;
    pub const END: usize = 17;
}

impl Holdback {
    /// Writes the holdback into an Allow's wire form.
    pub fn write_wire(&self, out: &mut [u8]) {
        if out.len() < wire::END {
            return;
        }
        out[wire::FLAG] = 1;
        out[wire::TIER] = self.tier;
        out[wire::SHARE..wire::HOLD].copy_from_slice(&self.share_bps.to_le_bytes());
        out[wire::HOLD..wire::HELD].copy_from_slice(&self.hold_secs.to_le_bytes());
        out[wire::HELD..wire::END].copy_from_slice(&self.held.to_le_bytes());
    }

    /// The holdback an Allow's wire form carries; `None` for another decision, or an Allow
    /// under a policy without a schedule.
    pub fn from_wire(bytes: &[u8]) -> Option<Holdback> {
        let b = bytes.get(..wire::END)?;
        if b[0] != super::Decision::KIND_ALLOW || b[wire::FLAG] != 1 {
            return None;
        }
        Some(Holdback {
            tier: b[wire::TIER],
            share_bps: u16::from_le_bytes(b[wire::SHARE..wire::HOLD].try_into().ok()?),
            hold_secs: u32::from_le_bytes(b[wire::HOLD..wire::HELD].try_into().ok()?),
            held: u64::from_le_bytes(b[wire::HELD..wire::END].try_into().ok()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Decision, DECISION_WIRE_LEN};
    use trust_gate_program_common::external::atom_stats::Stats;

    fn term(share_bps: u16, hold_secs: u32) -> HoldTerm {
        HoldTerm {
            share_bps,
            hold_secs,
        }
    }

    /// 20 % for 7 days at tier 0 down to nothing at tier 4; unrated 30 % for 14 days.
    fn rule(arbiter: Pubkey) -> HoldbackRule {
        const DAY: u32 = 86_400;
        HoldbackRule {
            terms: [
                term(2_000, 7 * DAY),
                term(1_000, 5 * DAY),
                term(500, 3 * DAY),
                term(100, DAY),
                term(0, 0),
                term(3_000, 14 * DAY),
            ],
            arbiter,
        }
    }

    fn rated(immediate: u8, confirmed: u8) -> Reputation {
        Reputation::Rated(Stats {
            tier_immediate: immediate,
            tier_confirmed: confirmed,
            risk_score: 0,
            confidence: 0,
        })
    }

    fn accepts(max_share_bps: u16, max_hold_secs: u32, arbiters: [Pubkey; 2]) -> AcceptedHoldback {
        AcceptedHoldback {
            max_share_bps,
            max_hold_secs,
            arbiters,
        }
    }

    #[test]
    fn the_payees_tier_picks_the_term() {
        let r = rule(Pubkey::default());
        let all = accepts(MAX_SHARE_BPS, MAX_HOLD_SECS, [Pubkey::default(); 2]);
        let h = |rep: Reputation, mode| holdback(&r, mode, Some(&all), &rep, 1_000_000);
        let tier1 = h(rated(1, 3), GateMode::Immediate).unwrap();
        assert_eq!(
            (tier1.tier, tier1.share_bps, tier1.held),
            (1, 1_000, 100_000)
        );
        let tier3 = h(rated(1, 3), GateMode::Confirmed).unwrap();
        assert_eq!((tier3.tier, tier3.held), (3, 10_000));
        let unrated = h(Reputation::Unrated, GateMode::Immediate).unwrap();
        assert_eq!((unrated.tier, unrated.held), (UNRATED_TIER, 300_000));
        let top = h(rated(4, 4), GateMode::Immediate).unwrap();
        assert_eq!((top.tier, top.held), (4, 0));
        assert_eq!(
            h(Reputation::WrongOwner, GateMode::Immediate),
            Err(DenyReason::AtomStatsWrongOwner)
        );
        assert_eq!(
            h(Reputation::SchemaMismatch, GateMode::Immediate),
            Err(DenyReason::AtomStatsSchemaMismatch)
        );
    }

    #[test]
    fn the_held_share_rounds_down_and_nothing_held_needs_no_acceptance() {
        let r = rule(Pubkey::default());
        // 1 % of 99 units is 0.99: nothing held, so a payee that accepts nothing is paid.
        let h = holdback(&r, GateMode::Immediate, None, &rated(3, 3), 99).unwrap();
        assert_eq!((h.tier, h.held), (3, 0));
        assert_eq!(
            holdback(&r, GateMode::Immediate, None, &rated(3, 3), 100),
            Err(DenyReason::HoldbackNotAccepted)
        );
        // The whole amount at 10 000 bps.
        let mut all = rule(Pubkey::default());
        all.terms[0] = term(MAX_SHARE_BPS, 1);
        let any = accepts(MAX_SHARE_BPS, MAX_HOLD_SECS, [Pubkey::default(); 2]);
        let h = holdback(
            &all,
            GateMode::Immediate,
            Some(&any),
            &rated(0, 0),
            u64::MAX,
        )
        .unwrap();
        assert_eq!(h.held, u64::MAX);
    }

    #[test]
    fn the_payee_must_accept_the_terms_and_the_arbiter() {
        let arbiter = Pubkey::new_unique();
        let r = rule(arbiter);
        let rep = rated(0, 0); // 20 % for 7 days
        const WEEK: u32 = 7 * 86_400;
        let check = |a: Option<AcceptedHoldback>| {
            holdback(&r, GateMode::Immediate, a.as_ref(), &rep, 1_000).map(|h| h.held)
        };
        assert_eq!(check(None), Err(DenyReason::HoldbackNotAccepted));
        assert_eq!(
            check(Some(AcceptedHoldback::default())),
            Err(DenyReason::HoldbackNotAccepted)
        );
        assert_eq!(
            check(Some(accepts(1_999, WEEK, [arbiter, Pubkey::default()]))),
            Err(DenyReason::HoldbackShareNotAccepted)
        );
        assert_eq!(
            check(Some(accepts(2_000, WEEK - 1, [arbiter, Pubkey::default()]))),
            Err(DenyReason::HoldbackHoldNotAccepted)
        );
        assert_eq!(
            check(Some(accepts(
                2_000,
                WEEK,
                [Pubkey::new_unique(), Pubkey::default()]
            ))),
            Err(DenyReason::HoldbackArbiterNotAccepted)
        );
        // Exactly at the limits, the arbiter in either slot.
        assert_eq!(
            check(Some(accepts(2_000, WEEK, [Pubkey::new_unique(), arbiter]))),
            Ok(200)
        );
        // A schedule without an arbiter needs none accepted.
        let none = rule(Pubkey::default());
        let h = holdback(
            &none,
            GateMode::Immediate,
            Some(&accepts(2_000, WEEK, [Pubkey::default(); 2])),
            &rep,
            1_000,
        );
        assert_eq!(h.map(|h| h.held), Ok(200));
    }

    #[test]
    fn a_schedule_is_complete_in_range_and_never_worse_for_a_better_tier() {
        let ok = rule(Pubkey::default());
        assert_eq!(ok.validate(), Ok(()));
        let with = |i: usize, t: HoldTerm| {
            let mut r = ok;
            r.terms[i] = t;
            r.validate()
        };
        assert_eq!(
            with(0, term(MAX_SHARE_BPS + 1, 1)),
            Err(HoldbackConfigError::ShareOutOfRange)
        );
        assert_eq!(
            with(0, term(2_000, MAX_HOLD_SECS + 1)),
            Err(HoldbackConfigError::HoldOutOfRange)
        );
        assert_eq!(with(0, term(2_000, MAX_HOLD_SECS)), Ok(()));
        assert_eq!(
            with(4, term(1, 0)),
            Err(HoldbackConfigError::TermIncomplete)
        );
        assert_eq!(
            with(4, term(0, 1)),
            Err(HoldbackConfigError::TermIncomplete)
        );
        assert_eq!(
            with(2, term(1_001, 3 * 86_400)),
            Err(HoldbackConfigError::NotDecreasing)
        );
        assert_eq!(
            with(2, term(500, 5 * 86_400 + 1)),
            Err(HoldbackConfigError::NotDecreasing)
        );
        // The unrated term is free: above tier 0's here.
        assert_eq!(with(5, term(MAX_SHARE_BPS, MAX_HOLD_SECS)), Ok(()));
        let empty = HoldbackRule {
            terms: [HoldTerm::default(); TERMS],
            arbiter: Pubkey::default(),
        };
        assert_eq!(empty.validate(), Err(HoldbackConfigError::Empty));
        let k = Pubkey::new_unique();
        assert_eq!(
            accepts(100, 60, [k, k]).validate(),
            Err(HoldbackConfigError::DuplicateArbiter)
        );
        assert_eq!(
            accepts(100, 0, [k, Pubkey::default()]).validate(),
            Err(HoldbackConfigError::TermIncomplete)
        );
        assert_eq!(AcceptedHoldback::default().validate(), Ok(()));
    }

    #[test]
    fn an_allow_carries_its_holdback_in_the_wire() {
        let h = Holdback {
            tier: 2,
            share_bps: 500,
            hold_secs: 259_200,
            held: 12_345,
        };
        let mut wire = Decision::Allow.to_wire();
        assert_eq!(Holdback::from_wire(&wire), None);
        h.write_wire(&mut wire);
        assert_eq!(wire.len(), DECISION_WIRE_LEN);
        assert_eq!(Holdback::from_wire(&wire), Some(h));
        assert_eq!(Decision::from_wire(&wire), Some(Decision::Allow));
        let deny = Decision::Deny(DenyReason::KillSwitchEngaged).to_wire();
        assert_eq!(Holdback::from_wire(&deny), None);
    }
}
