//! Slow clients and floods against the facilitator, on loopback and bounded: a body trickled
//! byte by byte, 1 000 idle connections, and requests far above what the machine serves.
//! Throughout, the health check answers; afterwards /verify decides again; and the process's
//! memory does not keep growing from one flood to the next (peak RSS is printed).

use crate::services;
use serde_json::json;
use solana_sdk::signer::Signer;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use trust_gate_migrations::demo;

/// Resident and peak resident memory of this process, in KiB (Linux).
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Lets this process hold `n` open files (client and server sides of every connection live
/// here), within the hard limit.
fn allow_open_files(n: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls on a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < n {
            lim.rlim_cur = n.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// GET /healthz must answer 200 within 3 s (other suites may share the two cores).
async fn healthy(http: &reqwest::Client, url: &str) -> Duration {
    let t = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(3), http.get(url).send())
        .await
        .expect("the health check answered within 3 s")
        .unwrap();
    assert_eq!(r.status(), 200);
    t.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_idle_connections_and_floods_leave_the_facilitator_answering() {
    allow_open_files(4_096);
    let s = services::start().await;
    let w = &s.env.world;
    let health = s.f("/healthz");
    let verify_url = s.f("/verify");
    let addr = s.facilitator.addr;
    let http = reqwest::Client::new();
    let context = json!({
        "payerAgentAsset": w.payer(3).unwrap().asset().to_string(),
        "payeeAgentAsset": w.service.asset().to_string(),
        "amount": demo::PRICE.to_string(),
        "mint": w.mint().to_string(),
        "policyId": demo::POLICY_ID,
    })
    .to_string();

    // A body trickled a byte every 5 ms (about 1.5 s): meanwhile the health check answers,
    // and the trickled request is still decided at the end.
    let trickle = {
        let body = context.clone();
        tokio::spawn(async move {
            let mut c = TcpStream::connect(addr).await.unwrap();
            let head = format!(
                "POST /verify HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            c.write_all(head.as_bytes()).await.unwrap();
            for b in body.bytes() {
                c.write_all(&[b]).await.unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let mut answer = String::new();
            c.read_to_string(&mut answer).await.unwrap();
            answer
        })
    };
    let mut slowest = Duration::ZERO;
    while !trickle.is_finished() {
        slowest = slowest.max(healthy(&http, &health).await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let answer = trickle.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // 1 000 idle connections, held open while the health check and a decision are served.
    let mut idle = Vec::new();
    for _ in 0..1_000 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    slowest = slowest.max(healthy(&http, &health).await);
    let r = http
        .post(&verify_url)
        .header("content-type", "application/json")
        .body(context.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    drop(idle);

    // Two floods of 256 concurrent clients for 2 s each, far above what two cores serve; the
    // health check answers during both, memory after the second is not above the first's.
    let mut after = Vec::new();
    for round in 0..2 {
        let stop = Instant::now() + Duration::from_secs(2);
        let mut flood = Vec::new();
        for _ in 0..256 {
            let (http, url, body) = (http.clone(), verify_url.clone(), context.clone());
            flood.push(tokio::spawn(async move {
                let mut served = 0u32;
                while Instant::now() < stop {
                    if let Ok(r) = http
                        .post(&url)
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .await
                    {
                        served += u32::from(r.status() == 200);
                    }
                }
                served
            }));
        }
        while Instant::now() < stop {
            slowest = slowest.max(healthy(&http, &health).await);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut served = 0;
        for f in flood {
            served += f.await.unwrap();
        }
        let (rss, peak) = memory_kib();
        println!("flood {round}: {served} decisions served in 2 s by 256 clients; RSS {rss} KiB, peak {peak} KiB");
        assert!(served > 0);
        after.push(rss);
    }
    // Recovered: a decision right after the floods.
    let r = http
        .post(&verify_url)
        .header("content-type", "application/json")
        .body(context)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // The second flood does not leave memory far above the first (no per-request growth).
    assert!(
        after[1] < after[0] + after[0] / 4,
        "memory after the floods: {after:?} KiB"
    );
    println!(
        "slow clients and floods: slowest health check {:.1} ms; the facilitator {} answered throughout",
        slowest.as_secs_f64() * 1e3,
        w.facilitator.pubkey()
    );
}
