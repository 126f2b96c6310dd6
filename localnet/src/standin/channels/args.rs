//! Instruction data: the tag byte, then each instruction's fixed arguments, all little-endian.
//! Everything is parsed (and the distribution validated) before any account is read, so a
//! data error always wins over an account error, as in the real program.

use super::{fail, fail_with, ChannelsError};
use anchor_lang::prelude::*;
use sha2::{Digest, Sha256};
use std::result::Result;
use trust_gate_client::channels::{tag, ALL_BPS, MAX_RECIPIENTS};

/// The first byte of `emit_event`'s data: the first byte of the event tag the program's own
/// event CPIs start with.
pub const EMIT_EVENT_TAG: u8 = 228;
/// One distribution entry: a recipient and its basis points.
const ENTRY_LEN: usize = 32 + 2;
/// `open`'s fixed part after the tag: salt u64, deposit u64, grace u32, open slot u64.
const OPEN_HEADER_LEN: usize = 8 + 8 + 4 + 8;

/// One share of the settled amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub recipient: Pubkey,
    pub bps: u16,
}

/// A validated distribution, and the raw bytes the channel commits to (their SHA-256).
#[derive(Clone, Debug)]
pub struct Distribution {
    pub entries: Vec<Entry>,
    preimage: Vec<u8>,
}

impl Distribution {
    /// `count u32 | count × (recipient 32 | bps u16)`, exactly; at most 32 entries, none of
    /// zero bps, no recipient twice, the total at most 10 000.
    pub fn parse(data: &[u8]) -> Result<Distribution, ProgramError> {
        let Some((count, body)) = data.split_first_chunk::<4>() else {
            return Err(fail_with(
                ProgramError::InvalidInstructionData,
                "the distribution is shorter than its count",
            ));
        };
        let count = u32::from_le_bytes(*count);
        if count > MAX_RECIPIENTS as u32 {
            return Err(fail(
                ChannelsError::InvalidRecipientCount,
                "more than 32 recipients",
            ));
        }
        let expected = (count as usize)
            .checked_mul(ENTRY_LEN)
            .ok_or_else(|| fail(ChannelsError::DistributionPreimageLengthOverflow, "length"))?;
        if body.len() != expected {
            return Err(fail_with(
                ProgramError::InvalidInstructionData,
                "the distribution's length does not match its count",
            ));
        }
        let mut entries: Vec<Entry> = Vec::with_capacity(count as usize);
        let mut total: u32 = 0;
        for raw in body.chunks_exact(ENTRY_LEN) {
            let (key, bps) = raw.split_at(32);
            let recipient = Pubkey::try_from(key)
                .map_err(|_| fail_with(ProgramError::InvalidInstructionData, "recipient"))?;
            let bps = u16::from_le_bytes([bps[0], bps[1]]);
            if bps == 0 {
                return Err(fail(
                    ChannelsError::InvalidSplitConfig,
                    "a share of zero basis points",
                ));
            }
            total = total.checked_add(u32::from(bps)).ok_or_else(|| {
                fail(
                    ChannelsError::DistributionPartsOverflow,
                    "the shares' total",
                )
            })?;
            if entries.iter().any(|e| e.recipient == recipient) {
                return Err(fail(
                    ChannelsError::DuplicateRecipient,
                    "a recipient appears twice",
                ));
            }
            entries.push(Entry { recipient, bps });
        }
        if total > u32::from(ALL_BPS) {
            return Err(fail(
                ChannelsError::InvalidSplitConfig,
                "the shares exceed 10 000 basis points",
            ));
        }
        Ok(Distribution {
            entries,
            preimage: data.to_vec(),
        })
    }

    /// What the channel stores: SHA-256 of the raw distribution bytes.
    pub fn hash(&self) -> [u8; 32] {
        Sha256::digest(&self.preimage).into()
    }

    /// The payee's implicit share: what the entries leave of 10 000.
    pub fn payee_bps(&self) -> u32 {
        let taken: u32 = self.entries.iter().map(|e| u32::from(e.bps)).sum();
        u32::from(ALL_BPS).saturating_sub(taken)
    }
}

/// `open`'s arguments.
#[derive(Clone, Debug)]
pub struct OpenArgs {
    pub salt: u64,
    pub deposit: u64,
    pub grace_period: u32,
    pub open_slot: u64,
    pub distribution: Distribution,
}

/// A parsed instruction.
#[derive(Clone, Debug)]
pub enum Instruction {
    Open(OpenArgs),
    Settle,
    TopUp(u64),
    SettleAndSeal { has_voucher: bool },
    RequestClose,
    Seal,
    Distribute(Distribution),
    WithdrawPayer,
    Reclaim,
    EmitEvent,
}

fn invalid(why: &str) -> ProgramError {
    fail_with(ProgramError::InvalidInstructionData, why)
}

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?))
}

