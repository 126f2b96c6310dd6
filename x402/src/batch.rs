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

use anchor_lang::prelude::Pubkey;
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};
use solana_sdk::signature::{Keypair, Signature, Signer};

/// The stock scheme's name.
pub const SCHEME_BATCH: &str = "batch-settlement";
/// The gated variant's name.
pub const SCHEME_GATED_BATCH: &str = "trust-gate-batch-settlement";
/// The only flow the scheme knows (`extra.paymentFlow`, when present).
pub const PAYMENT_FLOW_AUTHORIZATION: &str = "authorization";
/// The range of `extra.withdrawDelay` (the channel's grace period, seconds).
pub const MIN_WITHDRAW_DELAY: u32 = 900;
pub const MAX_WITHDRAW_DELAY: u32 = 2_592_000;
pub use trust_gate_client::channels::BINDING_MEMO_PREFIX;
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
    /// The client ends the session (a cooperative close, specification section 3): its
    /// latest voucher, which must be the cumulative amount the server accepted, and the
    /// server's [`CloseAuthorization`] over it, which the server adds before forwarding. The
    /// facilitator seals the channel at it and gives the rest back.
    #[serde(rename_all = "camelCase")]
    Refund {
        channel_config: ChannelConfig,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        voucher: Option<BatchVoucher>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        close_authorization: Option<CloseAuthorization>,
        /// A payer-signed `request_close` (the specification's fallback when the binding is
        /// unavailable): not served here; the payer sends its own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transaction: Option<String>,
        /// Never taken: a refund returns the whole unused escrow (read only to be refused).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        amount: Option<serde_json::Value>,
    },
    /// The server asks for vouchers to be applied on chain now.
    Claim { claims: Vec<Claim> },
    /// The server asks for what was applied to be paid out now.
    Settle { channels: Vec<SettleChannel> },
    /// The server collects a channel its payer moved to `Closing` (`request_close`) with its
    /// latest voucher, within the grace period (specification section 4.5).
    #[serde(rename_all = "camelCase")]
    Seal {
        channel_id: String,
        channel_config: ChannelConfig,
        voucher: BatchVoucher,
        close_authorization: CloseAuthorization,
    },
}

/// The receiver authorizer's consent to one cooperative close (a `refund` or a `seal`): its
/// Ed25519 signature of [`close_digest`], good strictly before `validBefore`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloseAuthorization {
    /// Unix seconds; the facilitator takes it while `now < validBefore <= now +
    /// maxTimeoutSeconds`.
    pub valid_before: i64,
    /// Base58; absent only on a delegated close, which this facilitator does not take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The domain of a close authorization's digest.
pub const CLOSE_DOMAIN: &str = "x402:batch-settlement:svm:close:v1";

/// What a close authorization signs: SHA-256 of `UTF8(domain) || 0x00 || u16(len(network)).le
/// || UTF8(network) || programId || feePayer || channelId || u64(maxClaimableAmount).le ||
/// i64(voucherExpiresAt).le || i64(validBefore).le` (specification section 4.2), so that it
/// authorizes no other operation, network, program, facilitator, channel, amount or expiry.
#[derive(Clone, Copy, Debug)]
pub struct CloseTerms<'a> {
    pub network: &'a str,
    pub fee_payer: &'a Pubkey,
    pub channel: &'a Pubkey,
    pub max_claimable: u64,
    pub valid_before: i64,
}

impl CloseTerms<'_> {
    /// The digest the receiver authorizer signs.
    pub fn digest(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(CLOSE_DOMAIN.as_bytes());
        h.update([0u8]);
        let network = self.network.as_bytes();
        h.update((network.len().min(usize::from(u16::MAX)) as u16).to_le_bytes());
        h.update(network);
        h.update(trust_gate_client::channels::PROGRAM_ID.as_ref());
        h.update(self.fee_payer.as_ref());
        h.update(self.channel.as_ref());
        h.update(self.max_claimable.to_le_bytes());
        // Vouchers of this scheme never expire: `expiresAt` is 0.
        h.update(0i64.to_le_bytes());
        h.update(self.valid_before.to_le_bytes());
        h.finalize().into()
    }

    /// The receiver authorizer's authorization of this close.
    pub fn sign(&self, receiver_authorizer: &Keypair) -> CloseAuthorization {
        CloseAuthorization {
            valid_before: self.valid_before,
            signature: Some(receiver_authorizer.sign_message(&self.digest()).to_string()),
        }
    }

    /// Whether `signature` (base58) is `key`'s signature of this close.
    pub fn signed_by(&self, signature: &str, key: &Pubkey) -> bool {
        signature
            .parse::<Signature>()
            .is_ok_and(|s| s.verify(key.as_ref(), &self.digest()))
    }
}

