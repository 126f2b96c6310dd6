//! The holdback as clients meet it (docs/holdback.md): the terms a settlement carries, and a
//! held payment's share as its log records it.

use crate::json::{Amount, Key};
pub use gate::holdback::{HeldShare, HoldState, ARBITRATION_SECS};
use gate::state::FeedbackLog;
pub use policy_vault::engine::Holdback;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
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
    /// Unix seconds the arbitration of its dispute ends (0 until disputed).
    pub arbitration_ends: i64,
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
            arbitration_ends: h.arbitration_ends,
        })
    }

    /// Whether anyone may release the share at unix time `now` (`release_holdback`): its
    /// hold is over, or the arbitration of its dispute ended undecided.
    pub fn releasable_at(&self, now: i64) -> bool {
        match self.state {
            HoldState::Held => now >= self.hold_until,
            HoldState::Disputed => now >= self.arbitration_ends,
            _ => false,
        }
    }
}

/// Where a held share stands, as receipts name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HoldStatus {
    /// In the escrow, not disputed: released to the payee from `holdUntil`.
    Held,
    /// Disputed within the hold: frozen until the payee refunds, the arbiter decides or the
    /// arbitration ends.
    Disputed,
    /// Paid to the payee after the hold.
    Released,
    /// Given back to the payer by the payee.
    Refunded,
    /// The arbiter upheld the dispute: given back to the payer.
    Upheld,
    /// The arbiter rejected the dispute: paid to the payee.
    Rejected,
    /// The arbitration ended undecided: paid to the payee.
    Lapsed,
}

impl From<HoldState> for HoldStatus {
    fn from(s: HoldState) -> HoldStatus {
        match s {
            HoldState::Held => HoldStatus::Held,
            HoldState::Disputed => HoldStatus::Disputed,
            HoldState::Released => HoldStatus::Released,
            HoldState::Refunded => HoldStatus::Refunded,
            HoldState::Upheld => HoldStatus::Upheld,
            HoldState::Rejected => HoldStatus::Rejected,
            HoldState::Lapsed => HoldStatus::Lapsed,
        }
    }
}

/// A payment's held share as its receipt shows it (/receipt, GET /payments, the MCP tools,
/// the dashboard).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HoldbackView {
    /// The amount held back, in the mint's units.
    pub held: Amount,
    /// The payee's escrow it waits in.
    pub escrow: Key,
    /// Whom a share paid to the payee goes to (a token account of the mint it owns).
    pub recipient: Key,
    /// Who decides a dispute (a key or an arbiter set); null for none.
    pub arbiter: Option<Key>,
    /// Unix seconds from which anyone may release it to the payee.
    pub hold_until: i64,
    /// Where it stands: held, disputed, released, refunded, upheld, rejected or lapsed.
    pub state: HoldStatus,
    /// Unix seconds the arbitration of its dispute ends (null until disputed).
    pub arbitration_ends: Option<i64>,
}

impl HoldbackView {
    pub fn of(h: &HeldShare) -> HoldbackView {
        HoldbackView {
            held: Amount(h.held),
            escrow: Key(h.escrow),
            recipient: Key(h.recipient),
            arbiter: Key::opt(&h.arbiter),
            hold_until: h.hold_until,
            state: h.state.into(),
            arbitration_ends: (h.arbitration_ends != 0).then_some(h.arbitration_ends),
        }
    }

    /// The share of a payment log's account `data`; `None` for a log that held nothing, or
    /// data that is not a payment log.
    pub fn from_log_data(data: &[u8]) -> Option<HoldbackView> {
        use anchor_lang::Discriminator;
        if !data.starts_with(FeedbackLog::DISCRIMINATOR) {
            return None;
        }
        FeedbackLog::held_share_in(data).map(|h| HoldbackView::of(&h))
    }
}

impl HeldPayment {
    /// Where a payout of the share goes, as the SDK sends it: the associated token account of
    /// the payer's wallet (`to_payer`: a refund, an upheld dispute) or of the recipient (a
    /// release, a rejected dispute), in the escrow's token program; and the instruction that
    /// creates it if it is missing, paid by `rent_payer` (a closed account would fail the
    /// payout, and the chain takes any of the owner's token accounts of the mint).
    pub fn payout_account(
        &self,
        to_payer: bool,
        rent_payer: &Pubkey,
    ) -> Result<(Pubkey, solana_sdk::instruction::Instruction), crate::ClientError> {
        let program = crate::token::TokenProgram::of_owner(&self.token_program, "token_program")?;
        let owner = if to_payer {
            self.payer_wallet
        } else {
            self.recipient
        };
        let create = anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent(
            rent_payer,
            &owner,
            &self.mint,
            &program.id(),
        );
        Ok((program.associated_account(&owner, &self.mint), create))
    }
}
