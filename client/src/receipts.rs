//! A payment's receipt: what its feedback log holds, read from the log while it exists and,
//! once the log is closed, from the chain's history of the log's address (the settlement
//! transaction that created it, the dispute that named it, the close that ended it).
//!
//! A receipt carries two feedbacks: the settlement's (`score`, written into the log) and,
//! when the payer disputed the payment, the dispute's ([`Disputed`]: score 0, who, when, the
//! reason's hash), read from the dispute record while it exists and from the dispute
//! transaction once closed. The two sources give the same fields.
//!
//! A facilitator keeps its own copy of closed receipts (its record store); this is what
//! anyone can rebuild from the chain alone, as long as the RPC node keeps that history.

use crate::chain;
use crate::decode::{DisputeRecord, FeedbackLog};
use crate::error::ClientError;
use crate::holdback::HoldbackView;
use crate::json::{Amount, Hash, Key};
use crate::pda::Pdas;
use anchor_lang::prelude::Pubkey;
use anchor_lang::{AccountDeserialize, AnchorDeserialize, Discriminator};
use gate::settlement::{parse_gate_strict, parse_transfer_checked, StrictPayment};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client::rpc_client::GetConfirmedSignaturesForAddress2Config;
use solana_rpc_client_api::config::RpcTransactionConfig;
use solana_rpc_client_api::request::RpcRequest;
use solana_sdk::instruction::{AccountMeta, Instruction};
use solana_sdk::signature::Signature;
use solana_sdk::transaction::VersionedTransaction;
use solana_transaction_status_client_types::option_serializer::OptionSerializer;
use solana_transaction_status_client_types::{
    EncodedConfirmedTransactionWithStatusMeta, UiTransactionEncoding,
};
use std::str::FromStr;

/// What a payment's feedback log held (or, for a closed log, what its settlement wrote).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub payment_id_hash: [u8; 32],
    pub facilitator: Pubkey,
    pub payee_asset: Pubkey,
    /// The payer agent: not in the log (the settlement names it); known from the settlement
    /// transaction or the facilitator's own record.
    pub payer_asset: Option<Pubkey>,
    /// The settlement's transfer authority.
    pub payer_wallet: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    pub value_decimals: u8,
    /// The settlement's feedback score, as the log holds it. A dispute does not change it: the
    /// dispute's own feedback is [`Receipt::dispute`].
    pub score: u8,
    pub slot: u64,
    /// Unix seconds (the block time of the settlement).
    pub created_at: i64,
    /// The payment's deadline; `None` for a log written before payments carried one.
    pub deadline: Option<i64>,
    /// The settlement transaction, when known (from history or the facilitator's record).
    pub signature: Option<Signature>,
    /// The payer's dispute of the payment, when it was disputed (and its record or
    /// transaction could be read).
    pub dispute: Option<Disputed>,
    /// The share the payer's policy held back, as the log holds it (docs/holdback.md).
    pub holdback: Option<HoldbackView>,
}

/// A payment's dispute as its receipt shows it: the feedback the dispute gave the payee and
/// what the gate's DisputeRecord holds of it. The record and the dispute transaction give
/// the same fields, so the receipt reads the same before and after the records close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disputed {
    /// The dispute feedback's score: always `gate::instructions::DISPUTE_SCORE` (0), tag
    /// `dispute`.
    pub score: u8,
    /// The payer's wallet that signed the dispute (the settlement's transfer authority).
    pub disputed_by: Pubkey,
    /// The dispute's reason hash (`trust-gate dispute --reason TEXT` records the text's
    /// sha256; the text itself is not on chain).
    pub reason_hash: [u8; 32],
    /// Unix seconds: when the dispute landed (the cluster's clock).
    pub created_at: i64,
}

impl Disputed {
    /// What a DisputeRecord holds.
    pub fn from_record(r: &DisputeRecord) -> Disputed {
        Disputed {
            score: gate::instructions::DISPUTE_SCORE,
            disputed_by: r.disputed_by,
            reason_hash: r.reason_hash,
            created_at: r.created_at,
        }
    }

    /// A gate-owned account's data as a dispute record; `None` for anything else.
    pub fn from_record_data(data: &[u8]) -> Option<Disputed> {
        if !data.starts_with(DisputeRecord::DISCRIMINATOR) {
            return None;
        }
        DisputeRecord::try_deserialize(&mut &data[..])
            .ok()
            .map(|r| Disputed::from_record(&r))
    }

