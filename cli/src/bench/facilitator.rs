//! `trust-gate bench facilitator`: POST /verify and POST /settle over HTTP on loopback
//! against an in-process localnet, next to their floors measured on the same machine in the
//! same run (simulateTransaction of the decision; the same settlement transactions sent and
//! confirmed straight against the RPC, side by side and one at a time per payer), and with
//! `--peer` the x402-rs facilitator on the same localnet (see `peer`).

use super::measure::{cores, drive, floor, rpc_calls, send_and_confirm, LocalnetBench};
use serde_json::json;
use solana_sdk::signer::Signer;
use std::sync::Arc;
use trust_gate_client::AtomicityEnforced;
use trust_gate_demo::{challenge, DemoConfig};
use trust_gate_migrations::demo;
use trust_gate_pay::exact as pay;
use trust_gate_x402::{self as x402, FacilitatorRequest};

/// Each benchmarked payment moves this many base units, so the payer's caps (velocity 10.00
/// per hour) allow millions of them.
const BENCH_AMOUNT: u64 = 1;

/// No rate limit and no bound on a payer's waiting settlements: the bench measures what the
/// facilitator serves, from one address for a few payers, far past what the limits let one
/// caller or one payer ask. No crank either: its rounds (`bench cost` measures them) would
/// read the run's thousands of logs in the middle of the measurement.
fn unlimited(args: &mut crate::services::FacilitatorArgs) {
    args.limits.rate_limit_per_address = Some("0".into());
    args.limits.rate_limit_per_payer = Some("0".into());
    args.limits.max_waiting_per_payer = Some("100000".into());
    args.limits.reclaim_interval_secs = Some("0".into());
}

