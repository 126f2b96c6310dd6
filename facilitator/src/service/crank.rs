//! The crank: in the background, closes this facilitator's payment records that can close
//! (their deadline and dispute window passed), so that every settlement's rent comes back.
//!
//! First it releases the held shares that are due (docs/holdback.md): the hold is over, or
//! the arbitration of a dispute ended undecided; to the recipient's associated token account
//! when it exists (the crank creates none: a payee could close it again and keep the rent the
//! facilitator paid), else the share waits for anyone to release it. A log closes only once
//! its share is paid out.
//!
//! Each round reads the cluster's clock and the facilitator's logs, keeps each closable
//! payment's receipt in the record store first (so /receipt still answers for it), then
//! closes at most [`MAX_CLOSES_PER_ROUND`] of them, as many per transaction as fit. It
//! cannot race a dispute or a settlement: the chain closes a log only once no dispute of it
//! (past its window) and no settlement of its payment id (past its deadline) can land, and a
//! close touches none of a payer's accounts, so settlements of the same payer run beside it
//! unchanged.
//!
//! With `PULL_SUBSCRIPTIONS` on, it pulls the gated subscriptions it sends whose pull is due
//! ([`crate::service::pulls`]).
//!
//! Then the payment channels it holds (`trust_gate_client::channel_reclaim`): it reclaims the
//! rent of each distributed channel whose open slot is old and whose gate record is closed,
//! and closes the gate records of channels the program deleted first. A sealed channel whose
//! record is open waits for the facilitator's close through the gate, which gives its
//! feedback. An `upto` channel whose claim can no longer come (by its open's block time) is
//! sealed at nothing and distributed, the deposit back to the payer; a gated one is closed
//! through the gate in the same transaction (the deposit back to the payer's policy too). An
//! open `batch-settlement` session's channel is its session's to close, never the crank's;
//! but a channel someone else moved on that no session of the facilitator closes (its
//! payer's `request_close` past the grace period, say, while the facilitator was down and
//! lost its sessions) is finished here: sealed, closed through the gate, distributed.

use crate::payment_records::PaymentRecord;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use std::sync::Arc;
use std::time::Duration;
use trust_gate_client::chain;
use trust_gate_client::channel_reclaim;
use trust_gate_client::error::ClientError;
use trust_gate_client::holdback::HeldPayment;
use trust_gate_client::reclaim::{self, Closable, Skipped};
use trust_gate_client::settle::ComputeBudget;

/// The most payments one round closes (about 8 transactions); the rest wait for the next.
pub const MAX_CLOSES_PER_ROUND: usize = 100;

/// What a round did.
#[derive(Clone, Debug, Default)]
pub struct Round {
    /// Payments whose records closed.
    pub closed: usize,
    /// Lamports returned (to this facilitator, and to the dispute records' rent payers).
    pub lamports: u64,
    pub transactions: usize,
    /// Closable payments left for the next round (past the round's bound, or whose close
    /// failed).
    pub left: usize,
    /// Records not yet closable.
    pub open: usize,
    /// Held shares released to their payee (`release_holdback`).
    pub holdbacks_released: usize,
    /// Held shares due whose recipient has no associated token account of the mint.
    pub holdbacks_without_account: usize,
    /// Gated subscriptions pulled (`PULL_SUBSCRIPTIONS`).
    pub pulled: usize,
    /// Pulls due whose payee's recipient has no associated token account of the mint.
    pub pulls_without_account: usize,
    pub skipped: Vec<Skipped>,
    /// Why a transaction failed (its payments are tried again next round).
    pub failures: Vec<String>,
    /// Distributed channels whose rent came back (`reclaim`).
    pub channels_reclaimed: usize,
    /// Gate records of channels the program deleted, closed.
    pub channel_records_closed: usize,
    /// Distributed channels inside their slot window.
    pub channels_waiting: usize,
    /// Sealed channels whose gate record is open (the facilitator's close comes first).
    pub channels_awaiting_close: usize,
    /// Stock `upto` channels whose claim can no longer come, sealed at nothing and
    /// distributed (the deposit back to the payer, the escrow's rent to the facilitator).
    pub channels_unclaimed_closed: usize,
    /// Channels another party moved on (their payer's grace period over, or sealed by
    /// someone else) whose close the crank finished: sealed, closed through the gate and
    /// distributed.
    pub channels_finished: usize,
}

