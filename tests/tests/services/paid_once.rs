//! Exactly once as x402 clients see it: the `payment-identifier` extension on the demo (ids
//! looked up before verification, bound to the exact payload) with the Rust paying clients
//! (`trust-gate pay`, `gate_pay`), and a retried settlement that waits for its own
//! transaction on every scheme (exact, an `upto` deposit, a session's deposit) instead of
//! being refused because its first attempt landed.
//!
//! Lost answers come from a loopback proxy in front of the demo that forwards a paid request
//! and closes the connection without answering; late outcomes from the JSON-RPC proxy of
//! [`crate::faults`] hiding signature statuses from a facilitator whose confirmation wait is
//! short. Every payment is checked on chain: the tokens moved once. (Through the demo, a
//! request still pending after its second wait answers 503 with `Retry-After`, which the
//! paying clients send again with the same id.)

use crate::batch::Payer;
use crate::faults::{facilitator_via, post_at, settle_at, start_proxy, Mode};
use crate::services::{self, Services};
use crate::upto::Client;
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use solana_sdk::signer::Signer;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::Overrides;
use trust_gate_demo::DemoConfig;
use trust_gate_migrations::demo;
use trust_gate_pay::channels::ChannelPay;
use trust_gate_pay::exact::{self as pay, First, PayOptions, PayOutcome, Request};
use trust_gate_x402::payment_identifier;
use trust_gate_x402::{self as x402, PaymentPayload};

/// A demo in front of the facilitator at `facilitator`, its configuration edited.
async fn demo_at(facilitator: &str, edit: impl FnOnce(&mut DemoConfig)) -> trust_gate_demo::Server {
    let listener = std::net::TcpListener::bind(services::loopback()).unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mut c = DemoConfig::demo_world(facilitator, &format!("http://{addr}"));
    edit(&mut c);
    trust_gate_demo::start(c, addr).await.unwrap()
}

/// A loopback HTTP proxy to `upstream` that forwards every request and, for the first `drop`
/// requests carrying `PAYMENT-SIGNATURE`, closes the connection once the upstream answered,
/// without passing the answer on (a lost answer). Counts the paid requests it forwarded.
async fn dropping_proxy(upstream: String, drop: usize) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let paid = Arc::new(AtomicUsize::new(0));
    let counted = paid.clone();
    tokio::spawn(async move {
        let http = reqwest::Client::new();
        loop {
            let Ok((mut conn, _)) = listener.accept().await else {
                return;
            };
            let (http, upstream, paid) = (http.clone(), upstream.clone(), counted.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).to_string();
                let mut lines = text.split("\r\n");
                let path = lines.next().unwrap().split(' ').nth(1).unwrap().to_string();
                let mut req = http.get(format!("{upstream}{path}"));
                let mut is_paid = false;
                for l in lines.take_while(|l| !l.is_empty()) {
                    let (k, v) = l.split_once(':').unwrap();
                    let k = k.trim().to_ascii_lowercase();
                    is_paid |= k == "payment-signature";
                    if !["host", "connection", "content-length"].contains(&k.as_str()) {
                        req = req.header(k, v.trim());
                    }
                }
                let res = req.send().await.unwrap();
                let n = if is_paid {
                    paid.fetch_add(1, Ordering::SeqCst) + 1
                } else {
                    0
                };
                let status = res.status();
                let headers = res.headers().clone();
                let body = res.bytes().await.unwrap();
                if is_paid && n <= drop {
                    return; // the answer is lost: the connection closes unanswered
                }
                let mut out = format!("HTTP/1.1 {status}\r\n");
                for (k, v) in &headers {
                    if !["content-length", "transfer-encoding", "connection"].contains(&k.as_str())
                    {
                        out.push_str(&format!("{k}: {}\r\n", v.to_str().unwrap()));
                    }
                }
                out.push_str(&format!(
                    "content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                ));
                let _ = conn.write_all(out.as_bytes()).await;
                let _ = conn.write_all(&body).await;
            });
        }
    });
    (url, paid)
}

/// The tier-3 payer's payment of the demo's /protected at `demo` (its 402, the settlement
/// signed), as the decoded payload: with a fresh payment id when the 402 declares the
/// extension.
async fn exact_payment(s: &Services, demo: &str) -> PaymentPayload {
    let payer = s.env.world.payer(3).unwrap();
    let request = Request::get(format!("{demo}/protected")).with_payer_agent(Some(payer.asset()));
    let First::Challenge(required) = pay::first(&s.http, &request).await.unwrap() else {
        panic!("the demo asks for a payment");
    };
    let prepared = pay::prepare(
        &s.env.rpc,
        &required,
        &payer.owner.pubkey(),
        Overrides::default(),
    )
    .await
    .unwrap();
    let ixs = prepared.instructions().unwrap();
    let tx = prepared
        .transaction(&s.env.rpc, &ixs, &payer.owner)
        .await
        .unwrap();
    prepared.payload(&tx).unwrap()
}

