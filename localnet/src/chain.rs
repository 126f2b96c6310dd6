//! The in-process chain behind the JSON-RPC server: a solana-program-test bank with a
//! wall-clock slot timer, plus the index of accounts and transactions that BanksClient
//! cannot answer (getProgramAccounts, getTransaction).

// program-test 3.1 flags its whole API as "to become unstable in 4.0"; we pin =3.1.12.
#![allow(deprecated)]

use crate::index::{Index, TxRecord};
use anchor_lang::prelude::Pubkey;
use solana_address_lookup_table_interface::state::AddressLookupTable;
use solana_program_test::{BanksClient, BanksClientError, ProgramTestContext};
use solana_sdk::account::{Account, AccountSharedData};
use solana_sdk::clock::Clock;
use solana_sdk::hash::Hash;
use solana_sdk::message::{v0::LoadedAddresses, VersionedMessage};
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::transaction::{TransactionError, VersionedTransaction};
use solana_transaction_status_client_types::TransactionStatusMeta;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Mutex;
use tokio::sync::{RwLock, RwLockReadGuard};

/// A slot lasts this long on the localnet, as on a cluster.
pub const SLOT_DURATION: Duration = Duration::from_millis(400);

/// Why a transaction was not executed at all (no fee, no record).
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("{0}")]
    Rejected(TransactionError),
    #[error("bank: {0}")]
    Bank(String),
}

/// What simulating a transaction yielded.
pub struct Simulation {
    pub result: Result<(), TransactionError>,
    pub logs: Vec<String>,
    pub units_consumed: u64,
    pub return_data: Option<solana_transaction_context::TransactionReturnData>,
    pub loaded_accounts_data_size: u32,
}

/// The chain. Writes (transactions, slot warps, time) hold `gate` exclusively, so a
/// transaction's pre- and post-balances are its own; reads share it. Every bank access goes
/// through `gate`: a simulation running while the slot timer freezes the bank deadlocks
/// inside the runtime (a re-entrant read lock behind a waiting writer).
pub struct Chain {
    gate: RwLock<()>,
    ctx: Mutex<ProgramTestContext>,
    banks: BanksClient,
    index: std::sync::RwLock<Index>,
    genesis_hash: Hash,
    faucet: Keypair,
    slot: AtomicU64,
    /// Seconds added to wall time (tests warp the clock forward).
    time_offset: AtomicU64,
    /// The unix time the Clock sysvar was last set to (by [`Chain::tick`]): what programs saw,
    /// and what a transaction's block time is.
    clock_time: std::sync::atomic::AtomicI64,
    /// The cluster's blockhashes, one per slot (see [`Blockhashes`]).
    blockhashes: std::sync::Mutex<Blockhashes>,
    /// JSON-RPC calls served, by method (what benchmarks report per request).
    rpc_calls: std::sync::Mutex<std::collections::BTreeMap<String, u64>>,
}

/// How many slots a blockhash stays usable, as on a cluster (150 slots, about 60 s).
pub const MAX_BLOCKHASH_AGE: u64 = 150;

/// The blockhashes clients see: one per slot of the localnet, usable for
/// [`MAX_BLOCKHASH_AGE`] slots.
///
/// The bank underneath (solana-program-test) registers a fresh blockhash every 6.4 ms, so
/// its own ones expire after about a second. The localnet therefore keeps the cluster-like
/// queue here: a transaction's blockhash is checked against it, then replaced by the bank's
/// current one for execution (exactly what `replaceRecentBlockhash` does in a simulation).
/// Signatures are verified over the message as the client signed it, before the swap, and
/// replays are refused by signature, so the blockhash still does its two jobs: expiry and
/// uniqueness.
#[derive(Default)]
pub struct Blockhashes {
    /// (blockhash, the block height it was issued at), newest last.
    queue: std::collections::VecDeque<(Hash, u64)>,
}

impl Blockhashes {
    fn push(&mut self, hash: Hash, height: u64) {
        if self.queue.back().is_some_and(|(h, _)| *h == hash) {
            return;
        }
        self.queue.push_back((hash, height));
        while self.queue.len() as u64 > MAX_BLOCKHASH_AGE {
            self.queue.pop_front();
        }
    }

