//! `gate_pay`: request an x402 resource and, on a 402, pay it through the gate as the
//! server's signer: trust-gate's settlement (`exact`), a gated `upto`, or a gated session
//! whose channel is kept for later requests to the same server ([`crate::pay_sessions`]).
//!
//! What the gate decides is a result, not an error: a Deny, RequireValidation or
//! RequireApproval comes back with its reason, meaning and remediation (and the pending id of
//! an approval), so the model can act on it. Errors are for what went wrong around the
//! payment: a URL the server may not request ([`crate::egress`]), an offer above
//! `max_amount` (refused before anything is signed), a resource that does not speak x402, a
//! payment sent and not accepted.

use crate::args::{self, pubkey};
use crate::context::Ctx;
use crate::egress::{EgressError, Target};
use crate::envelope::{codes, ToolError, ToolResult};
use crate::explain::DecisionReport;
use crate::pay_sessions::SessionKey;
use reqwest::Method;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use std::collections::BTreeMap;
use trust_gate_client::json::{Amount, Key};
use trust_gate_pay::channels::{ChannelPay, ChannelPayError, OpenSession, Paid};
use trust_gate_pay::exact::{self as pay, Body, First, PayError, PayOptions, PayOutcome, Request};
use trust_gate_x402::batch::SCHEME_GATED_BATCH;
use trust_gate_x402::upto::SCHEME_GATED_UPTO;
use trust_gate_x402::{PaymentRequired, PaymentRequirements, GATE_EXTENSION, SCHEME_TRUST_GATE};

/// The body characters returned when the call names no limit.
pub const DEFAULT_BODY_CHARS: usize = 4_000;
/// The most body characters a call may ask for.
pub const MAX_BODY_CHARS: usize = 100_000;
/// A new session's deposit, in requests' prices, when the call names none.
pub const DEFAULT_SESSION_REQUESTS: u64 = 10;
/// The largest deposit a call may ask for, in requests' prices.
pub const MAX_SESSION_REQUESTS: u64 = 1_000;
/// Request headers the tool sets itself or that belong to the connection.
const RESERVED_HEADERS: [&str; 9] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "payment-signature",
    "x-payment",
    "te",
    // The payer agent is the `payer_agent` argument, checked against the offer.
    "x-payer-agent",
];
/// The most request headers, and the longest value.
const MAX_HEADERS: usize = 32;
const MAX_HEADER_VALUE: usize = 8_192;
/// The largest request body.
const MAX_REQUEST_BODY: usize = 1 << 20;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PayArgs {
    /// The resource to request and pay for (an http or https URL).
    pub url: String,
    /// The HTTP method: GET (the default), POST, PUT, PATCH or DELETE.
    pub method: Option<String>,
    /// Request headers, name to value, sent with the first request and with the paid one.
    pub headers: Option<BTreeMap<String, String>>,
    /// The request body, as text.
    pub body: Option<String>,
    /// The most this call may pay or commit, in base units of the offer's asset, as decimal
    /// digits: an exact price, an upto ceiling, a new session's deposit or a voucher's price.
    /// Above it, nothing is signed.
    pub max_amount: Option<args::Amount>,
    /// The payer agent (MPL Core asset, base58), sent as X-Payer-Agent; the server's offer
    /// must name it. Default: the one the server names.
    pub payer_agent: Option<String>,
    /// "exact" (trust-gate's settlement), "upto" or "session" (the gated channel schemes).
    /// Default: the open session with this server, else exact, else upto, else a new session.
    pub scheme: Option<String>,
    /// A new session's deposit, in requests' prices (1..=1000, default 10).
    #[schemars(range(min = 1, max = 1000))]
    pub session_requests: Option<u64>,
    /// Close the sessions open with this server: this request carries their refund, and the
    /// unspent deposit goes back to the payer.
    pub close_session: Option<bool>,
    /// The most characters of a text body returned (default 4000, at most 100000).
    #[schemars(range(min = 1, max = 100000))]
    pub max_body_chars: Option<usize>,
}

/// Which scheme the call asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    Exact,
    Upto,
    Session,
}

