//! What a transaction the facilitator co-signs may make it pay as a priority fee.
//!
//! The fee payer pays the priority fee, `limit × price` (micro-lamports per unit), whether
//! the transaction succeeds or fails, so both factors are capped: the unit price
//! (`MAX_COMPUTE_UNIT_PRICE`), the limit (`MAX_COMPUTE_UNIT_LIMIT`), and their product
//! (`MAX_PRIORITY_FEE_LAMPORTS`); those need no RPC. A limit costs nothing without a price, so
//! only a transaction with a price is also simulated before its send (one more RPC call) and
//! held to the units that simulation used times a margin. Every kind of transaction the
//! facilitator co-signs goes through here; today only settlements carry a ComputeBudget
//! prefix (a dispute is exactly one instruction, see [`crate::service::dispute`]).

use crate::config::ComputeCaps;
use crate::reject::{Reason, Rejection};
use trust_gate_client::settle::ComputeBudget;

/// Micro-lamports in a lamport.
const MICRO_LAMPORTS: u128 = 1_000_000;
/// The units the runtime allows each instruction of a transaction without a
/// SetComputeUnitLimit.
pub const DEFAULT_UNITS_PER_INSTRUCTION: u32 = 200_000;

/// The priority fee, in lamports, of `limit` units at `price` micro-lamports each, rounded up
/// as the runtime rounds it.
pub fn priority_fee_lamports(limit: u32, price: u64) -> u64 {
    let micro = u128::from(limit) * u128::from(price);
    u64::try_from(micro.div_ceil(MICRO_LAMPORTS)).unwrap_or(u64::MAX)
}

/// Whether the transaction pays a priority fee at all (then its limit costs the fee payer).
pub fn priced(budget: &ComputeBudget) -> bool {
    budget.unit_price_micro_lamports.unwrap_or(0) > 0
}

/// The limit the runtime gives the transaction: its SetComputeUnitLimit, else
/// [`DEFAULT_UNITS_PER_INSTRUCTION`] for each of its `instructions` that is not a
/// ComputeBudget one (a lower bound of the runtime's default, which is enough to cap).
pub fn effective_limit(budget: &ComputeBudget, instructions: usize) -> u32 {
    budget.unit_limit.unwrap_or_else(|| {
        u32::try_from(instructions)
            .unwrap_or(u32::MAX)
            .saturating_mul(DEFAULT_UNITS_PER_INSTRUCTION)
            .min(crate::config::RUNTIME_MAX_UNIT_LIMIT)
    })
}

/// The caps that need no RPC: the unit price, the requested limit (an explicit one always;
/// the runtime's default when a price is set, since the fee is charged on it) and the
/// priority fee. `instructions` counts the transaction's instructions but the ComputeBudget
/// ones.
pub fn check(
    budget: &ComputeBudget,
    instructions: usize,
    caps: &ComputeCaps,
) -> Result<(), Rejection> {
    let price = budget.unit_price_micro_lamports.unwrap_or(0);
    if price > caps.max_unit_price {
        return Err(Rejection::new(
            Reason::ComputeUnitPriceTooHigh,
            format!(
                "the compute-unit price is {price} micro-lamports; this facilitator co-pays at most {}",
                caps.max_unit_price
            ),
        )
        .hint("lower SetComputeUnitPrice, or leave it out"));
    }
    let limit = effective_limit(budget, instructions);
    if (budget.unit_limit.is_some() || price > 0) && limit > caps.max_unit_limit {
        let what = match budget.unit_limit {
            Some(l) => format!("the transaction requests {l} compute units"),
            None => format!(
                "without a SetComputeUnitLimit the runtime allows the transaction at least {limit} compute units, on which its priority fee is charged"
            ),
        };
        return Err(Rejection::new(
            Reason::ComputeUnitLimitTooHigh,
            format!(
                "{what}; this facilitator co-signs at most {} (MAX_COMPUTE_UNIT_LIMIT)",
                caps.max_unit_limit
            ),
        )
        .hint("request a SetComputeUnitLimit just above what the transaction uses (simulate it)"));
    }
    let fee = priority_fee_lamports(limit, price);
    if fee > caps.max_priority_fee_lamports {
        return Err(Rejection::new(
            Reason::PriorityFeeTooHigh,
            format!(
                "the priority fee is {fee} lamports ({limit} units at {price} micro-lamports); this facilitator pays at most {} a transaction (MAX_PRIORITY_FEE_LAMPORTS)",
                caps.max_priority_fee_lamports
            ),
        )
        .hint("lower the unit price or the unit limit so that their product stays under the cap"));
    }
    Ok(())
}

