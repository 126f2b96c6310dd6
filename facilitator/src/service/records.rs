//! GET /receipt: what this facilitator knows of a payment. While the payment's log exists,
//! the log and its DisputeRecord when disputed; once they are closed, the record this
//! facilitator kept when its crank closed them, else the chain's history of their addresses
//! (see [`trust_gate_client::receipts`]). `score` is the settlement's feedback, `dispute` the
//! dispute's (score 0, who, when, the reason's hash), `holdback` the held share and its state,
//! the same from every source but the chain's history (which does not say what became of a
//! share). GET /payments: a payer agent's payments it keeps records of, newest first.

use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use serde_json::{json, Value};
use trust_gate_client::chain;
use trust_gate_client::decode::{self, hex, parse_hex32};
use trust_gate_client::holdback::HoldbackView;
use trust_gate_client::receipts::{self, Receipt};

/// The most payments one `GET /payments` lists (and its default).
pub const PAYMENTS_LIMIT_MAX: usize = 200;

/// Parses the path of /receipt/:paymentIdHashHex.
pub fn parse_receipt_hash(s: &str) -> Result<[u8; 32], Rejection> {
    const FIELD: &str = "paymentIdHashHex";
    if s.len() != 64 {
        return Err(Rejection::input(
            FIELD,
            format!("must be 64 hex characters, got {}", s.len()),
        ));
    }
    parse_hex32(FIELD, s).map_err(|_| Rejection::input(FIELD, "is not hex"))
}

impl Facilitator {
    /// Why a dispute finds no log: its log has closed (past its dispute window), or it was
    /// never settled here.
    pub(crate) async fn no_log(&self, hash: &[u8; 32]) -> Rejection {
        let closed = matches!(self.payment_records.record(hash).await, Ok(Some(_)));
        if closed {
            return Rejection::new(
                Reason::DisputeWindowClosed,
                format!(
                    "payment {} was settled here and its records are closed: its dispute window has passed",
                    hex(hash)
                ),
            );
        }
        Rejection::new(
            Reason::NotFound,
            format!(
                "payment {} was never settled by this facilitator (no feedback log)",
                hex(hash)
            ),
        )
    }

    /// GET /receipt: the payment's receipt, whether it was disputed and whether its records
    /// are closed; for an open payment whose payer agent is known, the payer's policy vault
    /// for the mint (its balance now) when it has one.
    pub async fn receipt(&self, hash: [u8; 32]) -> Result<Value, Rejection> {
        let fac = self.facilitator();
        let pda = &self.chain.builder.pda;
        let live = receipts::live(&self.chain.rpc, pda, &fac, &hash).await?;
        // The records make the answer fuller, never possible: with the store down (Redis)
        // /receipt answers from the chain alone, as /verify goes on.
        let kept = match self.payment_records.record(&hash).await {
            Ok(kept) => kept,
            Err(e) => {
                tracing::warn!(error = %e, "payment records unavailable; the receipt reads the chain alone");
                None
            }
        };
        let log = pda.feedback_log(&fac, &hash).to_string();
        if let Some(mut r) = live.receipt {
            if let Some(k) = &kept {
                r.signature = r.signature.or(k.signature);
                r.payer_asset = r.payer_asset.or(k.payer_asset);
            }
            let vault = match r.payer_asset {
                Some(payer) => self.payer_vault(&payer, &r.mint).await?,
                None => None,
            };
            return Ok(view(&r, true, live.disputed, false, None, &log, vault));
        }
        if let Some((r, k)) = kept.as_ref().and_then(|k| Some((k.receipt.as_ref()?, k))) {
            return Ok(view(r, true, k.disputed, true, k.closed_by, &log, None));
        }
        match receipts::from_history(&self.chain.rpc, pda, &fac, &hash).await? {
            Some(h) => Ok(view(
                &h.receipt,
                true,
                h.disputed,
                true,
                h.closed_by,
                &log,
                None,
            )),
            None => Ok(json!({"paymentIdHash": hex(&hash), "exists": false})),
        }
    }