impl Wanted {
    fn parse(v: &str) -> Result<Wanted, ToolError> {
        match v.trim() {
            "exact" | SCHEME_TRUST_GATE => Ok(Wanted::Exact),
            "upto" | SCHEME_GATED_UPTO => Ok(Wanted::Upto),
            "session" | "batch-settlement" | SCHEME_GATED_BATCH => Ok(Wanted::Session),
            other => Err(ToolError::input(
                "scheme",
                format!("{other:?} is not exact, upto or session"),
            )),
        }
    }

    fn scheme(self) -> &'static str {
        match self {
            Wanted::Exact => SCHEME_TRUST_GATE,
            Wanted::Upto => SCHEME_GATED_UPTO,
            Wanted::Session => SCHEME_GATED_BATCH,
        }
    }
}

/// The offer a challenge is paid with, or why none fits. `has_session` says whether a
/// session offer's terms have a session open. Pure, so the order is tested alone.
pub fn choose(
    required: &PaymentRequired,
    wanted: Option<Wanted>,
    has_session: impl Fn(&PaymentRequirements) -> bool,
) -> Result<(Wanted, PaymentRequirements), ToolError> {
    // Every scheme paid here goes through the gate: an offer without `extra.gate` is not one.
    let gated = |r: &PaymentRequirements| r.extra.contains_key(GATE_EXTENSION);
    let offer = |w: Wanted| {
        required
            .accepts
            .iter()
            .find(|r| r.scheme == w.scheme() && gated(r))
            .cloned()
            .map(|r| (w, r))
    };
    let chosen = match wanted {
        Some(w) => offer(w),
        None => required
            .accepts
            .iter()
            .find(|r| r.scheme == SCHEME_GATED_BATCH && gated(r) && has_session(r))
            .cloned()
            .map(|r| (Wanted::Session, r))
            .or_else(|| offer(Wanted::Exact))
            .or_else(|| offer(Wanted::Upto))
            .or_else(|| offer(Wanted::Session)),
    };
    chosen.ok_or_else(|| {
        let offered: Vec<&str> = required.accepts.iter().map(|r| r.scheme.as_str()).collect();
        let asked = wanted.map_or("none of trust-gate, trust-gate-upto or trust-gate-batch-settlement".to_string(), |w| w.scheme().to_string());
        ToolError::new(
            codes::RESOURCE_FAILURE,
            format!("the 402 offers {offered:?}: {asked} (a payment through the gate)"),
        )
        .hint("gate_pay pays only through the gate; a resource that offers no gated scheme is paid by another client")
    })
}

/// The request the call describes, its headers and body checked.
fn request(a: &PayArgs, target: &Target, max_body_bytes: usize) -> Result<Request, ToolError> {
    let method = match a.method.as_deref().map(str::trim) {
        None | Some("") => Method::GET,
        Some(m) => match m.to_ascii_uppercase().as_str() {
            "GET" => Method::GET,
            "POST" => Method::POST,
            "PUT" => Method::PUT,
            "PATCH" => Method::PATCH,
            "DELETE" => Method::DELETE,
            _ => {
                return Err(ToolError::input(
                    "method",
                    format!("{m:?} is not GET, POST, PUT, PATCH or DELETE"),
                ))
            }
        },
    };
    let headers = a.headers.clone().unwrap_or_default();
    if headers.len() > MAX_HEADERS {
        return Err(ToolError::input(
            "headers",
            format!("{} headers; at most {MAX_HEADERS}", headers.len()),
        ));
    }
    let mut checked = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let field = format!("headers.{name}");
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(ToolError::input(&field, "not an HTTP header name"));
        }
        if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(ToolError::input(
                &field,
                "set by the tool or the connection, not by the call",
            ));
        }
        if value.len() > MAX_HEADER_VALUE || reqwest::header::HeaderValue::from_str(&value).is_err()
        {
            return Err(ToolError::input(
                &field,
                format!("not a header value of at most {MAX_HEADER_VALUE} visible ASCII bytes"),
            ));
        }
        checked.push((name, value));
    }
    let body = a.body.as_ref().map(|b| b.as_bytes().to_vec());
    if body.as_ref().is_some_and(|b| b.len() > MAX_REQUEST_BODY) {
        return Err(ToolError::input(
            "body",
            format!("larger than {MAX_REQUEST_BODY} bytes"),
        ));
    }
    Ok(Request {
        method,
        url: target.url.to_string(),
        headers: checked,
        body,
        max_body_bytes,
    })
}

