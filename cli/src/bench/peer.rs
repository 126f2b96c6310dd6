//! `trust-gate bench facilitator --peer <binary>`: the x402-rs facilitator (built from
//! `bench/x402-rs-peer`, outside the workspace) verifying and settling plain x402 `exact`
//! payments against the same localnet with the same number of clients, next to its own
//! floors: simulateTransaction of its payment transaction, and that transaction signed by
//! both keys, sent with preflight and confirmed straight against the RPC.
//!
//! Its payments are what its scheme accepts: SetComputeUnitLimit, SetComputeUnitPrice,
//! TransferChecked of one base unit of the demo mint to the service's token account, and a
//! Memo with a nonce (so that no two share a signature), fee payer the peer's key.

use super::measure::{drive, rpc_calls, send_and_confirm, simulations, LocalnetBench, Summary};
use anchor_lang::solana_program::instruction::Instruction;
use anchor_spl::token::spl_token;
use serde_json::{json, Value};
use solana_sdk::hash::Hash;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::transaction::VersionedTransaction;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use trust_gate_client::settle::{self, ComputeBudget, TokenProgram};
use trust_gate_localnet::Localnet;
use trust_gate_migrations::{demo, payers, DemoWorld};

/// The SPL Memo program (v3), which the localnet loads with the other SPL programs.
const MEMO_PROGRAM: Pubkey = Pubkey::from_str_const("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

/// The peer's figures, each next to its floor.
pub struct PeerFigures {
    pub simulate: Summary,
    pub verify: Summary,
    pub floor_settle: Summary,
    pub settle: Summary,
}

/// A running peer: killed when dropped.
pub(super) struct Peer {
    pub(super) url: String,
    _child: tokio::process::Child,
}

/// Starts `binary` against the localnet with a fresh, funded fee payer and waits for its
/// `listening on <url>` line.
pub(super) async fn start(
    binary: &Path,
    rpc_url: &str,
    caip2: &str,
    fee_payer: &Keypair,
) -> Result<Peer, String> {
    let key_file = std::env::temp_dir().join(format!("x402-rs-peer-{}.json", std::process::id()));
    write_secret(&key_file, &format!("{:?}", fee_payer.to_bytes().to_vec()))
        .map_err(|e| format!("writing the peer's fee-payer key: {e}"))?;
    let spawned = tokio::process::Command::new(binary)
        .args([
            "--rpc",
            rpc_url,
            "--network",
            caip2,
            "--port",
            "0",
            "--fee-payer",
        ])
        .arg(&key_file)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_file(&key_file);
            return Err(format!(
                "--peer {}: {e} (build it with `cargo build --release --manifest-path bench/x402-rs-peer/Cargo.toml`)",
                binary.display()
            ));
        }
    };
    let stdout = child.stdout.take().ok_or("the peer's stdout")?;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await;
    let _ = std::fs::remove_file(&key_file);
    let line = match first {
        Ok(Ok(Some(line))) => line,
        Ok(_) => {
            return Err(format!(
                "--peer {}: exited before serving",
                binary.display()
            ))
        }
        Err(_) => {
            return Err(format!(
                "--peer {}: not serving after 30 s",
                binary.display()
            ))
        }
    };
    let url = line
        .strip_prefix("listening on ")
        .ok_or(format!(
            "--peer {}: unexpected first line {line:?}",
            binary.display()
        ))?
        .to_string();
    // Keep draining its stdout so that it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Peer { url, _child: child })
}

