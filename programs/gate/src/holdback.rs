//! The holdback after settlement, as pure rules: the held share a payment's log records, the
//! states it moves through and who may move it (docs/holdback.md).
//!
//! A held settlement moves the payer policy's share of the amount to an escrow the gate
//! controls (a token account whose authority is [`authority`]), in the same transaction as
//! the rest to the payee. The payment's FeedbackLog records the share ([`HeldShare`]); from
//! there it leaves the escrow exactly once:
//!
//! | from | move | who | when | to | state |
//! |---|---|---|---|---|---|
//! | Held | release | anyone | from `hold_until` | the logged recipient | Released |
//! | Held | dispute | the payer's wallet | before `hold_until` | stays | Disputed |
//! | Held, Disputed | refund | the payee | any time | the payer's wallet | Refunded |
//! | Disputed | arbitrate | the arbiter | before `arbitration_ends` | payer (uphold) or payee (reject) | Upheld, Rejected |
//! | Disputed | release | anyone | from `arbitration_ends` | the logged recipient | Lapsed |
//!
//! The payer alone never takes the share back; the payee never takes it during an open
//! dispute. The log closes only once the share is paid out.

use crate::errors::GateError;
use anchor_lang::prelude::*;

/// How long an arbiter has to decide a dispute of a held payment, from the dispute: 7 days.
/// Past it the share goes to the payee (no decision is the payee's).
pub const ARBITRATION_SECS: i64 = 7 * 24 * 60 * 60;

/// The gate's PDA that owns every escrow token account, `["holdback_authority"]`: a constant,
/// so that a settlement compares the escrow's authority instead of deriving an address.
pub mod authority {
    use anchor_lang::prelude::Pubkey;

    pub const SEED: &[u8] = b"holdback_authority";
    const DERIVED: ([u8; 32], u8) =
        anchor_lang::derive_program_address(&[SEED], &crate::ID.to_bytes());
    pub const ADDRESS: Pubkey = Pubkey::new_from_array(DERIVED.0);
    pub const BUMP: u8 = DERIVED.1;
}

/// Where a held share stands.
#[derive(AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldState {
    /// In the escrow, not disputed.
    Held,
    /// Disputed within the hold: frozen until the payee refunds, the arbiter decides or the
    /// arbitration period ends.
    Disputed,
    /// Paid to the payee after the hold.
    Released,
    /// Given back to the payer by the payee.
    Refunded,
    /// The arbiter upheld the dispute: given back to the payer.
    Upheld,
    /// The arbiter rejected the dispute: paid to the payee.
    Rejected,
    /// The arbitration period ended undecided: paid to the payee.
    Lapsed,
}

impl HoldState {
    /// Whether the share has left the escrow.
    pub fn is_paid_out(self) -> bool {
        !matches!(self, HoldState::Held | HoldState::Disputed)
    }

    /// Whether the share goes to the payer in this state (else, once paid out, the payee).
    pub fn to_payer(self) -> bool {
        matches!(self, HoldState::Refunded | HoldState::Upheld)
    }

    /// The outcome's name as the registry's response records it.
    pub fn name(self) -> &'static str {
        match self {
            HoldState::Held => "held",
            HoldState::Disputed => "disputed",
            HoldState::Released => "released",
            HoldState::Refunded => "refunded",
            HoldState::Upheld => "upheld",
            HoldState::Rejected => "rejected",
            HoldState::Lapsed => "lapsed",
        }
    }
}

