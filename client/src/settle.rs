//! The atomic settlement: [gate_payment_strict, TransferChecked, emit_feedback] in one
//! transaction (optionally after a ComputeBudget unit limit and unit price, the only thing
//! the strict gate allows besides the payment; a held payment has a second TransferChecked,
//! of the held share to the escrow), the atomicity guard, and the `settle` / `dispute`
//! helpers.

pub use crate::decode::Funding;
pub use crate::error::AtomicityNotEnforcedError;
use crate::error::ClientError;
use crate::errors::{self, summarize_logs};
use crate::holdback::HoldbackQuote;
use crate::instructions::{ApprovalUse, Attestations, Builder, FeedbackArgs, VaultRelease};
pub use crate::token::TokenProgram;
use anchor_lang::prelude::Pubkey;
use anchor_spl::token::spl_token;
use anchor_spl::token_2022::spl_token_2022;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::client_error::ErrorKind;
use solana_rpc_client_api::request::{RpcError, RpcResponseErrorData};
use solana_sdk::hash::Hash;
use solana_sdk::instruction::AccountMeta;
use solana_sdk::instruction::Instruction;
use solana_sdk::message::{v0, AddressLookupTableAccount, VersionedMessage};
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use solana_sdk::transaction::VersionedTransaction;

/// The largest transaction a cluster accepts (an IPv6 packet's payload): 1 232 bytes.
pub const PACKET_LIMIT: usize = 1232;

/// Proof that settlement is atomic. It has exactly one value, so atomicity cannot be switched
/// off in Rust code; configuration read from JSON or the environment goes through
/// [`AtomicityEnforced::from_json`] / [`AtomicityEnforced::from_env_value`], which accept only
/// the boolean `true`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AtomicityEnforced;

impl AtomicityEnforced {
    pub const TRUE: AtomicityEnforced = AtomicityEnforced;

    /// Always `true`.
    pub fn get(self) -> bool {
        true
    }

    /// Accepts only the JSON boolean `true` (not `"true"`, not `1`).
    pub fn from_json(v: &serde_json::Value) -> Result<Self, AtomicityNotEnforcedError> {
        match v {
            serde_json::Value::Bool(true) => Ok(AtomicityEnforced),
            other => Err(AtomicityNotEnforcedError {
                got: other.to_string(),
            }),
        }
    }

    /// An environment variable's value: it must read `true` (environment values are
    /// strings; `1`, `yes` or `TRUE` are refused so that every source spells it one way).
    pub fn from_env_value(v: &str) -> Result<Self, AtomicityNotEnforcedError> {
        if v == "true" {
            Ok(AtomicityEnforced)
        } else {
            Err(AtomicityNotEnforcedError {
                got: format!("{v:?}"),
            })
        }
    }
}

impl serde::Serialize for AtomicityEnforced {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(true)
    }
}

impl<'de> serde::Deserialize<'de> for AtomicityEnforced {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        AtomicityEnforced::from_json(&v).map_err(serde::de::Error::custom)
    }
}

/// Everything a settlement needs.
#[derive(Clone, Debug)]
pub struct Settlement {
    /// The facilitator: fee payer and signer of emit_feedback.
    pub facilitator: Pubkey,
    /// The payer agent's owner (or agent wallet): authority of the transfer.
    pub payer_signer: Pubkey,
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub policy_id: u32,
    /// Unix seconds: the last moment the settlement may land (the x402 challenge's expiry,
    /// its `issuedAt` plus `maxTimeoutSeconds`; see `trust_gate_x402::deadline`).
    pub deadline: i64,
    pub mint: Pubkey,
    pub decimals: u8,
    pub token_program: TokenProgram,
    pub amount: u64,
    pub source_token: Pubkey,
    /// The token account of the payee's recipient (agent wallet, else owner).
    pub destination_token: Pubkey,
    /// The registry's base collection.
    pub collection: Pubkey,
    pub attestations: Attestations,
    /// Feedback fields; `payee_asset` and `value` are taken from the settlement.
    pub feedback: Feedback,
    /// An optional priority fee (ComputeBudget instructions before the payment).
    pub compute_budget: ComputeBudget,
    /// Where the payment comes from: the policy's `funding`.
    pub funding: Funding,
    /// The payment's approval on chain, for an amount above the payer policy's approval
    /// threshold ([`crate::chain::approval_use`] finds it); the settlement closes it.
    pub approval: Option<ApprovalUse>,
    /// Under a payer policy with a holdback schedule, the terms quoted for the payee's tier
    /// (docs/holdback.md); `None` under a policy without one.
    pub holdback: Option<HoldbackQuote>,
}

