//! The registry's hash chains, computed as the real registry computes them, so that the
//! stand-in keeps the same feedback and response digests in `AgentAccount` and tests can
//! recompute either chain from what they sent.
//!
//! Each chain folds one 32-byte leaf per event into its digest:
//! `digest' = keccak256(digest ‖ domain ‖ leaf)`, from 32 zero bytes at registration.
//!
//! - feedback: the leaf is `keccak256("8004_LEAF_V1____" ‖ asset ‖ client ‖ index (u64 LE) ‖
//!   seal ‖ slot (u64 LE))` where `index` is the feedback count before the feedback and the
//!   seal is [`seal_hash`] of its content; the domain is `"8004_FEEDBACK_V1"`;
//! - response: the leaf is `keccak256("8004_RSP_LEAF_V1" ‖ asset ‖ client ‖ index (u64 LE)
//!   ‖ responder ‖ response hash ‖ seal ‖ slot (u64 LE))` with the `append_response`
//!   arguments as given; the domain is `"8004_RESPONSE_V1"`.
//!
//! `slot` is the slot the instruction ran in (the Clock sysvar's).

use anchor_lang::prelude::Pubkey;
use solana_keccak_hasher::hashv;
use trust_gate_program_common::external::instructions::{AppendResponseArgs, GiveFeedbackArgs};

/// Chain domains.
pub const FEEDBACK_DOMAIN: &[u8] = b"8004_FEEDBACK_V1";
pub const RESPONSE_DOMAIN: &[u8] = b"8004_RESPONSE_V1";
/// Leaf and seal domains (16 bytes each).
pub const FEEDBACK_LEAF_DOMAIN: &[u8; 16] = b"8004_LEAF_V1____";
pub const RESPONSE_LEAF_DOMAIN: &[u8; 16] = b"8004_RSP_LEAF_V1";
pub const SEAL_DOMAIN: &[u8; 16] = b"8004_SEAL_V1____";

/// The seal of a feedback's content: keccak256 of the seal domain, `value` (i128 LE),
/// `value_decimals`, the score as two bytes (1 and the score, or 0 and 0), the file-hash
/// flag (1 or 0) and the file hash when there is one, then `tag1`, `tag2`, `endpoint` and
/// `feedback_uri`, each as a u16 LE length and its bytes. The registry bounds each string to
/// 250 bytes before it seals, so the u16 lengths are exact.
pub fn seal_hash(args: &GiveFeedbackArgs) -> [u8; 32] {
    let value = args.value.to_le_bytes();
    let score = match args.score {
        Some(score) => [1, score],
        None => [0, 0],
    };
    let head = [
        args.value_decimals,
        score[0],
        score[1],
        u8::from(args.feedback_file_hash.is_some()),
    ];
    let file_hash: &[u8] = match &args.feedback_file_hash {
        Some(hash) => hash,
        None => &[],
    };
    let strings = [&args.tag1, &args.tag2, &args.endpoint, &args.feedback_uri];
    let lengths = strings.map(|s| (s.len() as u16).to_le_bytes());
    hashv(&[
        SEAL_DOMAIN,
        &value,
        &head,
        file_hash,
        &lengths[0],
        strings[0].as_bytes(),
        &lengths[1],
        strings[1].as_bytes(),
        &lengths[2],
        strings[2].as_bytes(),
        &lengths[3],
        strings[3].as_bytes(),
    ])
    .to_bytes()
}

/// The leaf of the feedback number `index` from `client` to the agent of `asset`, sealed
/// `seal`, given in `slot`.
pub fn feedback_leaf(
    asset: &Pubkey,
    client: &Pubkey,
    index: u64,
    seal: &[u8; 32],
    slot: u64,
) -> [u8; 32] {
    hashv(&[
        FEEDBACK_LEAF_DOMAIN,
        asset.as_ref(),
        client.as_ref(),
        &index.to_le_bytes(),
        seal,
        &slot.to_le_bytes(),
    ])
    .to_bytes()
}

