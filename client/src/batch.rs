//! x402's `batch-settlement` scheme on Solana, on the wire, in its client mode (the payer's key
//! signs every voucher), as its SVM specification defines it, and trust-gate's gated variant.
//!
//! A session: the client opens one payment channel (its first paid request carries the open,
//! the "deposit", with the request's voucher), then pays each further request with a voucher
//! alone, the cumulative amount raised by the request's price. Vouchers are checked off chain
//! (a signature check); the facilitator redeems the latest of each channel on chain in batches
//! and at the close. `@x402/svm` 2.27 ships no batch-settlement code: the wire here follows the
//! specification (its `ChannelConfig.openSlot` is a number; a decimal string is read too).
//!
//! The gated variant ([`SCHEME_GATED_BATCH`]) opens the channel with the gate's
//! `gate_channel_open` before the program's `open` (the payer's policy decides the deposit, the
//! channel is recorded), may load the facilitator's lookup tables, and closes through the gate
//! (what was not spent goes back to the policy; the payee gets its feedback). Its requirements
//! carry the `gate` extension (the payer and payee agents, the policy, the service's signature).

use serde::{Deserialize, Deserializer, Serialize};

/// The stock scheme's name.
pub const SCHEME_BATCH: &str = "batch-settlement";
/// The gated variant's name.
pub const SCHEME_GATED_BATCH: &str = "trust-gate-batch-settlement";
/// The only flow the scheme knows (`extra.paymentFlow`, when present).
pub const PAYMENT_FLOW_AUTHORIZATION: &str = "authorization";
/// The range of `extra.withdrawDelay` (the channel's grace period, seconds).
pub const MIN_WITHDRAW_DELAY: u32 = 900;
pub const MAX_WITHDRAW_DELAY: u32 = 2_592_000;
/// The Memo that binds the receiver's authorizer into a channel at its open.
pub const BINDING_MEMO_PREFIX: &str = "x402:batch-settlement:svm:rcvauth:v1:";
/// The most channels one claim or settle transaction carries.
pub const MAX_CHANNELS_PER_TRANSACTION: usize = 4;

/// The binding Memo's text for `receiver_authorizer`.
pub fn binding_memo(receiver_authorizer: &str) -> String {
    format!("{BINDING_MEMO_PREFIX}{receiver_authorizer}")
}

/// `extra` of a `batch-settlement` offer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchExtra {
    /// The facilitator's sponsor: fee payer, the channel's rent payer and zero-share payee.
    pub fee_payer: String,
    /// The key bound into each channel by the open's binding Memo.
    pub receiver_authorizer: String,
    /// The channel's grace period, [`MIN_WITHDRAW_DELAY`]..=[`MAX_WITHDRAW_DELAY`].
    pub withdraw_delay: u32,
    /// The mint's token program (the facilitator checks it against the chain).
    pub token_program: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_flow: Option<String>,
    /// `client` (the default) or `server`: only `client` is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voucher_signer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recent_blockhash: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u64_either"
    )]
    pub recent_slot: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_deposit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_idle_secs: Option<u64>,
}

/// The channel a payload is about, as the client describes it (its address follows).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelConfig {
    /// The payer's wallet: the open's payer.
    pub payer: String,
    /// The channel's voucher key (client mode: the client's).
    pub payer_authorizer: String,
    /// `payTo`: 100 % of the distribution.
    pub receiver: String,
    pub receiver_authorizer: String,
    /// The mint.
    pub token: String,
    pub withdraw_delay: u32,
    /// The open's salt, a decimal u64.
    pub salt: String,
    /// A number as the specification has it; a decimal string is read too.
    #[serde(deserialize_with = "u64_either")]
    pub open_slot: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voucher_signer: Option<String>,
}

/// A voucher on the wire: the cumulative amount the channel may pay, never expiring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchVoucher {
    pub channel_id: String,
    pub max_claimable_amount: String,
    /// Always 0 in this scheme.
    pub expires_at: i64,
    /// Base58 of the voucher key's Ed25519 signature of the program's voucher message.
    pub signature: String,
}

/// The deposit a first request carries: the open, signed by the payer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepositTx {
    pub amount: String,
    /// Base64 of the open transaction, the fee payer's signature empty.
    pub transaction: String,
}

/// One channel of a server's `claim`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    pub channel_id: String,
    pub channel_config: ChannelConfig,
    pub voucher: BatchVoucher,
}

/// One channel of a server's `settle`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettleChannel {
    pub channel_id: String,
    pub channel_config: ChannelConfig,
}

