//! The JSON-RPC methods, one function each.

use super::encoding::{
    config, decode_message, decode_transaction, encode_transaction, param, pubkey, ui_account,
};
use super::{RpcError, RpcResult, SOLANA_VERSION};
use crate::chain::{Chain, SubmitError};
use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::system_instruction;
use serde::Deserialize;
use serde_json::{json, Value};
use solana_account_decoder_client_types::UiAccountEncoding;
use solana_rpc_client_types::config::{
    RpcAccountInfoConfig, RpcProgramAccountsConfig, RpcSendTransactionConfig,
    RpcSignatureStatusConfig, RpcSimulateTransactionConfig, RpcTransactionConfig,
};
use solana_rpc_client_types::filter::RpcFilterType;
use solana_rpc_client_types::response::{
    RpcBlockhash, RpcKeyedAccount, RpcSimulateTransactionResult,
};
use solana_sdk::account::Account;
use solana_sdk::epoch_schedule::EpochSchedule;
use solana_sdk::hash::Hash;
use solana_sdk::message::VersionedMessage;
use solana_sdk::signature::Signature;
use solana_sdk::transaction::{Transaction, TransactionError, VersionedTransaction};
use solana_transaction_status_client_types::{
    EncodedConfirmedTransactionWithStatusMeta, EncodedTransactionWithStatusMeta,
    TransactionConfirmationStatus, TransactionStatus, UiTransactionEncoding,
    UiTransactionReturnData, UiTransactionStatusMeta,
};
use std::str::FromStr;
use std::sync::Arc;

// The localnet-only method that writes an account outright (in the spirit of surfpool's
// `surfnet_setAccount`): for state no real instruction can make in a demo's lifetime, such as
// the real reputation engine's tiers, which it raises only over weeks. No cluster serves it,
// so a client that calls it against one gets "Method not found" naming it.
use trust_gate_client::chain::LOCALNET_SET_ACCOUNT;

/// Calls `method`.
pub async fn dispatch(chain: &Arc<Chain>, method: &str, p: &[Value]) -> RpcResult {
    match method {
        "getAccountInfo" => get_account_info(chain, p).await,
        "getMultipleAccounts" => get_multiple_accounts(chain, p).await,
        "getProgramAccounts" => get_program_accounts(chain, p).await,
        "getBalance" => get_balance(chain, p).await,
        "getLatestBlockhash" => get_latest_blockhash(chain).await,
        "isBlockhashValid" => is_blockhash_valid(chain, p).await,
        "getSlot" => Ok(json!(chain.slot())),
        "getBlockHeight" => get_block_height(chain).await,
        "getEpochInfo" => get_epoch_info(chain).await,
        "getGenesisHash" => Ok(json!(chain.genesis_hash().to_string())),
        "getVersion" => Ok(json!({"solana-core": SOLANA_VERSION, "feature-set": 0})),
        "getHealth" => Ok(json!("ok")),
        "getMinimumBalanceForRentExemption" => get_minimum_balance(chain, p).await,
        "getFeeForMessage" => get_fee_for_message(chain, p).await,
        "simulateTransaction" => simulate_transaction(chain, p).await,
        "sendTransaction" => send_transaction(chain, p).await,
        "getSignatureStatuses" => get_signature_statuses(chain, p).await,
        "getTransaction" => get_transaction(chain, p).await,
        "getSignaturesForAddress" => get_signatures_for_address(chain, p).await,
        "requestAirdrop" => request_airdrop(chain, p).await,
        LOCALNET_SET_ACCOUNT => set_account(chain, p).await,
        other => Err(RpcError {
            code: -32601,
            message: format!("Method not found: {other}"),
            data: None,
        }),
    }
}

fn bank_error(e: impl std::fmt::Display) -> RpcError {
    RpcError::internal(format!("bank: {e}"))
}

/// `{"context":{"slot","apiVersion"},"value":...}`
fn with_context(chain: &Chain, value: impl serde::Serialize) -> RpcResult {
    Ok(json!({
        "context": {"slot": chain.slot(), "apiVersion": SOLANA_VERSION},
        "value": value,
    }))
}