    /// Its fields as the receipt shows them.
    pub fn view(&self) -> DisputeView {
        DisputeView {
            score: self.score,
            disputed_by: Key(self.disputed_by),
            reason_hash: Hash(self.reason_hash),
            created_at: self.created_at,
        }
    }
}

impl Receipt {
    /// From a live log of the current layout.
    pub fn from_log(log: &FeedbackLog) -> Receipt {
        Receipt {
            payment_id_hash: log.payment_id_hash,
            facilitator: log.facilitator,
            payee_asset: log.payee_asset,
            payer_asset: None,
            payer_wallet: log.payer_wallet,
            mint: log.mint,
            amount: log.amount,
            value_decimals: log.value_decimals,
            score: log.score,
            slot: log.slot,
            created_at: log.created_at,
            deadline: Some(log.deadline),
            signature: None,
            dispute: None,
            holdback: None,
        }
    }

    /// A gate-owned account's data as a payment log, its held share with it; `None` for
    /// anything else.
    pub fn from_account_data(data: &[u8]) -> Option<Receipt> {
        if !data.starts_with(FeedbackLog::DISCRIMINATOR) {
            return None;
        }
        let log = FeedbackLog::try_deserialize(&mut &data[..]).ok()?;
        Some(Receipt {
            holdback: HoldbackView::from_log_data(data),
            ..Receipt::from_log(&log)
        })
    }

    /// The receipt's fields as /receipt and the MCP tools show them. `score` is the
    /// settlement's feedback; `dispute` the dispute's (null when not disputed).
    pub fn view(&self) -> ReceiptView {
        ReceiptView {
            payment_id_hash: Hash(self.payment_id_hash),
            facilitator: Key(self.facilitator),
            payee: Key(self.payee_asset),
            payer: self.payer_asset.map(Key),
            payer_wallet: Key(self.payer_wallet),
            mint: Key(self.mint),
            value: Amount(self.amount),
            value_decimals: self.value_decimals,
            score: self.score,
            emitted_at_slot: self.slot,
            created_at: self.created_at,
            deadline: self.deadline,
            transaction: self.signature.map(|s| s.to_string()),
            dispute: self.dispute.as_ref().map(Disputed::view),
            holdback: self.holdback.clone(),
            settled_atomically: true,
        }
    }

    /// [`Receipt::view`] as JSON (a facilitator's stored record).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.view()).expect("a receipt view serializes")
    }

    /// Reads back what [`Receipt::to_json`] wrote (a facilitator's stored record); a record
    /// kept before receipts carried `dispute` reads without one.
    pub fn from_json(v: &Value) -> Option<Receipt> {
        let r = ReceiptView::deserialize(v).ok()?;
        Some(Receipt {
            payment_id_hash: r.payment_id_hash.0,
            facilitator: r.facilitator.0,
            payee_asset: r.payee.0,
            payer_asset: r.payer.map(|k| k.0),
            payer_wallet: r.payer_wallet.0,
            mint: r.mint.0,
            amount: r.value.0,
            value_decimals: r.value_decimals,
            score: r.score,
            slot: r.emitted_at_slot,
            created_at: r.created_at,
            deadline: r.deadline,
            signature: match r.transaction {
                None => None,
                Some(s) => Some(Signature::from_str(&s).ok()?),
            },
            dispute: r.dispute.map(|d| Disputed {
                score: d.score,
                disputed_by: d.disputed_by.0,
                reason_hash: d.reason_hash.0,
                created_at: d.created_at,
            }),
            holdback: r.holdback,
        })
    }
}

/// A receipt as /receipt, the MCP tools and a facilitator's records show it (camelCase;
/// amounts as strings, since u64 exceeds JSON's safe integers).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptView {
    /// The payment id hash.
    pub payment_id_hash: Hash,
    /// The facilitator that settled it.
    pub facilitator: Key,
    /// The payee agent.
    pub payee: Key,
    /// The payer agent, when known (from the settlement transaction or the facilitator's
    /// record).
    pub payer: Option<Key>,
    /// The settlement's transfer authority.
    pub payer_wallet: Key,
    /// The token mint.
    pub mint: Key,
    /// The amount paid.
    pub value: Amount,
    /// The mint's decimals.
    pub value_decimals: u8,
    /// The score of the settlement's feedback to the payee; a dispute does not change it
    /// (the dispute's own feedback is `dispute`).
    pub score: u8,
    /// Slot of the settlement.
    pub emitted_at_slot: u64,
    /// Unix seconds of the settlement.
    pub created_at: i64,
    /// Unix seconds of the payment's deadline (null for a log written before payments
    /// carried one).
    pub deadline: Option<i64>,
    /// The settlement transaction's signature, when known.
    pub transaction: Option<String>,
    /// The payer's dispute of the payment: the dispute's feedback (null when not disputed, or
    /// when its details are unknown: a facilitator's record kept before receipts carried
    /// them, whose `disputed` still says whether it was).
    #[serde(default)]
    pub dispute: Option<DisputeView>,
    /// The share the payer's policy held back and where it stands (null when nothing was
    /// held, or for a closed log of which no record was kept: the settlement transaction
    /// does not say what became of the share).
    #[serde(default)]
    pub holdback: Option<HoldbackView>,
    /// Always true: every log the gate writes is of a settlement.
    pub settled_atomically: bool,
}

