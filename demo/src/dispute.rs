//! The disputing client behind `trust-gate dispute`: the payer of a settled payment signs
//! `gate::dispute_payment` and asks the facilitator that settled it to co-sign and send it
//! (`POST /dispute`, body `{"transaction": "<base64>"}`), or, when the facilitator will not,
//! sends it alone, paying the fee and the record itself ([`dispute_alone`]).

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use std::str::FromStr;
use trust_gate_client::settle::{self, Dispute};
use trust_gate_client::{chain, Builder, Network, Overrides, ProgramIds, RpcClient};
use trust_gate_pay::exact::{http_err, PayError};
use trust_gate_x402 as x402;

/// What to dispute, and who signs.
pub struct DisputeOptions<'a> {
    /// The facilitator that settled the payment, e.g. http://127.0.0.1:4020.
    pub facilitator_url: String,
    pub payment_id_hash: [u8; 32],
    /// Why (hashed with sha256 into the on-chain record).
    pub reason: String,
    /// Stored with the registry feedback (up to 250 bytes).
    pub feedback_uri: String,
    /// The payer's wallet: the settlement's transfer authority.
    pub signer: &'a Keypair,
    pub overrides: Overrides,
}

/// The facilitator's answer: its status and JSON body.
#[derive(Clone, Debug)]
pub struct DisputeOutcome {
    pub status: u16,
    pub body: Value,
}

async fn get_json(http: &reqwest::Client, url: &str) -> Result<Value, PayError> {
    let res = http.get(url).send().await.map_err(|e| http_err(url, e))?;
    res.json()
        .await
        .map_err(|e| http_err(url, format!("not JSON: {e}")))
}

/// Builds the dispute from the facilitator's receipt of the payment, signs it as the payer
/// and posts it to the facilitator.
pub async fn dispute(
    http: &reqwest::Client,
    rpc: &RpcClient,
    opts: &DisputeOptions<'_>,
) -> Result<DisputeOutcome, PayError> {
    let base = opts.facilitator_url.trim_end_matches('/');
    let hash = trust_gate_client::decode::hex(&opts.payment_id_hash);
    let receipt_url = format!("{base}/receipt/{hash}");
    let receipt = get_json(http, &receipt_url).await?;
    let refused = |reason: String| http_err(&receipt_url, reason);
    if receipt["exists"] != json!(true) {
        return Err(refused(format!(
            "this facilitator has no receipt of payment {hash}: nothing to dispute"
        )));
    }
    let key = |v: &Value, what: &str| {
        v.as_str()
            .and_then(|s| Pubkey::from_str(s).ok())
            .ok_or_else(|| refused(format!("the answer has no {what}")))
    };
    let payee_asset = key(&receipt["payee"], "payee")?;
    let health = get_json(http, &format!("{base}/healthz")).await?;
    let facilitator = key(&health["facilitator"], "facilitator key")?;
    let network = health["network"]
        .as_str()
        .and_then(|n| Network::from_str(n).ok())
        .unwrap_or(Network::Localnet);
    let b = Builder::new(ProgramIds::for_network(network).with_overrides(opts.overrides))?;
    let d = dispute_of(
        rpc,
        &b,
        opts.payment_id_hash,
        payee_asset,
        &opts.reason,
        &opts.feedback_uri,
    )
    .await?;
    let blockhash = rpc
        .get_latest_blockhash()
        .await
        .map_err(trust_gate_client::ClientError::from)?;
    let tx = settle::dispute_transaction(&b, &facilitator, opts.signer, &d, blockhash)?;
    let wire = x402::encode_transaction(&tx).map_err(|e| refused(e.to_string()))?;
    let url = format!("{base}/dispute");
    let body = json!({"transaction": wire});
    let res = http
        .post(&url)
        .json(&body)
        .send()
        .await
        .map_err(|e| http_err(&url, e))?;
    let status = res.status().as_u16();
    let body = res.json().await.unwrap_or(Value::Null);
    Ok(DisputeOutcome { status, body })
}

/// What to dispute without the facilitator: its key finds the payment's log on chain.
pub struct DisputeAloneOptions<'a> {
    /// The facilitator that settled the payment (the settlement's fee payer).
    pub facilitator: Pubkey,
    pub network: Network,
    pub payment_id_hash: [u8; 32],
    /// Why (hashed with sha256 into the on-chain record).
    pub reason: String,
    /// Stored with the registry feedback (up to 250 bytes).
    pub feedback_uri: String,
    /// The payer's wallet: the settlement's transfer authority. It signs and pays.
    pub signer: &'a Keypair,
    pub overrides: Overrides,
}

/// Disputes a settled payment without its facilitator: reads the payment's feedback log for
/// its payee, signs as the payer, pays the fee and the record, sends and confirms.
pub async fn dispute_alone(
    rpc: &RpcClient,
    opts: &DisputeAloneOptions<'_>,
) -> Result<Signature, PayError> {
    let b = Builder::new(ProgramIds::for_network(opts.network).with_overrides(opts.overrides))?;
    let log_key = b.pda.feedback_log(&opts.facilitator, &opts.payment_id_hash);
    let log: trust_gate_client::decode::FeedbackLog =
        chain::anchor_account(rpc, "FeedbackLog", &log_key)
            .await?
            .ok_or_else(|| {
                http_err(
                    &log_key.to_string(),
                    format!(
                        "facilitator {} has no feedback log of payment {}: nothing to dispute",
                        opts.facilitator,
                        trust_gate_client::decode::hex(&opts.payment_id_hash)
                    ),
                )
            })?;
    let d = dispute_of(
        rpc,
        &b,
        opts.payment_id_hash,
        log.payee_asset,
        &opts.reason,
        &opts.feedback_uri,
    )
    .await?;
    Ok(settle::dispute_alone(rpc, &b, &opts.facilitator, opts.signer, &d).await?)
}

/// The dispute of payment `payment_id_hash` to `payee_asset`: the registry's base collection,
/// the reason's sha256 and the feedback URI.
async fn dispute_of(
    rpc: &RpcClient,
    b: &Builder,
    payment_id_hash: [u8; 32],
    payee_asset: Pubkey,
    reason: &str,
    feedback_uri: &str,
) -> Result<Dispute, PayError> {
    Ok(Dispute {
        collection: chain::base_collection(rpc, &b.ids).await?,
        payment_id_hash,
        payee_asset,
        reason_hash: Sha256::digest(reason.as_bytes()).into(),
        feedback_uri: feedback_uri.to_string(),
    })
}
