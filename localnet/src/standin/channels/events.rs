//! Events, Anchor-compatible: the program calls itself (`emit_event`) with the event as
//! instruction data, signed by its event-authority PDA (`["event_authority"]`), so that
//! indexers find the event among the inner instructions. The data is the 8-byte event tag
//! (`e4 45 a5 2e 51 cb 9a 1d`), the event's discriminator (the first 8 bytes of
//! SHA-256 of `event:<Name>`), then its fields, little-endian.

use super::{exact, fail, require_signer, ChannelsError, CountError};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::program::invoke_signed;
use sha2::{Digest, Sha256};
use trust_gate_client::channels::{event_authority, PROGRAM_ID};

const EVENT_AUTHORITY_SEED: &[u8] = b"event_authority";
/// Anchor's event-CPI tag, little-endian.
const EVENT_TAG: [u8; 8] = 0x1d9a_cb51_2ea5_45e4u64.to_le_bytes();

/// Who a redirected payout was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Beneficiary {
    Recipient = 0,
    Payee = 1,
    Payer = 2,
}

/// Why a payout went to the treasury instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectReason {
    UnsupportedExtension = 0,
    ClosedOrMalformed = 1,
    NotInitialized = 2,
    ReassignedAuthority = 3,
}

fn discriminator(name: &str) -> [u8; 8] {
    let hash = Sha256::digest(format!("event:{name}").as_bytes());
    let mut d = [0u8; 8];
    d.copy_from_slice(&hash[..8]);
    d
}

fn event_data(name: &str, fields: &[&[u8]]) -> Vec<u8> {
    let mut data = EVENT_TAG.to_vec();
    data.extend_from_slice(&discriminator(name));
    for f in fields {
        data.extend_from_slice(f);
    }
    data
}

/// `Opened { channel, open_slot }`.
pub fn opened(channel: &Pubkey, open_slot: u64) -> Vec<u8> {
    event_data("Opened", &[channel.as_ref(), &open_slot.to_le_bytes()])
}

/// `PayoutRedirected { channel, owner, amount, beneficiary, reason }`.
pub fn payout_redirected(
    channel: &Pubkey,
    owner: &Pubkey,
    amount: u64,
    beneficiary: Beneficiary,
    reason: RedirectReason,
) -> Vec<u8> {
    event_data(
        "PayoutRedirected",
        &[
            channel.as_ref(),
            owner.as_ref(),
            &amount.to_le_bytes(),
            &[beneficiary as u8, reason as u8],
        ],
    )
}

fn check_authority(account: &AccountInfo) -> ProgramResult {
    if *account.key == event_authority() {
        Ok(())
    } else {
        Err(fail(
            ChannelsError::InvalidEventAuthority,
            "not the event authority",
        ))
    }
}

/// Emits `data` by a self-CPI signed by the event authority (checked first: 8).
pub fn emit<'a>(
    event_authority_account: &AccountInfo<'a>,
    self_program: &AccountInfo<'a>,
    data: Vec<u8>,
) -> ProgramResult {
    check_authority(event_authority_account)?;
    let (_, bump) = Pubkey::find_program_address(&[EVENT_AUTHORITY_SEED], &PROGRAM_ID);
    let ix = Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![AccountMeta::new_readonly(
            *event_authority_account.key,
            true,
        )],
        data,
    };
    invoke_signed(
        &ix,
        &[event_authority_account.clone(), self_program.clone()],
        &[&[EVENT_AUTHORITY_SEED, &[bump]]],
    )
}

/// `emit_event`: exactly the event authority, signing. Nothing else happens: the event is
/// the instruction's data.
pub fn emit_event(accounts: &[AccountInfo]) -> ProgramResult {
    let [authority] = exact::<1>(accounts, CountError::Custom, "emit_event")?;
    require_signer(authority, "event_authority")?;
    check_authority(authority)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_event_tag_and_discriminators_are_anchors() {
        assert_eq!(
            super::EVENT_TAG,
            [0xe4, 0x45, 0xa5, 0x2e, 0x51, 0xcb, 0x9a, 0x1d]
        );
        assert_eq!(
            super::discriminator("Opened"),
            [0xa6, 0xac, 0x61, 0x09, 0x4d, 0x4c, 0xbd, 0x6d]
        );
        assert_eq!(
            super::discriminator("PayoutRedirected"),
            [0xd1, 0x16, 0xb9, 0xd7, 0x54, 0xa7, 0x54, 0x50]
        );
    }
}