/// A payment's dispute as a receipt shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisputeView {
    /// The dispute feedback's score to the payee: always 0 (tag `dispute`).
    pub score: u8,
    /// The payer's wallet that signed the dispute.
    pub disputed_by: Key,
    /// The dispute's reason hash (`trust-gate dispute --reason TEXT` records the text's
    /// sha256; the text is not on chain).
    pub reason_hash: Hash,
    /// Unix seconds when the dispute landed.
    pub created_at: i64,
}

/// A payment's records on chain now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Live {
    /// The log, when it exists, with its dispute record's fields when there is one.
    pub receipt: Option<Receipt>,
    /// Whether its dispute record exists.
    pub disputed: bool,
}

/// Reads payment `hash`'s log and dispute record of `facilitator` (one RPC call).
pub async fn live(
    rpc: &RpcClient,
    pda: &Pdas,
    facilitator: &Pubkey,
    hash: &[u8; 32],
) -> Result<Live, ClientError> {
    let keys = [
        pda.feedback_log(facilitator, hash),
        pda.dispute(facilitator, hash),
    ];
    let found = chain::accounts(rpc, &keys).await?;
    let gate = pda.ids.gate;
    let owned = |i: usize| found[i].as_ref().filter(|a| a.owner == gate);
    let mut receipt = owned(0).and_then(|a| Receipt::from_account_data(&a.data));
    if let Some(r) = &mut receipt {
        r.dispute = owned(1).and_then(|a| Disputed::from_record_data(&a.data));
    }
    Ok(Live {
        receipt,
        disputed: owned(1).is_some(),
    })
}

/// What the chain's history tells of a payment whose log is gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct History {
    /// What the settlement wrote into the log, its signature included, and the dispute
    /// when one landed.
    pub receipt: Receipt,
    /// The transaction that closed the log, when found.
    pub closed_by: Option<Signature>,
    /// Whether a dispute of the payment landed.
    pub disputed: bool,
}

/// At most this many pages of 1 000 signatures are read for one address: a log's address
/// normally has two or three (settlement, dispute, close); anything far beyond is noise
/// someone paid for, and the settlement is the oldest.
const MAX_HISTORY_PAGES: usize = 10;

/// The successful transactions that named `address`, oldest first.
pub async fn signatures_of(
    rpc: &RpcClient,
    address: &Pubkey,
) -> Result<Vec<Signature>, ClientError> {
    let mut all = Vec::new();
    let mut before = None;
    for _ in 0..MAX_HISTORY_PAGES {
        let page = rpc
            .get_signatures_for_address_with_config(
                address,
                GetConfirmedSignaturesForAddress2Config {
                    before,
                    until: None,
                    limit: None,
                    commitment: Some(CommitmentConfig::confirmed()),
                },
            )
            .await?;
        let Some(last) = page.last() else { break };
        before = Signature::from_str(&last.signature).ok();
        let full = page.len() >= 1000;
        all.extend(
            page.iter()
                .filter(|s| s.err.is_none())
                .filter_map(|s| Signature::from_str(&s.signature).ok()),
        );
        if !full || before.is_none() {
            break;
        }
    }
    all.reverse();
    Ok(all)
}

/// A landed transaction's instructions with their accounts resolved (address lookup tables
/// included, from the transaction's metadata), its slot and block time.
pub struct Landed {
    pub instructions: Vec<Instruction>,
    pub slot: u64,
    pub block_time: Option<i64>,
    /// The fee it paid, lamports (signatures and priority).
    pub fee: u64,
    pub signatures: usize,
}

