//! Solana's payment-channels program, the program behind x402's `upto` and `batch-settlement`
//! schemes on Solana: its id, a channel's address and account layout, its vouchers and its
//! instructions' wire format, as its public IDL and documentation define them. The `channels`
//! test suite holds every builder here to the real bytecode.
//!
//! A channel's life: the payer `open`s it with a deposit (escrowed in the channel's associated
//! token account) and a distribution (who gets the settled amount, in basis points; the payee
//! gets the rest); the authorized signer signs cumulative vouchers off chain; anyone `settle`s
//! the latest one (an Ed25519 precompile instruction right before it); the payee
//! `settle_and_seal`s it (or the payer `request_close`s, and after the grace period anyone
//! `seal`s); anyone `distribute`s a sealed channel (the recipients are paid, the payer gets the
//! rest of the deposit, the rent goes back to the rent payer); anyone `reclaim`s what is left
//! once the open slot is old.

use crate::instructions::ed25519_verify;
use crate::token::TokenProgram;
use anchor_lang::prelude::{pubkey, Pubkey};
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
use sha2::{Digest, Sha256};
use solana_sdk::signature::Keypair;
use solana_sdk::sysvar;

// The x402 schemes' terms that reading a facilitator's channels on chain needs (the wire
// crate, `trust_gate_x402`, re-exports them with its `upto` and `batch` modules).

/// The longest `maxTimeoutSeconds` of an `upto` offer a trust-gate facilitator takes (the stock
/// facilitator's default channel lifetime): the claim must come within it, which bounds how
/// long the facilitator's rent sits in a channel that is never claimed.
pub const MAX_CHANNEL_LIFETIME_SECS: u64 = 3_600;
/// How far past `now + maxTimeoutSeconds` a payload's expiry may be (clock skew).
pub const EXPIRY_SLACK_SECS: i64 = 60;
/// How long after the latest possible expiry of its claim an unclaimed channel is closed
/// (the stock facilitator's abandon grace).
pub const ABANDON_GRACE_SECS: i64 = 120;

/// The unix time after which no claim of a deposit that landed at `opened_at` can land
/// (its expiry is at most `opened_at` + the lifetime + the slack), with the grace.
pub fn abandoned_after(opened_at: i64) -> i64 {
    opened_at
        .saturating_add(MAX_CHANNEL_LIFETIME_SECS as i64)
        .saturating_add(EXPIRY_SLACK_SECS)
        .saturating_add(ABANDON_GRACE_SECS)
}

/// The Memo that binds the receiver's authorizer into a `batch-settlement` channel at its open.
pub const BINDING_MEMO_PREFIX: &str = "x402:batch-settlement:svm:rcvauth:v1:";

/// The program's id (mainnet and devnet).
pub const PROGRAM_ID: Pubkey = pubkey!("CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX");
/// The owner of the treasury token accounts that receive rounding dust and forfeited shares
/// (compiled into the mainnet build).
pub const TREASURY_OWNER: Pubkey = pubkey!("Cs2zdfUNonRdRGsiZUQQLdTxzxVvJZmgiX2mpLYKuEqP");
/// `open` takes an `open_slot` at most this many slots old; `reclaim` (and a sealed
/// `distribute`'s deallocation) wait until the open slot is older than this.
pub const OPEN_SLOT_WINDOW: u64 = 1_500;
/// A channel account's size.
pub const CHANNEL_LEN: usize = 256;
/// Basis points of a whole distribution.
pub const ALL_BPS: u16 = 10_000;
/// Most recipients a distribution may name.
pub const MAX_RECIPIENTS: usize = 32;

/// The instruction tags (the first data byte).
pub mod tag {
    pub const OPEN: u8 = 1;
    pub const SETTLE: u8 = 2;
    pub const TOP_UP: u8 = 3;
    pub const SETTLE_AND_SEAL: u8 = 4;
    pub const REQUEST_CLOSE: u8 = 5;
    pub const SEAL: u8 = 6;
    pub const DISTRIBUTE: u8 = 7;
    pub const WITHDRAW_PAYER: u8 = 8;
    pub const RECLAIM: u8 = 9;
}

/// The program's own errors (`Custom(n)`) that callers act on.
pub mod error {
    pub const INVALID_CHANNEL_STATUS: u32 = 2;
    pub const VOUCHER_WATERMARK_NOT_MONOTONIC: u32 = 234;
    pub const VOUCHER_OVER_DEPOSIT: u32 = 235;
    pub const VOUCHER_SIGNER_MISMATCH: u32 = 237;
    pub const CHANNEL_CLOSE_TOO_EARLY: u32 = 2414;
}

