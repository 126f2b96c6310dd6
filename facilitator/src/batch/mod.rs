//! POST /verify and /settle for x402's `batch-settlement` scheme on Solana, client mode (the
//! payer's key signs every voucher), plain for routes a resource server configures as
//! ungated and gated under `trust-gate-batch-settlement` (see `trust_gate_client::batch`).
//!
//! - **deposit** (a session's first request): the client's open (the gate's
//!   `gate_channel_open` before it, for the gated scheme) is checked
//!   ([`crate::channel_open`]) with the request's voucher, co-signed and sent; the session
//!   starts ([`crate::sessions`]).
//! - **voucher** (every further request): checked off chain, no RPC call
//!   (`trust_gate_client::vouchers::check`: the signature, the channel, exactly the price
//!   more than the last one accepted, at most the deposit, and for a gated channel the
//!   policy's per-payment cap and the payer's kill switch as the poller last read it); the
//!   session keeps it as its latest. A retry of the latest is answered the same.
//! - **refund** (the client ends the session): the channel is sealed at the latest voucher
//!   and distributed, closed through the gate when gated ([`close`]).
//! - **claim** (the server): the listed channels' latest vouchers are applied on chain now;
//!   **settle** (the server): what they applied is paid out now (the channel stays open).
//!
//! In the background ([`redeemer`]) the latest vouchers are applied in batches (by amount or
//! age), and the channels of a payer whose kill switch is paused are closed at the latest
//! voucher accepted before the pause.
//!
//! Server mode (`voucherSigner: "server"`, `authorization` and `seal` payloads) answers
//! `invalid_batch_settlement_svm_server_mode_unsupported`.

pub mod close;
pub mod redeemer;

use crate::adapter::{self, Expectations};
use crate::channel_open::{self, Expected, Gated};
use crate::holds;
use crate::inspect;
use crate::reject::Rejection;
use crate::service::Facilitator;
use crate::sessions::{Change, GatedTerms, Session};
use crate::settle::rpc_rejection;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::str::FromStr;
use trust_gate_client::batch::{
    self, reason, BatchExtra, BatchPayload, BatchVoucher, ChannelConfig,
};
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::{now_unix, PaymentQuery};
use trust_gate_client::upto;
use trust_gate_client::vouchers::{self, Refusal, Voucher};
use trust_gate_client::x402::{PaymentRequirements, ResourceInfo};

/// A `batch-settlement` request to /verify or /settle.
#[derive(Clone, Debug)]
pub struct BatchRequest {
    pub requirements: Requirements,
    pub accepted: Accepted,
    pub resource: Option<ResourceInfo>,
    pub payload: BatchPayload,
    /// The gated variant.
    pub gated: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    payment_payload: Envelope,
    payment_requirements: PaymentRequirements,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    resource: Option<ResourceInfo>,
    accepted: PaymentRequirements,
    payload: Value,
}

fn bad(reason: &str, message: impl Into<String>) -> Rejection {
    Rejection::bad(reason, message)
}

fn named<T>(r: Result<T, (&'static str, String)>) -> Result<T, Rejection> {
    r.map_err(|(reason, message)| bad(reason, message))
}

/// The requirements as this scheme reads them (`extra` typed: anything else in it, such as
/// the `gate` extension, is skipped).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Requirements {
    pub scheme: String,
    pub network: String,
    pub amount: String,
    pub asset: String,
    pub pay_to: String,
    pub max_timeout_seconds: u64,
    pub extra: BatchExtra,
}

/// The offer the client accepted: what is compared on every request, and the whole of it
/// as it came, read only where its `gate` extension is authenticated (a gated deposit).
#[derive(Clone, Debug)]
pub struct Accepted {
    pub scheme: String,
    pub network: String,
    pub asset: String,
    pub pay_to: String,
    raw: Box<RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AcceptedFields {
    scheme: String,
    network: String,
    asset: String,
    pay_to: String,
}

impl Accepted {
    fn of(raw: Box<RawValue>) -> Result<Accepted, Rejection> {
        let a: AcceptedFields = serde_json::from_str(raw.get()).map_err(|e| {
            bad(
                reason::UNSUPPORTED_PAYLOAD_TYPE,
                format!("paymentPayload.accepted: {e}"),
            )
        })?;
        Ok(Accepted {
            scheme: a.scheme,
            network: a.network,
            asset: a.asset,
            pay_to: a.pay_to,
            raw,
        })
    }

