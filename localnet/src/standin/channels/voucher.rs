//! Vouchers: the program never verifies a signature itself. The transaction carries an
//! Ed25519 precompile instruction right before `settle` (or a voucher-bearing
//! `settle_and_seal`), the runtime verifies it, and the program reads its public key and its
//! 50-byte message through the instructions sysvar:
//! `0x56 0x01 | channel (32) | cumulative u64 | expires_at i64 (0 = never)`.
//!
//! Only the canonical single-signature layout with everything inline is accepted (162
//! bytes: count 1, padding 0, offsets 48 / 16 / 112, message size 50, every instruction
//! index `u16::MAX`).

use super::layout::ChannelState;
use super::{fail, fail_with, ChannelsError};
use anchor_lang::compat::solana_instructions_sysvar::{
    load_current_index_checked, load_instruction_at_checked, ID as INSTRUCTIONS_SYSVAR_ID,
};
use anchor_lang::prelude::*;
use solana_sdk::ed25519_program;
use std::result::Result;

const MAGIC: [u8; 2] = [0x56, 0x01];
const MESSAGE_LEN: usize = 50;
const PUBKEY_AT: usize = 16;
const SIGNATURE_AT: usize = 48;
const MESSAGE_AT: usize = 112;
const CANONICAL_LEN: usize = MESSAGE_AT + MESSAGE_LEN;
/// "In this instruction" for the precompile's instruction indexes.
const INLINE: u16 = u16::MAX;

/// The signer key and the message of a canonical precompile instruction, or `None`.
fn parse_precompile(data: &[u8]) -> Option<([u8; 32], [u8; MESSAGE_LEN])> {
    if data.len() != CANONICAL_LEN || data[0] != 1 || data[1] != 0 {
        return None;
    }
    let word = |i: usize| u16::from_le_bytes([data[2 + 2 * i], data[3 + 2 * i]]);
    let (sig_at, sig_ix, pk_at, pk_ix, msg_at, msg_len, msg_ix) = (
        word(0),
        word(1),
        word(2),
        word(3),
        word(4),
        word(5),
        word(6),
    );
    if sig_ix != INLINE || pk_ix != INLINE || msg_ix != INLINE {
        return None;
    }
    if usize::from(pk_at) != PUBKEY_AT
        || usize::from(sig_at) != SIGNATURE_AT
        || usize::from(msg_at) != MESSAGE_AT
        || usize::from(msg_len) != MESSAGE_LEN
    {
        return None;
    }
    let pubkey = data[PUBKEY_AT..PUBKEY_AT + 32].try_into().ok()?;
    let message = data[MESSAGE_AT..CANONICAL_LEN].try_into().ok()?;
    Some((pubkey, message))
}

/// The voucher's cumulative amount if the instruction before this one carries a voucher the
/// channel accepts: 230 no precompile before, 231 not canonical, 238 bad magic, 232 another
/// channel, 233 expired, 235 above the deposit, 234 not above the watermark, 237 another
/// signer (in that order).
pub fn verify(
    channel_address: &Pubkey,
    channel: &ChannelState,
    instructions_sysvar: &AccountInfo,
    now: i64,
) -> Result<u64, ProgramError> {
    if *instructions_sysvar.key != INSTRUCTIONS_SYSVAR_ID {
        return Err(fail_with(
            ProgramError::UnsupportedSysvar,
            "not the instructions sysvar",
        ));
    }
    let current = load_current_index_checked(instructions_sysvar)?;
    let missing = |why: &str| fail(ChannelsError::MissingEd25519Verification, why);
    let previous = current
        .checked_sub(1)
        .ok_or_else(|| missing("no instruction before this one"))?;
    let ix = load_instruction_at_checked(usize::from(previous), instructions_sysvar)
        .map_err(|_| missing("the instruction before cannot be read"))?;
    if ix.program_id != ed25519_program::ID {
        return Err(missing(
            "the instruction before is not an Ed25519 verification",
        ));
    }
    let (pubkey, message) = parse_precompile(&ix.data).ok_or_else(|| {
        fail(
            ChannelsError::MalformedEd25519Instruction,
            "the Ed25519 instruction is not the canonical single inline signature",
        )
    })?;
    if message[..2] != MAGIC {
        return Err(fail(ChannelsError::VoucherBadMagic, "not a voucher"));
    }
    if message[2..34] != channel_address.to_bytes() {
        return Err(fail(
            ChannelsError::VoucherChannelMismatch,
            "the voucher names another channel",
        ));
    }
    let mut word = [0u8; 8];
    word.copy_from_slice(&message[34..42]);
    let cumulative = u64::from_le_bytes(word);
    word.copy_from_slice(&message[42..50]);
    let expires_at = i64::from_le_bytes(word);
    if expires_at != 0 && now >= expires_at {
        return Err(fail(ChannelsError::VoucherExpired, "the voucher expired"));
    }
    if cumulative > channel.deposit() {
        return Err(fail(
            ChannelsError::VoucherOverDeposit,
            "the voucher exceeds the deposit",
        ));
    }
    if channel.settled() >= cumulative {
        return Err(fail(
            ChannelsError::VoucherWatermarkNotMonotonic,
            "the voucher does not exceed the settled amount",
        ));
    }
    if pubkey != channel.parties().authorized_signer.to_bytes() {
        return Err(fail(
            ChannelsError::VoucherSignerMismatch,
            "the voucher is not signed by the authorized signer",
        ));
    }
    Ok(cumulative)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical() -> Vec<u8> {
        let mut d = vec![0u8; CANONICAL_LEN];
        d[0] = 1;
        for (i, w) in [48u16, INLINE, 16, INLINE, 112, 50, INLINE]
            .iter()
            .enumerate()
        {
            d[2 + 2 * i..4 + 2 * i].copy_from_slice(&w.to_le_bytes());
        }
        d[PUBKEY_AT] = 7;
        d[MESSAGE_AT] = 0x56;
        d
    }

    #[test]
    fn only_the_canonical_layout_parses() {
        let (pk, msg) = parse_precompile(&canonical()).unwrap();
        assert_eq!((pk[0], msg[0]), (7, 0x56));
        let mut two = canonical();
        two[0] = 2;
        assert!(parse_precompile(&two).is_none());
        let mut cross = canonical();
        cross[4] = 0;
        assert!(parse_precompile(&cross).is_none());
        let mut long = canonical();
        long.push(0);
        assert!(parse_precompile(&long).is_none());
    }
}
