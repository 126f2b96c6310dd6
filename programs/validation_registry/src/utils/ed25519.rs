//! Reading an Ed25519 program instruction from the instructions sysvar.
//!
//! The Ed25519 precompile verifies every signature in its instruction before any program
//! runs (the transaction fails otherwise), so a program only has to check WHAT was signed and
//! BY WHOM. Instruction layout: `num_signatures: u8, padding: u8`, then per signature 14 bytes
//! of little-endian u16 offsets (signature, signature instruction index, public key, public
//! key instruction index, message, message size, message instruction index). An index of
//! `u16::MAX` means "this instruction's own data".

use anchor_lang::prelude::{pubkey, Pubkey};

/// The Ed25519 signature verification precompile.
pub const ED25519_PROGRAM_ID: Pubkey = pubkey!("Ed25519SigVerify111111111111111111111111111");

/// Offset of the first signature's offsets block.
const OFFSETS_START: usize = 2;
/// Size of one offsets block.
const OFFSETS_LEN: usize = 14;
const PUBKEY_LEN: usize = 32;
const SIGNATURE_LEN: usize = 64;
/// Instruction index meaning "the Ed25519 instruction itself".
const THIS_INSTRUCTION: u16 = u16::MAX;

/// The one signature of an Ed25519 instruction whose data is all inline.
#[derive(Debug, PartialEq, Eq)]
pub struct InlineSignature<'a> {
    pub public_key: Pubkey,
    pub message: &'a [u8],
}

fn read_u16(data: &[u8], at: usize) -> Option<u16> {
    let bytes = data.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([bytes[0], bytes[1]]))
}

fn slice(data: &[u8], offset: u16, len: usize) -> Option<&[u8]> {
    let start = usize::from(offset);
    data.get(start..start.checked_add(len)?)
}

/// Parses Ed25519 instruction data that carries exactly one signature with the signature,
/// public key and message all inside the instruction itself. `None` for anything else (several
/// signatures, data referenced in other instructions, offsets out of bounds).
pub fn parse_single_inline(data: &[u8]) -> Option<InlineSignature<'_>> {
    if data.len() < OFFSETS_START + OFFSETS_LEN || data[0] != 1 {
        return None;
    }
    let field = |i: usize| read_u16(data, OFFSETS_START + 2 * i);
    let signature_offset = field(0)?;
    let signature_index = field(1)?;
    let public_key_offset = field(2)?;
    let public_key_index = field(3)?;
    let message_offset = field(4)?;
    let message_size = field(5)?;
    let message_index = field(6)?;
    if [signature_index, public_key_index, message_index] != [THIS_INSTRUCTION; 3] {
        return None;
    }
    // The signature must lie within the instruction too (the precompile checked it).
    slice(data, signature_offset, SIGNATURE_LEN)?;
    let public_key: [u8; PUBKEY_LEN] = slice(data, public_key_offset, PUBKEY_LEN)?
        .try_into()
        .ok()?;
    let message = slice(data, message_offset, usize::from(message_size))?;
    Some(InlineSignature {
        public_key: Pubkey::new_from_array(public_key),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inline(pk: [u8; 32], sig: [u8; 64], msg: &[u8]) -> Vec<u8> {
        let pk_off = (OFFSETS_START + OFFSETS_LEN) as u16;
        let sig_off = pk_off + 32;
        let msg_off = sig_off + 64;
        let mut d = vec![1u8, 0];
        for v in [
            sig_off,
            u16::MAX,
            pk_off,
            u16::MAX,
            msg_off,
            msg.len() as u16,
            u16::MAX,
        ] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        d.extend_from_slice(&pk);
        d.extend_from_slice(&sig);
        d.extend_from_slice(msg);
        d
    }

    #[test]
    fn parses_one_inline_signature() {
        let d = inline([7; 32], [9; 64], b"hello");
        let s = parse_single_inline(&d).unwrap();
        assert_eq!(s.public_key, Pubkey::new_from_array([7; 32]));
        assert_eq!(s.message, b"hello");
    }

    #[test]
    fn rejects_other_shapes() {
        let good = inline([7; 32], [9; 64], b"hello");
        assert!(parse_single_inline(&[]).is_none());
        let mut two = good.clone();
        two[0] = 2;
        assert!(parse_single_inline(&two).is_none());
        let mut zero = good.clone();
        zero[0] = 0;
        assert!(parse_single_inline(&zero).is_none());
        for field in [1usize, 3, 6] {
            let mut other = good.clone();
            other[OFFSETS_START + 2 * field..OFFSETS_START + 2 * field + 2]
                .copy_from_slice(&0u16.to_le_bytes());
            assert!(parse_single_inline(&other).is_none(), "index field {field}");
        }
        let mut truncated = good.clone();
        truncated.truncate(good.len() - 1);
        assert!(parse_single_inline(&truncated).is_none());
        assert!(parse_single_inline(&good[..10]).is_none());
    }
}
