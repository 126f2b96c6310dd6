//! The settle verifier: what a client-built transaction must be before the facilitator
//! co-signs it. Pure (no RPC): the caller passes the facilitator's lookup tables and the
//! mint's token program and decimals.
//!
//! The transaction must be [gate_payment_strict, TransferChecked, emit_feedback] for the
//! authenticated context, optionally after a ComputeBudget unit limit and unit price (within
//! the facilitator's caps, see [`crate::budget`], since it pays the fee), paid by this
//! facilitator, loading
//! accounts only from its own lookup tables, and signed by the payer. Each deviation has its
//! own reason; anything the named checks do not cover is caught by comparing every payment
//! instruction with the one the SDK composes for the same payment.

mod transaction;

pub use transaction::decode;
pub(crate) use transaction::{
    account_keys, approval_pair, args, check_signatures, compare, is_gate_ix, optional_accounts_of,
    resolve, Keys, Resolved,
};

use crate::adapter::GateContext;
use crate::config::ComputeCaps;
use crate::reject::{Reason, Rejection};
use solana_sdk::instruction::{AccountMeta, Instruction};
use solana_sdk::message::AddressLookupTableAccount;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::instructions::Attestations;
use trust_gate_client::settle::{self, ComputeBudget, Feedback, Funding, Settlement, TokenProgram};
use trust_gate_client::{AtomicityEnforced, Builder};

/// The largest transaction Solana accepts.
pub use trust_gate_client::settle::PACKET_LIMIT;
/// TransferChecked's instruction tag in both token programs.
const TRANSFER_CHECKED: u8 = 12;

/// What the transaction is checked against.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    pub builder: &'a Builder,
    pub ctx: &'a GateContext,
    pub facilitator: &'a Pubkey,
    /// The registry's base collection (an account of emit_feedback).
    pub collection: &'a Pubkey,
    pub token_program: TokenProgram,
    pub decimals: u8,
    /// The facilitator's own address lookup tables.
    pub tables: &'a [AddressLookupTableAccount],
    /// What the facilitator co-pays as a priority fee.
    pub compute: &'a ComputeCaps,
}

/// A transaction that passed every check.
#[derive(Clone, Debug)]
pub struct Verified {
    pub tx: VersionedTransaction,
    /// The index of gate_payment_strict in the transaction (after the compute budget).
    pub gate_index: u8,
    /// Its `payer_signer` is the transfer authority: the payer's wallet.
    pub settlement: Settlement,
}

fn mismatch(
    reason: Reason,
    what: &str,
    got: impl std::fmt::Display,
    want: impl std::fmt::Display,
) -> Rejection {
    Rejection::new(
        reason,
        format!("{what} is {got}; the requirements say {want}"),
    )
}

/// `got == want`, else the mismatch named `reason`.
fn same<T: PartialEq + std::fmt::Display>(
    reason: Reason,
    what: &str,
    got: T,
    want: T,
) -> Result<(), Rejection> {
    if got == want {
        Ok(())
    } else {
        Err(mismatch(reason, what, got, want))
    }
}