/// The leaf of a response by `responder` (the `append_response` arguments as given) to the
/// agent of `asset`, appended in `slot`.
pub fn response_leaf(
    asset: &Pubkey,
    responder: &Pubkey,
    args: &AppendResponseArgs,
    slot: u64,
) -> [u8; 32] {
    hashv(&[
        RESPONSE_LEAF_DOMAIN,
        asset.as_ref(),
        args.client_address.as_ref(),
        &args.feedback_index.to_le_bytes(),
        responder.as_ref(),
        &args.response_hash,
        &args.seal_hash,
        &slot.to_le_bytes(),
    ])
    .to_bytes()
}

/// One link: the digest after `leaf` is folded into `digest` under `domain`.
pub fn chain(digest: &[u8; 32], domain: &[u8], leaf: &[u8; 32]) -> [u8; 32] {
    hashv(&[digest, domain, leaf]).to_bytes()
}

/// The feedback digest after the feedback number `index` (`args`, from `client`, in `slot`).
pub fn next_feedback_digest(
    digest: &[u8; 32],
    asset: &Pubkey,
    client: &Pubkey,
    index: u64,
    args: &GiveFeedbackArgs,
    slot: u64,
) -> [u8; 32] {
    let leaf = feedback_leaf(asset, client, index, &seal_hash(args), slot);
    chain(digest, FEEDBACK_DOMAIN, &leaf)
}

/// The response digest after a response (`args`, by `responder`, in `slot`).
pub fn next_response_digest(
    digest: &[u8; 32],
    asset: &Pubkey,
    responder: &Pubkey,
    args: &AppendResponseArgs,
    slot: u64,
) -> [u8; 32] {
    chain(
        digest,
        RESPONSE_DOMAIN,
        &response_leaf(asset, responder, args, slot),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(score: Option<u8>, file_hash: Option<[u8; 32]>) -> GiveFeedbackArgs {
        GiveFeedbackArgs {
            value: -100,
            value_decimals: 0,
            score,
            feedback_file_hash: file_hash,
            tag1: "a".into(),
            tag2: "bc".into(),
            endpoint: String::new(),
            feedback_uri: "ar://x".into(),
        }
    }

    /// The seal is keccak256 of one contiguous buffer: built here byte by byte.
    #[test]
    fn the_seal_hashes_the_documented_bytes() {
        let mut bytes = SEAL_DOMAIN.to_vec();
        bytes.extend_from_slice(&(-100i128).to_le_bytes());
        bytes.extend_from_slice(&[0, 1, 85, 1]);
        bytes.extend_from_slice(&[7; 32]);
        for s in ["a", "bc", "", "ar://x"] {
            bytes.extend_from_slice(&(s.len() as u16).to_le_bytes());
            bytes.extend_from_slice(s.as_bytes());
        }
        let expected = solana_keccak_hasher::hash(&bytes).to_bytes();
        assert_eq!(seal_hash(&args(Some(85), Some([7; 32]))), expected);
        // Score absent and score 0 differ; so do with and without a file hash.
        assert_ne!(
            seal_hash(&args(None, None)),
            seal_hash(&args(Some(0), None))
        );
        assert_ne!(
            seal_hash(&args(None, None)),
            seal_hash(&args(None, Some([0; 32])))
        );
    }

    #[test]
    fn a_link_hashes_digest_domain_and_leaf() {
        let (digest, leaf) = ([1; 32], [2; 32]);
        let mut bytes = digest.to_vec();
        bytes.extend_from_slice(RESPONSE_DOMAIN);
        bytes.extend_from_slice(&leaf);
        assert_eq!(
            chain(&digest, RESPONSE_DOMAIN, &leaf),
            solana_keccak_hasher::hash(&bytes).to_bytes()
        );
    }
}
