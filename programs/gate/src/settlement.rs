//! The settlement rule, as pure checks over the transaction's instructions (read through the
//! instructions sysvar by the handlers).
//!
//! A settle transaction is [gate_payment_strict, TransferChecked, emit_feedback], the payment
//! part, optionally preceded by at most two ComputeBudget instructions (a unit limit and a unit
//! price, so that a settlement can carry a priority fee on a congested cluster). A payment the
//! payer's policy holds a share of has a second TransferChecked, of the held share to the
//! gate's escrow, right after the first ([`crate::holdback`]). Nothing else may come before,
//! between or after.
//! Splitting the payment part would let the velocity ledger count a payment whose transfer
//! later failed (e.g. reverted by a Token-2022 transfer hook); keeping it in one transaction
//! makes the counters, the transfers and the feedback succeed or fail together.

use crate::errors::GateError;
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::Instruction;
use anchor_lang::Discriminator;
pub use trust_gate_program_common::token_mint::{
    is_token_program, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID,
};

pub const COMPUTE_BUDGET_PROGRAM_ID: Pubkey =
    pubkey!("ComputeBudget111111111111111111111111111111");
/// ComputeBudget instruction tags: SetComputeUnitLimit (data: tag, u32) and
/// SetComputeUnitPrice (data: tag, u64 micro-lamports).
pub const SET_COMPUTE_UNIT_LIMIT_TAG: u8 = 2;
pub const SET_COMPUTE_UNIT_PRICE_TAG: u8 = 3;
/// At most this many ComputeBudget instructions may precede the payment part.
pub const MAX_PREFIX: u16 = 2;
/// The payment part: [gate_payment_strict, TransferChecked, emit_feedback].
pub const PAYMENT_INSTRUCTIONS: u16 = 3;
/// A held payment's part: [gate_payment_strict, TransferChecked to the payee, TransferChecked
/// to the escrow, emit_feedback].
pub const HELD_PAYMENT_INSTRUCTIONS: u16 = 4;
/// SPL Token / Token-2022 instruction tag of TransferChecked (data: tag, u64 amount, u8 decimals).
pub const TRANSFER_CHECKED_TAG: u8 = 12;

/// A top-level instruction as the settlement rule reads it: in place in the instructions
/// sysvar on chain (`instructions::helpers::introspection`), an [`Instruction`] in the SDKs and tests.
pub trait TxInstruction {
    fn is_program(&self, id: &Pubkey) -> bool {
        self.program_id() == *id
    }
    fn program_id(&self) -> Pubkey;
    fn data(&self) -> &[u8];
    fn account_count(&self) -> usize;
    fn account_key(&self, i: usize) -> Option<Pubkey>;
    fn account_is_signer(&self, i: usize) -> Option<bool>;
}

impl TxInstruction for Instruction {
    fn program_id(&self) -> Pubkey {
        self.program_id
    }
    fn data(&self) -> &[u8] {
        &self.data
    }
    fn account_count(&self) -> usize {
        self.accounts.len()
    }
    fn account_key(&self, i: usize) -> Option<Pubkey> {
        self.accounts.get(i).map(|m| m.pubkey)
    }
    fn account_is_signer(&self, i: usize) -> Option<bool> {
        self.accounts.get(i).map(|m| m.is_signer)
    }
}

/// Where the payment part starts in a settlement of `count` instructions whose payment part
/// has `len` instructions: it ends the transaction, after a prefix of at most [`MAX_PREFIX`].
pub fn payment_start(count: u16, len: u16) -> Option<u16> {
    count
        .checked_sub(len)
        .filter(|prefix| *prefix <= MAX_PREFIX)
}

/// The length of the payment part that starts at `start` of `count`: 3, or 4 with a
/// holdback; `None` for any other layout.
#[inline(always)]
pub fn payment_len(start: u16, count: u16) -> Option<u16> {
    let len = count.checked_sub(start)?;
    (start <= MAX_PREFIX && (len == PAYMENT_INSTRUCTIONS || len == HELD_PAYMENT_INSTRUCTIONS))
        .then_some(len)
}

/// The tag of a ComputeBudget instruction that may precede the payment (unit limit or unit
/// price, well formed, no accounts), else `None`.
pub fn compute_budget_tag(ix: &impl TxInstruction) -> Option<u8> {
    if !ix.is_program(&COMPUTE_BUDGET_PROGRAM_ID) || ix.account_count() != 0 {
        return None;
    }
    match (ix.data().first(), ix.data().len()) {
        (Some(&SET_COMPUTE_UNIT_LIMIT_TAG), 5) => Some(SET_COMPUTE_UNIT_LIMIT_TAG),
        (Some(&SET_COMPUTE_UNIT_PRICE_TAG), 9) => Some(SET_COMPUTE_UNIT_PRICE_TAG),
        _ => None,
    }
}

