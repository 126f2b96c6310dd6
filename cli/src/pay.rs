//! `trust-gate pay <url>`: pay an x402 resource protected by trust-gate: one exact payment
//! (the `trust-gate` scheme), or with `--scheme` on payment channels: `upto` (a ceiling
//! escrowed, the use charged) or `batch-settlement` (a session: a voucher a request).

use anchor_lang::prelude::Pubkey;
use clap::Args;
use solana_sdk::signature::{read_keypair_file, Keypair};
use solana_sdk::signer::Signer;
use std::str::FromStr;
use trust_gate_client::decode::DecisionView;
use trust_gate_client::settle::ComputeBudget;
use trust_gate_client::Overrides;
use trust_gate_migrations::DemoWorld;
use trust_gate_pay::channels::{ChannelPay, ChannelPayError};
use trust_gate_pay::exact::{self as pay, PayOptions, PayOutcome, Request};
use trust_gate_x402::GateExtension;

#[derive(Args)]
pub struct PayArgs {
    /// The protected resource, e.g. http://127.0.0.1:4021/protected.
    url: String,
    /// The payer agent (asset key), sent as X-Payer-Agent; the challenge must name it.
    /// Default: the resource's default (the demo's tier-3 agent).
    #[arg(long)]
    payer_agent: Option<String>,
    /// The most to pay, in base units of the offer's asset (an upto ceiling, a session's
    /// deposit): above it, nothing is signed.
    #[arg(long, value_name = "BASE_UNITS")]
    max_amount: Option<u64>,
    /// The payer's wallet keypair (JSON file). On the localnet the demo agents' keys are
    /// used when omitted.
    #[arg(long, env = "PAYER_KEYPAIR")]
    keypair: Option<String>,
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    rpc_url: String,
    /// Where the receipt can be looked up.
    #[arg(long, env = "FACILITATOR_URL", default_value = "http://127.0.0.1:4020")]
    facilitator_url: String,
    /// A priority fee, in micro-lamports per compute unit: the settlement carries a
    /// ComputeBudget unit price (the facilitator refuses one above its cap).
    #[arg(long, value_name = "MICROLAMPORTS")]
    priority_fee: Option<u64>,
    /// The settlement's compute-unit limit. Default: what the SDK computes for it, just above
    /// what it uses (`trust_gate_client::units`).
    #[arg(long, value_name = "UNITS")]
    compute_unit_limit: Option<u32>,
    /// Pay on a payment channel: `upto` (e.g. the demo's /metered?units=3) or
    /// `batch-settlement` (e.g. the demo's /session). The gated variant unless --ungated.
    #[arg(long, value_enum)]
    scheme: Option<ChannelScheme>,
    /// With --scheme: the plain scheme (no policy runs), when the resource offers it.
    #[arg(long, requires = "scheme")]
    ungated: bool,
    /// With --scheme batch-settlement: requests paid in the session (default 10).
    #[arg(long, requires = "scheme")]
    requests: Option<u64>,
    /// With --scheme batch-settlement: the deposit, in requests' prices (default 100).
    #[arg(long, requires = "scheme")]
    deposit_requests: Option<u64>,
}

/// The channel schemes `trust-gate pay` speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ChannelScheme {
    Upto,
    BatchSettlement,
}

impl PayArgs {
    /// What the flags ask of the settlement's ComputeBudget; a unit limit left out is the
    /// SDK's (the paying client computes it).
    fn compute_budget(&self) -> Result<ComputeBudget, String> {
        if self.priority_fee == Some(0) {
            return Err("--priority-fee: 0 is no priority fee; leave the flag out".into());
        }
        if let Some(limit) = self.compute_unit_limit {
            if limit == 0 || limit > MAX_UNIT_LIMIT {
                return Err(format!(
                    "--compute-unit-limit: {limit} is outside 1..={MAX_UNIT_LIMIT}"
                ));
            }
        }
        Ok(ComputeBudget {
            unit_limit: self.compute_unit_limit,
            unit_price_micro_lamports: self.priority_fee,
        })
    }
}

/// The runtime's largest compute-unit limit for one transaction.
const MAX_UNIT_LIMIT: u32 = 1_400_000;

/// The payer's wallet: `--keypair`, else the demo agent's signer (its owner, or the hot key
/// of the vault-funded agent; the tier-3 agent by default). `trust-gate dispute` signs with
/// the same key.
pub fn payer_keypair(keypair: Option<&str>, agent: Option<Pubkey>) -> Result<Keypair, String> {
    if let Some(path) = keypair {
        return read_keypair_file(path)
            .map_err(|e| format!("--keypair {path}: cannot read a keypair: {e}"));
    }
    let world = DemoWorld::new();
    let demo = match agent {
        Some(asset) => world.payers.iter().find(|p| p.asset() == asset),
        None => world.payer(3),
    };
    demo.map(|p| p.signer().insecure_clone()).ok_or_else(|| {
        "--keypair is required: the payer agent is not one of the demo agents".to_string()
    })
}