    /// The whole offer.
    pub fn requirements(&self) -> Result<PaymentRequirements, Rejection> {
        serde_json::from_str(self.raw.get()).map_err(|e| {
            bad(
                reason::UNSUPPORTED_PAYLOAD_TYPE,
                format!("paymentPayload.accepted: {e}"),
            )
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TypedBody<'a> {
    #[serde(borrow)]
    payment_payload: TypedEnvelope<'a>,
    payment_requirements: Requirements,
}

#[derive(Deserialize)]
struct TypedEnvelope<'a> {
    #[serde(default)]
    resource: Option<ResourceInfo>,
    accepted: Box<RawValue>,
    #[serde(borrow)]
    payload: &'a RawValue,
}

/// A payload's `type`, and a voucher's fields read straight (the tagged enum would buffer the
/// whole payload first: the voucher is the path every request takes).
#[derive(Deserialize)]
struct PayloadType<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VoucherFields {
    channel_config: ChannelConfig,
    voucher: BatchVoucher,
}

fn payload_of(raw: &RawValue) -> Result<BatchPayload, serde_json::Error> {
    let t: PayloadType = serde_json::from_str(raw.get())?;
    if t.kind == "voucher" {
        let v: VoucherFields = serde_json::from_str(raw.get())?;
        return Ok(BatchPayload::Voucher {
            channel_config: v.channel_config,
            voucher: v.voucher,
        });
    }
    serde_json::from_str(raw.get())
}

/// Just enough of a body to tell its scheme (the rest is skipped, not kept).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Probe {
    #[serde(default)]
    payment_requirements: Option<SchemeOf>,
    #[serde(default)]
    payment_payload: Option<ProbeEnvelope>,
}

#[derive(Deserialize)]
struct ProbeEnvelope {
    #[serde(default)]
    accepted: Option<SchemeOf>,
}

#[derive(Deserialize)]
struct SchemeOf {
    #[serde(default)]
    scheme: Option<String>,
}

/// The `batch-settlement` request in `body`, `None` when the body is for another scheme. One
/// pass for a well-formed request (every voucher's); anything else is read again for the named
/// refusal.
pub fn request(body: &[u8]) -> Option<Result<BatchRequest, Rejection>> {
    let typed = serde_json::from_slice::<TypedBody>(body)
        .ok()
        .and_then(|b| {
            let payload = payload_of(b.payment_payload.payload).ok()?;
            let accepted = Accepted::of(b.payment_payload.accepted).ok()?;
            Some(BatchRequest {
                gated: b.payment_requirements.scheme == batch::SCHEME_GATED_BATCH,
                requirements: b.payment_requirements,
                accepted,
                resource: b.payment_payload.resource,
                payload,
            })
        });
    if let Some(request) = typed {
        return Some(request.check_schemes().map(|_| request));
    }
    is_batch_bytes(body).then(|| BatchRequest::parse_bytes(body))
}

/// Whether a request body (bytes) is for `batch-settlement` or its gated variant, without
/// building it.
pub fn is_batch_bytes(body: &[u8]) -> bool {
    let Ok(p) = serde_json::from_slice::<Probe>(body) else {
        return false;
    };
    let batch = |s: Option<SchemeOf>| {
        matches!(
            s.and_then(|s| s.scheme).as_deref(),
            Some(batch::SCHEME_BATCH | batch::SCHEME_GATED_BATCH)
        )
    };
    batch(p.payment_requirements) || batch(p.payment_payload.and_then(|e| e.accepted))
}

impl BatchRequest {
    /// Reads a body [`request`] could not read in one pass, for the named refusal.
    pub fn parse_bytes(body: &[u8]) -> Result<BatchRequest, Rejection> {
        let v = serde_json::from_slice::<Value>(body).map_err(|e| {
            bad(
                reason::UNSUPPORTED_PAYLOAD_TYPE,
                format!("the body is not JSON: {e}"),
            )
        })?;
        BatchRequest::parse(v)
    }

    fn check_schemes(&self) -> Result<(), Rejection> {
        let schemes = [
            self.requirements.scheme.as_str(),
            self.accepted.scheme.as_str(),
        ];
        if schemes[0] != schemes[1]
            || !matches!(schemes[0], batch::SCHEME_BATCH | batch::SCHEME_GATED_BATCH)
        {
            return Err(bad(
                reason::UNSUPPORTED_SCHEME,
                format!(
                    "the requirements' scheme {:?} and the accepted offer's {:?} are not one batch-settlement scheme",
                    schemes[0], schemes[1]
                ),
            ));
        }
        Ok(())
    }

