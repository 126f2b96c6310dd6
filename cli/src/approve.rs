//! `trust-gate approvals` lists the payments a facilitator holds for an approval;
//! `trust-gate approve ID` approves one on chain as members of the payer's policy authority.
//!
//! The terms come from the facilitator (`GET /approvals/{id}`), and the id is their approval
//! address, so they are checked against it before anything is signed: a facilitator cannot
//! make a member approve other terms than the id's.

use crate::policy::{cosigners, member_keys, send, Cluster, Members};
use clap::Args;
use serde_json::Value;
use solana_sdk::signer::Signer;
use std::str::FromStr;
use trust_gate_client::approvals::{PendingApproval, MAX_APPROVAL_SECS};
use trust_gate_client::{chain, Builder, Network, Overrides, ProgramIds};

#[derive(Args)]
pub struct ApprovalsArgs {
    /// Only this payer agent's (its MPL Core asset, base58).
    #[arg(long, value_name = "ASSET")]
    payer: Option<String>,
    /// Print the facilitator's JSON as it is.
    #[arg(long)]
    json: bool,
    /// The facilitator holding them.
    #[arg(long, env = "FACILITATOR_URL", default_value = "http://127.0.0.1:4020")]
    facilitator_url: String,
}

#[derive(Args)]
pub struct ApproveArgs {
    /// The pending approval's id (`X-Gate-Approval-Id`, or `trust-gate approvals`).
    id: String,
    #[command(flatten)]
    members: Members,
    /// How long the approval stands on chain, in seconds (at most 604800, a week): the
    /// payment must be made again within it.
    #[arg(long, default_value_t = 86_400)]
    expires_in: i64,
    /// Close the unused approval at ID instead, its rent back to the member who paid it:
    /// that member (--keypair) may at any time, anyone once it has expired. Reads the chain
    /// only.
    #[arg(long)]
    close: bool,
    #[command(flatten)]
    cluster: Cluster,
    /// The facilitator holding the payment.
    #[arg(long, env = "FACILITATOR_URL", default_value = "http://127.0.0.1:4020")]
    facilitator_url: String,
}

/// `GET {facilitator}{path}` as JSON; a non-200 answer is an error quoting it.
async fn get(facilitator_url: &str, path: &str) -> Result<Value, String> {
    let url = format!("{}{path}", facilitator_url.trim_end_matches('/'));
    let res = reqwest::get(&url)
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    let status = res.status();
    let body: Value = res
        .json()
        .await
        .map_err(|e| format!("GET {url}: the answer is not JSON: {e}"))?;
    if !status.is_success() {
        let message = body["message"].as_str().unwrap_or_default();
        return Err(format!("GET {url}: HTTP {}: {message}", status.as_u16()));
    }
    Ok(body)
}

pub async fn list(a: ApprovalsArgs) -> Result<(), String> {
    let path = match &a.payer {
        Some(p) => {
            let payer = anchor_lang::prelude::Pubkey::from_str(p.trim())
                .map_err(|_| format!("--payer: {p:?} is not a base58 public key"))?;
            format!("/approvals?payer={payer}")
        }
        None => "/approvals".to_string(),
    };
    let v = get(&a.facilitator_url, &path).await?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
        );
        return Ok(());
    }
    let listed = v["approvals"].as_array().cloned().unwrap_or_default();
    if listed.is_empty() {
        println!("No payment waits for an approval.");
        return Ok(());
    }
    for r in &listed {
        let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        println!("{}  {}", s("id"), s("state"));
        println!(
            "  {} {} of mint {} from payer agent {} to payee agent {}, policy {}",
            s("kind"),
            s("amount"),
            s("mint"),
            s("payerAgentAsset"),
            s("payeeAgentAsset"),
            r["policyId"]
        );
        if let Some(res) = r["resource"].as_str() {
            println!("  for {res}");
        }
        println!("  listed until {} (unix)", r["expiresAt"]);
    }
    println!("Approve one: trust-gate approve ID [--keypair FILE]");
    Ok(())
}

