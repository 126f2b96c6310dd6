//! The rule of a gated channel open: the transaction is exactly [at most two ComputeBudget
//! instructions, `gate_channel_open`, the payment-channels program's `open`, at most two Memo
//! instructions], and the `open` is read in place so that the gate can check what it commits
//! the payer to (the deposit, the mint, who pays, who is paid, who holds the channel). Pure
//! logic over [`TxInstruction`], unit-tested with plain instructions.
//!
//! The `open`'s wire format (the program's public IDL): tag 1, salt u64, deposit u64,
//! grace_period u32, open_slot u64, then the distribution (u32 count, per share a recipient and
//! its basis points, u16), little-endian; accounts payer, rent_payer, payee, mint,
//! authorized_signer, channel, then eight the program checks itself.

use crate::errors::GateError;
use crate::settlement::{check_prefix, TxInstruction};
use anchor_lang::prelude::*;
use trust_gate_program_common::external::ids::{MEMO, PAYMENT_CHANNELS};

/// The `open` instruction's tag.
pub const OPEN_TAG: u8 = 1;
/// Basis points of a whole distribution.
pub const ALL_BPS: u16 = 10_000;
/// Accounts of an `open`.
pub const OPEN_ACCOUNTS: usize = 14;
/// Memo instructions a gated open may end with (a seller's memo and a binding memo).
pub const MAX_MEMOS: u16 = 2;

/// What a gated open commits to, read from the `open` that follows the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelOpen {
    pub payer: Pubkey,
    pub payer_signed: bool,
    pub rent_payer: Pubkey,
    pub rent_payer_signed: bool,
    pub payee: Pubkey,
    pub mint: Pubkey,
    pub authorized_signer: Pubkey,
    pub channel: Pubkey,
    pub salt: u64,
    pub deposit: u64,
    pub grace_period: u32,
    pub open_slot: u64,
    /// The one share of the distribution, when it names exactly one.
    pub only_share: Option<(Pubkey, u16)>,
}

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?))
}

/// Reads an `open` of the payment-channels program; `None` for anything else (another program,
/// tag, account count, or data that is not one whole `open`).
pub fn read_open<I: TxInstruction>(ix: &I) -> Option<ChannelOpen> {
    let data = ix.data();
    if !ix.is_program(&PAYMENT_CHANNELS)
        || data.first() != Some(&OPEN_TAG)
        || ix.account_count() != OPEN_ACCOUNTS
    {
        return None;
    }
    let count = u32::from_le_bytes(data.get(29..33)?.try_into().ok()?) as usize;
    if data.len() != 33usize.checked_add(count.checked_mul(34)?)? {
        return None;
    }
    let only_share = (count == 1).then(|| {
        let recipient = Pubkey::new_from_array(data[33..65].try_into().unwrap_or_default());
        (recipient, u16::from_le_bytes([data[65], data[66]]))
    });
    Some(ChannelOpen {
        payer: ix.account_key(0)?,
        payer_signed: ix.account_is_signer(0)?,
        rent_payer: ix.account_key(1)?,
        rent_payer_signed: ix.account_is_signer(1)?,
        payee: ix.account_key(2)?,
        mint: ix.account_key(3)?,
        authorized_signer: ix.account_key(4)?,
        channel: ix.account_key(5)?,
        salt: u64_at(data, 1)?,
        deposit: u64_at(data, 9)?,
        grace_period: u32::from_le_bytes(data.get(17..21)?.try_into().ok()?),
        open_slot: u64_at(data, 21)?,
        only_share,
    })
}

/// A Memo instruction that asks for no account (so it cannot make anyone sign).
fn is_plain_memo<I: TxInstruction>(ix: &I) -> bool {
    ix.is_program(&MEMO) && ix.account_count() == 0
}

/// Checks the layout of the transaction around the gate at `current` (of `count`
/// instructions, read by `get`) and returns the `open` right after it.
pub fn check_channel_bundle<I: TxInstruction>(
    current: u16,
    count: u16,
    get: impl Fn(u16) -> Option<I>,
) -> Result<ChannelOpen> {
    check_prefix((0..current).map(&get))?;
    let open = current
        .checked_add(1)
        .and_then(&get)
        .as_ref()
        .and_then(read_open)
        .ok_or(GateError::ChannelBundleInvalid)?;
    let after = current.saturating_add(2);
    require!(
        count >= after && count - after <= MAX_MEMOS,
        GateError::ChannelBundleInvalid
    );
    for i in after..count {
        require!(
            get(i).as_ref().is_some_and(is_plain_memo),
            GateError::ChannelBundleInvalid
        );
    }
    Ok(open)
}

