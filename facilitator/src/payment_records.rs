//! What a facilitator keeps of each payment it settled, beyond the chain: the settlement's
//! signature and payer agent (written when it lands), and, once its crank closes the log, what
//! the log held and whether it was disputed.
//!
//! It is what lets /settle refuse a payment id it settled before even after the log is gone
//! (the chain alone refuses the same deadline, see docs/settlement.md) and /receipt answer
//! for a closed payment without the chain's history. Kept in the store (see [`crate::store`])
//! for [`RECORD_TTL`], each listed under its payer agent for `GET /payments`.
//!
//! Beside it, a payment's pending record: the transaction sent (or about to be) for it,
//! claimed before the send, so that a retry on any replica finds the transaction that was
//! sent and answers with its outcome instead of sending another.

use crate::store::{Keep, Store, StoreUnavailable};
use serde_json::{json, Value};
use solana_sdk::hash::Hash;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::str::FromStr;
use std::time::Duration;
use trust_gate_client::decode::hex;
use trust_gate_client::receipts::Receipt;

/// How long a payment's record is kept: 90 days, well past the 7-day dispute window and
/// the crank's close; after that /receipt rebuilds a closed payment from the chain's
/// history (where the RPC node still has it).
pub const RECORD_TTL: Duration = Duration::from_secs(90 * 24 * 60 * 60);

/// A pending record outlives the transaction it names: once its blockhash has expired
/// (150 slots, about a minute on a cluster) the transaction can no longer land.
const PENDING_TTL: Duration = Duration::from_secs(300);

/// A payment's record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PaymentRecord {
    /// The settlement transaction.
    pub signature: Option<Signature>,
    pub payer_asset: Option<Pubkey>,
    /// What the log held, kept when this facilitator closed it (with what the dispute
    /// record held, when disputed).
    pub receipt: Option<Receipt>,
    /// Whether the payment was disputed (known once closed).
    pub disputed: bool,
    /// The transaction that closed the log.
    pub closed_by: Option<Signature>,
}

impl PaymentRecord {
    pub fn encode(&self) -> String {
        json!({
            "signature": self.signature.map(|s| s.to_string()),
            "payerAsset": self.payer_asset.map(|p| p.to_string()),
            "receipt": self.receipt.as_ref().map(Receipt::to_json),
            "disputed": self.disputed,
            "closedBy": self.closed_by.map(|s| s.to_string()),
        })
        .to_string()
    }

    /// `None` for anything [`PaymentRecord::encode`] did not write.
    pub fn decode(s: &str) -> Option<PaymentRecord> {
        let v: Value = serde_json::from_str(s).ok()?;
        let sig = |f: &str| match &v[f] {
            Value::Null => Some(None),
            s => Signature::from_str(s.as_str()?).ok().map(Some),
        };
        Some(PaymentRecord {
            signature: sig("signature")?,
            payer_asset: match &v["payerAsset"] {
                Value::Null => None,
                p => Some(Pubkey::from_str(p.as_str()?).ok()?),
            },
            receipt: match &v["receipt"] {
                Value::Null => None,
                r => Some(Receipt::from_json(r)?),
            },
            disputed: v["disputed"].as_bool()?,
            closed_by: sig("closedBy")?,
        })
    }
}

/// The transaction sent (or about to be) for a payment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingRecord {
    pub signature: Signature,
    /// Its recent blockhash: once no longer valid, the transaction can no longer land.
    pub blockhash: Hash,
}

impl PendingRecord {
    fn encode(&self) -> String {
        format!("{} {}", self.signature, self.blockhash)
    }

    fn decode(s: &str) -> Option<Self> {
        let (sig, hash) = s.split_once(' ')?;
        Some(PendingRecord {
            signature: Signature::from_str(sig).ok()?,
            blockhash: Hash::from_str(hash).ok()?,
        })
    }
}

/// What claiming a payment's pending record found.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// Written now: this settlement is the payment's.
    Ours,
    /// Already this very transaction's (a retry whose first send may or may not have gone).
    Same,
    /// Another transaction of the same payment was claimed before.
    Other(PendingRecord),
}

/// A payer's payment as its index lists it: its id hash, when its record was first kept
/// (unix seconds: when the settlement landed), and the record.
pub type PayerPayment = ([u8; 32], i64, Option<PaymentRecord>);

/// A facilitator's payment records and pending records, in the store.
pub struct PaymentRecords {
    store: Store,
    facilitator: Pubkey,
    /// A pending record lives at least as long as a payer's turn may be held.
    pending_ttl: Duration,
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

impl PaymentRecords {
    /// The records of `facilitator`'s payments; a pending record lives at least `lock_ttl`.
    pub fn new(store: Store, facilitator: Pubkey, lock_ttl: Duration) -> Self {
        PaymentRecords {
            store,
            facilitator,
            pending_ttl: PENDING_TTL.max(lock_ttl),
        }
    }

