//! The resource server's side of the facilitator API: POST /verify with a verify context,
//! POST /settle with the client's payment, GET /supported for the fee payer and network.

use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use trust_gate_x402::{FacilitatorRequest, SettlementResponse};

#[derive(Clone, Debug)]
pub struct FacilitatorClient {
    pub http: reqwest::Client,
    pub url: String,
}

/// A facilitator answer: status, headers and JSON body.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

/// What /supported says about the trust-gate scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kind {
    pub network: String,
    pub fee_payer: Pubkey,
}

#[derive(Debug, thiserror::Error)]
pub enum FacilitatorError {
    #[error("the facilitator at {url} did not answer: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the facilitator at {url} answered {what}")]
    Unexpected { url: String, what: String },
}

impl FacilitatorClient {
    pub fn new(http: reqwest::Client, url: &str) -> Self {
        FacilitatorClient {
            http,
            url: url.trim_end_matches('/').to_string(),
        }
    }

    async fn call(&self, req: reqwest::RequestBuilder) -> Result<Answer, FacilitatorError> {
        let unreachable = |e: reqwest::Error| FacilitatorError::Unreachable {
            url: self.url.clone(),
            reason: e.to_string(),
        };
        let res = req.send().await.map_err(unreachable)?;
        let status = res.status();
        let headers = res.headers().clone();
        let text = res.text().await.map_err(unreachable)?;
        let body = serde_json::from_str(&text).map_err(|_| FacilitatorError::Unexpected {
            url: self.url.clone(),
            what: format!("{status} with a body that is not JSON"),
        })?;
        Ok(Answer {
            status,
            headers,
            body,
        })
    }

    /// The gate's decision for a payment (verify context).
    pub async fn verify(
        &self,
        payer: &Pubkey,
        payee: &Pubkey,
        amount: u64,
        mint: &Pubkey,
        policy_id: u32,
    ) -> Result<Answer, FacilitatorError> {
        let body = json!({
            "payerAgentAsset": payer.to_string(),
            "payeeAgentAsset": payee.to_string(),
            "amount": amount.to_string(),
            "mint": mint.to_string(),
            "policyId": policy_id,
        });
        self.call(self.http.post(format!("{}/verify", self.url)).json(&body))
            .await
    }

    /// Settles a payment; the body is always a SettlementResponse (success or not).
    pub async fn settle(
        &self,
        req: &FacilitatorRequest,
    ) -> Result<(Answer, SettlementResponse), FacilitatorError> {
        let body = serde_json::to_value(req).map_err(|e| FacilitatorError::Unexpected {
            url: self.url.clone(),
            what: format!("a request that is not JSON: {e}"),
        })?;
        let a = self.settle_json(&body).await?;
        let s =
            serde_json::from_value(a.body.clone()).map_err(|e| FacilitatorError::Unexpected {
                url: self.url.clone(),
                what: format!(
                    "{} with a body that is not a SettlementResponse: {e}",
                    a.status
                ),
            })?;
        Ok((a, s))
    }

    /// POSTs any x402 request to /settle (the channel schemes' answers carry more than a
    /// `SettlementResponse`). A `settlement_pending` answer naming its transaction is asked
    /// once more at once, as `@x402/core`'s resource server does: the facilitator then waits
    /// for that same transaction again, and never sends a second one.
    pub async fn settle_json(&self, body: &Value) -> Result<Answer, FacilitatorError> {
        let url = format!("{}/settle", self.url);
        let a = self.call(self.http.post(&url).json(body)).await?;
        if !is_pending(&a.body) {
            return Ok(a);
        }
        let mut again = self.call(self.http.post(&url).json(body)).await?;
        // What the facilitator now reports as replayed is what this request's first call
        // sent: not an earlier request's payment.
        if let Some(r) = again.body.get_mut("receipt").filter(|r| r.is_object()) {
            r["replayed"] = false.into();
        }
        if again.body.get("replayed").is_some() {
            again.body["replayed"] = false.into();
        }
        Ok(again)
    }

    /// The fee payer and network of the facilitator's `trust-gate` kind.
    pub async fn supported(&self) -> Result<Kind, FacilitatorError> {
        let a = self
            .call(self.http.get(format!("{}/supported", self.url)))
            .await?;
        let kinds = a.body["kinds"].as_array().cloned().unwrap_or_default();
        let kind = kinds
            .iter()
            .find(|k| k["scheme"] == trust_gate_x402::SCHEME_TRUST_GATE)
            .cloned()
            .unwrap_or_default();
        let network = kind["network"].as_str();
        let fee_payer = kind["extra"]["feePayer"]
            .as_str()
            .and_then(|s| Pubkey::from_str(s).ok());
        match (network, fee_payer) {
            (Some(n), Some(f)) => Ok(Kind {
                network: n.to_string(),
                fee_payer: f,
            }),
            _ => Err(FacilitatorError::Unexpected {
                url: self.url.clone(),
                what: format!(
                    "/supported without a trust-gate kind and fee payer: {}",
                    a.body
                ),
            }),
        }
    }
}

/// Whether a /settle answer is x402's `settlement_pending` with the transaction it waits for.
pub fn is_pending(settlement: &Value) -> bool {
    settlement["errorReason"] == "settlement_pending"
        && settlement["transaction"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
}
