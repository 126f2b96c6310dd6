//! Reading a client-built transaction, for every verifier of one (a payment's, a channel
//! open's): decoding it, resolving its accounts through the lookup tables it may use,
//! decoding an instruction's arguments, comparing an instruction with the one expected, and
//! its signatures.

use crate::reject::{Reason, Rejection};
use anchor_lang::{AnchorDeserialize, Discriminator};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use solana_sdk::instruction::Instruction;
use solana_sdk::message::{AddressLookupTableAccount, VersionedMessage};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::instructions::{ApprovalUse, Attestations};
use trust_gate_client::settle::PACKET_LIMIT;
use trust_gate_client::Builder;

/// Base64 → a versioned transaction (legacy or v0).
pub fn decode(b64: &str) -> Result<VersionedTransaction, Rejection> {
    let not = |what: String| {
        let message = format!("paymentPayload.payload.transaction is not {what}");
        Rejection::new(Reason::InvalidTransactionEncoding, message)
    };
    let bytes = STANDARD
        .decode(b64.trim())
        .map_err(|e| not(format!("standard base64: {e}")))?;
    let len = bytes.len();
    if len > PACKET_LIMIT {
        let message = format!("the transaction has {len} bytes; Solana's limit is {PACKET_LIMIT}");
        return Err(Rejection::new(Reason::TransactionTooLarge, message));
    }
    bincode::deserialize(&bytes).map_err(|e| not(format!("a serialized transaction: {e}")))
}

/// One instruction with its accounts resolved (their privileges are in [`Keys`]).
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub program_id: Pubkey,
    pub accounts: Vec<Pubkey>,
    pub data: Vec<u8>,
}

/// A message's account keys with (signer, writable) flags.
pub(crate) type Keys = Vec<(Pubkey, bool, bool)>;

/// The message's account keys (static, then loaded writable, then loaded readonly) with
/// (signer, writable) flags, after checking the lookups use only the facilitator's tables.
pub(crate) fn account_keys(
    message: &VersionedMessage,
    tables: &[AddressLookupTableAccount],
) -> Result<Keys, Rejection> {
    let header = message.header();
    let statics = message.static_account_keys();
    let signers = usize::from(header.num_required_signatures);
    let readonly_signed = usize::from(header.num_readonly_signed_accounts);
    let readonly_unsigned = usize::from(header.num_readonly_unsigned_accounts);
    let mut keys: Keys = statics
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let signer = i < signers;
            let writable = if signer {
                i < signers.saturating_sub(readonly_signed)
            } else {
                i < statics.len().saturating_sub(readonly_unsigned)
            };
            (*k, signer, writable)
        })
        .collect();
    let lookups = message.address_table_lookups().unwrap_or_default();
    let mut readonly = Vec::new();
    for l in lookups {
        let table = tables.iter().find(|t| t.key == l.account_key).ok_or_else(|| {
            Rejection::new(
                Reason::LookupTableNotAllowed,
                format!(
                    "the transaction loads accounts from {}, which is not one of this facilitator's lookup tables",
                    l.account_key
                ),
            )
            .hint("use only the table advertised in /supported (extra.gate.lookupTables)")
        })?;
        let at = |i: &u8| {
            table
                .addresses
                .get(usize::from(*i))
                .copied()
                .ok_or_else(|| {
                    Rejection::new(
                        Reason::InvalidTransaction,
                        format!("lookup index {i} is outside table {}", table.key),
                    )
                })
        };
        for i in &l.writable_indexes {
            keys.push((at(i)?, false, true));
        }
        for i in &l.readonly_indexes {
            readonly.push((at(i)?, false, false));
        }
    }
    keys.extend(readonly);
    Ok(keys)
}

pub(crate) fn resolve(message: &VersionedMessage, keys: &Keys) -> Result<Vec<Resolved>, Rejection> {
    let key = |i: u8| {
        keys.get(usize::from(i)).map(|k| k.0).ok_or_else(|| {
            Rejection::new(
                Reason::InvalidTransaction,
                format!(
                    "account index {i} is outside the message's {} keys",
                    keys.len()
                ),
            )
        })
    };
    message
        .instructions()
        .iter()
        .map(|ix| {
            Ok(Resolved {
                program_id: key(ix.program_id_index)?,
                accounts: ix
                    .accounts
                    .iter()
                    .map(|i| key(*i))
                    .collect::<Result<_, _>>()?,
                data: ix.data.clone(),
            })
        })
        .collect()
}

pub(crate) fn is_gate_ix<T: Discriminator>(b: &Builder, ix: &Resolved) -> bool {
    ix.program_id == b.ids.gate && ix.data.starts_with(T::DISCRIMINATOR)
}

pub(crate) fn args<T: AnchorDeserialize + Discriminator>(
    ix: &Resolved,
    what: &str,
) -> Result<T, Rejection> {
    T::deserialize(&mut &ix.data[T::DISCRIMINATOR.len()..]).map_err(|e| {
        Rejection::new(
            Reason::InvalidTransaction,
            format!("cannot decode the {what} arguments: {e}"),
        )
    })
}