impl Facilitator {
    /// One round of the crank (see the module docs). Needs the facilitator's keypair.
    pub async fn reclaim_once(&self) -> Result<Round, Rejection> {
        let Some(keypair) = self.key.keypair() else {
            return Err(Rejection::new(
                Reason::FacilitatorNotSigning,
                "this facilitator is configured with a public key only and cannot close records",
            ));
        };
        let fac = self.facilitator();
        let now = chain::unix_time(&self.chain.rpc).await?;
        let scan = reclaim::scan(&self.chain.rpc, &self.chain.builder, &fac, now).await?;
        let mut round = Round {
            open: scan.open.len(),
            skipped: scan.skipped,
            left: scan.closable.len().saturating_sub(MAX_CLOSES_PER_ROUND),
            ..Round::default()
        };
        self.release_holdbacks(keypair, scan.releasable, &mut round)
            .await?;
        if self.settings.pull_subscriptions {
            self.pull_due(keypair, now, &mut round).await?;
        }
        let closable: Vec<Closable> = scan
            .closable
            .into_iter()
            .take(MAX_CLOSES_PER_ROUND)
            .collect();
        for run in reclaim::batches(&self.chain.builder, &fac, &closable) {
            // The receipts first: a close that lands is never without its record.
            let records = match self.keep_receipts(run).await {
                Ok(records) => records,
                Err(e) => {
                    round.failures.push(e.message.clone());
                    round.left += run.len();
                    continue;
                }
            };
            match reclaim::close_run(&self.chain.rpc, &self.chain.builder, keypair, run).await {
                Ok(signature) => {
                    self.note_closed(records, signature).await;
                    round.closed += run.len();
                    round.transactions += 1;
                    round.lamports = run
                        .iter()
                        .fold(round.lamports, |sum, c| sum.saturating_add(c.lamports()));
                }
                Err(e) => {
                    round.failures.push(e.to_string());
                    round.left += run.len();
                }
            }
        }
        self.reclaim_channels(keypair, &mut round).await?;
        Ok(round)
    }

    /// Releases the due held shares, at most [`MAX_CLOSES_PER_ROUND`] a round, as many per
    /// transaction as fit.
    async fn release_holdbacks(
        &self,
        keypair: &solana_sdk::signature::Keypair,
        due: Vec<HeldPayment>,
        round: &mut Round,
    ) -> Result<(), Rejection> {
        let mut ready = Vec::new();
        for mut p in due.into_iter().take(MAX_CLOSES_PER_ROUND) {
            let (program, _) = self.mint(&p.mint).await?;
            p.token_program = program.id();
            ready.push((p, program.associated_account(&p.recipient, &p.mint)));
        }
        let accounts: Vec<_> = ready.iter().map(|(_, to)| *to).collect();
        let found = chain::accounts(&self.chain.rpc, &accounts).await?;
        let (ready, missing): (Vec<_>, Vec<_>) = ready
            .into_iter()
            .zip(found)
            .partition(|(_, acc)| acc.is_some());
        round.holdbacks_without_account = missing.len();
        let ready: Vec<(HeldPayment, Pubkey)> = ready.into_iter().map(|(r, _)| r).collect();
        let b = &self.chain.builder;
        let release = |(p, to): &(HeldPayment, Pubkey)| b.release_holdback(p, to);
        for run in reclaim::runs(&ready, &keypair.pubkey(), release) {
            let ixs: Vec<_> = run.iter().map(release).collect();
            match reclaim::send_run(&self.chain.rpc, keypair, &ixs).await {
                Ok(_) => {
                    round.holdbacks_released += run.len();
                    round.transactions += 1;
                }
                Err(e) => round.failures.push(e.to_string()),
            }
        }
        Ok(())
    }