/// The Rust paying client of the channel schemes (`trust-gate pay`, `gate_pay`) of `url`, as
/// the tier-3 payer, gated or plain.
pub(crate) fn paying_at(s: &Services, url: String, gated: bool) -> ChannelPay<'_> {
    let payer = s.env.world.payer(3).unwrap();
    ChannelPay {
        http: &s.http,
        rpc: &s.env.rpc,
        overrides: Overrides::default(),
        request: Request::get(url),
        payer_agent: Some(payer.asset()),
        signer: &payer.owner,
        ungated: !gated,
        max_amount: None,
    }
}

/// Hides signature statuses from the facilitator behind `proxy` for `hidden`, then shows them
/// again; the task ends once they are shown.
fn hide_statuses_for(
    proxy: &Arc<crate::faults::Proxy>,
    hidden: Duration,
) -> tokio::task::JoinHandle<()> {
    proxy.set(Mode::HideStatuses);
    let proxy = proxy.clone();
    tokio::spawn(async move {
        tokio::time::sleep(hidden).await;
        proxy.set(Mode::Forward);
    })
}

/// An answer: status, headers, JSON body.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Value,
}

async fn get_paid(s: &Services, url: &str, payment: &str) -> Answer {
    let res = s
        .http
        .get(url)
        .header(x402::PAYMENT_SIGNATURE, payment)
        .send()
        .await
        .unwrap();
    Answer {
        status: res.status().as_u16(),
        headers: res.headers().clone(),
        body: res.json().await.unwrap(),
    }
}

/// The tier-3 payer's balance of the demo mint.
async fn exact_tokens(s: &Services) -> u64 {
    let w = &s.env.world;
    let ata =
        TokenProgram::SplToken.associated_account(&w.payer(3).unwrap().owner.pubkey(), &w.mint());
    s.env.token_balance(&ata).await
}

/// The tier-3 payer's balance of the metered mint.
async fn metered_tokens(s: &Services) -> u64 {
    let w = &s.env.world;
    let ata = TokenProgram::Token2022
        .associated_account(&w.payer(3).unwrap().owner.pubkey(), &w.metered_mint());
    s.env.token_balance(&ata).await
}

#[tokio::test]
async fn paid_once_an_exact_payments_lost_answer_is_sent_again_and_served_once() {
    let s = services::start().await;
    let (url, paid) = dropping_proxy(s.demo.url(), 1).await;
    let before = exact_tokens(&s).await;
    // `trust-gate pay` and `gate_pay`: the 402 declares payment-identifier, the client sends
    // an id, loses the answer, and sends the same payment again.
    let payer = s.env.world.payer(3).unwrap();
    let opts = PayOptions {
        request: Request::get(format!("{url}/protected")),
        payer_agent: Some(payer.asset()),
        signer: &payer.owner,
        overrides: Overrides::default(),
        compute_budget: Default::default(),
        max_amount: None,
    };
    let outcome = pay::pay(&s.http, &s.env.rpc, &opts).await.unwrap();
    let PayOutcome::Paid { response, body, .. } = outcome else {
        panic!("paid: {outcome:?}");
    };
    assert_eq!(paid.load(Ordering::SeqCst), 2, "the payment was sent twice");
    assert!(response.success);
    assert!(body.json()["report"].as_str().is_some(), "{body}");
    assert_eq!(exact_tokens(&s).await, before - demo::PRICE, "paid once");
}

