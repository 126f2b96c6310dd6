//! The demo's metered routes, on payment channels in the metered mint:
//!
//! - `GET /metered?units=N`: x402 `upto`, priced a unit, N units a request
//!   ([`DEFAULT_UNITS`] without `units`). The 402 offers the gated
//!   `trust-gate-upto` (the payer's metered policy decides the ceiling) and the stock `upto`
//!   (ungated, for any `upto` client). A payment escrows the ceiling (the facilitator's
//!   deposit), the route serves N units (at most the ceiling's), then claims N units with its
//!   own voucher (the service key is the channel's voucher key): the payer gets the rest back.
//! - `GET /session`: x402 `batch-settlement`, priced a request. The 402 offers the gated
//!   `trust-gate-batch-settlement` and the plain scheme. The first payment opens a channel,
//!   each further one is a voucher the facilitator checks off chain; a `refund` payload ends
//!   the session. Every payload goes to the facilitator's /settle as it came.

use crate::challenge;
use crate::facilitator_client::{is_pending, Answer};
use crate::state::{self, error, header, payer_of, DemoState};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use std::sync::Arc;
use trust_gate_client::channels::voucher_message;
use trust_gate_client::simulate::now_unix;
use trust_gate_server::paid_once::Resumed;
use trust_gate_x402::batch::{self, BatchPayload};
use trust_gate_x402::reason::Reason;
use trust_gate_x402::upto;
use trust_gate_x402::{
    self as x402, PaymentRequired, PaymentRequirements, ResourceInfo, X402_VERSION,
};

type App = State<Arc<DemoState>>;

/// The units a `GET /metered` without `?units=N` uses (and is charged for).
pub const DEFAULT_UNITS: u64 = 3;

#[derive(Deserialize)]
pub struct Units {
    /// Units this request uses ([`DEFAULT_UNITS`] when not given).
    units: Option<u64>,
}

/// A 402 offering `accepts` for `url`.
fn offers(s: &DemoState, url: String, accepts: Vec<PaymentRequirements>) -> Response {
    challenge_response(PaymentRequired {
        x402_version: X402_VERSION,
        error: Some("Payment required".into()),
        resource: ResourceInfo {
            url,
            description: Some("trust-gate demo: metered payments on payment channels".into()),
            mime_type: Some("application/json".into()),
        },
        accepts,
        extensions: s.extensions(),
    })
}

/// A 402 asking for `pr` (in `PAYMENT-REQUIRED` and as the body).
fn challenge_response(pr: PaymentRequired) -> Response {
    let Ok(encoded) = x402::encode_header(&pr) else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "cannot encode the offers",
        );
    };
    let mut h = HeaderMap::new();
    h.extend(header(x402::PAYMENT_REQUIRED, &encoded));
    h.extend(header("cache-control", "no-store"));
    (StatusCode::PAYMENT_REQUIRED, h, Json(pr)).into_response()
}

/// The client's payment (`PAYMENT-SIGNATURE`), read as JSON, with the offer it accepted if
/// that offer is one of this service's for `url` (gated, of `schemes`; plain, exactly `plain`).
fn payment(
    s: &DemoState,
    value: &str,
    url: &str,
    schemes: &[&str],
    plain: &PaymentRequirements,
) -> Result<(Value, PaymentRequirements), Box<Response>> {
    let mut payload: Value = x402::decode_header(x402::PAYMENT_SIGNATURE, value).map_err(|e| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            "invalid_payment",
            e.to_string(),
        ))
    })?;
    let accepted: PaymentRequirements = serde_json::from_value(payload["accepted"].clone())
        .map_err(|e| {
            Box::new(error(
                StatusCode::BAD_REQUEST,
                "invalid_payment",
                format!("paymentPayload.accepted: {e}"),
            ))
        })?;
    if !schemes.contains(&accepted.scheme.as_str())
        || !challenge::is_our_offer(&s.config, &accepted, url, plain)
    {
        return Err(Box::new(error(
            StatusCode::PAYMENT_REQUIRED,
            "offer_unknown",
            "paymentPayload.accepted is not one of this route's offers",
        )));
    }
    // The resource is ours, whatever the client copied.
    payload["resource"] = json!({"url": url});
    Ok((payload, accepted))
}