    /// The channels' part of a round (see the module docs).
    async fn reclaim_channels(
        &self,
        keypair: &solana_sdk::signature::Keypair,
        round: &mut Round,
    ) -> Result<(), Rejection> {
        let fac = self.facilitator();
        let slot = self.chain.rpc.get_slot().await.map_err(ClientError::from)?;
        let now = chain::unix_time(&self.chain.rpc).await?;
        let scan =
            channel_reclaim::scan(&self.chain.rpc, &self.chain.builder, &fac, slot, now).await?;
        round.channels_waiting = scan.waiting.len();
        round.channels_awaiting_close = scan.awaiting_close.len();
        // Deposits whose claim can no longer come, unclaimed stock ones first (their reclaim
        // comes in a later round); a gated one through the gate (the whole deposit back to
        // the payer's policy, no feedback), in one v0 transaction.
        let stale = (scan.stale_open.iter().map(|s| (s, false)))
            .chain(scan.stale_recorded.iter().map(|s| (s, true)));
        for ((address, channel), gated) in stale {
            let close =
                channel_reclaim::abandoned_close(&self.chain.rpc, &fac, address, channel, now)
                    .await;
            let sent = match close {
                Ok(Some(ixs)) if gated => (self.gated_abandoned_close(address, ixs, keypair))
                    .await
                    .map_err(|e| e.message),
                Ok(Some(ixs)) => reclaim::send_run(&self.chain.rpc, keypair, &ixs)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                Ok(None) => continue,
                Err(e) => Err(e.to_string()),
            };
            match sent {
                Ok(()) => {
                    round.transactions += 1;
                    round.channels_unclaimed_closed += 1;
                    self.closed_advance(address).await;
                }
                Err(e) => round.failures.push(e),
            }
        }
        // Channels someone else sealed, or whose payer's grace period ran out, that no session
        // of this facilitator closes (it lost them, or they are `upto` deposits): finished
        // here, so that the escrow's and the gate record's rent come back.
        for (address, channel, recorded) in &scan.unfinished {
            match self
                .finish_close(address, channel, *recorded, keypair)
                .await
            {
                Ok(true) => {
                    round.transactions += 1;
                    round.channels_finished += 1;
                    self.closed_advance(address).await;
                }
                Ok(false) => {}
                Err(e) => round.failures.push(e.message),
            }
        }
        let work = scan.work(&self.chain.builder, &fac);
        for run in reclaim::runs(&work, &fac, |w| w.instruction.clone()) {
            let ixs: Vec<_> = run.iter().map(|w| w.instruction.clone()).collect();
            match reclaim::send_run(&self.chain.rpc, keypair, &ixs).await {
                Ok(_) => {
                    round.transactions += 1;
                    for w in run {
                        round.lamports = round.lamports.saturating_add(w.lamports);
                        if let Some(channel) = w.reclaimed {
                            self.released_advance(&channel).await;
                            round.channels_reclaimed += 1;
                        } else {
                            round.channel_records_closed += 1;
                        }
                    }
                }
                Err(e) => round.failures.push(e.to_string()),
            }
        }
        Ok(())
    }