/// Runs every check; on success returns the settlement the transaction is.
pub fn verify(tx: VersionedTransaction, e: Expected<'_>) -> Result<Verified, Rejection> {
    use gate::instruction::{EmitFeedback, GatePaymentStrict};
    use gate::settlement::strict_accounts::{MINT, PAYEE_ASSET, PAYER_ASSET};
    let b = e.builder;
    let ctx = e.ctx;
    let keys = account_keys(&tx.message, e.tables)?;
    let ixs = resolve(&tx.message, &keys)?;

    // Layout first: a transfer without the gate is the most common wrong client.
    let has_gate = ixs.iter().any(|ix| is_gate_ix::<GatePaymentStrict>(b, ix));
    let has_feedback = ixs.iter().any(|ix| is_gate_ix::<EmitFeedback>(b, ix));
    if !has_gate || !has_feedback {
        return Err(Rejection::new(
            Reason::GateInstructionsMissing,
            format!(
                "the transaction has no {}: trust-gate settles only [gate_payment_strict, TransferChecked, emit_feedback] in one transaction",
                if has_gate { "emit_feedback" } else { "gate_payment_strict" }
            ),
        )
        .hint("a plain exact-scheme transfer is never settled here; compose the settlement with the trust-gate SDK (settle::compose) or `trust-gate pay`"));
    }
    let (start, len) = payment_part(b, &ixs)?;
    let budget = compute_budget(&ixs[..start])?;
    crate::budget::check(&budget, len, e.compute)?;
    let ixs = &ixs[start..];
    let feedback = &ixs[len - 1];
    // What the payment names in more than one place, each under its own name.
    let amount = |what: &str, got: u64| same(Reason::AmountMismatch, what, got, ctx.amount);
    let decimals = |what: &str, got: u8| same(Reason::DecimalsMismatch, what, got, e.decimals);
    let mint = |what: &str, got: Pubkey| same(Reason::MintMismatch, what, got, ctx.mint);
    let payee = |what: &str, got: Pubkey| same(Reason::PayeeMismatch, what, got, ctx.payee_asset);

    // Fee payer isolation.
    let fee_payer = keys.first().map(|k| k.0).unwrap_or_default();
    if fee_payer != *e.facilitator {
        return Err(Rejection::new(
            Reason::FeePayerMismatch,
            format!(
                "the fee payer is {fee_payer}, not this facilitator ({})",
                e.facilitator
            ),
        )
        .hint("use extra.feePayer of the requirements as the transaction's fee payer"));
    }
    for (i, ix) in ixs[..len - 1].iter().enumerate() {
        if ix.accounts.contains(e.facilitator) {
            return Err(Rejection::new(
                Reason::FeePayerNotIsolated,
                format!("instruction {i} uses the facilitator's account; the fee payer may only sign emit_feedback"),
            ));
        }
    }

    // The transfers: the payment's, less the held share, to payTo's token account, and the
    // held share to the payee's escrow, as the challenge's terms say.
    let quote = ctx.holdback_quote();
    let held = quote.map_or(0, |q| q.held);
    if (held != 0) != (len == 4) {
        let message = if held != 0 {
            format!("the challenge holds back {held} of the amount (extra.gate.holdback); the transaction has no held share's transfer")
        } else {
            "the transaction has a second TransferChecked; the challenge holds nothing back (extra.gate.holdback)".to_string()
        };
        return Err(Rejection::new(Reason::HoldbackMismatch, message));
    }
    let want_destination = e.token_program.associated_account(&ctx.pay_to, &ctx.mint);
    let transfer = |i: usize, what: &str| -> Result<(Pubkey, Pubkey, Pubkey), Rejection> {
        let t = &ixs[i];
        same(
            Reason::TokenProgramMismatch,
            &format!("{what}'s program"),
            t.program_id,
            e.token_program.id(),
        )?;
        if t.data.len() != 10 || t.data[0] != TRANSFER_CHECKED || t.accounts.len() < 4 {
            return Err(Rejection::new(
                Reason::TransferMissing,
                format!("instruction {i} is not a TransferChecked"),
            ));
        }
        let [source, transfer_mint, destination, payer] = [0, 1, 2, 3].map(|k| t.accounts[k]);
        mint(&format!("{what}'s mint"), transfer_mint)?;
        decimals(&format!("{what}'s decimals"), t.data[9])?;
        Ok((source, destination, payer))
    };
    let amount_of = |i: usize| u64::from_le_bytes(ixs[i].data[1..9].try_into().unwrap_or_default());
    let (source, destination, payer) = transfer(1, "the transfer")?;
    if destination != want_destination {
        return Err(mismatch(
            Reason::RecipientMismatch,
            "the transfer's destination",
            destination,
            format!(
                "{want_destination} (the token account of payTo {})",
                ctx.pay_to
            ),
        ));
    }
    same(
        Reason::AmountMismatch,
        "the transfer's amount",
        amount_of(1),
        ctx.amount - held,
    )?;
    if let Some(q) = quote.filter(|q| q.held != 0) {
        let (_, escrow, _) = transfer(2, "the held share's transfer")?;
        let want = b.pda.holdback_escrow(&ctx.payee_asset, &ctx.mint);
        same(
            Reason::HoldbackMismatch,
            "extra.gate.holdback.escrow",
            q.escrow,
            want,
        )?;
        same(
            Reason::HoldbackMismatch,
            "the held share's destination",
            escrow,
            want,
        )?;
        same(
            Reason::HoldbackMismatch,
            "the held share",
            amount_of(2),
            held,
        )?;
    }

    // The gate's arguments, and the parties and mint its accounts name.
    let g: GatePaymentStrict = args(&ixs[0], "gate_payment_strict")?;
    amount("the gate's amount", g.amount)?;
    let gate_account = |i: usize| ixs[0].accounts.get(i).copied().unwrap_or_default();
    mint("the gate's mint", gate_account(MINT))?;
    same(
        Reason::PayerMismatch,
        "the gate's payer agent",
        gate_account(PAYER_ASSET),
        ctx.payer_asset,
    )?;
    payee("the gate's payee agent", gate_account(PAYEE_ASSET))?;
    same(
        Reason::PolicyMismatch,
        "the gate's policy id",
        g.policy_id,
        ctx.policy_id,
    )?;
    same(
        Reason::HoldbackMismatch,
        "the gate's holdback tier",
        Tier(g.holdback_tier),
        Tier(quote.map(|q| q.tier)),
    )?;
    // The chain holds a payment to its deadline; the challenge's expiry is the only one this
    // facilitator co-signs, so a payment cannot outlive the challenge it answers.
    same(
        Reason::DeadlineMismatch,
        "the gate's deadline",
        g.deadline,
        ctx.deadline,
    )?;

    // The feedback.
    let EmitFeedback { args: f } = args(feedback, "emit_feedback")?;
    if f.payment_id_hash != ctx.payment_id_hash {
        return Err(Rejection::new(
            Reason::PaymentIdMismatch,
            "emit_feedback's payment id hash is not the one derived from extra.memo",
        ));
    }
    payee("the feedback's payee agent", f.payee_asset)?;
    amount("the feedback's value", f.value)?;
    same(
        Reason::FeePayerMismatch,
        "the feedback's facilitator",
        f.facilitator,
        *e.facilitator,
    )?;

    // Everything else: the instructions must be the ones the SDK composes for this payment.
    let (attestations, funding, own) = optional_accounts(b, &ixs[0]);
    let terms = ctx.query().approval_terms();
    let approval = approval_pair("gate_payment_strict", &ixs[0], own, &b.pda.approval(&terms))?;
    let settlement = Settlement {
        facilitator: *e.facilitator,
        payer_signer: payer,
        payer_asset: ctx.payer_asset,
        payee_asset: ctx.payee_asset,
        policy_id: ctx.policy_id,
        deadline: ctx.deadline,
        mint: ctx.mint,
        decimals: e.decimals,
        token_program: e.token_program,
        amount: ctx.amount,
        source_token: source,
        destination_token: destination,
        collection: *e.collection,
        attestations,
        feedback: Feedback {
            payment_id_hash: f.payment_id_hash,
            score: f.score,
            tag1: f.tag1,
            tag2: f.tag2,
            endpoint: f.endpoint,
            feedback_uri: f.feedback_uri,
        },
        compute_budget: budget,
        funding,
        approval,
        holdback: quote,
    };
    // Checked only now: an approval that is not this payment's is named first.
    decimals("the feedback's decimals", f.value_decimals)?;
    let expected = settle::compose(b, &settlement, AtomicityEnforced::TRUE)
        .map_err(|err| Rejection::new(Reason::InvalidTransaction, err.to_string()))?;
    // The prefix was read into `budget` (in either order); the payment part must match.
    let payment = &expected[expected.len() - len..];
    let names = if len == 4 {
        &HELD_NAMES[..]
    } else {
        &NAMES[..]
    };
    for ((got, want), name) in ixs.iter().zip(payment).zip(names) {
        compare(name, got, want, &keys)?;
    }

    check_signatures(&tx, &keys, e.facilitator, &payer)?;
    Ok(Verified {
        tx,
        // At most two instructions precede the gate.
        gate_index: start as u8,
        settlement,
    })
}