#[tokio::test]
async fn paid_once_the_same_id_answers_once_a_payload_once_and_refuses_the_rest() {
    let s = services::start().await;
    let demo_url = s.demo.url();
    let protected = s.d("/protected");
    let before = exact_tokens(&s).await;

    // Two identical requests at once: one settlement, the same answer twice.
    let payment = exact_payment(&s, &demo_url).await;
    let id = payment_identifier::id_of(&serde_json::to_value(&payment).unwrap())
        .unwrap()
        .expect("the client sent an id");
    let header = x402::encode_header(&payment).unwrap();
    let (a, b) = tokio::join!(
        get_paid(&s, &protected, &header),
        get_paid(&s, &protected, &header)
    );
    assert_eq!((a.status, b.status), (200, 200), "{} {}", a.body, b.body);
    assert_eq!(a.body, b.body);
    assert_eq!(
        a.headers[x402::PAYMENT_RESPONSE],
        b.headers[x402::PAYMENT_RESPONSE]
    );
    assert_eq!(exact_tokens(&s).await, before - demo::PRICE);

    // The same id and payload later: the first answer as it was sent, nothing settled.
    let again = get_paid(&s, &protected, &header).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body, a.body);
    assert_eq!(
        again.headers[x402::PAYMENT_RESPONSE],
        a.headers[x402::PAYMENT_RESPONSE]
    );

    // The same id with another payment: 409, nothing verified or settled.
    let mut other = exact_payment(&s, &demo_url).await;
    other.extensions.as_mut().unwrap()[payment_identifier::KEY]["info"]["id"] = id.clone().into();
    let conflict = get_paid(&s, &protected, &x402::encode_header(&other).unwrap()).await;
    assert_eq!(conflict.status, 409, "{}", conflict.body);
    assert_eq!(conflict.body["error"], "payment_identifier_conflict");

    // The settled payment without its id (or under another id): a payment already used,
    // never served again.
    for extensions in [
        None,
        Some(
            json!({payment_identifier::KEY: {"info": {"required": false, "id": payment_identifier::new_id()}}}),
        ),
    ] {
        let mut replay = payment.clone();
        replay.extensions = extensions.map(|e| e.as_object().unwrap().clone());
        let r = get_paid(&s, &protected, &x402::encode_header(&replay).unwrap()).await;
        assert_eq!(r.status, 409, "{}", r.body);
        assert_eq!(r.body["error"], "payment_already_settled", "{}", r.body);
        assert!(r.body.get("report").is_none());
    }

    // A malformed id: 400 naming the field.
    let mut bad = exact_payment(&s, &demo_url).await;
    bad.extensions.as_mut().unwrap()[payment_identifier::KEY]["info"]["id"] = "short".into();
    let r = get_paid(&s, &protected, &x402::encode_header(&bad).unwrap()).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["error"], "invalid_payment_identifier");
    assert!(r.body["message"].as_str().unwrap().contains("info.id"));
    assert_eq!(
        exact_tokens(&s).await,
        before - demo::PRICE,
        "paid once in all"
    );
}

#[tokio::test]
async fn paid_once_a_route_that_requires_an_id_says_so_and_refuses_a_payment_without_one() {
    let s = services::start().await;
    let required = demo_at(&s.facilitator.url(), |c| c.payment_id_required = true).await;
    let res = s
        .http
        .get(format!("{}/protected", required.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 402);
    let challenge: Value = x402::decode_header(
        x402::PAYMENT_REQUIRED,
        res.headers()[x402::PAYMENT_REQUIRED].to_str().unwrap(),
    )
    .unwrap();
    assert_eq!(
        challenge["extensions"][payment_identifier::KEY]["info"]["required"],
        true
    );
    let mut payment = exact_payment(&s, &required.url()).await;
    payment.extensions = None;
    let r = get_paid(
        &s,
        &format!("{}/protected", required.url()),
        &x402::encode_header(&payment).unwrap(),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["error"], "payment_identifier_required");
}

/// The services with a second facilitator whose RPC goes through a proxy that can hide
/// signature statuses, confirming for 300 ms, and a demo in front of it.
async fn late(
    s: &Services,
) -> (
    Arc<crate::faults::Proxy>,
    trust_gate_facilitator::Server,
    trust_gate_demo::Server,
) {
    let (proxy, rpc) = start_proxy(s.env.localnet.rpc_url()).await;
    let f = facilitator_via(s, &rpc, Duration::from_millis(300)).await;
    let d = demo_at(&f.url(), |_| {}).await;
    (proxy, f, d)
}

#[tokio::test]
async fn paid_once_a_retried_upto_deposit_waits_for_its_own_open_and_answers_it() {
    let s = services::start().await;
    let (proxy, f, _) = late(&s).await;
    let c = Client::of(&s, s.env.world.mint(), TokenProgram::SplToken).await;
    let owner = c.payer.pubkey();
    let before = c.tokens(&owner).await;
    let (open, payload) = c.payload(11).await;
    let deposit = c.body(&payload, crate::upto::CEILING);

    proxy.set(Mode::HideStatuses);
    let (status, pending) = settle_at(&s, &f.url(), &deposit).await;
    assert_eq!(status, 202, "{pending}");
    assert_eq!(pending["errorReason"], "settlement_pending");
    proxy.set(Mode::Forward);

    // The stock resource server verifies the retry, then settles it: valid, and the same
    // open's outcome, sent once.
    let (_, verified) = post_at(&s, &f.url(), "/verify", &deposit).await;
    assert_eq!(verified["isValid"], true, "{verified}");
    let (status, done) = settle_at(&s, &f.url(), &deposit).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["transaction"], pending["transaction"]);
    assert_eq!(done["replayed"], true);
    assert_eq!(proxy.sends.load(Ordering::SeqCst), 1, "one open sent");

    // Claimed, then the deposit once more: the payment is over.
    let charge = crate::upto::CEILING;
    let claim = c.claim(&payload, &open.channel(), charge, &c.server);
    let (status, claimed) = settle_at(&s, &f.url(), &claim).await;
    assert_eq!(status, 200, "{claimed}");
    let (status, over) = settle_at(&s, &f.url(), &deposit).await;
    assert_eq!(status, 400, "{over}");
    assert_eq!(
        over["errorReason"],
        trust_gate_x402::reason::Reason::UptoChannelAlreadyOpen
    );
    assert!(
        over["errorMessage"]
            .as_str()
            .unwrap()
            .contains("claimed since"),
        "{over}"
    );
    assert_eq!(c.tokens(&owner).await, before - charge, "charged once");
}