/// The program's event-authority PDA (`["event_authority"]`), which its `open` and
/// `distribute` take.
pub fn event_authority() -> Pubkey {
    Pubkey::find_program_address(&[b"event_authority"], &PROGRAM_ID).0
}

/// A channel's address and bump: `["channel", payer, payee, mint, authorized_signer, salt,
/// open_slot]` (integers little-endian). The open slot in the seeds gives every opening a new
/// address.
pub fn channel_address(
    payer: &Pubkey,
    payee: &Pubkey,
    mint: &Pubkey,
    authorized_signer: &Pubkey,
    salt: u64,
    open_slot: u64,
) -> (Pubkey, u8) {
    Pubkey::find_program_address(
        &[
            b"channel",
            payer.as_ref(),
            payee.as_ref(),
            mint.as_ref(),
            authorized_signer.as_ref(),
            &salt.to_le_bytes(),
            &open_slot.to_le_bytes(),
        ],
        &PROGRAM_ID,
    )
}

/// One share of a channel's distribution: `bps` of the settled amount to `recipient`'s
/// associated token account. What the shares leave goes to the payee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub recipient: Pubkey,
    pub bps: u16,
}

/// The distribution as the program hashes and parses it: a u32 count, then per share the
/// recipient and its basis points (u16), little-endian.
pub fn distribution_preimage(splits: &[Split]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 34 * splits.len());
    out.extend_from_slice(&(splits.len() as u32).to_le_bytes());
    for s in splits {
        out.extend_from_slice(s.recipient.as_ref());
        out.extend_from_slice(&s.bps.to_le_bytes());
    }
    out
}

/// The shares of a [`distribution_preimage`] (the tail of an `open`'s data); `None` unless
/// `data` is exactly one.
pub fn parse_distribution(data: &[u8]) -> Option<Vec<Split>> {
    let count = u32::from_le_bytes(data.get(..4)?.try_into().ok()?) as usize;
    if data.len() != 4usize.checked_add(count.checked_mul(34)?)? {
        return None;
    }
    Some(
        data[4..]
            .chunks_exact(34)
            .map(|c| Split {
                recipient: Pubkey::new_from_array(c[..32].try_into().unwrap_or_default()),
                bps: u16::from_le_bytes([c[32], c[33]]),
            })
            .collect(),
    )
}

/// What a channel stores of its distribution: the SHA-256 of [`distribution_preimage`].
pub fn distribution_hash(splits: &[Split]) -> [u8; 32] {
    Sha256::digest(distribution_preimage(splits)).into()
}

/// An `open`: who, what and how much, with the distribution.
#[derive(Clone, Debug)]
pub struct Open {
    /// Signs; the deposit comes from its associated token account, refunds go back there.
    pub payer: Pubkey,
    /// Signs; pays the channel's and the escrow's rent, and gets it back.
    pub rent_payer: Pubkey,
    /// Seals the channel; gets what the shares leave.
    pub payee: Pubkey,
    pub mint: Pubkey,
    pub token_program: TokenProgram,
    /// The key whose vouchers the channel accepts.
    pub authorized_signer: Pubkey,
    pub salt: u64,
    pub deposit: u64,
    /// Seconds between the payer's `request_close` and the moment anyone may `seal`.
    pub grace_period: u32,
    /// A recent slot (at most [`OPEN_SLOT_WINDOW`] old): part of the address.
    pub open_slot: u64,
    pub splits: Vec<Split>,
}

impl Open {
    pub fn channel(&self) -> Pubkey {
        channel_address(
            &self.payer,
            &self.payee,
            &self.mint,
            &self.authorized_signer,
            self.salt,
            self.open_slot,
        )
        .0
    }

    /// The escrow: the channel's associated token account.
    pub fn escrow(&self) -> Pubkey {
        self.token_program
            .associated_account(&self.channel(), &self.mint)
    }

    pub fn instruction(&self) -> Instruction {
        let channel = self.channel();
        let mut data = vec![tag::OPEN];
        data.extend_from_slice(&self.salt.to_le_bytes());
        data.extend_from_slice(&self.deposit.to_le_bytes());
        data.extend_from_slice(&self.grace_period.to_le_bytes());
        data.extend_from_slice(&self.open_slot.to_le_bytes());
        data.extend_from_slice(&distribution_preimage(&self.splits));
        let ata = |owner: &Pubkey| self.token_program.associated_account(owner, &self.mint);
        Instruction {
            program_id: PROGRAM_ID,
            accounts: vec![
                AccountMeta::new(self.payer, true),
                AccountMeta::new(self.rent_payer, true),
                AccountMeta::new_readonly(self.payee, false),
                AccountMeta::new_readonly(self.mint, false),
                AccountMeta::new_readonly(self.authorized_signer, false),
                AccountMeta::new(channel, false),
                AccountMeta::new(ata(&self.payer), false),
                AccountMeta::new(ata(&channel), false),
                AccountMeta::new_readonly(self.token_program.id(), false),
                AccountMeta::new_readonly(system_program::ID, false),
                AccountMeta::new_readonly(sysvar::rent::ID, false),
                AccountMeta::new_readonly(anchor_spl::associated_token::ID, false),
                AccountMeta::new_readonly(event_authority(), false),
                AccountMeta::new_readonly(PROGRAM_ID, false),
            ],
            data,
        }
    }
}