async fn get_account_info(chain: &Chain, p: &[Value]) -> RpcResult {
    let key = pubkey(p, 0, "account address")?;
    let cfg: RpcAccountInfoConfig = config(p, 1)?;
    let value = match chain.account(&key).await.map_err(bank_error)? {
        Some(acc) if acc.lamports > 0 => {
            Some(ui_account(&key, &acc, cfg.encoding, cfg.data_slice)?)
        }
        _ => None,
    };
    with_context(chain, value)
}

async fn get_multiple_accounts(chain: &Chain, p: &[Value]) -> RpcResult {
    let keys: Vec<String> = param(p, 0, "account addresses")?;
    if keys.len() > 100 {
        return Err(RpcError::invalid_params(
            "Too many inputs provided; max 100",
        ));
    }
    let cfg: RpcAccountInfoConfig = config(p, 1)?;
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        let key = Pubkey::from_str(&k).map_err(|_| {
            RpcError::invalid_params(format!("Invalid param: {k} is not a base58 public key"))
        })?;
        out.push(match chain.account(&key).await.map_err(bank_error)? {
            Some(acc) if acc.lamports > 0 => {
                Some(ui_account(&key, &acc, cfg.encoding, cfg.data_slice)?)
            }
            _ => None,
        });
    }
    with_context(chain, out)
}

fn filter_allows(f: &RpcFilterType, acc: &Account) -> Result<bool, RpcError> {
    Ok(match f {
        RpcFilterType::DataSize(n) => acc.data.len() as u64 == *n,
        RpcFilterType::Memcmp(m) => m.bytes_match(&acc.data),
        RpcFilterType::TokenAccountState => {
            return Err(RpcError::invalid_params(
                "the tokenAccountState filter is not supported by the localnet",
            ))
        }
    })
}

async fn get_program_accounts(chain: &Chain, p: &[Value]) -> RpcResult {
    let program = pubkey(p, 0, "program id")?;
    let cfg: RpcProgramAccountsConfig = config(p, 1)?;
    let filters = cfg.filters.unwrap_or_default();
    for f in &filters {
        f.verify()
            .map_err(|e| RpcError::invalid_params(format!("invalid filter: {e}")))?;
    }
    let mut out = Vec::new();
    for (key, acc) in chain.program_accounts(&program).await.map_err(bank_error)? {
        let mut keep = true;
        for f in &filters {
            keep &= filter_allows(f, &acc)?;
        }
        if keep {
            out.push(RpcKeyedAccount {
                pubkey: key.to_string(),
                account: ui_account(
                    &key,
                    &acc,
                    cfg.account_config.encoding,
                    cfg.account_config.data_slice,
                )?,
            });
        }
    }
    if cfg.with_context.unwrap_or(false) {
        with_context(chain, out)
    } else {
        Ok(json!(out))
    }
}

async fn get_balance(chain: &Chain, p: &[Value]) -> RpcResult {
    let key = pubkey(p, 0, "account address")?;
    let lamports = chain
        .account(&key)
        .await
        .map_err(bank_error)?
        .map(|a| a.lamports)
        .unwrap_or(0);
    with_context(chain, lamports)
}

async fn get_latest_blockhash(chain: &Chain) -> RpcResult {
    let (hash, last_valid) = chain.latest_blockhash_info();
    with_context(
        chain,
        RpcBlockhash {
            blockhash: hash.to_string(),
            last_valid_block_height: last_valid,
        },
    )
}

async fn is_blockhash_valid(chain: &Chain, p: &[Value]) -> RpcResult {
    let s: String = param(p, 0, "blockhash")?;
    let hash =
        Hash::from_str(&s).map_err(|_| RpcError::invalid_params("Invalid param: blockhash"))?;
    let valid = chain.is_blockhash_valid(&hash);
    with_context(chain, valid)
}

async fn get_block_height(chain: &Chain) -> RpcResult {
    Ok(json!(chain.block_height()))
}

async fn get_epoch_info(chain: &Chain) -> RpcResult {
    let banks = chain.banks().await;
    let schedule: EpochSchedule = banks.get_sysvar().await.map_err(bank_error)?;
    let slot = chain.slot();
    let (epoch, slot_index) = schedule.get_epoch_and_slot_index(slot);
    let height = chain.block_height();
    Ok(json!({
        "absoluteSlot": slot,
        "blockHeight": height,
        "epoch": epoch,
        "slotIndex": slot_index,
        "slotsInEpoch": schedule.get_slots_in_epoch(epoch),
        "transactionCount": chain.index().transaction_count(),
    }))
}