/// The resource's answer as the model sees it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResponseView {
    /// The HTTP status of the answer returned.
    pub status: u16,
    /// Its Content-Type.
    pub content_type: Option<String>,
    /// A text body, cut at bodyLimitChars characters (null for a binary body).
    pub body: Option<String>,
    /// Whether the body is binary (not UTF-8), and so not returned.
    pub binary: bool,
    /// The most characters returned.
    pub body_limit_chars: usize,
    /// Whether the body is longer than what is returned.
    pub body_truncated: bool,
    /// The bytes read.
    pub body_bytes_read: usize,
    /// The body's full length, when known (not when cut at the response cap without a
    /// Content-Length).
    pub body_length: Option<u64>,
    /// Whether the answer was cut at the server's response cap.
    pub response_capped: bool,
}

impl ResponseView {
    /// `body` cut at `max_chars`, with its full length.
    pub fn new(status: u16, body: &Body, max_chars: usize) -> ResponseView {
        let (text, cut) = match body.text() {
            Some(t) => {
                let kept: String = t.chars().take(max_chars).collect();
                let cut = kept.len() < t.len();
                (Some(kept), cut)
            }
            None => (None, false),
        };
        ResponseView {
            status,
            content_type: body.content_type.clone(),
            binary: text.is_none() && !body.bytes.is_empty(),
            body: text,
            body_limit_chars: max_chars,
            body_truncated: cut || !body.complete,
            body_bytes_read: body.bytes.len(),
            body_length: body.length,
            response_capped: !body.complete,
        }
    }
}

/// A session's last voucher.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VoucherView {
    /// The cumulative amount it lets the server claim.
    pub cumulative: Amount,
}

/// A session that was spent before this request, retired.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpentSession {
    /// Its channel.
    pub channel: Key,
    /// What its vouchers add up to.
    pub charged: Amount,
    /// When its unspent deposit comes back: with close_session.
    pub refund: String,
}

/// What a call paid or was asked to pay. Each scheme fills its own fields: `exact` the
/// price and the settlement's receipt; `upto` the ceiling and the charge; a session its
/// channel, price, deposit and voucher.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentView {
    /// exact (and a held payment): the price, atomic units of the asset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// upto: the ceiling escrowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<String>,
    /// upto: what the resource charged of the ceiling (the rest went back to the payer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged: Option<Amount>,
    /// The offer's asset (the token mint).
    pub asset: String,
    /// The offer's payTo.
    pub pay_to: String,
    /// exact: the settlement's network (CAIP-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// exact: who paid, as the settlement reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payer: Option<String>,
    /// The transaction on chain (exact: the settlement; upto: the claim; a session: its
    /// open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// exact: the payment id hash (gate_get_feedback_log reads the receipt by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_id_hash: Option<String>,
    /// exact: the settling facilitator (its fee payer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facilitator: Option<String>,
    /// exact: the receipt's URL at the configured facilitator, when it settled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_url: Option<String>,
    /// A session: its channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<Key>,
    /// A session: whether this request opened it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<bool>,
    /// A session: the price of a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Amount>,
    /// A session: its deposit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposit: Option<Amount>,
    /// A session: the voucher this request carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voucher: Option<VoucherView>,
    /// A session: what is left of the deposit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<Amount>,
    /// A session opened for this request: the one it replaced, spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_session: Option<SpentSession>,
}

/// A session this call retired: the server did not take its voucher.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetiredSession {
    /// Its channel.
    pub channel: Key,
    /// Always true: the next request opens another, close_session sends its refund.
    pub retired: bool,
}

/// A session close_session ended, or tried to.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClosedSession {
    /// Its channel.
    pub channel: Key,
    /// Its deposit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposit: Option<Amount>,
    /// What its vouchers add up to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged: Option<Amount>,
    /// What went back to the payer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refunded: Option<Amount>,
    /// The refund's transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The answer to the request that carried the refund.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseView>,
    /// Why it could not be closed (kept, for the next close_session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What `gate_pay` answers: whether it paid, the gate's decision, what was paid and the