pub async fn approve(a: ApproveArgs) -> Result<(), String> {
    if !(1..=MAX_APPROVAL_SECS).contains(&a.expires_in) {
        return Err(format!(
            "--expires-in: {} is not 1..={MAX_APPROVAL_SECS} seconds (an approval stands a week at most)",
            a.expires_in
        ));
    }
    let id = anchor_lang::prelude::Pubkey::from_str(a.id.trim())
        .map_err(|_| format!("ID: {:?} is not a base58 public key", a.id))?;
    let network = Network::from_str(&a.cluster.network).map_err(|e| format!("--network: {e}"))?;
    let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
    let b = Builder::new(ProgramIds::for_network(network).with_overrides(overrides))
        .map_err(|e| e.to_string())?;
    if a.close {
        return close(&a, id, network, &b).await;
    }
    let v = get(&a.facilitator_url, &format!("/approvals/{id}")).await?;
    let pending: PendingApproval = serde_json::from_value(v.clone())
        .map_err(|e| format!("the facilitator's record of {id} is not a pending approval: {e}"))?;
    if pending.id != id {
        return Err(format!(
            "the facilitator answered the record of {} for {id}",
            pending.id
        ));
    }
    pending.check_id(&b).map_err(|e| e.to_string())?;
    let terms = pending.terms();
    println!("Approving {id}:");
    println!(
        "  {} {} of mint {} from payer agent {} to payee agent {}, policy {}",
        pending.kind,
        terms.amount,
        terms.mint,
        terms.payer_asset,
        terms.payee_asset,
        terms.policy_id
    );
    if let Some(res) = &pending.resource {
        println!("  for {res}");
    }
    let rpc = trust_gate_migrations::rpc(&a.cluster.rpc_url);
    if let Some((_, stands)) = chain::approval(&rpc, &b.ids, &terms)
        .await
        .map_err(|e| e.to_string())?
    {
        println!(
            "Already approved (until {} unix, by {} member(s)): pay again to use it.",
            stands.expires_at, stands.signers
        );
        return Ok(());
    }
    let members = member_keys(&a.members, &terms.payer_asset, network)?;
    let now = chain::unix_time(&rpc).await.map_err(|e| e.to_string())?;
    let expires_at = now + a.expires_in;
    let ix = b.approve_payment(
        &members[0].pubkey(),
        &cosigners(&members),
        terms,
        expires_at,
    );
    let sig = send(&rpc, &[ix], &members).await?;
    println!("Approved on chain: {sig}");
    println!(
        "  the approval stands until {expires_at} (unix); the same payment now passes once (its rent, paid by {}, comes back when it does)",
        members[0].pubkey()
    );
    Ok(())
}

/// `--close`: the unused approval at `id` closed, its rent back to its rent payer.
async fn close(
    a: &ApproveArgs,
    id: anchor_lang::prelude::Pubkey,
    network: Network,
    b: &Builder,
) -> Result<(), String> {
    use trust_gate_client::decode::PaymentApproval;
    let rpc = trust_gate_migrations::rpc(&a.cluster.rpc_url);
    let approval: PaymentApproval = chain::anchor_account(&rpc, "PaymentApproval", &id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!("no approval stands at {id}: never approved, used by its payment, or closed")
        })?;
    let signer = member_keys(&a.members, &approval.payer_asset, network)?
        .into_iter()
        .next()
        .ok_or("--keypair is required")?;
    let now = chain::unix_time(&rpc).await.map_err(|e| e.to_string())?;
    if signer.pubkey() != approval.rent_payer && now <= approval.expires_at {
        return Err(format!(
            "only its rent payer {} may close the approval before it expires at {} (unix); anyone may after",
            approval.rent_payer, approval.expires_at
        ));
    }
    let rent = rpc.get_balance(&id).await.map_err(|e| e.to_string())?;
    let ix = b.close_approval(&signer.pubkey(), &id, &approval.rent_payer);
    let sig = send(&rpc, &[ix], &[signer]).await?;
    println!("Closed the unused approval {id}: {sig}");
    println!("  {rent} lamports of rent back to {}", approval.rent_payer);
    Ok(())
}
