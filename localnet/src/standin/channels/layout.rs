//! The channel account: 256 bytes owned by the program, little-endian integers at fixed
//! offsets, no padding (the same bytes `trust_gate_client::channels::Channel::decode` reads).
//!
//! | offset | field |
//! |---:|---|
//! | 0 | discriminator (1) |
//! | 1 | version (1) |
//! | 2 | bump |
//! | 3 | status: 0 open, 1 sealed, 2 closing, 3 distributed |
//! | 4 | salt u64 |
//! | 12 | deposit u64 |
//! | 20 | settled u64 |
//! | 28 | payout watermark u64 |
//! | 36 | closure started at i64 |
//! | 44 | payer withdrawn at i64 |
//! | 52 | grace period u32 |
//! | 56 | distribution hash (32) |
//! | 88, 120, 152, 184, 216 | payer, payee, authorized signer, mint, rent payer |
//! | 248 | open slot u64 |

use super::{fail, fail_with, ChannelsError};
use anchor_lang::prelude::*;
use std::result::Result;
use trust_gate_client::channels::{CHANNEL_LEN, PROGRAM_ID};

pub const DISCRIMINATOR: u8 = 1;
pub const VERSION: u8 = 1;
/// The first seed of a channel's address.
pub const CHANNEL_SEED: &[u8] = b"channel";

pub mod at {
    pub const BUMP: usize = 2;
    pub const STATUS: usize = 3;
    pub const SALT: usize = 4;
    pub const DEPOSIT: usize = 12;
    pub const SETTLED: usize = 20;
    pub const PAYOUT_WATERMARK: usize = 28;
    pub const CLOSURE_STARTED_AT: usize = 36;
    pub const PAYER_WITHDRAWN_AT: usize = 44;
    pub const GRACE_PERIOD: usize = 52;
    pub const DISTRIBUTION_HASH: usize = 56;
    pub const PAYER: usize = 88;
    pub const PAYEE: usize = 120;
    pub const AUTHORIZED_SIGNER: usize = 152;
    pub const MINT: usize = 184;
    pub const RENT_PAYER: usize = 216;
    pub const OPEN_SLOT: usize = 248;
}

/// A channel's status byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Open = 0,
    Sealed = 1,
    Closing = 2,
    Distributed = 3,
}

impl Status {
    /// An unknown status byte is the program's InvalidChannelStatus.
    pub fn from_byte(b: u8) -> Result<Status, ProgramError> {
        match b {
            0 => Ok(Status::Open),
            1 => Ok(Status::Sealed),
            2 => Ok(Status::Closing),
            3 => Ok(Status::Distributed),
            _ => Err(fail(
                ChannelsError::InvalidChannelStatus,
                "unknown status byte",
            )),
        }
    }
}

/// A copy of a channel's 256 bytes, read and written whole.
#[derive(Clone)]
pub struct ChannelState {
    bytes: [u8; CHANNEL_LEN],
}

impl ChannelState {
    /// Reads the channel as the real program does: program-owned (else InvalidAccountOwner),
    /// exactly 256 bytes (else InvalidAccountData), discriminator 1 (else 3), version 1
    /// (else 4).
    pub fn load(account: &AccountInfo) -> Result<ChannelState, ProgramError> {
        if *account.owner != PROGRAM_ID {
            return Err(fail_with(
                ProgramError::InvalidAccountOwner,
                "the channel is not owned by the program",
            ));
        }
        let data = account.try_borrow_data()?;
        let bytes: [u8; CHANNEL_LEN] = data.as_ref().try_into().map_err(|_| {
            fail_with(
                ProgramError::InvalidAccountData,
                "the channel is not 256 bytes",
            )
        })?;
        if bytes[0] != DISCRIMINATOR {
            return Err(fail(
                ChannelsError::InvalidAccountDiscriminator,
                "not a channel",
            ));
        }
        if bytes[1] != VERSION {
            return Err(fail(
                ChannelsError::UnsupportedChannelVersion,
                "unknown channel version",
            ));
        }
        Ok(ChannelState { bytes })
    }

    /// A fresh open channel.
    #[allow(clippy::too_many_arguments)]
    pub fn new_open(
        bump: u8,
        salt: u64,
        deposit: u64,
        grace_period: u32,
        distribution_hash: [u8; 32],
        parties: &Parties,
        open_slot: u64,
    ) -> ChannelState {
        let mut s = ChannelState {
            bytes: [0; CHANNEL_LEN],
        };
        s.bytes[0] = DISCRIMINATOR;
        s.bytes[1] = VERSION;
        s.bytes[at::BUMP] = bump;
        s.bytes[at::STATUS] = Status::Open as u8;
        s.put_u64(at::SALT, salt);
        s.put_u64(at::DEPOSIT, deposit);
        s.bytes[at::GRACE_PERIOD..at::GRACE_PERIOD + 4]
            .copy_from_slice(&grace_period.to_le_bytes());
        s.bytes[at::DISTRIBUTION_HASH..at::DISTRIBUTION_HASH + 32]
            .copy_from_slice(&distribution_hash);
        for (offset, key) in [
            (at::PAYER, parties.payer),
            (at::PAYEE, parties.payee),
            (at::AUTHORIZED_SIGNER, parties.authorized_signer),
            (at::MINT, parties.mint),
            (at::RENT_PAYER, parties.rent_payer),
        ] {
            s.bytes[offset..offset + 32].copy_from_slice(key.as_ref());
        }
        s.put_u64(at::OPEN_SLOT, open_slot);
        s
    }