/// The ComputeBudget instructions a settlement may start with, so that it can pay a priority
/// fee on a congested cluster. Both are optional; nothing else may precede the payment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComputeBudget {
    /// SetComputeUnitLimit: the compute units the transaction may use.
    pub unit_limit: Option<u32>,
    /// SetComputeUnitPrice: the priority fee per compute unit, in micro-lamports.
    pub unit_price_micro_lamports: Option<u64>,
}

impl ComputeBudget {
    /// A unit limit alone: the budget of the facilitator's own transactions, which pay no
    /// priority fee.
    pub fn limit(units: u32) -> Vec<Instruction> {
        ComputeBudget {
            unit_limit: Some(units),
            unit_price_micro_lamports: None,
        }
        .instructions()
    }

    /// The instructions, unit limit first (as the x402 exact scheme orders them).
    pub fn instructions(&self) -> Vec<Instruction> {
        use gate::settlement::{
            COMPUTE_BUDGET_PROGRAM_ID, SET_COMPUTE_UNIT_LIMIT_TAG, SET_COMPUTE_UNIT_PRICE_TAG,
        };
        let ix = |tag: u8, value: &[u8]| Instruction {
            program_id: COMPUTE_BUDGET_PROGRAM_ID,
            accounts: Vec::new(),
            data: [&[tag][..], value].concat(),
        };
        let mut ixs = Vec::new();
        if let Some(units) = self.unit_limit {
            ixs.push(ix(SET_COMPUTE_UNIT_LIMIT_TAG, &units.to_le_bytes()));
        }
        if let Some(price) = self.unit_price_micro_lamports {
            ixs.push(ix(SET_COMPUTE_UNIT_PRICE_TAG, &price.to_le_bytes()));
        }
        ixs
    }

    /// Reads the prefix back from instructions (the facilitator's verifier): `None` unless
    /// they pass the strict gate's own prefix check (a unit limit and a unit price, each at
    /// most once, well formed).
    pub fn parse(ixs: &[Instruction]) -> Option<ComputeBudget> {
        use gate::settlement::{check_prefix, compute_budget_tag, SET_COMPUTE_UNIT_LIMIT_TAG};
        check_prefix(ixs.iter().cloned().map(Some)).ok()?;
        let mut budget = ComputeBudget::default();
        for ix in ixs {
            if compute_budget_tag(ix)? == SET_COMPUTE_UNIT_LIMIT_TAG {
                budget.unit_limit = Some(u32::from_le_bytes(ix.data[1..5].try_into().ok()?));
            } else {
                budget.unit_price_micro_lamports =
                    Some(u64::from_le_bytes(ix.data[1..9].try_into().ok()?));
            }
        }
        Some(budget)
    }
}

/// The feedback recorded with a settlement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feedback {
    pub payment_id_hash: [u8; 32],
    pub score: u8,
    pub tag1: String,
    pub tag2: String,
    pub endpoint: String,
    pub feedback_uri: String,
}