impl Instruction {
    /// Tags without arguments ignore trailing bytes, as the real program does; fixed
    /// arguments must be exactly their length.
    pub fn parse(data: &[u8]) -> Result<Instruction, ProgramError> {
        let (tag_byte, rest) = data
            .split_first()
            .ok_or_else(|| invalid("empty instruction data"))?;
        Ok(match *tag_byte {
            tag::OPEN => {
                if rest.len() < OPEN_HEADER_LEN {
                    return Err(invalid("`open`'s arguments are too short"));
                }
                let (header, tail) = rest.split_at(OPEN_HEADER_LEN);
                let grace = header
                    .get(16..20)
                    .and_then(|b| b.try_into().ok())
                    .map(u32::from_le_bytes)
                    .ok_or_else(|| invalid("grace period"))?;
                Instruction::Open(OpenArgs {
                    salt: u64_at(header, 0).ok_or_else(|| invalid("salt"))?,
                    deposit: u64_at(header, 8).ok_or_else(|| invalid("deposit"))?,
                    grace_period: grace,
                    open_slot: u64_at(header, 20).ok_or_else(|| invalid("open slot"))?,
                    distribution: Distribution::parse(tail)?,
                })
            }
            tag::SETTLE => Instruction::Settle,
            tag::TOP_UP => {
                let amount: [u8; 8] = rest
                    .try_into()
                    .map_err(|_| invalid("`top_up` takes exactly an 8-byte amount"))?;
                Instruction::TopUp(u64::from_le_bytes(amount))
            }
            tag::SETTLE_AND_SEAL => match rest {
                [flag] => Instruction::SettleAndSeal {
                    has_voucher: *flag != 0,
                },
                _ => return Err(invalid("`settle_and_seal` takes exactly one byte")),
            },
            tag::REQUEST_CLOSE => Instruction::RequestClose,
            tag::SEAL => Instruction::Seal,
            tag::DISTRIBUTE => Instruction::Distribute(Distribution::parse(rest)?),
            tag::WITHDRAW_PAYER => Instruction::WithdrawPayer,
            tag::RECLAIM => Instruction::Reclaim,
            EMIT_EVENT_TAG => Instruction::EmitEvent,
            other => return Err(invalid(&format!("unknown instruction tag {other}"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_client::channels::{distribution_hash, distribution_preimage, Split};

    fn preimage(entries: &[(Pubkey, u16)]) -> Vec<u8> {
        let splits: Vec<Split> = entries
            .iter()
            .map(|(recipient, bps)| Split {
                recipient: *recipient,
                bps: *bps,
            })
            .collect();
        distribution_preimage(&splits)
    }

    fn code(r: Result<Distribution, ProgramError>) -> ProgramError {
        r.expect_err("refused")
    }

    #[test]
    fn a_distribution_hashes_as_the_sdk_commits_to_it() {
        let a = Pubkey::new_unique();
        let d = Distribution::parse(&preimage(&[(a, 2_500)])).unwrap();
        let sdk = distribution_hash(&[Split {
            recipient: a,
            bps: 2_500,
        }]);
        assert_eq!(d.hash(), sdk);
        assert_eq!(d.payee_bps(), 7_500);
    }

    #[test]
    fn distributions_are_refused_with_the_real_numbers() {
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        assert_eq!(
            code(Distribution::parse(&preimage(&[(a, 0)]))),
            ProgramError::Custom(261)
        );
        assert_eq!(
            code(Distribution::parse(&preimage(&[(a, 1), (a, 1)]))),
            ProgramError::Custom(263)
        );
        assert_eq!(
            code(Distribution::parse(&preimage(&[(a, 6_000), (b, 6_000)]))),
            ProgramError::Custom(261)
        );
        assert_eq!(
            code(Distribution::parse(&33u32.to_le_bytes())),
            ProgramError::Custom(260)
        );
        let mut long = preimage(&[(a, 1)]);
        long.push(0);
        assert_eq!(
            code(Distribution::parse(&long)),
            ProgramError::InvalidInstructionData
        );
        assert_eq!(
            code(Distribution::parse(&[1, 0])),
            ProgramError::InvalidInstructionData
        );
        assert!(Distribution::parse(&0u32.to_le_bytes()).is_ok());
    }

    #[test]
    fn fixed_arguments_must_be_exact() {
        assert!(Instruction::parse(&[]).is_err());
        assert!(Instruction::parse(&[3, 1, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(Instruction::parse(&[4]).is_err());
        assert!(Instruction::parse(&[4, 1, 0]).is_err());
        assert!(matches!(
            Instruction::parse(&[2, 9, 9]),
            Ok(Instruction::Settle)
        ));
        assert!(Instruction::parse(&[10]).is_err());
    }
}