#[tokio::test]
async fn paid_once_a_retried_session_deposit_waits_for_its_own_open_and_answers_it() {
    let s = services::start().await;
    let (proxy, f, _) = late(&s).await;
    let url = f.url();
    let (mut p, deposit) = Payer::new(&s, false).await;

    proxy.set(Mode::HideStatuses);
    let (status, pending) = settle_at(&s, &url, &deposit).await;
    assert_eq!(status, 202, "{pending}");
    // Retried while its outcome is still unknown: pending again with the same transaction,
    // nothing sent twice.
    let (status, still) = settle_at(&s, &url, &deposit).await;
    assert_eq!(status, 202, "{still}");
    assert_eq!(still["transaction"], pending["transaction"]);
    proxy.set(Mode::Forward);
    let (status, done) = settle_at(&s, &url, &deposit).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        (done["transaction"].clone(), done["replayed"].clone()),
        (pending["transaction"].clone(), json!(true))
    );
    assert_eq!(
        done["extra"]["channelState"]["chargedCumulativeAmount"],
        "1000"
    );
    assert_eq!(proxy.sends.load(Ordering::SeqCst), 1, "one open sent");

    // The session runs on; its deposit sent again after a voucher pays for nothing.
    let v = p.next();
    assert_eq!(p.settle_at(&url, &v).await["success"], true);
    let (status, again) = settle_at(&s, &url, &deposit).await;
    assert_ne!(status, 200, "{again}");
    assert_eq!(again["success"], false);
}

#[tokio::test]
async fn paid_once_a_pending_channel_deposit_answers_503_and_its_resend_is_served_once() {
    let s = services::start().await;
    let (proxy, _f, d) = late(&s).await;
    let before = metered_tokens(&s).await;

    // upto (the demo's metered route) and a session's deposit, by the channel client with
    // its ids, statuses hidden for 1.5 s: the demo's 503 is sent again until served.
    let client = |path: &str| paying_at(&s, format!("{}{path}", d.url()), false);
    let unhide = hide_statuses_for(&proxy, Duration::from_millis(1_500));
    let metered = client("/metered?units=2").upto().await.unwrap();
    unhide.await.unwrap();
    assert_eq!(metered.body.json()["units"], 2, "{}", metered.body);
    let charged = 2 * 100_000;
    assert_eq!(
        metered_tokens(&s).await,
        before - charged,
        "the claim charged once"
    );

    let pay = client("/session");
    let unhide = hide_statuses_for(&proxy, Duration::from_millis(1_500));
    let paid = pay.session(2, 5).await.unwrap();
    unhide.await.unwrap();
    assert_eq!(paid.requests.len(), 2);
    assert_eq!(
        metered_tokens(&s).await,
        before - charged - 2 * 1_000,
        "two requests paid"
    );
}

