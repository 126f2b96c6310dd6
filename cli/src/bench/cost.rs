//! `trust-gate bench cost`: what a settled payment costs its facilitator in lamports once it
//! can no longer be disputed, measured on an in-process localnet from the facilitator's own
//! balance: N payments settled through POST /settle, the clock moved past their deadline and
//! dispute window, the crank's rounds run until every log is closed. With `--peer`, the same
//! for the x402-rs facilitator's plain `exact` payments (which lock no rent).
//!
//! Then the same for held payments (docs/holdback.md): the demo's holdback payer pays its
//! tier-1 payee, a tenth of each payment held back; the crank releases the shares after their
//! hold, then closes the logs.
//!
//! Each prints exactly one line:
//! `cost: net N lamports per settlement (fees F, priority P, rent R locked for S s, R returned)`
//! where fees are the signatures' (the settlement's, plus its share of the crank's releasing
//! and closing transactions'), priority the compute-unit price times limit, and S the time
//! from the settlement to the close on the cluster's clock; the held line starts with
//! `cost (held):` and ends with the payee escrow's rent, paid once per payee and mint by
//! whoever opened it and never returned.

use super::peer;
use clap::Args;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use std::path::PathBuf;
use std::str::FromStr;
use trust_gate_client::decode::FeedbackLog;
use trust_gate_client::receipts;
use trust_gate_client::{chain, RpcClient};
use trust_gate_demo::{challenge, DemoConfig};
use trust_gate_localnet::Localnet;
use trust_gate_migrations::{payers, DemoWorld};
use trust_gate_pay::exact as pay;
use trust_gate_x402::FacilitatorRequest;

/// A signature's fee, lamports (the cluster's base fee).
const SIGNATURE_FEE: u64 = 5_000;

#[derive(Args)]
pub struct CostBench {
    /// Payments to settle (1 to 1000).
    #[arg(long, default_value_t = 20)]
    pub payments: usize,
    /// Also measure the x402-rs facilitator (this binary, built from bench/x402-rs-peer) on
    /// the same number of plain `exact` payments.
    #[arg(long)]
    pub peer: Option<PathBuf>,
}

/// One facilitator's figures, per settlement.
#[derive(Debug, Default)]
pub struct Cost {
    pub net: f64,
    pub fees: f64,
    pub priority: f64,
    pub rent: f64,
    pub locked_secs: f64,
    pub returned: f64,
    /// Held payments: the rent of the payee's escrow (once per payee and mint).
    pub escrow_rent: Option<u64>,
}

impl Cost {
    pub fn line(&self) -> String {
        let figures = format!(
            "net {} lamports per settlement (fees {}, priority {}, rent {} locked for {} s, {} returned)",
            n(self.net),
            n(self.fees),
            n(self.priority),
            n(self.rent),
            n(self.locked_secs),
            n(self.returned),
        );
        match self.escrow_rent {
            None => format!("cost: {figures}"),
            Some(e) => format!(
                "cost (held): {figures}; the payee's escrow {e} lamports once per payee and mint, never returned"
            ),
        }
    }
}

/// What the bench pays: the demo service, or the demo's tier-1 payee with a holdback.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Payee {
    Plain,
    Held,
}

