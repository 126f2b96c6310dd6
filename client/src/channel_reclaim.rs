//! Rent that comes back from payment channels a facilitator holds (their rent payer): the
//! channel's own rent, which the program returns by `reclaim` once a distributed channel's
//! open slot is old, and the gate's record of a channel the program deleted before the gate
//! closed it (`close_channel_record`). The escrow's rent comes back at the sealed distribute.
//!
//! A channel whose gate record is still open is left alone: its close through the gate
//! (`gate_channel_close`, the facilitator's own) reads its settled amount for the payee's
//! feedback and the payer's refund, which a `reclaim` would delete.

use crate::chain;
use crate::channels::{self, Channel, Distribute, Status};
use crate::error::ClientError;
use crate::instructions::Builder;
use crate::receipts;
use crate::token::TokenProgram;
use anchor_lang::prelude::Pubkey;
use anchor_lang::{AccountDeserialize, Discriminator};
use gate::state::ChannelRecord;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::filter::{Memcmp, RpcFilterType};
use solana_sdk::instruction::Instruction;
use std::collections::HashSet;
use trust_gate_program_common::external::ids::MEMO;

/// Where the program keeps a channel's rent payer, and the gate a record's facilitator.
const CHANNEL_RENT_PAYER_AT: usize = 216;
const RECORD_FACILITATOR_AT: usize = 136;

/// What to do now, and what waits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelScan {
    /// Distributed channels past their slot window, their records closed: `reclaim` (the
    /// channel's address and lamports).
    pub reclaim: Vec<(Pubkey, u64)>,
    /// Records of channels the program deleted: `close_channel_record` (the channel's
    /// address and the record's lamports).
    pub orphaned: Vec<(Pubkey, u64)>,
    /// Sealed or distributed channels whose record is open: they wait for the facilitator's
    /// close through the gate.
    pub awaiting_close: Vec<Pubkey>,
    /// Distributed channels inside their slot window, with the first slot they may be
    /// reclaimed at.
    pub waiting: Vec<(Pubkey, u64)>,
    /// Open channels without a gate record (stock `upto` deposits) old enough that their
    /// claim may never come: [`abandoned_close`] tells, from their open's transaction.
    pub stale_open: Vec<(Pubkey, Channel)>,
    /// The same, with a gate record (gated `upto` deposits, or gated sessions, which
    /// [`abandoned_close`] tells apart): their close goes through the gate.
    pub stale_recorded: Vec<(Pubkey, Channel)>,
    /// Channels someone moved on that nobody finished: closing past their grace period
    /// (their payer's `request_close`; `seal` is anyone's now) or sealed and not distributed,
    /// with whether their gate record is open. Their facilitator seals them, closes them
    /// through the gate and distributes them, unless a session it holds does it first.
    pub unfinished: Vec<(Pubkey, Channel, bool)>,
}

/// Slots after its open slot an unrecorded open channel is looked at as possibly abandoned:
/// about half the longest upto lifetime at 400 ms a slot, so that young channels cost no
/// history reads (the decision itself is by the open's block time).
pub const STALE_AFTER_SLOTS: u64 = channels::MAX_CHANNEL_LIFETIME_SECS * 10 / 4 / 2;

/// One instruction that returns rent, and what it returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    pub instruction: Instruction,
    pub lamports: u64,
    /// The channel a `reclaim` deletes; `None` for a `close_channel_record`.
    pub reclaimed: Option<Pubkey>,
}

impl ChannelScan {
    /// The instructions that return the rent found, `facilitator` getting all of it: the
    /// reclaims, then the record closes.
    pub fn work(&self, b: &Builder, facilitator: &Pubkey) -> Vec<Work> {
        let reclaims = self.reclaim.iter().map(|(channel, lamports)| Work {
            instruction: channels::reclaim(channel, facilitator),
            lamports: *lamports,
            reclaimed: Some(*channel),
        });
        let records = self.orphaned.iter().map(|(channel, lamports)| Work {
            instruction: b.close_channel_record(channel, facilitator),
            lamports: *lamports,
            reclaimed: None,
        });
        reclaims.chain(records).collect()
    }
}