/// A server's proof of the voucher it last accepted, in a corrective 402's
/// `accepts[].extra.voucherState` (specification section 4.6): the payer's own signature of
/// the cumulative amount, which the payer checks before it resumes from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VoucherState {
    pub signed_max_claimable: String,
    pub expires_at: i64,
    pub signature: String,
}

impl BatchPayload {
    pub fn type_name(&self) -> &'static str {
        match self {
            BatchPayload::Deposit { .. } => "deposit",
            BatchPayload::Voucher { .. } => "voucher",
            BatchPayload::Refund { .. } => "refund",
            BatchPayload::Claim { .. } => "claim",
            BatchPayload::Settle { .. } => "settle",
            BatchPayload::Seal { .. } => "seal",
        }
    }

    /// A client's refund as its server forwards it: with the receiver authorizer's close
    /// authorization of closing the channel at the refund's voucher, good until
    /// `valid_before` (at most the offer's `maxTimeoutSeconds` ahead). Errors name the field:
    /// only a refund carrying its voucher is authorized.
    pub fn authorize_close(
        &mut self,
        network: &str,
        fee_payer: &Pubkey,
        receiver_authorizer: &Keypair,
        valid_before: i64,
    ) -> Result<(), trust_gate_client::error::ClientError> {
        use trust_gate_client::error::ClientError as E;
        let BatchPayload::Refund {
            voucher,
            close_authorization,
            ..
        } = self
        else {
            return Err(E::input("type", "only a refund is authorized to close"));
        };
        let v = voucher
            .as_ref()
            .ok_or_else(|| E::input("voucher", "a refund carries the session's latest voucher"))?;
        let channel: Pubkey = v
            .channel_id
            .parse()
            .map_err(|_| E::input("voucher.channelId", "not a base58 address"))?;
        let max_claimable = amount("voucher.maxClaimableAmount", &v.max_claimable_amount)
            .map_err(|(_, m)| E::input("voucher.maxClaimableAmount", m))?;
        *close_authorization = Some(
            CloseTerms {
                network,
                fee_payer,
                channel: &channel,
                max_claimable,
                valid_before,
            }
            .sign(receiver_authorizer),
        );
        Ok(())
    }

    /// Whether the payload is the server's own (`claim`, `settle`, `seal`): a resource server
    /// never forwards a client's, and the facilitator takes them only from an authenticated
    /// service.
    pub fn is_servers(&self) -> bool {
        matches!(
            self,
            BatchPayload::Claim { .. } | BatchPayload::Settle { .. } | BatchPayload::Seal { .. }
        )
    }
}

/// The payload types of the specification this facilitator does not serve (server mode's
/// `authorization`).
pub const UNSERVED_TYPES: [&str; 1] = ["authorization"];

/// A channel's state as the scheme's answers carry it (and a corrective 402's
/// `accepts[].extra.channelState`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelState {
    pub channel_id: String,
    /// The deposit.
    pub balance: String,
    /// What was applied on chain.
    pub total_claimed: String,
    /// When the payer's `request_close` started the grace period (0: it did not).
    pub withdraw_requested_at: i64,
    /// What the facilitator accepted (the latest voucher's cumulative amount).
    pub charged_cumulative_amount: String,
}

/// The session's state a corrective 402 carries (its `error` is
/// [`Reason::BatchCumulativeAmountMismatch`], an offer's `extra` holds `channelState` and
/// `voucherState`; specification section 4.6), read from its body or decoded
/// `PAYMENT-REQUIRED`; `None` for any other answer.
pub fn corrective_state(required: &serde_json::Value) -> Option<(ChannelState, VoucherState)> {
    if required["error"] != Reason::BatchCumulativeAmountMismatch {
        return None;
    }
    required["accepts"].as_array()?.iter().find_map(|offer| {
        let extra = &offer["extra"];
        Some((
            serde_json::from_value(extra["channelState"].clone()).ok()?,
            serde_json::from_value(extra["voucherState"].clone()).ok()?,
        ))
    })
}

fn u64_either<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    crate::upto::number_or_decimal(d)
}

fn opt_u64_either<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    u64_either(d).map(Some)
}