    /// Reads the body; a payload type this facilitator does not serve is named.
    pub fn parse(body: Value) -> Result<BatchRequest, Rejection> {
        let b: Body = serde_json::from_value(body).map_err(|e| {
            bad(
                reason::UNSUPPORTED_PAYLOAD_TYPE,
                format!("not an x402 batch-settlement request: {e}"),
            )
        })?;
        let kind = b
            .payment_payload
            .payload
            .get("type")
            .and_then(Value::as_str);
        if let Some(t) = kind.filter(|t| batch::UNSERVED_TYPES.contains(t)) {
            return Err(bad(
                reason::SERVER_MODE_UNSUPPORTED,
                format!("payload type {t:?} is server mode's; this facilitator serves client mode only (deposit, voucher, refund, claim, settle)"),
            ));
        }
        let payload: BatchPayload =
            serde_json::from_value(b.payment_payload.payload).map_err(|e| {
                bad(
                    reason::UNSUPPORTED_PAYLOAD_TYPE,
                    format!("paymentPayload.payload is not a batch-settlement payload: {e}"),
                )
            })?;
        let q = b.payment_requirements;
        let extra: BatchExtra = serde_json::from_value(Value::Object(q.extra.clone()))
            .map_err(|e| bad(reason::INVALID_REQUIREMENTS, format!("extra: {e}")))?;
        let raw = serde_json::value::to_raw_value(&b.payment_payload.accepted)
            .map_err(|e| bad(reason::UNSUPPORTED_PAYLOAD_TYPE, e.to_string()))?;
        let request = BatchRequest {
            gated: q.scheme == batch::SCHEME_GATED_BATCH,
            requirements: Requirements {
                scheme: q.scheme,
                network: q.network,
                amount: q.amount,
                asset: q.asset,
                pay_to: q.pay_to,
                max_timeout_seconds: q.max_timeout_seconds,
                extra,
            },
            accepted: Accepted::of(raw)?,
            resource: b.payment_payload.resource,
            payload,
        };
        request.check_schemes()?;
        Ok(request)
    }
}

/// The requirements, checked: this facilitator, the flow, the grace period; the price.
#[derive(Clone, Debug)]
pub struct Offer {
    pub extra: BatchExtra,
    pub mint: Pubkey,
    pub pay_to: Pubkey,
    pub receiver_authorizer: Pubkey,
    /// The request's price (`amount`).
    pub price: u64,
    /// The gated scheme: only a channel the gate opened pays it.
    pub gated: bool,
}

/// A channel config, checked against the offer and the facilitator: its address.
#[derive(Clone, Copy, Debug)]
pub struct ConfigKeys {
    pub channel: Pubkey,
    pub payer: Pubkey,
    pub voucher_key: Pubkey,
    pub salt: u64,
    pub open_slot: u64,
}

fn offer(r: &BatchRequest, fac: &Pubkey, fac_id: &str, network: &str) -> Result<Offer, Rejection> {
    let (q, a) = (&r.requirements, &r.accepted);
    if q.network != network || a.network != network {
        return Err(bad(
            reason::NETWORK_MISMATCH,
            format!(
                "the network is {}; this facilitator settles on {network}",
                q.network
            ),
        ));
    }
    if (&q.asset, &q.pay_to) != (&a.asset, &a.pay_to) {
        return Err(bad(
            reason::INVALID_REQUIREMENTS,
            "the requirements' asset or payTo is not the accepted offer's",
        ));
    }
    let invalid = |m: String| bad(reason::INVALID_REQUIREMENTS, m);
    let extra = q.extra.clone();
    if extra.fee_payer != fac_id {
        return Err(bad(
            reason::FEE_PAYER_MISMATCH,
            format!(
                "extra.feePayer is {}; this facilitator is {fac}",
                extra.fee_payer
            ),
        ));
    }
    if extra
        .payment_flow
        .as_deref()
        .is_some_and(|f| f != batch::PAYMENT_FLOW_AUTHORIZATION)
    {
        return Err(bad(
            reason::PAYMENT_FLOW,
            "extra.paymentFlow, when present, is \"authorization\"",
        ));
    }
    if extra
        .voucher_signer
        .as_deref()
        .is_some_and(|v| v != "client")
        || extra.operator.is_some()
    {
        return Err(bad(
            reason::SERVER_MODE_UNSUPPORTED,
            "extra.voucherSigner \"server\" and extra.operator are server mode's; this facilitator serves client mode only",
        ));
    }
    if !(batch::MIN_WITHDRAW_DELAY..=batch::MAX_WITHDRAW_DELAY).contains(&extra.withdraw_delay)
        || u64::from(extra.withdraw_delay) < q.max_timeout_seconds
    {
        return Err(bad(
            reason::WITHDRAW_DELAY_OUT_OF_RANGE,
            format!(
                "extra.withdrawDelay is {}; it is {}..={} seconds and at least maxTimeoutSeconds",
                extra.withdraw_delay,
                batch::MIN_WITHDRAW_DELAY,
                batch::MAX_WITHDRAW_DELAY
            ),
        ));
    }
    let key = |field: &str, v: &str| {
        Pubkey::from_str(v).map_err(|_| invalid(format!("{field} is not a base58 address")))
    };
    let price = named(batch::amount("amount", &q.amount))?;
    Ok(Offer {
        mint: key("asset", &q.asset)?,
        pay_to: key("payTo", &q.pay_to)?,
        receiver_authorizer: key("extra.receiverAuthorizer", &extra.receiver_authorizer)?,
        extra,
        price,
        gated: r.gated,
    })
}

/// The channel config against the offer and the facilitator; its address.
fn config_keys(c: &ChannelConfig, o: &Offer, fac: &Pubkey) -> Result<ConfigKeys, Rejection> {
    let payer = named(batch::key("channelConfig.payer", &c.payer))?;
    let voucher_key = named(batch::key(
        "channelConfig.payerAuthorizer",
        &c.payer_authorizer,
    ))?;
    if payer == *fac || voucher_key == *fac {
        return Err(bad(
            reason::FEE_PAYER_MISMATCH,
            "the channel's payer and its voucher key are not the facilitator",
        ));
    }
    if c.receiver != o.pay_to.to_string() || c.token != o.mint.to_string() {
        return Err(bad(
            reason::CHANNEL_ID_MISMATCH,
            "channelConfig.receiver and .token are payTo and asset",
        ));
    }
    if c.receiver_authorizer != o.extra.receiver_authorizer {
        return Err(bad(
            reason::RECEIVER_AUTHORIZER_MISMATCH,
            "channelConfig.receiverAuthorizer is not extra.receiverAuthorizer",
        ));
    }
    if c.withdraw_delay != o.extra.withdraw_delay {
        return Err(bad(
            reason::WITHDRAW_DELAY_MISMATCH,
            "channelConfig.withdrawDelay is not extra.withdrawDelay",
        ));
    }
    if c.voucher_signer.as_deref().is_some_and(|v| v != "client") {
        return Err(bad(
            reason::SERVER_MODE_UNSUPPORTED,
            "channelConfig.voucherSigner is \"client\" in client mode",
        ));
    }
    let salt = c.salt.parse().map_err(|_| {
        bad(
            reason::UNSUPPORTED_PAYLOAD_TYPE,
            "channelConfig.salt is not a decimal u64",
        )
    })?;
    let (channel, _) =
        channels::channel_address(&payer, fac, &o.mint, &voucher_key, salt, c.open_slot);
    Ok(ConfigKeys {
        channel,
        payer,
        voucher_key,
        salt,
        open_slot: c.open_slot,
    })
}

/// The channel a payload names (a voucher's `channelId`), as a key.
fn channel_id(id: &str) -> Result<Pubkey, Rejection> {
    Pubkey::from_str(id).map_err(|_| {
        bad(
            reason::CHANNEL_ID_MISMATCH,
            format!("channelId {id:?} is not a base58 address"),
        )
    })
}

/// Whether the channel config is the session's channel (compared field by field with the
/// one its deposit checked, so that a voucher costs no address derivation) under the offer.
fn same_channel(c: &ChannelConfig, s: &Session, o: &Offer) -> Result<(), Rejection> {
    let d = &s.config;
    let same = (&c.payer, &c.payer_authorizer, &c.salt, c.open_slot)
        == (&d.payer, &d.payer_authorizer, &d.salt, d.open_slot)
        && (&c.receiver, &c.token, c.withdraw_delay) == (&d.receiver, &d.token, d.withdraw_delay)
        && (s.pay_to, s.mint) == (o.pay_to, o.mint);
    if !same {
        return Err(bad(
            reason::CHANNEL_ID_MISMATCH,
            format!(
                "channelConfig and the requirements are not those of channel {}",
                s.channel
            ),
        ));
    }
    if c.receiver_authorizer != o.extra.receiver_authorizer {
        return Err(bad(
            reason::RECEIVER_AUTHORIZER_MISMATCH,
            "channelConfig.receiverAuthorizer is not extra.receiverAuthorizer",
        ));
    }
    // A route that asks for the gate is paid only by a channel the gate opened (and a plain
    // route's session stays plain).
    if o.gated != s.gate.is_some() {
        return Err(bad(
            reason::CHANNEL_ID_MISMATCH,
            format!(
                "channel {} was opened {} the gate; this offer is {}",
                s.channel,
                if s.gate.is_some() {
                    "through"
                } else {
                    "without"
                },
                if o.gated {
                    batch::SCHEME_GATED_BATCH
                } else {
                    batch::SCHEME_BATCH
                }
            ),
        ));
    }
    Ok(())
}

/// A voucher on the wire, of `channel`.
fn voucher(v: &BatchVoucher, channel: &Pubkey) -> Result<Voucher, Rejection> {
    if channel_id(&v.channel_id)? != *channel {
        return Err(bad(
            reason::CHANNEL_ID_MISMATCH,
            format!("voucher.channelId is not the channel of channelConfig ({channel})"),
        ));
    }
    if v.expires_at != 0 {
        return Err(bad(
            reason::VOUCHER_EXPIRY,
            "voucher.expiresAt is 0 in batch-settlement",
        ));
    }
    let cumulative = named(batch::amount(
        "voucher.maxClaimableAmount",
        &v.max_claimable_amount,
    ))?;
    let signature = Signature::from_str(&v.signature).map_err(|_| {
        bad(
            reason::VOUCHER_SIGNATURE,
            "voucher.signature is not a base58 signature",
        )
    })?;
    Ok(Voucher {
        channel: *channel,
        cumulative,
        expires_at: 0,
        signature,
    })
}

/// A voucher refusal as the scheme names it.
fn refusal(r: Refusal) -> Rejection {
    let reason = match r {
        Refusal::Paused => reason::PAYER_PAUSED,
        Refusal::WrongChannel => reason::CHANNEL_ID_MISMATCH,
        Refusal::OverPerPaymentCap { .. } => reason::PRICE_OVER_PER_PAYMENT_CAP,
        Refusal::WrongAmount { .. } => reason::CUMULATIVE_AMOUNT_MISMATCH,
        Refusal::OverDeposit { .. } => reason::CUMULATIVE_EXCEEDS_DEPOSIT,
        Refusal::Expired { .. } => reason::VOUCHER_EXPIRY,
        Refusal::BadSignature => reason::VOUCHER_SIGNATURE,
    };
    bad(reason, r.to_string())
}

/// The open verifier's reasons (upto's) as this scheme names them.
fn open_refusal(r: Rejection) -> Rejection {
    let reason = match r.reason.as_str() {
        upto::reason::FACILITATOR_MISMATCH => reason::FEE_PAYER_MISMATCH,
        upto::reason::CHANNEL_ID | upto::reason::NONCE | upto::reason::PAYER_MISMATCH => {
            reason::CHANNEL_ID_MISMATCH
        }
        _ => reason::SETUP_TRANSACTION,
    };
    Rejection {
        reason: reason.into(),
        ..r
    }
}

/// What a settled `batch-settlement` request answers (the specification's settlement
/// response; `transaction` and `amount` empty for a voucher).
#[derive(Clone, Debug)]
pub struct BatchSettled {
    pub transaction: String,
    pub amount: String,
    pub payer: Pubkey,
    pub extra: Value,
    /// Sent, outcome not known in time.
    pub pending: bool,
}

/// The scheme's channel state of a session.
pub fn channel_state(s: &Session) -> Value {
    json!({
        "channelId": s.channel_id,
        "balance": s.deposit.to_string(),
        "totalClaimed": s.redeemed.to_string(),
        "withdrawRequestedAt": 0,
        "chargedCumulativeAmount": s.accepted.to_string(),
    })
}

fn voucher_extra(s: &Session) -> Value {
    json!({
        "commitmentId": format!("{}:{}", s.channel_id, s.accepted),
        "chargedAmount": s.latest_price.to_string(),
        "channelState": channel_state(s),
    })
}

impl Facilitator {
    async fn offer(&self, r: &BatchRequest) -> Result<Offer, Rejection> {
        let network = self
            .caip2()
            .await
            .map_err(|e| bad("network_unavailable", e.message))?;
        offer(r, &self.facilitator(), &self.facilitator_id, &network)
    }

