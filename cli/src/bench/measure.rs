//! What the `bench` commands share: their flags, and the measuring of a method (clients
//! driven for a while, latencies summarized) and of the localnet's floor.

use clap::Args;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::{RpcSendTransactionConfig, RpcSimulateTransactionConfig};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::transaction::Transaction;
use std::sync::Arc;
use std::time::{Duration, Instant};
use trust_gate_client::{Builder, Network, ProgramIds};
use trust_gate_localnet::Localnet;
use trust_gate_migrations::demo;

#[derive(Args)]
pub struct LocalnetBench {
    /// Seconds to drive each method (at most 60).
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Concurrent clients.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// `bench facilitator` only: how many payer agents the settlements come from (client c
    /// pays as payer c mod N). 1 (the default) is the demo's tier-3 payer, whose settlements
    /// the facilitator runs one at a time; N > 1 adds fresh tier-3 payers.
    #[arg(long, default_value_t = 1)]
    pub payers: usize,
    /// `bench facilitator` only: also measure the x402-rs facilitator, this binary (built
    /// from bench/x402-rs-peer), on its plain `exact` payments against the same localnet.
    #[arg(long)]
    pub peer: Option<std::path::PathBuf>,
    /// `bench facilitator` only: also measure /settle on 1, 2, ... N facilitator replicas
    /// sharing this Redis (`redis://host:port`, one you run), the clients spread round-robin
    /// over them.
    #[arg(long)]
    pub redis_url: Option<String>,
    /// `bench facilitator` only: the most replicas to measure with `--redis-url` (1 to 8;
    /// default 3).
    #[arg(long, requires = "redis_url")]
    pub replicas: Option<usize>,
}

impl LocalnetBench {
    pub fn validate(&self) -> Result<Duration, String> {
        if self.seconds == 0 || self.seconds > 60 {
            return Err("--seconds must be between 1 and 60".into());
        }
        if self.concurrency == 0 || self.concurrency > 64 {
            return Err("--concurrency must be between 1 and 64".into());
        }
        if self.payers == 0 || self.payers > 64 {
            return Err("--payers must be between 1 and 64".into());
        }
        if self.replicas.is_some_and(|n| n == 0 || n > 8) {
            return Err("--replicas must be between 1 and 8".into());
        }
        if let Some(url) = &self.redis_url {
            trust_gate_facilitator::config::validate_redis_url(url)
                .map_err(|e| format!("--redis-url: {}", e.reason))?;
        }
        if let Some(peer) = self.peer.as_ref().filter(|p| !p.is_file()) {
            return Err(format!(
                "--peer {}: no such file (build it with `cargo build --release --manifest-path bench/x402-rs-peer/Cargo.toml`)",
                peer.display()
            ));
        }
        Ok(Duration::from_secs(self.seconds))
    }
}

/// Latencies of one method, summarized.
pub struct Summary {
    count: usize,
    errors: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
    /// JSON-RPC calls the localnet served during the run, when counted.
    rpc_calls: Option<u64>,
}

/// The JSON-RPC calls a localnet has served so far (all methods).
pub fn rpc_calls(localnet: &Localnet) -> u64 {
    localnet.chain.rpc_calls().values().sum()
}

impl Summary {
    fn of(mut latencies: Vec<Duration>, errors: usize, elapsed: Duration) -> Self {
        latencies.sort();
        let pick = |q: f64| {
            if latencies.is_empty() {
                Duration::ZERO
            } else {
                let i =
                    ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
                latencies[i]
            }
        };
        Summary {
            count: latencies.len(),
            errors,
            elapsed,
            p50: pick(0.50),
            p99: pick(0.99),
            rpc_calls: None,
        }
    }

    /// Records the JSON-RPC calls served while this ran (`before` from [`rpc_calls`]).
    pub fn with_calls_since(mut self, localnet: &Localnet, before: u64) -> Self {
        self.rpc_calls = Some(rpc_calls(localnet).saturating_sub(before));
        self
    }

    /// Requests made, successful or not.
    pub fn requests(&self) -> usize {
        self.count + self.errors
    }

    /// RPC calls per request (successful or not).
    pub fn calls_per_request(&self) -> Option<f64> {
        let requests = self.requests().max(1) as f64;
        self.rpc_calls.map(|c| c as f64 / requests)
    }

    pub fn p99_ms(&self) -> f64 {
        self.p99.as_secs_f64() * 1e3
    }

    pub fn rate(&self) -> f64 {
        self.count as f64 / self.elapsed.as_secs_f64()
    }

    pub fn print(&self, name: &str) {
        let calls = self
            .calls_per_request()
            .map(|c| format!("  {c:>5.2} RPC calls/req"))
            .unwrap_or_default();
        println!(
            "{name:<20} {:>7} ok {:>4} err  {:>8.1} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms{calls}",
            self.count,
            self.errors,
            self.rate(),
            self.p50.as_secs_f64() * 1e3,
            self.p99.as_secs_f64() * 1e3,
        );
    }
}

/// Runs `concurrency` clients calling `call(client_index, n)` until `duration` passes.
pub async fn drive<F, Fut>(concurrency: usize, duration: Duration, call: F) -> Summary
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let call = Arc::new(call);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..concurrency {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors, mut n) = (Vec::new(), 0usize, 0u64);
            while start.elapsed() < duration {
                let t = Instant::now();
                if call(c, n).await {
                    lat.push(t.elapsed());
                } else {
                    errors += 1;
                }
                n += 1;
            }
            (lat, errors)
        }));
    }
    let (mut all, mut errors) = (Vec::new(), 0);
    for t in tasks {
        if let Ok((lat, e)) = t.await {
            all.extend(lat);
            errors += e;
        }
    }
    Summary::of(all, errors, start.elapsed())
}

pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The localnet's floor: simulateTransaction of the gate decision /verify asks for, and
/// sendTransaction of transfers.
pub async fn floor(
    localnet: &Localnet,
    world: &trust_gate_migrations::DemoWorld,
    a: &LocalnetBench,
) -> Result<(Summary, Summary), String> {
    let duration = a.validate()?;
    let url = localnet.rpc_url();
    let b = Builder::new(ProgramIds::for_network(Network::Localnet)).map_err(|e| e.to_string())?;

    // simulateTransaction: the gate decision /verify asks for (tier-3 payer, Allow).
    let payer = world.payer(3).ok_or("no tier-3 demo payer")?;
    let query = trust_gate_client::PaymentQuery {
        payer_asset: payer.asset(),
        payee_asset: world.service.asset(),
        amount: demo::PRICE,
        mint: world.mint(),
        policy_id: demo::POLICY_ID,
    };
    let ix = trust_gate_client::simulate::decision_instruction(&b, &query, Default::default());
    let sim_tx = Arc::new(Transaction::new_with_payer(
        &[ix],
        Some(&payer.owner.pubkey()),
    ));
    eprintln!(
        "simulateTransaction: {} s, {} clients ...",
        a.seconds, a.concurrency
    );
    let clients: Arc<Vec<RpcClient>> = Arc::new(
        (0..a.concurrency)
            .map(|_| trust_gate_migrations::rpc(&url))
            .collect(),
    );
    let simulate = simulations(localnet, &clients, sim_tx, duration).await;

    // sendTransaction: transfers from one funded key per client (preflight on, as clients do).
    let senders: Vec<Keypair> = (0..a.concurrency).map(|_| Keypair::new()).collect();
    for s in &senders {
        clients[0]
            .request_airdrop(&s.pubkey(), 100_000_000_000)
            .await
            .map_err(|e| format!("funding a sender: {e}"))?;
    }
    let senders = Arc::new(senders);
    // One blockhash for the whole phase (valid for 300 slots, 120 s), so that only
    // sendTransaction is timed.
    let blockhash = clients[0]
        .get_latest_blockhash()
        .await
        .map_err(|e| e.to_string())?;
    eprintln!(
        "sendTransaction: {} s, {} clients ...",
        a.seconds, a.concurrency
    );
    let c3 = clients.clone();
    let calls = rpc_calls(localnet);
    let send = drive(a.concurrency, duration, move |c, n| {
        let (clients, senders) = (c3.clone(), senders.clone());
        async move {
            let rpc = &clients[c];
            let from = &senders[c];
            // Each transfer is unique (amount), so no two share a signature.
            let ix = anchor_lang::solana_program::system_instruction::transfer(
                &from.pubkey(),
                &Pubkey::new_unique(),
                1_000_000 + n,
            );
            let tx =
                Transaction::new_signed_with_payer(&[ix], Some(&from.pubkey()), &[from], blockhash);
            match rpc
                .send_transaction_with_config(&tx, RpcSendTransactionConfig::default())
                .await
            {
                Ok(_) => true,
                Err(e) => {
                    tracing::debug!("sendTransaction: {e}");
                    false
                }
            }
        }
    })
    .await
    .with_calls_since(localnet, calls);
    Ok((simulate, send))
}

/// `tx` simulated over and over by one client each (no signature check, the latest
/// blockhash), until `duration` passes: a floor of whatever simulates it.
pub async fn simulations<T>(
    localnet: &Localnet,
    clients: &Arc<Vec<RpcClient>>,
    tx: Arc<T>,
    duration: Duration,
) -> Summary
where
    T: solana_rpc_client::rpc_client::SerializableTransaction + Send + Sync + 'static,
{
    let clients = clients.clone();
    let calls = rpc_calls(localnet);
    drive(clients.len(), duration, move |c, _| {
        let (clients, tx) = (clients.clone(), tx.clone());
        async move {
            let config = RpcSimulateTransactionConfig {
                sig_verify: false,
                replace_recent_blockhash: true,
                ..Default::default()
            };
            matches!(clients[c].simulate_transaction_with_config(&*tx, config).await,
                Ok(r) if r.value.err.is_none())
        }
    })
    .await
    .with_calls_since(localnet, calls)
}

/// Sends a fully signed transaction with preflight and reads its status until it lands
/// (back-off from 2 ms): what a client settling straight against the RPC does.
pub async fn send_and_confirm(
    rpc: &trust_gate_client::RpcClient,
    tx: &solana_sdk::transaction::VersionedTransaction,
) -> bool {
    let Ok(sig) = rpc.send_transaction(tx).await else {
        return false;
    };
    let mut wait = std::time::Duration::from_millis(2);
    for _ in 0..40 {
        match rpc.get_signature_statuses(&[sig]).await {
            Ok(r) => {
                if let Some(status) = r.value.into_iter().flatten().next() {
                    return status.err.is_none();
                }
            }
            Err(_) => return false,
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(std::time::Duration::from_millis(200));
    }
    false
}