/// Reads transaction `signature` (`None` when the node does not have it).
pub async fn transaction(
    rpc: &RpcClient,
    signature: &Signature,
) -> Result<Option<Landed>, ClientError> {
    // A signature the node does not have is `null`: asked for as an Option, not an error.
    let config = RpcTransactionConfig {
        encoding: Some(UiTransactionEncoding::Base64),
        commitment: Some(CommitmentConfig::confirmed()),
        max_supported_transaction_version: Some(0),
    };
    let got: Option<EncodedConfirmedTransactionWithStatusMeta> = rpc
        .send(
            RpcRequest::GetTransaction,
            serde_json::json!([signature.to_string(), config]),
        )
        .await?;
    let Some(got) = got else {
        return Ok(None);
    };
    let Some(tx) = got.transaction.transaction.decode() else {
        return Ok(None);
    };
    let mut keys = tx.message.static_account_keys().to_vec();
    let fee = got.transaction.meta.as_ref().map_or(0, |m| m.fee);
    if let Some(meta) = &got.transaction.meta {
        if let OptionSerializer::Some(loaded) = &meta.loaded_addresses {
            for k in loaded.writable.iter().chain(&loaded.readonly) {
                keys.push(Pubkey::from_str(k).map_err(|e| ClientError::Decode {
                    what: "loaded address".into(),
                    reason: e.to_string(),
                })?);
            }
        }
    }
    Ok(Some(Landed {
        instructions: resolve(&tx, &keys),
        slot: got.slot,
        block_time: got.block_time,
        fee,
        signatures: tx.signatures.len(),
    }))
}

/// The top-level instructions of `tx` with account keys from `keys` (static then loaded).
fn resolve(tx: &VersionedTransaction, keys: &[Pubkey]) -> Vec<Instruction> {
    let signers = usize::from(tx.message.header().num_required_signatures);
    let key = |i: u8| keys.get(usize::from(i)).copied().unwrap_or_default();
    tx.message
        .instructions()
        .iter()
        .map(|ix| Instruction {
            program_id: key(ix.program_id_index),
            accounts: ix
                .accounts
                .iter()
                .map(|&i| AccountMeta {
                    pubkey: key(i),
                    is_signer: usize::from(i) < signers,
                    is_writable: false,
                })
                .collect(),
            data: ix.data.clone(),
        })
        .collect()
}

/// The receipt a settlement transaction wrote for payment `hash` of `facilitator`: its
/// emit_feedback of that payment, and the strict gate and transfer before it.
pub fn settled_in(
    gate_program: &Pubkey,
    landed: &Landed,
    facilitator: &Pubkey,
    hash: &[u8; 32],
) -> Option<Receipt> {
    let ixs = &landed.instructions;
    let at = ixs.iter().position(|ix| {
        feedback_args(gate_program, ix)
            .is_some_and(|a| a.payment_id_hash == *hash && a.facilitator == *facilitator)
    })?;
    let feedback = feedback_args(gate_program, &ixs[at])?;
    // The strict gate two instructions back, or three when a held share's transfer is
    // between; its first transfer follows it.
    let (start, StrictPayment { args, deadline, .. }) = [2, 3].into_iter().find_map(|back| {
        let start = at.checked_sub(back)?;
        Some((start, parse_gate_strict(ixs.get(start)?)?))
    })?;
    let transfer = parse_transfer_checked(ixs.get(start + 1)?)?;
    Some(Receipt {
        payment_id_hash: *hash,
        facilitator: *facilitator,
        payee_asset: feedback.payee_asset,
        payer_asset: Some(args.payer_asset),
        payer_wallet: transfer.authority,
        mint: args.mint,
        amount: args.amount,
        value_decimals: transfer.decimals,
        score: feedback.score,
        slot: landed.slot,
        created_at: landed.block_time.unwrap_or_default(),
        deadline: Some(deadline),
        signature: None,
        dispute: None,
        // What became of a share is in the closed log only, not in the settlement.
        holdback: None,
    })
}

/// The dispute a transaction made of payment `hash` of `facilitator`: its dispute_payment
/// of that payment (the arguments name it; the payer's wallet is its second account, the
/// time the block's).
pub fn disputed_in(
    gate_program: &Pubkey,
    landed: &Landed,
    facilitator: &Pubkey,
    hash: &[u8; 32],
) -> Option<Disputed> {
    let disc = gate::instruction::DisputePayment::DISCRIMINATOR;
    landed.instructions.iter().find_map(|ix| {
        if !is_gate_ix(gate_program, ix, disc) {
            return None;
        }
        let args = gate::instructions::DisputePaymentArgs::deserialize(&mut &ix.data[disc.len()..])
            .ok()?;
        if args.payment_id_hash != *hash || args.facilitator != *facilitator {
            return None;
        }
        Some(Disputed {
            score: gate::instructions::DISPUTE_SCORE,
            disputed_by: ix.accounts.get(1)?.pubkey,
            reason_hash: args.dispute_reason_hash,
            created_at: landed.block_time.unwrap_or_default(),
        })
    })
}