/// The prefix: only a unit limit and a unit price, each at most once.
pub fn check_prefix<I: TxInstruction>(prefix: impl IntoIterator<Item = Option<I>>) -> Result<()> {
    let mut seen = [false; 2];
    for ix in prefix {
        let tag = ix
            .as_ref()
            .and_then(compute_budget_tag)
            .ok_or(GateError::ComputeBudgetPrefixInvalid)?;
        let slot = &mut seen[usize::from(tag - SET_COMPUTE_UNIT_LIMIT_TAG)];
        require!(!*slot, GateError::ComputeBudgetPrefixInvalid);
        *slot = true;
    }
    Ok(())
}

/// A payment: the arguments of gate_payment, in wire order (gate_payment_strict takes the
/// amount and policy id as arguments and the rest as accounts: see [`parse_gate_strict`]).
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaymentArgs {
    /// The paying agent's asset (MPL Core), whose policy decides.
    pub payer_asset: Pubkey,
    /// The paid agent's asset, whose acceptance policy decides too; not the payer's.
    pub payee_asset: Pubkey,
    /// The amount in the mint's base units; more than zero.
    pub amount: u64,
    /// The mint of the payment.
    pub mint: Pubkey,
    /// The payer's policy the payment is evaluated under.
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
    /// The decimals the transfer names; the token program refuses any but the mint's.
    pub decimals: u8,
    /// Whether any account after the first four (a Token-2022 transfer hook's extra accounts;
    /// a multisig's signers, which a settlement never has) is marked as a signer.
    pub extra_signer: bool,
}

pub fn parse_transfer_checked(ix: &impl TxInstruction) -> Option<TransferChecked> {
    let data = ix.data();
    let token_program = ix.program_id();
    if !is_token_program(&token_program)
        || data.len() != 10
        || data[0] != TRANSFER_CHECKED_TAG
        || ix.account_count() < 4
    {
        return None;
    }
    Some(TransferChecked {
        token_program,
        source: ix.account_key(0)?,
        mint: ix.account_key(1)?,
        destination: ix.account_key(2)?,
        authority: ix.account_key(3)?,
        amount: u64::from_le_bytes(data[1..9].try_into().ok()?),
        decimals: data[9],
        extra_signer: (4..ix.account_count()).any(|i| ix.account_is_signer(i) == Some(true)),
    })
}

/// Where gate_payment_strict's accounts name the payment's parties and mint: after the eleven
/// evaluation accounts come payer_signer, payer_asset, payer_agent, payee_asset, payee_agent,
/// destination_token and mint_account (a unit test holds this to the accounts struct).
pub mod strict_accounts {
    /// The payee's AtomStats, which policy_vault checked (see `atom_stats::is_account_of`):
    /// emit_feedback passes the same account on to the registry.
    pub const PAYEE_STATS: usize = 5;
    /// The payer's policy, and the slot of its payee list (the policy again when it names
    /// none).
    pub const POLICY: usize = 1;
    pub const PAYEE_LIST: usize = 9;
    pub const PAYER_ASSET: usize = 12;
    pub const PAYER_AGENT: usize = 13;
    pub const PAYEE_ASSET: usize = 14;
    pub const MINT: usize = 17;
}

/// A gate_payment_strict instruction as the settlement rule reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrictPayment {
    pub args: PaymentArgs,
    /// Unix seconds; no settlement of the payment may land after it.
    pub deadline: i64,
    pub holdback_tier: Option<u8>,
}

/// Whether `ix` is a gate_payment_strict instruction of this program.
fn is_gate_strict(ix: &impl TxInstruction) -> bool {
    ix.is_program(&crate::ID)
        && ix
            .data()
            .starts_with(crate::instruction::GatePaymentStrict::DISCRIMINATOR)
}

/// The payment of a gate_payment_strict instruction of this program: its arguments and the
/// parties and mint its accounts name.
pub fn parse_gate_strict(ix: &impl TxInstruction) -> Option<StrictPayment> {
    if !is_gate_strict(ix) {
        return None;
    }
    let disc = crate::instruction::GatePaymentStrict::DISCRIMINATOR;
    // The instruction's arguments in Borsh's layout, read in place: amount, policy id,
    // deadline, then the holdback tier's option, and nothing after.
    let d = &ix.data()[disc.len()..];
    let amount = u64::from_le_bytes(*d.first_chunk::<8>()?);
    let policy_id = u32::from_le_bytes(*d.get(8..)?.first_chunk::<4>()?);
    let deadline = i64::from_le_bytes(*d.get(12..)?.first_chunk::<8>()?);
    let holdback_tier = match d.get(20..)? {
        [0] => None,
        [1, tier] => Some(*tier),
        _ => return None,
    };
    Some(StrictPayment {
        args: PaymentArgs {
            payer_asset: ix.account_key(strict_accounts::PAYER_ASSET)?,
            payee_asset: ix.account_key(strict_accounts::PAYEE_ASSET)?,
            amount,
            mint: ix.account_key(strict_accounts::MINT)?,
            policy_id,
        },
        deadline,
        holdback_tier,
    })
}

