//! What the localnet remembers that a bank does not answer for: the accounts it has seen
//! (for getProgramAccounts) and the transactions it executed (getTransaction,
//! getSignatureStatuses).

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

    pub fn record(&mut self, signature: Signature, tx: TxRecord) {
        self.transactions.insert(signature, tx);
    }

    pub fn transaction(&self, signature: &Signature) -> Option<&TxRecord> {
        self.transactions.get(signature)
    }

    pub fn transaction_count(&self) -> usize {
        self.transactions.len()
    }
}