/// The instructions of a settlement, in the only order the strict gate accepts: the
/// optional compute budget, then [gate_payment_strict, TransferChecked, emit_feedback], with
/// the held share's TransferChecked to the escrow after the first when one is held.
pub fn compose(
    b: &Builder,
    s: &Settlement,
    _atomic: AtomicityEnforced,
) -> Result<Vec<Instruction>, ClientError> {
    if s.amount == 0 {
        return Err(ClientError::input("amount", "must be greater than 0"));
    }
    if s.payer_asset == s.payee_asset {
        return Err(ClientError::input(
            "payee_asset",
            "is the payer agent: a settlement pays another agent",
        ));
    }
    if s.source_token == s.destination_token {
        return Err(ClientError::input(
            "destination_token",
            "is the source token account: no value would move",
        ));
    }
    let mut gate = b.gate_payment_strict(
        &s.payer_signer,
        &s.payer_asset,
        &s.payee_asset,
        s.amount,
        &s.mint,
        s.policy_id,
        s.deadline,
        &s.destination_token,
        s.attestations,
        (s.funding == Funding::Vault).then_some(VaultRelease {
            payer_token: s.source_token,
            token_program: s.token_program.id(),
        }),
        s.holdback.map(|h| h.tier),
    );
    if let Some(a) = &s.approval {
        check_approval(b, a, &s.approval_terms())?;
        a.append_to(&mut gate);
    }
    // Both token programs encode TransferChecked the same way; the program id differs.
    let transfer_checked = match s.token_program {
        TokenProgram::SplToken => spl_token::instruction::transfer_checked,
        TokenProgram::Token2022 => spl_token_2022::instruction::transfer_checked,
    };
    let held = s.holdback.map_or(0, |h| h.held);
    if held >= s.amount && held != 0 {
        return Err(ClientError::input(
            "holdback.held",
            "is not less than the amount: the payee would be paid nothing",
        ));
    }
    let transfer = |to: &Pubkey, amount: u64| {
        transfer_checked(
            &s.token_program.id(),
            &s.source_token,
            &s.mint,
            to,
            &s.payer_signer,
            &[],
            amount,
            s.decimals,
        )
        .map_err(|e| ClientError::input("transfer", e.to_string()))
    };
    let mut transfers = vec![transfer(&s.destination_token, s.amount - held)?];
    if let Some(h) = s.holdback.filter(|h| h.held != 0) {
        transfers.push(transfer(&h.escrow, h.held)?);
    }
    let mut feedback = b.emit_feedback(
        &s.facilitator,
        &s.collection,
        FeedbackArgs {
            payment_id_hash: s.feedback.payment_id_hash,
            payee_asset: s.payee_asset,
            score: s.feedback.score,
            value: s.amount,
            value_decimals: s.decimals,
            tag1: s.feedback.tag1.clone(),
            tag2: s.feedback.tag2.clone(),
            endpoint: s.feedback.endpoint.clone(),
            feedback_uri: s.feedback.feedback_uri.clone(),
        },
    );
    if let Some(h) = s.holdback.filter(|h| h.held != 0) {
        // The log records the hold and arbiter the payer's policy sets, the escrow the share
        // went to, which emit_feedback checks is the gate's, the recipient of the payee's
        // token account and the payer's keys, which never arbitrate.
        feedback.accounts.extend([
            AccountMeta::new_readonly(b.pda.policy(&s.payer_asset, s.policy_id), false),
            AccountMeta::new_readonly(h.escrow, false),
            AccountMeta::new_readonly(s.destination_token, false),
            AccountMeta::new_readonly(b.pda.agent_account(&s.payer_asset), false),
            AccountMeta::new_readonly(s.payer_asset, false),
        ]);
    }
    let mut ixs = s.compute_budget.instructions();
    ixs.push(gate);
    ixs.extend(transfers);
    ixs.push(feedback);
    Ok(ixs)
}

/// `a` must be the approval of `terms`: the gate would not find another one.
pub fn check_approval(
    b: &Builder,
    a: &ApprovalUse,
    terms: &policy_vault::state::ApprovalTerms,
) -> Result<(), ClientError> {
    let want = b.pda.approval(terms);
    if a.address != want {
        return Err(ClientError::input(
            "approval",
            format!(
                "{} is not the approval of this payment's terms ({want})",
                a.address
            ),
        ));
    }
    Ok(())
}

impl Settlement {
    /// What an approval of this payment approves.
    pub fn approval_terms(&self) -> policy_vault::state::ApprovalTerms {
        policy_vault::state::ApprovalTerms {
            payer_asset: self.payer_asset,
            payee_asset: self.payee_asset,
            mint: self.mint,
            amount: self.amount,
            policy_id: self.policy_id,
        }
    }
}

/// The accounts of a settlement that are the same for every payment a facilitator settles
/// for one payee and mint: what its address lookup table holds so that a settlement fits in
/// one packet (program ids must stay static and are not included).
pub fn lookup_table_addresses(
    b: &Builder,
    facilitator: &Pubkey,
    collection: &Pubkey,
    mint: &Pubkey,
    payee_asset: &Pubkey,
    destination_token: &Pubkey,
) -> Vec<Pubkey> {
    vec![
        b.ids.policy_vault,
        b.ids.agent_registry,
        b.ids.reputation_engine,
        anchor_lang::system_program::ID,
        solana_sdk::sysvar::instructions::ID,
        *mint,
        *collection,
        b.pda.atom_config(),
        b.pda.registry_cpi_authority(),
        b.pda.evaluate_signer(),
        b.pda.gate_authority(facilitator),
        b.pda.agent_account(payee_asset),
        *payee_asset,
        b.pda.atom_stats(payee_asset),
        b.pda.acceptance(payee_asset),
        *destination_token,
        b.pda.holdback_escrow(payee_asset, mint),
    ]
}