/// POST /settle of `payload` under `requirements`: the facilitator's answer when it
/// succeeded, else the refusal to answer with (the facilitator's body, its settlement and
/// decision headers).
async fn settle(
    s: &DemoState,
    payload: &Value,
    requirements: &PaymentRequirements,
) -> Result<Value, Box<Response>> {
    let a = settle_answer(s, payload, requirements).await?;
    if a.body["success"] == true {
        Ok(a.body)
    } else if is_pending(&a.body) {
        Err(Box::new(state::pending(&a.body, &a.headers)))
    } else {
        Err(Box::new(refused(a.body, &a.headers)))
    }
}

/// A deposit the facilitator settled: refused as a payment already used when an earlier
/// request sent it (`replayed`) and this one is not the resend of a payment id without an
/// answer yet (`resumed`).
fn fresh(deposit: &Value, resumed: bool) -> Result<(), Box<Response>> {
    if deposit["replayed"] == true && !resumed {
        let transaction = deposit["transaction"].as_str().unwrap_or_default();
        return Err(Box::new(state::already_used(transaction)));
    }
    Ok(())
}

/// POST /settle of `payload` under `requirements`: the facilitator's answer, whatever it is
/// (an unreachable facilitator is answered 502).
async fn settle_answer(
    s: &DemoState,
    payload: &Value,
    requirements: &PaymentRequirements,
) -> Result<Answer, Box<Response>> {
    let body = json!({
        "x402Version": X402_VERSION,
        "paymentPayload": payload,
        "paymentRequirements": requirements,
    });
    s.facilitator.settle_json(&body).await.map_err(|e| {
        Box::new(error(
            StatusCode::BAD_GATEWAY,
            "facilitator_unavailable",
            e.to_string(),
        ))
    })
}

/// A paid answer: `body`, with the settlement in `PAYMENT-RESPONSE`.
fn served(settlement: &Value, body: Value) -> Response {
    let mut h = HeaderMap::new();
    if let Ok(encoded) = x402::encode_header(settlement) {
        h.extend(header(x402::PAYMENT_RESPONSE, &encoded));
    }
    h.extend(header("cache-control", "private"));
    (StatusCode::OK, h, Json(body)).into_response()
}

fn refused(settlement: Value, from: &HeaderMap) -> Response {
    let mut h = crate::state::decision_headers(from);
    if let Ok(encoded) = x402::encode_header(&settlement) {
        h.extend(header(x402::PAYMENT_RESPONSE, &encoded));
    }
    (StatusCode::PAYMENT_REQUIRED, h, Json(settlement)).into_response()
}