/// `paymentPayload.payload`, by its `type`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum BatchPayload {
    /// A first request: the open and its voucher.
    #[serde(rename_all = "camelCase")]
    Deposit {
        channel_config: ChannelConfig,
        voucher: BatchVoucher,
        deposit: DepositTx,
    },
    /// A further request: its voucher.
    #[serde(rename_all = "camelCase")]
    Voucher {
        channel_config: ChannelConfig,
        voucher: BatchVoucher,
    },
    /// The client ends the session: the facilitator seals the channel at the latest voucher
    /// it accepted and gives the rest back.
    #[serde(rename_all = "camelCase")]
    Refund {
        channel_config: ChannelConfig,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        voucher: Option<BatchVoucher>,
    },
    /// The server asks for vouchers to be applied on chain now.
    Claim { claims: Vec<Claim> },
    /// The server asks for what was applied to be paid out now.
    Settle { channels: Vec<SettleChannel> },
}

impl BatchPayload {
    pub fn type_name(&self) -> &'static str {
        match self {
            BatchPayload::Deposit { .. } => "deposit",
            BatchPayload::Voucher { .. } => "voucher",
            BatchPayload::Refund { .. } => "refund",
            BatchPayload::Claim { .. } => "claim",
            BatchPayload::Settle { .. } => "settle",
        }
    }
}

/// The payload types of the specification this facilitator does not serve (server mode's
/// `authorization`, the server's `seal`).
pub const UNSERVED_TYPES: [&str; 2] = ["authorization", "seal"];

/// A channel's state as the scheme's answers carry it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelState {
    pub channel_id: String,
    /// The deposit.
    pub balance: String,
    /// What was applied on chain.
    pub total_claimed: String,
    pub withdraw_requested_at: i64,
    /// What the facilitator accepted (the latest voucher's cumulative amount).
    pub charged_cumulative_amount: String,
}

fn u64_either<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    crate::upto::number_or_decimal(d)
}

fn opt_u64_either<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    u64_either(d).map(Some)
}

/// The facilitator's reason strings for `batch-settlement` (the specification's), and this
/// facilitator's own for what it adds (the gate's checks of vouchers).
pub mod reason {
    pub const UNSUPPORTED_SCHEME: &str = "unsupported_scheme";
    pub const UNSUPPORTED_PAYLOAD_TYPE: &str = "unsupported_payload_type";
    pub const NETWORK_MISMATCH: &str = "network_mismatch";
    pub const PAYLOAD_TYPE: &str = "invalid_batch_settlement_svm_payload_type";
    pub const PAYMENT_FLOW: &str = "invalid_batch_settlement_svm_payment_flow";
    pub const TOKEN_PROGRAM: &str = "invalid_batch_settlement_svm_token_program";
    pub const VOUCHER_SIGNATURE: &str = "invalid_batch_settlement_svm_voucher_signature";
    pub const CHANNEL_ID_MISMATCH: &str = "invalid_batch_settlement_svm_channel_id_mismatch";
    pub const FEE_PAYER_MISMATCH: &str = "invalid_batch_settlement_svm_fee_payer_mismatch";
    pub const RECEIVER_AUTHORIZER_MISMATCH: &str =
        "invalid_batch_settlement_svm_receiver_authorizer_mismatch";
    pub const CLOSE_STATE: &str = "invalid_batch_settlement_svm_close_state";
    pub const CHANNEL_CLOSING: &str = "invalid_batch_settlement_svm_channel_closing";
    pub const WITHDRAW_DELAY_MISMATCH: &str =
        "invalid_batch_settlement_svm_withdraw_delay_mismatch";
    pub const WITHDRAW_DELAY_OUT_OF_RANGE: &str =
        "invalid_batch_settlement_svm_withdraw_delay_out_of_range";
    pub const CUMULATIVE_AMOUNT_MISMATCH: &str =
        "invalid_batch_settlement_svm_cumulative_amount_mismatch";
    pub const CUMULATIVE_EXCEEDS_DEPOSIT: &str =
        "invalid_batch_settlement_svm_cumulative_exceeds_deposit";
    pub const VOUCHER_EXPIRY: &str = "invalid_batch_settlement_svm_voucher_expiry";
    pub const SETUP_TRANSACTION: &str = "invalid_batch_settlement_svm_setup_transaction";
    pub const SETTLEMENT_SIMULATION: &str = "invalid_batch_settlement_svm_settlement_simulation";
    pub const CHANNEL_STATE: &str = "invalid_batch_settlement_svm_channel_state";
    pub const DUPLICATE_SETTLEMENT: &str = "duplicate_settlement";
    pub const SETTLEMENT_PENDING: &str = "settlement_pending";
    pub const TRANSACTION_FAILED: &str = "transaction_failed";
    /// This facilitator's: a requirement field it cannot read.
    pub const INVALID_REQUIREMENTS: &str = "invalid_batch_settlement_svm_payment_requirements";
    /// This facilitator's: server mode (`voucherSigner: "server"`, `authorization`, `seal`).
    pub const SERVER_MODE_UNSUPPORTED: &str =
        "invalid_batch_settlement_svm_server_mode_unsupported";
    /// The gated variant's: the price is above the payer policy's per-payment cap.
    pub const PRICE_OVER_PER_PAYMENT_CAP: &str = "price_over_per_payment_cap";
    /// A gated session's policy was retired (as the poller last read it).
    pub const POLICY_RETIRED: &str = "policy_retired";
    /// The gated variant's: the payer's kill switch is paused.
    pub const PAYER_PAUSED: &str = "payer_kill_switch_paused";
    /// The gated variant's: a voucher above the deposit the gate counted.
    pub const OVER_GATED_DEPOSIT: &str = "voucher_over_gated_deposit";
    /// A channel this facilitator does not hold a session of.
    pub const UNKNOWN_CHANNEL: &str = "invalid_batch_settlement_svm_unknown_channel";
}