/// Decides, at `slot` and chain time `now`, from `facilitator`'s channels (address, channel,
/// lamports) and the channels its open gate records name (with each record's lamports).
pub fn plan(
    channels: &[(Pubkey, Channel, u64)],
    records: &[(Pubkey, u64)],
    slot: u64,
    now: i64,
) -> ChannelScan {
    let mut scan = ChannelScan::default();
    let recorded: HashSet<Pubkey> = records.iter().map(|(c, _)| *c).collect();
    let live: HashSet<Pubkey> = channels.iter().map(|(a, _, _)| *a).collect();
    for (address, channel, lamports) in channels {
        match channel.status {
            Status::Open if slot >= channel.open_slot.saturating_add(STALE_AFTER_SLOTS) => {
                if recorded.contains(address) {
                    scan.stale_recorded.push((*address, channel.clone()))
                } else {
                    scan.stale_open.push((*address, channel.clone()))
                }
            }
            Status::Open => {}
            Status::Closing => {
                let deadline = channel
                    .closure_started_at
                    .saturating_add(i64::from(channel.grace_period));
                if now >= deadline {
                    let record = recorded.contains(address);
                    scan.unfinished.push((*address, channel.clone(), record));
                }
            }
            Status::Sealed => {
                let record = recorded.contains(address);
                if record {
                    scan.awaiting_close.push(*address);
                }
                scan.unfinished.push((*address, channel.clone(), record));
            }
            Status::Distributed if recorded.contains(address) => {
                scan.awaiting_close.push(*address);
                scan.unfinished.push((*address, channel.clone(), true));
            }
            Status::Distributed => {
                let first = channel
                    .open_slot
                    .saturating_add(channels::OPEN_SLOT_WINDOW)
                    .saturating_add(1);
                if slot >= first {
                    scan.reclaim.push((*address, *lamports));
                } else {
                    scan.waiting.push((*address, first));
                }
            }
        }
    }
    scan.orphaned = records
        .iter()
        .filter(|(channel, _)| !live.contains(channel))
        .copied()
        .collect();
    scan
}

/// What a channel's open transaction said, which the channel keeps only as a hash or not at
/// all: its distribution (checked against the channel's hash), its token program, whether it
/// opened a `batch-settlement` session (its binding Memo) and when it landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenedWith {
    pub splits: Vec<channels::Split>,
    pub token_program: TokenProgram,
    pub session: bool,
    pub block_time: Option<i64>,
}

impl OpenedWith {
    /// The sealed `distribute` of `channel` at `address`: the splits their share, the payer
    /// the rest, the escrow's rent (and the channel's, past its slot window) to the rent
    /// payer.
    pub fn distribute(&self, address: &Pubkey, channel: &Channel) -> Instruction {
        Distribute {
            channel: *address,
            payer: channel.payer,
            rent_payer: channel.rent_payer,
            payee: channel.payee,
            mint: channel.mint,
            token_program: self.token_program,
            splits: self.splits.clone(),
        }
        .instruction()
    }
}

/// Reads how the channel at `address` was opened, from its first transaction; `None` when
/// the history is not there or does not match the channel.
pub async fn opened_with(
    rpc: &RpcClient,
    address: &Pubkey,
    channel: &Channel,
) -> Result<Option<OpenedWith>, ClientError> {
    let signatures = receipts::signatures_of(rpc, address).await?;
    let Some(first) = signatures.first() else {
        return Ok(None);
    };
    let Some(opened) = receipts::transaction(rpc, first).await? else {
        return Ok(None);
    };
    let session = opened.instructions.iter().any(|ix| {
        ix.program_id == MEMO
            && ix
                .data
                .starts_with(channels::BINDING_MEMO_PREFIX.as_bytes())
    });
    let open = opened.instructions.iter().find(|ix| {
        ix.program_id == channels::PROGRAM_ID
            && ix.data.first() == Some(&channels::tag::OPEN)
            && ix.accounts.get(5).map(|m| m.pubkey) == Some(*address)
    });
    let Some(open) = open else { return Ok(None) };
    let Some(splits) = open.data.get(29..).and_then(channels::parse_distribution) else {
        return Ok(None);
    };
    let token_program = open
        .accounts
        .get(8)
        .map(|m| TokenProgram::of_owner(&m.pubkey, "the open's token program"))
        .transpose()?;
    let Some(token_program) = token_program else {
        return Ok(None);
    };
    if channels::distribution_hash(&splits) != channel.distribution_hash {
        return Ok(None);
    }
    Ok(Some(OpenedWith {
        splits,
        token_program,
        session,
        block_time: opened.block_time,
    }))
}

