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
//!
//! [`request`]: the arguments and the offer chosen; [`result`]: the typed answer.

mod request;
mod result;

pub use request::{choose, PayArgs, Wanted};
pub use result::{
    ClosedSession, HoldbackTermsView, PayResult, PaymentView, ResponseView, RetiredSession,
    SpentSession, VoucherView,
};

use crate::args::pubkey;
use crate::context::Ctx;
use crate::egress::{EgressError, Target};
use crate::envelope::{codes, ToolError, ToolResult};
use crate::explain::DecisionReport;
use crate::pay_sessions::SessionKey;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use trust_gate_client::json::{Amount, Key};
use trust_gate_pay::channels::{ChannelPay, ChannelPayError, OpenSession, Paid};
use trust_gate_pay::exact::{self as pay, Body, First, PayError, PayOptions, PayOutcome, Request};
use trust_gate_x402::{PaymentRequired, PaymentRequirements};

/// The body characters returned when the call names no limit.
pub const DEFAULT_BODY_CHARS: usize = 4_000;
/// The most body characters a call may ask for.
pub const MAX_BODY_CHARS: usize = 100_000;
/// A new session's deposit, in requests' prices, when the call names none.
pub const DEFAULT_SESSION_REQUESTS: u64 = 10;
/// The largest deposit a call may ask for, in requests' prices.
pub const MAX_SESSION_REQUESTS: u64 = 1_000;

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
                    // The terms the settlement was composed from: the challenge's, signed by
                    // the service and held to the payee's tier by the strict gate.
                    holdback: trust_gate_x402::GateExtension::from_requirements(&requirements)
                        .ok()
                        .and_then(|g| g.holdback)
                        .as_ref()
                        .and_then(HoldbackTermsView::of),
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
    let request = request::request(&a, &target, egress.max_response_bytes)?;
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
