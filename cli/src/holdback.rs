//! `trust-gate holdback list|release|refund|arbitrate`: the held shares of payments
//! (docs/holdback.md), found on chain, and the moves of one.

use anchor_lang::prelude::Pubkey;
use clap::{Args, Subcommand};
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{read_keypair_file, Keypair};
use solana_sdk::signer::Signer;
use std::str::FromStr;
use trust_gate_client::held::{self, HeldBy, HeldListing};
use trust_gate_client::holdback::HoldStatus;
use trust_gate_client::{settle, Builder, Network, Overrides, ProgramIds, RpcClient};
use trust_gate_migrations::DemoWorld;

#[derive(Subcommand)]
pub enum HoldbackCommand {
    /// The held payments whose logs are open, newest first: of a payee agent or of a payer's
    /// wallet (on the localnet, the demo's held payee when neither is given).
    List(ListArgs),
    /// Release a held share to the payee once its hold is over (anyone may; the keypair pays
    /// the fee), or once the arbitration of its dispute has ended undecided.
    Release(MoveArgs),
    /// Give a held share back to the payer, as the payee (its live owner or agent wallet).
    Refund(MoveArgs),
    /// Decide a disputed share as the policy's arbiter: uphold (back to the payer) or reject
    /// (to the payee).
    Arbitrate(ArbitrateArgs),
}

/// The cluster a command acts on (the other commands that read the gate's accounts take it
/// too).
#[derive(Args)]
pub struct Cluster {
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    rpc_url: String,
    /// The cluster's network (its program ids; *_PROGRAM_ID overrides apply).
    #[arg(long, env = "NETWORK", default_value = "solana-localnet")]
    network: String,
}

impl Cluster {
    pub(crate) fn open(&self) -> Result<(RpcClient, Builder, Network), String> {
        let network = Network::from_str(&self.network).map_err(|e| format!("--network: {e}"))?;
        let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
        let ids = ProgramIds::for_network(network).with_overrides(overrides);
        let b = Builder::new(ids).map_err(|e| e.to_string())?;
        Ok((trust_gate_migrations::rpc(&self.rpc_url), b, network))
    }
}

#[derive(Args)]
pub struct ListArgs {
    /// The payee agent (its asset) whose held payments to list.
    #[arg(long, value_name = "ASSET", conflicts_with = "payer_wallet")]
    payee: Option<String>,
    /// The wallet that paid (a payer agent's owner or agent wallet).
    #[arg(long, value_name = "PUBKEY")]
    payer_wallet: Option<String>,
    #[command(flatten)]
    cluster: Cluster,
}

#[derive(Args)]
pub struct MoveArgs {
    /// The payment id hash (64 hex characters), as `trust-gate pay` prints in the receipt link.
    payment_id_hash: String,
    /// The signer (JSON keypair file): for a refund the payee agent's owner or agent wallet;
    /// for a release anyone (it pays the fee). On the localnet the demo's key for the role is
    /// used when omitted.
    #[arg(long)]
    keypair: Option<String>,
    #[command(flatten)]
    cluster: Cluster,
}

#[derive(Args)]
pub struct ArbitrateArgs {
    #[command(flatten)]
    payment: MoveArgs,
    /// Uphold the dispute: the share goes back to the payer.
    #[arg(long, conflicts_with = "reject", required_unless_present = "reject")]
    uphold: bool,
    /// Reject the dispute: the share goes to the payee.
    #[arg(long)]
    reject: bool,
    /// For an arbiter set: a member's keypair (JSON file), once per signing member (as many as
    /// its threshold). The first also pays the fee.
    #[arg(long = "member", value_name = "KEYPAIR")]
    members: Vec<String>,
}

pub async fn run(c: HoldbackCommand) -> Result<(), String> {
    match c {
        HoldbackCommand::List(a) => list(a).await,
        HoldbackCommand::Release(a) => release(a).await,
        HoldbackCommand::Refund(a) => refund(a).await,
        HoldbackCommand::Arbitrate(a) => arbitrate(a).await,
    }
}

pub(crate) fn key(field: &str, s: &str) -> Result<Pubkey, String> {
    Pubkey::from_str(s).map_err(|_| format!("{field}: {s:?} is not a base58 public key"))
}

pub(crate) fn keypair(path: &str, field: &str) -> Result<Keypair, String> {
    read_keypair_file(path).map_err(|e| format!("{field} {path}: cannot read a keypair: {e}"))
}

/// `--keypair`, or on the localnet the demo's key `demo` picks.
pub(crate) fn signer_or_demo(
    path: Option<&str>,
    network: Network,
    role: &str,
    demo: impl FnOnce(&DemoWorld) -> Option<Keypair>,
) -> Result<Keypair, String> {
    match path {
        Some(p) => keypair(p, "--keypair"),
        None if network == Network::Localnet => demo(&DemoWorld::new())
            .ok_or_else(|| format!("--keypair is required: {role} is not a demo key")),
        None => Err(format!("--keypair is required off the localnet: {role}")),
    }
}

async fn list(a: ListArgs) -> Result<(), String> {
    let (rpc, b, network) = a.cluster.open()?;
    let by = match (&a.payee, &a.payer_wallet) {
        (Some(p), _) => HeldBy::Payee(key("--payee", p)?),
        (None, Some(w)) => HeldBy::PayerWallet(key("--payer-wallet", w)?),
        (None, None) if network == Network::Localnet => {
            HeldBy::Payee(DemoWorld::new().held_service.asset())
        }
        (None, None) => return Err("--payee or --payer-wallet is required".into()),
    };
    let found = held::list(&rpc, &b.ids.gate, by)
        .await
        .map_err(|e| e.to_string())?;
    let now = trust_gate_client::chain::unix_time(&rpc)
        .await
        .map_err(|e| e.to_string())?;
    println!("{} held payment(s) with open logs", found.len());
    for l in &found {
        println!("{}", line(l, now));
    }
    Ok(())
}

