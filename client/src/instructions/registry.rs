//! The external agent registry's instructions that trust-gate's tools send to it, in the real
//! registry's format (the localnet's stand-in takes the same): setting an agent wallet, which
//! the new wallet proves it holds by signing a message checked by the Ed25519 precompile in the
//! instruction right before.

use super::{ed25519_verify, Builder};
use anchor_lang::prelude::Pubkey;
use solana_sdk::instruction::{AccountMeta, Instruction};
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::sysvar;

/// `global:set_agent_wallet`.
const SET_AGENT_WALLET: [u8; 8] = [154, 87, 251, 23, 51, 12, 4, 150];

/// The domain prefix of the message an agent wallet signs.
pub const WALLET_SET_PREFIX: &[u8] = b"8004_WALLET_SET:";

/// How far ahead of the cluster's clock the signed deadline may be.
pub const MAX_WALLET_DEADLINE_SECS: i64 = 300;

/// What the new wallet signs: the prefix, then the asset, the wallet, the owner sending the
/// instruction, and the deadline (unix seconds, little-endian): 120 bytes.
pub fn wallet_set_message(
    asset: &Pubkey,
    wallet: &Pubkey,
    owner: &Pubkey,
    deadline: i64,
) -> Vec<u8> {
    let mut m = Vec::with_capacity(WALLET_SET_PREFIX.len() + 32 * 3 + 8);
    m.extend_from_slice(WALLET_SET_PREFIX);
    m.extend_from_slice(asset.as_ref());
    m.extend_from_slice(wallet.as_ref());
    m.extend_from_slice(owner.as_ref());
    m.extend_from_slice(&deadline.to_le_bytes());
    m
}

impl Builder {
    /// Sets `wallet` as the agent wallet of `asset`: the Ed25519 check of the wallet's
    /// signature over [`wallet_set_message`], then the registry's `set_agent_wallet(wallet,
    /// deadline)`, signed by `owner` (the asset's owner). Send both, in this order, in one
    /// transaction, before `deadline` and at most [`MAX_WALLET_DEADLINE_SECS`] before it by
    /// the cluster's clock. The registry also records `owner` as the agent's owner.
    pub fn set_agent_wallet(
        &self,
        owner: &Pubkey,
        asset: &Pubkey,
        wallet: &Keypair,
        deadline: i64,
    ) -> [Instruction; 2] {
        let message = wallet_set_message(asset, &wallet.pubkey(), owner, deadline);
        let mut data = SET_AGENT_WALLET.to_vec();
        data.extend_from_slice(wallet.pubkey().as_ref());
        data.extend_from_slice(&deadline.to_le_bytes());
        [
            ed25519_verify(wallet, &message),
            Instruction {
                program_id: self.ids.agent_registry,
                accounts: vec![
                    AccountMeta::new_readonly(*owner, true),
                    AccountMeta::new(self.pda.agent_account(asset), false),
                    AccountMeta::new_readonly(*asset, false),
                    AccountMeta::new_readonly(sysvar::instructions::ID, false),
                ],
                data,
            },
        ]
    }
}