    fn pending_key(&self, id: &[u8; 32]) -> String {
        format!("trust-gate:pending:{}:{}", self.facilitator, hex(id))
    }

    /// The record of the payment whose id hash is `hex_id` in hex.
    fn record_key(&self, hex_id: &str) -> String {
        format!("trust-gate:payment:{}:{hex_id}", self.facilitator)
    }

    fn index_key(&self, payer: &Pubkey) -> String {
        format!("trust-gate:payments-of:{}:{payer}", self.facilitator)
    }

    /// The pending record of payment `id`, if any.
    pub async fn pending(&self, id: &[u8; 32]) -> Result<Option<PendingRecord>, StoreUnavailable> {
        let found = self.store.get(&self.pending_key(id)).await?;
        Ok(found.as_deref().and_then(PendingRecord::decode))
    }

    /// Claims payment `id` for `record`.
    pub async fn claim(
        &self,
        id: &[u8; 32],
        record: &PendingRecord,
    ) -> Result<Claim, StoreUnavailable> {
        let (key, ttl) = (self.pending_key(id), Some(self.pending_ttl));
        let Some(there) = self.store.claim(&key, &record.encode(), ttl).await? else {
            return Ok(Claim::Ours);
        };
        Ok(match PendingRecord::decode(&there) {
            Some(r) if r == *record => Claim::Same,
            Some(r) => Claim::Other(r),
            // Not a record of ours: take the key over, unless it changed meanwhile.
            None => {
                if !self
                    .store
                    .replace_if(&key, &there, &record.encode(), ttl)
                    .await?
                {
                    return Err(StoreUnavailable {
                        store: self.store.name().to_string(),
                        message: format!("{key} changed while it was being claimed"),
                    });
                }
                Claim::Ours
            }
        })
    }

    /// Replaces `old` with `new`; false when the record no longer was `old`.
    pub async fn replace(
        &self,
        id: &[u8; 32],
        old: &PendingRecord,
        new: &PendingRecord,
    ) -> Result<bool, StoreUnavailable> {
        let key = self.pending_key(id);
        let ttl = Some(self.pending_ttl);
        self.store
            .replace_if(&key, &old.encode(), &new.encode(), ttl)
            .await
    }

    /// Forgets `record` (a transaction that was never sent), so that another transaction
    /// of the payment may be sent at once. A failure leaves it to expire.
    pub async fn forget(&self, id: &[u8; 32], record: &PendingRecord) {
        let key = self.pending_key(id);
        if let Err(e) = self.store.delete_if(&key, &record.encode()).await {
            tracing::warn!(store = %e.store, error = %e.message, "could not forget an unsent settlement; it expires by itself");
        }
    }

    /// What /settle reads before a payer's turn, in one round trip: payment `id`'s pending
    /// record and its payment record.
    pub async fn lookup(
        &self,
        id: &[u8; 32],
    ) -> Result<(Option<PendingRecord>, Option<PaymentRecord>), StoreUnavailable> {
        let keys = [self.pending_key(id), self.record_key(&hex(id))];
        let found = self.store.get_many(&keys).await?;
        let at = |i: usize| found.get(i).cloned().flatten();
        Ok((
            at(0).as_deref().and_then(PendingRecord::decode),
            at(1).as_deref().and_then(PaymentRecord::decode),
        ))
    }

    /// The record of payment `id`.
    pub async fn record(&self, id: &[u8; 32]) -> Result<Option<PaymentRecord>, StoreUnavailable> {
        let found = self.store.get(&self.record_key(&hex(id))).await?;
        Ok(found.as_deref().and_then(PaymentRecord::decode))
    }

    /// Keeps `record` for [`RECORD_TTL`], replacing what was kept, and, when it names its
    /// payer, lists the payment under that payer (where a later write keeps its first
    /// place); one round trip.
    pub async fn keep(
        &self,
        id: &[u8; 32],
        record: &PaymentRecord,
    ) -> Result<(), StoreUnavailable> {
        let (member, value) = (hex(id), record.encode());
        let index = record.payer_asset.map(|p| self.index_key(&p));
        let now = unix_now();
        self.store
            .keep_indexed(&Keep {
                key: &self.record_key(&member),
                value: &value,
                ttl: RECORD_TTL,
                indexes: &index.as_deref().into_iter().collect::<Vec<_>>(),
                member: &member,
                score: now,
                first_score: true,
                drop_below: now - RECORD_TTL.as_secs() as i64,
                bound: None,
            })
            .await
    }