    /// Writes the 256 bytes back into the account.
    pub fn store(&self, account: &AccountInfo) -> Result<(), ProgramError> {
        let mut data = account.try_borrow_mut_data()?;
        let target = data
            .get_mut(..CHANNEL_LEN)
            .ok_or(ProgramError::AccountDataTooSmall)?;
        target.copy_from_slice(&self.bytes);
        Ok(())
    }

    fn u64_at(&self, at: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.bytes[at..at + 8]);
        u64::from_le_bytes(b)
    }

    fn put_u64(&mut self, at: usize, v: u64) {
        self.bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    fn key_at(&self, at: usize) -> Pubkey {
        let mut b = [0u8; 32];
        b.copy_from_slice(&self.bytes[at..at + 32]);
        Pubkey::new_from_array(b)
    }

    pub fn status_byte(&self) -> u8 {
        self.bytes[at::STATUS]
    }
    pub fn set_status(&mut self, s: Status) {
        self.bytes[at::STATUS] = s as u8;
    }
    pub fn bump(&self) -> u8 {
        self.bytes[at::BUMP]
    }
    pub fn salt(&self) -> u64 {
        self.u64_at(at::SALT)
    }
    pub fn deposit(&self) -> u64 {
        self.u64_at(at::DEPOSIT)
    }
    pub fn set_deposit(&mut self, v: u64) {
        self.put_u64(at::DEPOSIT, v);
    }
    pub fn settled(&self) -> u64 {
        self.u64_at(at::SETTLED)
    }
    pub fn set_settled(&mut self, v: u64) {
        self.put_u64(at::SETTLED, v);
    }
    pub fn payout_watermark(&self) -> u64 {
        self.u64_at(at::PAYOUT_WATERMARK)
    }
    pub fn set_payout_watermark(&mut self, v: u64) {
        self.put_u64(at::PAYOUT_WATERMARK, v);
    }
    pub fn closure_started_at(&self) -> i64 {
        self.u64_at(at::CLOSURE_STARTED_AT) as i64
    }
    pub fn set_closure_started_at(&mut self, v: i64) {
        self.put_u64(at::CLOSURE_STARTED_AT, v as u64);
    }
    pub fn payer_withdrawn_at(&self) -> i64 {
        self.u64_at(at::PAYER_WITHDRAWN_AT) as i64
    }
    pub fn set_payer_withdrawn_at(&mut self, v: i64) {
        self.put_u64(at::PAYER_WITHDRAWN_AT, v as u64);
    }
    pub fn grace_period(&self) -> u32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.bytes[at::GRACE_PERIOD..at::GRACE_PERIOD + 4]);
        u32::from_le_bytes(b)
    }
    pub fn distribution_hash(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b.copy_from_slice(&self.bytes[at::DISTRIBUTION_HASH..at::DISTRIBUTION_HASH + 32]);
        b
    }
    pub fn parties(&self) -> Parties {
        Parties {
            payer: self.key_at(at::PAYER),
            payee: self.key_at(at::PAYEE),
            authorized_signer: self.key_at(at::AUTHORIZED_SIGNER),
            mint: self.key_at(at::MINT),
            rent_payer: self.key_at(at::RENT_PAYER),
        }
    }
    pub fn open_slot(&self) -> u64 {
        self.u64_at(at::OPEN_SLOT)
    }

    /// The seeds the channel signs its CPIs with (the bump included).
    pub fn signer_seeds(&self) -> SignerSeeds {
        let p = self.parties();
        SignerSeeds::new(&p, self.salt(), self.open_slot(), self.bump())
    }
}

/// The keys a channel binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parties {
    pub payer: Pubkey,
    pub payee: Pubkey,
    pub authorized_signer: Pubkey,
    pub mint: Pubkey,
    pub rent_payer: Pubkey,
}

/// The owned bytes of a channel's eight signer seeds.
pub struct SignerSeeds {
    payer: Pubkey,
    payee: Pubkey,
    mint: Pubkey,
    authorized_signer: Pubkey,
    salt: [u8; 8],
    open_slot: [u8; 8],
    bump: [u8; 1],
}

impl SignerSeeds {
    pub fn new(parties: &Parties, salt: u64, open_slot: u64, bump: u8) -> SignerSeeds {
        SignerSeeds {
            payer: parties.payer,
            payee: parties.payee,
            mint: parties.mint,
            authorized_signer: parties.authorized_signer,
            salt: salt.to_le_bytes(),
            open_slot: open_slot.to_le_bytes(),
            bump: [bump],
        }
    }

    pub fn as_seeds(&self) -> [&[u8]; 8] {
        [
            CHANNEL_SEED,
            self.payer.as_ref(),
            self.payee.as_ref(),
            self.mint.as_ref(),
            self.authorized_signer.as_ref(),
            &self.salt,
            &self.open_slot,
            &self.bump,
        ]
    }
}