/// How far ahead of the cluster's clock a payment's deadline may be: an hour. The deadline
/// is an x402 challenge's expiry (its issue time plus `maxTimeoutSeconds`, typically a minute
/// or a few), and a bound keeps every log closable soon after its dispute window.
pub const MAX_DEADLINE_AHEAD_SECS: i64 = 60 * 60;

/// A settlement may land at `now` only up to its deadline, and only when the deadline is no
/// further ahead than [`MAX_DEADLINE_AHEAD_SECS`]. A log closes only after its deadline, so
/// the same payment id and deadline can never settle again once its log is gone.
pub fn check_deadline(deadline: i64, now: i64) -> Result<()> {
    require!(now <= deadline, GateError::PaymentExpired);
    require!(
        deadline.saturating_sub(now) <= MAX_DEADLINE_AHEAD_SECS,
        GateError::DeadlineTooFar
    );
    Ok(())
}

/// The payee of an emit_feedback instruction of this program, read in place: the third field
/// of its `EmitFeedbackArgs`, after the 32-byte payment id hash and the facilitator key.
pub fn parse_feedback_payee(ix: &impl TxInstruction) -> Option<Pubkey> {
    let disc = crate::instruction::EmitFeedback::DISCRIMINATOR;
    if !ix.is_program(&crate::ID) || !ix.data().starts_with(disc) {
        return None;
    }
    let start = disc.len() + 64;
    let bytes: [u8; 32] = ix.data().get(start..start + 32)?.try_into().ok()?;
    Some(Pubkey::new_from_array(bytes))
}

/// What the strict gate requires of the transaction.
pub struct Expected {
    /// The strict gate's own arguments.
    pub args: PaymentArgs,
    pub destination: Pubkey,
    pub authority: Pubkey,
    /// For a vault-funded settlement, the account the vault's release credits: the transfer
    /// must debit it, so the release cannot be diverted.
    pub source: Option<Pubkey>,
}

/// A held share's transfer to the escrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldTransfer {
    pub escrow: Pubkey,
    pub amount: u64,
}

impl PaymentArgs {
    /// A payment moves a positive amount from one agent to another.
    pub fn validate(&self) -> Result<()> {
        require!(self.amount > 0, GateError::AmountZero);
        require_keys_neq!(self.payer_asset, self.payee_asset, GateError::SelfPayment);
        Ok(())
    }
}

/// Checks the transaction seen from gate_payment_strict executing at top-level index
/// `current` of `count`; `load(i)` reads instruction `i`. Returns the held share's transfer
/// when the settlement holds one back: whether it is the share the policy sets is checked
/// against the decision, which comes later; that its destination is an escrow of the gate,
/// by emit_feedback, which is given the escrow (the strict gate reads no account for it).
pub fn check_strict_bundle<I: TxInstruction>(
    current: u16,
    count: u16,
    load: impl Fn(u16) -> Option<I>,
    expected: &Expected,
) -> Result<Option<HeldTransfer>> {
    let len = payment_len(current, count).ok_or(GateError::SettlementLayoutInvalid)?;
    // The instruction at `current` must be a strict gate, not a program that would call it.
    // That it is this very invocation, with these arguments and accounts, follows from the
    // caller's check that the gate runs at the top level: the runtime executes top-level
    // instruction `current` as it stands in the transaction (comparing them again here would
    // cost about 350 units of every settlement).
    require!(
        load(current).is_some_and(|ix| is_gate_strict(&ix)),
        GateError::StrictGateNotTopLevel
    );
    check_prefix((0..current).map(&load))?;
    let t = load(current + 1)
        .as_ref()
        .and_then(parse_transfer_checked)
        .ok_or(GateError::TransferMissing)?;
    check_transfer(&t, expected)?;
    require_keys_eq!(
        t.destination,
        expected.destination,
        GateError::TransferDestinationMismatch
    );
    // SPL Token accepts a transfer to its own source and moves nothing.
    require_keys_neq!(t.source, t.destination, GateError::SelfTransfer);
    if let Some(source) = expected.source {
        require_keys_eq!(t.source, source, GateError::TransferSourceMismatch);
    }
    let (paid, held) = if len == HELD_PAYMENT_INSTRUCTIONS {
        let h = held_transfer(load(current + 2), &t, expected)?;
        (t.amount.checked_add(h.amount), Some(h))
    } else {
        (Some(t.amount), None)
    };
    require!(
        paid == Some(expected.args.amount),
        GateError::TransferAmountMismatch
    );
    let payee = load(current + len - 1)
        .as_ref()
        .and_then(parse_feedback_payee)
        .ok_or(GateError::FeedbackMissing)?;
    require_keys_eq!(
        payee,
        expected.args.payee_asset,
        GateError::FeedbackPayeeMismatch
    );
    Ok(held)
}