/// resource's answer; or, with close_session, the sessions closed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayResult {
    /// Whether this call paid.
    pub paid: bool,
    /// The scheme paid or held (trust-gate, trust-gate-upto,
    /// trust-gate-batch-settlement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// The gate's decision (absent when the resource asked for no payment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionReport>,
    /// What was paid, or held for an approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment: Option<PaymentView>,
    /// The resource's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseView>,
    /// The session this call retired, when the server refused its voucher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<RetiredSession>,
    /// close_session: the sessions closed (or kept, with their error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_sessions: Option<Vec<ClosedSession>>,
}

impl From<EgressError> for ToolError {
    fn from(e: EgressError) -> Self {
        match e {
            EgressError::Invalid(why) => ToolError::input("url", why),
            EgressError::Refused(_) => ToolError::new(codes::URL_REFUSED, e.to_string()).hint(
                "gate_pay requests public addresses only; the server's operator may allow others with MCP_PAY_ALLOW (HOST, HOST:PORT or ADDR/PREFIX, comma-separated)",
            ),
            EgressError::Client(_) => ToolError::new(codes::INTERNAL, e.to_string()),
        }
    }
}

fn pay_error(e: PayError) -> ToolError {
    match e {
        PayError::Http { .. } | PayError::Challenge { .. } => {
            ToolError::new(codes::RESOURCE_FAILURE, e.to_string())
        }
        PayError::AboveMax { .. } => ToolError::new(codes::AMOUNT_ABOVE_MAX, e.to_string())
            .hint("raise max_amount if the price is expected, or pay less (an upto ceiling, a smaller session_requests)"),
        PayError::OtherPayer { .. } => ToolError::input("payer_agent", e.to_string()),
        PayError::Client(c) => ToolError::from(c),
    }
}

/// A channel payment that failed: the gate's decision when it refused (a result), else the
/// error.
fn channel_error(e: ChannelPayError, max_chars: usize) -> ToolResult<PayResult> {
    match e {
        ChannelPayError::Refused(r) => match r.decision {
            Some(decision) => Ok(PayResult {
                paid: false,
                decision: Some(DecisionReport {
                    approval_id: r.approval_id,
                    ..DecisionReport::new(&decision)
                }),
                response: Some(ResponseView::new(r.status, &r.body, max_chars)),
                ..Default::default()
            }),
            None => Err(ToolError::new(
                codes::PAYMENT_FAILED,
                format!("{} was not accepted (HTTP {})", r.what, r.status),
            )
            .cause(r.body.to_string())),
        },
        ChannelPayError::Http { .. } | ChannelPayError::Offer { .. } => {
            Err(ToolError::new(codes::RESOURCE_FAILURE, e.to_string()))
        }
        ChannelPayError::Check(p) => Err(pay_error(p)),
    }
}

/// Everything one call needs.
struct Call<'a> {
    ctx: &'a Ctx,
    http: reqwest::Client,
    request: Request,
    target: Target,
    signer: &'a Keypair,
    payer_agent: Option<Pubkey>,
    max_amount: Option<u64>,
    max_chars: usize,
}