    /// `/verify`: the deposit's checks without sending, or the voucher's without keeping it.
    pub async fn verify_batch(&self, r: &BatchRequest) -> Result<(Pubkey, Value), Rejection> {
        let o = self.offer(r).await?;
        match &r.payload {
            BatchPayload::Deposit {
                channel_config,
                voucher: v,
                deposit,
            } => {
                let (_, session, v) = self
                    .checked_deposit(r, &o, channel_config, v, deposit)
                    .await?;
                let s = Session {
                    accepted: v.cumulative,
                    ..session
                };
                Ok((s.payer, json!({"channelState": channel_state(&s)})))
            }
            BatchPayload::Voucher {
                channel_config,
                voucher: v,
            } => {
                let channel = channel_id(&v.channel_id)?;
                let (sig, v) = (&v.signature, voucher(v, &channel)?);
                let s = self.session(&channel).await?;
                same_channel(channel_config, &s, &o)?;
                let next = self.accept(&s, &o, &v, sig)?;
                Ok((s.payer, json!({"channelState": channel_state(&next)})))
            }
            other => Err(bad(
                reason::PAYLOAD_TYPE,
                format!(
                    "/verify takes a deposit or a voucher, not a {}",
                    other.type_name()
                ),
            )),
        }
    }

    /// `/settle` (see the module docs).
    pub async fn settle_batch(&self, r: &BatchRequest) -> Result<BatchSettled, Rejection> {
        let Some(keypair) = self.key.keypair() else {
            return Err(Rejection::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "facilitator_not_signing",
                "this facilitator is configured with a public key only and cannot settle",
            ));
        };
        let o = self.offer(r).await?;
        let fac = self.facilitator();
        match &r.payload {
            BatchPayload::Deposit {
                channel_config,
                voucher: v,
                deposit,
            } => {
                let (checked, session, v) = self
                    .checked_deposit(r, &o, channel_config, v, deposit)
                    .await?;
                self.limit_deposits(&session.payer)?;
                let used = checked.approval.zip(session.gate.map(|g| g.payer_asset));
                let opened = self
                    .open_session(checked.tx, session, v, o.price, keypair)
                    .await?;
                if let Some((a, payer)) = used.filter(|_| !opened.pending) {
                    self.forget_approval(&a.address, &payer).await;
                }
                Ok(opened)
            }
            BatchPayload::Voucher {
                channel_config,
                voucher: v,
            } => {
                let channel = channel_id(&v.channel_id)?;
                let (sig, v) = (&v.signature, voucher(v, &channel)?);
                let s = self
                    .sessions
                    .update(&channel, |s| {
                        same_channel(channel_config, s, &o)?;
                        self.accept(s, &o, &v, sig)
                    })
                    .await
                    .map_err(|e| self.change_rejection(&channel, e))?;
                Ok(BatchSettled {
                    transaction: String::new(),
                    amount: String::new(),
                    payer: s.payer,
                    extra: voucher_extra(&s),
                    pending: false,
                })
            }
            BatchPayload::Refund {
                channel_config,
                voucher: v,
            } => {
                let k = config_keys(channel_config, &o, &fac)?;
                let s = self.session(&k.channel).await?;
                if let Some(v) = v {
                    let v = voucher(v, &k.channel)?;
                    if v.cumulative != s.accepted {
                        return Err(bad(
                            reason::CUMULATIVE_AMOUNT_MISMATCH,
                            format!(
                                "a refund's voucher is the latest accepted ({}), not {}",
                                s.accepted, v.cumulative
                            ),
                        ));
                    }
                }
                let closed = self.close_session(&s, keypair).await?;
                Ok(BatchSettled {
                    transaction: closed.signature.to_string(),
                    amount: s.deposit.saturating_sub(closed.settled).to_string(),
                    payer: s.payer,
                    extra: json!({"channelState": channel_state(&closed.session)}),
                    pending: closed.pending,
                })
            }
            BatchPayload::Claim { claims } => {
                let mut list = Vec::new();
                for c in claims {
                    let channel = channel_id(&c.channel_id)?;
                    let v = voucher(&c.voucher, &channel)?;
                    let s = self.session(&channel).await?;
                    same_channel(&c.channel_config, &s, &o)?;
                    if v.cumulative > s.accepted || !self.sessions.signed(&v, &s.voucher_key) {
                        return Err(bad(
                            reason::VOUCHER_SIGNATURE,
                            format!(
                                "a claim's voucher of {} is one this facilitator accepted (at most {}, signed by the channel's key)",
                                channel, s.accepted
                            ),
                        ));
                    }
                    list.push(s);
                }
                let (sig, pending, done) = self.redeem(&list, keypair).await?;
                let accepts: Vec<Value> = done
                    .iter()
                    .map(|s| json!({"channelId": s.channel.to_string(), "totalClaimed": s.redeemed.to_string()}))
                    .collect();
                Ok(BatchSettled {
                    transaction: sig.map(|s| s.to_string()).unwrap_or_default(),
                    amount: String::new(),
                    payer: list.first().map(|s| s.payer).unwrap_or_default(),
                    extra: json!({"accepts": accepts}),
                    pending,
                })
            }
            BatchPayload::Settle { channels: list } => {
                let mut sessions = Vec::new();
                for c in list {
                    let channel = channel_id(&c.channel_id)?;
                    let s = self.session(&channel).await?;
                    same_channel(&c.channel_config, &s, &o)?;
                    sessions.push(s);
                }
                let (sig, pending, paid) = self.pay_out(&sessions, keypair).await?;
                Ok(BatchSettled {
                    transaction: sig.to_string(),
                    amount: paid.to_string(),
                    payer: sessions.first().map(|s| s.payer).unwrap_or_default(),
                    extra: json!({"channels": sessions.iter().map(channel_state).collect::<Vec<_>>()}),
                    pending,
                })
            }
        }
    }

