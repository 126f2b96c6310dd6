//! The settlement rule, as pure checks over the transaction's instructions (read through the
//! instructions sysvar by the handlers).
//!
//! A settle transaction is exactly [gate_payment_strict, TransferChecked, emit_feedback].
//! Splitting them would let the velocity ledger count a payment whose transfer later failed
//! (e.g. reverted by a Token-2022 transfer hook); keeping them in one transaction makes the
//! counters, the transfer and the feedback succeed or fail together.

use crate::errors::GateError;
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::Instruction;
use anchor_lang::Discriminator;

pub const TOKEN_PROGRAM_ID: Pubkey = pubkey!("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
pub const TOKEN_2022_PROGRAM_ID: Pubkey = pubkey!("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
/// SPL Token / Token-2022 instruction tag of TransferChecked (data: tag, u64 amount, u8 decimals).
pub const TRANSFER_CHECKED_TAG: u8 = 12;
pub const SETTLEMENT_INSTRUCTION_COUNT: u16 = 3;
pub const GATE_INDEX: u16 = 0;
pub const TRANSFER_INDEX: u16 = 1;
pub const FEEDBACK_INDEX: u16 = 2;

pub fn is_token_program(id: &Pubkey) -> bool {
    *id == TOKEN_PROGRAM_ID || *id == TOKEN_2022_PROGRAM_ID
}

/// The arguments shared by gate_payment and gate_payment_strict, in wire order.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaymentArgs {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub amount: u64,
    pub mint: Pubkey,
    pub policy_id: u32,
}

/// A TransferChecked as it appears in the transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferChecked {
    pub token_program: Pubkey,
    pub source: Pubkey,
    pub mint: Pubkey,
    pub destination: Pubkey,
    pub authority: Pubkey,
    pub amount: u64,
}

pub fn parse_transfer_checked(ix: &Instruction) -> Option<TransferChecked> {
    if !is_token_program(&ix.program_id)
        || ix.data.len() != 10
        || ix.data[0] != TRANSFER_CHECKED_TAG
        || ix.accounts.len() < 4
    {
        return None;
    }
    Some(TransferChecked {
        token_program: ix.program_id,
        source: ix.accounts[0].pubkey,
        mint: ix.accounts[1].pubkey,
        destination: ix.accounts[2].pubkey,
        authority: ix.accounts[3].pubkey,
        amount: u64::from_le_bytes(ix.data[1..9].try_into().ok()?),
    })
}

/// The arguments of a gate_payment_strict instruction of this program.
pub fn parse_gate_strict(ix: &Instruction) -> Option<PaymentArgs> {
    let disc = crate::instruction::GatePaymentStrict::DISCRIMINATOR;
    if ix.program_id != crate::ID || !ix.data.starts_with(disc) {
        return None;
    }
    PaymentArgs::try_from_slice(&ix.data[disc.len()..]).ok()
}

/// The payee of an emit_feedback instruction of this program (its third argument, after the
/// 32-byte payment id hash and the facilitator key).
pub fn parse_feedback_payee(ix: &Instruction) -> Option<Pubkey> {
    let disc = crate::instruction::EmitFeedback::DISCRIMINATOR;
    if ix.program_id != crate::ID || !ix.data.starts_with(disc) {
        return None;
    }
    let start = disc.len() + 64;
    let bytes: [u8; 32] = ix.data.get(start..start + 32)?.try_into().ok()?;
    Some(Pubkey::new_from_array(bytes))
}

/// What the strict gate requires of the rest of the bundle.
pub struct Expected {
    pub amount: u64,
    pub mint: Pubkey,
    pub destination: Pubkey,
    pub authority: Pubkey,
    pub payee_asset: Pubkey,
}

/// Checks the bundle seen from gate_payment_strict at `current` of `count` instructions.
pub fn check_strict_bundle(
    current: u16,
    count: u16,
    transfer: Option<&Instruction>,
    feedback: Option<&Instruction>,
    expected: &Expected,
) -> Result<()> {
    require!(
        current == GATE_INDEX && count == SETTLEMENT_INSTRUCTION_COUNT,
        GateError::SettlementLayoutInvalid
    );
    let t = transfer
        .and_then(parse_transfer_checked)
        .ok_or(GateError::TransferMissing)?;
    require!(
        t.amount == expected.amount,
        GateError::TransferAmountMismatch
    );
    require_keys_eq!(t.mint, expected.mint, GateError::TransferMintMismatch);
    require_keys_eq!(
        t.destination,
        expected.destination,
        GateError::TransferDestinationMismatch
    );
    require_keys_eq!(
        t.authority,
        expected.authority,
        GateError::TransferAuthorityMismatch
    );
    let payee = feedback
        .and_then(parse_feedback_payee)
        .ok_or(GateError::FeedbackMissing)?;
    require_keys_eq!(
        payee,
        expected.payee_asset,
        GateError::FeedbackPayeeMismatch
    );
    Ok(())
}

/// Seen from emit_feedback: the gate instruction's arguments when this emission is the third
/// instruction of a settlement for `payee_asset`, else `None` (a standalone emission).
pub fn settled_payment(
    current: u16,
    count: u16,
    gate: Option<&Instruction>,
    transfer: Option<&Instruction>,
    payee_asset: &Pubkey,
) -> Option<PaymentArgs> {
    if current != FEEDBACK_INDEX || count != SETTLEMENT_INSTRUCTION_COUNT {
        return None;
    }
    let args = gate.and_then(parse_gate_strict)?;
    transfer.and_then(parse_transfer_checked)?;
    (args.payee_asset == *payee_asset).then_some(args)
}
