//! The paying client: request, read the 402, compose the three-instruction settlement with
//! the SDK, sign as the payer, retry with `PAYMENT-SIGNATURE`.
//!
//! The steps are public ([`prepare`], [`Prepared::transaction`], [`Prepared::payload`]) so a
//! caller can inspect or alter what it pays before sending.

use anchor_lang::prelude::Pubkey;
use reqwest::StatusCode;
use serde_json::Value;
use solana_sdk::instruction::Instruction;
use solana_sdk::message::AddressLookupTableAccount;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use solana_sdk::transaction::VersionedTransaction;
use std::str::FromStr;
use trust_gate_client::ids::{CAIP2_DEVNET, CAIP2_MAINNET};
use trust_gate_client::settle::{self, Feedback, Settlement};
use trust_gate_client::x402::{
    self, ExactSvmPayload, GateExtension, PaymentPayload, PaymentRequired, PaymentRequirements,
    SettlementResponse, GATE_EXTENSION, SCHEME_TRUST_GATE, X402_VERSION,
};
use trust_gate_client::{
    chain, simulate, units, AtomicityEnforced, Builder, ClientError, Network, Overrides,
    ProgramIds, RpcClient,
};

#[derive(Debug, thiserror::Error)]
pub enum PayError {
    #[error("request to {url} failed: {reason}")]
    Http { url: String, reason: String },
    #[error("the 402 from {url} is not a usable x402 v2 challenge: {reason}")]
    Challenge { url: String, reason: String },
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// What happened.
#[derive(Clone, Debug)]
pub enum PayOutcome {
    /// The resource answered without asking for payment.
    NotRequired { status: u16, body: Value },
    /// The gate refused before any payment: Deny or RequireValidation (its headers and body).
    Refused {
        status: u16,
        decision: String,
        reason_code: Option<u8>,
        reason_name: Option<String>,
        capability: Option<String>,
        body: Value,
    },
    /// Paid and served.
    Paid {
        /// The settlement transaction (`X-Payment-Receipt`).
        receipt: String,
        payment_id_hash: String,
        response: SettlementResponse,
        body: Value,
    },
    /// The gate held the payment for an approval (RequireApproval): the payer agent's
    /// members approve it on chain (`trust-gate approve ID`), then the same payment passes.
    Held {
        status: u16,
        /// The pending approval's id (`X-Gate-Approval-Id`).
        approval_id: String,
        body: Value,
    },
    /// The payment was sent but not accepted.
    Failed {
        status: u16,
        response: Option<SettlementResponse>,
        body: Value,
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
    let r = required
        .accepts
        .iter()
        .find(|r| r.scheme == SCHEME_TRUST_GATE && r.extra.contains_key(GATE_EXTENSION))
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
    let fee_payer = key(
        "extra.feePayer",
        r.extra
            .get("feePayer")
            .and_then(|v| v.as_str())
            .unwrap_or_default(),
    )?;
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
    let funding = settle::Funding::of(&policy.base().params);
    // Above the policy's approval threshold, the approval its members made on chain.
    let approval = chain::approval_use(rpc, &b.ids, &policy, &query.approval_terms()).await?;
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
            extensions: None,
        })
    }
}

/// Options of [`pay`].
pub struct PayOptions<'a> {
    pub url: String,
    /// Sent as `X-Demo-Payer-Agent` (which agent pays).
    pub payer_agent: Option<Pubkey>,
    /// The payer agent's owner (or agent wallet): signs the transfer.
    pub signer: &'a Keypair,
    pub overrides: Overrides,
    /// An optional priority fee (the facilitator refuses a unit price above its
    /// `MAX_COMPUTE_UNIT_PRICE`) and unit limit; without a limit, the settlement asks for the
    /// one `trust_gate_client::units` computes for it.
    pub compute_budget: settle::ComputeBudget,
}