/// What the open must say, from the gate's accounts.
pub struct ExpectedOpen {
    pub deposit: u64,
    pub mint: Pubkey,
    /// The payer agent's signer (its live owner or agent wallet).
    pub payer: Pubkey,
    /// The payee agent's recipient.
    pub recipient: Pubkey,
    pub facilitator: Pubkey,
}

/// The open pays the deposit the gate evaluates, in its mint, from the agent's signer, 100 % to
/// the payee agent's recipient, into a channel the facilitator holds (payee and rent payer,
/// as the x402 channel schemes have it).
pub fn check_open(open: &ChannelOpen, e: &ExpectedOpen) -> Result<()> {
    require!(
        open.deposit == e.deposit && open.mint == e.mint,
        GateError::ChannelOpenMismatch
    );
    require!(
        open.payer == e.payer && open.payer_signed,
        GateError::ChannelOpenMismatch
    );
    require!(
        open.only_share == Some((e.recipient, ALL_BPS)),
        GateError::ChannelDistributionInvalid
    );
    require!(
        open.payee == e.facilitator && open.rent_payer == e.facilitator && open.rent_payer_signed,
        GateError::ChannelFacilitatorMismatch
    );
    Ok(())
}

/// A channel account as the program keeps it (its public IDL): 256 bytes, a one-byte
/// discriminator and version, then at these offsets the fields a close reads.
pub mod channel_at {
    pub const LEN: usize = 256;
    pub const DISCRIMINATOR: usize = 0;
    pub const VERSION: usize = 1;
    pub const STATUS: usize = 3;
    pub const SETTLED: usize = 20;
}
/// The channel discriminator and the one version the program writes.
pub const CHANNEL_DISCRIMINATOR: u8 = 1;
pub const CHANNEL_VERSION: u8 = 1;
/// Statuses after which a channel's settled amount can no longer change.
pub const STATUS_SEALED: u8 = 1;
pub const STATUS_DISTRIBUTED: u8 = 3;

/// The final settled amount of a channel account's `data`: a channel sealed or distributed
/// (`settle` and `settle_and_seal` refuse both, so the amount is final).
pub fn final_settled(data: &[u8]) -> Result<u64> {
    require!(
        data.len() == channel_at::LEN
            && data[channel_at::DISCRIMINATOR] == CHANNEL_DISCRIMINATOR
            && data[channel_at::VERSION] == CHANNEL_VERSION,
        GateError::ChannelAccountInvalid
    );
    require!(
        matches!(data[channel_at::STATUS], STATUS_SEALED | STATUS_DISTRIBUTED),
        GateError::ChannelNotSealed
    );
    u64_at(data, channel_at::SETTLED).ok_or_else(|| error!(GateError::ChannelAccountInvalid))
}