impl Call<'_> {
    fn channel(&self) -> ChannelPay<'_> {
        ChannelPay {
            http: &self.http,
            rpc: &self.ctx.rpc,
            overrides: self.ctx.config.overrides,
            request: self.request.clone(),
            payer_agent: self.payer_agent,
            signer: self.signer,
            ungated: false,
            max_amount: self.max_amount,
        }
    }

    /// A channel payment paid: `payment` as the scheme fills it.
    fn paid(&self, scheme: &str, paid: &Paid, payment: PaymentView) -> PayResult {
        PayResult {
            paid: true,
            scheme: Some(scheme.into()),
            decision: Some(DecisionReport::of_kind("Allow")),
            payment: Some(payment),
            response: Some(ResponseView::new(200, &paid.body, self.max_chars)),
            ..Default::default()
        }
    }

    /// The receipt URL of a settlement, at the configured facilitator (`MCP_FACILITATOR_URL`)
    /// when it is the one that settled it: its key (`MCP_DEFAULT_FACILITATOR`) is the offer's
    /// fee payer. Another facilitator's records are not there.
    fn receipt_url(&self, fee_payer: Option<&str>, payment_id_hash: &str) -> Option<String> {
        let c = &self.ctx.config;
        let ours = c.default_facilitator.map(|k| k.to_string());
        match (c.facilitator_url.as_deref(), ours.as_deref(), fee_payer) {
            (Some(url), Some(ours), Some(payer)) if ours == payer => Some(format!(
                "{}/receipt/{payment_id_hash}",
                url.trim_end_matches('/')
            )),
            _ => None,
        }
    }

    async fn exact(&self, required: &PaymentRequired) -> ToolResult<PayResult> {
        let opts = PayOptions {
            request: self.request.clone(),
            payer_agent: self.payer_agent,
            signer: self.signer,
            overrides: self.ctx.config.overrides,
            compute_budget: Default::default(),
            max_amount: self.max_amount,
        };
        let outcome = pay::pay_challenge(&self.http, &self.ctx.rpc, &opts, required)
            .await
            .map_err(pay_error)?;
        self.outcome(outcome)
    }

    fn outcome(&self, outcome: PayOutcome) -> ToolResult<PayResult> {
        let response = |status, body: &Body| Some(ResponseView::new(status, body, self.max_chars));
        Ok(match outcome {
            PayOutcome::NotRequired { status, body } => PayResult {
                response: response(status, &body),
                ..Default::default()
            },
            PayOutcome::Refused {
                status,
                decision,
                reason_code,
                reason_name,
                capability,
                body,
            } => PayResult {
                decision: Some(match decision.as_str() {
                    "Deny" => DecisionReport::deny(reason_code, reason_name),
                    kind => DecisionReport {
                        capability_hash: capability,
                        ..DecisionReport::of_kind(kind)
                    },
                }),
                response: response(status, &body),
                ..Default::default()
            },
            PayOutcome::Held {
                status,
                approval_id,
                requirements,
                body,
            } => PayResult {
                scheme: Some(requirements.scheme),
                decision: Some(DecisionReport {
                    approval_id: Some(approval_id),
                    ..DecisionReport::of_kind("RequireApproval")
                }),
                payment: Some(PaymentView {
                    amount: Some(requirements.amount),
                    asset: requirements.asset,
                    pay_to: requirements.pay_to,
                    ..Default::default()
                }),
                response: response(status, &body),
                ..Default::default()
            },
            PayOutcome::Paid {
                receipt,
                payment_id_hash,
                response: settled,
                requirements,
                body,
            } => PayResult {
                paid: true,
                scheme: Some(requirements.scheme.clone()),
                decision: Some(DecisionReport::of_kind("Allow")),
                payment: Some(PaymentView {
                    amount: Some(requirements.amount.clone()),
                    asset: requirements.asset.clone(),
                    pay_to: requirements.pay_to.clone(),
                    network: Some(settled.network),
                    payer: settled.payer,
                    signature: Some(receipt),
                    // The settling facilitator: gate_get_feedback_log reads the receipt with it.
                    facilitator: requirements.fee_payer().map(str::to_string),
                    receipt_url: self.receipt_url(requirements.fee_payer(), &payment_id_hash),
                    payment_id_hash: Some(payment_id_hash),
                    ..Default::default()
                }),
                response: response(200, &body),
                ..Default::default()
            },
            PayOutcome::Failed {
                status,
                response,
                payment_id_hash,
                body,
            } => {
                let why = response
                    .and_then(|r| {
                        r.error_reason
                            .map(|e| format!("{e}: {}", r.error_message.unwrap_or_default()))
                    })
                    .unwrap_or_else(|| body.to_string());
                // The server holds the signed payment: say what to look up, not that nothing
                // settled.
                return Err(ToolError::new(
                    codes::PAYMENT_FAILED,
                    format!(
                        "the payment was sent and the resource did not confirm it (HTTP {status}); payment id hash {payment_id_hash}"
                    ),
                )
                .hint(format!(
                    "gate_get_feedback_log with payment_id_hash {payment_id_hash} says whether it settled; do not pay again before"
                ))
                .cause(why));
            }
        })
    }

    async fn upto(
        &self,
        required: &PaymentRequired,
        offer: &PaymentRequirements,
    ) -> ToolResult<PayResult> {
        match self.channel().upto_offer(required, offer).await {
            Ok(paid) => Ok(self.paid(
                &offer.scheme,
                &paid,
                PaymentView {
                    ceiling: Some(offer.amount.clone()),
                    asset: offer.asset.clone(),
                    pay_to: offer.pay_to.clone(),
                    charged: paid.amount().map(Amount),
                    signature: paid.transaction().map(str::to_string),
                    ..Default::default()
                },
            )),
            Err(e) => channel_error(e, self.max_chars),
        }
    }

    /// Pays with this server's session, opening one first when there is none in use (its
    /// deposit spent or its voucher refused: that one is retired, and its refund waits for
    /// `close_session`, so that this request is sent once).
    async fn session(
        &self,
        required: &PaymentRequired,
        offer: &PaymentRequirements,
        deposit_requests: u64,
    ) -> ToolResult<PayResult> {
        let price: u64 = offer.amount.parse().map_err(|_| {
            ToolError::new(
                codes::RESOURCE_FAILURE,
                format!("the session offer's amount {:?} is not a u64", offer.amount),
            )
        })?;
        let key = SessionKey::of(&self.target.origin, offer);
        let channel = self.channel();
        let slot = self.ctx.pay_sessions.slot(&key);
        let mut slot = slot.lock().await;
        let mut previous = None;
        if let Some(s) = slot.active.as_mut() {
            let fits = s
                .session
                .charged
                .checked_add(price)
                .is_some_and(|c| c <= s.session.deposit);
            if fits {
                let nth = s.session.charged / price.max(1) + 1;
                match channel.voucher(s, required, offer, nth).await {
                    Ok(paid) => {
                        return Ok(self.paid(&offer.scheme, &paid, session_view(s, price, false)))
                    }
                    Err(e) => {
                        // The server did not take the voucher: the session is retired (the
                        // next request opens another), its refund left to close_session.
                        let retired = slot.active.take().expect("active");
                        let ch = retired.session.channel;
                        slot.retired.push(retired);
                        return match channel_error(e, self.max_chars) {
                            Ok(r) => Ok(PayResult {
                                session: Some(RetiredSession {
                                    channel: Key(ch),
                                    retired: true,
                                }),
                                ..r
                            }),
                            Err(e) => Err(e.hint(format!(
                                "the session's channel {ch} is retired: close_session sends its refund; the next request opens another"
                            ))),
                        };
                    }
                }
            }
            // Spent: retired, and a new channel for this request.
            let spent = slot.active.take().expect("active");
            previous = Some(SpentSession {
                channel: Key(spent.session.channel),
                charged: Amount(spent.session.charged),
                refund: "waits for close_session".into(),
            });
            slot.retired.push(spent);
        }
        match channel
            .open_session(required, offer, deposit_requests)
            .await
        {
            Ok((s, paid)) => {
                let payment = PaymentView {
                    signature: paid.transaction().map(str::to_string),
                    previous_session: previous,
                    ..session_view(&s, price, true)
                };
                let r = self.paid(&offer.scheme, &paid, payment);
                slot.active = Some(s);
                Ok(r)
            }
            Err(e) => channel_error(e, self.max_chars),
        }
    }

    /// Closes the sessions open with this server (those in use and those retired), sending
    /// each refund with this request.
    async fn close_sessions(&self) -> ToolResult<PayResult> {
        let channel = self.channel();
        let payer = self.payer_agent.map(|p| p.to_string());
        let sessions = &self.ctx.pay_sessions;
        let mut closed = Vec::new();
        for (key, slot) in sessions.of_origin(&self.target.origin, payer.as_deref()) {
            let mut slot = slot.lock().await;
            let all: Vec<OpenSession> = slot
                .active
                .take()
                .into_iter()
                .chain(slot.retired.drain(..))
                .collect();
            for s in all {
                let p = &s.session;
                match channel.close(&s).await {
                    Ok(paid) => closed.push(ClosedSession {
                        channel: Key(p.channel),
                        deposit: Some(Amount(p.deposit)),
                        charged: Some(Amount(p.charged)),
                        refunded: Some(Amount(p.deposit.saturating_sub(p.charged))),
                        signature: paid.transaction().map(str::to_string),
                        response: Some(ResponseView::new(200, &paid.body, self.max_chars)),
                        error: None,
                    }),
                    Err(e) => {
                        // Kept, to try again with the next close_session.
                        closed.push(ClosedSession {
                            channel: Key(p.channel),
                            deposit: None,
                            charged: None,
                            refunded: None,
                            signature: None,
                            response: None,
                            error: Some(e.to_string()),
                        });
                        slot.retired.push(s);
                    }
                }
            }
            drop(slot);
            sessions.prune(&key);
        }
        if closed.is_empty() {
            return Err(ToolError::new(
                codes::NOT_FOUND,
                format!("no session is open with {}", self.target.origin),
            ));
        }
        Ok(PayResult {
            closed_sessions: Some(closed),
            ..Default::default()
        })
    }
}