    /// The session of `channel`, open.
    async fn session(&self, channel: &Pubkey) -> Result<Session, Rejection> {
        let s = self
            .sessions
            .get(channel)
            .await
            .map_err(|e| self.change_rejection::<Rejection>(channel, Change::Unavailable(e)))?
            .ok_or_else(|| {
                bad(
                    reason::UNKNOWN_CHANNEL,
                    format!("this facilitator holds no session of channel {channel}: its first request is a deposit"),
                )
            })?;
        if s.closed_by.is_some() {
            return Err(bad(
                reason::CLOSE_STATE,
                format!("channel {channel} is closed"),
            ));
        }
        Ok(s)
    }

    fn change_rejection<E: Into<Rejection>>(&self, channel: &Pubkey, e: Change<E>) -> Rejection {
        match e {
            Change::Refused(r) => r.into(),
            Change::Missing => bad(
                reason::UNKNOWN_CHANNEL,
                format!("this facilitator holds no session of channel {channel}"),
            ),
            Change::Unavailable(e) => Rejection::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "lock_store_unavailable",
                e.to_string(),
            ),
        }
    }

    /// The session after `v` pays the offer's price (pure: no RPC). A retry of the latest
    /// voucher gives the session unchanged.
    fn accept(&self, s: &Session, o: &Offer, v: &Voucher, sig: &str) -> Result<Session, Rejection> {
        if s.closed_by.is_some() {
            return Err(bad(
                reason::CLOSE_STATE,
                format!("channel {} is closed", s.channel),
            ));
        }
        if s.closing_at != 0 {
            return Err(bad(
                reason::CHANNEL_CLOSING,
                format!("channel {} is being closed", s.channel),
            ));
        }
        if let Some(g) = s.gate.filter(|g| self.sessions.is_retired(g)) {
            return Err(bad(
                reason::POLICY_RETIRED,
                format!(
                    "payer agent {}'s policy {} is retired: no payment may use it",
                    g.payer_asset, g.policy_id
                ),
            ));
        }
        let paused = s
            .gate
            .is_some_and(|g| self.sessions.is_paused(&g.payer_asset));
        // The wire's base58, compared as it came (`sig` is `v`'s signature).
        let latest = s.latest_signature.as_deref() == Some(sig);
        if latest && v.cumulative == s.accepted && o.price == s.latest_price && !paused {
            return Ok(s.clone());
        }
        let terms = vouchers::Terms {
            channel: s.channel,
            voucher_key: s.voucher_key,
            cap: s.deposit,
            per_payment_cap: s.gate.map_or(0, |g| g.per_payment_cap),
        };
        let now = now_unix();
        let accepted = vouchers::check_with(&terms, s.accepted, v, o.price, now, paused, |v, k| {
            self.sessions.signed(v, k)
        })
        .map_err(refusal)?;
        Ok(Session {
            accepted,
            latest_signature: Some(sig.to_string()),
            latest_price: o.price,
            unredeemed_since: if s.unredeemed_since == 0 {
                now
            } else {
                s.unredeemed_since
            },
            active_at: now,
            ..s.clone()
        })
    }

