//! `trust-gate dispute <payment id hash>`: the payer of a settled payment disputes it.

use anchor_lang::prelude::Pubkey;
use clap::Args;
use solana_sdk::signer::Signer;
use std::str::FromStr;
use trust_gate_client::{Network, Overrides};
use trust_gate_demo::dispute::{self, DisputeAloneOptions, DisputeOptions};

#[derive(Args)]
pub struct DisputeArgs {
    /// The payment id hash (64 hex characters), as `trust-gate pay` prints in the receipt link.
    payment_id_hash: String,
    /// Why: stored as its sha256 in the dispute record.
    #[arg(long)]
    reason: String,
    /// Stored with the registry's dispute feedback (up to 250 bytes).
    #[arg(long, default_value = "")]
    feedback_uri: String,
    /// The payer's wallet keypair (JSON file): the key that signed the payment's transfer.
    /// On the localnet the demo tier-3 payer's key is used when omitted.
    #[arg(long, env = "PAYER_KEYPAIR")]
    keypair: Option<String>,
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    rpc_url: String,
    /// The facilitator that settled the payment.
    #[arg(long, env = "FACILITATOR_URL", default_value = "http://127.0.0.1:4020")]
    facilitator_url: String,
    /// Dispute without the facilitator, which settled the payment under this key (its fee
    /// payer): the payer signs and pays the fee and the record itself. For a facilitator that
    /// will not co-sign; its signature is not needed.
    #[arg(long, value_name = "PUBKEY")]
    facilitator_key: Option<String>,
    /// With --facilitator-key: the cluster's network (its program ids).
    #[arg(long, default_value = "solana-localnet", requires = "facilitator_key")]
    network: String,
}

pub async fn run(a: DisputeArgs) -> Result<(), String> {
    let payment_id_hash =
        trust_gate_client::decode::parse_hex32("payment_id_hash", &a.payment_id_hash).map_err(
            |_| {
                format!(
                    "payment_id_hash: {:?} is not 64 hex characters",
                    a.payment_id_hash
                )
            },
        )?;
    if a.reason.trim().is_empty() {
        return Err("--reason: must not be empty".into());
    }
    let signer = crate::pay::payer_keypair(a.keypair.as_deref(), None)?;
    let rpc = trust_gate_migrations::rpc(&a.rpc_url);
    let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
    println!(
        "Disputing payment {} as {}",
        a.payment_id_hash,
        signer.pubkey()
    );
    if let Some(key) = &a.facilitator_key {
        let facilitator = Pubkey::from_str(key)
            .map_err(|_| format!("--facilitator-key: {key:?} is not a base58 public key"))?;
        let network = Network::from_str(&a.network).map_err(|e| format!("--network: {e}"))?;
        let sig = dispute::dispute_alone(
            &rpc,
            &DisputeAloneOptions {
                facilitator,
                network,
                payment_id_hash,
                reason: a.reason.clone(),
                feedback_uri: a.feedback_uri.clone(),
                signer: &signer,
                overrides,
            },
        )
        .await
        .map_err(|e| e.to_string())?;
        println!("Disputed without the facilitator: {sig}");
        return Ok(());
    }
    let outcome = dispute::dispute(
        &reqwest::Client::new(),
        &rpc,
        &DisputeOptions {
            facilitator_url: a.facilitator_url.clone(),
            payment_id_hash,
            reason: a.reason.clone(),
            feedback_uri: a.feedback_uri.clone(),
            signer: &signer,
            overrides,
        },
    )
    .await
    .map_err(|e| e.to_string())?;
    if outcome.status == 200 {
        println!(
            "Disputed: {}",
            outcome.body["transaction"].as_str().unwrap_or_default()
        );
        println!("  record {}", outcome.body["disputeRecord"]);
        Ok(())
    } else {
        Err(format!(
            "the facilitator refused the dispute (HTTP {}): {}",
            outcome.status, outcome.body
        ))
    }
}