    /// Finishes the close of a channel another party moved on (see `ChannelScan::unfinished`):
    /// `seal` when its grace period ran out, the gate's close when its record is open, the
    /// `distribute` (its distribution read from its open) when not yet done, in one
    /// transaction. Left alone (false) while a session of this facilitator holds it.
    async fn finish_close(
        &self,
        address: &solana_sdk::pubkey::Pubkey,
        channel: &trust_gate_client::channels::Channel,
        recorded: bool,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<bool, crate::reject::Rejection> {
        use trust_gate_client::channels::{self, Status};
        let held = self
            .sessions
            .get(address)
            .await?
            .is_some_and(|s| s.closed_by.is_none());
        if held {
            return Ok(false);
        }
        let opened = channel_reclaim::opened_with(&self.chain.rpc, address, channel).await?;
        let tag = match &opened {
            Some(o) if o.session => trust_gate_x402::batch::SCHEME_GATED_BATCH,
            _ => trust_gate_x402::upto::SCHEME_GATED_UPTO,
        };
        let mut ixs = ComputeBudget::limit(trust_gate_client::units::channel_close(recorded));
        let budget = ixs.len();
        if channel.status == Status::Closing {
            ixs.push(channels::seal(address));
        }
        if recorded {
            if let Some(close) = self.gate_close_if_recorded(address, tag).await? {
                ixs.push(close);
            }
        }
        if channel.status != Status::Distributed {
            // Without the open's history the distribute is left to anyone who has it.
            if let Some(o) = &opened {
                ixs.push(o.distribute(address, channel));
            }
        }
        if ixs.len() == budget {
            return Ok(false);
        }
        self.send_own(&ixs, recorded, keypair, Reason::BatchSettlementSimulation)
            .await?;
        tracing::info!(channel = %address, status = ?channel.status, settled = channel.settled, "finished a channel's close");
        Ok(true)
    }

    /// `[settle_and_seal, distribute]` of an abandoned gated deposit, with the gate's close
    /// between them, sent as v0 with the facilitator's lookup tables.
    async fn gated_abandoned_close(
        &self,
        channel: &solana_sdk::pubkey::Pubkey,
        mut ixs: Vec<solana_sdk::instruction::Instruction>,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<(), crate::reject::Rejection> {
        let close = self
            .gate_close(channel, trust_gate_x402::upto::SCHEME_GATED_UPTO)
            .await?;
        ixs.insert(1, close);
        let mut all = ComputeBudget::limit(trust_gate_client::units::GATED_CHANNEL_CLOSE);
        all.extend(ixs);
        self.send_own(&all, true, keypair, Reason::UptoSettlementSimulation)
            .await
            .map(|_| ())
    }

    /// Keeps what each payment's log holds (with what the record store already knew: the
    /// settlement's signature, the payer agent) before the log closes; returns the records
    /// kept, with their payments' ids.
    async fn keep_receipts(
        &self,
        run: &[Closable],
    ) -> Result<Vec<([u8; 32], PaymentRecord)>, Rejection> {
        let mut kept = Vec::with_capacity(run.len());
        for c in run {
            let id = c.receipt.payment_id_hash;
            let mut record = self.payment_records.record(&id).await?.unwrap_or_default();
            let mut receipt = c.receipt.clone();
            receipt.signature = receipt.signature.or(record.signature);
            receipt.payer_asset = receipt.payer_asset.or(record.payer_asset);
            record.receipt = Some(receipt);
            record.disputed = c.dispute.is_some();
            self.payment_records.keep(&id, &record).await?;
            kept.push((id, record));
        }
        Ok(kept)
    }

    /// Adds the closing transaction to the records just kept (best effort: the receipt is
    /// kept already).
    async fn note_closed(
        &self,
        records: Vec<([u8; 32], PaymentRecord)>,
        signature: solana_sdk::signature::Signature,
    ) {
        for (id, mut record) in records {
            record.closed_by = Some(signature);
            let _ = self.payment_records.keep(&id, &record).await;
        }
    }
}

/// Runs the crank every `every`, the first round one interval after the start (a process
/// starting under load is not met by a scan of all its logs), until the task is aborted;
/// each round that did or found something is logged.
pub fn spawn(f: Arc<Facilitator>, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match f.reclaim_once().await {
                Ok(r)
                    if r.closed > 0
                        || r.holdbacks_released > 0
                        || r.holdbacks_without_account > 0
                        || r.pulled > 0
                        || r.pulls_without_account > 0
                        || r.channels_reclaimed > 0
                        || r.channel_records_closed > 0
                        || r.channels_unclaimed_closed > 0
                        || r.channels_finished > 0
                        || !r.failures.is_empty()
                        || !r.skipped.is_empty() =>
                {
                    tracing::info!(
                        closed = r.closed,
                        holdbacks_released = r.holdbacks_released,
                        holdbacks_without_account = r.holdbacks_without_account,
                        pulled = r.pulled,
                        pulls_without_account = r.pulls_without_account,
                        channels_reclaimed = r.channels_reclaimed,
                        channel_records_closed = r.channel_records_closed,
                        channels_unclaimed_closed = r.channels_unclaimed_closed,
                        channels_finished = r.channels_finished,
                        lamports = r.lamports,
                        transactions = r.transactions,
                        left = r.left,
                        open = r.open,
                        skipped = r.skipped.len(),
                        failures = ?r.failures,
                        "reclaimed payment records"
                    );
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e.message, "reclaim round failed"),
            }
        }
    })
}
