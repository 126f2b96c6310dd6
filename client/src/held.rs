//! The held payments on chain (docs/holdback.md): the open logs of held payments naming a
//! payee agent, a payer's wallet or a payment id, each with its receipt and what the moves of
//! its share need.

use crate::holdback::HeldPayment;
use gate::state::FeedbackLog;
use solana_sdk::pubkey::Pubkey;

/// Whose held payments [`list`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldBy {
    /// Paid to this payee agent.
    Payee(Pubkey),
    /// Paid by this wallet (a payer agent's owner or agent wallet: the settlement's transfer
    /// authority, which the log records).
    PayerWallet(Pubkey),
    /// The payment of this id hash (of whichever facilitator settled it).
    Payment([u8; 32]),
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
        HeldBy::Payee(k) => (72, k.to_bytes()),
        HeldBy::PayerWallet(k) => (104, k.to_bytes()),
        HeldBy::Payment(hash) => (40, hash),
    };
    let filters = vec![
        RpcFilterType::DataSize(FeedbackLog::space(true) as u64),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            0,
            FeedbackLog::DISCRIMINATOR.to_vec(),
        )),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(offset, key.to_vec())),
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