/// One held payment, for people.
fn line(l: &HeldListing, now: i64) -> String {
    let p = &l.payment;
    let state = l
        .receipt
        .holdback
        .as_ref()
        .map_or(HoldStatus::Held, |h| h.state);
    let when = match state {
        HoldStatus::Held if now < p.hold_until => {
            format!("releasable in {} s", p.hold_until - now)
        }
        HoldStatus::Held => "releasable now".to_string(),
        HoldStatus::Disputed if now < p.arbitration_ends => {
            format!("arbitration ends in {} s", p.arbitration_ends - now)
        }
        HoldStatus::Disputed => "arbitration over: releasable to the payee".to_string(),
        _ => "paid out".to_string(),
    };
    format!(
        "  {}  {:?}  held {} of {} (mint {})  payee {}  payer wallet {}  {when}",
        trust_gate_client::decode::hex(&l.receipt.payment_id_hash),
        state,
        p.held,
        l.receipt.amount,
        p.mint,
        p.payee_asset,
        p.payer_wallet,
    )
}

/// The held payment of `hash`, or why there is none.
async fn find(rpc: &RpcClient, b: &Builder, hash: &str) -> Result<HeldListing, String> {
    let id = trust_gate_client::decode::parse_hex32("payment_id_hash", hash)
        .map_err(|_| format!("payment_id_hash: {hash:?} is not 64 hex characters"))?;
    println!("Finding the held share of payment {hash}");
    held::list(rpc, &b.ids.gate, HeldBy::Payment(id))
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .next()
        .ok_or_else(|| {
            format!("payment {hash} holds no share on this cluster (no open log of a held payment)")
        })
}

/// Sends `ixs` paid by the first of `signers`, and says what moved.
pub(crate) async fn send(
    rpc: &RpcClient,
    ixs: &[Instruction],
    signers: &[&Keypair],
    what: &str,
) -> Result<(), String> {
    let blockhash = rpc
        .get_latest_blockhash()
        .await
        .map_err(|e| e.to_string())?;
    let tx = settle::transaction(&signers[0].pubkey(), ixs, &[], blockhash, signers)
        .map_err(|e| e.to_string())?;
    let sig = settle::send(rpc, &tx).await.map_err(|e| e.to_string())?;
    println!("{what}: {sig}");
    Ok(())
}

async fn release(a: MoveArgs) -> Result<(), String> {
    let (rpc, b, network) = a.cluster.open()?;
    let l = find(&rpc, &b, &a.payment_id_hash).await?;
    let fee_payer = signer_or_demo(a.keypair.as_deref(), network, "the fee payer", |w| {
        Some(w.facilitator.insecure_clone())
    })?;
    let (to, create) = l
        .payment
        .payout_account(false, &fee_payer.pubkey())
        .map_err(|e| e.to_string())?;
    let ixs = [create, b.release_holdback(&l.payment, &to)];
    let what = format!("Released {} to {to}", l.payment.held);
    send(&rpc, &ixs, &[&fee_payer], &what).await
}

async fn refund(a: MoveArgs) -> Result<(), String> {
    let (rpc, b, network) = a.cluster.open()?;
    let l = find(&rpc, &b, &a.payment_id_hash).await?;
    let payee = l.payment.payee_asset;
    let signer = signer_or_demo(a.keypair.as_deref(), network, "the payee's owner", |w| {
        [&w.service, &w.held_service]
            .into_iter()
            .find(|s| s.asset() == payee)
            .map(|s| s.owner.insecure_clone())
    })?;
    let (to, create) = l
        .payment
        .payout_account(true, &signer.pubkey())
        .map_err(|e| e.to_string())?;
    let ixs = [create, b.refund_holdback(&signer.pubkey(), &l.payment, &to)];
    let what = format!("Refunded {} to {to}", l.payment.held);
    send(&rpc, &ixs, &[&signer], &what).await
}

async fn arbitrate(a: ArbitrateArgs) -> Result<(), String> {
    let (rpc, b, network) = a.payment.cluster.open()?;
    let l = find(&rpc, &b, &a.payment.payment_id_hash).await?;
    let members: Vec<Keypair> = a
        .members
        .iter()
        .map(|p| keypair(p, "--member"))
        .collect::<Result<_, _>>()?;
    let arbiter = if members.is_empty() {
        let arbiter = l.payment.arbiter;
        Some(signer_or_demo(
            a.payment.keypair.as_deref(),
            network,
            "the arbiter",
            |w| (w.arbiter.pubkey() == arbiter).then(|| w.arbiter.insecure_clone()),
        )?)
    } else {
        None
    };
    let signers: Vec<&Keypair> = arbiter.iter().chain(&members).collect();
    let fee_payer = signers[0].pubkey();
    let (to, create) = l
        .payment
        .payout_account(a.uphold, &fee_payer)
        .map_err(|e| e.to_string())?;
    let member_keys: Vec<Pubkey> = members.iter().map(|m| m.pubkey()).collect();
    let ixs = [
        create,
        b.arbitrate_holdback(&l.payment, a.uphold, &to, &member_keys),
    ];
    let what = format!(
        "{} the dispute: {} to {to}",
        if a.uphold { "Upheld" } else { "Rejected" },
        l.payment.held
    );
    send(&rpc, &ixs, &signers, &what).await
}