    /// `payer`'s payments kept, newest first, at most `limit`: each with when it landed and
    /// its record (gone when it expired). Two round trips.
    pub async fn payments_of(
        &self,
        payer: &Pubkey,
        limit: usize,
    ) -> Result<Vec<PayerPayment>, StoreUnavailable> {
        let oldest = unix_now() - RECORD_TTL.as_secs() as i64;
        let index = self.index_key(payer);
        let listed =
            crate::store::indexed(&*self.store, &index, oldest, limit, |h| self.record_key(h))
                .await?;
        Ok(listed
            .into_iter()
            .filter_map(|(h, at, r)| {
                let hash = trust_gate_client::decode::parse_hex32("payment", &h).ok()?;
                Some((hash, at, r.as_deref().and_then(PaymentRecord::decode)))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_client::holdback::{HoldStatus, HoldbackView};
    use trust_gate_client::receipts::Disputed;

    #[test]
    fn a_pending_record_reads_back_and_nothing_else_does() {
        let r = PendingRecord {
            signature: Signature::from([7; 64]),
            blockhash: Hash::new_from_array([9; 32]),
        };
        assert_eq!(PendingRecord::decode(&r.encode()), Some(r));
        for bad in ["", "x", "1 2", &r.signature.to_string()] {
            assert_eq!(PendingRecord::decode(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_record_reads_back_and_nothing_else_does() {
        let mut r = PaymentRecord {
            signature: Some(Signature::from([1; 64])),
            payer_asset: Some(Pubkey::new_unique()),
            ..PaymentRecord::default()
        };
        assert_eq!(PaymentRecord::decode(&r.encode()), Some(r.clone()));
        r.receipt = Some(Receipt {
            payment_id_hash: [2; 32],
            facilitator: Pubkey::new_unique(),
            payee_asset: Pubkey::new_unique(),
            payer_asset: r.payer_asset,
            payer_wallet: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            amount: 10,
            value_decimals: 6,
            score: 90,
            slot: 4,
            created_at: 5,
            deadline: Some(6),
            signature: r.signature,
            dispute: Some(Disputed {
                score: 0,
                disputed_by: Pubkey::new_unique(),
                reason_hash: [8; 32],
                created_at: 7,
            }),
            holdback: Some(HoldbackView {
                held: 1.into(),
                escrow: Pubkey::new_unique().into(),
                recipient: Pubkey::new_unique().into(),
                arbiter: None,
                hold_until: 9,
                state: HoldStatus::Upheld,
                arbitration_ends: Some(10),
            }),
        });
        r.disputed = true;
        r.closed_by = Some(Signature::from([3; 64]));
        assert_eq!(PaymentRecord::decode(&r.encode()), Some(r));
        for bad in ["", "{}", "[]", r#"{"signature":"x","disputed":false}"#] {
            assert_eq!(PaymentRecord::decode(bad), None, "{bad:?}");
        }
    }

    fn records(store: &Store, f: Pubkey) -> PaymentRecords {
        PaymentRecords::new(store.clone(), f, Duration::ZERO)
    }

    #[tokio::test]
    async fn in_process_payment_records_are_kept_per_facilitator_and_payment() {
        let store = crate::store::open(None).unwrap();
        let (f, id) = (Pubkey::new_unique(), [1; 32]);
        let s = records(&store, f);
        assert_eq!(s.record(&id).await.unwrap(), None);
        let r = PaymentRecord {
            signature: Some(Signature::from([7; 64])),
            ..PaymentRecord::default()
        };
        s.keep(&id, &r).await.unwrap();
        assert_eq!(s.record(&id).await.unwrap(), Some(r));
        let other = records(&store, Pubkey::new_unique());
        assert_eq!(other.record(&id).await.unwrap(), None);
        assert_eq!(s.record(&[2; 32]).await.unwrap(), None);
    }

    #[tokio::test]
    async fn in_process_a_payers_payments_are_listed_newest_first() {
        let store = crate::store::open(None).unwrap();
        let (f, payer) = (Pubkey::new_unique(), Pubkey::new_unique());
        let s = records(&store, f);
        for i in 1..=3u8 {
            let r = PaymentRecord {
                signature: Some(Signature::from([i; 64])),
                payer_asset: Some(payer),
                ..PaymentRecord::default()
            };
            s.keep(&[i; 32], &r).await.unwrap();
        }
        // A record without its payer, and the crank's later write of the first: not listed
        // twice.
        s.keep(&[9; 32], &PaymentRecord::default()).await.unwrap();
        let closed = PaymentRecord {
            signature: Some(Signature::from([1; 64])),
            payer_asset: Some(payer),
            disputed: true,
            ..PaymentRecord::default()
        };
        s.keep(&[1; 32], &closed).await.unwrap();
        let listed = s.payments_of(&payer, 10).await.unwrap();
        let hashes: Vec<u8> = listed.iter().map(|(h, _, _)| h[0]).collect();
        assert_eq!(hashes, [3, 2, 1]);
        assert_eq!(listed[2].2.as_ref(), Some(&closed));
        assert!(listed.iter().all(|(_, at, _)| *at > 1_700_000_000));
        assert_eq!(s.payments_of(&payer, 2).await.unwrap().len(), 2);
        assert!(s
            .payments_of(&Pubkey::new_unique(), 10)
            .await
            .unwrap()
            .is_empty());
        assert!(records(&store, Pubkey::new_unique())
            .payments_of(&payer, 10)
            .await
            .unwrap()
            .is_empty());
    }
}
