//! POST /verify and /settle for x402's `batch-settlement` scheme on Solana, client mode (the
//! payer's key signs every voucher), plain for routes a resource server configures as
//! ungated and gated under `trust-gate-batch-settlement` (see `trust_gate_x402::batch`).
//! The facilitator keeps each session's state for its resource servers (the specification's
//! server-owned watermark, Phase 3), so that every server replica sees one.
//!
//! - **deposit** (a session's first request): the client's open (the gate's
//!   `gate_channel_open` before it, for the gated scheme) is checked
//!   ([`crate::channel_open`]) with the request's voucher, the session starts unconfirmed,
//!   the open is co-signed and sent; vouchers are taken once the channel is read open with
//!   its deposit ([`crate::sessions`]).
//! - **voucher** (every further request): checked off chain, no RPC call
//!   (`trust_gate_client::vouchers::check`: the signature, the channel, exactly the price
//!   more than the last one accepted, at most the deposit, and for a gated channel the
//!   policy's per-payment cap and the payer's kill switch as the poller last read it); the
//!   session keeps it as its latest. A voucher sent again is refused like any other that does
//!   not add the price (one authorization serves one request, Phase 3 step 6), with the
//!   session's `channelState` and `voucherState` for the server's corrective 402 (section
//!   4.6); so is every voucher once the payer asked to close the channel (section 4.5).
//! - **refund** (the client ends the session, with the server's close authorization,
//!   [`authority`]): the channel is sealed at the latest voucher and distributed, closed
//!   through the gate when gated ([`close`]).
//! - **claim**, **settle** and **seal** (the server's own, from a trusted service only): the
//!   listed channels' latest vouchers applied on chain now; what they applied paid out now
//!   (the channel stays open); a channel its payer moved to `Closing` collected at the
//!   server's voucher within its grace period.
//!
//! In the background ([`redeemer`]) the latest vouchers are applied in batches (by amount or
//! age), each channel on its own when a batch fails; the sessions' channels are read, so that
//! a payer's `request_close` stops its vouchers on every replica and its channel is closed at
//! what was accepted; and the channels of a payer whose kill switch is paused are closed at
//! the latest voucher accepted before the pause.
//!
//! Server mode (`voucherSigner: "server"`, `authorization` payloads) answers
//! `invalid_batch_settlement_svm_server_mode_unsupported`.

pub mod authority;
pub mod close;
pub mod redeemer;