    /// The newest blockhash and the last block height at which it is valid.
    pub fn latest(&self) -> Option<(Hash, u64)> {
        self.queue
            .back()
            .map(|(h, height)| (*h, height + MAX_BLOCKHASH_AGE))
    }

    pub fn is_valid(&self, hash: &Hash) -> bool {
        self.queue.iter().any(|(h, _)| h == hash)
    }
}

fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// Program-test prefixes natively logged lines with "Program log: "; clients expect event
/// lines exactly as a cluster prints them.
pub fn normalize_logs(logs: Vec<String>) -> Vec<String> {
    logs.into_iter()
        .map(|l| match l.strip_prefix("Program log: Program data: ") {
            Some(rest) => format!("Program data: {rest}"),
            None => l,
        })
        .collect()
}

impl Chain {
    /// Wraps a started context; the genesis accounts given are indexed.
    pub fn new(
        ctx: ProgramTestContext,
        genesis_accounts: impl IntoIterator<Item = Pubkey>,
    ) -> Arc<Self> {
        let banks = ctx.banks_client.clone();
        let genesis_hash = ctx.genesis_config().hash();
        let faucet = ctx.payer.insecure_clone();
        let mut index = Index::default();
        index.note_accounts(genesis_accounts);
        index.note_accounts([faucet_pubkey(&faucet)]);
        let mut blockhashes = Blockhashes::default();
        blockhashes.push(ctx.last_blockhash, 0);
        Arc::new(Chain {
            blockhashes: std::sync::Mutex::new(blockhashes),
            gate: RwLock::new(()),
            ctx: Mutex::new(ctx),
            banks,
            index: std::sync::RwLock::new(index),
            genesis_hash,
            faucet,
            slot: AtomicU64::new(0),
            time_offset: AtomicU64::new(0),
            clock_time: std::sync::atomic::AtomicI64::new(now_unix()),
            rpc_calls: std::sync::Mutex::new(Default::default()),
        })
    }

    /// Counts one JSON-RPC call of `method` (a batch counts each of its calls).
    pub fn count_rpc_call(&self, method: &str) {
        let mut calls = self.rpc_calls.lock().unwrap_or_else(|e| e.into_inner());
        *calls.entry(method.to_string()).or_default() += 1;
    }

    /// The JSON-RPC calls served so far, by method.
    pub fn rpc_calls(&self) -> std::collections::BTreeMap<String, u64> {
        self.rpc_calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn genesis_hash(&self) -> Hash {
        self.genesis_hash
    }

    /// The funded genesis key: pays for airdrops and the seeding of the demo world.
    pub fn faucet(&self) -> &Keypair {
        &self.faucet
    }

    /// A BanksClient for reads, with the shared side of the bank lock held while it lives.
    pub async fn banks(&self) -> ReadBanks<'_> {
        ReadBanks {
            _guard: self.gate.read().await,
            client: self.banks.clone(),
        }
    }

    pub fn slot(&self) -> u64 {
        self.slot.load(Ordering::Relaxed)
    }

    /// The unix time the Clock sysvar shows.
    pub fn unix_time(&self) -> i64 {
        self.clock_time.load(Ordering::Relaxed)
    }

    /// Wall time plus any warp offset: what the next tick sets the Clock to.
    fn wall_time(&self) -> i64 {
        now_unix() + self.time_offset.load(Ordering::Relaxed) as i64
    }

    pub fn index(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(|e| e.into_inner())
    }

    fn index_mut(&self) -> std::sync::RwLockWriteGuard<'_, Index> {
        self.index.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Advances one slot and sets the Clock to wall time (plus any warp offset).
    pub async fn tick(&self) -> Result<(), String> {
        let _exclusive = self.gate.write().await;
        let mut ctx = self.ctx.lock().await;
        let current = ctx
            .banks_client
            .get_root_slot()
            .await
            .map_err(|e| e.to_string())?;
        let next = current.max(self.slot()) + 1;
        ctx.warp_to_slot(next).map_err(|e| format!("{e:?}"))?;
        let mut clock: Clock = ctx
            .banks_client
            .get_sysvar()
            .await
            .map_err(|e| e.to_string())?;
        clock.unix_timestamp = self.wall_time();
        ctx.set_sysvar(&clock);
        self.clock_time
            .store(clock.unix_timestamp, Ordering::Relaxed);
        self.slot.store(next, Ordering::Relaxed);
        self.blockhashes().push(ctx.last_blockhash, next);
        Ok(())
    }