/// A v0 transaction of `ixs` paid by `fee_payer`, loading accounts from `tables`, signed by
/// whichever of `signers` it needs (the others' slots stay empty for them to fill).
pub fn transaction(
    fee_payer: &Pubkey,
    ixs: &[Instruction],
    tables: &[AddressLookupTableAccount],
    blockhash: Hash,
    signers: &[&Keypair],
) -> Result<VersionedTransaction, ClientError> {
    let message = v0::Message::try_compile(fee_payer, ixs, tables, blockhash)
        .map_err(|e| ClientError::input("transaction", e.to_string()))?;
    let message = VersionedMessage::V0(message);
    let bytes = message.serialize();
    // The signed size: a shortvec of the signatures (one byte below 128), 64 bytes each.
    let required = usize::from(message.header().num_required_signatures);
    let size = bytes.len() + 1 + 64 * required;
    if size > PACKET_LIMIT {
        return Err(ClientError::input(
            "transaction",
            format!(
                "{size} bytes, above the {PACKET_LIMIT} a transaction may have (a held vault-funded settlement with an approval does not fit: docs/holdback.md)"
            ),
        ));
    }
    let keys = message.static_account_keys();
    let mut signatures = vec![Signature::default(); required];
    for signer in signers {
        let pk = signer.pubkey();
        if let Some(i) = keys[..required].iter().position(|k| *k == pk) {
            signatures[i] = signer.sign_message(&bytes);
        }
    }
    Ok(VersionedTransaction {
        signatures,
        message,
    })
}

/// Sends a fully signed transaction and waits until it reaches the client's commitment. A failure is
/// [`ClientError::Transaction`] with the custom code named and the logs summarized.
pub async fn send(rpc: &RpcClient, tx: &VersionedTransaction) -> Result<Signature, ClientError> {
    match rpc.send_and_confirm_transaction(tx).await {
        Ok(sig) => Ok(sig),
        Err(e) => Err(transaction_error(e)),
    }
}

/// Turns an RPC error into [`ClientError::Transaction`] when it is a transaction failure
/// (preflight or on chain), keeping the logs.
pub fn transaction_error(e: solana_rpc_client_api::client_error::Error) -> ClientError {
    if let ErrorKind::RpcError(RpcError::RpcResponseError {
        data: RpcResponseErrorData::SendTransactionPreflightFailure(sim),
        ..
    }) = e.kind()
    {
        if let Some(err) = sim.err.clone() {
            let err: solana_sdk::transaction::TransactionError = err.into();
            let logs = sim.logs.clone().unwrap_or_default();
            return ClientError::Transaction {
                named: errors::explain(&err, &logs),
                err,
                logs: summarize_logs(&logs),
            };
        }
    }
    if let Some(err) = e.get_transaction_error() {
        return ClientError::Transaction {
            named: errors::explain(&err, &[]),
            err,
            logs: String::new(),
        };
    }
    ClientError::from(e)
}

/// Settles: composes the three instructions, signs as payer and facilitator, sends, confirms.
pub async fn settle(
    rpc: &RpcClient,
    b: &Builder,
    s: &Settlement,
    payer: &Keypair,
    facilitator: &Keypair,
    tables: &[AddressLookupTableAccount],
    atomic: AtomicityEnforced,
) -> Result<Signature, ClientError> {
    let ixs = compose(b, s, atomic)?;
    let blockhash = rpc.get_latest_blockhash().await?;
    let tx = transaction(
        &facilitator.pubkey(),
        &ixs,
        tables,
        blockhash,
        &[facilitator, payer],
    )?;
    send(rpc, &tx).await
}

/// A dispute of a settled payment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispute {
    /// The registry's base collection.
    pub collection: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    /// sha256 of the reason text (or any 32-byte reference).
    pub reason_hash: [u8; 32],
    pub feedback_uri: String,
}