/// The 50 bytes a voucher signs: `0x56 0x01`, the channel, the cumulative amount (u64) and
/// its expiry (unix seconds, i64; 0 = none), little-endian.
pub fn voucher_message(channel: &Pubkey, cumulative: u64, expires_at: i64) -> [u8; 50] {
    let mut m = [0u8; 50];
    m[..2].copy_from_slice(&[0x56, 0x01]);
    m[2..34].copy_from_slice(channel.as_ref());
    m[34..42].copy_from_slice(&cumulative.to_le_bytes());
    m[42..50].copy_from_slice(&expires_at.to_le_bytes());
    m
}

/// The voucher as the program reads it: the Ed25519 precompile instruction that must come
/// right before `settle` or `settle_and_seal(true)`.
pub fn voucher(
    signer: &Keypair,
    channel: &Pubkey,
    cumulative: u64,
    expires_at: i64,
) -> Instruction {
    ed25519_verify(signer, &voucher_message(channel, cumulative, expires_at))
}

/// Applies the voucher before it (permissionless): the channel's settled amount becomes its
/// cumulative amount.
pub fn settle(channel: &Pubkey) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*channel, false),
            AccountMeta::new_readonly(sysvar::instructions::ID, false),
        ],
        data: vec![tag::SETTLE],
    }
}

/// The payee seals the channel, applying the voucher before it when `with_voucher`.
pub fn settle_and_seal(payee: &Pubkey, channel: &Pubkey, with_voucher: bool) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new_readonly(*payee, true),
            AccountMeta::new(*channel, false),
            AccountMeta::new_readonly(sysvar::instructions::ID, false),
        ],
        data: vec![tag::SETTLE_AND_SEAL, u8::from(with_voucher)],
    }
}

/// The payer adds `amount` to the deposit.
pub fn top_up(
    payer: &Pubkey,
    channel: &Pubkey,
    mint: &Pubkey,
    token_program: TokenProgram,
    amount: u64,
) -> Instruction {
    let mut data = vec![tag::TOP_UP];
    data.extend_from_slice(&amount.to_le_bytes());
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*payer, true),
            AccountMeta::new(*channel, false),
            AccountMeta::new(token_program.associated_account(payer, mint), false),
            AccountMeta::new(token_program.associated_account(channel, mint), false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new_readonly(token_program.id(), false),
        ],
        data,
    }
}

/// The payer starts the grace period after which anyone may [`seal`].
pub fn request_close(payer: &Pubkey, channel: &Pubkey) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new_readonly(*payer, true),
            AccountMeta::new(*channel, false),
        ],
        data: vec![tag::REQUEST_CLOSE],
    }
}

/// Seals a closing channel once its grace period has passed (permissionless).
pub fn seal(channel: &Pubkey) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![AccountMeta::new(*channel, false)],
        data: vec![tag::SEAL],
    }
}

/// A `distribute` of a channel (permissionless): its parties, and the distribution it was
/// opened with (the program compares its hash).
#[derive(Clone, Debug)]
pub struct Distribute {
    pub channel: Pubkey,
    pub payer: Pubkey,
    pub rent_payer: Pubkey,
    pub payee: Pubkey,
    pub mint: Pubkey,
    pub token_program: TokenProgram,
    pub splits: Vec<Split>,
}

impl Distribute {
    /// The parties of `open`'s channel.
    pub fn of(open: &Open) -> Distribute {
        Distribute {
            channel: open.channel(),
            payer: open.payer,
            rent_payer: open.rent_payer,
            payee: open.payee,
            mint: open.mint,
            token_program: open.token_program,
            splits: open.splits.clone(),
        }
    }