/// A figure as a whole number when it is one, else to one decimal.
fn n(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

pub async fn run(a: CostBench) -> Result<(), String> {
    if a.payments == 0 || a.payments > 1000 {
        return Err("--payments must be between 1 and 1000".into());
    }
    let (localnet, world) = super::seeded_localnet().await?;
    let ours = trust_gate(&localnet, &world, a.payments, Payee::Plain).await?;
    println!("{}", ours.line());
    // A localnet of its own: the first one's clock has moved past the facilitator's.
    let (held_localnet, world) = super::seeded_localnet().await?;
    let held = trust_gate(&held_localnet, &world, a.payments, Payee::Held).await?;
    println!("{}", held.line());
    drop(held_localnet);
    if let Some(binary) = &a.peer {
        let theirs = x402_rs(&localnet, &world, binary, a.payments).await?;
        println!("{}", theirs.line());
    }
    Ok(())
}

async fn balance(rpc: &RpcClient, key: &Pubkey) -> Result<u64, String> {
    rpc.get_balance(key)
        .await
        .map_err(|e| format!("getBalance {key}: {e}"))
}

/// The fee a landed transaction paid, and its signature count (`None` until it has landed).
async fn fee_of(rpc: &RpcClient, signature: &Signature) -> Result<Option<(u64, u64)>, String> {
    Ok(receipts::transaction(rpc, signature)
        .await
        .map_err(|e| format!("getTransaction {signature}: {e}"))?
        .map(|t| (t.fee, t.signatures as u64)))
}

/// trust-gate: the demo's tier-3 payer pays the demo service (one base unit), or the demo's
/// held payee (the demo price, a tenth held back), `payments` times through the facilitator
/// (its crank off: the bench runs its rounds once the clock has moved).
async fn trust_gate(
    localnet: &Localnet,
    world: &DemoWorld,
    payments: usize,
    payee: Payee,
) -> Result<Cost, String> {
    let loopback = std::net::Ipv4Addr::LOCALHOST.into();
    let mut args = crate::services::FacilitatorArgs::for_demo(
        loopback,
        0,
        &localnet.rpc_url(),
        "solana-localnet",
    );
    args.limits.rate_limit_per_payer = Some("0".into());
    args.limits.reclaim_interval_secs = Some("0".into());
    // The crank's rounds close the measured logs alone: a pull of the demo's subscription
    // would add its fee and its receipt's rent to what the payments cost.
    args.limits.pull_subscriptions = Some("false".into());
    let server = crate::services::start_facilitator(&args).await?;
    let f = server.facilitator.clone();
    let url = server.url();
    let rpc = trust_gate_migrations::rpc(&localnet.rpc_url());
    let http = reqwest::Client::new();
    let caip2 = f.caip2().await.map_err(|e| e.message.clone())?;
    let fee_payer = world.facilitator.pubkey();
    let payer = world.payer(3).ok_or("no tier-3 demo payer")?;
    let config = match payee {
        Payee::Plain => DemoConfig {
            price: 1,
            ..DemoConfig::demo_world(&url, "http://127.0.0.1:4021")
        },
        Payee::Held => DemoConfig::held_service(&url, "http://127.0.0.1:4022"),
    };
    let query = trust_gate_client::simulate::PaymentQuery {
        payer_asset: payer.asset(),
        payee_asset: config.payee_asset,
        amount: config.price,
        mint: config.mint,
        policy_id: config.policy_id,
    };
    // The terms the challenge states, as the demo asks the facilitator for them.
    let terms = match f
        .decide(query)
        .await
        .map_err(|e| e.message.clone())?
        .holdback
    {
        Some(h) => Some(
            f.holdback_terms(&query, &h)
                .await
                .map_err(|e| e.message.clone())?,
        ),
        None => None,
    };
    if (payee == Payee::Held) != terms.is_some() {
        return Err(format!(
            "the holdback payer's terms for this payee: {terms:?}"
        ));
    }

    let before = balance(&rpc, &fee_payer).await?;
    let (mut fees, mut priority) = (0u64, 0u64);
    let mut hashes = Vec::with_capacity(payments);
    for i in 0..payments {
        let now = chain::unix_time(&rpc).await.map_err(|e| e.to_string())?;
        let required = challenge::issue_with_terms(
            &config,
            &caip2,
            &fee_payer,
            &payer.asset(),
            now,
            terms.clone(),
        );
        let prepared = pay::prepare(&rpc, &required, &payer.owner.pubkey(), Default::default())
            .await
            .map_err(|e| e.to_string())?;
        let ixs = prepared.instructions().map_err(|e| e.to_string())?;
        let tx = prepared
            .transaction(&rpc, &ixs, &payer.owner)
            .await
            .map_err(|e| e.to_string())?;
        let req = FacilitatorRequest {
            x402_version: 2,
            payment_payload: prepared.payload(&tx).map_err(|e| e.to_string())?,
            payment_requirements: prepared.requirements.clone(),
        };
        let res = http
            .post(format!("{url}/settle"))
            .json(&req)
            .send()
            .await
            .map_err(|e| format!("POST /settle: {e}"))?;
        let body: serde_json::Value = res.json().await.map_err(|e| e.to_string())?;
        let signature = body["transaction"]
            .as_str()
            .and_then(|s| Signature::from_str(s).ok())
            .filter(|_| body["success"] == true)
            .ok_or_else(|| format!("payment {i}: /settle answered {body}"))?;
        let (fee, signatures) = fee_of(&rpc, &signature)
            .await?
            .ok_or(format!("settlement {signature} not found after /settle"))?;
        fees += signatures * SIGNATURE_FEE;
        priority += fee.saturating_sub(signatures * SIGNATURE_FEE);
        hashes.push(prepared.settlement.feedback.payment_id_hash);
        if (i + 1) % 10 == 0 || i + 1 == payments {
            eprintln!("settled {}/{payments}", i + 1);
        }
    }
    let settled = balance(&rpc, &fee_payer).await?;

    // What the logs hold and since when.
    let logs: Vec<Pubkey> = hashes
        .iter()
        .map(|h| f.chain.builder.pda.feedback_log(&fee_payer, h))
        .collect();
    let accounts = chain::accounts(&rpc, &logs)
        .await
        .map_err(|e| e.to_string())?;
    let (mut rent, mut created) = (0u64, Vec::new());
    for (key, acc) in logs.iter().zip(&accounts) {
        let acc = acc
            .as_ref()
            .ok_or(format!("log {key} missing after its settlement"))?;
        let log: FeedbackLog = trust_gate_client::decode::account("FeedbackLog", &acc.data)
            .map_err(|e| e.to_string())?;
        rent += acc.lamports;
        created.push(log.created_at);
    }

    // Past every deadline, hold and dispute window, then the crank's rounds until all are
    // closed: a held share is released first, its log closed in a later round.
    let wait = trust_gate_client::decode::DISPUTE_WINDOW_SECS as u64 + 120;
    eprintln!("moving the localnet's clock {wait} s ahead; the crank closes the logs");
    localnet.warp(wait).await?;
    let (mut closed, mut released) = (0, 0);
    while closed < payments {
        let round = f.reclaim_once().await.map_err(|e| e.message.clone())?;
        if round.closed == 0 && round.holdbacks_released == 0 {
            return Err(format!(
                "the crank closed {closed} of {payments} logs and no more: {:?}",
                round.failures
            ));
        }
        closed += round.closed;
        released += round.holdbacks_released;
        eprintln!("crank: released {released}, closed {closed}/{payments}");
    }
    let closed_at = chain::unix_time(&rpc).await.map_err(|e| e.to_string())?;
    let after = balance(&rpc, &fee_payer).await?;
    let still: Vec<_> = chain::accounts(&rpc, &logs)
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .flatten()
        .collect();
    if !still.is_empty() {
        return Err(format!("{} logs still open after the crank", still.len()));
    }
    // The crank's fees: what the balance got back short of the rent.
    let close_fees = (settled + rent).saturating_sub(after);
    let per = payments as f64;
    let locked: i64 = created.iter().map(|c| closed_at - c).sum();
    Ok(Cost {
        net: before.saturating_sub(after) as f64 / per,
        fees: (fees + close_fees) as f64 / per,
        priority: priority as f64 / per,
        rent: rent as f64 / per,
        locked_secs: (locked as f64 / per).round(),
        returned: rent as f64 / per,
        escrow_rent: match payee {
            Payee::Plain => None,
            Payee::Held => Some(
                balance(
                    &rpc,
                    &f.chain
                        .builder
                        .pda
                        .holdback_escrow(&config.payee_asset, &config.mint),
                )
                .await?,
            ),
        },
    })
}

/// The x402-rs facilitator: `payments` plain exact payments of one base unit from a fresh
/// payer, settled through its POST /settle.
async fn x402_rs(
    localnet: &Localnet,
    world: &DemoWorld,
    binary: &std::path::Path,
    payments: usize,
) -> Result<Cost, String> {
    let rpc = trust_gate_migrations::rpc(&localnet.rpc_url());
    let genesis = rpc.get_genesis_hash().await.map_err(|e| e.to_string())?;
    let caip2 = trust_gate_client::ids::caip2_from_genesis(&genesis.to_string());
    let fee_payer = Keypair::new();
    rpc.request_airdrop(&fee_payer.pubkey(), 10_000_000_000)
        .await
        .map_err(|e| format!("funding the peer's fee payer: {e}"))?;
    eprintln!("starting the x402-rs peer ({})", binary.display());
    let running = peer::start(binary, &localnet.rpc_url(), &caip2, &fee_payer).await?;
    let sender = payers::extra_payers(
        &crate::migrate::seed_keys(localnet),
        world,
        1,
        world.payer_policy(),
        1_000_000_000,
    )
    .await
    .map_err(|e| e.to_string())?
    .remove(0)
    .owner;
    let p = peer::Payments::new(world, &caip2, fee_payer.pubkey());
    let http = reqwest::Client::new();
    let before = balance(&rpc, &fee_payer.pubkey()).await?;
    let (mut fees, mut priority) = (0u64, 0u64);
    for i in 0..payments {
        let blockhash = rpc
            .get_latest_blockhash()
            .await
            .map_err(|e| e.to_string())?;
        let nonce = format!("cost-{}-{i}", std::process::id());
        let tx = p
            .transaction(&sender, &nonce, blockhash, &[&sender])
            .ok_or("building the peer's payment")?;
        let body = p.body(&tx).ok_or("encoding the peer's payment")?;
        let res: serde_json::Value = http
            .post(format!("{}/settle", running.url))
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("peer POST /settle: {e}"))?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        let signature = res["transaction"]
            .as_str()
            .and_then(|s| Signature::from_str(s).ok())
            .filter(|_| res["success"] == true)
            .ok_or_else(|| format!("peer payment {i}: /settle answered {res}"))?;
        // The peer answers once sent; wait for the transaction to land.
        let mut landed = None;
        for _ in 0..200 {
            if let Some(f) = fee_of(&rpc, &signature).await? {
                landed = Some(f);
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        let (fee, signatures) = landed.ok_or(format!("peer payment {signature} never landed"))?;
        fees += signatures * SIGNATURE_FEE;
        priority += fee.saturating_sub(signatures * SIGNATURE_FEE);
    }
    let after = balance(&rpc, &fee_payer.pubkey()).await?;
    let per = payments as f64;
    Ok(Cost {
        net: before.saturating_sub(after) as f64 / per,
        fees: fees as f64 / per,
        priority: priority as f64 / per,
        ..Cost::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_has_the_issues_form() {
        let c = Cost {
            net: 10_385.0,
            fees: 10_384.6,
            priority: 1.0,
            rent: 2_296_800.0,
            locked_secs: 604_921.0,
            returned: 2_296_800.0,
            escrow_rent: None,
        };
        assert_eq!(
            c.line(),
            "cost: net 10385 lamports per settlement (fees 10384.6, priority 1, rent 2296800 locked for 604921 s, 2296800 returned)"
        );
        let held = Cost {
            escrow_rent: Some(2_039_280),
            ..c
        };
        assert_eq!(
            held.line(),
            "cost (held): net 10385 lamports per settlement (fees 10384.6, priority 1, rent 2296800 locked for 604921 s, 2296800 returned); the payee's escrow 2039280 lamports once per payee and mint, never returned"
        );
    }
}
