//! Wire encodings: transactions in (base58/base64), accounts and transactions out, and the
//! parameter readers the methods share.

use super::RpcError;
use anchor_lang::prelude::Pubkey;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde::de::DeserializeOwned;
use serde_json::Value;
use solana_account_decoder::encode_ui_account;
use solana_account_decoder_client_types::{UiAccount, UiAccountEncoding, UiDataSliceConfig};
use solana_sdk::account::Account;
use solana_sdk::message::VersionedMessage;
use solana_sdk::transaction::VersionedTransaction;
use solana_transaction_status_client_types::{
    EncodedTransaction, TransactionBinaryEncoding, UiAddressTableLookup, UiCompiledInstruction,
    UiMessage, UiRawMessage, UiTransaction, UiTransactionEncoding,
};
use std::str::FromStr;

/// Parameter `i`, deserialized; `what` names it in the error.
pub fn param<T: DeserializeOwned>(params: &[Value], i: usize, what: &str) -> Result<T, RpcError> {
    let v = params
        .get(i)
        .ok_or_else(|| RpcError::invalid_params(format!("missing parameter {i}: {what}")))?;
    serde_json::from_value(v.clone())
        .map_err(|e| RpcError::invalid_params(format!("invalid {what}: {e}")))
}

/// Optional config object at `i` (absent or null = default).
pub fn config<T: DeserializeOwned + Default>(params: &[Value], i: usize) -> Result<T, RpcError> {
    match params.get(i) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| RpcError::invalid_params(format!("invalid config: {e}"))),
    }
}

pub fn pubkey(params: &[Value], i: usize, what: &str) -> Result<Pubkey, RpcError> {
    let s: String = param(params, i, what)?;
    Pubkey::from_str(&s).map_err(|_| {
        RpcError::invalid_params(format!("Invalid param: {what} is not a base58 public key"))
    })
}

/// Decodes a wire transaction (base58 is the RPC default for send/simulate).
pub fn decode_transaction(
    data: &str,
    encoding: Option<UiTransactionEncoding>,
) -> Result<VersionedTransaction, RpcError> {
    let bytes = match encoding.unwrap_or(UiTransactionEncoding::Base58) {
        UiTransactionEncoding::Base58 => bs58::decode(data)
            .into_vec()
            .map_err(|e| RpcError::invalid_params(format!("invalid base58 encoding: {e}")))?,
        UiTransactionEncoding::Base64 => STANDARD
            .decode(data)
            .map_err(|e| RpcError::invalid_params(format!("invalid base64 encoding: {e}")))?,
        other => {
            return Err(RpcError::invalid_params(format!(
                "unsupported encoding: {other}. Supported encodings: base58, base64"
            )))
        }
    };
    // A cluster refuses what does not fit in one packet.
    const PACKET_DATA_SIZE: usize = 1232;
    if bytes.len() > PACKET_DATA_SIZE {
        return Err(RpcError::invalid_params(format!(
            "transaction too large: {} bytes (max: raw {PACKET_DATA_SIZE})",
            bytes.len()
        )));
    }
    let tx: VersionedTransaction = bincode::deserialize(&bytes).map_err(|e| {
        RpcError::invalid_params(format!("failed to deserialize VersionedTransaction: {e}"))
    })?;
    tx.sanitize()
        .map_err(|e| RpcError::invalid_params(format!("invalid transaction: {e}")))?;
    Ok(tx)
}

/// Decodes a base64 message (getFeeForMessage).
pub fn decode_message(data: &str) -> Result<VersionedMessage, RpcError> {
    let bytes = STANDARD
        .decode(data)
        .map_err(|e| RpcError::invalid_params(format!("invalid base64 message: {e}")))?;
    bincode::deserialize(&bytes)
        .map_err(|e| RpcError::invalid_params(format!("failed to deserialize message: {e}")))
}

/// An account as the RPC shows it (base58 is the default, as on a cluster).
pub fn ui_account(
    key: &Pubkey,
    account: &Account,
    encoding: Option<UiAccountEncoding>,
    slice: Option<UiDataSliceConfig>,
) -> Result<UiAccount, RpcError> {
    let encoding = encoding.unwrap_or(UiAccountEncoding::Binary);
    if matches!(
        encoding,
        UiAccountEncoding::Binary | UiAccountEncoding::Base58
    ) && account.data.len() > 128
    {
        return Err(RpcError::invalid_params(
            "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
        ));
    }
    Ok(encode_ui_account(key, account, encoding, None, slice))
}

/// A transaction as getTransaction shows it.
pub fn encode_transaction(
    tx: &VersionedTransaction,
    encoding: UiTransactionEncoding,
) -> Result<EncodedTransaction, RpcError> {
    let bytes = bincode::serialize(tx).map_err(|e| RpcError::internal(e.to_string()))?;
    Ok(match encoding {
        UiTransactionEncoding::Base64 => {
            EncodedTransaction::Binary(STANDARD.encode(bytes), TransactionBinaryEncoding::Base64)
        }
        UiTransactionEncoding::Base58 => EncodedTransaction::Binary(
            bs58::encode(bytes).into_string(),
            TransactionBinaryEncoding::Base58,
        ),
        UiTransactionEncoding::Json => EncodedTransaction::Json(UiTransaction {
            signatures: tx.signatures.iter().map(|s| s.to_string()).collect(),
            message: UiMessage::Raw(UiRawMessage {
                header: *tx.message.header(),
                account_keys: tx
                    .message
                    .static_account_keys()
                    .iter()
                    .map(|k| k.to_string())
                    .collect(),
                recent_blockhash: tx.message.recent_blockhash().to_string(),
                instructions: tx
                    .message
                    .instructions()
                    .iter()
                    .map(|ix| UiCompiledInstruction::from(ix, None))
                    .collect(),
                address_table_lookups: tx
                    .message
                    .address_table_lookups()
                    .map(|l| l.iter().map(UiAddressTableLookup::from).collect()),
            }),
        }),
        other => {
            return Err(RpcError::invalid_params(format!(
                "unsupported encoding: {other}. Supported encodings: json, base58, base64"
            )))
        }
    })
}