use crate::reason::Reason;

/// A payload field that must name a key: the reason (`unsupported_payload_type`, as upto's)
/// and the message naming it.
pub use crate::upto::key;

/// A field that must hold a decimal amount.
pub fn amount(field: &str, value: &str) -> Result<u64, (Reason, String)> {
    crate::upto::decimal(value).ok_or_else(|| {
        (
            Reason::UnsupportedPayloadType,
            format!("{field} is not a decimal amount of atomic units (u64): {value:?}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// A refund and a seal shaped as the specification's section 4.5 shows them read and write
    /// back unchanged.
    #[test]
    fn a_refund_and_a_seal_as_the_specification_shows_them_round_trip() {
        let close = json!({"validBefore": 1785341100, "signature": "sig"});
        let refund = json!({
            "type": "refund",
            "channelConfig": config(),
            "voucher": voucher(),
            "closeAuthorization": close,
        });
        let p: BatchPayload = serde_json::from_value(refund.clone()).unwrap();
        assert!(matches!(
            &p,
            BatchPayload::Refund { close_authorization: Some(c), voucher: Some(_), transaction: None, .. }
                if c.valid_before == 1785341100
        ));
        assert_eq!(serde_json::to_value(&p).unwrap(), refund);
        let seal = json!({
            "type": "seal",
            "channelId": Pubkey::new_unique().to_string(),
            "channelConfig": config(),
            "voucher": voucher(),
            "closeAuthorization": close,
        });
        let p: BatchPayload = serde_json::from_value(seal.clone()).unwrap();
        assert!(p.is_servers() && p.type_name() == "seal");
        assert_eq!(serde_json::to_value(&p).unwrap(), seal);
        // A seal without its authorization is not a seal.
        let mut bare = seal;
        bare.as_object_mut().unwrap().remove("closeAuthorization");
        assert!(serde_json::from_value::<BatchPayload>(bare).is_err());
    }

    #[test]
    fn a_close_authorization_binds_its_network_facilitator_channel_amount_and_expiry() {
        let key = Keypair::new();
        let (fee_payer, channel) = (Pubkey::new_unique(), Pubkey::new_unique());
        let terms = CloseTerms {
            network: "solana:localnet",
            fee_payer: &fee_payer,
            channel: &channel,
            max_claimable: 5_000,
            valid_before: 1_800_000_000,
        };
        let auth = terms.sign(&key);
        let sig = auth.signature.clone().unwrap();
        assert!(terms.signed_by(&sig, &key.pubkey()));
        assert!(!terms.signed_by(&sig, &Pubkey::new_unique()));
        assert!(!terms.signed_by("not base58!", &key.pubkey()));
        let other = Pubkey::new_unique();
        let changed = [
            CloseTerms {
                network: "solana:devnet",
                ..terms
            },
            CloseTerms {
                fee_payer: &other,
                ..terms
            },
            CloseTerms {
                channel: &other,
                ..terms
            },
            CloseTerms {
                max_claimable: 5_001,
                ..terms
            },
            CloseTerms {
                valid_before: 1_800_000_001,
                ..terms
            },
        ];
        for t in changed {
            assert!(!t.signed_by(&sig, &key.pubkey()));
        }
        // The digest is the specification's byte layout: the domain, a zero, the network's
        // length and bytes, then the program, facilitator, channel, amount, expiry, validity.
        let mut bytes = CLOSE_DOMAIN.as_bytes().to_vec();
        bytes.push(0);
        bytes.extend(15u16.to_le_bytes());
        bytes.extend(b"solana:localnet");
        bytes.extend(trust_gate_client::channels::PROGRAM_ID.to_bytes());
        bytes.extend(fee_payer.to_bytes());
        bytes.extend(channel.to_bytes());
        bytes.extend(5_000u64.to_le_bytes());
        bytes.extend(0i64.to_le_bytes());
        bytes.extend(1_800_000_000i64.to_le_bytes());
        assert_eq!(terms.digest(), <[u8; 32]>::from(Sha256::digest(&bytes)));
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
            assert_eq!(r, Reason::UnsupportedPayloadType);
            assert!(m.contains("maxClaimableAmount"), "{m}");
        }
        assert_eq!(amount("deposit.amount", "42"), Ok(42));
        assert_eq!(
            binding_memo("K"),
            "x402:batch-settlement:svm:rcvauth:v1:K".to_string()
        );
    }
}