/// The payment's approval after the strict gate's `own` accounts, when the transaction passes
/// one: [approval, its rent payer]. The approval must be the one of the payment's terms
/// (`want`); its rent payer is whatever the approval names, which the gate checks. Any other
/// count of remaining accounts is left to [`compare`], which names it.
pub(crate) fn approval_pair(
    what: &str,
    gate_ix: &Resolved,
    own: usize,
    want: &Pubkey,
) -> Result<Option<ApprovalUse>, Rejection> {
    let Some([address, rent_payer]) = gate_ix.accounts.get(own..) else {
        return Ok(None);
    };
    if address != want {
        return Err(Rejection::new(
            Reason::ApprovalMismatch,
            format!(
                "{what} account {own} is {address}; the approval of this payment's terms is {want}"
            ),
        )
        .hint("pass [approval, its rent payer] of exactly this payment (payer, payee, mint, amount, policy) after the gate's accounts, or none"));
    }
    Ok(Some(ApprovalUse {
        address: *address,
        rent_payer: *rent_payer,
    }))
}

/// What a gate instruction `gate_ix` names in the slots where `placeholder` (the same
/// instruction built without any optional account) holds the gate's own id, in declaration
/// order (`None` where `gate_ix` has the placeholder too), and the attestations among them
/// (the first two) with the payee list. Every gate instruction that evaluates starts with the
/// evaluation's accounts, so the list and the policy sit at the strict gate's indexes.
pub(crate) fn optional_accounts_of(
    b: &Builder,
    placeholder: &Instruction,
    gate_ix: &Resolved,
) -> (Attestations, Vec<Option<Pubkey>>) {
    let optional: Vec<Option<Pubkey>> = placeholder
        .accounts
        .iter()
        .enumerate()
        .filter(|(_, m)| m.pubkey == b.ids.gate)
        .map(|(i, _)| {
            gate_ix
                .accounts
                .get(i)
                .copied()
                .filter(|k| *k != b.ids.gate)
        })
        .collect();
    // The payee list's slot holds the policy account when the policy names no list
    // (policy_vault refuses a settlement without the list when it does).
    use gate::settlement::strict_accounts::{PAYEE_LIST, POLICY};
    let payee_list = gate_ix
        .accounts
        .get(PAYEE_LIST)
        .copied()
        .filter(|k| Some(k) != gate_ix.accounts.get(POLICY));
    let attestations = Attestations {
        payer: optional.first().copied().flatten(),
        payee: optional.get(1).copied().flatten(),
        payee_list,
    };
    (attestations, optional)
}

/// `got` must be `want` (named `name` in the answer): same data, same accounts, and at least
/// the privileges `want` asks of each account.
pub(crate) fn compare(
    name: &str,
    got: &Resolved,
    want: &Instruction,
    keys: &[(Pubkey, bool, bool)],
) -> Result<(), Rejection> {
    if got.data != want.data {
        return Err(Rejection::new(
            Reason::SettlementLayoutInvalid,
            format!("{name}'s data is not what the SDK composes for it"),
        ));
    }
    let accounts = |message: String| Err(Rejection::new(Reason::GateAccountsMismatch, message));
    let (count, want_count) = (got.accounts.len(), want.accounts.len());
    if count != want_count {
        return accounts(format!(
            "{name} has {count} accounts; it must have {want_count}"
        ));
    }
    for (j, (g, w)) in got.accounts.iter().zip(&want.accounts).enumerate() {
        if *g != w.pubkey {
            return accounts(format!(
                "{name} account {j} is {g}; it must be {}",
                w.pubkey
            ));
        }
        // Privileges may be wider in the message (an account shared with another
        // instruction) but never narrower than the instruction needs.
        let (_, signer, writable) = keys.iter().find(|k| k.0 == *g).copied().unwrap_or_default();
        if (w.is_signer && !signer) || (w.is_writable && !writable) {
            return accounts(format!(
                "{name} account {j} ({g}) lacks the signer or writable flag it needs"
            ));
        }
    }
    Ok(())
}

/// The signers must be exactly the facilitator (slot 0, still empty or ours) and the payer,
/// whose signature must verify over the message.
pub(crate) fn check_signatures(
    tx: &VersionedTransaction,
    keys: &[(Pubkey, bool, bool)],
    facilitator: &Pubkey,
    payer: &Pubkey,
) -> Result<(), Rejection> {
    let signers: Vec<Pubkey> = keys.iter().filter(|k| k.1).map(|k| k.0).collect();
    if tx.signatures.len() != signers.len() {
        return Err(Rejection::new(
            Reason::InvalidTransaction,
            format!(
                "{} signatures for {} required signers",
                tx.signatures.len(),
                signers.len()
            ),
        ));
    }
    if let Some(other) = signers.iter().find(|k| *k != facilitator && *k != payer) {
        return Err(Rejection::new(
            Reason::UnexpectedSigner,
            format!(
                "{other} must not sign this transaction; only the facilitator and the payer {payer} do"
            ),
        ));
    }
    let message = tx.message.serialize();
    for (sig, key) in tx.signatures.iter().zip(&signers) {
        if key == facilitator {
            continue;
        }
        if *sig == Signature::default() {
            return Err(Rejection::new(
                Reason::MissingClientSignature,
                format!("the payer {key} has not signed the transaction"),
            ));
        }
        if !sig.verify(key.as_ref(), &message) {
            return Err(Rejection::new(
                Reason::InvalidClientSignature,
                format!("the signature of {key} does not verify against the message"),
            ));
        }
    }
    Ok(())
}