/// The transaction that closes an unrecorded open channel whose claim can no longer come
/// (stock `upto`: its open landed more than [`channels::abandoned_after`] before `now`): the
/// facilitator, its payee, seals it at what it settled (nothing: `upto` applies its one
/// voucher at the claim) and distributes it, the whole deposit back to the payer and the
/// escrow's rent to the facilitator; `reclaim` returns the channel's rent later. The
/// distribution is read from the open's own transaction (the channel keeps only its hash,
/// checked here). `None` while the claim may still come, when the history is not there, or
/// for a `batch-settlement` session's channel (its open's binding Memo).
pub async fn abandoned_close(
    rpc: &RpcClient,
    facilitator: &Pubkey,
    address: &Pubkey,
    channel: &Channel,
    now: i64,
) -> Result<Option<Vec<Instruction>>, ClientError> {
    let Some(opened) = opened_with(rpc, address, channel).await? else {
        return Ok(None);
    };
    if opened
        .block_time
        .is_none_or(|t| now <= channels::abandoned_after(t))
    {
        return Ok(None);
    }
    // A batch-settlement session's channel (its open binds the receiver's authorizer) lives
    // as long as its session: its facilitator closes it, never as an abandoned claim.
    if opened.session {
        return Ok(None);
    }
    Ok(Some(vec![
        channels::settle_and_seal(facilitator, address, false),
        opened.distribute(address, channel),
    ]))
}

/// Finds `facilitator`'s channels and channel records, and what may close at `slot` (two
/// reads: the records first, so that a channel opened between the reads is never taken for
/// deleted).
pub async fn scan(
    rpc: &RpcClient,
    b: &Builder,
    facilitator: &Pubkey,
    slot: u64,
    now: i64,
) -> Result<ChannelScan, ClientError> {
    let memcmp =
        |at: usize, bytes: &[u8]| RpcFilterType::Memcmp(Memcmp::new_raw_bytes(at, bytes.to_vec()));
    let records: Vec<(Pubkey, u64)> = chain::program_accounts(
        rpc,
        &b.ids.gate,
        vec![
            memcmp(0, ChannelRecord::DISCRIMINATOR),
            memcmp(RECORD_FACILITATOR_AT, facilitator.as_ref()),
        ],
    )
    .await?
    .into_iter()
    .filter_map(|(address, account)| {
        let record = ChannelRecord::try_deserialize(&mut &account.data[..]).ok()?;
        // The gate writes a record only at its channel's address.
        (address == b.pda.channel_record(&record.channel))
            .then_some((record.channel, account.lamports))
    })
    .collect();
    let channels = sponsored_accounts(rpc, facilitator).await?;
    Ok(plan(&channels, &records, slot, now))
}

/// The channels whose rent payer is `facilitator` (one `getProgramAccounts`, the rent payer's
/// offset filtered), each with its lamports.
async fn sponsored_accounts(
    rpc: &RpcClient,
    facilitator: &Pubkey,
) -> Result<Vec<(Pubkey, Channel, u64)>, ClientError> {
    let filters = vec![
        RpcFilterType::DataSize(channels::CHANNEL_LEN as u64),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            CHANNEL_RENT_PAYER_AT,
            facilitator.as_ref().to_vec(),
        )),
    ];
    Ok(chain::program_accounts(rpc, &channels::PROGRAM_ID, filters)
        .await?
        .into_iter()
        .filter_map(|(address, account)| {
            let channel = Channel::decode(&account.data)?;
            (channel.rent_payer == *facilitator).then_some((address, channel, account.lamports))
        })
        .collect())
}