    async fn payer_vault(
        &self,
        payer: &solana_sdk::pubkey::Pubkey,
        mint: &solana_sdk::pubkey::Pubkey,
    ) -> Result<Option<Value>, Rejection> {
        let key = self.chain.builder.pda.vault(payer, mint);
        Ok(chain::account(&self.chain.rpc, &key)
            .await?
            .and_then(|a| decode::vault(&key, &a.owner, &a.data))
            .map(|v| json!({"address": v.address.to_string(), "balance": v.amount.to_string()})))
    }
}

impl Facilitator {
    /// GET /payments?payer=: `payer`'s payments this facilitator settled and keeps records of
    /// (for [`crate::payment_records::RECORD_TTL`]), newest first, at most `limit`. Each names
    /// its log and settlement transaction, and once the crank closed the log, what it held;
    /// a held share (`holdback`) is read from the open logs (one read for a hundred).
    pub async fn payments(
        &self,
        payer: &solana_sdk::pubkey::Pubkey,
        limit: usize,
    ) -> Result<Value, Rejection> {
        let fac = self.facilitator();
        let gate = self.chain.builder.ids.gate;
        let listed = self.payment_records.payments_of(payer, limit).await?;
        let logs: Vec<_> = listed
            .iter()
            .map(|(hash, _, _)| self.chain.builder.pda.feedback_log(&fac, hash))
            .collect();
        let open: Vec<_> = listed
            .iter()
            .zip(&logs)
            .filter(|((_, _, r), _)| r.as_ref().is_some_and(|r| r.receipt.is_none()))
            .map(|(_, log)| *log)
            .collect();
        let read = if open.is_empty() {
            Vec::new()
        } else {
            chain::accounts(&self.chain.rpc, &open).await?
        };
        let held_in = |log: &solana_sdk::pubkey::Pubkey| {
            let at = open.iter().position(|k| k == log)?;
            let acc = read.get(at)?.as_ref().filter(|a| a.owner == gate)?;
            HoldbackView::from_log_data(&acc.data)
        };
        let payments: Vec<Value> = listed
            .into_iter()
            .zip(&logs)
            .map(|((hash, at, record), log)| {
                let mut v = json!({
                    "paymentIdHash": hex(&hash),
                    "settledAt": at,
                    "feedbackLog": log.to_string(),
                });
                match record {
                    Some(r) => {
                        v["transaction"] = json!(r.signature.map(|s| s.to_string()));
                        v["closed"] = json!(r.receipt.is_some());
                        v["disputed"] = json!(r.disputed);
                        v["receipt"] = r.receipt.as_ref().map_or(Value::Null, Receipt::to_json);
                        let held = match &r.receipt {
                            Some(closed) => closed.holdback.clone(),
                            None => held_in(log),
                        };
                        v["holdback"] = serde_json::to_value(held).unwrap_or_default();
                    }
                    None => v["expired"] = json!(true),
                }
                v
            })
            .collect();
        Ok(json!({
            "payer": payer.to_string(),
            "facilitator": fac.to_string(),
            "keptSecs": crate::payment_records::RECORD_TTL.as_secs(),
            "payments": payments,
        }))
    }
}

/// The /receipt body of a settled payment.
fn view(
    r: &Receipt,
    exists: bool,
    disputed: bool,
    closed: bool,
    closed_by: Option<solana_sdk::signature::Signature>,
    log: &str,
    vault: Option<Value>,
) -> Value {
    let mut v = r.to_json();
    v["exists"] = exists.into();
    v["disputed"] = disputed.into();
    v["closed"] = closed.into();
    if let Some(s) = closed_by {
        v["closedBy"] = s.to_string().into();
    }
    v["feedbackLog"] = log.into();
    v["payerVault"] = vault.unwrap_or(Value::Null);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipt_hashes() {
        assert!(parse_receipt_hash("zz").is_err());
        assert_eq!(parse_receipt_hash(&"ab".repeat(32)).unwrap(), [0xab; 32]);
    }
}
