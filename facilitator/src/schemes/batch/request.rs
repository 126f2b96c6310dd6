//! A `batch-settlement` request as it arrives: read in one pass when well formed (every
//! voucher's), else read again for the refusal that names what is wrong.

use crate::reject::{Reason, Rejection};
use crate::schemes::Body;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use trust_gate_x402::batch::{self, BatchExtra, BatchPayload, BatchVoucher, ChannelConfig};
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
pub(crate) struct AcceptedFields {
    scheme: String,
    network: String,
    asset: String,
    pay_to: String,
}

impl Accepted {
    pub(crate) fn of(raw: Box<RawValue>) -> Result<Accepted, Rejection> {
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
pub(crate) struct TypedBody<'a> {
    #[serde(borrow)]
    payment_payload: TypedEnvelope<'a>,
    payment_requirements: Requirements,
}

#[derive(Deserialize)]
pub(crate) struct TypedEnvelope<'a> {
    #[serde(default)]
    resource: Option<ResourceInfo>,
    accepted: Box<RawValue>,
    #[serde(borrow)]
    payload: &'a RawValue,
}

/// A payload's `type`, and a voucher's fields read straight (the tagged enum would buffer the
/// whole payload first: the voucher is the path every request takes).
#[derive(Deserialize)]
pub(crate) struct PayloadType<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VoucherFields {
    channel_config: ChannelConfig,
    voucher: BatchVoucher,
}

pub(crate) fn payload_of(raw: &RawValue) -> Result<BatchPayload, serde_json::Error> {
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
        BatchRequest::parse(Body::json(body, "the body is not JSON")?)
    }

    pub(crate) fn check_schemes(&self) -> Result<(), Rejection> {
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
        let b = Body::read(body, "batch-settlement")?;
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