/// The channels whose rent payer is `facilitator`, as the program keeps them.
pub async fn sponsored(
    rpc: &RpcClient,
    facilitator: &Pubkey,
) -> Result<Vec<(Pubkey, Channel)>, ClientError> {
    Ok(sponsored_accounts(rpc, facilitator)
        .await?
        .into_iter()
        .map(|(k, c, _)| (k, c))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(status: Status, open_slot: u64) -> Channel {
        let mut data = vec![0u8; channels::CHANNEL_LEN];
        data[..4].copy_from_slice(&[1, 1, 255, status as u8]);
        data[248..256].copy_from_slice(&open_slot.to_le_bytes());
        Channel::decode(&data).unwrap()
    }

    #[test]
    fn a_distributed_channel_is_reclaimed_after_its_window_unless_its_record_is_open() {
        let [a, b, c, d, e, gone] = [(); 6].map(|_| Pubkey::new_unique());
        let channels = [
            (a, channel(Status::Distributed, 100), 10),
            (b, channel(Status::Distributed, 100), 20),
            (c, channel(Status::Distributed, 200), 30),
            (d, channel(Status::Sealed, 100), 40),
            (e, channel(Status::Open, 100), 50),
        ];
        // b's and d's records are open; `gone`'s channel is not among the live ones.
        let records = [(b, 1), (d, 2), (gone, 3)];
        let first = 100 + channels::OPEN_SLOT_WINDOW + 1;
        let scan = plan(&channels, &records, first, 0);
        assert_eq!(scan.reclaim, vec![(a, 10)]);
        assert_eq!(
            scan.waiting,
            vec![(c, 200 + channels::OPEN_SLOT_WINDOW + 1)]
        );
        assert_eq!(scan.awaiting_close, vec![b, d]);
        assert_eq!(
            scan.unfinished
                .iter()
                .map(|(k, _, record)| (*k, *record))
                .collect::<Vec<_>>(),
            vec![(b, true), (d, true)],
            "nobody but the facilitator closes them through the gate"
        );
        assert_eq!(scan.orphaned, vec![(gone, 3)]);
        // One slot earlier, `a` waits too.
        let scan = plan(&channels, &records, first - 1, 0);
        assert!(scan.reclaim.is_empty());
        assert_eq!(scan.waiting.len(), 2);
        // The open channel without a record is looked at once it is old enough.
        assert!(scan.stale_open.is_empty());
        let scan = plan(&channels, &records, 100 + STALE_AFTER_SLOTS, 0);
        assert_eq!(
            scan.stale_open.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            vec![e]
        );
        assert!(scan.stale_recorded.is_empty());
        // An old open channel with a record: its close goes through the gate.
        let mut with_record = records.to_vec();
        with_record.push((e, 4));
        let scan = plan(&channels, &with_record, 100 + STALE_AFTER_SLOTS, 0);
        assert!(scan.stale_open.is_empty());
        assert_eq!(
            scan.stale_recorded
                .iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>(),
            vec![e]
        );
    }

    #[test]
    fn a_closing_channel_is_the_facilitators_to_finish_once_its_grace_period_is_over() {
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        let mut closing = channel(Status::Closing, 100);
        closing.closure_started_at = 1_000;
        closing.grace_period = 900;
        let sealed = channel(Status::Sealed, 100);
        let channels = [(a, closing, 1), (b, sealed, 2)];
        let finishing = |now| {
            plan(&channels, &[(a, 5)], 200, now)
                .unfinished
                .into_iter()
                .map(|(k, _, record)| (k, record))
                .collect::<Vec<_>>()
        };
        // Within the grace period the payee (a session, or an upto claim) may still seal it
        // at a voucher; the sealed one without a record still needs its distribute.
        assert_eq!(finishing(1_899), vec![(b, false)]);
        assert_eq!(finishing(1_900), vec![(a, true), (b, false)]);
    }

    #[test]
    fn the_instructions_return_the_rent_to_the_facilitator() {
        use crate::ids::{Network, ProgramIds};
        let b = Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap();
        let facilitator = Pubkey::new_unique();
        let (reclaimed, orphan) = (Pubkey::new_unique(), Pubkey::new_unique());
        let scan = ChannelScan {
            reclaim: vec![(reclaimed, 1)],
            orphaned: vec![(orphan, 2)],
            ..ChannelScan::default()
        };
        let work = scan.work(&b, &facilitator);
        assert_eq!(
            work,
            vec![
                Work {
                    instruction: channels::reclaim(&reclaimed, &facilitator),
                    lamports: 1,
                    reclaimed: Some(reclaimed),
                },
                Work {
                    instruction: b.close_channel_record(&orphan, &facilitator),
                    lamports: 2,
                    reclaimed: None,
                },
            ]
        );
        // Many fit one transaction: 20 reclaims take two.
        let many: Vec<Work> = (0..20).map(|_| work[0].clone()).collect();
        let runs = crate::reclaim::runs(&many, &facilitator, |w| w.instruction.clone());
        assert!(
            runs.len() <= 2 && runs[0].len() >= 10,
            "{:?}",
            runs.iter().map(|r| r.len()).collect::<Vec<_>>()
        );
    }
}
