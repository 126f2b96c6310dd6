//! The paying client of the channel schemes, behind `trust-gate pay --scheme upto|
//! batch-settlement` and the MCP tool `gate_pay`: read the 402, pick the gated offer
//! (`trust-gate-upto`, `trust-gate-batch-settlement`) or, asked to, the plain one, build the
//! open with [`crate::session`], sign as the payer, retry with `PAYMENT-SIGNATURE`; a session
//! then pays each further request with a voucher ([`ChannelPay::voucher`]) and ends with its
//! refund ([`ChannelPay::close`]).

use crate::exact::{self, Body, PayError, Request};
use crate::session::{PayerSession, SessionGate, SessionTerms, UptoTerms};
use anchor_lang::prelude::Pubkey;
use serde::Deserialize;
use serde_json::{json, Value};
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use trust_gate_client::decode::{ApprovalTerms, DecisionView};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::{chain, Builder, Overrides, ProgramIds, RpcClient};
use trust_gate_x402::batch::{self, BatchExtra, BatchPayload};
use trust_gate_x402::payment_identifier;
use trust_gate_x402::upto::{self, UptoExtra};
use trust_gate_x402::{
    self as x402, ChannelSettlement, GateExtension, PaymentRequired, PaymentRequirements,
};

/// Why a channel payment did not go through.
#[derive(Debug, thiserror::Error)]
pub enum ChannelPayError {
    #[error("request to {url} failed: {reason}")]
    Http { url: String, reason: String },
    #[error("{url}: {reason}")]
    Offer { url: String, reason: String },
    /// The resource server did not accept the payment.
    #[error("{} was not accepted (HTTP {}): {}", .0.what, .0.status, .0.body)]
    Refused(Box<Refusal>),
    /// Refused before anything was signed (above `max_amount`, another payer agent).
    #[error(transparent)]
    Check(#[from] PayError),
}

/// A payment the resource server did not accept: the gate's decision when it refused (a
/// Deny, RequireValidation, or RequireApproval with the pending id), and the answer.
#[derive(Debug)]
pub struct Refusal {
    /// What was refused: the upto payment, the deposit, voucher N, the refund.
    pub what: String,
    pub status: u16,
    /// The gate's decision, when the answer carries one (never Allow).
    pub decision: Option<DecisionView>,
    /// A RequireApproval's pending id (`trust-gate approve ID`).
    pub approval_id: Option<String>,
    pub body: Body,
}

impl ChannelPayError {
    /// The pending approval's id when the gate held the deposit for an approval
    /// (RequireApproval: the facilitator's answer names it).
    pub fn approval_id(&self) -> Option<&str> {
        match self {
            ChannelPayError::Refused(r) if r.decision == Some(DecisionView::RequireApproval) => {
                r.approval_id.as_deref()
            }
            _ => None,
        }
    }

    /// The gate's decision when it refused the payment (never Allow).
    pub fn decision(&self) -> Option<&DecisionView> {
        match self {
            ChannelPayError::Refused(r) => r.decision.as_ref(),
            _ => None,
        }
    }
}

/// What a refusal's body says of the gate: `{"decision": {...}, "approval": {"id": ...}}`.
#[derive(Deserialize)]
struct RefusalBody {
    decision: Option<DecisionView>,
    approval: Option<ApprovalRef>,
}

#[derive(Deserialize)]
struct ApprovalRef {
    id: String,
}

impl ChannelPayError {
    /// A refusal of `what` answered with `status` and `body`.
    fn refused(what: impl Into<String>, status: u16, body: Body) -> ChannelPayError {
        let said = serde_json::from_slice::<RefusalBody>(&body.bytes).ok();
        let (decision, approval_id) = match said {
            Some(r) => (
                r.decision.filter(|d| *d != DecisionView::Allow),
                r.approval.map(|a| a.id),
            ),
            None => (None, None),
        };
        ChannelPayError::Refused(Box::new(Refusal {
            what: what.into(),
            status,
            decision,
            approval_id,
            body,
        }))
    }
}

/// Who pays, with what, where.
pub struct ChannelPay<'a> {
    pub http: &'a reqwest::Client,
    pub rpc: &'a RpcClient,
    /// Program ids that differ from the offer's network's.
    pub overrides: Overrides,
    pub request: Request,
    /// Sent as `X-Payer-Agent` (the resource server's default payer otherwise); the offer
    /// must then name it.
    pub payer_agent: Option<Pubkey>,
    pub signer: &'a Keypair,
    /// The plain scheme rather than the gated one.
    pub ungated: bool,
    /// The most an `upto` ceiling, a session's deposit or a voucher's price may be (base
    /// units): above it, nothing is signed.
    pub max_amount: Option<u64>,
}