/// Where the payment part starts (after at most two ComputeBudget instructions) and how many
/// instructions it has: it must end the transaction as [gate_payment_strict, TransferChecked,
/// emit_feedback], or, holding a share back, with a second TransferChecked before
/// emit_feedback.
fn payment_part(b: &Builder, ixs: &[Resolved]) -> Result<(usize, usize), Rejection> {
    use gate::instruction::{EmitFeedback, GatePaymentStrict};
    use gate::settlement::{is_token_program, COMPUTE_BUDGET_PROGRAM_ID, MAX_PREFIX};
    let layout = || {
        Rejection::new(
            Reason::SettlementLayoutInvalid,
            "the instructions must be [gate_payment_strict, TransferChecked, (TransferChecked of a held share,) emit_feedback] in this order, after at most a ComputeBudget unit limit and unit price",
        )
    };
    let unexpected = |i: usize| {
        Rejection::new(
            Reason::UnexpectedInstruction,
            format!(
                "the transaction has {} instructions; instruction {i} (program {}) is not part of a settlement",
                ixs.len(),
                ixs[i].program_id
            ),
        )
        .hint("a settlement is [gate_payment_strict, TransferChecked, emit_feedback], optionally after a ComputeBudget unit limit and unit price")
    };
    let start = ixs
        .iter()
        .position(|ix| is_gate_ix::<GatePaymentStrict>(b, ix))
        .ok_or_else(layout)?;
    for (i, ix) in ixs[..start].iter().enumerate() {
        if ix.program_id == b.ids.gate || is_token_program(&ix.program_id) {
            return Err(layout());
        }
        if ix.program_id != COMPUTE_BUDGET_PROGRAM_ID || i >= usize::from(MAX_PREFIX) {
            return Err(unexpected(i));
        }
    }
    // The held share's transfer comes right after the payment's.
    let held = ixs
        .get(start + 2)
        .is_some_and(|ix| is_token_program(&ix.program_id));
    let len = if held { 4 } else { 3 };
    if ixs.len() > start + len {
        return Err(unexpected(start + len));
    }
    if ixs.len() < start + len || !is_gate_ix::<EmitFeedback>(b, &ixs[start + len - 1]) {
        return Err(layout());
    }
    Ok((start, len))
}

