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

use crate::args::{pubkey, Amount};
use crate::context::Ctx;
use crate::egress::{EgressError, Target};
use crate::envelope::{codes, ToolError, ToolResult};
use crate::explain;
use crate::pay_sessions::SessionKey;
use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use std::collections::BTreeMap;
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
    pub max_amount: Option<Amount>,
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

/// An answer's body as the model sees it: text cut at `max_chars`, with the full length.
pub fn response_view(status: u16, body: &Body, max_chars: usize) -> Value {
    let (text, cut) = match body.text() {
        Some(t) => {
            let kept: String = t.chars().take(max_chars).collect();
            let cut = kept.len() < t.len();
            (Some(kept), cut)
        }
        None => (None, false),
    };
    json!({
        "status": status,
        "contentType": body.content_type,
        "body": text,
        "binary": text.is_none() && !body.bytes.is_empty(),
        // The characters returned, and whether the body is longer than them.
        "bodyLimitChars": max_chars,
        "bodyTruncated": cut || !body.complete,
        // Bytes read, and the body's full length when known (not when cut at the response
        // cap without a Content-Length).
        "bodyBytesRead": body.bytes.len(),
        "bodyLength": body.length,
        "responseCapped": !body.complete,
    })
}

/// The gate's decision as the model sees it, with what it means and what to do.
pub fn decision_view(
    kind: &str,
    reason_code: Option<u8>,
    reason_name: Option<&str>,
    capability: Option<&str>,
    approval_id: Option<&str>,
) -> Value {
    let mut v = json!({"kind": kind});
    if kind == "Deny" {
        v["reasonCode"] = json!(reason_code);
        v["reasonName"] = json!(reason_name);
        if let Some(e) = reason_code.and_then(explain::explain) {
            v["category"] = json!(e.category);
            v["meaning"] = json!(e.meaning);
            v["remediation"] = json!(e.remediation);
        }
    } else if let Some(e) = explain::explain_decision(kind) {
        v["meaning"] = json!(e.meaning);
        v["remediation"] = json!(e.remediation);
        v["gateErrorCode"] = json!(e.gate_error_code);
    }
    if let Some(c) = capability {
        v["capability"] = json!(c);
    }
    if let Some(id) = approval_id {
        v["approvalId"] = json!(id);
    }
    v
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
fn channel_error(e: ChannelPayError) -> Result<Value, ToolError> {
    match e {
        ChannelPayError::Refused { body, status, what } => {
            let d = &body["decision"];
            match d["kind"].as_str() {
                Some(kind) if kind != "Allow" => Ok(json!({
                    "paid": false,
                    "decision": decision_view(
                        kind,
                        d["reasonCode"].as_u64().and_then(|c| u8::try_from(c).ok()),
                        d["reasonName"].as_str(),
                        d["capabilityHash"].as_str(),
                        body["approval"]["id"].as_str(),
                    ),
                    "response": {"status": status, "body": body},
                })),
                _ => Err(ToolError::new(
                    codes::PAYMENT_FAILED,
                    format!("{what} was not accepted (HTTP {status})"),
                )
                .cause(body.to_string())),
            }
        }
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

    fn paid_view(&self, scheme: &str, paid: &Paid, payment: Value) -> Value {
        json!({
            "paid": true,
            "scheme": scheme,
            "decision": {"kind": "Allow"},
            "payment": payment,
            "settlement": paid.settlement,
            "response": response_view(200, &paid.body, self.max_chars),
        })
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

    async fn exact(&self, required: &PaymentRequired) -> ToolResult {
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

    fn outcome(&self, outcome: PayOutcome) -> ToolResult {
        Ok(match outcome {
            PayOutcome::NotRequired { status, body } => json!({
                "paid": false,
                "scheme": null,
                "decision": null,
                "response": response_view(status, &body, self.max_chars),
            }),
            PayOutcome::Refused {
                status,
                decision,
                reason_code,
                reason_name,
                capability,
                body,
            } => json!({
                "paid": false,
                "decision": decision_view(&decision, reason_code, reason_name.as_deref(), capability.as_deref(), None),
                "response": response_view(status, &body, self.max_chars),
            }),
            PayOutcome::Held {
                status,
                approval_id,
                requirements,
                body,
            } => json!({
                "paid": false,
                "scheme": requirements.scheme,
                "decision": decision_view("RequireApproval", None, None, None, Some(&approval_id)),
                "payment": {"amount": requirements.amount, "asset": requirements.asset, "payTo": requirements.pay_to},
                "response": response_view(status, &body, self.max_chars),
            }),
            PayOutcome::Paid {
                receipt,
                payment_id_hash,
                response,
                requirements,
                body,
            } => json!({
                "paid": true,
                "scheme": requirements.scheme,
                "decision": {"kind": "Allow"},
                "payment": {
                    "amount": requirements.amount,
                    "asset": requirements.asset,
                    "payTo": requirements.pay_to,
                    "network": response.network,
                    "payer": response.payer,
                    "signature": receipt,
                    "paymentIdHash": payment_id_hash,
                    // The settling facilitator: gate_get_feedback_log reads the receipt with it.
                    "facilitator": requirements.fee_payer(),
                    "receiptUrl": self.receipt_url(requirements.fee_payer(), &payment_id_hash),
                },
                "response": response_view(200, &body, self.max_chars),
            }),
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

    async fn upto(&self, required: &PaymentRequired, offer: &PaymentRequirements) -> ToolResult {
        match self.channel().upto_offer(required, offer).await {
            Ok(paid) => Ok(self.paid_view(
                &offer.scheme,
                &paid,
                json!({
                    "ceiling": offer.amount,
                    "asset": offer.asset,
                    "payTo": offer.pay_to,
                    "charged": paid.settlement.get("amount"),
                    "signature": paid.settlement.get("transaction"),
                }),
            )),
            Err(e) => channel_error(e),
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
    ) -> ToolResult {
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
        let mut previous = Value::Null;
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
                        return Ok(self.paid_view(
                            &offer.scheme,
                            &paid,
                            session_view(s, price, false),
                        ))
                    }
                    Err(e) => {
                        // The server did not take the voucher: the session is retired (the
                        // next request opens another), its refund left to close_session.
                        let retired = slot.active.take().expect("active");
                        let ch = retired.session.channel.to_string();
                        slot.retired.push(retired);
                        return match channel_error(e) {
                            Ok(mut v) => {
                                v["session"] = json!({"channel": ch, "retired": true});
                                Ok(v)
                            }
                            Err(e) => Err(e.hint(format!(
                                "the session's channel {ch} is retired: close_session sends its refund; the next request opens another"
                            ))),
                        };
                    }
                }
            }
            // Spent: retired, and a new channel for this request.
            let spent = slot.active.take().expect("active");
            previous = json!({
                "channel": spent.session.channel.to_string(),
                "charged": spent.session.charged.to_string(),
                "refund": "waits for close_session",
            });
            slot.retired.push(spent);
        }
        match channel
            .open_session(required, offer, deposit_requests)
            .await
        {
            Ok((s, paid)) => {
                let mut v = self.paid_view(&offer.scheme, &paid, session_view(&s, price, true));
                v["payment"]["signature"] = paid
                    .settlement
                    .get("transaction")
                    .cloned()
                    .unwrap_or_default();
                v["payment"]["previousSession"] = previous;
                slot.active = Some(s);
                Ok(v)
            }
            Err(e) => channel_error(e),
        }
    }

    /// Closes the sessions open with this server (those in use and those retired), sending
    /// each refund with this request.
    async fn close_sessions(&self) -> ToolResult {
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
                match channel.close(&s).await {
                    Ok(paid) => closed.push(json!({
                        "channel": s.session.channel.to_string(),
                        "deposit": s.session.deposit.to_string(),
                        "charged": s.session.charged.to_string(),
                        "refunded": s.session.deposit.saturating_sub(s.session.charged).to_string(),
                        "signature": paid.settlement.get("transaction"),
                        "response": response_view(200, &paid.body, self.max_chars),
                    })),
                    Err(e) => {
                        // Kept, to try again with the next close_session.
                        closed.push(json!({
                            "channel": s.session.channel.to_string(),
                            "error": e.to_string(),
                        }));
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
        Ok(json!({"paid": false, "closedSessions": closed}))
    }
}

fn session_view(s: &OpenSession, price: u64, opened: bool) -> Value {
    let p = &s.session;
    json!({
        "channel": p.channel.to_string(),
        "opened": opened,
        "asset": s.offer.asset,
        "payTo": s.offer.pay_to,
        "price": price.to_string(),
        "deposit": p.deposit.to_string(),
        // The voucher this request carried: the cumulative amount it lets the server claim.
        "voucher": {"cumulative": p.charged.to_string()},
        "remaining": p.deposit.saturating_sub(p.charged).to_string(),
    })
}

pub async fn pay(ctx: &Ctx, a: PayArgs) -> ToolResult {
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
    use serde_json::Map;
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
        let v = response_view(200, &body, 5);
        assert_eq!(v["body"], "héllo");
        assert_eq!(v["bodyTruncated"], true);
        assert_eq!(v["bodyLength"], 13);
        let whole = response_view(200, &body, 100);
        assert_eq!(whole["bodyTruncated"], false);
        let capped = Body {
            complete: false,
            length: None,
            ..body.clone()
        };
        let v = response_view(200, &capped, 100);
        assert_eq!(v["bodyTruncated"], true);
        assert_eq!(v["responseCapped"], true);
        assert_eq!(v["bodyLength"], Value::Null);
        let binary = Body {
            bytes: vec![0xff, 0xfe, 0],
            ..body
        };
        let v = response_view(200, &binary, 100);
        assert_eq!(v["body"], Value::Null);
        assert_eq!(v["binary"], true);
    }

    #[test]
    fn a_deny_carries_its_meaning_and_remediation() {
        let v = decision_view(
            "Deny",
            Some(6),
            Some("CounterpartyTierBelowMin"),
            None,
            None,
        );
        assert_eq!(v["category"], "counterparty");
        assert!(v["remediation"].as_str().unwrap().len() > 10);
        let a = decision_view("RequireApproval", None, None, None, Some("ID"));
        assert_eq!(a["approvalId"], "ID");
        assert_eq!(a["gateErrorCode"], 6077);
    }
}
