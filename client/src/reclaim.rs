//! Rent that comes back: a facilitator's payment records (feedback logs and their dispute
//! records) that can close, and the transactions that close them, as many per transaction
//! as fit in one packet.
//!
//! A log closes once its payment can be neither disputed nor settled again (after its
//! deadline and its dispute window: `close_payment_records`). Closing needs no signature but
//! the fee payer's; the rent goes back to whoever paid it.

use crate::chain;
use crate::decode::FeedbackLog;
use crate::error::ClientError;
use crate::holdback::HeldPayment;
use crate::instructions::Builder;
use crate::receipts::{Disputed, Receipt};
use crate::settle;
use anchor_lang::prelude::Pubkey;
use anchor_lang::Discriminator;
use gate::state::{ClosableLog, DisputeRecord};
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::filter::{Memcmp, RpcFilterType};
use solana_sdk::account::Account;
use solana_sdk::hash::Hash;
use solana_sdk::instruction::Instruction;
use solana_sdk::message::Message;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use solana_sdk::transaction::Transaction;

/// A payment's records that may close now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closable {
    pub log: Pubkey,
    /// What the log holds, with its dispute record's fields when disputed (kept by a
    /// facilitator before it closes).
    pub receipt: Receipt,
    /// The log's lamports: what its facilitator gets back.
    pub log_lamports: u64,
    /// The dispute record's rent payer and lamports, when the payment was disputed.
    pub dispute: Option<(Pubkey, u64)>,
}

impl Closable {
    /// Every lamport the close returns.
    pub fn lamports(&self) -> u64 {
        self.log_lamports
            .saturating_add(self.dispute.map_or(0, |(_, l)| l))
    }
}

/// A payment's records that may not close, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub log: Pubkey,
    pub why: String,
}

/// What a scan of a facilitator's payment records found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    pub closable: Vec<Closable>,
    /// Still open: disputable, before their deadline, or holding a share (with the second
    /// they close after, at the earliest).
    pub open: Vec<(Pubkey, i64)>,
    /// Held shares anyone may release now (docs/holdback.md): the hold is over, or the
    /// arbitration of their dispute ended undecided. `token_program` is left to the caller
    /// (the mint's program), since the log does not name it.
    pub releasable: Vec<HeldPayment>,
    pub skipped: Vec<Skipped>,
}

/// The gate's payment logs of `facilitator`, by `getProgramAccounts` with a discriminator
/// filter and a memcmp on the facilitator (offset 8).
async fn logs_of(
    rpc: &RpcClient,
    gate_program: &Pubkey,
    facilitator: &Pubkey,
) -> Result<Vec<(Pubkey, Account)>, ClientError> {
    let filters = vec![
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            0,
            FeedbackLog::DISCRIMINATOR.to_vec(),
        )),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(8, facilitator.to_bytes().to_vec())),
    ];
    chain::program_accounts(rpc, gate_program, filters).await
}

/// Finds `facilitator`'s payment records, which may close at unix time `now` (the cluster's
/// clock: see `chain::unix_time`) and which held shares anyone may release. Two reads, plus one per 100 closable payments
/// for their dispute records.
pub async fn scan(
    rpc: &RpcClient,
    b: &Builder,
    facilitator: &Pubkey,
    now: i64,
) -> Result<Scan, ClientError> {
    let mut scan = Scan::default();
    let mut ready = Vec::new();
    for (log, acc) in logs_of(rpc, &b.ids.gate, facilitator).await? {
        let (Some(closable), Some(receipt)) = (
            ClosableLog::read(&acc.data),
            Receipt::from_account_data(&acc.data),
        ) else {
            scan.skipped.push(Skipped {
                log,
                why: "does not read as a payment log".into(),
            });
            continue;
        };
        if closable.facilitator != *facilitator
            || log != b.pda.feedback_log(facilitator, &closable.payment_id_hash)
        {
            scan.skipped.push(Skipped {
                log,
                why: "not at its payment's address".into(),
            });
        } else if closable.holds_share {
            // The log closes only once its share is paid out.
            scan.open.push((log, closable.closes_after));
            if let Some(p) = HeldPayment::from_log_data(&acc.data, Pubkey::default())
                .filter(|p| p.releasable_at(now))
            {
                scan.releasable.push(p);
            }
        } else if now <= closable.closes_after {
            scan.open.push((log, closable.closes_after));
        } else {
            ready.push((log, acc.lamports, receipt));
        }
    }
    let disputes: Vec<Pubkey> = ready
        .iter()
        .map(|(_, _, r)| b.pda.dispute(facilitator, &r.payment_id_hash))
        .collect();
    let found = chain::accounts(rpc, &disputes).await?;
    for ((log, log_lamports, mut receipt), record) in ready.into_iter().zip(found) {
        let record = record.filter(|a| a.owner == b.ids.gate);
        let dispute = match record {
            None => None,
            Some(a) => match DisputeRecord::rent_recipient(&a.data) {
                Some(payer) => {
                    receipt.dispute = Disputed::from_record_data(&a.data);
                    Some((payer, a.lamports))
                }
                None => {
                    scan.skipped.push(Skipped {
                        log,
                        why: "its dispute address holds something else".into(),
                    });
                    continue;
                }
            },
        };
        scan.closable.push(Closable {
            log,
            receipt,
            log_lamports,
            dispute,
        });
    }
    Ok(scan)
}

