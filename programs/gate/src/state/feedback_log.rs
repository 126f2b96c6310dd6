use super::DISPUTE_WINDOW_SECS;
use crate::holdback::HeldShare;
use anchor_lang::prelude::*;
use anchor_lang::Discriminator;

/// The receipt of one settled payment, keyed by its payment id hash: init-only, so a payment
/// id settles once while its log exists; closable by anyone (`close_payment_records`) once
/// the payment can neither be disputed nor settled again, its rent back to its facilitator.
///
/// It holds only what the dispute (facilitator, payment, payee, payer wallet, created_at),
/// the close (deadline) and a receipt (mint, amount, decimals, score, slot) need; the payer
/// agent, the feedback's tags and the settlement's signature are in the settlement
/// transaction (see docs/settlement.md, "Receipts").
///
/// Offsets: 8 facilitator, 40 payment_id_hash, 72 payee_asset, 104 payer_wallet, 136 mint,
/// 168 amount, 176 value_decimals, 177 score, 178 slot, 186 created_at, 194 deadline; a held
/// payment's log goes on with its share ([`HeldShare`], at [`FeedbackLog::HELD_AT`]: 202
/// escrow, 234 recipient, 266 arbiter, 298 payer_other, 330 held, 338 hold_until, 346 state,
/// 347 arbitration_ends, 355 the dispute's feedback index, 363 its seal hash), which Anchor's
/// reading of the log leaves aside. Sizes ([`FeedbackLog::space`]): 202 bytes, 395 held.
#[account]
#[derive(InitSpace, Debug)]
pub struct FeedbackLog {
    /// The facilitator that settled the payment and paid this account's rent: the only
    /// account its rent may return to.
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    /// The settlement's transfer authority (the payer's wallet): the only key that may
    /// dispute the payment.
    pub payer_wallet: Pubkey,
    pub mint: Pubkey,
    /// What moved, in the mint's units (the feedback's value: emit_feedback holds them equal).
    pub amount: u64,
    pub value_decimals: u8,
    pub score: u8,
    pub slot: u64,
    pub created_at: i64,
    /// The payment's deadline (the strict gate's argument): the settlement landed no later,
    /// and none of this payment id can land after it.
    pub deadline: i64,
}

impl FeedbackLog {
    /// Where a held payment's share starts in its log's data: right after the log, so that a
    /// payment without one keeps the log it always had.
    pub const HELD_AT: usize = 8 + FeedbackLog::INIT_SPACE;

    /// The account's size, with a held share or without.
    pub fn space(held: bool) -> usize {
        FeedbackLog::HELD_AT + if held { HeldShare::INIT_SPACE } else { 0 }
    }

    /// The held share in a log's `data`, when the payment held one back.
    pub fn held_share_in(data: &[u8]) -> Option<HeldShare> {
        let bytes = data.get(FeedbackLog::HELD_AT..FeedbackLog::space(true))?;
        HeldShare::try_from_slice(bytes).ok()
    }

    /// Writes `share` into a held payment's log `data`.
    pub fn write_held_share(data: &mut [u8], share: &HeldShare) -> Result<()> {
        let mut at = data
            .get_mut(FeedbackLog::HELD_AT..FeedbackLog::space(true))
            .ok_or(ErrorCode::AccountDidNotSerialize)?;
        share.serialize(&mut at)?;
        Ok(())
    }

    /// The last second the payer may dispute the payment: the dispute window after
    /// settlement, or a held share's hold when that is longer.
    pub fn dispute_window_ends(&self, held: Option<&HeldShare>) -> i64 {
        match held {
            Some(h) => h.dispute_window_ends(self.created_at, DISPUTE_WINDOW_SECS),
            None => self.created_at.saturating_add(DISPUTE_WINDOW_SECS),
        }
    }

    /// Whether this is the log of `facilitator`'s payment `payment_id_hash`. The gate
    /// creates a log only at the canonical PDA of the two it stores, so for an account the
    /// gate owns this is the seeds check without hashing.
    pub fn is_for(&self, facilitator: &Pubkey, payment_id_hash: &[u8; 32]) -> bool {
        self.facilitator == *facilitator && self.payment_id_hash == *payment_id_hash
    }
}