pub async fn run(a: LocalnetBench) -> Result<(), String> {
    let duration = a.validate()?;
    let (localnet, world) = super::seeded_localnet().await?;
    let loopback = std::net::Ipv4Addr::LOCALHOST.into();
    let mut args = crate::services::FacilitatorArgs::for_demo(
        loopback,
        0,
        &localnet.rpc_url(),
        "solana-localnet",
    );
    unlimited(&mut args);
    let server = crate::services::start_facilitator(&args).await?;
    let url = server.url();
    let http = reqwest::Client::new();

    let (simulate, send) = floor(&localnet, &world, &a).await?;

    // POST /verify: the tier-3 payer's decision (Allow).
    let payer = world.payer(3).ok_or("no tier-3 demo payer")?;
    let body = Arc::new(json!({
        "payerAgentAsset": payer.asset().to_string(),
        "payeeAgentAsset": world.service.asset().to_string(),
        "amount": demo::PRICE.to_string(),
        "mint": world.mint().to_string(),
        "policyId": demo::POLICY_ID,
    }));
    eprintln!(
        "POST /verify: {} s, {} clients ...",
        a.seconds, a.concurrency
    );
    let (h, u) = (http.clone(), url.clone());
    let calls = rpc_calls(&localnet);
    let verify = drive(a.concurrency, duration, move |_, _| {
        let (http, url, body) = (h.clone(), u.clone(), body.clone());
        async move {
            matches!(http.post(format!("{url}/verify")).json(&*body).send().await,
                Ok(r) if r.status() == 200)
        }
    })
    .await
    .with_calls_since(&localnet, calls);

    // GET /healthz: the HTTP hop alone (no RPC call), the part of a /verify's cost that no
    // facilitator can avoid and the simulateTransaction floor does not pay.
    eprintln!(
        "GET /healthz: {} s, {} clients ...",
        a.seconds, a.concurrency
    );
    let (h, u) = (http.clone(), url.clone());
    let calls = rpc_calls(&localnet);
    let hop = drive(a.concurrency, duration, move |_, _| {
        let (http, url) = (h.clone(), u.clone());
        async move {
            matches!(http.get(format!("{url}/healthz")).send().await,
                Ok(r) if r.status() == 200)
        }
    })
    .await
    .with_calls_since(&localnet, calls);

    // POST /settle: a fresh signed challenge and a payer-signed settlement per payment
    // (built outside the timed call); the call verifies, simulates, co-signs, sends and
    // waits for confirmation.
    let rpc = trust_gate_migrations::rpc(&localnet.rpc_url());
    let caip2 = server
        .facilitator
        .caip2()
        .await
        .map_err(|e| e.message.clone())?;
    let mut demo_config = DemoConfig::demo_world(&url, "http://127.0.0.1:4021");
    demo_config.price = BENCH_AMOUNT;
    let fee_payer = world.facilitator.pubkey();
    // The settling payers: the demo's tier-3 payer, and fresh tier-3 payers when asked.
    let mut signers = vec![payer.owner.insecure_clone()];
    let mut assets = vec![payer.asset()];
    if a.payers > 1 {
        eprintln!("setting up {} more payers ...", a.payers - 1);
        let extra = trust_gate_migrations::payers::extra_payers(
            &crate::migrate::seed_keys(&localnet),
            &world,
            a.payers - 1,
            world.payer_policy(),
            1_000_000_000,
        )
        .await
        .map_err(|e| e.to_string())?;
        for p in extra {
            assets.push(p.asset);
            signers.push(p.owner);
        }
    }
    let mut templates = Vec::new();
    for (asset, signer) in assets.iter().zip(&signers) {
        let now = trust_gate_client::simulate::now_unix();
        let first = challenge::issue(&demo_config, &caip2, &fee_payer, asset, now);
        templates.push(
            pay::prepare(&rpc, &first, &signer.pubkey(), Default::default())
                .await
                .map_err(|e| e.to_string())?,
        );
    }
    let templates = Arc::new(templates);
    let signers = Arc::new(signers);
    fund(&rpc, &fee_payer).await?;
    let blockhash = rpc
        .get_latest_blockhash()
        .await
        .map_err(|e| e.to_string())?;
    let settle_seconds = a.seconds.min(30);

    // The settlement floor: the same kind of settlement, built and signed by both keys here,
    // sent straight to the RPC (with preflight) and confirmed as the facilitator confirms.
    eprintln!(
        "settlement floor: {settle_seconds} s, {} clients ...",
        a.concurrency
    );
    let direct = Arc::new((
        templates.clone(),
        signers.clone(),
        world.facilitator.insecure_clone(),
        trust_gate_migrations::rpc(&localnet.rpc_url()),
        // One lock per payer, for the one-at-a-time floor below.
        (0..signers.len())
            .map(|_| tokio::sync::Mutex::new(()))
            .collect::<Vec<_>>(),
    ));
    let floor_of = |one_at_a_time: bool| {
        let direct = direct.clone();
        move |c: usize, n: u64| {
            let direct = direct.clone();
            async move {
                let (templates, signers, facilitator, rpc, locks) = &*direct;
                let (template, signer) =
                    (&templates[c % templates.len()], &signers[c % signers.len()]);
                // A payment id of its own per settlement.
                let id = x402::payment_id_hash(&format!(
                    "floor-{one_at_a_time}-{c}-{n}-{}",
                    std::process::id()
                ));
                // Sent straight to the RPC, so any deadline within the gate's bound will do.
                let deadline = trust_gate_client::simulate::now_unix() + 300;
                let Some((_, tx)) =
                    settlement_tx(template, id, deadline, blockhash, &[signer, facilitator])
                else {
                    return false;
                };
                let _turn = match one_at_a_time {
                    true => Some(locks[c % locks.len()].lock().await),
                    false => None,
                };
                send_and_confirm(rpc, &tx).await
            }
        }
    };
    let settle_duration = std::time::Duration::from_secs(settle_seconds);
    let calls = rpc_calls(&localnet);
    let floor_settle = drive(a.concurrency, settle_duration, floor_of(false))
        .await
        .with_calls_since(&localnet, calls);
    // The same, one settlement at a time per payer, as /settle runs them so that none fails
    // on chain (see the facilitator's payer_locks): what one payer's settlements can reach.
    eprintln!(
        "settlement floor, one at a time per payer: {settle_seconds} s, {} clients ...",
        a.concurrency
    );
    fund(&rpc, &fee_payer).await?;
    let calls = rpc_calls(&localnet);
    let floor_serial = drive(a.concurrency, settle_duration, floor_of(true))
        .await
        .with_calls_since(&localnet, calls);
    eprintln!(
        "POST /settle: {settle_seconds} s, {} clients ...",
        a.concurrency
    );
    fund(&rpc, &fee_payer).await?;
    let payments = Arc::new(Payments {
        http: http.clone(),
        config: Arc::new(demo_config),
        templates: templates.clone(),
        signers: signers.clone(),
        caip2: caip2.clone(),
        fee_payer,
        blockhash,
    });
    let calls = rpc_calls(&localnet);
    let settle = drive(
        a.concurrency,
        settle_duration,
        settle_calls(payments.clone(), vec![url.clone()]),
    )
    .await
    .with_calls_since(&localnet, calls);

    // The same on 1..N replicas sharing a Redis, the clients round-robin over them.
    let mut replicated = Vec::new();
    if let Some(redis_url) = &a.redis_url {
        for n in 1..=a.replicas.unwrap_or(3) {
            let mut servers = Vec::new();
            for _ in 0..n {
                let mut args = crate::services::FacilitatorArgs::for_demo(
                    loopback,
                    0,
                    &localnet.rpc_url(),
                    "solana-localnet",
                );
                args.redis_url = Some(redis_url.clone());
                unlimited(&mut args);
                servers.push(crate::services::start_facilitator(&args).await?);
            }
            // The store's name, never the URL's credentials.
            let store = servers[0].facilitator.store.name();
            eprintln!(
                "POST /settle on {n} replica(s) sharing {store}: {settle_seconds} s, {} clients ...",
                a.concurrency
            );
            // Fresh funds and a fresh blockhash per phase: the phases together may spend more
            // and outlast one.
            fund(&rpc, &fee_payer).await?;
            let mut phase = Payments::clone(&payments);
            phase.blockhash = rpc
                .get_latest_blockhash()
                .await
                .map_err(|e| e.to_string())?;
            let round_trips = |servers: &[trust_gate_facilitator::Server]| -> u64 {
                servers
                    .iter()
                    .map(|s| s.facilitator.store.round_trips())
                    .sum()
            };
            let (calls, trips) = (rpc_calls(&localnet), round_trips(&servers));
            let urls = servers.iter().map(|s| s.url()).collect();
            let summary = drive(
                a.concurrency,
                settle_duration,
                settle_calls(Arc::new(phase), urls),
            )
            .await
            .with_calls_since(&localnet, calls);
            let trips = round_trips(&servers) - trips;
            let per_request = trips as f64 / summary.requests().max(1) as f64;
            replicated.push((n, summary, per_request));
        }
    }

    // The x402-rs peer last, on the same localnet, so that our own figures do not share the
    // machine with its process.
    let peer = match &a.peer {
        Some(binary) => Some(super::peer::run(&localnet, &world, &caip2, binary, &a).await?),
        None => None,
    };

    println!();
    println!(
        "facilitator over HTTP on loopback, localnet in process, this machine ({} cores), {} concurrent clients, {} settling payer(s):",
        cores(),
        a.concurrency,
        a.payers
    );
    simulate.print("simulateTransaction");
    verify.print("POST /verify");
    hop.print("GET /healthz");
    send.print("sendTransaction");
    floor_settle.print("settlement floor");
    floor_serial.print("  one at a time/payer");
    settle.print("POST /settle");
    for (n, summary, _) in &replicated {
        summary.print(&format!("  {n} replica(s), Redis"));
    }
    let ratio = |x: f64, floor: f64| if floor > 0.0 { x / floor } else { 0.0 };
    println!();
    println!("(GET /healthz: the HTTP hop alone, the bench's client and the facilitator's server, no RPC call)");
    println!("(sendTransaction: transfers; settlement floor: the same settlement transactions, signed here by payer and facilitator, sent with preflight and confirmed straight against the RPC)");
    println!("(one at a time/payer: the same, each payer's settlements one after another, as /settle runs them so that none fails on chain past a cap)");
    println!("(/settle checks the challenge and the transaction, co-signs, sends with preflight and waits for confirmation)");
    if let Some(p) = &peer {
        println!();
        println!(
            "x402-rs facilitator (bench/x402-rs-peer), plain `exact` payments, same localnet, {} concurrent clients, one payer per client:",
            a.concurrency
        );
        p.simulate.print("simulateTransaction");
        p.verify.print("POST /verify");
        p.floor_settle.print("settlement floor");
        p.settle.print("POST /settle");
        println!("(its floors: its own payment transaction simulated; signed by payer and fee payer, sent with preflight and confirmed straight against the RPC)");
        println!(
            "x402-rs /verify: {:.2} x its simulateTransaction floor (req/s), p99 {:.2} ms; x402-rs /settle: {:.2} x its settlement floor (req/s), p99 {:.2} ms",
            ratio(p.verify.rate(), p.simulate.rate()),
            p.verify.p99_ms(),
            ratio(p.settle.rate(), p.floor_settle.rate()),
            p.settle.p99_ms(),
        );
        println!();
    }
    println!(
        "/verify: {:.2} x the simulateTransaction floor (req/s), p99 {:.2} ms; /settle: {:.2} x the settlement floor (req/s), p99 {:.2} ms",
        ratio(verify.rate(), simulate.rate()),
        verify.p99_ms(),
        ratio(settle.rate(), floor_settle.rate()),
        settle.p99_ms(),
    );
    if !replicated.is_empty() {
        println!();
        println!("replicas sharing one Redis and one fee payer, the clients round-robin over them (the lock in Redis: SET NX PX, polled while held; the pending record: GET, then a claim script):");
        for (n, summary, trips) in &replicated {
            println!(
                "/settle on {n} replica(s): {:.2} x the settlement floor (req/s), p99 {:.2} ms, {:.2} RPC calls/req, {trips:.2} Redis round trips/req",
                ratio(summary.rate(), floor_settle.rate()),
                summary.p99_ms(),
                summary.calls_per_request().unwrap_or_default(),
            );
        }
    }
    Ok(())
}