/// A paid request: the resource's answer and the settlement (`PAYMENT-RESPONSE`, when the
/// resource server sent one).
#[derive(Clone, Debug)]
pub struct Paid {
    pub body: Body,
    pub settlement: Option<ChannelSettlement>,
}

impl Paid {
    /// The settlement's transaction signature (empty for a voucher kept off chain).
    pub fn transaction(&self) -> Option<&str> {
        self.settlement.as_ref().map(|s| s.transaction.as_str())
    }

    /// What this request settled, as the settlement says (atomic units).
    pub fn amount(&self) -> Option<u64> {
        self.settlement.as_ref()?.amount.parse().ok()
    }
}

/// A session's channel, open, which later requests pay with vouchers.
pub struct OpenSession {
    pub session: PayerSession,
    /// The challenge and offer it was opened for (its refund goes with them).
    pub required: PaymentRequired,
    pub offer: PaymentRequirements,
}

/// A session paid request by request, and its end.
#[derive(Clone, Debug)]
pub struct SessionPaid {
    pub channel: Pubkey,
    pub requests: Vec<Paid>,
    pub refund: Paid,
    /// What the vouchers add up to.
    pub charged: u64,
}

impl ChannelPay<'_> {
    fn fail(&self, reason: impl std::fmt::Display) -> ChannelPayError {
        ChannelPayError::Http {
            url: self.request.url.clone(),
            reason: reason.to_string(),
        }
    }

    fn offer_error(&self, reason: impl Into<String>) -> ChannelPayError {
        ChannelPayError::Offer {
            url: self.request.url.clone(),
            reason: reason.into(),
        }
    }

    /// The request as sent: with `X-Payer-Agent`.
    fn request(&self) -> Request {
        self.request.clone().with_payer_agent(self.payer_agent)
    }

    /// Refuses, before signing, an offer of another payer agent or above `max_amount`
    /// (`amount` in its place: a deposit is the price times the requests).
    fn check(&self, offer: &PaymentRequirements, amount: u64) -> Result<(), ChannelPayError> {
        let mut charged = offer.clone();
        charged.amount = amount.to_string();
        exact::check_offer(
            &self.request.url,
            &charged,
            self.payer_agent,
            self.max_amount,
        )?;
        Ok(())
    }

    /// The offer of `scheme` in a challenge.
    pub fn offer_of(
        &self,
        required: &PaymentRequired,
        scheme: &str,
    ) -> Result<PaymentRequirements, ChannelPayError> {
        required
            .accepts
            .iter()
            .find(|r| r.scheme == scheme)
            .cloned()
            .ok_or_else(|| self.offer_error(format!("no {scheme} offer in the 402")))
    }

    /// The 402's offers, and the one of `scheme`.
    async fn offer(
        &self,
        scheme: &str,
    ) -> Result<(PaymentRequired, PaymentRequirements), ChannelPayError> {
        let request = self.request();
        let res = request
            .send(self.http, None)
            .await
            .map_err(|e| self.fail(e))?;
        if res.status().as_u16() != 402 {
            return Err(self.offer_error(format!(
                "answered {} without asking for a payment",
                res.status()
            )));
        }
        let header = res
            .headers()
            .get(x402::PAYMENT_REQUIRED)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| self.offer_error("a 402 without PAYMENT-REQUIRED"))?
            .to_string();
        let pr: PaymentRequired = x402::decode_header(x402::PAYMENT_REQUIRED, &header)
            .map_err(|e| self.offer_error(e.to_string()))?;
        let offer = self.offer_of(&pr, scheme)?;
        Ok((pr, offer))
    }

    /// Sends `payload` for `offer` and reads the answer.
    async fn send(
        &self,
        what: &str,
        pr: &PaymentRequired,
        offer: &PaymentRequirements,
        payload: Value,
    ) -> Result<Paid, ChannelPayError> {
        let mut envelope = json!({
            "x402Version": 2,
            "resource": pr.resource,
            "accepted": offer,
            "payload": payload,
        });
        // A fresh id for each payment when the challenge declares payment-identifier: a lost
        // answer is then asked again with the same payment, never paid twice.
        let extensions =
            payment_identifier::attach(pr.extensions.as_ref(), None, &payment_identifier::new_id());
        let idempotent = extensions.is_some();
        if let Some(e) = extensions {
            envelope["extensions"] = Value::Object(e);
        }
        let encoded = x402::encode_header(&envelope).map_err(|e| self.fail(e))?;
        let request = self.request();
        let res = exact::send_paid(self.http, &request, &encoded, idempotent)
            .await
            .map_err(|e| self.fail(e))?;
        let status = res.status().as_u16();
        let settlement = res
            .headers()
            .get(x402::PAYMENT_RESPONSE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| x402::decode_header::<ChannelSettlement>(x402::PAYMENT_RESPONSE, v).ok());
        let body = request.body(res).await.map_err(|e| self.fail(e))?;
        if status != 200 {
            return Err(ChannelPayError::refused(what, status, body));
        }
        Ok(Paid { body, settlement })
    }

    /// The gate's terms of a gated offer whose channel deposits `deposit` of `mint`, with the
    /// deposit's approval on chain when the payer's policy asks for one.
    async fn gate(
        &self,
        offer: &PaymentRequirements,
        builder: &Builder,
        mint: Pubkey,
        deposit: u64,
    ) -> Result<Option<SessionGate>, ChannelPayError> {
        if self.ungated {
            return Ok(None);
        }
        // A gated client never opens a channel without the gate: an offer of a gated scheme
        // without its `gate` extension would otherwise be paid with no policy at all.
        let Ok(g) = GateExtension::from_requirements(offer) else {
            return Err(self.offer_error(format!(
                "the {} offer has no valid extra.gate: it would be paid without the gate",
                offer.scheme
            )));
        };
        let key = |field: &str, v: &str| {
            v.parse::<Pubkey>()
                .map_err(|_| self.offer_error(format!("extra.gate.{field} is not a base58 key")))
        };
        let terms = ApprovalTerms {
            payer_asset: key("payerAgentAsset", &g.payer_agent_asset)?,
            payee_asset: key("payeeAgentAsset", &g.payee_agent_asset)?,
            mint,
            amount: deposit,
            policy_id: g.policy_id,
        };
        let approval = chain::approval_use_of(self.rpc, &builder.ids, &terms)
            .await
            .map_err(|e| self.fail(e))?;
        Ok(Some(SessionGate {
            payer_asset: terms.payer_asset,
            payee_asset: terms.payee_asset,
            policy_id: g.policy_id,
            attestations: Default::default(),
            approval,
        }))
    }

    /// What an offer's mint, its program and `payTo` are, and the facilitator's tables.
    async fn parties(
        &self,
        offer: &PaymentRequirements,
        fee_payer: &str,
    ) -> Result<
        (
            Pubkey,
            TokenProgram,
            Pubkey,
            Vec<solana_sdk::message::AddressLookupTableAccount>,
        ),
        ChannelPayError,
    > {
        let mint: Pubkey = offer
            .asset
            .parse()
            .map_err(|_| self.offer_error("asset is not a base58 key"))?;
        let pay_to: Pubkey = offer
            .pay_to
            .parse()
            .map_err(|_| self.offer_error("payTo is not a base58 key"))?;
        let m = chain::mint(self.rpc, "asset", &mint)
            .await
            .map_err(|e| self.fail(e))?
            .ok_or_else(|| self.offer_error(format!("mint {mint} does not exist")))?;
        let fee_payer: Pubkey = fee_payer
            .parse()
            .map_err(|_| self.offer_error("extra.feePayer is not a base58 key"))?;
        let tables = chain::lookup_tables(self.rpc, &fee_payer)
            .await
            .map_err(|e| self.fail(e))?;
        Ok((mint, m.token_program, pay_to, tables))
    }

    /// The instruction builder of the offer's network.
    fn builder(&self, offer: &PaymentRequirements) -> Result<Builder, ChannelPayError> {
        let ids = ProgramIds::for_network(exact::network_of(&offer.network))
            .with_overrides(self.overrides);
        Builder::new(ids).map_err(|e| self.fail(e))
    }

    fn salt() -> u64 {
        u64::from_le_bytes(
            Keypair::new().pubkey().to_bytes()[..8]
                .try_into()
                .unwrap_or_default(),
        )
    }

    /// The scheme of `upto` this client pays: gated, or plain when asked.
    pub fn upto_scheme(&self) -> &'static str {
        if self.ungated {
            upto::SCHEME_UPTO
        } else {
            upto::SCHEME_GATED_UPTO
        }
    }

    /// The scheme of sessions this client pays: gated, or plain when asked.
    pub fn session_scheme(&self) -> &'static str {
        if self.ungated {
            batch::SCHEME_BATCH
        } else {
            batch::SCHEME_GATED_BATCH
        }
    }

    /// One `upto` payment: the ceiling escrowed, the resource's use charged.
    pub async fn upto(&self) -> Result<Paid, ChannelPayError> {
        let (pr, offer) = self.offer(self.upto_scheme()).await?;
        self.upto_offer(&pr, &offer).await
    }

    /// Pays `offer` (an `upto` offer of the challenge `pr`).
    pub async fn upto_offer(
        &self,
        pr: &PaymentRequired,
        offer: &PaymentRequirements,
    ) -> Result<Paid, ChannelPayError> {
        let extra: UptoExtra = serde_json::from_value(Value::Object(offer.extra.clone()))
            .map_err(|e| self.offer_error(format!("extra: {e}")))?;
        let ceiling = self.price(offer)?;
        self.check(offer, ceiling)?;
        let (mint, token_program, pay_to, tables) = self.parties(offer, &extra.fee_payer).await?;
        let now = now_unix();
        let builder = self.builder(offer)?;
        let (open_slot, blockhash) = self.recent().await?;
        let gate = self.gate(offer, &builder, mint, ceiling).await?;
        let payload = UptoTerms {
            builder: &builder,
            extra: &extra,
            mint,
            token_program,
            pay_to,
            payer: self.signer,
            ceiling,
            salt: Self::salt(),
            open_slot,
            valid_after: now - 1,
            expires_at: now + i64::try_from(offer.max_timeout_seconds).unwrap_or(300),
            gate,
            tables: &tables,
            blockhash,
        }
        .payload()
        .map_err(|e| self.fail(e))?;
        let payload = serde_json::to_value(&payload).map_err(|e| self.fail(e))?;
        self.send("the upto payment", pr, offer, payload).await
    }

    /// The cluster's slot and latest blockhash, which an open is built on.
    async fn recent(&self) -> Result<(u64, solana_sdk::hash::Hash), ChannelPayError> {
        let slot = self.rpc.get_slot().await.map_err(|e| self.fail(e))?;
        let blockhash = self
            .rpc
            .get_latest_blockhash()
            .await
            .map_err(|e| self.fail(e))?;
        Ok((slot, blockhash))
    }

    /// A session of `requests` requests in a channel of `deposit_requests` prices, then its
    /// refund.
    pub async fn session(
        &self,
        requests: u64,
        deposit_requests: u64,
    ) -> Result<SessionPaid, ChannelPayError> {
        if requests == 0 || deposit_requests < requests {
            return Err(self.offer_error(format!(
                "a session of {requests} requests needs 1 or more, within a deposit of {deposit_requests}"
            )));
        }
        let (pr, offer) = self.offer(self.session_scheme()).await?;
        let (mut open, first) = self.open_session(&pr, &offer, deposit_requests).await?;
        let mut paid = vec![first];
        for i in 1..requests {
            paid.push(self.voucher(&mut open, &pr, &offer, i + 1).await?);
        }
        let refund = self.close(&open).await?;
        Ok(session_paid(&open.session, paid, refund))
    }

    /// Opens a session's channel of `deposit_requests` prices for `offer` (a session offer of
    /// the challenge `pr`), paying this request with its first voucher.
    pub async fn open_session(
        &self,
        pr: &PaymentRequired,
        offer: &PaymentRequirements,
        deposit_requests: u64,
    ) -> Result<(OpenSession, Paid), ChannelPayError> {
        if deposit_requests == 0 {
            return Err(self.offer_error("a session's deposit covers 1 request or more"));
        }
        let extra: BatchExtra = serde_json::from_value(Value::Object(offer.extra.clone()))
            .map_err(|e| self.offer_error(format!("extra: {e}")))?;
        let price = self.price(offer)?;
        let deposit = price.checked_mul(deposit_requests).ok_or_else(|| {
            self.offer_error(format!(
                "{deposit_requests} requests at {price} overflow a u64"
            ))
        })?;
        self.check(offer, deposit)?;
        let (mint, token_program, pay_to, tables) = self.parties(offer, &extra.fee_payer).await?;
        let builder = self.builder(offer)?;
        let (open_slot, blockhash) = self.recent().await?;
        let gate = self.gate(offer, &builder, mint, deposit).await?;
        let (tx, mut session) = SessionTerms {
            builder: &builder,
            extra: &extra,
            mint,
            token_program,
            pay_to,
            payer: self.signer,
            voucher_key: Keypair::new(),
            deposit,
            salt: Self::salt(),
            open_slot,
            gate,
            tables: &tables,
            blockhash,
        }
        .open()
        .map_err(|e| self.fail(e))?;
        let first = session
            .deposit_payload(&tx, price)
            .map_err(|e| self.fail(e))?;
        let paid = self.send("the deposit", pr, offer, value(&first)?).await?;
        let open = OpenSession {
            session,
            required: pr.clone(),
            offer: offer.clone(),
        };
        Ok((open, paid))
    }

    /// Pays this request (the challenge `pr`, its session offer `offer`) with the next
    /// voucher of `open`; `nth` names it in errors. A corrective 402 (the server accepted a
    /// voucher whose answer this client lost, or not one it counted) resumes the session
    /// from the server's state, once it is checked as this session's own voucher, and pays
    /// again once.
    pub async fn voucher(
        &self,
        open: &mut OpenSession,
        pr: &PaymentRequired,
        offer: &PaymentRequirements,
        nth: u64,
    ) -> Result<Paid, ChannelPayError> {
        let price = self.price(offer)?;
        self.check(offer, price)?;
        let what = format!("voucher {nth}");
        let p = open
            .session
            .voucher_payload(price)
            .map_err(|e| self.fail(e))?;
        let refused = match self.send(&what, pr, offer, value(&p)?).await {
            Err(ChannelPayError::Refused(r)) if r.status == 402 => r,
            other => return other,
        };
        let Some((channel, voucher)) = batch::corrective_state(&refused.body.json()) else {
            return Err(ChannelPayError::Refused(refused));
        };
        open.session
            .resync(&channel, &voucher)
            .map_err(|e| self.offer_error(format!("a corrective 402 refused: {e}")))?;
        let p = open
            .session
            .voucher_payload(price)
            .map_err(|e| self.fail(e))?;
        self.send(&what, pr, offer, value(&p)?).await
    }

    /// Ends `open` with its refund: the channel's unspent deposit back to the payer.
    pub async fn close(&self, open: &OpenSession) -> Result<Paid, ChannelPayError> {
        self.send(
            "the refund",
            &open.required,
            &open.offer,
            value(&open.session.refund_payload())?,
        )
        .await
    }

    /// An offer's amount: a session's price a request, an `upto` ceiling.
    fn price(&self, offer: &PaymentRequirements) -> Result<u64, ChannelPayError> {
        offer
            .amount
            .parse()
            .map_err(|_| self.offer_error("amount is not decimal digits"))
    }
}