pub async fn run(a: PayArgs) -> Result<(), String> {
    let agent = a
        .payer_agent
        .as_deref()
        .map(|s| {
            Pubkey::from_str(s)
                .map_err(|_| format!("--payer-agent: {s:?} is not a base58 public key"))
        })
        .transpose()?;
    let compute_budget = a.compute_budget()?;
    let signer = payer_keypair(a.keypair.as_deref(), agent)?;
    let rpc = trust_gate_migrations::rpc(&a.rpc_url);
    let http = reqwest::Client::new();
    let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
    if let Some(scheme) = a.scheme {
        return pay_channel(&a, scheme, &http, &rpc, agent, &signer, overrides).await;
    }
    println!("Paying {} as {}", a.url, signer.pubkey());
    if let (Some(price), Some(limit)) = (
        compute_budget.unit_price_micro_lamports,
        compute_budget.unit_limit,
    ) {
        // Micro-lamports per unit times units, in lamports, rounded up as the runtime does.
        let most = (u128::from(price) * u128::from(limit)).div_ceil(1_000_000);
        println!(
            "  priority fee {price} micro-lamports/CU on a {limit} CU limit: at most {most} lamports, paid by the facilitator"
        );
    }
    let opts = PayOptions {
        request: Request::get(a.url.clone()),
        payer_agent: agent,
        signer: &signer,
        overrides,
        compute_budget,
        max_amount: a.max_amount,
    };
    let first = pay::first(&http, &opts.request.clone().with_payer_agent(agent))
        .await
        .map_err(|e| e.to_string())?;
    let outcome = match first {
        pay::First::Answered(outcome) => *outcome,
        pay::First::Challenge(required) => {
            // The terms the payer's policy holds back under, before anything is signed.
            if let Some(terms) = pay::trust_gate_offer(&required)
                .and_then(|r| GateExtension::from_requirements(r).ok())
                .and_then(|g| g.holdback)
            {
                println!("Holdback: {terms}");
            }
            pay::pay_challenge(&http, &rpc, &opts, &required)
                .await
                .map_err(|e| e.to_string())?
        }
    };
    match outcome {
        PayOutcome::NotRequired { status, body } => {
            println!("No payment asked: HTTP {status}");
            println!("{body}");
            Ok(())
        }
        PayOutcome::Refused {
            status,
            decision,
            reason_code,
            reason_name,
            capability,
            body,
        } => {
            println!("Decision: {decision} (HTTP {status})");
            if let (Some(code), Some(name)) = (reason_code, reason_name) {
                println!("  reason {code} {name}");
            }
            if let Some(c) = capability {
                println!("  capability required: {c}");
            }
            Err(format!("the gate refused the payment: {body}"))
        }
        PayOutcome::Paid {
            receipt,
            payment_id_hash,
            response,
            body,
            ..
        } => {
            println!("Decision: Allow");
            println!("Paid and settled in one transaction: {receipt}");
            println!("  payer {}", response.payer.unwrap_or_default());
            println!("  network {}", response.network);
            println!(
                "  receipt: {}/receipt/{payment_id_hash}",
                a.facilitator_url.trim_end_matches('/')
            );
            println!("Resource: {body}");
            Ok(())
        }
        PayOutcome::Held {
            status,
            approval_id,
            ..
        } => {
            println!("Decision: RequireApproval (HTTP {status})");
            println!("  pending approval {approval_id}");
            println!(
                "  a member of the payer's policy authority approves it: trust-gate approve {approval_id} --facilitator-url {}",
                a.facilitator_url.trim_end_matches('/')
            );
            Err("the payment is above the payer policy's approval threshold: held until approved, then pay again".into())
        }
        PayOutcome::Failed {
            status,
            response,
            body,
            ..
        } => {
            let why = response
                .map(|r| {
                    format!(
                        "{}: {}",
                        r.error_reason.unwrap_or_default(),
                        r.error_message.unwrap_or_default()
                    )
                })
                .unwrap_or_else(|| body.to_string());
            Err(format!("payment not accepted (HTTP {status}): {why}"))
        }
    }
}

