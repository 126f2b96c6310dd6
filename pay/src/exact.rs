//! The paying client of trust-gate's `exact` settlement (the `trust-gate` scheme): request,
//! read the 402, compose the three-instruction settlement with the SDK, sign as the payer,
//! retry with `PAYMENT-SIGNATURE`. Behind `trust-gate pay` and the MCP tool `gate_pay`.
//!
//! The steps are public ([`prepare`], [`Prepared::transaction`], [`Prepared::payload`]) so a
//! caller can inspect or alter what it pays before sending. The request ([`Request`]) is any
//! method, headers and body; an answer's body is read up to a stated size ([`Body`]).

use anchor_lang::prelude::Pubkey;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use solana_sdk::instruction::Instruction;
use solana_sdk::message::AddressLookupTableAccount;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use solana_sdk::transaction::VersionedTransaction;
use std::str::FromStr;
use trust_gate_client::ids::{CAIP2_DEVNET, CAIP2_MAINNET};
use trust_gate_client::settle::{self, Feedback, Settlement};
use trust_gate_client::{
    chain, simulate, units, AtomicityEnforced, Builder, ClientError, Network, Overrides,
    ProgramIds, RpcClient,
};
use trust_gate_x402::payment_identifier;
use trust_gate_x402::{
    self as x402, ExactSvmPayload, GateExtension, PaymentPayload, PaymentRequired,
    PaymentRequirements, SettlementResponse, GATE_EXTENSION, SCHEME_TRUST_GATE, X402_VERSION,
};

/// The most bytes of an answer's body a [`Request`] reads by default (past it, the body is
/// cut and [`Body::complete`] is false).
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;

/// What a paying client requests: the first time, and again with the payment.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: Method,
    pub url: String,
    /// Sent with both requests (a `PAYMENT-SIGNATURE` here is replaced by the payment's).
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// The most bytes of an answer's body read.
    pub max_body_bytes: usize,
}

