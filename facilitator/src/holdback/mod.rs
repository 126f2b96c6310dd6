//! The holdback at this facilitator (docs/holdback.md): a challenge's terms held against the
//! gate's decision at `/verify`.

use crate::reject::{Reason, Rejection};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::holdback::Holdback;
use trust_gate_x402::holdback::HoldbackTerms;

/// The challenge's terms (`stated`) must be the gate's now (`decided`): the same tier, share,
/// hold and held amount, or none on both sides. A settlement of other terms would fail on
/// chain (`HoldbackTierMoved`, `HoldbackTransferMismatch`, `HoldbackTierMissing`), so it is
/// refused before anything is sent; a fresh challenge states the terms of now.
pub fn terms_hold(
    stated: Option<&HoldbackTerms>,
    decided: Option<&Holdback>,
) -> Result<(), Rejection> {
    let message = match (stated, decided) {
        (None, None) => return Ok(()),
        (Some(t), Some(h)) if t.states(h) => return Ok(()),
        (None, Some(h)) => format!(
            "the payer's policy holds back {} of this payment for {} s (payee tier {}); the challenge states no extra.gate.holdback",
            h.held, h.hold_secs, h.tier
        ),
        (Some(_), None) => {
            "the challenge states extra.gate.holdback; the payer's policy holds nothing back"
                .to_string()
        }
        (Some(t), Some(h)) => format!(
            "the challenge states payee tier {}, {} bps held {} s ({} units); the gate's terms now are tier {}, {} bps held {} s ({} units)",
            t.payee_tier, t.share_bps, t.hold_seconds, t.held, h.tier, h.share_bps, h.hold_secs, h.held
        ),
    };
    Err(Rejection::new(Reason::HoldbackTermsStale, message)
        .hint("request the resource again: a fresh challenge states the terms of now"))
}

/// The payee has no escrow at `escrow` for a held share.
pub fn escrow_missing(escrow: &Pubkey, payee: &Pubkey) -> Rejection {
    Rejection::new(
        Reason::HoldbackEscrowMissing,
        format!("payee agent {payee} has no holdback escrow {escrow} in the payment's mint"),
    )
    .hint("anyone may open it, once per payee and mint: gate::open_holdback_escrow (the SDKs' `open_holdback_escrow`)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(tier: u8, held: u64) -> Holdback {
        Holdback {
            tier,
            share_bps: 1_000,
            hold_secs: 3_600,
            held,
        }
    }

    #[test]
    fn the_challenge_must_state_the_gates_terms_of_now() {
        let escrow = Pubkey::new_unique();
        let terms = HoldbackTerms::new(&h(1, 50), &escrow, &Pubkey::default());
        assert!(terms_hold(None, None).is_ok());
        assert!(terms_hold(Some(&terms), Some(&h(1, 50))).is_ok());
        for (stated, decided, says) in [
            (Some(&terms), Some(h(2, 50)), "tier 2"),
            (Some(&terms), Some(h(1, 49)), "49 units"),
            (None, Some(h(1, 50)), "states no extra.gate.holdback"),
            (Some(&terms), None, "holds nothing back"),
        ] {
            let r = terms_hold(stated, decided.as_ref()).unwrap_err();
            assert_eq!(r.reason, Reason::HoldbackTermsStale);
            assert!(r.message.contains(says), "{}", r.message);
        }
    }
}