fn value(p: &BatchPayload) -> Result<Value, ChannelPayError> {
    serde_json::to_value(p).map_err(|e| ChannelPayError::Http {
        url: String::new(),
        reason: e.to_string(),
    })
}

fn session_paid(s: &PayerSession, requests: Vec<Paid>, refund: Paid) -> SessionPaid {
    SessionPaid {
        channel: s.channel,
        requests,
        refund,
        charged: s.charged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(json: &str) -> Body {
        Body {
            content_type: Some("application/json".into()),
            bytes: json.as_bytes().to_vec(),
            complete: true,
            length: Some(json.len() as u64),
        }
    }

    #[test]
    fn a_refusal_carries_the_gates_decision_typed() {
        let deny = ChannelPayError::refused(
            "the deposit",
            402,
            body(
                r#"{"decision":{"kind":"Deny","reasonCode":6,"reasonName":"CounterpartyTierBelowMin"},"isValid":false}"#,
            ),
        );
        assert_eq!(
            deny.decision(),
            Some(&DecisionView::Deny {
                reason_code: 6,
                reason_name: "CounterpartyTierBelowMin".into()
            })
        );
        assert_eq!(deny.approval_id(), None);
        let held = ChannelPayError::refused(
            "the deposit",
            402,
            body(
                r#"{"decision":{"kind":"RequireApproval"},"approval":{"id":"ID","pending":null}}"#,
            ),
        );
        assert_eq!(held.decision(), Some(&DecisionView::RequireApproval));
        assert_eq!(held.approval_id(), Some("ID"));
        // No decision, or not JSON: a refusal without one, its body kept.
        for other in [
            r#"{"error":"x"}"#,
            "not json",
            r#"{"decision":{"kind":"Allow"}}"#,
        ] {
            let e = ChannelPayError::refused("voucher 2", 400, body(other));
            assert_eq!(e.decision(), None, "{other}");
            assert!(e.to_string().contains(other), "{e}");
        }
    }
}
