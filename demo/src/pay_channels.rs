//! The paying client of the channel schemes, behind `trust-gate pay --scheme upto|
//! batch-settlement`: read the 402, pick the gated offer (`trust-gate-upto`,
//! `trust-gate-batch-settlement`) or, asked to, the plain one, build the open with the client
//! SDK (`trust_gate_client::session`), sign as the payer, retry with `PAYMENT-SIGNATURE`; a
//! session then pays each further request with a voucher and ends with its refund.

use anchor_lang::prelude::Pubkey;
use serde_json::{json, Value};
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use trust_gate_client::batch::{self, BatchExtra, BatchPayload};
use trust_gate_client::decode::ApprovalTerms;
use trust_gate_client::session::{PayerSession, SessionGate, SessionTerms, UptoTerms};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::upto::{self, UptoExtra};
use trust_gate_client::x402::{self, GateExtension, PaymentRequired, PaymentRequirements};
use trust_gate_client::{chain, Builder, Overrides, ProgramIds, RpcClient};

/// Why a channel payment did not go through.
#[derive(Debug, thiserror::Error)]
pub enum ChannelPayError {
    #[error("request to {url} failed: {reason}")]
    Http { url: String, reason: String },
    #[error("{url}: {reason}")]
    Offer { url: String, reason: String },
    #[error("{what} was not accepted (HTTP {status}): {body}")]
    Refused {
        what: String,
        status: u16,
        body: Value,
    },
}

impl ChannelPayError {
    /// The pending approval's id when the gate held the deposit for an approval
    /// (RequireApproval: the facilitator's answer names it).
    pub fn approval_id(&self) -> Option<&str> {
        match self {
            ChannelPayError::Refused { body, .. }
                if body["decision"]["kind"] == "RequireApproval" =>
            {
                body["approval"]["id"].as_str()
            }
            _ => None,
        }
    }
}

/// Who pays, with what, where.
pub struct ChannelPay<'a> {
    pub http: &'a reqwest::Client,
    pub rpc: &'a RpcClient,
    /// Program ids that differ from the offer's network's.
    pub overrides: Overrides,
    pub url: String,
    /// Sent as `X-Demo-Payer-Agent` (the demo's default payer otherwise).
    pub payer_agent: Option<Pubkey>,
    pub signer: &'a Keypair,
    /// The plain scheme rather than the gated one.
    pub ungated: bool,
}

/// A paid request: the resource's answer and the settlement (`PAYMENT-RESPONSE`).
#[derive(Clone, Debug)]
pub struct Paid {
    pub body: Value,
    pub settlement: Value,
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
            url: self.url.clone(),
            reason: reason.to_string(),
        }
    }

    fn offer_error(&self, reason: impl Into<String>) -> ChannelPayError {
        ChannelPayError::Offer {
            url: self.url.clone(),
            reason: reason.into(),
        }
    }

    /// The 402's offers, and the one of `scheme`.
    async fn offer(
        &self,
        scheme: &str,
    ) -> Result<(PaymentRequired, PaymentRequirements), ChannelPayError> {
        let mut req = self.http.get(&self.url);
        if let Some(a) = self.payer_agent {
            req = req.header(crate::X_DEMO_PAYER_AGENT, a.to_string());
        }
        let res = req.send().await.map_err(|e| self.fail(e))?;
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
        let offer = pr
            .accepts
            .iter()
            .find(|r| r.scheme == scheme)
            .cloned()
            .ok_or_else(|| self.offer_error(format!("no {scheme} offer in the 402")))?;
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
        let envelope = json!({
            "x402Version": 2,
            "resource": pr.resource,
            "accepted": offer,
            "payload": payload,
        });
        let encoded = x402::encode_header(&envelope).map_err(|e| self.fail(e))?;
        let res = self
            .http
            .get(&self.url)
            .header(x402::PAYMENT_SIGNATURE, encoded)
            .send()
            .await
            .map_err(|e| self.fail(e))?;
        let status = res.status().as_u16();
        let settlement = res
            .headers()
            .get(x402::PAYMENT_RESPONSE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| x402::decode_header::<Value>(x402::PAYMENT_RESPONSE, v).ok())
            .unwrap_or(Value::Null);
        let body: Value = res.json().await.unwrap_or(Value::Null);
        if status != 200 {
            return Err(ChannelPayError::Refused {
                what: what.into(),
                status,
                body,
            });
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
        let Ok(g) = GateExtension::from_requirements(offer) else {
            return Ok(None);
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
        let ids = ProgramIds::for_network(crate::pay::network_of(&offer.network))
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

    /// One `upto` payment: the ceiling escrowed, the resource's use charged.
    pub async fn upto(&self) -> Result<Paid, ChannelPayError> {
        let scheme = if self.ungated {
            upto::SCHEME_UPTO
        } else {
            upto::SCHEME_GATED_UPTO
        };
        let (pr, offer) = self.offer(scheme).await?;
        let extra: UptoExtra = serde_json::from_value(Value::Object(offer.extra.clone()))
            .map_err(|e| self.offer_error(format!("extra: {e}")))?;
        let ceiling = offer
            .amount
            .parse()
            .map_err(|_| self.offer_error("amount is not decimal digits"))?;
        let (mint, token_program, pay_to, tables) = self.parties(&offer, &extra.fee_payer).await?;
        let now = now_unix();
        let builder = self.builder(&offer)?;
        let (open_slot, blockhash) = self.recent().await?;
        let gate = self.gate(&offer, &builder, mint, ceiling).await?;
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
        self.send("the upto payment", &pr, &offer, payload).await
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
        let scheme = if self.ungated {
            batch::SCHEME_BATCH
        } else {
            batch::SCHEME_GATED_BATCH
        };
        let (pr, offer) = self.offer(scheme).await?;
        let extra: BatchExtra = serde_json::from_value(Value::Object(offer.extra.clone()))
            .map_err(|e| self.offer_error(format!("extra: {e}")))?;
        let price: u64 = offer
            .amount
            .parse()
            .map_err(|_| self.offer_error("amount is not decimal digits"))?;
        let (mint, token_program, pay_to, tables) = self.parties(&offer, &extra.fee_payer).await?;
        let builder = self.builder(&offer)?;
        let (open_slot, blockhash) = self.recent().await?;
        let deposit = price.saturating_mul(deposit_requests);
        let gate = self.gate(&offer, &builder, mint, deposit).await?;
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
        let mut paid = vec![
            self.send("the deposit", &pr, &offer, value(&first)?)
                .await?,
        ];
        for i in 1..requests {
            let p = session.voucher_payload(price).map_err(|e| self.fail(e))?;
            paid.push(
                self.send(&format!("voucher {}", i + 1), &pr, &offer, value(&p)?)
                    .await?,
            );
        }
        let refund = self
            .send("the refund", &pr, &offer, value(&session.refund_payload())?)
            .await?;
        Ok(session_paid(&session, paid, refund))
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