/// Every settlement locks a FeedbackLog's rent (about 0.0023 SOL) until the crank closes it:
/// 100 SOL more for some 40 000 of them in one run.
async fn fund(
    rpc: &solana_rpc_client::nonblocking::rpc_client::RpcClient,
    fee_payer: &solana_sdk::pubkey::Pubkey,
) -> Result<(), String> {
    let before = rpc
        .get_balance(fee_payer)
        .await
        .map_err(|e| e.to_string())?;
    rpc.request_airdrop(fee_payer, 100_000_000_000)
        .await
        .map_err(|e| format!("funding the facilitator: {e}"))?;
    if rpc
        .get_balance(fee_payer)
        .await
        .map_err(|e| e.to_string())?
        <= before
    {
        return Err("funding the facilitator: the airdrop did not land".into());
    }
    Ok(())
}

/// What a benchmarked /settle call needs: a fresh challenge, signed by the payer with the
/// template's accounts, posted to one of the facilitators.
#[derive(Clone)]
struct Payments {
    http: reqwest::Client,
    /// The demo's challenge configuration.
    config: Arc<DemoConfig>,
    /// The payers' settlements to copy, and their signers.
    templates: Arc<Vec<pay::Prepared>>,
    signers: Arc<Vec<solana_sdk::signature::Keypair>>,
    caip2: String,
    fee_payer: solana_sdk::pubkey::Pubkey,
    blockhash: solana_sdk::hash::Hash,
}