    /// Every check of a deposit: the offer, the channel config, the gate's terms (gated),
    /// the open, the first voucher; the channel must not exist yet.
    async fn checked_deposit(
        &self,
        r: &BatchRequest,
        o: &Offer,
        c: &ChannelConfig,
        v: &BatchVoucher,
        deposit: &batch::DepositTx,
    ) -> Result<(channel_open::Checked, Session, Voucher), Rejection> {
        let fac = self.facilitator();
        let k = config_keys(c, o, &fac)?;
        let (sig, v) = (&v.signature, voucher(v, &k.channel)?);
        let amount = named(batch::amount("deposit.amount", &deposit.amount))?;
        if amount == 0 {
            return Err(bad(reason::SETUP_TRANSACTION, "deposit.amount is above 0"));
        }
        let (token_program, _) = self
            .mint(&o.mint)
            .await
            .map_err(|e| bad(reason::INVALID_REQUIREMENTS, e.message))?;
        if o.extra.token_program != token_program.id().to_string() {
            return Err(bad(
                reason::TOKEN_PROGRAM,
                format!(
                    "extra.tokenProgram is not the mint's token program ({})",
                    token_program.id()
                ),
            ));
        }
        let gate = if r.gated {
            let g = adapter::read_channel_gate(
                &r.accepted.requirements()?,
                r.resource.as_ref().map(|res| res.url.as_str()),
                Expectations {
                    facilitator: &fac,
                    network: &r.requirements.network,
                    trusted_services: &self.trusted_services,
                    now: now_unix(),
                    skew: i64::try_from(self.clock_skew.as_secs()).unwrap_or(i64::MAX),
                },
            )?;
            let policy = chain::policy(&self.rpc, &self.builder.ids, &g.payer_asset, g.policy_id)
                .await
                .map_err(rpc_rejection)?
                .ok_or_else(|| {
                    bad(
                        "policy_not_found",
                        format!(
                            "payer agent {} has no policy {}",
                            g.payer_asset, g.policy_id
                        ),
                    )
                })?;
            Some(GatedTerms {
                payer_asset: g.payer_asset,
                payee_asset: g.payee_asset,
                policy_id: g.policy_id,
                per_payment_cap: policy.base().params.per_tx_cap,
            })
        } else {
            None
        };
        let tx = inspect::decode(&deposit.transaction)
            .map_err(|e| bad(reason::SETUP_TRANSACTION, e.message))?;
        let slot = self
            .within(async { self.rpc.get_slot().await.map_err(rpc_rejection) })
            .await?;
        let slot = o.extra.recent_slot.map_or(slot, |s| s.max(slot));
        let tables = self.tables().await;
        let binding = batch::binding_memo(&o.extra.receiver_authorizer);
        let checked = channel_open::verify(
            tx,
            Expected {
                builder: &self.builder,
                facilitator: fac,
                mint: o.mint,
                token_program,
                pay_to: o.pay_to,
                receiver_authorizer: k.voucher_key,
                withdraw_delay: o.extra.withdraw_delay,
                ceiling: amount,
                from: k.payer,
                salt: k.salt,
                open_slot: k.open_slot,
                channel: k.channel,
                slot,
                memo: o.extra.memo.as_deref(),
                binding_memo: Some(&binding),
                compute: &self.compute,
                gated: gate.map(|g| Gated {
                    payer_asset: g.payer_asset,
                    payee_asset: g.payee_asset,
                    policy_id: g.policy_id,
                    tables: &tables,
                }),
            },
        )
        .map_err(open_refusal)?;
        if let Some(g) = &gate {
            let deposit = PaymentQuery {
                payer_asset: g.payer_asset,
                payee_asset: g.payee_asset,
                amount,
                mint: o.mint,
                policy_id: g.policy_id,
            };
            let resource = holds::resource(r.resource.as_ref().map(|res| res.url.as_str()));
            self.decide_deposit(deposit, resource).await?;
        }
        let now = now_unix();
        let session = Session {
            channel: k.channel,
            payer: k.payer,
            voucher_key: k.voucher_key,
            pay_to: o.pay_to,
            mint: o.mint,
            token_2022: token_program == TokenProgram::Token2022,
            channel_id: k.channel.to_string(),
            config: c.clone(),
            deposit: amount,
            withdraw_delay: o.extra.withdraw_delay,
            gate,
            opened_by: String::new(),
            opened_at: now,
            accepted: 0,
            latest_signature: None,
            latest_price: 0,
            redeemed: 0,
            unredeemed_since: 0,
            active_at: now,
            closing_at: 0,
            closed_by: None,
        };
        // The first voucher pays the first request.
        self.accept(&session, o, &v, sig)?;
        if chain::account(&self.rpc, &k.channel)
            .await
            .map_err(rpc_rejection)?
            .is_some()
        {
            return Err(bad(
                reason::CHANNEL_STATE,
                format!("channel {} exists already", k.channel),
            ));
        }
        Ok((checked, session, v))
    }