pub async fn metered(
    State(s): App,
    Query(q): Query<Units>,
    resumed: Option<Extension<Resumed>>,
    headers: HeaderMap,
) -> Response {
    let c = &s.config;
    let units = q.units.unwrap_or(DEFAULT_UNITS);
    if units > c.max_units {
        return error(
            StatusCode::BAD_REQUEST,
            "input_invalid",
            format!("units: at most {} a request", c.max_units),
        );
    }
    let url = c.metered_url();
    let Some(value) = headers.get(x402::PAYMENT_SIGNATURE) else {
        let payer = match payer_of(&s, &headers) {
            Ok(p) => p,
            Err(r) => return *r,
        };
        let now = now_unix();
        let (network, fee_payer) = (&s.kind.network, &s.kind.fee_payer);
        return offers(
            &s,
            url,
            vec![
                challenge::metered_offer(c, network, fee_payer, &payer, now, true),
                challenge::signed(
                    c,
                    challenge::metered_offer(c, network, fee_payer, &payer, now, false),
                    now,
                ),
            ],
        );
    };
    let schemes = [upto::SCHEME_GATED_UPTO, upto::SCHEME_UPTO];
    let (network, fee_payer) = (&s.kind.network, &s.kind.fee_payer);
    let plain = challenge::metered_offer(c, network, fee_payer, &Pubkey::default(), 0, false);
    let (mut payload, accepted) = match payment(
        &s,
        value.to_str().unwrap_or_default(),
        &url,
        &schemes,
        &plain,
    ) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    // The deposit: the ceiling escrowed before anything is served.
    payload["payload"]["type"] = "deposit".into();
    let deposited = settle(&s, &payload, &accepted)
        .await
        .and_then(|d| fresh(&d, state::resumed(resumed)));
    if let Err(r) = deposited {
        return *r;
    }
    // Served: `units` units. The claim charges them with the service's voucher.
    let charge = c.unit_price.saturating_mul(units);
    let Some(channel) = payload["payload"]["channelId"]
        .as_str()
        .and_then(|v| Pubkey::from_str(v).ok())
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_payment",
            "payload.channelId",
        );
    };
    let expires_at = payload["payload"]["expiresAt"].as_i64().unwrap_or_default();
    let message = voucher_message(&channel, charge, expires_at);
    let voucher = solana_sdk::signer::Signer::sign_message(c.service_key.as_ref(), &message);
    payload["payload"]["type"] = "claim".into();
    payload["payload"]["voucherSignature"] = voucher.to_string().into();
    let mut charged = accepted.clone();
    charged.amount = charge.to_string();
    match settle(&s, &payload, &charged).await {
        Ok(body) => served(
            &body,
            json!({
                "report": "trust-gate demo: metered",
                "units": units,
                "charged": charge.to_string(),
                "ceiling": accepted.amount,
                "transaction": body["transaction"],
            }),
        ),
        Err(r) => *r,
    }
}

pub async fn session(
    State(s): App,
    resumed: Option<Extension<Resumed>>,
    headers: HeaderMap,
) -> Response {
    let c = &s.config;
    let url = c.session_url();
    let Some(value) = headers.get(x402::PAYMENT_SIGNATURE) else {
        let payer = match payer_of(&s, &headers) {
            Ok(p) => p,
            Err(r) => return *r,
        };
        let now = now_unix();
        let (network, fee_payer) = (&s.kind.network, &s.kind.fee_payer);
        let price = c.session_price;
        return offers(
            &s,
            url,
            vec![
                challenge::session_offer(c, network, fee_payer, &payer, now, price, true),
                challenge::signed(
                    c,
                    challenge::session_offer(c, network, fee_payer, &payer, now, price, false),
                    now,
                ),
            ],
        );
    };
    let schemes = [batch::SCHEME_GATED_BATCH, batch::SCHEME_BATCH];
    let (network, fee_payer) = (&s.kind.network, &s.kind.fee_payer);
    let plain = challenge::session_offer(
        c,
        network,
        fee_payer,
        &Pubkey::default(),
        0,
        c.session_price,
        false,
    );
    let (payload, accepted) = match payment(
        &s,
        value.to_str().unwrap_or_default(),
        &url,
        &schemes,
        &plain,
    ) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let kind: BatchPayload = match serde_json::from_value(payload["payload"].clone()) {
        Ok(k) => k,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_payment",
                format!("paymentPayload.payload is not a batch-settlement payload: {e}"),
            )
        }
    };
    match kind {
        BatchPayload::Deposit { .. } | BatchPayload::Voucher { .. } => {}
        BatchPayload::Refund { .. } => return refund(&s, payload, &accepted, kind).await,
        // The server's own payloads are never a client's payment.
        other => {
            return error(
                StatusCode::BAD_REQUEST,
                "payment_type_refused",
                format!(
                    "a client pays with a deposit or a voucher and ends its session with a refund; a {} is the service's own",
                    other.type_name()
                ),
            )
        }
    }
    let a = match settle_answer(&s, &payload, &accepted).await {
        Ok(a) => a,
        Err(r) => return *r,
    };
    if is_pending(&a.body) {
        return state::pending(&a.body, &a.headers);
    }
    if a.body["success"] != true {
        return corrective(&s, a, &accepted, url);
    }
    if let Err(r) = fresh(&a.body, state::resumed(resumed)) {
        return *r;
    }
    let body = a.body;
    // Served only for a payment of this request: a new voucher (or the deposit's first)
    // charging exactly the route's price.
    if body["extra"]["chargedAmount"].as_str() != Some(accepted.amount.as_str()) {
        return error(
            StatusCode::PAYMENT_REQUIRED,
            "charged_amount_mismatch",
            format!(
                "the facilitator charged {} for this request; its price is {}",
                body["extra"]["chargedAmount"], accepted.amount
            ),
        );
    }
    served(
        &body,
        json!({
            "report": "trust-gate demo: session",
            "payment": kind.type_name(),
            "charged": body["extra"]["chargedAmount"],
            "channelState": body["extra"]["channelState"],
            "transaction": body["transaction"],
        }),
    )
}

