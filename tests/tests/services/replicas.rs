//! Facilitator replicas sharing one fee payer and one Redis (each test starts its own
//! `redis-server` on a free loopback port) in front of one localnet: one settlement at a time
//! per payer across all of them, a retry on any replica finds what another sent, and with
//! Redis down /settle fails closed while /verify goes on.

use crate::concurrency::{assert_counted, fee_payer_balance};
use crate::faults::{payment, settle_at, start_proxy, Killable, Mode};
use crate::services::{self, Services};
use crate::settle::ledger;
use futures::future::join_all;
use serde_json::{json, Value};
use solana_sdk::signer::Signer;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use trust_gate_facilitator::Server;
use trust_gate_migrations::demo;
use trust_gate_test_setup::RedisServer;

/// The demo facilitator's configuration on `rpc_url`, keeping its locks in `redis`.
fn replica_config(
    s: &Services,
    rpc_url: &str,
    redis: &RedisServer,
) -> trust_gate_facilitator::Config {
    let mut c = services::config(&s.env, rpc_url);
    c.redis_url = Some(redis.url());
    // Up to 115 settlements of one payer at once: past the default per-payer rate and
    // waiting bound.
    services::unthrottled_payers(&mut c);
    c
}

/// `n` replicas whose RPC is `rpc_url`.
async fn replicas(s: &Services, rpc_url: &str, redis: &RedisServer, n: usize) -> Vec<Server> {
    let mut out = Vec::new();
    for _ in 0..n {
        let c = replica_config(s, rpc_url, redis);
        out.push(
            trust_gate_facilitator::start(c, services::loopback())
                .await
                .unwrap(),
        );
    }
    out
}

/// What one settlement costs the fee payer (its signatures' fee and the feedback log's rent;
/// every settlement costs the same), measured by settling one through `url`.
async fn unit_cost(s: &Services, url: &str) -> u64 {
    let before = fee_payer_balance(s).await;
    let (status, b) = settle_at(s, url, &payment(s).await).await;
    assert_eq!(status, 200, "{b}");
    before - fee_payer_balance(s).await
}

/// `n` fresh payments of the tier-3 payer, challenged and signed up front.
async fn payments(s: &Services, n: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(payment(s).await);
    }
    out
}

fn redis_connection(redis: &RedisServer) -> redis::Client {
    redis::Client::open(redis.url()).unwrap()
}