    pub fn instruction(&self) -> Instruction {
        let ata = |owner: &Pubkey| self.token_program.associated_account(owner, &self.mint);
        let mut data = vec![tag::DISTRIBUTE];
        data.extend_from_slice(&distribution_preimage(&self.splits));
        let mut accounts = vec![
            AccountMeta::new(self.channel, false),
            AccountMeta::new(self.payer, false),
            AccountMeta::new(self.rent_payer, false),
            AccountMeta::new(ata(&self.channel), false),
            AccountMeta::new(ata(&self.payer), false),
            AccountMeta::new(ata(&self.payee), false),
            AccountMeta::new(ata(&TREASURY_OWNER), false),
            AccountMeta::new_readonly(self.mint, false),
            AccountMeta::new_readonly(self.token_program.id(), false),
            AccountMeta::new_readonly(event_authority(), false),
            AccountMeta::new_readonly(PROGRAM_ID, false),
        ];
        accounts.extend(
            self.splits
                .iter()
                .map(|s| AccountMeta::new(ata(&s.recipient), false)),
        );
        Instruction {
            program_id: PROGRAM_ID,
            accounts,
            data,
        }
    }
}

/// The payer takes the unsettled deposit of a sealed channel back before it is distributed.
pub fn withdraw_payer(
    payer: &Pubkey,
    channel: &Pubkey,
    mint: &Pubkey,
    token_program: TokenProgram,
) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new_readonly(*payer, true),
            AccountMeta::new(*channel, false),
            AccountMeta::new(token_program.associated_account(channel, mint), false),
            AccountMeta::new(token_program.associated_account(payer, mint), false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new_readonly(token_program.id(), false),
        ],
        data: vec![tag::WITHDRAW_PAYER],
    }
}

/// Closes a distributed channel whose open slot is old, its lamports to the rent payer
/// (permissionless).
pub fn reclaim(channel: &Pubkey, rent_payer: &Pubkey) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*channel, false),
            AccountMeta::new(*rent_payer, false),
        ],
        data: vec![tag::RECLAIM],
    }
}

/// Where a channel is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Open,
    Sealed,
    Closing,
    Distributed,
}

/// A channel account, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    pub bump: u8,
    pub status: Status,
    pub salt: u64,
    pub deposit: u64,
    /// The cumulative amount of the latest voucher applied.
    pub settled: u64,
    /// How much of `settled` has been paid out.
    pub payout_watermark: u64,
    pub closure_started_at: i64,
    pub payer_withdrawn_at: i64,
    pub grace_period: u32,
    pub distribution_hash: [u8; 32],
    pub payer: Pubkey,
    pub payee: Pubkey,
    pub authorized_signer: Pubkey,
    pub mint: Pubkey,
    pub rent_payer: Pubkey,
    pub open_slot: u64,
}

impl Channel {
    /// A channel account's data (version 1); `None` for anything else.
    pub fn decode(data: &[u8]) -> Option<Channel> {
        if data.len() != CHANNEL_LEN || data[0] != 1 || data[1] != 1 {
            return None;
        }
        let u64_at =
            |at: usize| u64::from_le_bytes(data[at..at + 8].try_into().unwrap_or_default());
        let key_at =
            |at: usize| Pubkey::new_from_array(data[at..at + 32].try_into().unwrap_or_default());
        Some(Channel {
            bump: data[2],
            status: match data[3] {
                0 => Status::Open,
                1 => Status::Sealed,
                2 => Status::Closing,
                3 => Status::Distributed,
                _ => return None,
            },
            salt: u64_at(4),
            deposit: u64_at(12),
            settled: u64_at(20),
            payout_watermark: u64_at(28),
            closure_started_at: u64_at(36) as i64,
            payer_withdrawn_at: u64_at(44) as i64,
            grace_period: u32::from_le_bytes(data[52..56].try_into().unwrap_or_default()),
            distribution_hash: data[56..88].try_into().unwrap_or_default(),
            payer: key_at(88),
            payee: key_at(120),
            authorized_signer: key_at(152),
            mint: key_at(184),
            rent_payer: key_at(216),
            open_slot: u64_at(248),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_distribution_reads_back_from_its_preimage() {
        let splits = vec![
            Split {
                recipient: Pubkey::new_unique(),
                bps: 7_000,
            },
            Split {
                recipient: Pubkey::new_unique(),
                bps: 3_000,
            },
        ];
        let preimage = distribution_preimage(&splits);
        let back = parse_distribution(&preimage).unwrap();
        assert_eq!(distribution_preimage(&back), preimage);
        assert_eq!(back[1].bps, 3_000);
        assert_eq!(parse_distribution(&preimage[..preimage.len() - 1]), None);
        assert_eq!(
            parse_distribution(&[preimage.clone(), vec![0]].concat()),
            None
        );
        assert_eq!(parse_distribution(&[]), None);
        assert_eq!(parse_distribution(&0u32.to_le_bytes()), Some(vec![]));
    }
}