/// The held share's transfer, right after the payment's transfer `paid`: out of the same
/// account, by the same signer, of the same mint. Kept out of line: a payment without a
/// holdback does not pay for its code.
#[inline(never)]
fn held_transfer<I: TxInstruction>(
    ix: Option<I>,
    paid: &TransferChecked,
    expected: &Expected,
) -> Result<HeldTransfer> {
    let h = ix
        .as_ref()
        .and_then(parse_transfer_checked)
        .ok_or(GateError::TransferMissing)?;
    check_transfer(&h, expected)?;
    // The same payer's tokens: the held share comes out of the payment, not elsewhere.
    require_keys_eq!(h.source, paid.source, GateError::TransferSourceMismatch);
    require!(h.amount > 0, GateError::HoldbackTransferMismatch);
    Ok(HeldTransfer {
        escrow: h.destination,
        amount: h.amount,
    })
}

/// A transfer of the settlement: of the payment's mint, by the payer's signer, lending no
/// signature to a transfer hook.
#[inline(always)]
fn check_transfer(t: &TransferChecked, expected: &Expected) -> Result<()> {
    require_keys_eq!(t.mint, expected.args.mint, GateError::TransferMintMismatch);
    require_keys_eq!(
        t.authority,
        expected.authority,
        GateError::TransferAuthorityMismatch
    );
    // Token-2022 hands a transfer hook the extra accounts with their flags: a signer there
    // (the payer's key, say) would lend the hook program the payer's signature.
    require!(!t.extra_signer, GateError::TransferExtraSigner);
    Ok(())
}

/// A settled payment as emit_feedback sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettledPayment {
    pub args: PaymentArgs,
    /// The transfer's authority: the payer's wallet, who may dispute the payment.
    pub payer_wallet: Pubkey,
    /// The mint's decimals, as the transfer named them (the token program checked them).
    pub decimals: u8,
    /// The payee's AtomStats account as the strict gate was given it (and policy_vault
    /// checked it).
    pub payee_stats: Pubkey,
    /// The strict gate's deadline.
    pub deadline: i64,
}

/// What a held settlement adds, as emit_feedback sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldSettlement {
    /// The share's transfer.
    pub transfer: HeldTransfer,
    /// The payer's policy as the strict gate was given it (and policy_vault checked it).
    pub policy: Pubkey,
    /// The payer's AgentAccount as the strict gate was given it (and checked it).
    pub payer_agent: Pubkey,
    /// The payee's token account the first transfer paid.
    pub destination: Pubkey,
    /// The payee tier the strict gate's terms were quoted for.
    pub tier: Option<u8>,
}

/// Seen from emit_feedback at `current` of `count`: the settled payment when this emission
/// ends a settlement for `payee_asset`, else `None` (a standalone emission). `held`: whether
/// the emission says it ends a held settlement (four instructions, not three). Either way
/// the strict gate at the start of the payment part has already checked the same layout
/// from its side, or the transaction would not have reached this instruction: an emission
/// that claims the other layout finds no strict gate where it looks.
pub fn settled_payment<I: TxInstruction>(
    current: u16,
    count: u16,
    load: impl Fn(u16) -> Option<I>,
    payee_asset: &Pubkey,
    held: bool,
) -> Option<SettledPayment> {
    let len = if held {
        HELD_PAYMENT_INSTRUCTIONS
    } else {
        PAYMENT_INSTRUCTIONS
    };
    let start = current.checked_sub(len - 1)?;
    if payment_start(count, len) != Some(start) {
        return None;
    }
    let gate = load(start)?;
    let StrictPayment { args, deadline, .. } = parse_gate_strict(&gate)?;
    let payee_stats = gate.account_key(strict_accounts::PAYEE_STATS)?;
    // The strict gate checked the whole transfer: only its signer and decimals are read.
    let transfer = load(start + 1)?;
    let decimals = match transfer.data() {
        [TRANSFER_CHECKED_TAG, .., decimals] if transfer.data().len() == 10 => *decimals,
        _ => return None,
    };
    (args.payee_asset == *payee_asset).then_some(SettledPayment {
        args,
        payer_wallet: transfer.account_key(3)?,
        decimals,
        payee_stats,
        deadline,
    })
}

