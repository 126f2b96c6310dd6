//! Faults between the facilitator and the chain: a JSON-RPC proxy on loopback that can hide
//! signature statuses or stop answering (or, for the replicas tests, put a cluster's delay
//! between a send's preflight and its execution), and a facilitator killed between the send
//! and the confirmation. In every case the payment settles exactly once: a settlement whose outcome
//! is not known in time answers 202 `settlement_pending` with its signature (never a
//! failure), and the client's retry of the same request returns that signature.

use crate::services::{self, Services};
use crate::settle::{ledger, prepared, request, signed};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use trust_gate_client::settle;
use trust_gate_client::AtomicityEnforced;
use trust_gate_migrations::demo;

/// What the proxy does with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forwards everything.
    Forward,
    /// Forwards everything but answers getSignatureStatuses "not found yet".
    HideStatuses,
    /// Answers nothing but 503 (the backend is down).
    Down,
    /// As a cluster's RPC node: sendTransaction's preflight simulation, then
    /// [`CLUSTER_LATENCY`] on the way to the leader before it executes. Two transactions
    /// may both pass their simulation before either executes.
    Cluster,
}

/// The time between a send's preflight simulation and its execution, in [`Mode::Cluster`].
pub const CLUSTER_LATENCY: Duration = Duration::from_millis(25);

pub struct Proxy {
    upstream: String,
    mode: Mutex<Mode>,
    http: reqwest::Client,
    /// sendTransaction requests received, and those the chain answered.
    pub sends: AtomicUsize,
    pub sent: AtomicUsize,
}

impl Proxy {
    pub fn set(&self, m: Mode) {
        *self.mode.lock().unwrap() = m;
    }
}

