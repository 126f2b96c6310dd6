//! POST /dispute: a payment's payer disputes it.
//!
//! A dispute lowers the payee's reputation, so only the payer of a settled payment may make
//! one: the payer's wallet (the settlement's transfer authority, recorded in the feedback
//! log) signs `gate::dispute_payment`, and this facilitator only co-signs as fee payer, after
//! checking the transaction and the payment's records. The program enforces the same rules
//! on chain (`NotPaymentPayer`, `DisputeWindowClosed`); checking the records first, and the
//! window in the send's preflight, answers with the right status instead of a failed
//! transaction the facilitator would pay for.
//!
//! Body: `{"transaction": "<base64>"}`, the transaction the SDK's
//! `settle::dispute_transaction` builds (fee payer = this facilitator, signed by the payer).
//! It is exactly one instruction: no ComputeBudget prefix, so the facilitator pays no
//! priority fee for a dispute (see [`crate::budget`]).

use crate::inspect::{self, Resolved};
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::decode::{self, hex, DisputeRecord};
use trust_gate_client::{chain, errors, receipts, settle, ClientError};

pub use gate::instructions::DISPUTE_WINDOW_SECS;

/// A parsed /dispute body.
#[derive(Clone, Debug)]
pub struct DisputeRequest {
    pub tx: VersionedTransaction,
}

/// What a checked dispute transaction asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedDispute {
    /// The wallet that signed the dispute.
    pub payer: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
}

impl DisputeRequest {
    pub fn parse(body: &[u8]) -> Result<Self, Rejection> {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| Rejection::input("body", format!("not JSON: {e}")))?;
        let Value::Object(map) = v else {
            return Err(Rejection::input("body", "must be a JSON object"));
        };
        if let Some(unknown) = map.keys().find(|k| k.as_str() != "transaction") {
            return Err(Rejection::input(
                unknown,
                "unknown field: the body is {\"transaction\": \"<base64>\"}",
            )
            .hint(
                "the payment's payer signs the dispute: build it with the SDK's settle::dispute_transaction and send its base64",
            ));
        }
        let b64 = match map.get("transaction") {
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(Rejection::input(
                    "transaction",
                    format!("must be a base64 string, got {other}"),
                ))
            }
            None => return Err(Rejection::input("transaction", "missing")),
        };
        let tx = inspect::decode(b64).map_err(|r| Rejection::input("transaction", r.message))?;
        Ok(DisputeRequest { tx })
    }
}

fn refused(r: Rejection) -> Rejection {
    Rejection::input("transaction", r.message)
}

/// Checks the dispute transaction itself (no RPC): exactly one `dispute_payment` of this
/// facilitator, paid by it, signed by the payer it names, and identical to what the SDK
/// builds for the same arguments.
pub fn check(
    f: &Facilitator,
    tx: &VersionedTransaction,
    collection: &Pubkey,
) -> Result<CheckedDispute, Rejection> {
    use gate::instruction::DisputePayment;
    let facilitator = f.facilitator();
    let keys = inspect::account_keys(&tx.message, &[]).map_err(refused)?;
    let ixs = inspect::resolve(&tx.message, &keys).map_err(refused)?;
    // The fee payer would pay a priority fee for a dispute as for a settlement; a dispute is
    // small and not urgent, so it carries none.
    if ixs
        .iter()
        .any(|ix| ix.program_id == gate::settlement::COMPUTE_BUDGET_PROGRAM_ID)
    {
        return Err(Rejection::input(
            "transaction",
            "has a ComputeBudget instruction; a dispute is exactly one gate::dispute_payment and this facilitator pays no priority fee for it",
        ));
    }
    let [ix]: &[Resolved; 1] = ixs.as_slice().try_into().map_err(|_| {
        Rejection::input(
            "transaction",
            format!(
                "has {} instructions; a dispute is exactly one gate::dispute_payment",
                ixs.len()
            ),
        )
    })?;
    if !inspect::is_gate_ix::<DisputePayment>(&f.chain.builder, ix) {
        return Err(Rejection::input(
            "transaction",
            "its instruction is not gate::dispute_payment",
        ));
    }
    let fee_payer = keys.first().map(|k| k.0).unwrap_or_default();
    if fee_payer != facilitator {
        return Err(Rejection::input(
            "transaction",
            format!("the fee payer is {fee_payer}, not this facilitator ({facilitator})"),
        ));
    }
    let DisputePayment { args: a } = inspect::args(ix, "dispute_payment").map_err(refused)?;
    if a.facilitator != facilitator {
        return Err(Rejection::input(
            "transaction",
            format!(
                "disputes a payment of facilitator {}, not of this one ({facilitator})",
                a.facilitator
            ),
        ));
    }
    // Account 1 is the payer's signer slot (the builder's order).
    let payer = *ix
        .accounts
        .get(1)
        .ok_or_else(|| Rejection::input("transaction", "dispute_payment lacks its accounts"))?;
    // The facilitator pays for the record it co-signs (the payer could instead dispute
    // alone, paying itself: `settle::dispute_alone`).
    let want = f.chain.builder.dispute_payment(
        &facilitator,
        &facilitator,
        &payer,
        collection,
        a.payment_id_hash,
        &a.payee_asset,
        a.dispute_reason_hash,
        a.feedback_uri.clone(),
    );
    inspect::compare("dispute_payment", ix, &want, &keys).map_err(refused)?;
    inspect::check_signatures(tx, &keys, &facilitator, &payer).map_err(refused)?;
    Ok(CheckedDispute {
        payer,
        payment_id_hash: a.payment_id_hash,
        payee_asset: a.payee_asset,
    })
}