impl Request {
    /// A GET of `url`.
    pub fn get(url: impl Into<String>) -> Request {
        Request {
            method: Method::GET,
            url: url.into(),
            headers: Vec::new(),
            body: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }

    /// The request with `X-Payer-Agent: agent` (when given).
    pub fn with_payer_agent(mut self, agent: Option<Pubkey>) -> Request {
        if let Some(a) = agent {
            self.headers
                .push((x402::X_PAYER_AGENT.to_string(), a.to_string()));
        }
        self
    }

    /// Sends the request, with `payment` as `PAYMENT-SIGNATURE` when given.
    pub async fn send(
        &self,
        http: &reqwest::Client,
        payment: Option<&str>,
    ) -> Result<reqwest::Response, PayError> {
        let mut req = http.request(self.method.clone(), &self.url);
        for (k, v) in &self.headers {
            if payment.is_some() && k.eq_ignore_ascii_case(x402::PAYMENT_SIGNATURE) {
                continue;
            }
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(p) = payment {
            req = req.header(x402::PAYMENT_SIGNATURE, p);
        }
        if let Some(b) = &self.body {
            req = req.body(b.clone());
        }
        req.send().await.map_err(|e| http_err(&self.url, e))
    }

    /// Reads an answer's body, up to [`Request::max_body_bytes`].
    pub async fn body(&self, res: reqwest::Response) -> Result<Body, PayError> {
        Body::read(res, self.max_body_bytes)
            .await
            .map_err(|e| http_err(&self.url, e))
    }
}

/// An answer's body, read up to a stated size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Body {
    /// `Content-Type`.
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
    /// Whether `bytes` is the whole body (false: cut at the size read).
    pub complete: bool,
    /// The body's full length: `bytes`' when complete, else its `Content-Length` if it stated
    /// one.
    pub length: Option<u64>,
}

impl Body {
    /// Reads `res`'s body, at most `max` bytes of it.
    pub async fn read(mut res: reqwest::Response, max: usize) -> Result<Body, reqwest::Error> {
        let content_type = res
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let declared = res.content_length();
        let mut bytes = Vec::new();
        let mut complete = true;
        while let Some(chunk) = res.chunk().await? {
            let room = max.saturating_sub(bytes.len());
            if chunk.len() > room {
                bytes.extend_from_slice(&chunk[..room]);
                complete = false;
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        let length = if complete {
            Some(bytes.len() as u64)
        } else {
            declared
        };
        Ok(Body {
            content_type,
            bytes,
            complete,
            length,
        })
    }

    /// The body as JSON (`null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    /// The body as text, when it is UTF-8 (a body cut inside a character loses that
    /// character).
    pub fn text(&self) -> Option<&str> {
        match std::str::from_utf8(&self.bytes) {
            Ok(t) => Some(t),
            Err(e) if !self.complete && e.error_len().is_none() => {
                std::str::from_utf8(&self.bytes[..e.valid_up_to()]).ok()
            }
            Err(_) => None,
        }
    }
}

impl std::fmt::Display for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.text() {
            Some(t) => f.write_str(t),
            None => write!(
                f,
                "<{} bytes of {}>",
                self.bytes.len(),
                self.content_type.as_deref().unwrap_or("binary content")
            ),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PayError {
    #[error("request to {url} failed: {reason}")]
    Http { url: String, reason: String },
    #[error("the 402 from {url} is not a usable x402 v2 challenge: {reason}")]
    Challenge { url: String, reason: String },
    /// The offer asks for more than the caller allows; nothing was signed.
    #[error(
        "{url} asks for {amount} base units of {asset}, above max_amount {max}; nothing was signed"
    )]
    AboveMax {
        url: String,
        amount: u64,
        max: u64,
        asset: String,
    },
    /// The challenge names another payer agent than the one asked for; nothing was signed.
    #[error("{url} names the payer agent {named} in extra.gate.payerAgentAsset, not {asked}; nothing was signed")]
    OtherPayer {
        url: String,
        named: String,
        asked: String,
    },
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// What happened.
#[derive(Clone, Debug)]
pub enum PayOutcome {
    /// The resource answered without asking for payment.
    NotRequired { status: u16, body: Body },
    /// The gate refused: Deny or RequireValidation (its headers and body), before any payment
    /// or, for a resource server that does not decide first, on the paid attempt (nothing
    /// settled).
    Refused {
        status: u16,
        decision: String,
        reason_code: Option<u8>,
        reason_name: Option<String>,
        capability: Option<String>,
        body: Body,
    },
    /// Paid and served.
    Paid {
        /// The settlement transaction (`X-Payment-Receipt`).
        receipt: String,
        payment_id_hash: String,
        response: SettlementResponse,
        /// The offer paid.
        requirements: PaymentRequirements,
        body: Body,
    },
    /// The gate held the payment for an approval (RequireApproval): the payer agent's
    /// members approve it on chain (`trust-gate approve ID`), then the same payment passes.
    Held {
        status: u16,
        /// The pending approval's id (`X-Gate-Approval-Id`).
        approval_id: String,
        /// The offer held.
        requirements: PaymentRequirements,
        body: Body,
    },
    /// The payment was sent and the resource did not confirm it (whether it settled is
    /// then for its receipt to say: the server holds the signed payment).
    Failed {
        status: u16,
        response: Option<SettlementResponse>,
        /// The payment's id hash, to look its receipt up.
        payment_id_hash: String,
        body: Body,
    },
}

/// Everything needed to pay one challenge.
#[derive(Clone)]
pub struct Prepared {
    pub builder: Builder,
    pub requirements: PaymentRequirements,
    pub resource: x402::ResourceInfo,
    pub fee_payer: Pubkey,
    pub tables: Vec<AddressLookupTableAccount>,
    pub settlement: Settlement,
    /// The payload's `extensions`: the challenge's `payment-identifier` echoed with a fresh
    /// id when it declares the extension ([`trust_gate_x402::payment_identifier`]).
    pub extensions: Option<serde_json::Map<String, Value>>,
}

/// The network a CAIP-2 id names (anything but devnet and mainnet is a localnet).
pub fn network_of(caip2: &str) -> Network {
    match caip2 {
        CAIP2_MAINNET => Network::Mainnet,
        CAIP2_DEVNET => Network::Devnet,
        _ => Network::Localnet,
    }
}

fn challenge_err(url: &str, reason: impl Into<String>) -> PayError {
    PayError::Challenge {
        url: url.into(),
        reason: reason.into(),
    }
}

/// Composes the settlement for the first `trust-gate` offer of `required`, paid by
/// `signer` (the payer agent's owner or agent wallet).
pub async fn prepare(
    rpc: &RpcClient,
    required: &PaymentRequired,
    signer: &Pubkey,
    overrides: Overrides,
) -> Result<Prepared, PayError> {
    let url = &required.resource.url;
    let r = trust_gate_offer(required)
        .ok_or_else(|| {
            challenge_err(
                url,
                format!("no {SCHEME_TRUST_GATE:?} offer with extra.gate (a trust-gate settlement)"),
            )
        })?
        .clone();
    let gate = GateExtension::from_requirements(&r)?;
    let key = |field: &str, s: &str| {
        Pubkey::from_str(s)
            .map_err(|_| challenge_err(url, format!("{field} {s:?} is not a public key")))
    };
    let fee_payer = key("extra.feePayer", r.fee_payer().unwrap_or_default())?;
    let memo = r
        .extra
        .get("memo")
        .and_then(|v| v.as_str())
        .ok_or_else(|| challenge_err(url, "no extra.memo"))?;
    let mint = key("asset", &r.asset)?;
    let pay_to = key("payTo", &r.pay_to)?;
    let amount: u64 = r
        .amount
        .parse()
        .map_err(|_| challenge_err(url, format!("amount {:?} is not a u64", r.amount)))?;
    let payer_asset = key("extra.gate.payerAgentAsset", &gate.payer_agent_asset)?;
    let payee_asset = key("extra.gate.payeeAgentAsset", &gate.payee_agent_asset)?;

    let ids = ProgramIds::for_network(network_of(&r.network)).with_overrides(overrides);
    let b = Builder::new(ids)?;
    let chain::Mint {
        token_program,
        decimals,
        transfer_hook,
    } = chain::mint(rpc, "asset", &mint).await?.ok_or_else(|| {
        challenge_err(url, format!("asset {mint} does not exist on this cluster"))
    })?;
    let query = simulate::PaymentQuery {
        payer_asset,
        payee_asset,
        amount,
        mint,
        policy_id: gate.policy_id,
    };
    let attestations = simulate::attestations_for(rpc, &b, &query, simulate::now_unix()).await?;
    let policy = chain::policy(rpc, &b.ids, &payer_asset, gate.policy_id)
        .await?
        .ok_or_else(|| {
            challenge_err(
                url,
                format!(
                    "the payer agent {payer_asset} has no policy {} (extra.gate.policyId)",
                    gate.policy_id
                ),
            )
        })?;
    // A vault-funded policy pays from the agent's vault through the signer's token account.
    let funding = settle::Funding::of(&policy.params);
    // Above the policy's approval threshold, the approval its members made on chain.
    let approval = chain::approval_use(rpc, &b.ids, &policy, &query.approval_terms()).await?;
    // The challenge's holdback terms: the strict gate holds the settlement to the terms of the
    // payee's tier now, so a challenge cannot hold back more than the payer's policy says; the
    // share may only go to the payee's escrow.
    let holdback = match &gate.holdback {
        None => None,
        Some(t) => {
            let q = t.quote("extra.gate.holdback")?;
            let escrow = b.pda.holdback_escrow(&payee_asset, &mint);
            if q.escrow != escrow {
                return Err(challenge_err(
                    url,
                    format!(
                        "extra.gate.holdback.escrow {} is not the payee's escrow {escrow}",
                        q.escrow
                    ),
                ));
            }
            if q.held >= amount {
                return Err(challenge_err(
                    url,
                    format!(
                        "extra.gate.holdback.held {} is not below the amount {amount}",
                        q.held
                    ),
                ));
            }
            Some(q)
        }
    };
    let mut settlement = Settlement {
        facilitator: fee_payer,
        payer_signer: *signer,
        payer_asset,
        payee_asset,
        policy_id: gate.policy_id,
        // The challenge's expiry: the facilitator co-signs no other deadline.
        deadline: x402::deadline(&r, &gate),
        mint,
        decimals,
        token_program,
        amount,
        source_token: token_program.associated_account(signer, &mint),
        destination_token: token_program.associated_account(&pay_to, &mint),
        collection: chain::base_collection(rpc, &b.ids).await?,
        attestations,
        feedback: Feedback {
            payment_id_hash: x402::payment_id_hash(memo),
            score: 100,
            tag1: "x402".into(),
            tag2: String::new(),
            endpoint: url.chars().take(250).collect(),
            feedback_uri: String::new(),
        },
        compute_budget: settle::ComputeBudget::default(),
        funding,
        approval,
        holdback,
    };
    let tables = chain::lookup_tables(rpc, &fee_payer).await?;
    // A unit limit just above what the settlement uses, not the 600 000 the scheduler
    // reserves for three instructions without one: measured by simulating the settlement
    // (`trust_gate_client::units`), else, when the simulation fails (the facilitator will then
    // name why), from the measured shape; none for a mint with a transfer hook, whose
    // program's cost the SDK cannot know.
    if transfer_hook.is_none() {
        settlement.compute_budget.unit_limit = Some(units::MAX_UNIT_LIMIT);
        let ixs = settle::compose(&b, &settlement, AtomicityEnforced::TRUE)?;
        let limit = match units::measure(rpc, &fee_payer, &ixs, &tables).await {
            Ok(used) => units::limit_for_use(used),
            Err(_) => {
                let rated = chain::rated_by_engine(rpc, &b.ids, &payee_asset).await?;
                units::Shape::of(&settlement, rated).unit_limit(&b.ids)
            }
        };
        settlement.compute_budget.unit_limit = Some(limit);
    }
    Ok(Prepared {
        builder: b,
        requirements: r,
        resource: required.resource.clone(),
        extensions: payment_identifier::attach(
            required.extensions.as_ref(),
            None,
            &payment_identifier::new_id(),
        ),
        tables,
        fee_payer,
        settlement,
    })
}

impl Prepared {
    /// The instructions of the settlement (the compute budget, if any, then the three
    /// payment instructions).
    pub fn instructions(&self) -> Result<Vec<Instruction>, PayError> {
        Ok(settle::compose(
            &self.builder,
            &self.settlement,
            AtomicityEnforced::TRUE,
        )?)
    }

    /// `ixs` as a v0 transaction paid by the facilitator, signed by `signer` only.
    pub async fn transaction(
        &self,
        rpc: &RpcClient,
        ixs: &[Instruction],
        signer: &Keypair,
    ) -> Result<VersionedTransaction, PayError> {
        let blockhash = rpc
            .get_latest_blockhash()
            .await
            .map_err(ClientError::from)?;
        Ok(settle::transaction(
            &self.fee_payer,
            ixs,
            &self.tables,
            blockhash,
            &[signer],
        )?)
    }

    /// The `PAYMENT-SIGNATURE` payload carrying `tx`.
    pub fn payload(&self, tx: &VersionedTransaction) -> Result<PaymentPayload, PayError> {
        Ok(PaymentPayload {
            x402_version: X402_VERSION,
            resource: Some(self.resource.clone()),
            accepted: self.requirements.clone(),
            payload: ExactSvmPayload {
                transaction: x402::encode_transaction(tx)?,
            },
            extensions: self.extensions.clone(),
        })
    }
}

/// Options of [`pay`].
pub struct PayOptions<'a> {
    pub request: Request,
    /// Sent as `X-Payer-Agent` (which agent pays); the challenge must then name it.
    pub payer_agent: Option<Pubkey>,
    /// The payer agent's owner (or agent wallet): signs the transfer.
    pub signer: &'a Keypair,
    pub overrides: Overrides,
    /// An optional priority fee (the facilitator refuses a unit price above its
    /// `MAX_COMPUTE_UNIT_PRICE`) and unit limit; without a limit, the settlement asks for the
    /// one `trust_gate_client::units` computes for it.
    pub compute_budget: settle::ComputeBudget,
    /// The most the payment may be, in base units of the offer's asset: above it, nothing is
    /// signed ([`PayError::AboveMax`]).
    pub max_amount: Option<u64>,
}

/// A failed request to `url`, as [`PayError::Http`].
pub fn http_err(url: &str, e: impl std::fmt::Display) -> PayError {
    PayError::Http {
        url: url.into(),
        reason: e.to_string(),
    }
}

fn header(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The gate's refusal an answer carries in its decision headers (Deny, RequireValidation),
/// if it does.
async fn refusal(
    request: &Request,
    res: reqwest::Response,
) -> Result<Result<PayOutcome, reqwest::Response>, PayError> {
    let decision = header(&res, x402::X_GATE_DECISION).unwrap_or_default();
    if decision != "Deny" && decision != "RequireValidation" {
        return Ok(Err(res));
    }
    Ok(Ok(PayOutcome::Refused {
        status: res.status().as_u16(),
        reason_code: header(&res, x402::X_PAYMENT_REASON_CODE).and_then(|c| c.parse().ok()),
        reason_name: header(&res, x402::X_PAYMENT_REASON_NAME),
        capability: header(&res, x402::X_CAPABILITY_REQUIRED),
        decision,
        body: request.body(res).await?,
    }))
}

/// What the first request answered: served, refused by the gate, or a challenge to pay.
pub enum First {
    Answered(Box<PayOutcome>),
    Challenge(PaymentRequired),
}

/// Sends `request` unpaid and reads a 402's challenge.
pub async fn first(http: &reqwest::Client, request: &Request) -> Result<First, PayError> {
    let res = request.send(http, None).await?;
    let status = res.status();
    if status != StatusCode::PAYMENT_REQUIRED {
        return Ok(First::Answered(Box::new(PayOutcome::NotRequired {
            status: status.as_u16(),
            body: request.body(res).await?,
        })));
    }
    let Some(required) = header(&res, x402::PAYMENT_REQUIRED) else {
        return match refusal(request, res).await? {
            Ok(refused) => Ok(First::Answered(Box::new(refused))),
            Err(res) => Err(challenge_err(
                &request.url,
                format!(
                    "a 402 without {} or a decision: {}",
                    x402::PAYMENT_REQUIRED,
                    request.body(res).await?
                ),
            )),
        };
    };
    Ok(First::Challenge(x402::decode_header(
        x402::PAYMENT_REQUIRED,
        &required,
    )?))
}

/// Refuses, before anything is signed, an offer of another payer agent than `asked` or of
/// more than `max`.
pub fn check_offer(
    url: &str,
    requirements: &PaymentRequirements,
    asked: Option<Pubkey>,
    max: Option<u64>,
) -> Result<(), PayError> {
    if let (Some(asked), Ok(gate)) = (asked, GateExtension::from_requirements(requirements)) {
        if gate.payer_agent_asset != asked.to_string() {
            return Err(PayError::OtherPayer {
                url: url.into(),
                named: gate.payer_agent_asset,
                asked: asked.to_string(),
            });
        }
    }
    if let Some(max) = max {
        let amount: u64 = requirements.amount.parse().map_err(|_| {
            challenge_err(
                url,
                format!("amount {:?} is not a u64", requirements.amount),
            )
        })?;
        if amount > max {
            return Err(PayError::AboveMax {
                url: url.into(),
                amount,
                max,
                asset: requirements.asset.clone(),
            });
        }
    }
    Ok(())
}

/// The first `trust-gate` offer of a challenge.
pub fn trust_gate_offer(required: &PaymentRequired) -> Option<&PaymentRequirements> {
    required
        .accepts
        .iter()
        .find(|r| r.scheme == SCHEME_TRUST_GATE && r.extra.contains_key(GATE_EXTENSION))
}

/// Pays for `opts.request`: send it, and on a 402 challenge, settle and send it again.
pub async fn pay(
    http: &reqwest::Client,
    rpc: &RpcClient,
    opts: &PayOptions<'_>,
) -> Result<PayOutcome, PayError> {
    let request = opts.request.clone().with_payer_agent(opts.payer_agent);
    let required = match first(http, &request).await? {
        First::Answered(outcome) => return Ok(*outcome),
        First::Challenge(required) => required,
    };
    pay_challenge(http, rpc, opts, &required).await
}

/// Pays `required` (the 402 `opts.request` answered) with its `trust-gate` offer.
pub async fn pay_challenge(
    http: &reqwest::Client,
    rpc: &RpcClient,
    opts: &PayOptions<'_>,
    required: &PaymentRequired,
) -> Result<PayOutcome, PayError> {
    let request = opts.request.clone().with_payer_agent(opts.payer_agent);
    if let Some(offer) = trust_gate_offer(required) {
        check_offer(&request.url, offer, opts.payer_agent, opts.max_amount)?;
    }
    let mut prepared = prepare(rpc, required, &opts.signer.pubkey(), opts.overrides).await?;
    let budget = &mut prepared.settlement.compute_budget;
    if opts.compute_budget.unit_limit.is_some() {
        budget.unit_limit = opts.compute_budget.unit_limit;
    }
    budget.unit_price_micro_lamports = opts.compute_budget.unit_price_micro_lamports;
    let ixs = prepared.instructions()?;
    let tx = prepared.transaction(rpc, &ixs, opts.signer).await?;
    let payload = prepared.payload(&tx)?;
    retry(http, &request, &payload, &prepared).await
}

/// How many times a payment that carries a `payment-identifier` id is sent again.
pub const RESENDS: u32 = 3;

/// Sends `request` with the payment `encoded`. When the payment carries a
/// `payment-identifier` id (`idempotent`), a lost answer (no HTTP answer at all) or a 503
/// with `Retry-After` (the server still runs the first attempt) sends the same payment again,
/// up to [`RESENDS`] times: the server answers it with the first attempt's answer and never
/// settles twice. Without an id, the payment is sent once (a resend would be a replay).
pub async fn send_paid(
    http: &reqwest::Client,
    request: &Request,
    encoded: &str,
    idempotent: bool,
) -> Result<reqwest::Response, PayError> {
    let mut resends = 0;
    loop {
        let sent = request.send(http, Some(encoded)).await;
        let wait = match &sent {
            Err(PayError::Http { .. }) => Some(std::time::Duration::from_millis(200)),
            Ok(res) if res.status() == StatusCode::SERVICE_UNAVAILABLE => res
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
                .map(|s| std::time::Duration::from_secs(s.min(5))),
            Ok(_) | Err(_) => None,
        };
        match wait {
            Some(wait) if idempotent && resends < RESENDS => {
                resends += 1;
                tokio::time::sleep(wait).await;
            }
            _ => return sent,
        }
    }
}

/// The paid retry (sent again as [`send_paid`] says when it carries a payment id).
pub async fn retry(
    http: &reqwest::Client,
    request: &Request,
    payload: &PaymentPayload,
    prepared: &Prepared,
) -> Result<PayOutcome, PayError> {
    let encoded = x402::encode_header(payload)?;
    let idempotent = payload
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(payment_identifier::KEY));
    let res = send_paid(http, request, &encoded, idempotent).await?;
    let status = res.status();
    let response: Option<SettlementResponse> = header(&res, x402::PAYMENT_RESPONSE)
        .and_then(|h| x402::decode_header(x402::PAYMENT_RESPONSE, &h).ok());
    // A resource server that did not decide first: the facilitator's refusal, with its
    // decision headers, is the gate's answer; but only on an answer that is no success and
    // reports no settlement (the server holds a signed payment and could have settled it).
    let settled = response.as_ref().is_some_and(|r| r.success);
    let res = if status.is_success() || settled {
        res
    } else {
        match refusal(request, res).await? {
            Ok(refused) => return Ok(refused),
            Err(res) => res,
        }
    };
    let receipt = header(&res, x402::X_PAYMENT_RECEIPT);
    let held = header(&res, x402::X_GATE_DECISION).is_some_and(|d| d == "RequireApproval");
    let approval_id = header(&res, x402::X_GATE_APPROVAL_ID);
    let body = request.body(res).await?;
    if let (true, Some(approval_id)) = (held, approval_id) {
        return Ok(PayOutcome::Held {
            status: status.as_u16(),
            approval_id,
            requirements: prepared.requirements.clone(),
            body,
        });
    }
    let payment_id_hash =
        trust_gate_client::decode::hex(&prepared.settlement.feedback.payment_id_hash);
    match (status, response, receipt) {
        (StatusCode::OK, Some(response), Some(receipt)) if response.success => {
            Ok(PayOutcome::Paid {
                receipt,
                payment_id_hash,
                response,
                requirements: prepared.requirements.clone(),
                body,
            })
        }
        (status, response, _) => Ok(PayOutcome::Failed {
            status: status.as_u16(),
            response,
            payment_id_hash,
            body,
        }),
    }
}