/// A payload field that must name a key: the reason (`unsupported_payload_type`, as upto's)
/// and the message naming it.
pub use crate::upto::key;

/// A field that must hold a decimal amount.
pub fn amount(field: &str, value: &str) -> Result<u64, (&'static str, String)> {
    crate::upto::decimal(value).ok_or_else(|| {
        (
            reason::UNSUPPORTED_PAYLOAD_TYPE,
            format!("{field} is not a decimal amount of atomic units (u64): {value:?}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::prelude::Pubkey;
    use serde_json::json;

    fn config() -> serde_json::Value {
        json!({
            "payer": Pubkey::new_unique().to_string(),
            "payerAuthorizer": Pubkey::new_unique().to_string(),
            "receiver": Pubkey::new_unique().to_string(),
            "receiverAuthorizer": Pubkey::new_unique().to_string(),
            "token": Pubkey::new_unique().to_string(),
            "withdrawDelay": 900,
            "salt": "18446744073709551615",
            "openSlot": 1234,
        })
    }

    fn voucher() -> serde_json::Value {
        json!({"channelId": Pubkey::new_unique().to_string(), "maxClaimableAmount": "5", "expiresAt": 0, "signature": "s"})
    }

    #[test]
    fn payloads_read_by_type_and_write_the_same() {
        let deposit = json!({
            "type": "deposit",
            "channelConfig": config(),
            "voucher": voucher(),
            "deposit": {"amount": "100", "transaction": "AQ=="},
        });
        let p: BatchPayload = serde_json::from_value(deposit.clone()).unwrap();
        assert_eq!(p.type_name(), "deposit");
        assert_eq!(serde_json::to_value(&p).unwrap(), deposit);
        let v = json!({"type": "voucher", "channelConfig": config(), "voucher": voucher()});
        let p: BatchPayload = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        let r = json!({"type": "refund", "channelConfig": config()});
        assert_eq!(
            serde_json::from_value::<BatchPayload>(r)
                .unwrap()
                .type_name(),
            "refund"
        );
        for t in UNSERVED_TYPES {
            let p = json!({"type": t, "channelConfig": config()});
            assert!(serde_json::from_value::<BatchPayload>(p).is_err(), "{t}");
        }
    }

    #[test]
    fn the_open_slot_is_a_number_or_a_decimal_string() {
        let mut c = config();
        let a: ChannelConfig = serde_json::from_value(c.clone()).unwrap();
        c["openSlot"] = json!("1234");
        let b: ChannelConfig = serde_json::from_value(c.clone()).unwrap();
        assert_eq!((a.open_slot, b.open_slot), (1234, 1234));
        assert_eq!(serde_json::to_value(&b).unwrap()["openSlot"], json!(1234));
        c["openSlot"] = json!("12x");
        assert!(serde_json::from_value::<ChannelConfig>(c).is_err());
    }

    #[test]
    fn fields_are_named_in_their_errors() {
        let (_, m) = key("channelConfig.payer", "nope").unwrap_err();
        assert!(m.contains("channelConfig.payer"));
        for bad in ["", "-5", "1e3", "18446744073709551616"] {
            let (r, m) = amount("voucher.maxClaimableAmount", bad).unwrap_err();
            assert_eq!(r, reason::UNSUPPORTED_PAYLOAD_TYPE);
            assert!(m.contains("maxClaimableAmount"), "{m}");
        }
        assert_eq!(amount("deposit.amount", "42"), Ok(42));
        assert_eq!(
            binding_memo("K"),
            "x402:batch-settlement:svm:rcvauth:v1:K".to_string()
        );
    }
}