    fn blockhashes(&self) -> std::sync::MutexGuard<'_, Blockhashes> {
        self.blockhashes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newest client-facing blockhash and its last valid block height.
    pub fn latest_blockhash_info(&self) -> (Hash, u64) {
        self.blockhashes()
            .latest()
            .expect("the queue starts with the genesis blockhash")
    }

    /// Whether a client-facing blockhash is still usable.
    pub fn is_blockhash_valid(&self, hash: &Hash) -> bool {
        self.blockhashes().is_valid(hash)
    }

    /// The block height: one block per slot (the localnet skips no slot).
    pub fn block_height(&self) -> u64 {
        self.slot()
    }

    /// `tx` with its blockhash checked against the client-facing queue and replaced by the
    /// bank's current one (or replaced unchecked when `replace` is asked, as
    /// `replaceRecentBlockhash` does).
    async fn for_bank(
        &self,
        mut tx: VersionedTransaction,
        check: bool,
    ) -> Result<VersionedTransaction, TransactionError> {
        if check && !self.is_blockhash_valid(tx.message.recent_blockhash()) {
            return Err(TransactionError::BlockhashNotFound);
        }
        let bank_hash = self
            .banks
            .get_latest_blockhash()
            .await
            .map_err(|_| TransactionError::ClusterMaintenance)?;
        tx.message.set_recent_blockhash(bank_hash);
        Ok(tx)
    }

    /// Test-only time travel: moves the clock `seconds` ahead of wall time and advances the
    /// slot by the matching number of slots, so time windows and expiries elapse.
    pub async fn warp(&self, seconds: u64) -> Result<(), String> {
        self.time_offset.fetch_add(seconds, Ordering::Relaxed);
        let slots = (seconds * 1000)
            .div_ceil(SLOT_DURATION.as_millis() as u64)
            .max(1);
        {
            let _exclusive = self.gate.write().await;
            let mut ctx = self.ctx.lock().await;
            let target = self.slot() + slots;
            ctx.warp_to_slot(target).map_err(|e| format!("{e:?}"))?;
            self.slot.store(target, Ordering::Relaxed);
        }
        // Sets the clock's unix time at the new slot.
        self.tick().await
    }