/// Seen from emit_feedback at `current`, ending a held settlement that [`settled_payment`]
/// accepted: the held share's transfer, the policy and the quoted tier. Kept out of line: a
/// payment without a holdback does not pay for its code.
#[inline(never)]
pub fn held_settlement<I: TxInstruction>(
    current: u16,
    load: impl Fn(u16) -> Option<I>,
) -> Option<HeldSettlement> {
    let start = current.checked_sub(HELD_PAYMENT_INSTRUCTIONS - 1)?;
    let gate = load(start)?;
    let payment = parse_gate_strict(&gate)?;
    let paid = load(start + 1).as_ref().and_then(parse_transfer_checked)?;
    let h = load(start + 2).as_ref().and_then(parse_transfer_checked)?;
    Some(HeldSettlement {
        transfer: HeldTransfer {
            escrow: h.destination,
            amount: h.amount,
        },
        policy: gate.account_key(strict_accounts::POLICY)?,
        payer_agent: gate.account_key(strict_accounts::PAYER_AGENT)?,
        destination: paid.destination,
        tier: payment.holdback_tier,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::solana_program::instruction::AccountMeta;
    use anchor_lang::InstructionData;

    fn args() -> PaymentArgs {
        PaymentArgs {
            payer_asset: Pubkey::new_unique(),
            payee_asset: Pubkey::new_unique(),
            amount: 7,
            mint: Pubkey::new_unique(),
            policy_id: 1,
        }
    }

    const PAYEE_STATS: Pubkey = Pubkey::new_from_array([5; 32]);
    const PAYEE_LIST: Pubkey = Pubkey::new_from_array([6; 32]);

    const DEADLINE: i64 = 1_700_000_060;

    /// A gate_payment_strict instruction, its accounts laid out by the accounts struct itself
    /// (so this also holds [`strict_accounts`] to the struct).
    fn gate_ix(a: &PaymentArgs) -> Instruction {
        use anchor_lang::ToAccountMetas;
        let any = Pubkey::new_unique;
        let accounts = crate::accounts::GatePaymentStrict {
            evaluation: crate::accounts::CommitEvaluationAccounts {
                evaluate_signer: any(),
                policy: any(),
                velocity_ledger: any(),
                killswitch: any(),
                payer_stats: any(),
                payee_stats: PAYEE_STATS,
                payee_acceptance: any(),
                payer_attestation: None,
                payee_attestation: None,
                payee_list: PAYEE_LIST,
                policy_vault_program: policy_vault::ID,
            },
            payer_signer: any(),
            payer_asset: a.payer_asset,
            payer_agent: any(),
            payee_asset: a.payee_asset,
            payee_agent: any(),
            destination_token: any(),
            mint_account: a.mint,
            instructions: any(),
            vault: None,
            payer_token: None,
            token_program: None,
        };
        Instruction::new_with_bytes(
            crate::ID,
            &crate::instruction::GatePaymentStrict {
                amount: a.amount,
                policy_id: a.policy_id,
                deadline: DEADLINE,
                holdback_tier: None,
            }
            .data(),
            accounts.to_account_metas(None),
        )
    }

    #[test]
    fn the_strict_arguments_read_in_place_as_borsh_reads_them() {
        let a = args();
        for tier in [None, Some(0), Some(5)] {
            let mut ix = gate_ix(&a);
            ix.data = crate::instruction::GatePaymentStrict {
                amount: a.amount,
                policy_id: a.policy_id,
                deadline: DEADLINE,
                holdback_tier: tier,
            }
            .data();
            let borsh =
                crate::instruction::GatePaymentStrict::try_from_slice(&ix.data[8..]).unwrap();
            let read = parse_gate_strict(&ix).unwrap();
            assert_eq!(
                (
                    read.args.amount,
                    read.args.policy_id,
                    read.deadline,
                    read.holdback_tier
                ),
                (
                    borsh.amount,
                    borsh.policy_id,
                    borsh.deadline,
                    borsh.holdback_tier
                )
            );
            // A trailing byte, a bad option tag or a short tier: not a strict gate.
            for bad in [
                [ix.data.clone(), vec![0]].concat(),
                [&ix.data[..28], &[2][..]].concat(),
                [&ix.data[..28], &[1][..]].concat(),
            ] {
                ix.data = bad;
                assert_eq!(parse_gate_strict(&ix), None);
            }
        }
    }

    #[test]
    fn a_strict_gate_names_its_parties_and_mint_by_its_accounts() {
        let a = args();
        let ix = gate_ix(&a);
        assert_eq!(
            parse_gate_strict(&ix),
            Some(StrictPayment {
                args: a,
                deadline: DEADLINE,
                holdback_tier: None,
            })
        );
        assert_eq!(
            ix.accounts[strict_accounts::PAYER_ASSET].pubkey,
            a.payer_asset
        );
        assert_eq!(
            ix.accounts[strict_accounts::PAYEE_ASSET].pubkey,
            a.payee_asset
        );
        assert_eq!(ix.accounts[strict_accounts::MINT].pubkey, a.mint);
        assert_eq!(
            ix.accounts[strict_accounts::PAYEE_STATS].pubkey,
            PAYEE_STATS
        );
        assert_eq!(ix.accounts[strict_accounts::PAYEE_LIST].pubkey, PAYEE_LIST);
        // Optional accounts keep their place (an absent one is the program id).
        assert_eq!(ix.accounts.len(), 22);
        let mut short = ix.clone();
        short.accounts.truncate(strict_accounts::MINT);
        assert_eq!(parse_gate_strict(&short), None);
    }

    fn transfer_ix(source: Pubkey, e: &Expected) -> Instruction {
        let mut data = vec![TRANSFER_CHECKED_TAG];
        data.extend_from_slice(&e.args.amount.to_le_bytes());
        data.push(6);
        let metas = [source, e.args.mint, e.destination, e.authority]
            .map(|k| AccountMeta::new(k, false))
            .to_vec();
        Instruction::new_with_bytes(TOKEN_PROGRAM_ID, &data, metas)
    }

    fn feedback_ix(payee: &Pubkey) -> Instruction {
        let mut data = crate::instruction::EmitFeedback::DISCRIMINATOR.to_vec();
        data.extend_from_slice(&[0; 64]);
        data.extend_from_slice(payee.as_ref());
        Instruction::new_with_bytes(crate::ID, &data, vec![])
    }

    fn budget(tag: u8) -> Instruction {
        let len = if tag == SET_COMPUTE_UNIT_LIMIT_TAG {
            5
        } else {
            9
        };
        let mut data = vec![0u8; len];
        data[0] = tag;
        Instruction::new_with_bytes(COMPUTE_BUDGET_PROGRAM_ID, &data, vec![])
    }

    fn expected() -> Expected {
        Expected {
            args: args(),
            destination: Pubkey::new_unique(),
            authority: Pubkey::new_unique(),
            source: None,
        }
    }

    fn settlement(e: &Expected, prefix: Vec<Instruction>) -> Vec<Instruction> {
        let mut ixs = prefix;
        ixs.extend([
            gate_ix(&e.args),
            transfer_ix(Pubkey::new_unique(), e),
            feedback_ix(&e.args.payee_asset),
        ]);
        ixs
    }

    fn check(ixs: &[Instruction], current: u16, e: &Expected) -> Result<()> {
        check_held(ixs, current, e).map(|_| ())
    }

    fn check_held(ixs: &[Instruction], current: u16, e: &Expected) -> Result<Option<HeldTransfer>> {
        check_strict_bundle(
            current,
            ixs.len() as u16,
            |i| ixs.get(usize::from(i)).cloned(),
            e,
        )
    }

    fn code<T>(r: Result<T>) -> Option<u32> {
        match r {
            Err(Error::AnchorError(e)) => Some(e.error_code_number),
            _ => None,
        }
    }

    #[test]
    fn the_payment_ends_the_transaction_after_at_most_two_instructions() {
        let starts: Vec<Option<u16>> = (0..7).map(|n| payment_start(n, 3)).collect();
        assert_eq!(starts, [None, None, None, Some(0), Some(1), Some(2), None]);
        let held: Vec<Option<u16>> = (0..8).map(|n| payment_start(n, 4)).collect();
        assert_eq!(
            held,
            [None, None, None, None, Some(0), Some(1), Some(2), None]
        );
        // Seen from the gate's own index, one length or the other.
        assert_eq!(payment_len(0, 3), Some(3));
        assert_eq!(payment_len(0, 4), Some(4));
        assert_eq!(payment_len(2, 6), Some(4));
        assert_eq!(payment_len(0, 5), None);
        assert_eq!(payment_len(3, 6), None);
    }

    const ESCROW: Pubkey = Pubkey::new_from_array([9; 32]);

    /// A held settlement: the payee gets `amount - held`, the escrow `held`.
    fn held_ixs(e: &Expected, held: u64) -> Vec<Instruction> {
        let source = Pubkey::new_unique();
        let mut pay = transfer_ix(source, e);
        pay.data[1..9].copy_from_slice(&(e.args.amount - held).to_le_bytes());
        let mut hold = transfer_ix(source, e);
        hold.data[1..9].copy_from_slice(&held.to_le_bytes());
        hold.accounts[2].pubkey = ESCROW;
        vec![
            gate_ix(&e.args),
            pay,
            hold,
            feedback_ix(&e.args.payee_asset),
        ]
    }

    #[test]
    fn a_held_share_comes_from_the_same_source_and_the_sum_is_the_amount() {
        let e = expected();
        let ixs = held_ixs(&e, 2);
        assert_eq!(
            check_held(&ixs, 0, &e).unwrap(),
            Some(HeldTransfer {
                escrow: ESCROW,
                amount: 2
            })
        );
        // Without a holdback the single transfer carries the whole amount.
        assert_eq!(check_held(&settlement(&e, vec![]), 0, &e).unwrap(), None);

        let broken = |f: &dyn Fn(&mut Vec<Instruction>)| {
            let mut ixs = held_ixs(&e, 2);
            f(&mut ixs);
            code(check(&ixs, 0, &e))
        };
        // The parts must add up to the amount.
        assert_eq!(
            broken(&|ixs| ixs[2].data[1..9].copy_from_slice(&3u64.to_le_bytes())),
            Some(GateError::TransferAmountMismatch.into())
        );
        // Not from another source.
        assert_eq!(
            broken(&|ixs| ixs[2].accounts[0].pubkey = Pubkey::new_unique()),
            Some(GateError::TransferSourceMismatch.into())
        );
        // Nor by another authority, nor of another mint.
        assert_eq!(
            broken(&|ixs| ixs[2].accounts[3].pubkey = Pubkey::new_unique()),
            Some(GateError::TransferAuthorityMismatch.into())
        );
        assert_eq!(
            broken(&|ixs| ixs[2].accounts[1].pubkey = Pubkey::new_unique()),
            Some(GateError::TransferMintMismatch.into())
        );
        // A zero share is no holdback.
        let mut zero = held_ixs(&e, 0);
        zero[1].data[1..9].copy_from_slice(&e.args.amount.to_le_bytes());
        assert_eq!(
            code(check(&zero, 0, &e)),
            Some(GateError::HoldbackTransferMismatch.into())
        );
        // The second instruction of four must be a transfer, the last the feedback.
        assert_eq!(
            broken(&|ixs| ixs[2] = feedback_ix(&e.args.payee_asset)),
            Some(GateError::TransferMissing.into())
        );
    }

    #[test]
    fn feedback_finds_a_held_settlement_three_instructions_back() {
        let e = expected();
        let ixs = held_ixs(&e, 2);
        let n = ixs.len() as u16;
        let load = |i: u16| ixs.get(usize::from(i)).cloned();
        let settled = settled_payment(n - 1, n, load, &e.args.payee_asset, true).unwrap();
        assert_eq!(settled.args, e.args);
        let held = held_settlement(n - 1, load).unwrap();
        assert_eq!(
            held.transfer,
            HeldTransfer {
                escrow: ESCROW,
                amount: 2
            }
        );
        assert_eq!(held.destination, e.destination);
        assert_eq!(held.policy, ixs[0].accounts[strict_accounts::POLICY].pubkey);
        // An emission that claims the other layout finds no strict gate where it looks.
        assert_eq!(
            settled_payment(n - 1, n, load, &e.args.payee_asset, false),
            None
        );
        let unheld = settlement(&e, vec![budget(SET_COMPUTE_UNIT_PRICE_TAG)]);
        let n = unheld.len() as u16;
        let load = |i: u16| unheld.get(usize::from(i)).cloned();
        assert!(settled_payment(n - 1, n, load, &e.args.payee_asset, false).is_some());
        assert_eq!(
            settled_payment(n - 1, n, load, &e.args.payee_asset, true),
            None
        );
    }

    #[test]
    fn only_a_unit_limit_and_a_unit_price_may_come_first() {
        let limit = budget(SET_COMPUTE_UNIT_LIMIT_TAG);
        let price = budget(SET_COMPUTE_UNIT_PRICE_TAG);
        for ok in [
            vec![],
            vec![limit.clone()],
            vec![price.clone(), limit.clone()],
        ] {
            assert!(check_prefix(ok.into_iter().map(Some)).is_ok());
        }
        let heap = Instruction::new_with_bytes(COMPUTE_BUDGET_PROGRAM_ID, &[1, 0, 0, 1, 0], vec![]);
        let mut with_account = price.clone();
        with_account
            .accounts
            .push(AccountMeta::new(Pubkey::new_unique(), false));
        let other = Instruction::new_with_bytes(Pubkey::new_unique(), &[3; 9], vec![]);
        for bad in [
            vec![Some(limit.clone()), Some(limit)],
            vec![Some(heap)],
            vec![Some(with_account)],
            vec![Some(other)],
            vec![None],
        ] {
            assert!(check_prefix(bad).is_err());
        }
    }

    #[test]
    fn the_strict_bundle_with_and_without_a_prefix() {
        let e = expected();
        let prefix = vec![
            budget(SET_COMPUTE_UNIT_LIMIT_TAG),
            budget(SET_COMPUTE_UNIT_PRICE_TAG),
        ];
        for p in [vec![], prefix] {
            let ixs = settlement(&e, p.clone());
            assert!(check(&ixs, p.len() as u16, &e).is_ok());
            // Seen from the wrong index, the layout does not hold.
            assert_eq!(
                code(check(&ixs, p.len() as u16 + 1, &e)),
                Some(GateError::SettlementLayoutInvalid.into())
            );
        }
    }

    #[test]
    fn the_strict_gate_must_be_the_instruction_at_its_index() {
        let e = expected();
        let mut ixs = settlement(&e, vec![]);
        // A program at index 0 that would call the gate itself.
        ixs[0] = Instruction::new_with_bytes(Pubkey::new_unique(), &ixs[0].data, vec![]);
        assert_eq!(
            code(check(&ixs, 0, &e)),
            Some(GateError::StrictGateNotTopLevel.into())
        );
        // Nor another instruction of the gate.
        ixs[0] = feedback_ix(&e.args.payee_asset);
        assert_eq!(
            code(check(&ixs, 0, &e)),
            Some(GateError::StrictGateNotTopLevel.into())
        );
    }

    #[test]
    fn a_payment_settles_up_to_its_deadline_and_no_further_ahead_than_an_hour() {
        let now = 1_700_000_000;
        assert!(check_deadline(now, now).is_ok());
        assert!(check_deadline(now + MAX_DEADLINE_AHEAD_SECS, now).is_ok());
        assert_eq!(
            code(check_deadline(now - 1, now)),
            Some(GateError::PaymentExpired.into())
        );
        assert_eq!(
            code(check_deadline(now + MAX_DEADLINE_AHEAD_SECS + 1, now)),
            Some(GateError::DeadlineTooFar.into())
        );
        assert_eq!(
            code(check_deadline(i64::MIN, now)),
            Some(GateError::PaymentExpired.into())
        );
        assert_eq!(
            code(check_deadline(i64::MAX, now)),
            Some(GateError::DeadlineTooFar.into())
        );
    }

    #[test]
    fn a_transfer_to_its_own_source_moves_nothing() {
        let e = expected();
        let mut ixs = settlement(&e, vec![]);
        ixs[1] = transfer_ix(e.destination, &e);
        assert_eq!(
            code(check(&ixs, 0, &e)),
            Some(GateError::SelfTransfer.into())
        );
    }

    #[test]
    fn no_account_after_the_transfers_fourth_may_sign() {
        let e = expected();
        let mut ixs = settlement(&e, vec![]);
        ixs[1]
            .accounts
            .push(AccountMeta::new_readonly(Pubkey::new_unique(), false));
        assert!(check(&ixs, 0, &e).is_ok());
        ixs[1]
            .accounts
            .push(AccountMeta::new_readonly(e.authority, true));
        assert_eq!(
            code(check(&ixs, 0, &e)),
            Some(GateError::TransferExtraSigner.into())
        );
    }

    #[test]
    fn a_vault_release_must_be_what_the_transfer_debits() {
        let mut e = expected();
        let source = Pubkey::new_unique();
        e.source = Some(source);
        let mut ixs = settlement(&e, vec![]);
        assert_eq!(
            code(check(&ixs, 0, &e)),
            Some(GateError::TransferSourceMismatch.into())
        );
        ixs[1] = transfer_ix(source, &e);
        assert!(check(&ixs, 0, &e).is_ok());
    }

    #[test]
    fn feedback_is_settled_only_at_the_end_of_a_settlement() {
        let e = expected();
        let payee = e.args.payee_asset;
        for prefix in [vec![], vec![budget(SET_COMPUTE_UNIT_PRICE_TAG)]] {
            let ixs = settlement(&e, prefix);
            let n = ixs.len() as u16;
            let load = |i: u16| ixs.get(usize::from(i)).cloned();
            let settled = settled_payment(n - 1, n, load, &payee, false).unwrap();
            assert_eq!(settled.args, e.args);
            assert_eq!(settled.payer_wallet, e.authority);
            assert_eq!(settled.payee_stats, PAYEE_STATS);
            assert_eq!(settled.deadline, DEADLINE);
            // Another payee, or not the last instruction: not settled.
            assert!(settled_payment(n - 1, n, load, &Pubkey::new_unique(), false).is_none());
            assert!(settled_payment(n - 2, n, load, &payee, false).is_none());
        }
    }

    #[test]
    fn a_payment_moves_a_positive_amount_to_another_agent() {
        let mut a = args();
        assert!(a.validate().is_ok());
        a.amount = 0;
        assert!(a.validate().is_err());
        a.amount = 1;
        a.payee_asset = a.payer_asset;
        assert!(a.validate().is_err());
    }
}