async fn get_minimum_balance(chain: &Chain, p: &[Value]) -> RpcResult {
    let len: usize = param(p, 0, "data length")?;
    // An account holds at most 10 MiB; past that the rent arithmetic would overflow.
    const MAX_ACCOUNT_LEN: usize = 10 * 1024 * 1024;
    if len > MAX_ACCOUNT_LEN {
        return Err(RpcError::invalid_params(format!(
            "Invalid param: data length {len} is above the largest account ({MAX_ACCOUNT_LEN} bytes)"
        )));
    }
    let rent = chain.banks().await.get_rent().await.map_err(bank_error)?;
    Ok(json!(rent.minimum_balance(len)))
}

async fn get_fee_for_message(chain: &Chain, p: &[Value]) -> RpcResult {
    let s: String = param(p, 0, "message")?;
    let message = decode_message(&s)?;
    let fee = chain.fee(&message).await.map_err(bank_error)?;
    with_context(chain, fee)
}

fn simulation_json(
    sim: &crate::chain::Simulation,
    replacement: Option<(Hash, u64)>,
) -> RpcSimulateTransactionResult {
    RpcSimulateTransactionResult {
        err: sim.result.clone().err().map(Into::into),
        logs: Some(sim.logs.clone()),
        accounts: None,
        units_consumed: Some(sim.units_consumed),
        loaded_accounts_data_size: Some(sim.loaded_accounts_data_size),
        return_data: sim.return_data.clone().map(UiTransactionReturnData::from),
        inner_instructions: None,
        replacement_blockhash: replacement.map(|(h, v)| RpcBlockhash {
            blockhash: h.to_string(),
            last_valid_block_height: v,
        }),
        fee: None,
        pre_balances: None,
        post_balances: None,
        pre_token_balances: None,
        post_token_balances: None,
        loaded_addresses: None,
    }
}

fn signatures_verify(tx: &VersionedTransaction) -> bool {
    tx.verify_with_results().iter().all(|ok| *ok)
}

fn signature_failure() -> RpcError {
    RpcError {
        code: -32003,
        message: "Transaction signature verification failure".into(),
        data: None,
    }
}