/// What closing a payment's log needs of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClosableLog {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    /// Unix seconds after which the log may close: past both the payment's deadline (no
    /// settlement of its id can land any more) and its dispute window.
    pub closes_after: i64,
    /// Whether a held share is still in the escrow: the log then stays, whatever the time.
    pub holds_share: bool,
}

impl ClosableLog {
    /// Reads a gate-owned account's data as a payment log; `None` for anything else
    /// (another of the gate's accounts, a closed account).
    pub fn read(data: &[u8]) -> Option<ClosableLog> {
        if data.get(..8)? != FeedbackLog::DISCRIMINATOR {
            return None;
        }
        let log = FeedbackLog::try_deserialize(&mut &data[..]).ok()?;
        let held = FeedbackLog::held_share_in(data);
        Some(ClosableLog {
            facilitator: log.facilitator,
            payment_id_hash: log.payment_id_hash,
            closes_after: log.dispute_window_ends(held.as_ref()).max(log.deadline),
            holds_share: held.is_some_and(|h| !h.state.is_paid_out()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::AccountSerialize;

    fn log(created_at: i64, deadline: i64) -> FeedbackLog {
        FeedbackLog {
            facilitator: Pubkey::new_unique(),
            payment_id_hash: [7; 32],
            payee_asset: Pubkey::new_unique(),
            payer_wallet: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            amount: 1,
            value_decimals: 6,
            score: 90,
            slot: 3,
            created_at,
            deadline,
        }
    }

    #[test]
    fn a_log_closes_after_its_window_or_its_deadline_whichever_is_later() {
        let mut data = Vec::new();
        let l = log(1_000, 1_060);
        l.try_serialize(&mut data).unwrap();
        assert_eq!(data.len(), 202);
        let c = ClosableLog::read(&data).unwrap();
        assert!(!c.holds_share);
        assert_eq!(c.facilitator, l.facilitator);
        assert_eq!(c.closes_after, 1_000 + DISPUTE_WINDOW_SECS);
        let mut data = Vec::new();
        log(1_000, 1_000 + DISPUTE_WINDOW_SECS + 5)
            .try_serialize(&mut data)
            .unwrap();
        let c = ClosableLog::read(&data).unwrap();
        assert_eq!(c.closes_after, 1_000 + DISPUTE_WINDOW_SECS + 5);
    }

    #[test]
    fn a_held_log_stays_until_its_share_is_paid_out_and_past_its_hold() {
        use crate::holdback::HoldState;
        let l = log(1_000, 1_060);
        let hold_until = 1_000 + DISPUTE_WINDOW_SECS + 50;
        let mut share = HeldShare {
            escrow: Pubkey::new_unique(),
            recipient: Pubkey::new_unique(),
            payer_other: Pubkey::new_unique(),
            arbiter: Pubkey::default(),
            held: 5,
            hold_until,
            state: HoldState::Held,
            arbitration_ends: 0,
            dispute_feedback_index: 0,
            dispute_seal_hash: [0; 32],
        };
        let mut data = Vec::new();
        l.try_serialize(&mut data).unwrap();
        assert_eq!(data.len(), FeedbackLog::space(false));
        assert_eq!(FeedbackLog::held_share_in(&data), None);
        data.resize(FeedbackLog::space(true), 0);
        assert_eq!(FeedbackLog::space(true), 395);
        FeedbackLog::write_held_share(&mut data, &share).unwrap();
        assert_eq!(FeedbackLog::held_share_in(&data), Some(share));
        let c = ClosableLog::read(&data).unwrap();
        assert!(c.holds_share);
        assert_eq!(c.closes_after, hold_until);
        share.state = HoldState::Released;
        FeedbackLog::write_held_share(&mut data, &share).unwrap();
        assert!(!ClosableLog::read(&data).unwrap().holds_share);
        // The log itself reads as it always did.
        assert_eq!(
            FeedbackLog::try_deserialize(&mut &data[..]).unwrap().amount,
            l.amount
        );
    }

    #[test]
    fn nothing_else_reads_as_a_log() {
        let mut data = Vec::new();
        log(1_000, 1_060).try_serialize(&mut data).unwrap();
        assert_eq!(ClosableLog::read(&data[..100]), None);
        assert_eq!(ClosableLog::read(&[0; 300]), None);
        assert_eq!(ClosableLog::read(&[]), None);
    }
}
