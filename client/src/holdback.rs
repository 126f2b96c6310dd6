//! The holdback as clients meet it (docs/holdback.md): the terms a settlement carries, and a
//! held payment's share as its log records it.

pub use gate::holdback::{HeldShare, HoldState, ARBITRATION_SECS};
use gate::state::FeedbackLog;
pub use policy_vault::engine::Holdback;
use solana_sdk::pubkey::Pubkey;

/// The holdback a settlement carries under a payer policy with a holdback schedule: the
/// payee tier its terms were quoted for and, when the term holds back a share of this amount,
/// that share and the escrow it goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HoldbackQuote {
    /// 0..=4, or 5 for a payee without engine stats.
    pub tier: u8,
    /// The share held back (0: nothing at this amount; the settlement has one transfer).
    pub held: u64,
    /// The payee's escrow in the payment's mint (`Pdas::holdback_escrow`).
    pub escrow: Pubkey,
}

impl HoldbackQuote {
    /// The quote of a decision's holdback (`Holdback::from_wire` of the gate's return data),
    /// paid into `escrow`.
    pub fn of(h: &Holdback, escrow: Pubkey) -> Self {
        HoldbackQuote {
            tier: h.tier,
            held: h.held,
            escrow,
        }
    }
}

/// A held payment, as the moves of its share need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldPayment {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    pub payer_wallet: Pubkey,
    pub mint: Pubkey,
    /// The escrow's token program.
    pub token_program: Pubkey,
    pub escrow: Pubkey,
    /// The payee's recipient at settlement: a share paid to the payee goes to a token
    /// account of the mint it owns.
    pub recipient: Pubkey,
    pub arbiter: Pubkey,
    pub held: u64,
    pub hold_until: i64,
    pub state: HoldState,
    /// Whether the share is disputed (a move then answers the dispute's feedback).
    pub disputed: bool,
}

impl HeldPayment {
    /// The held payment a payment log's account `data` records; `None` for anything else (a
    /// payment that held nothing among them). `token_program` is the escrow account's owner.
    pub fn from_log_data(data: &[u8], token_program: Pubkey) -> Option<HeldPayment> {
        use anchor_lang::AccountDeserialize;
        let log = FeedbackLog::try_deserialize(&mut &data[..]).ok()?;
        let h = FeedbackLog::held_share_in(data)?;
        Some(HeldPayment {
            facilitator: log.facilitator,
            payment_id_hash: log.payment_id_hash,
            payee_asset: log.payee_asset,
            payer_wallet: log.payer_wallet,
            mint: log.mint,
            token_program,
            escrow: h.escrow,
            recipient: h.recipient,
            arbiter: h.arbiter,
            held: h.held,
            hold_until: h.hold_until,
            state: h.state,
            disputed: h.state == HoldState::Disputed,
        })
    }
}