async fn simulate_transaction(chain: &Chain, p: &[Value]) -> RpcResult {
    let data: String = param(p, 0, "transaction")?;
    let cfg: RpcSimulateTransactionConfig = config(p, 1)?;
    let (watch, watch_encoding) = match &cfg.accounts {
        None => (Vec::new(), None),
        Some(a) => {
            if a.addresses.len() > 100 {
                return Err(RpcError::invalid_params(
                    "Too many accounts provided; max 100",
                ));
            }
            let keys = a
                .addresses
                .iter()
                .map(|k| {
                    Pubkey::from_str(k).map_err(|_| {
                        RpcError::invalid_params(format!(
                            "Invalid param: {k} is not a base58 public key"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            (keys, Some(a.encoding.unwrap_or(UiAccountEncoding::Base64)))
        }
    };
    if cfg.sig_verify && cfg.replace_recent_blockhash {
        return Err(RpcError::invalid_params(
            "sigVerify may not be used with replaceRecentBlockhash",
        ));
    }
    let mut tx = decode_transaction(&data, cfg.encoding)?;
    if cfg.sig_verify && !signatures_verify(&tx) {
        return Err(signature_failure());
    }
    let mut replacement = None;
    if cfg.replace_recent_blockhash {
        let latest = chain.latest_blockhash_info();
        tx.message.set_recent_blockhash(latest.0);
        replacement = Some(latest);
    }
    let (sim, read) = chain
        .simulate_reading(tx, cfg.replace_recent_blockhash, &watch)
        .await
        .map_err(bank_error)?;
    let mut value = simulation_json(&sim, replacement);
    if let Some(encoding) = watch_encoding {
        let mut accounts = Vec::with_capacity(watch.len());
        for (key, acc) in watch.iter().zip(read) {
            accounts.push(match acc {
                Some(acc) if acc.lamports > 0 => Some(ui_account(key, &acc, Some(encoding), None)?),
                _ => None,
            });
        }
        value.accounts = Some(accounts);
    }
    with_context(chain, value)
}

fn preflight_failure(sim: &crate::chain::Simulation, err: &TransactionError) -> RpcError {
    RpcError {
        code: -32002,
        message: format!("Transaction simulation failed: {err}"),
        data: serde_json::to_value(simulation_json(sim, None)).ok(),
    }
}

async fn send_transaction(chain: &Chain, p: &[Value]) -> RpcResult {
    let data: String = param(p, 0, "transaction")?;
    let cfg: RpcSendTransactionConfig = config(p, 1)?;
    let tx = decode_transaction(&data, cfg.encoding)?;
    if !signatures_verify(&tx) {
        return Err(signature_failure());
    }
    if !cfg.skip_preflight {
        let sim = chain
            .simulate(tx.clone(), false)
            .await
            .map_err(bank_error)?;
        if let Err(err) = &sim.result {
            return Err(preflight_failure(&sim, err));
        }
    }
    match chain.submit(tx).await {
        Ok(sig) => Ok(json!(sig.to_string())),
        Err(SubmitError::Rejected(err)) => Err(RpcError {
            code: -32002,
            message: format!("Transaction simulation failed: {err}"),
            data: Some(
                json!({"err": serde_json::to_value(solana_transaction_status_client_types::UiTransactionError::from(err)).unwrap_or(Value::Null), "logs": []}),
            ),
        }),
        Err(SubmitError::Bank(e)) => Err(RpcError::internal(e)),
    }
}

fn parse_signature(s: &str) -> Result<Signature, RpcError> {
    Signature::from_str(s)
        .map_err(|_| RpcError::invalid_params(format!("Invalid param: {s} is not a signature")))
}

async fn get_signature_statuses(chain: &Chain, p: &[Value]) -> RpcResult {
    let sigs: Vec<String> = param(p, 0, "signatures")?;
    if sigs.len() > 256 {
        return Err(RpcError::invalid_params(
            "Too many inputs provided; max 256",
        ));
    }
    let _cfg: Option<RpcSignatureStatusConfig> = config(p, 1)?;
    let index = chain.index();
    let mut out = Vec::with_capacity(sigs.len());
    for s in &sigs {
        let sig = parse_signature(s)?;
        out.push(index.transaction(&sig).map(|r| TransactionStatus {
            slot: r.slot,
            // The localnet roots every slot at once: report finalized.
            confirmations: None,
            status: r.meta.status.clone(),
            err: r.meta.status.clone().err(),
            confirmation_status: Some(TransactionConfirmationStatus::Finalized),
        }));
    }
    drop(index);
    with_context(chain, out)
}

/// getTransaction's second parameter: a config object or, in the legacy form, an encoding.
#[derive(Deserialize)]
#[serde(untagged)]
enum TransactionParam {
    Encoding(UiTransactionEncoding),
    Config(RpcTransactionConfig),
}

async fn get_transaction(chain: &Chain, p: &[Value]) -> RpcResult {
    let s: String = param(p, 0, "signature")?;
    let sig = parse_signature(&s)?;
    let cfg = match p.get(1) {
        None | Some(Value::Null) => RpcTransactionConfig::default(),
        Some(v) => match serde_json::from_value::<TransactionParam>(v.clone())
            .map_err(|e| RpcError::invalid_params(format!("invalid config: {e}")))?
        {
            TransactionParam::Encoding(e) => RpcTransactionConfig {
                encoding: Some(e),
                ..RpcTransactionConfig::default()
            },
            TransactionParam::Config(c) => c,
        },
    };
    let Some(record) = chain.index().transaction(&sig).cloned() else {
        return Ok(Value::Null);
    };
    let is_v0 = matches!(record.transaction.message, VersionedMessage::V0(_));
    let version = match (is_v0, cfg.max_supported_transaction_version) {
        (true, None) => {
            return Err(RpcError {
                code: -32015,
                message: "Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0".into(),
                data: None,
            })
        }
        (true, Some(_)) => Some(solana_sdk::transaction::TransactionVersion::Number(0)),
        (false, Some(_)) => Some(solana_sdk::transaction::TransactionVersion::LEGACY),
        (false, None) => None,
    };
    let meta = record.meta.clone();
    let encoding = cfg.encoding.unwrap_or(UiTransactionEncoding::Json);
    let encoded = EncodedConfirmedTransactionWithStatusMeta {
        slot: record.slot,
        transaction: EncodedTransactionWithStatusMeta {
            transaction: encode_transaction(&record.transaction, encoding)?,
            meta: Some(UiTransactionStatusMeta::from(meta)),
            version,
        },
        block_time: Some(record.block_time),
    };
    serde_json::to_value(encoded).map_err(|e| RpcError::internal(e.to_string()))
}

/// getSignaturesForAddress's config.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SignaturesConfig {
    limit: Option<usize>,
    before: Option<String>,
    until: Option<String>,
    // `commitment` and `minContextSlot` are accepted and ignored, as unknown fields are:
    // the localnet roots every slot at once.
}

/// The most signatures one call returns (a cluster's limit too).
const MAX_SIGNATURES: usize = 1000;

/// getSignaturesForAddress(address, {limit, before, until}): the transactions that named
/// the address, newest first, as a cluster pages them.
async fn get_signatures_for_address(chain: &Chain, p: &[Value]) -> RpcResult {
    let address = pubkey(p, 0, "address")?;
    let cfg: SignaturesConfig = config(p, 1)?;
    let limit = cfg.limit.unwrap_or(MAX_SIGNATURES);
    if !(1..=MAX_SIGNATURES).contains(&limit) {
        return Err(RpcError::invalid_params(format!(
            "Invalid limit; max {MAX_SIGNATURES}"
        )));
    }
    let before = cfg.before.as_deref().map(parse_signature).transpose()?;
    let until = cfg.until.as_deref().map(parse_signature).transpose()?;
    let index = chain.index();
    let found: Vec<Value> = index
        .signatures_for(&address, before.as_ref(), until.as_ref(), limit)
        .into_iter()
        .map(|(sig, r)| {
            json!({
                "signature": sig.to_string(),
                "slot": r.slot,
                "err": r.meta.status.clone().err(),
                "memo": Value::Null,
                "blockTime": r.block_time,
                // The localnet roots every slot at once.
                "confirmationStatus": "finalized",
            })
        })
        .collect();
    Ok(Value::Array(found))
}

/// The account `localnet_setAccount` writes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountInput {
    lamports: u64,
    owner: String,
    /// `[base64 data, "base64"]`, as `getAccountInfo` returns it.
    data: (String, String),
    #[serde(default)]
    executable: bool,
}

/// `localnet_setAccount(address, {lamports, owner, data: [base64, "base64"], executable})`.
async fn set_account(chain: &Chain, p: &[Value]) -> RpcResult {
    use base64::Engine as _;
    let address = pubkey(p, 0, "address")?;
    let input: AccountInput = param(p, 1, "account")?;
    let owner = Pubkey::from_str(&input.owner)
        .map_err(|e| RpcError::invalid_params(format!("account.owner: {e}")))?;
    if input.data.1 != "base64" {
        return Err(RpcError::invalid_params(format!(
            "account.data: encoding {:?}, expected \"base64\"",
            input.data.1
        )));
    }
    let data = base64::engine::general_purpose::STANDARD
        .decode(&input.data.0)
        .map_err(|e| RpcError::invalid_params(format!("account.data: {e}")))?;
    let account = Account {
        lamports: input.lamports,
        data,
        owner,
        executable: input.executable,
        rent_epoch: 0,
    };
    chain.set_account(&address, account).await;
    with_context(chain, Value::Null)
}

async fn request_airdrop(chain: &Chain, p: &[Value]) -> RpcResult {
    let to = pubkey(p, 0, "recipient")?;
    let lamports: u64 = param(p, 1, "lamports")?;
    if lamports == 0 {
        return Err(RpcError::invalid_params("lamports must be greater than 0"));
    }
    let faucet = chain.faucet();
    let blockhash = chain.latest_blockhash();
    let from = solana_sdk::signer::Signer::pubkey(faucet);
    let tx = Transaction::new_signed_with_payer(
        &[system_instruction::transfer(&from, &to, lamports)],
        Some(&from),
        &[faucet],
        blockhash,
    );
    match chain.submit(tx.into()).await {
        Ok(sig) => Ok(json!(sig.to_string())),
        Err(e) => Err(RpcError::internal(format!("airdrop failed: {e}"))),
    }
}