/// The payment id of a channel's receipt (its FeedbackLog, which `dispute_payment` and
/// `close_payment_records` take as a payment's): `sha256("trust-gate:channel:" ‖ channel)`.
pub fn payment_id_hash(channel: &Pubkey) -> [u8; 32] {
    solana_sha256_hasher::hashv(&[PAYMENT_ID_DOMAIN, channel.as_ref()]).to_bytes()
}
const PAYMENT_ID_DOMAIN: &[u8] = b"trust-gate:channel:";

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};

    struct Keys {
        payer: Pubkey,
        facilitator: Pubkey,
        recipient: Pubkey,
        mint: Pubkey,
    }

    fn keys() -> Keys {
        Keys {
            payer: Pubkey::new_unique(),
            facilitator: Pubkey::new_unique(),
            recipient: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
        }
    }

    fn open(k: &Keys, deposit: u64, shares: &[(Pubkey, u16)]) -> Instruction {
        let mut data = vec![OPEN_TAG];
        data.extend_from_slice(&7u64.to_le_bytes());
        data.extend_from_slice(&deposit.to_le_bytes());
        data.extend_from_slice(&3_600u32.to_le_bytes());
        data.extend_from_slice(&1_000u64.to_le_bytes());
        data.extend_from_slice(&(shares.len() as u32).to_le_bytes());
        for (r, bps) in shares {
            data.extend_from_slice(r.as_ref());
            data.extend_from_slice(&bps.to_le_bytes());
        }
        let mut accounts = vec![
            AccountMeta::new(k.payer, true),
            AccountMeta::new(k.facilitator, true),
            AccountMeta::new_readonly(k.facilitator, false),
            AccountMeta::new_readonly(k.mint, false),
            AccountMeta::new_readonly(Pubkey::new_unique(), false),
            AccountMeta::new(Pubkey::new_unique(), false),
        ];
        accounts.extend((0..8).map(|_| AccountMeta::new_readonly(Pubkey::new_unique(), false)));
        Instruction {
            program_id: PAYMENT_CHANNELS,
            accounts,
            data,
        }
    }

    fn gate() -> Instruction {
        Instruction::new_with_bytes(crate::ID, &[0; 8], vec![])
    }

    fn memo() -> Instruction {
        Instruction::new_with_bytes(MEMO, b"x402", vec![])
    }

    fn bundle(ixs: &[Instruction], current: u16) -> Result<ChannelOpen> {
        check_channel_bundle(current, ixs.len() as u16, |i| {
            ixs.get(usize::from(i)).cloned()
        })
    }

    fn expected(k: &Keys, deposit: u64) -> ExpectedOpen {
        ExpectedOpen {
            deposit,
            mint: k.mint,
            payer: k.payer,
            recipient: k.recipient,
            facilitator: k.facilitator,
        }
    }

    fn code(r: Result<impl std::fmt::Debug>) -> u32 {
        match r.unwrap_err() {
            anchor_lang::error::Error::AnchorError(e) => e.error_code_number,
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn the_open_is_read_in_place() {
        let k = keys();
        let o = read_open(&open(&k, 500, &[(k.recipient, ALL_BPS)])).unwrap();
        assert_eq!(
            (o.payer, o.rent_payer, o.payee, o.mint, o.deposit, o.salt),
            (k.payer, k.facilitator, k.facilitator, k.mint, 500, 7)
        );
        assert_eq!((o.grace_period, o.open_slot), (3_600, 1_000));
        assert_eq!(o.only_share, Some((k.recipient, ALL_BPS)));
        assert!(o.payer_signed && o.rent_payer_signed);
        // A trailing byte, another tag, another program: not an open.
        let mut long = open(&k, 500, &[(k.recipient, ALL_BPS)]);
        long.data.push(0);
        assert!(read_open(&long).is_none());
        let mut other = open(&k, 500, &[]);
        other.data[0] = 3;
        assert!(read_open(&other).is_none());
        let mut elsewhere = open(&k, 500, &[]);
        elsewhere.program_id = Pubkey::new_unique();
        assert!(read_open(&elsewhere).is_none());
    }

    #[test]
    fn the_bundle_is_compute_budget_the_gate_the_open_and_memos() {
        let k = keys();
        let o = open(&k, 500, &[(k.recipient, ALL_BPS)]);
        let limit = Instruction::new_with_bytes(
            crate::settlement::COMPUTE_BUDGET_PROGRAM_ID,
            &[2, 0, 0, 1, 0],
            vec![],
        );
        assert!(bundle(&[gate(), o.clone()], 0).is_ok());
        assert!(bundle(&[limit.clone(), gate(), o.clone(), memo(), memo()], 1).is_ok());
        let invalid = u32::from(GateError::ChannelBundleInvalid);
        // No open after the gate (one before it is not a ComputeBudget prefix), a third memo,
        // another instruction after.
        assert_eq!(code(bundle(&[gate()], 0)), invalid);
        assert_eq!(
            code(bundle(&[o.clone(), gate()], 1)),
            u32::from(GateError::ComputeBudgetPrefixInvalid)
        );
        assert_eq!(
            code(bundle(&[gate(), o.clone(), memo(), memo(), memo()], 0)),
            invalid
        );
        assert_eq!(code(bundle(&[gate(), o.clone(), gate()], 0)), invalid);
        // A memo that names an account could make it a signer: refused.
        let mut signing = memo();
        signing
            .accounts
            .push(AccountMeta::new_readonly(k.payer, true));
        assert_eq!(code(bundle(&[gate(), o.clone(), signing], 0)), invalid);
        // Anything but ComputeBudget before the gate.
        assert_eq!(
            code(bundle(&[memo(), gate(), o], 1)),
            u32::from(GateError::ComputeBudgetPrefixInvalid)
        );
    }

    #[test]
    fn the_open_must_pay_the_payee_and_be_held_by_the_facilitator() {
        let k = keys();
        let ok = read_open(&open(&k, 500, &[(k.recipient, ALL_BPS)])).unwrap();
        assert!(check_open(&ok, &expected(&k, 500)).is_ok());
        let mismatch = u32::from(GateError::ChannelOpenMismatch);
        let distribution = u32::from(GateError::ChannelDistributionInvalid);
        let facilitator = u32::from(GateError::ChannelFacilitatorMismatch);
        // Another deposit or mint than the gate evaluates.
        assert_eq!(code(check_open(&ok, &expected(&k, 499))), mismatch);
        let mut e = expected(&k, 500);
        e.mint = Pubkey::new_unique();
        assert_eq!(code(check_open(&ok, &e)), mismatch);
        // Another payer, or the payer not signing.
        let mut e = expected(&k, 500);
        e.payer = Pubkey::new_unique();
        assert_eq!(code(check_open(&ok, &e)), mismatch);
        let unsigned = ChannelOpen {
            payer_signed: false,
            ..ok
        };
        assert_eq!(code(check_open(&unsigned, &expected(&k, 500))), mismatch);
        // Anything but 100 % to the recipient.
        for shares in [
            vec![],
            vec![(k.recipient, 9_999)],
            vec![(Pubkey::new_unique(), ALL_BPS)],
            vec![(k.recipient, 5_000), (Pubkey::new_unique(), 5_000)],
        ] {
            let o = read_open(&open(&k, 500, &shares)).unwrap();
            assert_eq!(
                code(check_open(&o, &expected(&k, 500))),
                distribution,
                "{shares:?}"
            );
        }
        // The facilitator must be the payee and the rent payer, signing.
        let mut e = expected(&k, 500);
        e.facilitator = Pubkey::new_unique();
        assert_eq!(code(check_open(&ok, &e)), facilitator);
        let held_by_another = ChannelOpen {
            payee: Pubkey::new_unique(),
            ..ok
        };
        assert_eq!(
            code(check_open(&held_by_another, &expected(&k, 500))),
            facilitator
        );
        let unsigned = ChannelOpen {
            rent_payer_signed: false,
            ..ok
        };
        assert_eq!(code(check_open(&unsigned, &expected(&k, 500))), facilitator);
    }

    fn channel_data(status: u8, settled: u64) -> Vec<u8> {
        let mut data = vec![0u8; channel_at::LEN];
        data[channel_at::DISCRIMINATOR] = CHANNEL_DISCRIMINATOR;
        data[channel_at::VERSION] = CHANNEL_VERSION;
        data[channel_at::STATUS] = status;
        data[channel_at::SETTLED..channel_at::SETTLED + 8].copy_from_slice(&settled.to_le_bytes());
        data
    }

    #[test]
    fn only_a_sealed_or_distributed_channel_has_a_final_settled_amount() {
        for status in [STATUS_SEALED, STATUS_DISTRIBUTED] {
            assert_eq!(final_settled(&channel_data(status, 42)).unwrap(), 42);
        }
        let code = |r: Result<u64>| match r {
            Err(Error::AnchorError(e)) => e.error_code_number,
            other => panic!("{other:?}"),
        };
        let not_sealed = u32::from(GateError::ChannelNotSealed);
        // Open and Closing can still settle.
        for status in [0, 2] {
            assert_eq!(code(final_settled(&channel_data(status, 42))), not_sealed);
        }
        let invalid = u32::from(GateError::ChannelAccountInvalid);
        let mut other_version = channel_data(STATUS_SEALED, 1);
        other_version[channel_at::VERSION] = 2;
        let mut tombstone = channel_data(STATUS_SEALED, 1);
        tombstone[channel_at::DISCRIMINATOR] = 2;
        let short = channel_data(STATUS_SEALED, 1)[..255].to_vec();
        for data in [other_version, tombstone, short, vec![]] {
            assert_eq!(code(final_settled(&data)), invalid);
        }
    }

    #[test]
    fn a_channels_payment_id_is_its_domain_separated_hash() {
        use sha2::{Digest, Sha256};
        let channel = Pubkey::new_unique();
        let mut h = Sha256::new();
        h.update(b"trust-gate:channel:");
        h.update(channel.as_ref());
        let expected: [u8; 32] = h.finalize().into();
        assert_eq!(payment_id_hash(&channel), expected);
        assert_ne!(payment_id_hash(&Pubkey::new_unique()), expected);
        // Not the address itself, which an exact payment's id could name.
        assert_ne!(payment_id_hash(&channel), channel.to_bytes());
    }
}