/// The milliseconds `key` has left in Redis (-2: no such key).
async fn pttl(redis: &RedisServer, key: &str) -> i64 {
    let mut con = redis_connection(redis)
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    redis::cmd("PTTL")
        .arg(key)
        .query_async(&mut con)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_three_settle_one_payers_concurrent_payments_one_at_a_time() {
    let s = services::start().await;
    let redis = RedisServer::start();
    // The localnet executes a send right after its preflight simulation; through the proxy,
    // as on a cluster, time passes between the two, so that two settlements of the payer
    // that overlapped would both pass their simulation and the second fail on chain.
    let (proxy, rpc) = start_proxy(s.env.localnet.rpc_url()).await;
    proxy.set(Mode::Cluster);
    let fleet = replicas(&s, &rpc, &redis, 3).await;
    let asset = s.env.world.payer(3).unwrap().asset();
    let source = s.env.settlement(3, 1, [0; 32]).await.source_token;
    // The velocity rule of the demo policy admits this many payments at the demo price; the
    // concurrency test's count: 15 more than that.
    let cap =
        (demo::payer_policy(s.env.world.mint()).velocity_max_in_window / demo::PRICE) as usize;
    let cost = unit_cost(&s, &fleet[0].url()).await;

    let bodies = payments(&s, cap + 15).await;
    let (tokens, lamports) = (
        s.env.token_balance(&source).await,
        fee_payer_balance(&s).await,
    );
    let trips: u64 = fleet
        .iter()
        .map(|f| f.facilitator.store.round_trips())
        .sum();
    let urls: Vec<String> = fleet.iter().map(Server::url).collect();
    let start = Instant::now();
    // Round-robin over the three replicas, all at once.
    let outcomes = join_all(
        bodies
            .iter()
            .enumerate()
            .map(|(i, b)| settle_at(&s, &urls[i % 3], b)),
    )
    .await;
    let elapsed = start.elapsed();
    let trips = fleet
        .iter()
        .map(|f| f.facilitator.store.round_trips())
        .sum::<u64>()
        - trips;

    let mut paid_by = [0usize; 3];
    let mut refusals = Vec::new();
    for (i, (status, body)) in outcomes.iter().enumerate() {
        match status {
            200 => paid_by[i % 3] += 1,
            _ => refusals.push((*status, body["errorReason"].clone())),
        }
    }
    let paid: usize = paid_by.iter().sum();
    println!(
        "{} concurrent payments over 3 replicas in {elapsed:?}: settled {paid_by:?}, {} refused; {trips} Redis round trips",
        bodies.len(),
        refusals.len()
    );
    // Exactly the cap settled (one was spent before), spread over the three; every other
    // payment refused with the gate's Deny found by the preflight simulation.
    assert_eq!(paid, cap - 1, "{refusals:?}");
    assert!(paid_by.iter().all(|&n| n > 0), "{paid_by:?}");
    for r in &refusals {
        assert_eq!(r, &(402, json!("VelocityWindowExceeded")), "{refusals:?}");
    }
    assert_counted(&s, &asset, (paid as u64 + 1) * demo::PRICE).await;
    assert_eq!(
        s.env.token_balance(&source).await,
        tokens - paid as u64 * demo::PRICE
    );
    // No settlement failed on chain: the fee payer paid for exactly the ones that landed.
    assert_eq!(
        lamports - fee_payer_balance(&s).await,
        paid as u64 * cost,
        "the fee payer paid for a transaction that failed on chain"
    );
}

#[tokio::test]
async fn replicas_a_replica_killed_between_send_and_confirmation_the_retry_elsewhere_sends_nothing()
{
    let s = services::start().await;
    let redis = RedisServer::start();
    let (proxy, rpc) = start_proxy(s.env.localnet.rpc_url()).await;
    let payer_asset = s.env.world.payer(3).unwrap().asset();
    let lock_key = format!("trust-gate:payer-lock:{payer_asset}");
    // The replica to be killed confirms for up to 3 s and gives its send 2 s: its lock lives
    // 12 s (see `Config::lock_ttl`) unless released.
    let mut c = replica_config(&s, &rpc, &redis);
    c.confirm_timeout = Duration::from_secs(3);
    c.send_timeout = Duration::from_secs(2);
    let ttl = c.lock_ttl();
    let mut first = Killable::start(c).await;
    let second =
        trust_gate_facilitator::start(replica_config(&s, &rpc, &redis), services::loopback())
            .await
            .unwrap();
    let before = ledger(&s).await;
    let body = payment(&s).await;

    // Statuses are hidden, so the first replica is still confirming when it is killed.
    proxy.set(Mode::HideStatuses);
    let client = {
        let (http, body, url) = (s.http.clone(), body.clone(), first.url.clone());
        tokio::spawn(async move { http.post(format!("{url}/settle")).json(&body).send().await })
    };
    while proxy.sent.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    first.kill();
    let killed_at = Instant::now();
    assert!(
        client.await.unwrap().is_err(),
        "the killed replica answered"
    );
    // It died holding the payer's lock.
    let left = pttl(&redis, &lock_key).await;
    assert!(left > 0 && left <= ttl.as_millis() as i64, "PTTL {left}");

    // The client retries on the other replica: the first signature, and nothing sent.
    proxy.set(Mode::Forward);
    let (status, done) = settle_at(&s, &second.url(), &body).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["receipt"]["replayed"], true, "the first send landed");
    assert_eq!(
        proxy.sends.load(Ordering::SeqCst),
        1,
        "the retry sent a transaction"
    );
    assert_eq!(ledger(&s).await, before + demo::PRICE, "settled once");
    let sig = done["transaction"].as_str().unwrap();
    let mut con = redis_connection(&redis)
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let record: Option<String> = redis::cmd("GET")
        .arg(format!(
            "trust-gate:pending:{}:{}",
            s.env.world.facilitator.pubkey(),
            done["receipt"]["paymentIdHash"].as_str().unwrap()
        ))
        .query_async(&mut con)
        .await
        .unwrap();
    assert!(
        record.as_deref().is_some_and(|r| r.starts_with(sig)),
        "the record the killed replica wrote names the signature returned: {record:?}"
    );

    // The dead replica's lock frees itself at expiry: the payer's next payment waits for it,
    // then settles.
    let next = payment(&s).await;
    let (status, b) = settle_at(&s, &second.url(), &next).await;
    assert_eq!(status, 200, "{b}");
    assert!(
        killed_at.elapsed() + Duration::from_millis(500) >= Duration::from_millis(left as u64),
        "the next settlement did not wait for the dead replica's lock ({:?} after the kill, {left} ms left then)",
        killed_at.elapsed()
    );
    assert_eq!(pttl(&redis, &lock_key).await, -2, "the lock is free");
    assert_eq!(ledger(&s).await, before + 2 * demo::PRICE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_with_redis_stopped_mid_run_refuse_to_settle_then_resume_settling_each_once() {
    let s = services::start().await;
    let mut redis = RedisServer::start();
    let (proxy, rpc) = start_proxy(s.env.localnet.rpc_url()).await;
    proxy.set(Mode::Cluster);
    let fleet = replicas(&s, &rpc, &redis, 2).await;
    let cost = unit_cost(&s, &fleet[0].url()).await;
    let bodies = payments(&s, 24).await;
    let (before, lamports) = (ledger(&s).await, fee_payer_balance(&s).await);

    // All at once, round-robin; Redis is killed once four have settled.
    let watcher = async {
        while ledger(&s).await < before + 4 * demo::PRICE {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    let urls: Vec<String> = fleet.iter().map(Server::url).collect();
    let run = join_all(
        bodies
            .iter()
            .enumerate()
            .map(|(i, b)| settle_at(&s, &urls[i % 2], b)),
    );
    let (first_run, ()) = tokio::join!(run, async {
        watcher.await;
        redis.stop();
    });
    let mut refused = Vec::new();
    for (i, (status, b)) in first_run.iter().enumerate() {
        match status {
            200 => {}
            503 => {
                assert_eq!(b["errorReason"], "lock_store_unavailable", "{b}");
                let message = b["errorMessage"].as_str().unwrap();
                assert!(message.contains(&redis.url()), "names the store: {message}");
                refused.push(i);
            }
            _ => panic!("payment {i}: {status} {b}"),
        }
    }
    println!(
        "Redis killed mid-run: {} of {} settled, {} refused with 503",
        bodies.len() - refused.len(),
        bodies.len(),
        refused.len()
    );
    assert!(
        !refused.is_empty(),
        "Redis was stopped after every payment had settled"
    );
    assert_eq!(
        ledger(&s).await,
        before + (bodies.len() - refused.len()) as u64 * demo::PRICE
    );

    // While it is down: /healthz says so, /settle refuses, /verify answers.
    for f in &fleet {
        let h = s.get_json(format!("{}/healthz", f.url())).await;
        assert_eq!(h["ok"], false, "{h}");
        assert_eq!(h["lockStore"]["ok"], false, "{h}");
        assert_eq!(h["lockStore"]["url"], redis.url(), "{h}");
    }
    let (status, b) = settle_at(&s, &fleet[1].url(), &bodies[refused[0]]).await;
    assert_eq!(
        (status, b["errorReason"].as_str()),
        (503, Some("lock_store_unavailable"))
    );
    let verify = s
        .http
        .post(format!("{}/verify", fleet[0].url()))
        .json(&json!({
            "payerAgentAsset": s.env.world.payer(3).unwrap().asset().to_string(),
            "payeeAgentAsset": s.env.world.service.asset().to_string(),
            "amount": demo::PRICE.to_string(),
            "mint": s.env.world.mint().to_string(),
            "policyId": demo::POLICY_ID,
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(verify.status(), 200, "/verify needs no lock store");
    // /receipt reads the chain alone while the store is down.
    let settled = (0..bodies.len()).find(|i| !refused.contains(i)).unwrap();
    let memo = bodies[settled]["paymentRequirements"]["extra"]["memo"]
        .as_str()
        .unwrap();
    let id = trust_gate_x402::payment_id_hash(memo);
    let r = s
        .get_json(format!(
            "{}/receipt/{}",
            fleet[0].url(),
            trust_gate_client::decode::hex(&id)
        ))
        .await;
    assert_eq!(r["exists"], true, "/receipt needs no lock store: {r}");

    // Back (empty, as after a crash): the refused payments settle on retry, each once; every
    // payment's retry is a replay of its first signature.
    redis.restart();
    let start = Instant::now();
    for &i in &refused {
        loop {
            let (status, b) = settle_at(&s, &fleet[i % 2].url(), &bodies[i]).await;
            if status == 503 && start.elapsed() < Duration::from_secs(10) {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            assert_eq!(status, 200, "payment {i} after Redis came back: {b}");
            break;
        }
    }
    for (i, b) in bodies.iter().enumerate() {
        let (status, again) = settle_at(&s, &fleet[(i + 1) % 2].url(), b).await;
        assert_eq!(status, 200, "{again}");
        assert_eq!(again["receipt"]["replayed"], true, "{again}");
        if let (200, first) = (&first_run[i].0, &first_run[i].1) {
            assert_eq!(again["transaction"], first["transaction"]);
        }
    }
    assert_eq!(ledger(&s).await, before + bodies.len() as u64 * demo::PRICE);
    assert_eq!(
        lamports - fee_payer_balance(&s).await,
        bodies.len() as u64 * cost,
        "a settlement failed on chain or was paid twice"
    );
    for f in &fleet {
        let h = s.get_json(format!("{}/healthz", f.url())).await;
        assert_eq!(h["ok"], true, "{h}");
    }
}