    /// Runs the slot timer until the chain is dropped.
    pub fn spawn_clock(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(SLOT_DURATION);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                interval.tick().await;
                let Some(chain) = weak.upgrade() else { break };
                if let Err(e) = chain.tick().await {
                    tracing::warn!("localnet slot timer: {e}");
                }
            }
        })
    }

    pub async fn account(&self, key: &Pubkey) -> Result<Option<Account>, BanksClientError> {
        let _shared = self.gate.read().await;
        self.banks.get_account(*key).await
    }

    /// The newest client-facing blockhash.
    pub fn latest_blockhash(&self) -> Hash {
        self.latest_blockhash_info().0
    }

    /// Writes an account directly (genesis set-up, tests).
    pub async fn set_account(&self, key: &Pubkey, account: Account) {
        let _exclusive = self.gate.write().await;
        let mut ctx = self.ctx.lock().await;
        ctx.set_account(key, &AccountSharedData::from(account));
        drop(ctx);
        self.index_mut().note_accounts([*key]);
    }

    /// The addresses a v0 transaction loads from lookup tables, writable first, read from
    /// the tables as they are when it executes (the record keeps them: a table may be
    /// extended later).
    async fn loaded_addresses_unlocked(&self, tx: &VersionedTransaction) -> LoadedAddresses {
        let mut loaded = LoadedAddresses::default();
        if let VersionedMessage::V0(m) = &tx.message {
            for lookup in &m.address_table_lookups {
                let Ok(Some(table)) = self.banks.get_account(lookup.account_key).await else {
                    continue;
                };
                let Ok(table) = AddressLookupTable::deserialize(&table.data) else {
                    continue;
                };
                let at = |i: &u8| table.addresses.get(usize::from(*i)).copied();
                loaded
                    .writable
                    .extend(lookup.writable_indexes.iter().filter_map(at));
                loaded
                    .readonly
                    .extend(lookup.readonly_indexes.iter().filter_map(at));
            }
        }
        loaded
    }

    /// Simulates `tx` (its blockhash must be a client-facing one unless `replace_blockhash`).
    pub async fn simulate(
        &self,
        tx: VersionedTransaction,
        replace_blockhash: bool,
    ) -> Result<Simulation, BanksClientError> {
        Ok(self.simulate_reading(tx, replace_blockhash, &[]).await?.0)
    }

    /// Simulates `tx` and reads `watch` in the bank state the simulation ran against (the
    /// shared gate is held across both, so no transaction lands in between): what
    /// `simulateTransaction`'s `accounts` option returns. The bank does not hand out the
    /// simulation's writes, so an account the transaction writes comes back as it was before;
    /// for accounts it only reads, that is the same state.
    pub async fn simulate_reading(
        &self,
        tx: VersionedTransaction,
        replace_blockhash: bool,
        watch: &[Pubkey],
    ) -> Result<(Simulation, Vec<Option<Account>>), BanksClientError> {
        let _shared = self.gate.read().await;
        let mut accounts = Vec::with_capacity(watch.len());
        for key in watch {
            accounts.push(self.banks.get_account(*key).await?);
        }
        Ok((self.simulate_locked(tx, replace_blockhash).await?, accounts))
    }

    async fn simulate_locked(
        &self,
        tx: VersionedTransaction,
        replace_blockhash: bool,
    ) -> Result<Simulation, BanksClientError> {
        let tx = match self.for_bank(tx, !replace_blockhash).await {
            Ok(tx) => tx,
            Err(e) => {
                return Ok(Simulation {
                    result: Err(e),
                    logs: vec![],
                    units_consumed: 0,
                    return_data: None,
                    loaded_accounts_data_size: 0,
                })
            }
        };
        let out = self.banks.simulate_transaction(tx).await?;
        let result = out.result.unwrap_or(Ok(()));
        let details = out.simulation_details;
        Ok(Simulation {
            result,
            logs: normalize_logs(details.as_ref().map(|d| d.logs.clone()).unwrap_or_default()),
            units_consumed: details
                .as_ref()
                .map(|d| d.units_consumed)
                .unwrap_or_default(),
            return_data: details.as_ref().and_then(|d| d.return_data.clone()),
            loaded_accounts_data_size: details
                .as_ref()
                .map(|d| d.loaded_accounts_data_size)
                .unwrap_or_default(),
        })
    }

    /// Executes a transaction whose signatures the caller verified, records it, and returns
    /// its signature. A transaction that fails during execution is recorded with its error
    /// (it paid its fee, as on a cluster); one rejected before execution is not.
    pub async fn submit(&self, tx: VersionedTransaction) -> Result<Signature, SubmitError> {
        let signature = tx.signatures.first().copied().unwrap_or_default();
        if self.index().transaction(&signature).is_some() {
            return Ok(signature);
        }
        let _exclusive = self.gate.write().await;
        // The same transaction may have landed while this one waited for the lock.
        if self.index().transaction(&signature).is_some() {
            return Ok(signature);
        }
        let original = tx;
        let tx = self
            .for_bank(original.clone(), true)
            .await
            .map_err(SubmitError::Rejected)?;
        let loaded = self.loaded_addresses_unlocked(&tx).await;
        let keys: Vec<Pubkey> = tx
            .message
            .static_account_keys()
            .iter()
            .chain(&loaded.writable)
            .chain(&loaded.readonly)
            .copied()
            .collect();
        let pre = self.balances(&keys).await?;
        let fee = self
            .fee_unlocked(&tx.message)
            .await
            .map_err(|e| SubmitError::Bank(e.to_string()))?
            .unwrap_or_default();
        let outcome = self
            .banks
            .process_transaction_with_metadata(tx.clone())
            .await
            .map_err(|e| SubmitError::Bank(e.to_string()))?;
        let Some(meta) = outcome.metadata else {
            return Err(match outcome.result {
                Err(e) => SubmitError::Rejected(e),
                Ok(()) => SubmitError::Bank("executed without metadata".into()),
            });
        };
        let post = self.balances(&keys).await?;
        let slot = self.slot();
        let record = TxRecord {
            slot,
            block_time: self.unix_time(),
            transaction: original,
            meta: TransactionStatusMeta {
                status: outcome.result,
                fee,
                pre_balances: pre,
                post_balances: post,
                log_messages: Some(normalize_logs(meta.log_messages)),
                return_data: meta.return_data,
                loaded_addresses: loaded,
                compute_units_consumed: Some(meta.compute_units_consumed),
                ..TransactionStatusMeta::default()
            },
        };
        let mut index = self.index_mut();
        index.record(signature, record, &keys);
        index.note_accounts(keys);
        Ok(signature)
    }

    /// The fee of `message`: its signatures and, when it carries ComputeBudget instructions,
    /// its priority fee; `None` when its blockhash is no longer valid.
    pub async fn fee(&self, message: &VersionedMessage) -> Result<Option<u64>, BanksClientError> {
        if !self.is_blockhash_valid(message.recent_blockhash()) {
            return Ok(None);
        }
        let _shared = self.gate.read().await;
        self.fee_unlocked(message).await
    }

    /// BanksClient prices legacy messages against the bank's own blockhashes only, and the
    /// fee depends on nothing but the signature count and the instructions' programs and
    /// ComputeBudget data. So this prices a legacy stand-in with those and no accounts.
    async fn fee_unlocked(
        &self,
        message: &VersionedMessage,
    ) -> Result<Option<u64>, BanksClientError> {
        let signatures = message.header().num_required_signatures;
        if signatures == 0 {
            return Ok(Some(0));
        }
        let keys = message.static_account_keys();
        let mut account_keys: Vec<Pubkey> = (0..signatures).map(|_| Pubkey::new_unique()).collect();
        let mut instructions = Vec::new();
        for ix in message.instructions() {
            let Some(program) = keys.get(usize::from(ix.program_id_index)) else {
                continue;
            };
            let index = match account_keys.iter().position(|k| k == program) {
                Some(i) => i,
                None => {
                    account_keys.push(*program);
                    account_keys.len() - 1
                }
            };
            instructions.push(
                solana_sdk::message::compiled_instruction::CompiledInstruction {
                    program_id_index: index as u8,
                    accounts: Vec::new(),
                    data: ix.data.clone(),
                },
            );
        }
        let stand_in = solana_sdk::message::Message {
            header: solana_sdk::message::MessageHeader {
                num_required_signatures: signatures,
                num_readonly_signed_accounts: 0,
                num_readonly_unsigned_accounts: (account_keys.len() - usize::from(signatures))
                    as u8,
            },
            account_keys,
            recent_blockhash: self.banks.get_latest_blockhash().await?,
            instructions,
        };
        self.banks.get_fee_for_message(stand_in).await
    }

    async fn balances(&self, keys: &[Pubkey]) -> Result<Vec<u64>, SubmitError> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            out.push(
                self.banks
                    .get_balance(*k)
                    .await
                    .map_err(|e| SubmitError::Bank(e.to_string()))?,
            );
        }
        Ok(out)
    }

    /// Every indexed account owned by `owner`, with its data.
    pub async fn program_accounts(
        &self,
        owner: &Pubkey,
    ) -> Result<Vec<(Pubkey, Account)>, BanksClientError> {
        let keys = self.index().accounts();
        // One consistent view: no transaction lands halfway through the scan.
        let _shared = self.gate.read().await;
        let mut out = Vec::new();
        for key in keys {
            if let Some(acc) = self.banks.get_account(key).await? {
                if acc.owner == *owner && acc.lamports > 0 {
                    out.push((key, acc));
                }
            }
        }
        Ok(out)
    }
}

/// A BanksClient used under the shared side of the bank lock.
pub struct ReadBanks<'a> {
    _guard: RwLockReadGuard<'a, ()>,
    client: BanksClient,
}

impl std::ops::Deref for ReadBanks<'_> {
    type Target = BanksClient;
    fn deref(&self) -> &BanksClient {
        &self.client
    }
}

fn faucet_pubkey(k: &Keypair) -> Pubkey {
    solana_sdk::signer::Signer::pubkey(k)
}