/// emit_feedback's arguments, when `ix` is one of `gate_program`.
fn feedback_args(
    gate_program: &Pubkey,
    ix: &Instruction,
) -> Option<gate::instructions::EmitFeedbackArgs> {
    let disc = gate::instruction::EmitFeedback::DISCRIMINATOR;
    if !is_gate_ix(gate_program, ix, disc) {
        return None;
    }
    gate::instructions::EmitFeedbackArgs::deserialize(&mut &ix.data[disc.len()..]).ok()
}

/// Whether `ix` is `gate_program`'s instruction with discriminator `disc`.
fn is_gate_ix(gate_program: &Pubkey, ix: &Instruction, disc: &[u8]) -> bool {
    ix.program_id == *gate_program && ix.data.starts_with(disc)
}

/// Rebuilds a closed payment's receipt from the history of its log's and dispute record's
/// addresses: `None` when no settlement of it is found (never settled, or history the node
/// no longer keeps). Reads `getSignaturesForAddress` twice and `getTransaction` for the
/// transactions found.
pub async fn from_history(
    rpc: &RpcClient,
    pda: &Pdas,
    facilitator: &Pubkey,
    hash: &[u8; 32],
) -> Result<Option<History>, ClientError> {
    let gate_program = pda.ids.gate;
    let log = pda.feedback_log(facilitator, hash);
    let mut receipt = None;
    let mut closed_by = None;
    for signature in signatures_of(rpc, &log).await? {
        let Some(landed) = transaction(rpc, &signature).await? else {
            continue;
        };
        if receipt.is_none() {
            if let Some(mut r) = settled_in(&gate_program, &landed, facilitator, hash) {
                r.signature = Some(signature);
                receipt = Some(r);
                continue;
            }
        }
        let close = gate::instruction::ClosePaymentRecords::DISCRIMINATOR;
        let closes_log = landed.instructions.iter().any(|ix| {
            is_gate_ix(&gate_program, ix, close)
                && ix.accounts.first().map(|a| a.pubkey) == Some(log)
        });
        if receipt.is_some() && closes_log {
            closed_by = Some(signature);
        }
    }
    let Some(mut receipt) = receipt else {
        return Ok(None);
    };
    for signature in signatures_of(rpc, &pda.dispute(facilitator, hash)).await? {
        if let Some(landed) = transaction(rpc, &signature).await? {
            receipt.dispute = disputed_in(&gate_program, &landed, facilitator, hash);
            if receipt.dispute.is_some() {
                break;
            }
        }
    }
    Ok(Some(History {
        disputed: receipt.dispute.is_some(),
        receipt,
        closed_by,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::hex;
    use serde_json::json;

    #[test]
    fn a_receipt_reads_back_what_it_wrote() {
        let mut r = Receipt {
            payment_id_hash: [3; 32],
            facilitator: Pubkey::new_unique(),
            payee_asset: Pubkey::new_unique(),
            payer_asset: None,
            payer_wallet: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            amount: u64::MAX,
            value_decimals: 6,
            score: 90,
            slot: 12,
            created_at: 1_700_000_000,
            deadline: Some(1_700_000_060),
            signature: None,
            dispute: None,
            holdback: None,
        };
        assert_eq!(Receipt::from_json(&r.to_json()), Some(r.clone()));
        assert_eq!(r.to_json()["dispute"], Value::Null);
        assert_eq!(r.to_json()["holdback"], Value::Null);
        r.payer_asset = Some(Pubkey::new_unique());
        r.deadline = None;
        r.signature = Some(Signature::from([7; 64]));
        assert_eq!(Receipt::from_json(&r.to_json()), Some(r.clone()));
        let mut broken = r.to_json();
        broken["value"] = json!(5);
        assert_eq!(Receipt::from_json(&broken), None);
        // A record kept before receipts carried the dispute: not disputed.
        let mut older = r.to_json();
        older.as_object_mut().unwrap().remove("dispute");
        assert_eq!(Receipt::from_json(&older), Some(r.clone()));
        // A held share, as the log holds it, reads back with its state's name.
        r.holdback = Some(HoldbackView {
            held: 10_000.into(),
            escrow: Pubkey::new_unique().into(),
            recipient: Pubkey::new_unique().into(),
            arbiter: Some(Pubkey::new_unique().into()),
            hold_until: 1_700_000_120,
            state: crate::holdback::HoldStatus::Disputed,
            arbitration_ends: Some(1_700_604_900),
        });
        let v = r.to_json();
        assert_eq!(v["holdback"]["state"], "disputed");
        assert_eq!(v["holdback"]["held"], "10000");
        assert_eq!(Receipt::from_json(&v), Some(r.clone()));
    }

    #[test]
    fn a_disputed_receipt_shows_the_disputes_score_beside_the_settlements() {
        let payer = Pubkey::new_unique();
        let r = Receipt {
            payment_id_hash: [3; 32],
            facilitator: Pubkey::new_unique(),
            payee_asset: Pubkey::new_unique(),
            payer_asset: None,
            payer_wallet: payer,
            mint: Pubkey::new_unique(),
            amount: 100_000,
            value_decimals: 6,
            score: 100,
            slot: 12,
            created_at: 1_700_000_000,
            deadline: Some(1_700_000_060),
            signature: None,
            dispute: Some(Disputed {
                score: 0,
                disputed_by: payer,
                reason_hash: [9; 32],
                created_at: 1_700_000_100,
            }),
            holdback: None,
        };
        let v = r.to_json();
        assert_eq!(v["score"], 100, "the settlement's feedback");
        assert_eq!(
            v["dispute"],
            json!({
                "score": 0,
                "disputedBy": payer.to_string(),
                "reasonHash": hex(&[9; 32]),
                "createdAt": 1_700_000_100,
            })
        );
        assert_eq!(Receipt::from_json(&v), Some(r));
        let mut broken = v.clone();
        broken["dispute"]["reasonHash"] = json!("zz");
        assert_eq!(Receipt::from_json(&broken), None);
    }

    /// The dispute record (while the log lives) and the dispute transaction (once closed)
    /// give the receipt the same dispute.
    #[test]
    fn a_dispute_reads_the_same_from_its_record_and_its_transaction() {
        use crate::ids::{Network, ProgramIds};
        use anchor_lang::AccountSerialize;
        let b = crate::Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap();
        let (facilitator, payer, hash) = (Pubkey::new_unique(), Pubkey::new_unique(), [4; 32]);
        let record = DisputeRecord {
            facilitator,
            payment_id_hash: hash,
            reason_hash: [5; 32],
            disputed_by: payer,
            rent_payer: facilitator,
            created_at: 1_700_000_500,
        };
        let mut data = Vec::new();
        record.try_serialize(&mut data).unwrap();
        let from_record = Disputed::from_record_data(&data).unwrap();
        assert_eq!(
            from_record,
            Disputed {
                score: gate::instructions::DISPUTE_SCORE,
                disputed_by: payer,
                reason_hash: [5; 32],
                created_at: 1_700_000_500,
            }
        );
        assert_eq!(from_record.score, 0);
        assert_eq!(Disputed::from_record_data(&data[..100]), None);
        assert_eq!(Disputed::from_record_data(&[0; 176]), None);

        let ix = b.dispute_payment(
            &facilitator,
            &facilitator,
            &payer,
            &Pubkey::new_unique(),
            hash,
            &Pubkey::new_unique(),
            [5; 32],
            "ipfs://why".into(),
        );
        let landed = |ix: Instruction| Landed {
            instructions: vec![ix],
            slot: 9,
            block_time: Some(1_700_000_500),
            fee: 5_000,
            signatures: 2,
        };
        let gate_program = b.ids.gate;
        assert_eq!(
            disputed_in(&gate_program, &landed(ix.clone()), &facilitator, &hash),
            Some(from_record)
        );
        // Another payment's or another facilitator's dispute, another program: none.
        for (f, h) in [(facilitator, [6; 32]), (Pubkey::new_unique(), hash)] {
            assert_eq!(
                disputed_in(&gate_program, &landed(ix.clone()), &f, &h),
                None
            );
        }
        let mut elsewhere = ix;
        elsewhere.program_id = Pubkey::new_unique();
        assert_eq!(
            disputed_in(&gate_program, &landed(elsewhere), &facilitator, &hash),
            None
        );
    }
}