/// The held share of a payment, the last field of its FeedbackLog.
#[derive(AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldShare {
    /// The escrow token account the share went to (authority [`authority::ADDRESS`]).
    pub escrow: Pubkey,
    /// The owner of the payee's token account the rest was paid to (the payee's recipient at
    /// settlement): a share that goes to the payee goes to a token account of the mint it
    /// owns, so that the payee closing, freezing or restricting the account paid cannot lock
    /// the share (anyone may create another token account for the recipient).
    pub recipient: Pubkey,
    /// The payer policy's arbiter at settlement (a key or an arbiter set; default: none).
    pub arbiter: Pubkey,
    /// The payer agent's other key at settlement besides the log's `payer_wallet` (its live
    /// owner when its agent wallet paid, its agent wallet when the owner paid; the default
    /// key when it has none): like the wallet that paid, it never counts as an arbiter.
    pub payer_other: Pubkey,
    /// The amount held, in the mint's units.
    pub held: u64,
    /// Unix seconds from which the share may be released.
    pub hold_until: i64,
    pub state: HoldState,
    /// Unix seconds the arbitration of a dispute ends (0 until disputed).
    pub arbitration_ends: i64,
    /// The dispute's feedback in the registry, which the outcome answers
    /// (`append_response`): its index among the payee's feedback and its seal hash.
    pub dispute_feedback_index: u64,
    pub dispute_seal_hash: [u8; 32],
}

impl HeldShare {
    /// The last second the payer may dispute the payment: the longer of the dispute window
    /// after settlement and the hold.
    pub fn dispute_window_ends(&self, created_at: i64, window: i64) -> i64 {
        created_at.saturating_add(window).max(self.hold_until)
    }

    /// A dispute at `now`: within the hold it freezes the share until `now` plus the
    /// arbitration period, and records the dispute's feedback; after it, the share is the
    /// payee's to release and the dispute changes nothing here. Whether it froze.
    pub fn dispute(&mut self, now: i64, feedback_index: u64, seal_hash: [u8; 32]) -> bool {
        if self.state != HoldState::Held || now >= self.hold_until {
            return false;
        }
        self.state = HoldState::Disputed;
        self.arbitration_ends = now.saturating_add(ARBITRATION_SECS);
        self.dispute_feedback_index = feedback_index;
        self.dispute_seal_hash = seal_hash;
        true
    }

    /// A release by anyone at `now`: after the hold, or after an undecided arbitration.
    pub fn release(&self, now: i64) -> Result<HoldState> {
        match self.state {
            HoldState::Held if now >= self.hold_until => Ok(HoldState::Released),
            HoldState::Held => err!(GateError::HoldbackNotDue),
            HoldState::Disputed if now >= self.arbitration_ends => Ok(HoldState::Lapsed),
            HoldState::Disputed => err!(GateError::HoldbackDisputed),
            _ => err!(GateError::HoldbackPaidOut),
        }
    }

    /// The payee's refund: any time before the share is paid out.
    pub fn refund(&self) -> Result<HoldState> {
        require!(!self.state.is_paid_out(), GateError::HoldbackPaidOut);
        Ok(HoldState::Refunded)
    }

    /// The arbiter's decision at `now`: only of a dispute, within its arbitration period.
    pub fn arbitrate(&self, uphold: bool, now: i64) -> Result<HoldState> {
        require_keys_neq!(
            self.arbiter,
            Pubkey::default(),
            GateError::HoldbackNoArbiter
        );
        match self.state {
            HoldState::Disputed if now < self.arbitration_ends => Ok(if uphold {
                HoldState::Upheld
            } else {
                HoldState::Rejected
            }),
            HoldState::Disputed => err!(GateError::ArbitrationClosed),
            HoldState::Held => err!(GateError::HoldbackNotDisputed),
            _ => err!(GateError::HoldbackPaidOut),
        }
    }

