//! What the localnet remembers that a bank does not answer for: the accounts it has seen
//! (for getProgramAccounts), the transactions it executed (getTransaction,
//! getSignatureStatuses) and, per address, the transactions that named it
//! (getSignaturesForAddress).

use anchor_lang::prelude::Pubkey;
use solana_sdk::signature::Signature;
use solana_sdk::transaction::VersionedTransaction;
use solana_transaction_status_client_types::TransactionStatusMeta;
use std::collections::{BTreeSet, HashMap};

/// An executed transaction.
#[derive(Clone, Debug)]
pub struct TxRecord {
    pub slot: u64,
    pub block_time: i64,
    pub transaction: VersionedTransaction,
    pub meta: TransactionStatusMeta,
}

#[derive(Default)]
pub struct Index {
    accounts: BTreeSet<Pubkey>,
    transactions: HashMap<Signature, TxRecord>,
    /// Per address, the transactions whose keys (lookup tables' included) named it, oldest
    /// first.
    by_address: HashMap<Pubkey, Vec<Signature>>,
}

impl Index {
    /// Remembers account keys (every account a transaction can create or change is among
    /// its keys, so this sees every account).
    pub fn note_accounts(&mut self, keys: impl IntoIterator<Item = Pubkey>) {
        self.accounts.extend(keys);
    }

    pub fn accounts(&self) -> Vec<Pubkey> {
        self.accounts.iter().copied().collect()
    }

    /// Remembers an executed transaction and the addresses it named.
    pub fn record(&mut self, signature: Signature, tx: TxRecord, keys: &[Pubkey]) {
        let mut seen = BTreeSet::new();
        for key in keys.iter().filter(|k| seen.insert(**k)) {
            self.by_address.entry(*key).or_default().push(signature);
        }
        self.transactions.insert(signature, tx);
    }

    /// The transactions that named `address`, newest first: those before `before` (when
    /// given and known) and after `until` (when given), at most `limit`.
    pub fn signatures_for(
        &self,
        address: &Pubkey,
        before: Option<&Signature>,
        until: Option<&Signature>,
        limit: usize,
    ) -> Vec<(Signature, &TxRecord)> {
        let Some(all) = self.by_address.get(address) else {
            return Vec::new();
        };
        let end = match before {
            Some(b) => all.iter().position(|s| s == b).unwrap_or(all.len()),
            None => all.len(),
        };
        let start = match until {
            Some(u) => all[..end].iter().rposition(|s| s == u).map_or(0, |i| i + 1),
            None => 0,
        };
        all[start..end]
            .iter()
            .rev()
            .take(limit)
            .filter_map(|s| self.transactions.get(s).map(|r| (*s, r)))
            .collect()
    }

    pub fn transaction(&self, signature: &Signature) -> Option<&TxRecord> {
        self.transactions.get(signature)
    }

    pub fn transaction_count(&self) -> usize {
        self.transactions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_sdk::message::{Message, VersionedMessage};
    use solana_sdk::transaction::VersionedTransaction;

    fn record() -> TxRecord {
        TxRecord {
            slot: 1,
            block_time: 2,
            transaction: VersionedTransaction {
                signatures: vec![],
                message: VersionedMessage::Legacy(Message::default()),
            },
            meta: TransactionStatusMeta::default(),
        }
    }

    #[test]
    fn an_addresss_signatures_page_newest_first_between_before_and_until() {
        let mut index = Index::default();
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        let sigs: Vec<Signature> = (0..5u8).map(|i| Signature::from([i + 1; 64])).collect();
        for (i, s) in sigs.iter().enumerate() {
            // Every transaction names `a` (twice: counted once); the odd ones `b` too.
            let keys = if i % 2 == 1 { vec![a, b, a] } else { vec![a] };
            index.record(*s, record(), &keys);
        }
        let got = |addr, before: Option<&Signature>, until: Option<&Signature>, limit| {
            index
                .signatures_for(addr, before, until, limit)
                .into_iter()
                .map(|(s, _)| s)
                .collect::<Vec<_>>()
        };
        let newest_first: Vec<Signature> = sigs.iter().rev().copied().collect();
        assert_eq!(got(&a, None, None, 10), newest_first);
        assert_eq!(got(&a, None, None, 2), newest_first[..2]);
        assert_eq!(
            got(&a, Some(&sigs[3]), None, 10),
            [sigs[2], sigs[1], sigs[0]]
        );
        assert_eq!(got(&a, None, Some(&sigs[2]), 10), [sigs[4], sigs[3]]);
        assert_eq!(
            got(&a, Some(&sigs[4]), Some(&sigs[1]), 10),
            [sigs[3], sigs[2]]
        );
        assert_eq!(got(&b, None, None, 10), [sigs[3], sigs[1]]);
        assert!(got(&Pubkey::new_unique(), None, None, 10).is_empty());
    }
}
