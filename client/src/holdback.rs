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

    /// The share of a payment log's account `data`; `None` for a log that held nothing.
    pub fn from_log_data(data: &[u8]) -> Option<HoldbackView> {
        FeedbackLog::held_share_in(data).map(|h| HoldbackView::of(&h))
    }
}

/// Whose held payments [`list`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldBy {
    /// Paid to this payee agent.
    Payee(Pubkey),
    /// Paid by this wallet (a payer agent's owner or agent wallet: the settlement's transfer
    /// authority, which the log records).
    PayerWallet(Pubkey),
}

/// A held payment found on chain: its log's address, its receipt (with the share's view) and
/// what the moves of its share need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldListing {
    pub log: Pubkey,
    pub receipt: crate::receipts::Receipt,
    pub payment: HeldPayment,
}

/// The held payments whose logs are open (of every facilitator), newest first: one
/// `getProgramAccounts` of the gate's held logs (395 bytes) naming `by`, and one read per
/// mint for its token program. Logs close once their share is paid out and their dispute
/// window is over; what became of a closed one is its facilitator's receipt.
pub async fn list(
    rpc: &solana_rpc_client::nonblocking::rpc_client::RpcClient,
    gate_program: &Pubkey,
    by: HeldBy,
) -> Result<Vec<HeldListing>, crate::ClientError> {
    use anchor_lang::Discriminator;
    use solana_rpc_client_api::filter::{Memcmp, RpcFilterType};
    let (offset, key) = match by {
        HeldBy::Payee(k) => (72, k),
        HeldBy::PayerWallet(k) => (104, k),
    };
    let filters = vec![
        RpcFilterType::DataSize(FeedbackLog::space(true) as u64),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            0,
            FeedbackLog::DISCRIMINATOR.to_vec(),
        )),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(offset, key.to_bytes().to_vec())),
    ];
    let found = crate::chain::program_accounts(rpc, gate_program, filters).await?;
    let mut programs: Vec<(Pubkey, Pubkey)> = Vec::new();
    let mut out = Vec::with_capacity(found.len());
    for (log, acc) in found {
        let (Some(receipt), Some(mut payment)) = (
            crate::receipts::Receipt::from_account_data(&acc.data),
            HeldPayment::from_log_data(&acc.data, Pubkey::default()),
        ) else {
            continue;
        };
        payment.token_program = match programs.iter().find(|(m, _)| *m == payment.mint) {
            Some((_, p)) => *p,
            None => {
                let Some(m) = crate::chain::mint(rpc, "mint", &payment.mint).await? else {
                    continue;
                };
                programs.push((payment.mint, m.token_program.id()));
                m.token_program.id()
            }
        };
        out.push(HeldListing {
            log,
            receipt,
            payment,
        });
    }
    out.sort_by_key(|l| std::cmp::Reverse((l.receipt.created_at, l.receipt.slot)));
    Ok(out)
}