/// Writes a key file readable by its owner only.
fn write_secret(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// What every payment of the run shares.
pub(super) struct Payments {
    fee_payer: Pubkey,
    mint: Pubkey,
    pay_to_token: Pubkey,
    requirements: Value,
}

impl Payments {
    /// The payments of one base unit of the demo mint to the demo service, `fee_payer` the
    /// peer's key, on network `caip2`.
    pub(super) fn new(world: &DemoWorld, caip2: &str, fee_payer: Pubkey) -> Payments {
        let pay_to = world.service.owner.pubkey();
        let mint = world.mint();
        Payments {
            fee_payer,
            mint,
            pay_to_token: TokenProgram::SplToken.associated_account(&pay_to, &mint),
            requirements: json!({
                "scheme": "exact",
                "network": caip2,
                "amount": "1",
                "payTo": pay_to.to_string(),
                "maxTimeoutSeconds": 60,
                "asset": mint.to_string(),
                "extra": {"feePayer": fee_payer.to_string()},
            }),
        }
    }

    /// A payment of one base unit from `payer`, unique by `nonce`, signed by `signers`.
    pub(super) fn transaction(
        &self,
        payer: &Keypair,
        nonce: &str,
        blockhash: Hash,
        signers: &[&Keypair],
    ) -> Option<VersionedTransaction> {
        let program = TokenProgram::SplToken;
        let transfer = spl_token::instruction::transfer_checked(
            &program.id(),
            &program.associated_account(&payer.pubkey(), &self.mint),
            &self.mint,
            &self.pay_to_token,
            &payer.pubkey(),
            &[],
            1,
            demo::DECIMALS,
        )
        .ok()?;
        let memo = Instruction {
            program_id: MEMO_PROGRAM,
            accounts: Vec::new(),
            data: nonce.as_bytes().to_vec(),
        };
        let mut ixs = ComputeBudget {
            unit_limit: Some(50_000),
            unit_price_micro_lamports: Some(1),
        }
        .instructions();
        ixs.extend([transfer, memo]);
        settle::transaction(&self.fee_payer, &ixs, &[], blockhash, signers).ok()
    }

    /// The x402 v2 body of /verify and /settle carrying `tx`.
    pub(super) fn body(&self, tx: &VersionedTransaction) -> Option<Value> {
        let wire = trust_gate_x402::encode_transaction(tx).ok()?;
        Some(json!({
            "x402Version": 2,
            "paymentPayload": {
                "x402Version": 2,
                "accepted": self.requirements,
                "payload": {"transaction": wire},
            },
            "paymentRequirements": self.requirements,
        }))
    }
}

/// POSTs `body` to `url` and reads `field` of the answer: true only for a 200 whose `field`
/// is `true` (`isValid` for /verify, `success` for /settle).
async fn post_ok(http: &reqwest::Client, url: &str, body: &Value, field: &str) -> bool {
    match http.post(url).json(body).send().await {
        Ok(r) if r.status() == 200 => match r.json::<Value>().await {
            Ok(v) if v[field] == true => true,
            Ok(v) => {
                tracing::debug!("{url}: {v}");
                false
            }
            Err(_) => false,
        },
        Ok(r) => {
            tracing::debug!("{url}: {}", r.status());
            false
        }
        Err(_) => false,
    }
}

pub async fn run(
    localnet: &Localnet,
    world: &DemoWorld,
    caip2: &str,
    binary: &Path,
    a: &LocalnetBench,
) -> Result<PeerFigures, String> {
    let duration = a.validate()?;
    let rpc = trust_gate_migrations::rpc(&localnet.rpc_url());
    let fee_payer = Keypair::new();
    rpc.request_airdrop(&fee_payer.pubkey(), 100_000_000_000)
        .await
        .map_err(|e| format!("funding the peer's fee payer: {e}"))?;
    eprintln!("starting the x402-rs peer ({})", binary.display());
    let peer = start(binary, &localnet.rpc_url(), caip2, &fee_payer).await?;
    // One payer per client, each with its own token account of the demo mint.
    eprintln!("setting up {} payers for the peer ...", a.concurrency);
    let senders: Vec<Keypair> = payers::extra_payers(
        &crate::migrate::seed_keys(localnet),
        world,
        a.concurrency,
        world.payer_policy(),
        1_000_000_000,
    )
    .await
    .map_err(|e| e.to_string())?
    .into_iter()
    .map(|p| p.owner)
    .collect();
    let payments = Arc::new(Payments::new(world, caip2, fee_payer.pubkey()));
    let senders = Arc::new(senders);
    let fee_payer = Arc::new(fee_payer);
    let blockhash = || async {
        rpc.get_latest_blockhash()
            .await
            .map_err(|e| format!("getLatestBlockhash: {e}"))
    };
    let clients: Arc<Vec<trust_gate_client::RpcClient>> = Arc::new(
        (0..a.concurrency)
            .map(|_| trust_gate_migrations::rpc(&localnet.rpc_url()))
            .collect(),
    );

    // Its verify floor: simulating its payment transaction, as its /verify does.
    let hash = blockhash().await?;
    let sample = payments
        .transaction(&senders[0], "peer-verify", hash, &[&senders[0]])
        .ok_or("building the peer's payment")?;
    eprintln!(
        "peer: simulateTransaction: {} s, {} clients ...",
        a.seconds, a.concurrency
    );
    let simulate = simulations(localnet, &clients, Arc::new(sample.clone()), duration).await;

    // POST /verify: one payment, verified over and over (verification changes nothing).
    let http = reqwest::Client::new();
    let body = Arc::new(
        payments
            .body(&sample)
            .ok_or("encoding the peer's payment")?,
    );
    eprintln!(
        "peer: POST /verify: {} s, {} clients ...",
        a.seconds, a.concurrency
    );
    let (h, url) = (http.clone(), format!("{}/verify", peer.url));
    let calls = rpc_calls(localnet);
    let verify = drive(a.concurrency, duration, move |_, _| {
        let (http, url, body) = (h.clone(), url.clone(), body.clone());
        async move { post_ok(&http, &url, &body, "isValid").await }
    })
    .await
    .with_calls_since(localnet, calls);

    // Its settlement floor: the same payments signed by payer and fee payer, sent with
    // preflight and confirmed straight against the RPC.
    let settle_duration = duration.min(Duration::from_secs(30));
    let hash = blockhash().await?;
    eprintln!(
        "peer: settlement floor: {} s, {} clients ...",
        settle_duration.as_secs(),
        a.concurrency
    );
    let (c, p, s, f) = (
        clients.clone(),
        payments.clone(),
        senders.clone(),
        fee_payer.clone(),
    );
    let calls = rpc_calls(localnet);
    let run_id = std::process::id();
    let floor_settle = drive(a.concurrency, settle_duration, move |i, n| {
        let (clients, payments, senders, fee_payer) = (c.clone(), p.clone(), s.clone(), f.clone());
        async move {
            let nonce = format!("peer-floor-{run_id}-{i}-{n}");
            let Some(tx) =
                payments.transaction(&senders[i], &nonce, hash, &[&senders[i], &fee_payer])
            else {
                return false;
            };
            send_and_confirm(&clients[i], &tx).await
        }
    })
    .await
    .with_calls_since(localnet, calls);

    // POST /settle: a fresh payer-signed payment per call; the peer verifies, co-signs,
    // sends and confirms.
    let hash = blockhash().await?;
    eprintln!(
        "peer: POST /settle: {} s, {} clients ...",
        settle_duration.as_secs(),
        a.concurrency
    );
    let (h, url, p, s) = (
        http.clone(),
        format!("{}/settle", peer.url),
        payments.clone(),
        senders.clone(),
    );
    let calls = rpc_calls(localnet);
    let settle = drive(a.concurrency, settle_duration, move |i, n| {
        let (http, url, payments, senders) = (h.clone(), url.clone(), p.clone(), s.clone());
        async move {
            let nonce = format!("peer-settle-{run_id}-{i}-{n}");
            let Some(body) = payments
                .transaction(&senders[i], &nonce, hash, &[&senders[i]])
                .and_then(|tx| payments.body(&tx))
            else {
                return false;
            };
            post_ok(&http, &url, &body, "success").await
        }
    })
    .await
    .with_calls_since(localnet, calls);
    drop(peer);
    Ok(PeerFigures {
        simulate,
        verify,
        floor_settle,
        settle,
    })
}