    /// Whether a move of the share now answers a dispute: it is disputed, so the outcome is
    /// attached to the dispute's feedback in the registry.
    pub fn ends_dispute(&self) -> bool {
        self.state == HoldState::Disputed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOLD_UNTIL: i64 = 1_000_000;

    fn share() -> HeldShare {
        HeldShare {
            escrow: Pubkey::new_unique(),
            recipient: Pubkey::new_unique(),
            payer_other: Pubkey::new_unique(),
            arbiter: Pubkey::new_unique(),
            held: 10,
            hold_until: HOLD_UNTIL,
            state: HoldState::Held,
            arbitration_ends: 0,
            dispute_feedback_index: 0,
            dispute_seal_hash: [0; 32],
        }
    }

    fn code<T>(r: Result<T>) -> Option<u32> {
        match r {
            Err(Error::AnchorError(e)) => Some(e.error_code_number),
            _ => None,
        }
    }

    #[test]
    fn the_authority_is_the_gates_pda() {
        assert_eq!(
            Pubkey::find_program_address(&[authority::SEED], &crate::ID),
            (authority::ADDRESS, authority::BUMP)
        );
    }

    #[test]
    fn an_undisputed_share_is_released_to_the_payee_from_the_end_of_the_hold() {
        let s = share();
        assert_eq!(
            code(s.release(HOLD_UNTIL - 1)),
            Some(GateError::HoldbackNotDue.into())
        );
        assert_eq!(s.release(HOLD_UNTIL).unwrap(), HoldState::Released);
        assert!(!HoldState::Released.to_payer());
        assert_eq!(
            code(s.arbitrate(true, 0)),
            Some(GateError::HoldbackNotDisputed.into())
        );
    }

    #[test]
    fn a_dispute_within_the_hold_freezes_the_share_for_the_arbitration_period() {
        let mut late = share();
        assert!(!late.dispute(HOLD_UNTIL, 3, [1; 32]));
        assert_eq!(late.state, HoldState::Held);
        let mut s = share();
        let now = HOLD_UNTIL - 10;
        assert!(s.dispute(now, 3, [1; 32]));
        assert_eq!(s.state, HoldState::Disputed);
        assert_eq!(s.arbitration_ends, now + ARBITRATION_SECS);
        assert_eq!(
            (s.dispute_feedback_index, s.dispute_seal_hash),
            (3, [1; 32])
        );
        assert!(!s.dispute(now, 4, [2; 32]), "disputed once");
        // Nobody releases it during the arbitration; from its end, anyone, to the payee.
        assert_eq!(
            code(s.release(HOLD_UNTIL)),
            Some(GateError::HoldbackDisputed.into())
        );
        let end = s.arbitration_ends;
        assert_eq!(
            code(s.release(end - 1)),
            Some(GateError::HoldbackDisputed.into())
        );
        assert_eq!(s.release(end).unwrap(), HoldState::Lapsed);
        // The arbiter decides within the period only.
        assert_eq!(s.arbitrate(true, end - 1).unwrap(), HoldState::Upheld);
        assert_eq!(s.arbitrate(false, end - 1).unwrap(), HoldState::Rejected);
        assert_eq!(
            code(s.arbitrate(true, end)),
            Some(GateError::ArbitrationClosed.into())
        );
        assert!(s.ends_dispute());
    }

    #[test]
    fn the_payee_refunds_until_the_share_is_paid_out() {
        let mut s = share();
        assert_eq!(s.refund().unwrap(), HoldState::Refunded);
        s.dispute(0, 0, [0; 32]);
        assert_eq!(s.refund().unwrap(), HoldState::Refunded);
        assert!(HoldState::Refunded.to_payer() && HoldState::Upheld.to_payer());
        for done in [
            HoldState::Released,
            HoldState::Refunded,
            HoldState::Upheld,
            HoldState::Rejected,
            HoldState::Lapsed,
        ] {
            s.state = done;
            assert!(done.is_paid_out());
            for r in [s.refund(), s.release(i64::MAX), s.arbitrate(true, 0)] {
                assert_eq!(code(r), Some(GateError::HoldbackPaidOut.into()));
            }
        }
    }

    #[test]
    fn without_an_arbiter_nobody_arbitrates() {
        let mut s = share();
        s.arbiter = Pubkey::default();
        s.dispute(0, 0, [0; 32]);
        assert_eq!(
            code(s.arbitrate(false, 1)),
            Some(GateError::HoldbackNoArbiter.into())
        );
    }

    #[test]
    fn the_dispute_window_of_a_held_payment_is_the_longer_of_the_window_and_the_hold() {
        let s = share();
        assert_eq!(s.dispute_window_ends(0, 100), HOLD_UNTIL);
        assert_eq!(s.dispute_window_ends(HOLD_UNTIL, 100), HOLD_UNTIL + 100);
    }
}