#[tokio::test]
async fn paid_once_channel_payments_lost_answers_are_sent_again_and_served_once() {
    let s = services::start().await;
    let before = metered_tokens(&s).await;
    let payer = s.env.world.payer(3).unwrap();
    // Each route's first paid answer is lost: the upto payment's, then the session's deposit.
    for (path, units) in [("/metered?units=3", true), ("/session", false)] {
        let (url, paid) = dropping_proxy(s.demo.url(), 1).await;
        let pay = paying_at(&s, format!("{url}{path}"), true);
        if units {
            let r = pay.upto().await.unwrap();
            assert_eq!(r.body.json()["units"], 3, "{}", r.body);
        } else {
            let r = pay.session(3, 5).await.unwrap();
            assert_eq!(r.requests.len(), 3);
        }
        assert!(paid.load(Ordering::SeqCst) >= 2, "{path}: sent again");
    }
    // A session voucher's answer lost: the same voucher again gets its answer.
    let (url, paid) = dropping_proxy(s.demo.url(), 0).await;
    let pay = paying_at(&s, format!("{url}/session"), true);
    let (pr, offer) = {
        let res = s
            .http
            .get(format!("{url}/session"))
            .header(x402::X_PAYER_AGENT, payer.asset().to_string())
            .send()
            .await
            .unwrap();
        let pr: x402::PaymentRequired = x402::decode_header(
            x402::PAYMENT_REQUIRED,
            res.headers()[x402::PAYMENT_REQUIRED].to_str().unwrap(),
        )
        .unwrap();
        let offer = pay.offer_of(&pr, pay.session_scheme()).unwrap();
        (pr, offer)
    };
    let (mut open, _) = pay.open_session(&pr, &offer, 5).await.unwrap();
    let lost = open.session.voucher_payload(1_000).unwrap();
    let header = x402::encode_header(&json!({
        "x402Version": 2,
        "resource": pr.resource,
        "accepted": offer,
        "payload": lost,
        "extensions": payment_identifier::attach(pr.extensions.as_ref(), None, &payment_identifier::new_id()),
    }))
    .unwrap();
    let first = get_paid(&s, &format!("{url}/session"), &header).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let resent = get_paid(&s, &format!("{url}/session"), &header).await;
    assert_eq!(
        (resent.status, &resent.body),
        (200, &first.body),
        "the stored answer"
    );
    assert_eq!(paid.load(Ordering::SeqCst), 3);
    pay.close(&open).await.unwrap();
    // upto charged 3 units; the sessions paid 3 requests, then 2 (deposit and voucher).
    assert_eq!(metered_tokens(&s).await, before - 3 * 100_000 - 5 * 1_000);
}

/// A loopback control for the Node test: `POST /hide` hides signature statuses from the
/// facilitator behind `proxy`, `POST /show` shows them again.
async fn status_control(proxy: Arc<crate::faults::Proxy>) -> String {
    use axum::extract::State;
    use axum::routing::post;
    type P = State<Arc<crate::faults::Proxy>>;
    let app = axum::Router::new()
        .route(
            "/hide",
            post(|State(p): P| async move { p.set(Mode::HideStatuses) }),
        )
        .route(
            "/show",
            post(|State(p): P| async move { p.set(Mode::Forward) }),
        )
        .with_state(proxy);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// The official x402 packages (`packages/sdk/test/paid-once.test.mjs`): `@x402/extensions`
/// 2.27's payment-identifier on an `@x402/fetch` client, each scheme's first answer lost and
/// its resend served without paying again; two identical requests at once settled once; a
/// stock `@x402/core` resource server (`@x402/express`, for exact and for x402's stock upto
/// server scheme) in front of a facilitator confirming for 300 ms, whose signature statuses
/// the Node test hides and shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paid_once_the_official_x402_packages_are_served_once() {
    let dir = crate::node::build_sdk();
    let s = services::start().await;
    let (proxy, late_facilitator, _late_demo) = late(&s).await;
    let w = &s.env.world;
    let keys: serde_json::Map<String, Value> = w
        .keys()
        .into_iter()
        .map(|(label, k)| (label, json!(k.to_bytes().to_vec())))
        .collect();
    let fixture = json!({
        "rpcUrl": s.env.localnet.rpc_url(),
        "demoUrl": s.demo.url(),
        "lateFacilitatorUrl": late_facilitator.url(),
        "statusControlUrl": status_control(proxy).await,
        "network": s.facilitator.facilitator.caip2().await.unwrap(),
        "demoPayerHeader": trust_gate_demo::X_DEMO_PAYER_AGENT,
        "world": w.summary(),
        "meteredMint": w.metered_mint().to_string(),
        "payTo": w.service.owner.pubkey().to_string(),
        "keys": keys,
    });
    let report = tokio::task::spawn_blocking(move || {
        crate::node::node_test(&dir, "test/paid-once.test.mjs", &fixture)
    })
    .await
    .expect("the node run finishes");
    // Every case ran: the lost answers of exact, upto and a session, the concurrent pair, and
    // the stock server's two outcomes for exact and for upto.
    assert!(report.contains("# pass 8"), "{report}");
}