/// The dispute transaction of `d`: `dispute_payment` paid by `facilitator` and signed by
/// `payer`, the wallet that authorized the settlement's transfer (only it may dispute). The
/// facilitator's signature slot stays empty: send the base64 of this transaction to the
/// facilitator's `POST /dispute`, which checks it, co-signs and sends it.
pub fn dispute_transaction(
    b: &Builder,
    facilitator: &Pubkey,
    payer: &Keypair,
    d: &Dispute,
    blockhash: Hash,
) -> Result<VersionedTransaction, ClientError> {
    let ix = dispute_ix(b, facilitator, facilitator, &payer.pubkey(), d);
    transaction(facilitator, &[ix], &[], blockhash, &[payer])
}

/// `dispute_payment` of `d`, a payment of `facilitator`, signed by `payer`; `rent_payer`
/// pays for the record.
fn dispute_ix(
    b: &Builder,
    rent_payer: &Pubkey,
    facilitator: &Pubkey,
    payer: &Pubkey,
    d: &Dispute,
) -> Instruction {
    b.dispute_payment(
        rent_payer,
        facilitator,
        payer,
        &d.collection,
        d.payment_id_hash,
        &d.payee_asset,
        d.reason_hash,
        d.feedback_uri.clone(),
    )
}

/// Disputes a settled payment holding both keys: `payer` signs the dispute, `facilitator`
/// pays. Once per payment, within the gate's dispute window.
pub async fn dispute(
    rpc: &RpcClient,
    b: &Builder,
    facilitator: &Keypair,
    payer: &Keypair,
    d: &Dispute,
) -> Result<Signature, ClientError> {
    let blockhash = rpc.get_latest_blockhash().await?;
    let mut tx = dispute_transaction(b, &facilitator.pubkey(), payer, d, blockhash)?;
    tx.signatures[0] = facilitator.sign_message(&tx.message.serialize());
    send(rpc, &tx).await
}

/// Disputes a settled payment of `facilitator` without it: `payer` signs and pays for the
/// transaction and the record. For when the facilitator will not co-sign (its signature is
/// not needed; its `POST /dispute` only saves the payer the fee and the rent).
pub async fn dispute_alone(
    rpc: &RpcClient,
    b: &Builder,
    facilitator: &Pubkey,
    payer: &Keypair,
    d: &Dispute,
) -> Result<Signature, ClientError> {
    let ix = dispute_ix(b, &payer.pubkey(), facilitator, &payer.pubkey(), d);
    let blockhash = rpc.get_latest_blockhash().await?;
    let tx = transaction(&payer.pubkey(), &[ix], &[], blockhash, &[payer])?;
    send(rpc, &tx).await
}

/// A transaction as x402 payloads, simulations and the facilitator's /dispute carry it:
/// standard base64 of its wire (bincode) bytes.
pub fn encode_transaction<T: serde::Serialize>(tx: &T) -> Result<String, ClientError> {
    use base64::Engine as _;
    let bytes = bincode::serialize(tx).map_err(|e| ClientError::Decode {
        what: "transaction".into(),
        reason: e.to_string(),
    })?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_guard_accepts_only_boolean_true() {
        assert!(AtomicityEnforced::from_json(&json!(true)).is_ok());
        for bad in [
            json!(false),
            json!("true"),
            json!(1),
            json!(null),
            json!({}),
        ] {
            let err = AtomicityEnforced::from_json(&bad).unwrap_err();
            assert!(err.to_string().contains("boolean true"), "{err}");
        }
        assert!(AtomicityEnforced::from_env_value("true").is_ok());
        for bad in ["false", "1", "TRUE", "yes", ""] {
            assert!(AtomicityEnforced::from_env_value(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn config_structs_cannot_deserialize_a_false_guard() {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct Config {
            atomicity_enforced: AtomicityEnforced,
        }
        assert!(serde_json::from_value::<Config>(json!({"atomicityEnforced": true})).is_ok());
        for bad in [json!(false), json!("true"), json!(1)] {
            let err = serde_json::from_value::<Config>(json!({ "atomicityEnforced": bad }))
                .err()
                .unwrap()
                .to_string();
            assert!(
                err.contains("atomicityEnforced must be the boolean true"),
                "{err}"
            );
        }
        assert_eq!(
            serde_json::to_value(AtomicityEnforced::TRUE).unwrap(),
            json!(true)
        );
    }
}
