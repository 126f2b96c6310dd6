//! `trust-gate simulate`: the gate's decision for a payment, by simulation (nothing is
//! written, no fee is paid).

use anchor_lang::prelude::Pubkey;
use clap::Args;
use std::str::FromStr;
use trust_gate_client::decode::DecisionView;
use trust_gate_client::{
    gate_payment, Builder, Caller, Network, Overrides, PaymentQuery, ProgramIds,
};
use trust_gate_migrations::{demo, DemoWorld};

#[derive(Args)]
pub struct SimulateArgs {
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    rpc_url: String,
    #[arg(long, env = "NETWORK", default_value = "solana-localnet")]
    network: String,
    /// A demo payer (tier 0, 1 or 3) paying the demo service the demo price; the other
    /// flags override parts of it.
    #[arg(long)]
    demo_payer_tier: Option<u8>,
    #[arg(long)]
    payer: Option<String>,
    #[arg(long)]
    payee: Option<String>,
    /// In the mint's base units.
    #[arg(long)]
    amount: Option<u64>,
    #[arg(long)]
    mint: Option<String>,
    #[arg(long)]
    policy_id: Option<u32>,
}

fn key(flag: &str, v: &str) -> Result<Pubkey, String> {
    Pubkey::from_str(v).map_err(|_| format!("--{flag}: {v:?} is not a base58 public key"))
}

pub async fn run(a: SimulateArgs) -> Result<(), String> {
    let network: Network = a.network.parse().map_err(|e| format!("NETWORK: {e}"))?;
    let ids = ProgramIds::for_network(network)
        .with_overrides(Overrides::from_env().map_err(|e| e.to_string())?);
    let b = Builder::new(ids).map_err(|e| e.to_string())?;
    let world = DemoWorld::new();
    let demo_payer = match a.demo_payer_tier {
        Some(t) => Some(
            world
                .payer(t)
                .ok_or(format!(
                    "--demo-payer-tier: the demo payers have tiers 0, 1 and 3, not {t}"
                ))?
                .asset(),
        ),
        None => None,
    };
    let payer = match (&a.payer, demo_payer) {
        (Some(p), _) => key("payer", p)?,
        (None, Some(p)) => p,
        (None, None) => return Err("give --payer <asset> or --demo-payer-tier <0|1|3>".into()),
    };
    let payee = match &a.payee {
        Some(p) => key("payee", p)?,
        None => world.service.asset(),
    };
    let mint = match &a.mint {
        Some(m) => key("mint", m)?,
        None => world.mint(),
    };
    let q = PaymentQuery {
        payer_asset: payer,
        payee_asset: payee,
        amount: a.amount.unwrap_or(demo::PRICE),
        mint,
        policy_id: a.policy_id.unwrap_or(demo::POLICY_ID),
    };
    let rpc = trust_gate_migrations::rpc(&a.rpc_url);
    let decision = gate_payment(&rpc, &b, Caller::Pubkey(payer), q)
        .await
        .map_err(|e| e.to_string())?;
    let view = DecisionView::from(&decision);
    println!(
        "{}",
        serde_json::to_string(&view).map_err(|e| e.to_string())?
    );
    Ok(())
}