use super::{Call, Scheme, Verified};
use crate::adapter::{self, Expectations};
use crate::advances::ledger::ChannelKind;
use crate::answer::SettleReply;
use crate::channel_open::{self, Expected, Gated};
use crate::inspect;
use crate::reject::{Reason, Rejection};
use crate::service::holds;
use crate::service::Facilitator;
use crate::service::{co_signature, Outcome};
use crate::sessions::{Change, GatedTerms, Session};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::str::FromStr;
use std::sync::Arc;
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::{now_unix, PaymentQuery};
use trust_gate_client::vouchers::{self, Refusal, Voucher};
use trust_gate_x402::batch::{
    self, BatchExtra, BatchPayload, BatchVoucher, ChannelConfig, VoucherState,
};
use trust_gate_x402::{PaymentRequirements, ResourceInfo};

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
            Rejection::new(
                Reason::UnsupportedPayloadType,
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
            Rejection::new(
                Reason::UnsupportedPayloadType,
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

/// The `batch-settlement` request in `body`: one pass for a well-formed request (every
/// voucher's); anything else is read again for the named refusal.
pub fn request(body: &[u8]) -> Result<BatchRequest, Rejection> {
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
    match typed {
        Some(request) => request.check_schemes().map(|_| request),
        None => BatchRequest::parse_bytes(body),
    }
}

impl BatchRequest {
    /// Reads a body [`request`] could not read in one pass, for the named refusal.
    pub fn parse_bytes(body: &[u8]) -> Result<BatchRequest, Rejection> {
        let v = serde_json::from_slice::<Value>(body).map_err(|e| {
            Rejection::new(
                Reason::UnsupportedPayloadType,
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
            return Err(Rejection::new(
                Reason::UnsupportedScheme,
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
            Rejection::new(
                Reason::UnsupportedPayloadType,
                format!("not an x402 batch-settlement request: {e}"),
            )
        })?;
        let kind = b
            .payment_payload
            .payload
            .get("type")
            .and_then(Value::as_str);
        if let Some(t) = kind.filter(|t| batch::UNSERVED_TYPES.contains(t)) {
            return Err(Rejection::new(
                Reason::BatchServerModeUnsupported,
                format!("payload type {t:?} is server mode's; this facilitator serves client mode only (deposit, voucher, refund, claim, settle)"),
            ));
        }
        let payload: BatchPayload =
            serde_json::from_value(b.payment_payload.payload).map_err(|e| {
                Rejection::new(
                    Reason::UnsupportedPayloadType,
                    format!("paymentPayload.payload is not a batch-settlement payload: {e}"),
                )
            })?;
        let q = b.payment_requirements;
        let extra: BatchExtra = serde_json::from_value(Value::Object(q.extra.clone()))
            .map_err(|e| Rejection::new(Reason::BatchInvalidRequirements, format!("extra: {e}")))?;
        let raw = serde_json::value::to_raw_value(&b.payment_payload.accepted)
            .map_err(|e| Rejection::new(Reason::UnsupportedPayloadType, e.to_string()))?;
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

fn offer(r: &BatchRequest, fac: &Pubkey, network: &str) -> Result<Offer, Rejection> {
    let (q, a) = (&r.requirements, &r.accepted);
    if q.network != network || a.network != network {
        return Err(Rejection::new(
            Reason::NetworkMismatch,
            format!(
                "the network is {}; this facilitator settles on {network}",
                q.network
            ),
        ));
    }
    if (&q.asset, &q.pay_to) != (&a.asset, &a.pay_to) {
        return Err(Rejection::new(
            Reason::BatchInvalidRequirements,
            "the requirements' asset or payTo is not the accepted offer's",
        ));
    }
    let invalid = |m: String| Rejection::new(Reason::BatchInvalidRequirements, m);
    let extra = q.extra.clone();
    if extra.fee_payer != fac.to_string() {
        return Err(Rejection::new(
            Reason::BatchFeePayerMismatch,
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
        return Err(Rejection::new(
            Reason::BatchPaymentFlow,
            "extra.paymentFlow, when present, is \"authorization\"",
        ));
    }
    if extra
        .voucher_signer
        .as_deref()
        .is_some_and(|v| v != "client")
        || extra.operator.is_some()
    {
        return Err(Rejection::new(
            Reason::BatchServerModeUnsupported,
            "extra.voucherSigner \"server\" and extra.operator are server mode's; this facilitator serves client mode only",
        ));
    }
    if !(batch::MIN_WITHDRAW_DELAY..=batch::MAX_WITHDRAW_DELAY).contains(&extra.withdraw_delay)
        || u64::from(extra.withdraw_delay) < q.max_timeout_seconds
    {
        return Err(Rejection::new(
            Reason::BatchWithdrawDelayOutOfRange,
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
    let price = batch::amount("amount", &q.amount)?;
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
    let payer = batch::key("channelConfig.payer", &c.payer)?;
    let voucher_key = batch::key("channelConfig.payerAuthorizer", &c.payer_authorizer)?;
    if payer == *fac || voucher_key == *fac {
        return Err(Rejection::new(
            Reason::BatchFeePayerMismatch,
            "the channel's payer and its voucher key are not the facilitator",
        ));
    }
    if c.receiver != o.pay_to.to_string() || c.token != o.mint.to_string() {
        return Err(Rejection::new(
            Reason::BatchChannelIdMismatch,
            "channelConfig.receiver and .token are payTo and asset",
        ));
    }
    if c.receiver_authorizer != o.extra.receiver_authorizer {
        return Err(Rejection::new(
            Reason::BatchReceiverAuthorizerMismatch,
            "channelConfig.receiverAuthorizer is not extra.receiverAuthorizer",
        ));
    }
    if c.withdraw_delay != o.extra.withdraw_delay {
        return Err(Rejection::new(
            Reason::BatchWithdrawDelayMismatch,
            "channelConfig.withdrawDelay is not extra.withdrawDelay",
        ));
    }
    if c.voucher_signer.as_deref().is_some_and(|v| v != "client") {
        return Err(Rejection::new(
            Reason::BatchServerModeUnsupported,
            "channelConfig.voucherSigner is \"client\" in client mode",
        ));
    }
    let salt = c.salt.parse().map_err(|_| {
        Rejection::new(
            Reason::UnsupportedPayloadType,
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
        Rejection::new(
            Reason::BatchChannelIdMismatch,
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
        return Err(Rejection::new(
            Reason::BatchChannelIdMismatch,
            format!(
                "channelConfig and the requirements are not those of channel {}",
                s.channel
            ),
        ));
    }
    if c.receiver_authorizer != o.extra.receiver_authorizer {
        return Err(Rejection::new(
            Reason::BatchReceiverAuthorizerMismatch,
            "channelConfig.receiverAuthorizer is not extra.receiverAuthorizer",
        ));
    }
    // A route that asks for the gate is paid only by a channel the gate opened (and a plain
    // route's session stays plain).
    if o.gated != s.gate.is_some() {
        return Err(Rejection::new(
            Reason::BatchChannelIdMismatch,
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
        return Err(Rejection::new(
            Reason::BatchChannelIdMismatch,
            format!("voucher.channelId is not the channel of channelConfig ({channel})"),
        ));
    }
    if v.expires_at != 0 {
        return Err(Rejection::new(
            Reason::BatchVoucherExpiry,
            "voucher.expiresAt is 0 in batch-settlement",
        ));
    }
    let cumulative = batch::amount("voucher.maxClaimableAmount", &v.max_claimable_amount)?;
    let signature = Signature::from_str(&v.signature).map_err(|_| {
        Rejection::new(
            Reason::BatchVoucherSignature,
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

/// A voucher refusal as the scheme names it. A voucher that does not add exactly the price
/// to what was accepted (a resend, one lost in flight, another amount) carries the session's
/// state: the amount charged and the payer's own voucher of it (specification section 4.6).
fn refusal(r: Refusal, s: &Session) -> Rejection {
    let reason = match r {
        Refusal::Paused => Reason::BatchPayerPaused,
        Refusal::WrongChannel => Reason::BatchChannelIdMismatch,
        Refusal::OverPerPaymentCap { .. } => Reason::BatchPriceOverPerPaymentCap,
        Refusal::WrongAmount { .. } => Reason::BatchCumulativeAmountMismatch,
        Refusal::OverDeposit { .. } => Reason::BatchCumulativeExceedsDeposit,
        Refusal::Expired { .. } => Reason::BatchVoucherExpiry,
        Refusal::BadSignature => Reason::BatchVoucherSignature,
    };
    let refused = Rejection::new(reason, r.to_string());
    match (r, &s.latest_signature) {
        (Refusal::WrongAmount { .. }, Some(signature)) => refused.with_extra(json!({
            "channelState": channel_state(s),
            "voucherState": VoucherState {
                signed_max_claimable: s.accepted.to_string(),
                expires_at: 0,
                signature: signature.clone(),
            },
        })),
        _ => refused,
    }
}

/// The open verifier's reasons (upto's) as this scheme names them.
fn open_refusal(r: Rejection) -> Rejection {
    let reason = match r.reason {
        Reason::UptoFacilitatorMismatch => Reason::BatchFeePayerMismatch,
        Reason::UptoChannelId | Reason::UptoNonce | Reason::UptoPayerMismatch => {
            Reason::BatchChannelIdMismatch
        }
        _ => Reason::BatchSetupTransaction,
    };
    Rejection { reason, ..r }
}

/// The scheme's channel state of a session.
pub fn channel_state(s: &Session) -> Value {
    json!({
        "channelId": s.channel_id,
        "balance": s.deposit.to_string(),
        "totalClaimed": s.redeemed.to_string(),
        "withdrawRequestedAt": s.withdraw_requested_at,
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

impl Batch {
    async fn offer(f: &Facilitator, r: &BatchRequest) -> Result<Offer, Rejection> {
        let network = Batch::network_id(f).await?;
        offer(r, &f.facilitator(), &network)
    }

    /// The network's CAIP-2 id.
    async fn network_id(f: &Facilitator) -> Result<String, Rejection> {
        f.caip2()
            .await
            .map_err(|e| Rejection::new(Reason::NetworkUnavailable, e.message))
    }

    fn store_rejection(
        channel: &Pubkey,
        e: trust_gate_server::redis_store::StoreUnavailable,
    ) -> Rejection {
        Batch::change_rejection::<Rejection>(channel, Change::Unavailable(e))
    }

    /// `/verify`: the deposit's checks without sending, or the voucher's without keeping it.
    pub async fn verify_batch(
        f: &Facilitator,
        r: &BatchRequest,
    ) -> Result<(Pubkey, Value), Rejection> {
        let o = Batch::offer(f, r).await?;
        match &r.payload {
            BatchPayload::Deposit {
                channel_config,
                voucher: v,
                deposit,
            } => {
                let s = match Batch::checked_deposit(f, r, &o, channel_config, v, deposit).await? {
                    Deposit::Again(s, _) => *s,
                    Deposit::New(new) => Session {
                        accepted: new.2.cumulative,
                        ..new.1
                    },
                };
                Ok((s.payer, json!({"channelState": channel_state(&s)})))
            }
            BatchPayload::Voucher {
                channel_config,
                voucher: v,
            } => {
                let channel = channel_id(&v.channel_id)?;
                let v = voucher(v, &channel)?;
                let s = Batch::session(f, &channel).await?;
                same_channel(channel_config, &s, &o)?;
                let next = Batch::accept(f, &s, &o, &v)?;
                Ok((s.payer, json!({"channelState": channel_state(&next)})))
            }
            other => Err(Rejection::new(
                Reason::BatchPayloadType,
                format!(
                    "/verify takes a deposit or a voucher, not a {}",
                    other.type_name()
                ),
            )),
        }
    }

    /// `/settle` (see the module docs). `caller` is the trusted service that signed the
    /// request (`X-Service-Authorization`), or why none did: a server's payload (`claim`,
    /// `settle`, `seal`) is taken only from one.
    pub async fn settle_batch(
        f: &Facilitator,
        r: &BatchRequest,
        caller: Result<Pubkey, String>,
    ) -> Result<SettleReply, Rejection> {
        let Some(keypair) = f.key.keypair() else {
            return Err(Rejection::not_signing("settle"));
        };
        if r.payload.is_servers() {
            if let Err(why) = caller {
                return Err(Rejection::new(
                    Reason::BatchServiceUnauthenticated,
                    format!(
                        "a {} is the resource server's own request: {why}",
                        r.payload.type_name()
                    ),
                )
                .hint("sign the request with a service key the facilitator trusts (X-Service-Authorization)"));
            }
        }
        let o = Batch::offer(f, r).await?;
        match &r.payload {
            BatchPayload::Deposit {
                channel_config,
                voucher: v,
                deposit,
            } => {
                let (checked, session, v) =
                    match Batch::checked_deposit(f, r, &o, channel_config, v, deposit).await? {
                        Deposit::Again(s, signature) => {
                            return Batch::deposit_outcome(f, *s, signature).await
                        }
                        Deposit::New(new) => *new,
                    };
                f.limit_deposits(&session.payer)?;
                let reserved = f
                    .advance(
                        &session.channel,
                        &session.payer,
                        ChannelKind::Session,
                        session.token_program(),
                        session.gate.is_some(),
                    )
                    .await?;
                if !reserved {
                    return Err(Rejection::new(
                        Reason::DuplicateSettlement,
                        format!("channel {} is being opened already", session.channel),
                    ));
                }
                let used = checked.approval.zip(session.gate.map(|g| g.payer_asset));
                let opened =
                    Batch::open_session(f, checked.tx, session, v, o.price, keypair).await?;
                if let Some((a, payer)) = used.filter(|_| !opened.pending) {
                    f.forget_approval(&a.address, &payer).await;
                }
                Ok(opened)
            }
            BatchPayload::Voucher {
                channel_config,
                voucher: v,
            } => {
                let channel = channel_id(&v.channel_id)?;
                let v = voucher(v, &channel)?;
                let s = f
                    .sessions
                    .update(&channel, |s| {
                        same_channel(channel_config, s, &o)?;
                        Batch::accept(f, s, &o, &v)
                    })
                    .await
                    .map_err(|e| Batch::change_rejection(&channel, e))?;
                Ok(SettleReply::channel(
                    String::new(),
                    String::new(),
                    s.payer,
                    Some(voucher_extra(&s)),
                    false,
                ))
            }
            BatchPayload::Refund {
                channel_config,
                voucher: v,
                close_authorization,
                transaction,
                amount,
            } => {
                if amount.is_some() {
                    return Err(Rejection::new(
                        Reason::BatchCloseAmountUnsupported,
                        "a refund names no amount: the whole unused escrow goes back to the payer",
                    ));
                }
                if transaction.is_some() {
                    return Err(Rejection::new(
                        Reason::BatchRefundTransaction,
                        "this facilitator does not sponsor a payer's request_close: the payer sends its own (it pays the fee)",
                    ));
                }
                Batch::refund(
                    f,
                    r,
                    &o,
                    channel_config,
                    v.as_ref(),
                    close_authorization.as_ref(),
                    keypair,
                )
                .await
            }
            BatchPayload::Seal {
                channel_id: id,
                channel_config,
                voucher: v,
                close_authorization,
            } => {
                Batch::seal(
                    f,
                    r,
                    &o,
                    id,
                    channel_config,
                    v,
                    close_authorization,
                    keypair,
                )
                .await
            }
            BatchPayload::Claim { claims } => Batch::claim_sessions(f, claims, &o, keypair).await,
            BatchPayload::Settle { channels: list } => {
                let mut sessions = Vec::new();
                for c in list {
                    let channel = channel_id(&c.channel_id)?;
                    let s = Batch::session(f, &channel).await?;
                    same_channel(&c.channel_config, &s, &o)?;
                    sessions.push(s);
                }
                let (sig, pending, paid) = Batch::pay_out(f, &sessions, keypair).await?;
                let channels: Vec<Value> = sessions.iter().map(channel_state).collect();
                Ok(SettleReply::channel(
                    sig.to_string(),
                    paid.to_string(),
                    sessions.first().map(|s| s.payer).unwrap_or_default(),
                    Some(json!({ "channels": channels })),
                    pending,
                ))
            }
        }
    }

    /// The session of `channel`, open.
    async fn session(f: &Facilitator, channel: &Pubkey) -> Result<Session, Rejection> {
        let s = f
            .sessions
            .get(channel)
            .await
            .map_err(|e| Batch::store_rejection(channel, e))?
            .ok_or_else(|| {
                Rejection::new(
                    Reason::BatchUnknownChannel,
                    format!("this facilitator holds no session of channel {channel}: its first request is a deposit"),
                )
            })?;
        if s.closed_by.is_some() {
            return Err(Rejection::new(
                Reason::BatchCloseState,
                format!("channel {channel} is closed"),
            ));
        }
        Ok(s)
    }

    fn change_rejection<E: Into<Rejection>>(channel: &Pubkey, e: Change<E>) -> Rejection {
        match e {
            Change::Refused(r) => r.into(),
            Change::Missing => Rejection::new(
                Reason::BatchUnknownChannel,
                format!("this facilitator holds no session of channel {channel}"),
            ),
            Change::Unavailable(e) => Rejection::store_unavailable(e),
        }
    }

    /// The session after `v` pays the offer's price (pure: no RPC). A voucher already
    /// accepted is refused like any other that does not add exactly the price
    /// (specification Phase 3, step 6: one authorization serves one request), with the
    /// session's state for the resource server's corrective 402.
    fn accept(f: &Facilitator, s: &Session, o: &Offer, v: &Voucher) -> Result<Session, Rejection> {
        if s.closed_by.is_some() {
            return Err(Rejection::new(
                Reason::BatchCloseState,
                format!("channel {} is closed", s.channel),
            ));
        }
        if s.withdraw_requested_at != 0 {
            return Err(Rejection::new(
                Reason::BatchChannelClosing,
                format!(
                    "the payer asked to close channel {} at {} (request_close): the program takes no more vouchers",
                    s.channel, s.withdraw_requested_at
                ),
            ));
        }
        if s.closing_at != 0 {
            return Err(Rejection::new(
                Reason::BatchChannelClosing,
                format!("channel {} is being closed", s.channel),
            ));
        }
        if s.unconfirmed.is_some() {
            return Err(Rejection::new(
                Reason::BatchDepositUnconfirmed,
                format!(
                    "the open of channel {} was sent but is not yet on chain with its deposit: vouchers are taken once it is (retry shortly)",
                    s.channel
                ),
            ));
        }
        if let Some(g) = s.gate.filter(|g| f.sessions.is_retired(g)) {
            return Err(Rejection::new(
                Reason::BatchPolicyRetired,
                format!(
                    "payer agent {}'s policy {} is retired: no payment may use it",
                    g.payer_asset, g.policy_id
                ),
            ));
        }
        let paused = s.gate.is_some_and(|g| f.sessions.is_paused(&g.payer_asset));
        let terms = vouchers::Terms {
            channel: s.channel,
            voucher_key: s.voucher_key,
            cap: s.deposit,
            per_payment_cap: s.gate.map_or(0, |g| g.per_payment_cap),
        };
        let now = now_unix();
        let accepted = vouchers::check_with(&terms, s.accepted, v, o.price, now, paused, |v, k| {
            f.sessions.signed(v, k)
        })
        .map_err(|r| refusal(r, s))?;
        Ok(Session {
            accepted,
            latest_signature: Some(v.signature.to_string()),
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
    /// the open, the first voucher; the channel must not exist yet, unless this very deposit
    /// started its session (a retry: neither the policy nor the channel's absence is asked
    /// again, for the deposit itself changed both).
    async fn checked_deposit(
        f: &Facilitator,
        r: &BatchRequest,
        o: &Offer,
        c: &ChannelConfig,
        v: &BatchVoucher,
        deposit: &batch::DepositTx,
    ) -> Result<Deposit, Rejection> {
        let fac = f.facilitator();
        let k = config_keys(c, o, &fac)?;
        let v = voucher(v, &k.channel)?;
        let amount = batch::amount("deposit.amount", &deposit.amount)?;
        if amount == 0 {
            return Err(Rejection::new(
                Reason::BatchSetupTransaction,
                "deposit.amount is above 0",
            ));
        }
        let (token_program, _) = f
            .mint(&o.mint)
            .await
            .map_err(|e| Rejection::new(Reason::BatchInvalidRequirements, e.message))?;
        if o.extra.token_program != token_program.id().to_string() {
            return Err(Rejection::new(
                Reason::BatchTokenProgram,
                format!(
                    "extra.tokenProgram is not the mint's token program ({})",
                    token_program.id()
                ),
            ));
        }
        if !r.gated {
            f.check_plain_offer(
                &r.accepted.requirements()?,
                &o.mint,
                Reason::BatchInvalidRequirements,
            )?;
        }
        let gate = if r.gated {
            let g = adapter::read_channel_gate(
                &r.accepted.requirements()?,
                r.resource.as_ref().map(|res| res.url.as_str()),
                Expectations {
                    facilitator: &fac,
                    network: &r.requirements.network,
                    trusted_services: &f.settings.trusted_services,
                    now: now_unix(),
                    skew: i64::try_from(f.settings.clock_skew.as_secs()).unwrap_or(i64::MAX),
                },
            )?;
            let policy = chain::policy(
                &f.chain.rpc,
                &f.chain.builder.ids,
                &g.payer_asset,
                g.policy_id,
            )
            .await
            .map_err(Rejection::rpc)?
            .ok_or_else(|| {
                Rejection::new(
                    Reason::PolicyNotFound,
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
            .map_err(|e| Rejection::new(Reason::BatchSetupTransaction, e.message))?;
        let slot = f
            .within(async { f.chain.rpc.get_slot().await.map_err(Rejection::rpc) })
            .await?;
        let slot = o.extra.recent_slot.map_or(slot, |s| s.max(slot));
        let tables = f.tables().await;
        let binding = batch::binding_memo(&o.extra.receiver_authorizer);
        let checked = channel_open::verify(
            tx,
            Expected {
                builder: &f.chain.builder,
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
                compute: &f.settings.compute,
                gated: gate.map(|g| Gated {
                    payer_asset: g.payer_asset,
                    payee_asset: g.payee_asset,
                    policy_id: g.policy_id,
                    tables: &tables,
                }),
            },
        )
        .map_err(open_refusal)?;
        if let Some(again) = Batch::deposit_again(f, &checked.tx, &k.channel, &v).await? {
            return Ok(again);
        }
        if let Some(g) = &gate {
            let deposit = PaymentQuery {
                payer_asset: g.payer_asset,
                payee_asset: g.payee_asset,
                amount,
                mint: o.mint,
                policy_id: g.policy_id,
            };
            let resource = holds::resource(r.resource.as_ref().map(|res| res.url.as_str()));
            f.decide_deposit(deposit, resource).await?;
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
            withdraw_requested_at: 0,
            unconfirmed: None,
            closed_by: None,
        };
        // The first voucher pays the first request.
        Batch::accept(f, &session, o, &v)?;
        if chain::account(&f.chain.rpc, &k.channel)
            .await
            .map_err(Rejection::rpc)?
            .is_some()
        {
            return Err(Rejection::new(
                Reason::BatchChannelState,
                format!("channel {} exists already", k.channel),
            ));
        }
        Ok(Deposit::New(Box::new((checked, session, v))))
    }

    /// The session this very deposit started (its open co-signed is the same transaction,
    /// its voucher the session's latest), when one did: a retry of the deposit.
    async fn deposit_again(
        f: &Facilitator,
        tx: &solana_sdk::transaction::VersionedTransaction,
        channel: &Pubkey,
        v: &Voucher,
    ) -> Result<Option<Deposit>, Rejection> {
        let Some(keypair) = f.key.keypair() else {
            return Ok(None);
        };
        let Some(s) = f
            .sessions
            .get(channel)
            .await
            .map_err(|e| Batch::store_rejection(channel, e))?
        else {
            return Ok(None);
        };
        let signature = co_signature(tx, keypair);
        let same = s.closed_by.is_none()
            && s.accepted == v.cumulative
            && s.latest_signature.as_deref() == Some(v.signature.to_string().as_str())
            && (s.opened_by.is_empty() || s.opened_by == signature.to_string());
        Ok(same.then_some(Deposit::Again(Box::new(s), signature)))
    }

    /// A retried deposit's answer: its open's outcome (awaited while the session is not
    /// confirmed yet), never a second open nor a second acceptance of its voucher.
    async fn deposit_outcome(
        f: &Facilitator,
        s: Session,
        signature: Signature,
    ) -> Result<SettleReply, Rejection> {
        let pending = s.unconfirmed.is_some();
        let settled = if pending {
            match f.confirm(&signature).await {
                Outcome::Landed(Ok(())) => {
                    Batch::opened_session(f, &s.channel, signature, false).await?
                }
                Outcome::Landed(Err(err)) => {
                    return Err(Rejection::new(
                        Reason::TransactionFailed,
                        format!("the deposit's open {signature} failed on chain: {err}"),
                    ))
                }
                Outcome::Pending => settled(&s, signature, true),
            }
        } else {
            settled(&s, signature, false)
        };
        Ok(settled.replayed())
    }

    /// Starts the session, unconfirmed, with its first voucher, then co-signs and sends the
    /// open: the session is there before anything is sent, so that a second deposit of the
    /// same channel sends nothing, and a facilitator that stops mid-way finds it (the
    /// background round forgets it if the open never lands). Confirmed once the channel is
    /// read open with its deposit; forgotten when the open is refused.
    async fn open_session(
        f: &Facilitator,
        tx: solana_sdk::transaction::VersionedTransaction,
        session: Session,
        v: Voucher,
        price: u64,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<SettleReply, Rejection> {
        let now = now_unix();
        let s = Session {
            accepted: v.cumulative,
            latest_signature: Some(v.signature.to_string()),
            latest_price: price,
            unredeemed_since: now,
            active_at: now,
            unconfirmed: Some(tx.message.recent_blockhash().to_string()),
            ..session
        };
        let channel = s.channel;
        if !f
            .sessions
            .insert(&s)
            .await
            .map_err(|e| Batch::change_rejection::<Rejection>(&channel, Change::Unavailable(e)))?
        {
            return Err(Rejection::new(
                Reason::DuplicateSettlement,
                format!("channel {channel} has a session already"),
            ));
        }
        let sent = f
            .send_open(
                tx,
                keypair,
                Reason::TransactionFailed,
                Reason::BatchSettlementSimulation,
            )
            .await;
        let (signature, pending) = match sent {
            Ok(sent) => sent,
            Err(refused) => {
                // Refused by the simulation, or failed on chain: no channel, no session, no
                // rent advanced.
                if let Err(e) = f.sessions.remove(&channel).await {
                    tracing::warn!(%channel, "forgetting a refused open's session: {e}");
                }
                f.released_advance(&channel).await;
                return Err(refused);
            }
        };
        Batch::opened_session(f, &channel, signature, pending).await
    }

    /// The session after its open was sent (`pending`: outcome not known in time), or
    /// landed: confirmed once the channel is read open with its deposit.
    async fn opened_session(
        f: &Facilitator,
        channel: &Pubkey,
        signature: Signature,
        pending: bool,
    ) -> Result<SettleReply, Rejection> {
        let channel = *channel;
        if !pending {
            let s = Batch::session(f, &channel).await?;
            let c = f.channel(&channel, Reason::BatchChannelState).await?;
            if !opened(&c, &s, &f.facilitator()) {
                return Err(Rejection::new(
                    Reason::BatchChannelState,
                    format!("channel {channel} is not the one the deposit opens"),
                ));
            }
            f.advanced(&channel).await;
            // Read just now: the background round's next read of it comes a period later.
            f.sessions
                .work
                .read_at
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(channel, now_unix());
        }
        let s = f
            .sessions
            .update::<Rejection>(&channel, |cur| {
                Ok(Session {
                    opened_by: signature.to_string(),
                    unconfirmed: if pending {
                        cur.unconfirmed.clone()
                    } else {
                        None
                    },
                    ..cur.clone()
                })
            })
            .await
            .map_err(|e| Batch::change_rejection(&channel, e))?;
        Ok(settled(&s, signature, pending))
    }
}

/// A deposit's answer: its open's signature, the deposit, the first voucher's charge.
fn settled(s: &Session, signature: Signature, pending: bool) -> SettleReply {
    let extra = Some(voucher_extra(s));
    SettleReply::channel(
        signature.to_string(),
        s.deposit.to_string(),
        s.payer,
        extra,
        pending,
    )
}

/// What a deposit's checks found.
enum Deposit {
    /// A new session: the open to send, the session it starts, its first voucher.
    New(Box<(channel_open::Checked, Session, Voucher)>),
    /// This very deposit started a session already: the session kept and its open's
    /// signature.
    Again(Box<Session>, Signature),
}

/// Whether `c` is open as the deposit of `s` opened it.
pub(crate) fn opened(c: &Channel, s: &Session, fac: &Pubkey) -> bool {
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

/// The `batch-settlement` family's handler: the stock scheme and its gated variant.
pub struct Batch;

#[async_trait::async_trait]
impl Scheme for Batch {
    fn names(&self) -> &'static [&'static str] {
        &[batch::SCHEME_BATCH, batch::SCHEME_GATED_BATCH]
    }

    async fn extra(&self, f: &Facilitator, _name: &str) -> Value {
        // The gated variant's open may load from the lookup tables the trust-gate kind
        // lists. A session idle this long is closed (listed only when set).
        let mut extra = json!({"feePayer": f.facilitator().to_string()});
        if let Some(idle) = f.settings.sessions.max_idle {
            extra["maxIdleSecs"] = json!(idle.as_secs());
        }
        extra
    }

    async fn verify(&self, f: &Facilitator, call: Call<'_>) -> Result<Verified, Rejection> {
        let r = request(call.body)?;
        let (payer, extra) = Batch::verify_batch(f, &r).await?;
        Ok(Verified::Valid {
            payer,
            extra: Some(extra),
        })
    }

    async fn settle(&self, f: &Facilitator, call: Call<'_>) -> Result<SettleReply, Rejection> {
        let r = request(call.body)?;
        let caller = Batch::service_caller(f, call.headers, "/settle", call.body);
        Batch::settle_batch(f, &r, caller).await
    }

    /// The sessions' rounds: kill switches, channel reads, redemption and closes.
    fn background(&self, f: &Arc<Facilitator>) -> Option<tokio::task::JoinHandle<()>> {
        Some(redeemer::spawn(f.clone()))
    }
}