impl Facilitator {
    /// POST /dispute: checks the payer-signed dispute against the payment's records,
    /// co-signs it as fee payer and sends it. 403 unless the signer paid the payment, or once
    /// the dispute window has closed; 404 when never settled here; 409 when not settled
    /// atomically or already disputed.
    pub async fn dispute(&self, d: DisputeRequest) -> Result<Value, Rejection> {
        let Some(keypair) = self.key.keypair() else {
            return Err(Rejection::new(
                Reason::SignerRequired,
                "this facilitator is configured with a public key only and cannot co-sign disputes",
            ));
        };
        let collection = self.collection().await?;
        let c = check(self, &d.tx, &collection)?;
        let hash_hex = hex(&c.payment_id_hash);
        // The payment's log and whether it is disputed, in one read.
        let fac = self.facilitator();
        let live = receipts::live(
            &self.chain.rpc,
            &self.chain.builder.pda,
            &fac,
            &c.payment_id_hash,
        )
        .await?;
        let Some(log) = live.receipt else {
            return Err(self.no_log(&c.payment_id_hash).await);
        };
        if log.payee_asset != c.payee_asset {
            return Err(Rejection::input(
                "transaction",
                format!(
                    "payment {hash_hex} paid {}, not {}",
                    log.payee_asset, c.payee_asset
                ),
            ));
        }
        if log.payer_wallet != c.payer {
            return Err(Rejection::new(
                Reason::NotPaymentPayer,
                format!(
                    "{} did not pay payment {hash_hex}: only its payer's wallet may dispute it",
                    c.payer
                ),
            ));
        }
        let record = self.chain.builder.pda.dispute(&fac, &c.payment_id_hash);
        let conflict = || {
            Rejection::new(
                Reason::AlreadyDisputed,
                format!("payment {hash_hex} is already disputed (record {record})"),
            )
        };
        if live.disputed {
            return Err(conflict());
        }

        let mut tx = d.tx;
        tx.signatures[0] = crate::service::co_signature(&tx, keypair);
        // The send's preflight runs the program's own checks, the dispute window among them
        // (against the cluster's clock, not this machine's); a refusal there costs nothing.
        let sig = match settle::send(&self.chain.rpc, &tx).await {
            Ok(sig) => sig,
            Err(ClientError::Transaction { named: Some(n), .. })
                if n.name == "DisputeWindowClosed" =>
            {
                return Err(Rejection::new(
                    Reason::DisputeWindowClosed,
                    format!(
                        "payment {hash_hex} settled more than {DISPUTE_WINDOW_SECS} s ago: its dispute window has closed"
                    ),
                ))
            }
            Err(ClientError::Transaction { named: Some(n), .. })
                if errors::is_engine_paused(&n) =>
            {
                return Err(Rejection::new(
                    Reason::ReputationEnginePaused,
                    format!(
                        "the reputation engine {} is paused: the dispute's feedback cannot be recorded until it resumes; nothing was sent (no fee)",
                        self.chain.builder.ids.reputation_engine
                    ),
                ))
            }
            // Lost a race with a concurrent dispute of the same payment.
            Err(ClientError::Transaction { .. })
                if chain::account(&self.chain.rpc, &record).await?.is_some() =>
            {
                return Err(conflict())
            }
            Err(e @ ClientError::Transaction { .. }) => {
                return Err(Rejection::new(
                    Reason::DisputeTransactionFailed,
                    e.to_string(),
                ))
            }
            Err(e) => return Err(e.into()),
        };
        let view = match chain::account(&self.chain.rpc, &record).await? {
            Some(acc) => {
                let r: DisputeRecord = decode::account("DisputeRecord", &acc.data)?;
                json!({
                    "address": record.to_string(),
                    "paymentIdHash": hex(&r.payment_id_hash),
                    "payee": c.payee_asset.to_string(),
                    "reasonHash": hex(&r.reason_hash),
                    "disputedBy": r.disputed_by.to_string(),
                    "rentPayer": r.rent_payer.to_string(),
                    "createdAt": r.created_at,
                })
            }
            None => json!({"address": record.to_string()}),
        };
        Ok(json!({"success": true, "transaction": sig.to_string(), "disputeRecord": view}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispute_bodies_name_the_field() {
        let bad = |body: &str, field: &str| {
            let e = DisputeRequest::parse(body.as_bytes()).unwrap_err();
            assert_eq!(e.reason, "input_invalid");
            assert!(e.message.starts_with(field), "{}", e.message);
        };
        bad("[]", "body");
        bad("{}", "transaction");
        bad(r#"{"transaction": 5}"#, "transaction");
        bad(r#"{"transaction": "***"}"#, "transaction");
        // The old facilitator-signed form is refused, with a hint to the SDK.
        let e = DisputeRequest::parse(br#"{"paymentIdHash":"ab","reason":"x"}"#).unwrap_err();
        assert!(e.message.starts_with("paymentIdHash"), "{}", e.message);
        assert!(e.hint.unwrap().contains("dispute_transaction"));
    }
}