    /// Co-signs and sends the open, then starts the session with its first voucher.
    async fn open_session(
        &self,
        tx: solana_sdk::transaction::VersionedTransaction,
        session: Session,
        v: Voucher,
        price: u64,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<BatchSettled, Rejection> {
        let (signature, pending) = self
            .send_open(
                tx,
                keypair,
                reason::TRANSACTION_FAILED,
                reason::SETTLEMENT_SIMULATION,
            )
            .await?;
        if !pending {
            let c = self
                .channel(&session.channel, reason::CHANNEL_STATE)
                .await?;
            if !opened(&c, &session, &self.facilitator()) {
                return Err(bad(
                    reason::CHANNEL_STATE,
                    format!(
                        "channel {} is not the one the deposit opens",
                        session.channel
                    ),
                ));
            }
        }
        let now = now_unix();
        let s = Session {
            opened_by: signature.to_string(),
            accepted: v.cumulative,
            latest_signature: Some(v.signature.to_string()),
            latest_price: price,
            unredeemed_since: now,
            active_at: now,
            ..session
        };
        if !self
            .sessions
            .insert(&s)
            .await
            .map_err(|e| self.change_rejection::<Rejection>(&s.channel, Change::Unavailable(e)))?
        {
            return Err(bad(
                reason::DUPLICATE_SETTLEMENT,
                format!("channel {} has a session already", s.channel),
            ));
        }
        Ok(BatchSettled {
            transaction: signature.to_string(),
            amount: s.deposit.to_string(),
            payer: s.payer,
            extra: voucher_extra(&s),
            pending,
        })
    }
}

/// Whether `c` is open as the deposit of `s` opened it.
fn opened(c: &Channel, s: &Session, fac: &Pubkey) -> bool {
    let splits = [channels::Split {
        recipient: s.pay_to,
        bps: channels::ALL_BPS,
    }];
    c.status == Status::Open
        && (c.payer, c.payee, c.rent_payer, c.mint) == (s.payer, *fac, *fac, s.mint)
        && c.authorized_signer == s.voucher_key
        && c.deposit == s.deposit
        && c.distribution_hash == channels::distribution_hash(&splits)
}