/// The close instruction of `c`.
pub fn close_instruction(b: &Builder, c: &Closable) -> Instruction {
    let f = c.receipt.facilitator;
    let rent_payer = c.dispute.map_or(f, |(payer, _)| payer);
    b.close_payment_records(&f, &c.receipt.payment_id_hash, &rent_payer)
}

/// Splits `closes` into the fewest runs whose transaction, paid by `fee_payer`, fits in one
/// packet (1 232 bytes), in order.
pub fn batches<'a>(b: &Builder, fee_payer: &Pubkey, closes: &'a [Closable]) -> Vec<&'a [Closable]> {
    runs(closes, fee_payer, |c| close_instruction(b, c))
}

/// Splits `items` into the fewest runs whose transaction of their instructions (`to_ix`),
/// paid by `fee_payer`, fits in one packet, in order.
pub fn runs<'a, T>(
    items: &'a [T],
    fee_payer: &Pubkey,
    to_ix: impl Fn(&T) -> Instruction,
) -> Vec<&'a [T]> {
    let fits = |run: &[T]| {
        let ixs: Vec<Instruction> = run.iter().map(&to_ix).collect();
        let message = Message::new_with_blockhash(&ixs, Some(fee_payer), &Hash::default());
        let tx = Transaction::new_unsigned(message);
        bincode::serialized_size(&tx).is_ok_and(|n| n as usize <= settle::PACKET_LIMIT)
    };
    let mut out = Vec::new();
    let mut start = 0;
    while start < items.len() {
        let mut end = start + 1;
        while end < items.len() && fits(&items[start..=end]) {
            end += 1;
        }
        out.push(&items[start..end]);
        start = end;
    }
    out
}

/// Closes one run of [`batches`] in one transaction paid (and signed) by `fee_payer`, sent
/// with preflight and confirmed.
pub async fn close_run(
    rpc: &RpcClient,
    b: &Builder,
    fee_payer: &Keypair,
    run: &[Closable],
) -> Result<Signature, ClientError> {
    let ixs: Vec<Instruction> = run.iter().map(|c| close_instruction(b, c)).collect();
    send_run(rpc, fee_payer, &ixs).await
}

/// Sends `ixs` in one transaction paid (and signed) by `fee_payer`, with preflight, and
/// confirms it.
pub async fn send_run(
    rpc: &RpcClient,
    fee_payer: &Keypair,
    ixs: &[Instruction],
) -> Result<Signature, ClientError> {
    let blockhash = rpc.get_latest_blockhash().await?;
    let tx =
        Transaction::new_signed_with_payer(ixs, Some(&fee_payer.pubkey()), &[fee_payer], blockhash);
    settle::send(rpc, &tx.into()).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{Network, ProgramIds};

    fn closable(disputed_by_payer: bool) -> Closable {
        let facilitator = Pubkey::new_from_array([1; 32]);
        let hash: [u8; 32] = rand_hash();
        Closable {
            log: Pubkey::new_unique(),
            receipt: Receipt {
                payment_id_hash: hash,
                facilitator,
                payee_asset: Pubkey::new_unique(),
                payer_asset: None,
                payer_wallet: Pubkey::new_unique(),
                mint: Pubkey::new_unique(),
                amount: 1,
                value_decimals: 6,
                score: 90,
                slot: 1,
                created_at: 1,
                deadline: Some(2),
                signature: None,
                dispute: None,
                holdback: None,
            },
            log_lamports: 10,
            dispute: disputed_by_payer.then(|| (Pubkey::new_unique(), 5)),
        }
    }

    fn rand_hash() -> [u8; 32] {
        Pubkey::new_unique().to_bytes()
    }

    #[test]
    fn closes_pack_into_transactions_that_fit_a_packet() {
        let b = Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap();
        let fee_payer = Pubkey::new_from_array([1; 32]);
        for disputed in [false, true] {
            let closes: Vec<Closable> = (0..40).map(|_| closable(disputed)).collect();
            let runs = batches(&b, &fee_payer, &closes);
            assert_eq!(runs.iter().map(|r| r.len()).sum::<usize>(), 40);
            // Each run is as long as fits: one more would not.
            for (i, run) in runs.iter().enumerate() {
                assert!(!run.is_empty());
                if i + 1 < runs.len() {
                    let longer = &closes[(40 - runs[i..].iter().map(|r| r.len()).sum::<usize>())..]
                        [..run.len() + 1];
                    assert_eq!(batches(&b, &fee_payer, longer).len(), 2);
                }
            }
            let per_tx = runs[0].len();
            // 13 closes of undisputed payments per transaction; 9 when each dispute record's rent
            // payer is another key.
            assert_eq!(per_tx, if disputed { 9 } else { 13 });
        }
        assert_eq!(closable(true).lamports(), 15);
    }
}