/// `--scheme`: one upto payment or one session.
async fn pay_channel(
    a: &PayArgs,
    scheme: ChannelScheme,
    http: &reqwest::Client,
    rpc: &trust_gate_client::RpcClient,
    agent: Option<Pubkey>,
    signer: &Keypair,
    overrides: Overrides,
) -> Result<(), String> {
    let pay = ChannelPay {
        http,
        rpc,
        overrides,
        request: Request::get(a.url.clone()),
        payer_agent: agent,
        signer,
        ungated: a.ungated,
        max_amount: a.max_amount,
    };
    let gated = if a.ungated { "plain" } else { "gated" };
    // The gate's refusal says what it decided; a deposit above the payer policy's approval
    // threshold is held: say how to approve it.
    let refused = |e: ChannelPayError| {
        let Some(decision) = e.decision() else {
            return e.to_string();
        };
        match decision {
            DecisionView::RequireApproval => {
                let id = e.approval_id().unwrap_or("?");
                println!("Decision: RequireApproval");
                println!("  pending approval {id}");
                println!(
                    "  a member of the payer's policy authority approves it: trust-gate approve {id} --facilitator-url {}",
                    a.facilitator_url.trim_end_matches('/')
                );
                "the deposit is above the payer policy's approval threshold: held until approved, then pay again".to_string()
            }
            DecisionView::Deny {
                reason_code,
                reason_name,
            } => {
                println!("Decision: Deny");
                println!("  reason {reason_code} {reason_name}");
                "the gate refused the payment".to_string()
            }
            DecisionView::RequireValidation {
                capability_hash,
                subject,
            } => {
                println!("Decision: RequireValidation");
                println!("  capability required of the {subject}: {capability_hash}");
                "the gate asks for an attestation first".to_string()
            }
            DecisionView::Allow => e.to_string(),
        }
    };
    match scheme {
        ChannelScheme::Upto => {
            println!("Paying {} with {gated} upto as {}", a.url, signer.pubkey());
            let paid = pay.upto().await.map_err(refused)?;
            println!(
                "Charged {} of the escrowed ceiling; the rest back to the payer: {}",
                shown(paid.amount()),
                paid.transaction().unwrap_or("?")
            );
            println!("Resource: {}", paid.body);
        }
        ChannelScheme::BatchSettlement => {
            let requests = a.requests.unwrap_or(10);
            let deposit = a.deposit_requests.unwrap_or(100);
            println!(
                "Paying {} with a {gated} session of {} (deposit {deposit} prices) as {}",
                a.url,
                plural(requests, "request"),
                signer.pubkey()
            );
            let s = pay.session(requests, deposit).await.map_err(refused)?;
            println!(
                "Opened channel {} in {}",
                s.channel,
                s.requests[0].transaction().unwrap_or("?")
            );
            println!(
                "Paid {} with vouchers off chain: {} charged",
                plural(s.requests.len() as u64, "request"),
                s.charged
            );
            println!(
                "Closed: the rest back to the payer in {}",
                s.refund.transaction().unwrap_or("?")
            );
        }
    }
    Ok(())
}

/// An amount the settlement named, or `?`.
fn shown(amount: Option<u64>) -> String {
    amount.map_or("?".into(), |n| n.to_string())
}

/// `1 request`, `3 requests`.
fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        pay: PayArgs,
    }

    fn budget(args: &[&str]) -> Result<ComputeBudget, String> {
        let mut all = vec!["trust-gate-pay", "http://127.0.0.1:4021/protected"];
        all.extend(args);
        Cli::try_parse_from(all)
            .map_err(|e| e.kind().to_string())?
            .pay
            .compute_budget()
    }

    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(plural(1, "request"), "1 request");
        assert_eq!(plural(0, "request"), "0 requests");
        assert_eq!(plural(5, "request"), "5 requests");
    }

    #[test]
    fn the_channel_flags_name_a_scheme() {
        let parse = |args: &[&str]| {
            let mut all = vec!["trust-gate-pay", "http://127.0.0.1:4021/session"];
            all.extend(args);
            Cli::try_parse_from(all).map(|c| c.pay)
        };
        let a = parse(&["--scheme", "batch-settlement", "--requests", "3"]).unwrap();
        assert_eq!(
            (a.scheme, a.requests, a.ungated),
            (Some(ChannelScheme::BatchSettlement), Some(3), false)
        );
        let a = parse(&["--scheme", "upto", "--ungated"]).unwrap();
        assert_eq!((a.scheme, a.ungated), (Some(ChannelScheme::Upto), true));
        // The channel flags without a scheme, and an unknown scheme.
        assert!(parse(&["--ungated"]).is_err());
        assert!(parse(&["--requests", "3"]).is_err());
        assert!(parse(&["--scheme", "exact"]).is_err());
    }

    #[test]
    fn a_priority_fee_is_a_unit_price_and_a_limit_overrides_the_sdks() {
        assert_eq!(budget(&[]), Ok(ComputeBudget::default()));
        assert_eq!(
            budget(&["--priority-fee", "5000"]),
            Ok(ComputeBudget {
                unit_limit: None,
                unit_price_micro_lamports: Some(5_000),
            })
        );
        assert_eq!(
            budget(&["--compute-unit-limit", "90000"])
                .unwrap()
                .unit_limit,
            Some(90_000)
        );
        assert_eq!(
            budget(&["--priority-fee", "1", "--compute-unit-limit", "200000"])
                .unwrap()
                .unit_limit,
            Some(200_000)
        );
        // A zero fee, a limit the runtime refuses, not a number.
        assert!(budget(&["--priority-fee", "0"])
            .unwrap_err()
            .contains("--priority-fee"));
        assert!(
            budget(&["--priority-fee", "1", "--compute-unit-limit", "1400001"])
                .unwrap_err()
                .contains("--compute-unit-limit")
        );
        assert!(budget(&["--priority-fee", "lots"]).is_err());
    }
}