/// Client `c`'s /settle calls: as payer `c` mod the payers, to facilitator `c` mod `urls`.
fn settle_calls(
    p: Arc<Payments>,
    urls: Vec<String>,
) -> impl Fn(usize, u64) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>
       + Send
       + Sync
       + 'static {
    let urls = Arc::new(urls);
    move |c, _| {
        let (p, urls) = (p.clone(), urls.clone());
        Box::pin(async move {
            let (cfg, templates, signers) = (&*p.config, &p.templates, &p.signers);
            let (template, signer) = (&templates[c % templates.len()], &signers[c % signers.len()]);
            let now = trust_gate_client::simulate::now_unix();
            let pr = challenge::issue(
                cfg,
                &p.caip2,
                &p.fee_payer,
                &template.settlement.payer_asset,
                now,
            );
            let Some(r) = pr.accepts.into_iter().next() else {
                return false;
            };
            let memo = r.extra["memo"].as_str().unwrap_or_default();
            let id = x402::payment_id_hash(memo);
            let Ok(gate) = x402::GateExtension::from_requirements(&r) else {
                return false;
            };
            let deadline = x402::deadline(&r, &gate);
            let Some((settlement, tx)) =
                settlement_tx(template, id, deadline, p.blockhash, &[signer])
            else {
                return false;
            };
            let prepared = pay::Prepared {
                builder: template.builder,
                requirements: r.clone(),
                resource: pr.resource.clone(),
                fee_payer: p.fee_payer,
                tables: template.tables.clone(),
                settlement,
                extensions: None,
            };
            let Ok(payload) = prepared.payload(&tx) else {
                return false;
            };
            let req = FacilitatorRequest {
                x402_version: 2,
                payment_payload: payload,
                payment_requirements: r,
            };
            let url = &urls[c % urls.len()];
            match p.http.post(format!("{url}/settle")).json(&req).send().await {
                Ok(res) if res.status() == 200 => true,
                Ok(res) => {
                    tracing::debug!("settle: {}", res.text().await.unwrap_or_default());
                    false
                }
                Err(_) => false,
            }
        })
    }
}

/// `template`'s settlement with payment id `id` and `deadline`, as a transaction paid by the
/// template's facilitator and signed by `signers` (the payer; the facilitator too for the
/// floor).
fn settlement_tx(
    template: &pay::Prepared,
    id: [u8; 32],
    deadline: i64,
    blockhash: solana_sdk::hash::Hash,
    signers: &[&solana_sdk::signature::Keypair],
) -> Option<(
    trust_gate_client::settle::Settlement,
    solana_sdk::transaction::VersionedTransaction,
)> {
    let mut settlement = template.settlement.clone();
    settlement.feedback.payment_id_hash = id;
    settlement.deadline = deadline;
    let ixs =
        trust_gate_client::settle::compose(&template.builder, &settlement, AtomicityEnforced::TRUE)
            .ok()?;
    let tx = trust_gate_client::settle::transaction(
        &template.fee_payer,
        &ixs,
        &template.tables,
        blockhash,
        signers,
    )
    .ok()?;
    Some((settlement, tx))
}