/// A client's refund: the service's close authorization of closing the channel at the
/// refund's voucher added (the service is the channel's receiver authorizer), sent to the
/// facilitator; the answer carries the settlement, never the resource.
async fn refund(
    s: &DemoState,
    mut payload: Value,
    accepted: &PaymentRequirements,
    mut refund: BatchPayload,
) -> Response {
    let valid_before =
        now_unix().saturating_add(i64::try_from(accepted.max_timeout_seconds).unwrap_or(i64::MAX));
    if let Err(e) = refund.authorize_close(
        &accepted.network,
        &s.kind.fee_payer,
        &s.config.service_key,
        valid_before,
    ) {
        return error(StatusCode::BAD_REQUEST, "invalid_payment", e.to_string());
    }
    payload["payload"] = json!(refund);
    match settle(s, &payload, accepted).await {
        Ok(body) => {
            let mut h = HeaderMap::new();
            if let Ok(encoded) = x402::encode_header(&body) {
                h.extend(header(x402::PAYMENT_RESPONSE, &encoded));
            }
            h.extend(header("cache-control", "no-store"));
            (
                StatusCode::OK,
                h,
                Json(json!({
                    "session": "closed",
                    "refunded": body["amount"],
                    "channelState": body["extra"]["channelState"],
                    "transaction": body["transaction"],
                })),
            )
                .into_response()
        }
        Err(r) => *r,
    }
}

/// A refused voucher: when the facilitator gives the session's state (a voucher that does not
/// add exactly the price to what was accepted: sent again, or after an answer lost), the
/// specification's corrective 402 (section 4.6), the offer's `extra` carrying the
/// `channelState` and the payer's own `voucherState`, from which its client resumes; else the
/// refusal as it came.
fn corrective(s: &DemoState, a: Answer, accepted: &PaymentRequirements, url: String) -> Response {
    let reason = a.body["errorReason"].as_str().unwrap_or_default();
    let state = &a.body["extra"];
    if reason != Reason::BatchCumulativeAmountMismatch
        || !state["channelState"].is_object()
        || !state["voucherState"].is_object()
    {
        return refused(a.body, &a.headers);
    }
    let mut offer = accepted.clone();
    for key in challenge::CORRECTIVE_FIELDS {
        offer.extra.insert(key.into(), state[key].clone());
    }
    // No PAYMENT-RESPONSE: a stock client reads the corrective PAYMENT-REQUIRED only when
    // the paid request's answer carries no settlement (@x402/core's `processPaymentResult`).
    challenge_response(PaymentRequired {
        x402_version: X402_VERSION,
        error: Some(reason.to_string()),
        resource: ResourceInfo {
            url,
            description: Some("trust-gate demo: metered payments on payment channels".into()),
            mime_type: Some("application/json".into()),
        },
        accepts: vec![offer],
        extensions: s.extensions(),
    })
}