/// Reads the ComputeBudget instructions before the payment part: at most one unit limit and
/// one unit price (their caps are [`crate::budget::check`]'s).
fn compute_budget(prefix: &[Resolved]) -> Result<ComputeBudget, Rejection> {
    // The accounts count: a ComputeBudget instruction that names any is not well formed.
    let as_ix = |r: &Resolved| {
        let accounts = r
            .accounts
            .iter()
            .map(|k| AccountMeta::new_readonly(*k, false));
        Instruction::new_with_bytes(r.program_id, &r.data, accounts.collect())
    };
    let ixs: Vec<Instruction> = prefix.iter().map(as_ix).collect();
    ComputeBudget::parse(&ixs).ok_or_else(|| {
        Rejection::new(
            Reason::ComputeBudgetInvalid,
            "the ComputeBudget instructions before the payment may only be one SetComputeUnitLimit and one SetComputeUnitPrice",
        )
    })
}

/// The optional accounts of the gate instruction: the slots where a gate without them has
/// the placeholder (the gate's own id), in declaration order: the payer's and the payee's
/// attestation, then the vault (whose presence makes the settlement vault-funded; `compose`
/// then derives the vault, `payer_token` and the token program, and `compare` holds the
/// instruction to them).
/// Also returns how many accounts the gate instruction has before its remaining accounts.
fn optional_accounts(b: &Builder, gate_ix: &Resolved) -> (Attestations, Funding, usize) {
    let placeholder = b.gate_payment_strict(
        &Pubkey::default(),
        &Pubkey::default(),
        &Pubkey::default(),
        0,
        &Pubkey::default(),
        0,
        0,
        &Pubkey::default(),
        Attestations::default(),
        None,
        None,
    );
    let (attestations, optional) = optional_accounts_of(b, &placeholder, gate_ix);
    let funding = if optional.get(2).copied().flatten().is_some() {
        Funding::Vault
    } else {
        Funding::Wallet
    };
    (attestations, funding, placeholder.accounts.len())
}

/// The instructions of a settlement's payment part, in order.
pub(crate) const NAMES: [&str; 3] = ["gate_payment_strict", "TransferChecked", "emit_feedback"];
/// Those of a held settlement's.
pub(crate) const HELD_NAMES: [&str; 4] = [
    "gate_payment_strict",
    "TransferChecked",
    "the held share's TransferChecked",
    "emit_feedback",
];

/// A holdback tier as a message names it.
#[derive(PartialEq)]
struct Tier(Option<u8>);

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(t) => write!(f, "{t}"),
            None => f.write_str("none"),
        }
    }
}