/// A session's payment: its channel, price, deposit and the voucher this request carried.
fn session_view(s: &OpenSession, price: u64, opened: bool) -> PaymentView {
    let p = &s.session;
    PaymentView {
        channel: Some(Key(p.channel)),
        opened: Some(opened),
        asset: s.offer.asset.clone(),
        pay_to: s.offer.pay_to.clone(),
        price: Some(Amount(price)),
        deposit: Some(Amount(p.deposit)),
        voucher: Some(VoucherView {
            cumulative: Amount(p.charged),
        }),
        remaining: Some(Amount(p.deposit.saturating_sub(p.charged))),
        ..Default::default()
    }
}

pub async fn pay(ctx: &Ctx, a: PayArgs) -> ToolResult<PayResult> {
    let signer = ctx.signer("gate_pay")?;
    let max_amount = a
        .max_amount
        .as_ref()
        .map(|v| v.value("max_amount"))
        .transpose()?;
    let payer_agent = a
        .payer_agent
        .as_deref()
        .map(|v| pubkey("payer_agent", v))
        .transpose()?;
    let wanted = a.scheme.as_deref().map(Wanted::parse).transpose()?;
    let deposit_requests = a.session_requests.unwrap_or(DEFAULT_SESSION_REQUESTS);
    if !(1..=MAX_SESSION_REQUESTS).contains(&deposit_requests) {
        return Err(ToolError::input(
            "session_requests",
            format!("{deposit_requests}: must be 1..={MAX_SESSION_REQUESTS}"),
        ));
    }
    let max_chars = a.max_body_chars.unwrap_or(DEFAULT_BODY_CHARS);
    if !(1..=MAX_BODY_CHARS).contains(&max_chars) {
        return Err(ToolError::input(
            "max_body_chars",
            format!("{max_chars}: must be 1..={MAX_BODY_CHARS}"),
        ));
    }
    let egress = ctx.config.egress();
    let target = egress.check(&a.url).await?;
    let request = request(&a, &target, egress.max_response_bytes)?;
    let call = Call {
        ctx,
        http: egress.client()?,
        request,
        target,
        signer,
        payer_agent,
        max_amount,
        max_chars,
    };
    if a.close_session == Some(true) {
        return call.close_sessions().await;
    }
    let first = pay::first(
        &call.http,
        &call.request.clone().with_payer_agent(payer_agent),
    )
    .await
    .map_err(pay_error)?;
    let required = match first {
        First::Answered(outcome) => return call.outcome(*outcome),
        First::Challenge(required) => required,
    };
    let (chosen, offer) = choose(&required, wanted, |r| {
        ctx.pay_sessions
            .has_active(&SessionKey::of(&call.target.origin, r))
    })?;
    let network = pay::network_of(&offer.network);
    if network != ctx.config.network {
        return Err(ToolError::new(
            codes::RESOURCE_FAILURE,
            format!(
                "the offer is on {} ({}); this server pays on {}",
                network.name(),
                offer.network,
                ctx.config.network.name()
            ),
        ));
    }
    match chosen {
        Wanted::Exact => call.exact(&required).await,
        Wanted::Upto => call.upto(&required, &offer).await,
        Wanted::Session => call.session(&required, &offer, deposit_requests).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};
    use trust_gate_x402::ResourceInfo;

    fn offer(scheme: &str, gate: bool) -> PaymentRequirements {
        let mut extra = Map::new();
        if gate {
            extra.insert("gate".into(), json!({}));
        }
        serde_json::from_value(json!({
            "scheme": scheme, "network": "solana:local", "amount": "1", "asset": "A",
            "payTo": "P", "maxTimeoutSeconds": 60, "extra": extra,
        }))
        .unwrap()
    }

    fn required(offers: Vec<PaymentRequirements>) -> PaymentRequired {
        PaymentRequired {
            x402_version: 2,
            error: None,
            resource: ResourceInfo {
                url: "http://x/".into(),
                description: None,
                mime_type: None,
            },
            accepts: offers,
            extensions: None,
        }
    }

    #[test]
    fn the_offer_is_an_open_session_then_exact_then_upto_then_a_new_session() {
        let all = required(vec![
            offer("exact", false),
            offer(SCHEME_GATED_BATCH, true),
            offer(SCHEME_GATED_UPTO, true),
            offer(SCHEME_TRUST_GATE, true),
        ]);
        let pick = |r: &PaymentRequired, w, open: bool| choose(r, w, |_| open).map(|(w, _)| w);
        assert_eq!(pick(&all, None, false).unwrap(), Wanted::Exact);
        assert_eq!(pick(&all, None, true).unwrap(), Wanted::Session);
        assert_eq!(pick(&all, Some(Wanted::Upto), true).unwrap(), Wanted::Upto);
        let channels = required(vec![
            offer(SCHEME_GATED_BATCH, true),
            offer(SCHEME_GATED_UPTO, true),
        ]);
        assert_eq!(pick(&channels, None, false).unwrap(), Wanted::Upto);
        // A trust-gate offer without extra.gate is no settlement through the gate.
        let plain = required(vec![
            offer("exact", false),
            offer(SCHEME_TRUST_GATE, false),
            offer("upto", false),
        ]);
        let e = pick(&plain, None, false).unwrap_err();
        assert_eq!(e.error_code, codes::RESOURCE_FAILURE);
        assert!(e.message.contains("\"exact\""), "{e:?}");
        assert!(pick(&channels, Some(Wanted::Exact), false).is_err());
        // Gated schemes' names without the extension: never paid (no policy would run).
        let ungated = required(vec![
            offer(SCHEME_GATED_BATCH, false),
            offer(SCHEME_GATED_UPTO, false),
        ]);
        assert!(pick(&ungated, None, true).is_err());
        assert!(pick(&ungated, Some(Wanted::Session), true).is_err());
    }

    #[test]
    fn a_body_is_cut_at_the_stated_size_with_its_length() {
        let body = Body {
            content_type: Some("text/plain".into()),
            bytes: "héllo wörld".as_bytes().to_vec(),
            complete: true,
            length: Some(13),
        };
        let v = ResponseView::new(200, &body, 5);
        assert_eq!(v.body.as_deref(), Some("héllo"));
        assert!(v.body_truncated);
        assert_eq!(v.body_length, Some(13));
        assert!(!ResponseView::new(200, &body, 100).body_truncated);
        let capped = Body {
            complete: false,
            length: None,
            ..body.clone()
        };
        let v = ResponseView::new(200, &capped, 100);
        assert!(v.body_truncated);
        assert!(v.response_capped);
        assert_eq!(v.body_length, None);
        let binary = Body {
            bytes: vec![0xff, 0xfe, 0],
            ..body
        };
        let v = ResponseView::new(200, &binary, 100);
        assert_eq!(v.body, None);
        assert!(v.binary);
    }

    #[test]
    fn a_deny_carries_its_meaning_and_remediation() {
        let v = DecisionReport::deny(Some(6), Some("CounterpartyTierBelowMin".into()));
        assert_eq!(v.category.as_deref(), Some("counterparty"));
        assert!(v.remediation.unwrap().len() > 10);
        let a = DecisionReport {
            approval_id: Some("ID".into()),
            ..DecisionReport::of_kind("RequireApproval")
        };
        assert_eq!(a.gate_error_code, Some(6077));
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["approvalId"], "ID");
        assert_eq!(v["kind"], "RequireApproval");
    }
}