pub(crate) fn http_err(url: &str, e: impl std::fmt::Display) -> PayError {
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

/// Pays for `opts.url`: GET, and on a 402 challenge, settle and GET again.
pub async fn pay(
    http: &reqwest::Client,
    rpc: &RpcClient,
    opts: &PayOptions<'_>,
) -> Result<PayOutcome, PayError> {
    let url = &opts.url;
    let mut first = http.get(url);
    if let Some(p) = opts.payer_agent {
        first = first.header(crate::X_DEMO_PAYER_AGENT, p.to_string());
    }
    let res = first.send().await.map_err(|e| http_err(url, e))?;
    let status = res.status();
    if status != StatusCode::PAYMENT_REQUIRED {
        let body = res.json().await.unwrap_or(Value::Null);
        return Ok(PayOutcome::NotRequired {
            status: status.as_u16(),
            body,
        });
    }
    let Some(required) = header(&res, x402::PAYMENT_REQUIRED) else {
        let decision = header(&res, x402::X_GATE_DECISION).unwrap_or_default();
        return Ok(PayOutcome::Refused {
            status: status.as_u16(),
            reason_code: header(&res, x402::X_PAYMENT_REASON_CODE).and_then(|c| c.parse().ok()),
            reason_name: header(&res, x402::X_PAYMENT_REASON_NAME),
            capability: header(&res, x402::X_CAPABILITY_REQUIRED),
            decision,
            body: res.json().await.unwrap_or(Value::Null),
        });
    };
    let required: PaymentRequired = x402::decode_header(x402::PAYMENT_REQUIRED, &required)?;
    let mut prepared = prepare(rpc, &required, &opts.signer.pubkey(), opts.overrides).await?;
    let budget = &mut prepared.settlement.compute_budget;
    if opts.compute_budget.unit_limit.is_some() {
        budget.unit_limit = opts.compute_budget.unit_limit;
    }
    budget.unit_price_micro_lamports = opts.compute_budget.unit_price_micro_lamports;
    let ixs = prepared.instructions()?;
    let tx = prepared.transaction(rpc, &ixs, opts.signer).await?;
    let payload = prepared.payload(&tx)?;
    retry(http, url, opts.payer_agent, &payload, &prepared).await
}

/// The paid retry.
pub async fn retry(
    http: &reqwest::Client,
    url: &str,
    payer_agent: Option<Pubkey>,
    payload: &PaymentPayload,
    prepared: &Prepared,
) -> Result<PayOutcome, PayError> {
    let mut req = http
        .get(url)
        .header(x402::PAYMENT_SIGNATURE, x402::encode_header(payload)?);
    if let Some(p) = payer_agent {
        req = req.header(crate::X_DEMO_PAYER_AGENT, p.to_string());
    }
    let res = req.send().await.map_err(|e| http_err(url, e))?;
    let status = res.status();
    let response: Option<SettlementResponse> = header(&res, x402::PAYMENT_RESPONSE)
        .and_then(|h| x402::decode_header(x402::PAYMENT_RESPONSE, &h).ok());
    let receipt = header(&res, x402::X_PAYMENT_RECEIPT);
    let held = header(&res, x402::X_GATE_DECISION).is_some_and(|d| d == "RequireApproval");
    let approval_id = header(&res, x402::X_GATE_APPROVAL_ID);
    let body = res.json().await.unwrap_or(Value::Null);
    if let (true, Some(approval_id)) = (held, approval_id) {
        return Ok(PayOutcome::Held {
            status: status.as_u16(),
            approval_id,
            body,
        });
    }
    match (status, response, receipt) {
        (StatusCode::OK, Some(response), Some(receipt)) if response.success => {
            Ok(PayOutcome::Paid {
                receipt,
                payment_id_hash: trust_gate_client::decode::hex(
                    &prepared.settlement.feedback.payment_id_hash,
                ),
                response,
                body,
            })
        }
        (status, response, _) => Ok(PayOutcome::Failed {
            status: status.as_u16(),
            response,
            body,
        }),
    }
}