/// The highest limit a priced transaction that used `measured` units in its simulation may
/// request: `measured × (100 + margin_percent) / 100 + margin_units`, at most
/// `max_unit_limit`.
pub fn allowed_limit(measured: u64, caps: &ComputeCaps) -> u32 {
    let scaled = u128::from(measured) * u128::from(100 + caps.margin_percent) / 100;
    let allowed = scaled + u128::from(caps.margin_units);
    u32::try_from(allowed)
        .unwrap_or(u32::MAX)
        .min(caps.max_unit_limit)
}

/// A priced transaction's limit against the units its simulation used.
pub fn check_measured(limit: u32, measured: u64, caps: &ComputeCaps) -> Result<(), Rejection> {
    let allowed = allowed_limit(measured, caps);
    if limit <= allowed {
        return Ok(());
    }
    Err(Rejection::new(
        Reason::ComputeUnitLimitTooHigh,
        format!(
            "the transaction requests {limit} compute units and its simulation used {measured}; with a priority fee this facilitator co-signs at most {allowed} (the units used × {}/100 + {})",
            100 + caps.margin_percent,
            caps.margin_units
        ),
    )
    .hint("request a SetComputeUnitLimit just above what the transaction uses (simulate it), or leave the unit price out"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(limit: Option<u32>, price: Option<u64>) -> ComputeBudget {
        ComputeBudget {
            unit_limit: limit,
            unit_price_micro_lamports: price,
        }
    }

    fn reason(r: Result<(), Rejection>) -> Option<String> {
        r.err().map(|r| {
            assert_eq!(r.status(), 400);
            r.reason.wire().to_string()
        })
    }

    #[test]
    fn the_fee_is_limit_times_price_rounded_up() {
        assert_eq!(priority_fee_lamports(200_000, 5_000_000), 1_000_000);
        assert_eq!(priority_fee_lamports(1_400_000, 5_000_000), 7_000_000);
        assert_eq!(priority_fee_lamports(1, 1), 1);
        assert_eq!(priority_fee_lamports(0, u64::MAX), 0);
        assert_eq!(priority_fee_lamports(u32::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn price_limit_and_fee_are_capped_without_rpc() {
        let caps = ComputeCaps::default();
        let check = |l, p| reason(check(&budget(l, p), 3, &caps));
        assert_eq!(check(None, None), None);
        assert_eq!(check(Some(100_000), None), None);
        assert_eq!(check(Some(20_000), Some(5_000_000)), None);
        assert_eq!(
            check(Some(20_000), Some(5_000_001)).as_deref(),
            Some("compute_unit_price_too_high")
        );
        // The audit's case: the runtime's largest limit at the highest price allowed.
        assert_eq!(
            check(Some(1_400_000), Some(5_000_000)).as_deref(),
            Some("compute_unit_limit_too_high")
        );
        // A large limit costs nothing without a price, but is still above the cap.
        assert_eq!(
            check(Some(400_001), None).as_deref(),
            Some("compute_unit_limit_too_high")
        );
        // A price without a limit is charged on the runtime's default (600 000 here).
        assert_eq!(
            check(None, Some(1)).as_deref(),
            Some("compute_unit_limit_too_high")
        );
        // Each factor allowed, their product not.
        assert_eq!(
            check(Some(100_000), Some(5_000_000)).as_deref(),
            Some("priority_fee_too_high")
        );
        assert_eq!(check(Some(100_000), Some(1_000_000)), None);
        assert_eq!(
            check(Some(100_000), Some(1_000_001)).as_deref(),
            Some("priority_fee_too_high")
        );
    }

    #[test]
    fn a_priced_limit_may_exceed_the_measured_units_by_the_margin() {
        let caps = ComputeCaps::default();
        assert_eq!(allowed_limit(0, &caps), 10_000);
        assert_eq!(allowed_limit(40_000, &caps), 60_000);
        assert_eq!(allowed_limit(90_282, &caps), 122_852);
        assert_eq!(allowed_limit(1_000_000, &caps), caps.max_unit_limit);
        assert_eq!(allowed_limit(u64::MAX, &caps), caps.max_unit_limit);
        // The paying clients' limits: what the SDKs' static estimate asks today (4 100 to
        // 8 100 above use) and the simulated sizing (used × 1.1 + a few thousand).
        for used in [7_166u64, 35_425, 46_128, 90_282] {
            for limit in [used + 8_100, used * 11 / 10 + 5_000] {
                assert_eq!(check_measured(limit as u32, used, &caps), Ok(()), "{used}");
            }
        }
        assert_eq!(
            reason(check_measured(60_001, 40_000, &caps)).as_deref(),
            Some("compute_unit_limit_too_high")
        );
    }
}