async fn relay(State(p): State<Arc<Proxy>>, body: Bytes) -> Response {
    let mode = *p.mode.lock().unwrap();
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = request["method"].as_str().unwrap_or_default();
    if mode == Mode::Down {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    if mode == Mode::HideStatuses && method == "getSignatureStatuses" {
        let n = request["params"][0].as_array().map_or(0, Vec::len);
        let value = vec![Value::Null; n];
        return axum::Json(json!({"jsonrpc": "2.0", "id": request["id"],
            "result": {"context": {"slot": 1}, "value": value}}))
        .into_response();
    }
    if method == "sendTransaction" {
        p.sends.fetch_add(1, Ordering::SeqCst);
    }
    let mut body = body;
    if mode == Mode::Cluster && method == "sendTransaction" {
        let params = &request["params"];
        let preflight = json!({"jsonrpc": "2.0", "id": 0, "method": "simulateTransaction",
            "params": [params[0], {"encoding": params[1]["encoding"], "sigVerify": true,
                "commitment": "confirmed"}]});
        let sim: Value = match p.http.post(&p.upstream).json(&preflight).send().await {
            Ok(r) => r.json().await.unwrap_or(Value::Null),
            Err(_) => return StatusCode::BAD_GATEWAY.into_response(),
        };
        let result = &sim["result"]["value"];
        if !result["err"].is_null() {
            return axum::Json(json!({"jsonrpc": "2.0", "id": request["id"], "error": {
                "code": -32002,
                "message": format!("Transaction simulation failed: {}", result["err"]),
                "data": result}}))
            .into_response();
        }
        tokio::time::sleep(CLUSTER_LATENCY).await;
        let mut send = request.clone();
        send["params"][1]["skipPreflight"] = true.into();
        body = Bytes::from(serde_json::to_vec(&send).unwrap());
    }
    match p
        .http
        .post(&p.upstream)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
    {
        Ok(r) => {
            let status = StatusCode::from_u16(r.status().as_u16()).unwrap();
            let bytes = r.bytes().await.unwrap_or_default();
            if method == "sendTransaction" {
                p.sent.fetch_add(1, Ordering::SeqCst);
            }
            (status, bytes).into_response()
        }
        Err(_) => StatusCode::BAD_GATEWAY.into_response(),
    }
}

pub async fn start_proxy(upstream: String) -> (Arc<Proxy>, String) {
    let proxy = Arc::new(Proxy {
        upstream,
        mode: Mutex::new(Mode::Forward),
        http: reqwest::Client::new(),
        sends: AtomicUsize::new(0),
        sent: AtomicUsize::new(0),
    });
    let app = Router::new()
        .route("/", post(relay))
        .with_state(proxy.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (proxy, format!("http://{addr}"))
}

/// A facilitator with the demo keys whose RPC goes through `rpc_url`, confirming for at most
/// `confirm`.
pub(crate) async fn facilitator_via(
    s: &Services,
    rpc_url: &str,
    confirm: Duration,
) -> trust_gate_facilitator::Server {
    let mut c = services::config(&s.env, rpc_url);
    c.confirm_timeout = confirm;
    trust_gate_facilitator::start(c, services::loopback())
        .await
        .unwrap()
}

/// A facilitator on a runtime of its own, so that it can be killed as a process dies: its
/// connections and in-flight requests vanish with the runtime.
pub struct Killable {
    pub url: String,
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Killable {
    pub async fn start(c: trust_gate_facilitator::Config) -> Killable {
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let server = trust_gate_facilitator::start(c, services::loopback())
                    .await
                    .unwrap();
                url_tx.send(server.url()).unwrap();
                let _ = killed.await;
                std::mem::forget(server);
            });
            // Every task of the runtime (the server, its connections, the request that was
            // confirming) stops here, mid-flight.
            rt.shutdown_background();
        });
        Killable {
            url: url_rx.await.unwrap(),
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    pub fn kill(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// POST `path` of the facilitator at `url` (a replica, or one of a test's own): status and
/// JSON body.
pub async fn post_at(s: &Services, url: &str, path: &str, body: &Value) -> (u16, Value) {
    let r = s
        .http
        .post(format!("{url}{path}"))
        .json(body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

pub async fn settle_at(s: &Services, url: &str, body: &Value) -> (u16, Value) {
    post_at(s, url, "/settle", body).await
}

/// A fresh payment of the demo price by the tier-3 payer, as a /settle body.
pub async fn payment(s: &Services) -> Value {
    let p = prepared(s).await;
    let ixs = settle::compose(&p.builder, &p.settlement, AtomicityEnforced::TRUE).unwrap();
    request(&p, &signed(s, &p, &ixs).await)
}

#[tokio::test]
async fn a_settlement_whose_outcome_is_late_is_pending_then_settled_once() {
    let s = services::start().await;
    let (proxy, rpc) = start_proxy(s.env.localnet.rpc_url()).await;
    let f = facilitator_via(&s, &rpc, Duration::from_millis(500)).await;
    let url = f.url();
    let source = {
        let p = prepared(&s).await;
        p.settlement.source_token
    };
    let (balance, before) = (s.env.token_balance(&source).await, ledger(&s).await);

    // The statuses stay hidden: the transaction lands, its outcome does not come back.
    proxy.set(Mode::HideStatuses);
    let body = payment(&s).await;
    let (status, pending) = settle_at(&s, &url, &body).await;
    assert_eq!(status, 202, "{pending}");
    assert_eq!(pending["success"], false);
    assert_eq!(pending["errorReason"], "settlement_pending");
    let sig = pending["transaction"].as_str().unwrap().to_string();
    assert!(!sig.is_empty(), "the pending answer carries the signature");
    assert_eq!(proxy.sends.load(Ordering::SeqCst), 1);

    // The client retries the same request once the RPC answers again: the first signature,
    // and the payment counted and moved once.
    proxy.set(Mode::Forward);
    let (status, done) = settle_at(&s, &url, &body).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["transaction"], sig);
    assert_eq!(done["receipt"]["replayed"], true);
    assert_eq!(ledger(&s).await, before + demo::PRICE);
    assert_eq!(s.env.token_balance(&source).await, balance - demo::PRICE);
}

#[tokio::test]
async fn the_rpc_going_down_mid_settlement_and_coming_back_settles_once() {
    let s = services::start().await;
    let (proxy, rpc) = start_proxy(s.env.localnet.rpc_url()).await;
    let f = facilitator_via(&s, &rpc, Duration::from_secs(20)).await;
    let url = f.url();
    let before = ledger(&s).await;
    let body = payment(&s).await;

    // The backend goes down right after the send reaches it, for about a second.
    let watcher = {
        let proxy = proxy.clone();
        tokio::spawn(async move {
            while proxy.sends.load(Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            proxy.set(Mode::Down);
            tokio::time::sleep(Duration::from_millis(1_000)).await;
            proxy.set(Mode::Forward);
        })
    };
    let (status, done) = settle_at(&s, &url, &body).await;
    watcher.await.unwrap();
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["receipt"]["replayed"], false);
    assert_eq!(ledger(&s).await, before + demo::PRICE);
    // And a retry is the same payment.
    let (status, again) = settle_at(&s, &url, &body).await;
    assert_eq!((status, &again["transaction"]), (200, &done["transaction"]));
    assert_eq!(ledger(&s).await, before + demo::PRICE);
}

#[tokio::test]
async fn a_facilitator_killed_between_send_and_confirmation_settles_once_after_a_restart() {
    let s = services::start().await;
    let (proxy, rpc) = start_proxy(s.env.localnet.rpc_url()).await;
    let mut c = services::config(&s.env, &rpc);
    c.confirm_timeout = Duration::from_secs(20);
    let mut first = Killable::start(c).await;
    let url = first.url.clone();
    let before = ledger(&s).await;
    let body = payment(&s).await;

    // Statuses are hidden, so the facilitator is still confirming when it is killed.
    proxy.set(Mode::HideStatuses);
    let client = {
        let (http, body, url) = (s.http.clone(), body.clone(), url.clone());
        tokio::spawn(async move { http.post(format!("{url}/settle")).json(&body).send().await })
    };
    // Killed once the send has reached the chain, while it waits for the confirmation.
    while proxy.sent.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    first.kill();
    let lost = client.await.unwrap();
    assert!(lost.is_err(), "the killed facilitator answered: {lost:?}");

    // A new facilitator process (same key); the client retries the same request.
    proxy.set(Mode::Forward);
    let second = facilitator_via(&s, &rpc, Duration::from_secs(20)).await;
    let (status, done) = settle_at(&s, &second.url(), &body).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["receipt"]["replayed"], true, "the first send landed");
    assert_eq!(
        ledger(&s).await,
        before + demo::PRICE,
        "settled exactly once"
    );
    assert_eq!(
        proxy.sends.load(Ordering::SeqCst),
        2,
        "the retry resent the same transaction"
    );
}
