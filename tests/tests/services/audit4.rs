//! The facilitator findings of audit 4, each attack executed over real HTTP against the
//! localnet: G-2 (the fee payer paid any unit limit at the highest price), G-4 (a stranger
//! held a victim payer's lock; no bound on waiting settlements, no rate limits), G-5 (the
//! RPC URL, API key and all, shown by /healthz and echoed by errors), I-2 (a payee whose
//! Token-2022 account requires memos cannot be paid, found only by a failed transaction).

use crate::concurrency::fee_payer_balance;
use crate::services::{self, header, Services};
use crate::settle::{self as settling, ledger, payer, prepared, request, signed, sized_limit};
use anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent;
use anchor_spl::token_2022::spl_token_2022;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures::future::join_all;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use trust_gate_client::settle::{self, ComputeBudget, TokenProgram};
use trust_gate_client::AtomicityEnforced;
use trust_gate_demo::{challenge, DemoConfig};
use trust_gate_facilitator::config::{Rate, DEFAULT_MAX_COMPUTE_UNIT_PRICE};
use trust_gate_migrations::demo;
use trust_gate_migrations::payers::{extra_payers, ExtraPayer};
use trust_gate_pay::exact::{self as pay, Prepared};
use trust_gate_x402::{self as x402, PaymentRequired};

/// JSON-RPC calls of `method` the localnet has served so far.
fn calls(s: &Services, method: &str) -> u64 {
    s.env
        .localnet
        .chain
        .rpc_calls()
        .get(method)
        .copied()
        .unwrap_or(0)
}

/// The JSON-RPC calls the localnet served while `work` ran, by method.
async fn calls_during<T>(
    s: &Services,
    work: impl std::future::Future<Output = T>,
) -> (T, std::collections::BTreeMap<String, u64>) {
    let before = s.env.localnet.chain.rpc_calls();
    let out = work.await;
    let mut delta = s.env.localnet.chain.rpc_calls();
    for (method, n) in &before {
        if let Some(d) = delta.get_mut(method) {
            *d -= n;
        }
    }
    delta.retain(|_, n| *n > 0);
    (out, delta)
}

/// POSTs `body` to `path` of the facilitator at `url`: status, `Retry-After`, JSON body.
async fn post_at(s: &Services, url: &str, path: &str, body: &Value) -> (u16, String, Value) {
    let r = s
        .http
        .post(format!("{url}{path}"))
        .json(body)
        .send()
        .await
        .unwrap();
    let retry = header(&r, "Retry-After");
    (r.status().as_u16(), retry, r.json().await.unwrap())
}

async fn settle_req(s: &Services, body: &Value) -> (u16, String, Value) {
    post_at(s, &s.facilitator.url(), "/settle", body).await
}

/// The settlement of `p` with `budget` before it, signed by the tier-3 payer, as a /settle
/// body.
async fn with_budget(s: &Services, p: &Prepared, budget: ComputeBudget) -> Value {
    let mut t = p.settlement.clone();
    t.compute_budget = budget;
    let ixs = settle::compose(&p.builder, &t, AtomicityEnforced::TRUE).unwrap();
    request(p, &signed(s, p, &ixs).await)
}

/// A fresh challenge of the demo for the tier-3 payer.
async fn challenge_for_tier_3(s: &Services) -> PaymentRequired {
    let r = s.http.get(s.d("/protected")).send().await.unwrap();
    assert_eq!(r.status(), 402);
    x402::decode_header(x402::PAYMENT_REQUIRED, &header(&r, "PAYMENT-REQUIRED")).unwrap()
}

/// The tier-3 payer's challenge paid by `signer` instead of its owner: a well-formed
/// settlement (every account the SDK composes for that signer, its signature valid) that only
/// the chain's signer check would refuse.
async fn signed_by(s: &Services, signer: &Keypair) -> Value {
    let required = challenge_for_tier_3(s).await;
    let p = pay::prepare(&s.env.rpc, &required, &signer.pubkey(), Default::default())
        .await
        .unwrap();
    let tx = p
        .transaction(&s.env.rpc, &p.instructions().unwrap(), signer)
        .await
        .unwrap();
    request(&p, &tx)
}

/// The tier-3 payer's own payment of a fresh challenge.
async fn own_payment(s: &Services) -> Value {
    let p = prepared(s).await;
    request(&p, &signed(s, &p, &p.instructions().unwrap()).await)
}

fn demo_config(s: &Services) -> DemoConfig {
    DemoConfig::demo_world(&s.facilitator.url(), &s.demo.url())
}

async fn caip2(s: &Services) -> String {
    s.facilitator.facilitator.caip2().await.unwrap()
}

/// A /settle body: a fresh challenge of `cfg` for `payer`, paid by its owner.
async fn payment_of(s: &Services, cfg: &DemoConfig, payer: &ExtraPayer) -> Value {
    let fee_payer = s.env.world.facilitator.pubkey();
    let now = trust_gate_client::simulate::now_unix();
    let required = challenge::issue(cfg, &caip2(s).await, &fee_payer, &payer.asset, now);
    let p = pay::prepare(
        &s.env.rpc,
        &required,
        &payer.owner.pubkey(),
        Default::default(),
    )
    .await
    .unwrap();
    let tx = p
        .transaction(&s.env.rpc, &p.instructions().unwrap(), &payer.owner)
        .await
        .unwrap();
    request(&p, &tx)
}

/// New tier-3 payers with the demo payer policy and 10.00 each.
async fn new_payers(s: &Services, n: usize) -> Vec<ExtraPayer> {
    let w = &s.env.world;
    extra_payers(
        &crate::fixture::seed_keys(&s.env.localnet),
        w,
        n,
        w.payer_policy(),
        10_000_000,
    )
    .await
    .unwrap()
}

fn reason(b: &Value) -> &str {
    b["errorReason"]
        .as_str()
        .or(b["invalidReason"].as_str())
        .or(b["error"].as_str())
        .unwrap_or_default()
}

// G-2: the priority fee the fee payer pays is capped.

#[tokio::test]
async fn audit4_g2_the_runtime_limit_at_the_highest_price_is_refused_and_costs_nothing() {
    let s = services::start().await;
    let p = prepared(&s).await;
    // 1 400 000 units at 5 lamports each: 0.007 SOL of priority fee, paid by the fee payer
    // whether the settlement succeeds or not.
    let body = with_budget(
        &s,
        &p,
        ComputeBudget {
            unit_limit: Some(1_400_000),
            unit_price_micro_lamports: Some(DEFAULT_MAX_COMPUTE_UNIT_PRICE),
        },
    )
    .await;
    let (lamports, counted, sent) = (
        fee_payer_balance(&s).await,
        ledger(&s).await,
        calls(&s, "sendTransaction"),
    );
    let (status, _, b) = settle_req(&s, &body).await;
    assert_eq!(
        (status, reason(&b)),
        (400, "compute_unit_limit_too_high"),
        "{b}"
    );
    assert!(
        b["errorMessage"].as_str().unwrap().contains("1400000"),
        "{b}"
    );
    // /verify, which checks the transaction too, refuses it the same way, for free.
    let (status, _, v) = post_at(&s, &s.facilitator.url(), "/verify", &body).await;
    assert_eq!((status, reason(&v)), (400, "compute_unit_limit_too_high"));
    assert_eq!(calls(&s, "sendTransaction"), sent, "nothing was sent");
    assert_eq!(fee_payer_balance(&s).await, lamports, "no fee was paid");
    assert_eq!(ledger(&s).await, counted);
}

#[tokio::test]
async fn audit4_g2_a_priced_limit_is_held_to_the_units_the_settlement_uses() {
    let s = services::start().await;
    // Warm: the mint, the collection and the payer agent read once.
    let p = prepared(&s).await;
    let (status, _, b) = settle_req(&s, &with_budget(&s, &p, ComputeBudget::default()).await).await;
    assert_eq!(status, 200, "{b}");
    // A large limit without a price costs the fee payer nothing: it settles, with no
    // simulation of its own (the send's preflight, then the status: two RPC calls).
    let p = prepared(&s).await;
    let used = settling::units_used(&s, &p).await;
    let body = with_budget(
        &s,
        &p,
        ComputeBudget {
            unit_limit: Some(300_000),
            unit_price_micro_lamports: None,
        },
    )
    .await;
    let ((status, _, b), unpriced) = calls_during(&s, settle_req(&s, &body)).await;
    assert_eq!(status, 200, "{b}");
    assert_eq!(unpriced.get("simulateTransaction"), None, "{unpriced:?}");
    assert_eq!(unpriced.get("sendTransaction"), Some(&1), "{unpriced:?}");
    // The payer's signer was judged from the cache: no read.
    assert_eq!(unpriced.get("getMultipleAccounts"), None, "{unpriced:?}");

    // The same limit with a price, 30 lamports of fee (within the fee cap), is refused:
    // the settlement uses `used` units, and the facilitator co-signs at most used × 1.25 +
    // 10 000 of them. Nothing was sent, no fee was paid.
    let p = prepared(&s).await;
    let priced = |limit| ComputeBudget {
        unit_limit: Some(limit),
        unit_price_micro_lamports: Some(100),
    };
    let body = with_budget(&s, &p, priced(300_000)).await;
    let (lamports, sent, simulated) = (
        fee_payer_balance(&s).await,
        calls(&s, "sendTransaction"),
        calls(&s, "simulateTransaction"),
    );
    let (status, _, b) = settle_req(&s, &body).await;
    assert_eq!(
        (status, reason(&b)),
        (400, "compute_unit_limit_too_high"),
        "{b}"
    );
    let message = b["errorMessage"].as_str().unwrap();
    assert!(message.contains("its simulation used"), "{b}");
    assert_eq!(calls(&s, "simulateTransaction"), simulated + 1);
    assert_eq!(calls(&s, "sendTransaction"), sent, "nothing was sent");
    assert_eq!(fee_payer_balance(&s).await, lamports, "no fee was paid");

    // The same payment with the limit a simulation-sized client asks for settles: one
    // simulation, one send.
    let limit = sized_limit(&s, &p).await;
    assert!(u64::from(limit) <= used * 5 / 4 + 10_000, "{limit} {used}");
    let body = with_budget(&s, &p, priced(limit)).await;
    let ((status, _, b), with_price) = calls_during(&s, settle_req(&s, &body)).await;
    assert_eq!(status, 200, "{b}");
    assert_eq!(
        with_price.get("simulateTransaction"),
        Some(&1),
        "{with_price:?}"
    );
    assert_eq!(
        with_price.get("sendTransaction"),
        Some(&1),
        "{with_price:?}"
    );
    assert_eq!(
        with_price.get("getMultipleAccounts"),
        None,
        "{with_price:?}"
    );
    println!(
        "RPC calls of one /settle (warm): without a price {unpriced:?}, with a price {with_price:?}; the settlement used {used} units, its limit {limit}"
    );
    let sig = Signature::from_str(b["transaction"].as_str().unwrap()).unwrap();
    let (meta, _) = settling::landed(&s, &sig).await;
    assert_eq!(
        meta.fee,
        10_000 + trust_gate_facilitator::budget::priority_fee_lamports(limit, 100)
    );
}

#[tokio::test]
async fn audit4_g2_the_fee_cap_refuses_limit_times_price_when_each_is_allowed() {
    // A cap of 0.00002 SOL a transaction, so that a limit the settlement needs at the highest
    // unit price is above it on the native programs as on SBF.
    const CAP: u64 = 20_000;
    let s = services::start_with(|c| c.compute.max_priority_fee_lamports = CAP).await;
    let p = prepared(&s).await;
    let limit = sized_limit(&s, &p).await;
    // The limit is within the margin and the price is the highest allowed; their product is
    // not.
    let top = ComputeBudget {
        unit_limit: Some(limit),
        unit_price_micro_lamports: Some(DEFAULT_MAX_COMPUTE_UNIT_PRICE),
    };
    let fee = trust_gate_facilitator::budget::priority_fee_lamports(
        limit,
        DEFAULT_MAX_COMPUTE_UNIT_PRICE,
    );
    assert!(fee > CAP, "{fee}");
    let (lamports, sent) = (fee_payer_balance(&s).await, calls(&s, "sendTransaction"));
    let (status, _, b) = settle_req(&s, &with_budget(&s, &p, top).await).await;
    assert_eq!((status, reason(&b)), (400, "priority_fee_too_high"), "{b}");
    assert!(
        b["errorMessage"]
            .as_str()
            .unwrap()
            .contains(&fee.to_string()),
        "{b}"
    );
    assert_eq!(calls(&s, "sendTransaction"), sent, "nothing was sent");
    assert_eq!(fee_payer_balance(&s).await, lamports, "no fee was paid");

    // The same payment at the price that keeps the fee within the cap settles and pays it.
    let price = CAP * 1_000_000 / u64::from(limit);
    let within = ComputeBudget {
        unit_limit: Some(limit),
        unit_price_micro_lamports: Some(price),
    };
    let (status, _, b) = settle_req(&s, &with_budget(&s, &p, within).await).await;
    assert_eq!(status, 200, "{b}");
    let sig = Signature::from_str(b["transaction"].as_str().unwrap()).unwrap();
    let (meta, _) = settling::landed(&s, &sig).await;
    let priority = meta.fee - 10_000;
    assert!(priority <= CAP && priority > CAP / 2, "{priority}");
}

#[tokio::test]
async fn audit4_g2_a_dispute_carries_no_compute_budget() {
    let s = services::start().await;
    let p = prepared(&s).await;
    let (status, _, b) = settle_req(&s, &with_budget(&s, &p, ComputeBudget::default()).await).await;
    assert_eq!(status, 200, "{b}");
    let payment = p.settlement.feedback.payment_id_hash;
    // The payer's own dispute, after the runtime's largest limit at the highest price.
    let fac = s.env.world.facilitator.pubkey();
    let mut ixs = ComputeBudget {
        unit_limit: Some(1_400_000),
        unit_price_micro_lamports: Some(DEFAULT_MAX_COMPUTE_UNIT_PRICE),
    }
    .instructions();
    ixs.push(s.env.b.dispute_payment(
        &fac,
        &fac,
        &payer(&s).pubkey(),
        &s.env.collection,
        payment,
        &s.env.world.service.asset(),
        [7; 32],
        "ipfs://not-delivered".into(),
    ));
    let blockhash = s.env.rpc.get_latest_blockhash().await.unwrap();
    let tx = settle::transaction(&fac, &ixs, &[], blockhash, &[payer(&s)]).unwrap();
    let body = json!({"transaction": x402::encode_transaction(&tx).unwrap()});
    let lamports = fee_payer_balance(&s).await;
    let (status, _, b) = post_at(&s, &s.facilitator.url(), "/dispute", &body).await;
    assert_eq!((status, reason(&b)), (400, "input_invalid"), "{b}");
    let message = b["message"].as_str().unwrap();
    assert!(
        message.starts_with("transaction: has a ComputeBudget instruction"),
        "{b}"
    );
    assert_eq!(fee_payer_balance(&s).await, lamports, "no fee was paid");
    let receipt = s.receipt(&trust_gate_client::decode::hex(&payment)).await;
    assert_eq!(receipt["disputed"], false);
}

// G-4: who may hold a payer's turn, and how many wait for it.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit4_g4_a_stranger_signed_settlement_is_refused_before_the_payer_lock() {
    let s = services::start().await;
    let victim = s.env.world.payer(3).unwrap();
    let owner = victim.owner.pubkey();
    let stranger = Keypair::new();
    let body = signed_by(&s, &stranger).await;

    // While the victim's turn is held, the stranger's settlement is answered at once: it
    // never waits for (let alone takes) the victim's lock.
    let store = &s.facilitator.facilitator.turns;
    let turn = store.lock(victim.asset()).await.unwrap();
    let started = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(10), settle_req(&s, &body))
        .await
        .expect("a stranger's settlement does not wait for the victim's lock");
    let (status, _, b) = answer;
    assert_eq!(
        (status, reason(&b)),
        (403, "payer_signer_not_authorized"),
        "{b}"
    );
    let message = b["errorMessage"].as_str().unwrap();
    assert!(
        message.contains(&stranger.pubkey().to_string()) && message.contains(&owner.to_string()),
        "{b}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // /verify names it too, from its decision's own simulation.
    let (status, _, v) = post_at(&s, &s.facilitator.url(), "/verify", &body).await;
    assert_eq!((status, reason(&v)), (403, "payer_signer_not_authorized"));
    turn.release().await;

    // A flood of well-formed stranger-signed settlements for the victim while the victim
    // pays: the victim settles, every stranger is refused by name, and none of the
    // strangers' transactions was sent.
    let mut floods = Vec::new();
    for _ in 0..8 {
        floods.push(signed_by(&s, &Keypair::new()).await);
    }
    let alone = {
        let own = own_payment(&s).await;
        let t = Instant::now();
        assert_eq!(settle_req(&s, &own).await.0, 200);
        t.elapsed()
    };
    let own = own_payment(&s).await;
    let sent = calls(&s, "sendTransaction");
    let flood = join_all(floods.iter().cycle().take(48).map(|b| settle_req(&s, b)));
    let mine = async {
        let t = Instant::now();
        let answer = settle_req(&s, &own).await;
        (answer, t.elapsed())
    };
    let (refusals, ((status, _, b), took)) = tokio::join!(flood, mine);
    assert_eq!(status, 200, "{b}");
    for (status, _, r) in &refusals {
        assert_eq!(
            (*status, reason(r)),
            (403, "payer_signer_not_authorized"),
            "{r}"
        );
    }
    assert_eq!(
        calls(&s, "sendTransaction"),
        sent + 1,
        "only the victim's own settlement was sent"
    );
    println!(
        "the victim settled in {:.0} ms beside {} stranger-signed settlements of its payer ({:.0} ms alone)",
        took.as_secs_f64() * 1e3,
        refusals.len(),
        alone.as_secs_f64() * 1e3
    );
    assert!(took < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit4_g4_past_the_waiting_bound_a_payers_settlement_is_answered_429_payer_busy() {
    let s = services::start_with(|c| c.limits.max_waiting_per_payer = 1).await;
    let victim = s.env.world.payer(3).unwrap().asset();
    let (first, second) = (own_payment(&s).await, own_payment(&s).await);
    let store = &s.facilitator.facilitator.turns;
    let turn = store.lock(victim).await.unwrap();
    // One settlement waits for the turn...
    let waiting = settle_req(&s, &first);
    let check = async {
        let deadline = Instant::now() + Duration::from_secs(10);
        while store.queued(&victim) < 2 {
            assert!(
                Instant::now() < deadline,
                "the first settlement never queued"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // ...the next is refused at once, and says when to come back.
        let answer = tokio::time::timeout(Duration::from_secs(5), settle_req(&s, &second))
            .await
            .expect("past the bound a settlement does not wait");
        turn.release().await;
        answer
    };
    let ((status, _, b), (busy, retry, refused)) = tokio::join!(waiting, check);
    assert_eq!((busy, reason(&refused)), (429, "payer_busy"), "{refused}");
    assert_eq!(retry, "1");
    assert!(
        refused["errorMessage"]
            .as_str()
            .unwrap()
            .contains("nothing was sent"),
        "{refused}"
    );
    assert_eq!(
        status, 200,
        "the waiting settlement settles once the turn is free: {b}"
    );
    // Refused before anything was asked of the chain: the same payment settles now.
    let (status, _, b) = settle_req(&s, &second).await;
    assert_eq!(status, 200, "{b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit4_g4_the_per_payer_rate_limit_answers_429_and_one_address_carries_many_payers() {
    // Two settlements per payer, then one every 1 000 s; the per-address limit as shipped.
    let s = services::start_with(|c| {
        c.limits.per_payer = Some(Rate {
            per_second: 0.001,
            burst: 2,
        })
    })
    .await;
    // Strangers' settlements for the payer do not spend its allowance.
    for _ in 0..3 {
        let (status, _, b) = settle_req(&s, &signed_by(&s, &Keypair::new()).await).await;
        assert_eq!((status, reason(&b)), (403, "payer_signer_not_authorized"));
    }
    for _ in 0..2 {
        let (status, _, b) = settle_req(&s, &own_payment(&s).await).await;
        assert_eq!(status, 200, "{b}");
    }
    let sent = calls(&s, "sendTransaction");
    let (status, retry, b) = settle_req(&s, &own_payment(&s).await).await;
    assert_eq!((status, reason(&b)), (429, "payer_rate_limited"), "{b}");
    let retry: u64 = retry.parse().unwrap();
    assert!((900..=1_000).contains(&retry), "Retry-After {retry}");
    assert_eq!(calls(&s, "sendTransaction"), sent, "nothing was sent");

    // Other payers, through the same address (this test's, as a resource server's), are
    // not held back by it: each settles.
    let cfg = demo_config(&s);
    let payers = new_payers(&s, 4).await;
    for p in &payers {
        let (status, _, b) = settle_req(&s, &payment_of(&s, &cfg, p).await).await;
        assert_eq!(status, 200, "{b}");
    }
    // And the default per-address limit lets a busy resource server through: 600 decisions
    // for five payers from one address, 32 at a time, none refused.
    let w = &s.env.world;
    let assets: Vec<Pubkey> = payers
        .iter()
        .map(|p| p.asset)
        .chain([w.payer(3).unwrap().asset()])
        .collect();
    let bodies: Vec<Value> = (0..600)
        .map(|i| {
            json!({
                "payerAgentAsset": assets[i % assets.len()].to_string(),
                "payeeAgentAsset": w.service.asset().to_string(),
                "amount": demo::PRICE.to_string(),
                "mint": w.mint().to_string(),
                "policyId": demo::POLICY_ID,
            })
        })
        .collect();
    let url = s.facilitator.url();
    let started = Instant::now();
    let mut answered = Vec::new();
    for chunk in bodies.chunks(32) {
        answered.extend(join_all(chunk.iter().map(|b| post_at(&s, &url, "/verify", b))).await);
    }
    let refused: Vec<_> = answered.iter().filter(|(st, ..)| *st != 200).collect();
    assert!(refused.is_empty(), "{:?}", refused.first());
    println!(
        "one address: {} decisions for {} payers in {:.1} s, none rate limited",
        answered.len(),
        assets.len(),
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test]
async fn audit4_g4_the_per_address_rate_limit_answers_429_with_retry_after() {
    let s = services::start().await;
    // A facilitator of its own, which nobody else calls: three requests from an address,
    // then one every 1 000 s.
    let mut c = services::config(&s.env, &s.env.localnet.rpc_url());
    c.limits.per_caller = Some(Rate {
        per_second: 0.001,
        burst: 3,
    });
    let f = trust_gate_facilitator::start(c, services::loopback())
        .await
        .unwrap();
    let url = f.url();
    let get = |path: &'static str| {
        let (http, url) = (s.http.clone(), url.clone());
        async move {
            let r = http.get(format!("{url}{path}")).send().await.unwrap();
            let retry = header(&r, "Retry-After");
            (r.status().as_u16(), retry, r.json::<Value>().await.unwrap())
        }
    };
    for _ in 0..3 {
        assert_eq!(get("/supported").await.0, 200);
    }
    let (status, retry, b) = get("/supported").await;
    assert_eq!((status, reason(&b)), (429, "caller_rate_limited"), "{b}");
    assert!(retry.parse::<u64>().unwrap() >= 900, "{retry}");
    assert!(b["message"].as_str().unwrap().contains("127.0.0.1"), "{b}");
    // /settle and /verify answer in their own shapes.
    let (status, retry, b) = post_at(&s, &url, "/settle", &json!({})).await;
    assert_eq!((status, b["success"].clone()), (429, json!(false)), "{b}");
    assert_eq!(b["errorReason"], "caller_rate_limited");
    assert!(!retry.is_empty());
    let (status, _, b) = post_at(&s, &url, "/verify", &json!({})).await;
    assert_eq!((status, b["isValid"].clone()), (429, json!(false)), "{b}");
    assert_eq!(b["invalidReason"], "caller_rate_limited");
    // The health check answers a load balancer whatever the caller sent.
    let (status, _, h) = get("/healthz").await;
    assert_eq!((status, h["ok"].clone()), (200, json!(true)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit4_g4_a_former_owner_is_refused_by_the_chain_once_then_before_the_lock() {
    let s = services::start().await;
    let cfg = demo_config(&s);
    let seller = new_payers(&s, 1).await.remove(0);
    // The facilitator knows the agent: the seller settles.
    let (status, _, b) = settle_req(&s, &payment_of(&s, &cfg, &seller).await).await;
    assert_eq!(status, 200, "{b}");

    // Sold on MPL Core directly, without the registry's sync: the facilitator's cached
    // agent still names the seller.
    let buyer = Keypair::new();
    let sale = trust_gate_localnet::standin::core::transfer_v1(
        &seller.asset,
        &s.env.collection,
        &seller.owner.pubkey(),
        &buyer.pubkey(),
    );
    s.env.send(&[sale], &[&seller.owner]).await.unwrap();

    // The stale entry lets the seller's settlement take the payer's turn once: the chain
    // refuses it in the send's preflight, so no fee was paid...
    let lamports = fee_payer_balance(&s).await;
    let (status, _, b) = settle_req(&s, &payment_of(&s, &cfg, &seller).await).await;
    assert_eq!(status, 402, "{b}");
    assert!(
        b["errorMessage"]
            .as_str()
            .unwrap()
            .contains("PayerSignerMismatch"),
        "{b}"
    );
    assert_eq!(fee_payer_balance(&s).await, lamports);
    // ...and that refusal evicted it: the seller's next settlement is refused before the
    // payer's lock, even while the turn is held.
    let body = payment_of(&s, &cfg, &seller).await;
    let turn = s
        .facilitator
        .facilitator
        .turns
        .lock(seller.asset)
        .await
        .unwrap();
    let (status, _, b) = tokio::time::timeout(Duration::from_secs(10), settle_req(&s, &body))
        .await
        .expect("refused before the lock");
    assert_eq!(
        (status, reason(&b)),
        (403, "payer_signer_not_authorized"),
        "{b}"
    );
    assert!(
        b["errorMessage"]
            .as_str()
            .unwrap()
            .contains(&buyer.pubkey().to_string()),
        "the refusal names the live owner: {b}"
    );
    turn.release().await;
}

// G-5: the RPC is shown by its origin only.

/// A JSON-RPC relay on loopback that accepts any path (as a provider's URL with its key in
/// the path and query), remembers the last path and query it was called at, and can stop
/// answering (503).
struct Relay {
    upstream: String,
    down: AtomicBool,
    seen: Mutex<String>,
    http: reqwest::Client,
}

async fn relay(State(r): State<Arc<Relay>>, uri: Uri, body: Bytes) -> Response {
    *r.seen.lock().unwrap() = uri.to_string();
    if r.down.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    match r
        .http
        .post(&r.upstream)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
    {
        Ok(res) => {
            let status = StatusCode::from_u16(res.status().as_u16()).unwrap();
            (status, res.bytes().await.unwrap_or_default()).into_response()
        }
        Err(_) => StatusCode::BAD_GATEWAY.into_response(),
    }
}

async fn start_relay(upstream: String) -> (Arc<Relay>, String) {
    let r = Arc::new(Relay {
        upstream,
        down: AtomicBool::new(false),
        seen: Mutex::new(String::new()),
        http: reqwest::Client::new(),
    });
    let app = axum::Router::new()
        .fallback(axum::routing::post(relay))
        .with_state(r.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (r, format!("http://{addr}"))
}

/// No trace of the secret parts of the RPC URL in `text`.
fn no_secret(text: &str) {
    for secret in ["secret-key", "api-key", "abc"] {
        assert!(!text.contains(secret), "{secret:?} shown in {text}");
    }
}

#[tokio::test]
async fn audit4_g5_the_rpc_is_shown_as_scheme_host_and_port_only() {
    let s = services::start().await;
    let (relay, origin) = start_relay(s.env.localnet.rpc_url()).await;
    let url = format!("{origin}/secret-key?api-key=abc");
    let f = trust_gate_facilitator::start(services::config(&s.env, &url), services::loopback())
        .await
        .unwrap();
    // The facilitator calls the whole URL...
    assert_eq!(*relay.seen.lock().unwrap(), "/secret-key?api-key=abc");
    // ...and shows anyone its origin only.
    let health = s.get_json(format!("{}/healthz", f.url())).await;
    assert_eq!(health["rpcUrl"], origin.as_str(), "{health}");
    let text = health.to_string();
    assert!(
        !text.contains("secret-key") && !text.contains("api-key"),
        "{text}"
    );

    // The RPC down: the errors that quote the URL the client called show its origin.
    relay.down.store(true, Ordering::SeqCst);
    let context = json!({
        "payerAgentAsset": s.env.world.payer(3).unwrap().asset().to_string(),
        "payeeAgentAsset": s.env.world.service.asset().to_string(),
        "amount": demo::PRICE.to_string(),
        "mint": s.env.world.mint().to_string(),
        "policyId": demo::POLICY_ID,
    });
    let (status, _, b) = post_at(&s, &f.url(), "/verify", &context).await;
    assert_eq!((status, reason(&b)), (502, "rpc_failure"), "{b}");
    let message = b["message"].as_str().unwrap();
    assert!(message.contains("503") && message.contains(&origin), "{b}");
    no_secret(message);
    let (status, _, b) = post_at(&s, &f.url(), "/settle", &own_payment(&s).await).await;
    assert_eq!((status, reason(&b)), (502, "rpc_failure"), "{b}");
    let message = b["errorMessage"].as_str().unwrap();
    assert!(message.contains(&origin), "{b}");
    no_secret(message);

    // A facilitator that cannot reach its RPC does not start, and says so by the origin.
    let err = trust_gate_facilitator::start(services::config(&s.env, &url), services::loopback())
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.starts_with("RPC_URL") && err.contains(&origin), "{err}");
    no_secret(&err);
}

// I-2: a payee whose Token-2022 account requires memos.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit4_i2_a_payee_that_requires_memos_is_refused_at_verify_and_settle() {
    use spl_token_2022::extension::memo_transfer::instruction as memo;
    use spl_token_2022::extension::ExtensionType;
    let s = services::start().await;
    let (w, b, rpc) = (&s.env.world, &s.env.b, &s.env.rpc);
    let t22 = TokenProgram::Token2022.id();
    let faucet = s.env.localnet.faucet().pubkey();

    // A Token-2022 mint without extensions.
    let (mint, authority) = (Keypair::new(), Keypair::new());
    let rent = rpc
        .get_minimum_balance_for_rent_exemption(82)
        .await
        .unwrap();
    let create = [
        anchor_lang::solana_program::system_instruction::create_account(
            &faucet,
            &mint.pubkey(),
            rent,
            82,
            &t22,
        ),
        spl_token_2022::instruction::initialize_mint2(
            &t22,
            &mint.pubkey(),
            &authority.pubkey(),
            None,
            demo::DECIMALS,
        )
        .unwrap(),
    ];
    s.env.send(&create, &[&mint]).await.unwrap();
    let mint = mint.pubkey();

    // A tier-3 payer with a policy for it and 10.00 in it.
    let payer = new_payers(&s, 1).await.remove(0);
    const POLICY: u32 = 2;
    let params = policy_vault::state::PolicyParams {
        mint,
        ..w.payer_policy()
    };
    let o = payer.owner.pubkey();
    let source = TokenProgram::Token2022.associated_account(&o, &mint);
    let fund = [
        b.init_policy(&o, &[], &payer.asset, POLICY, params, Default::default(), 0),
        create_associated_token_account_idempotent(&faucet, &o, &mint, &t22),
        spl_token_2022::instruction::mint_to(
            &t22,
            &mint,
            &source,
            &authority.pubkey(),
            &[],
            10_000_000,
        )
        .unwrap(),
    ];
    s.env
        .send(&fund, &[&payer.owner, &authority])
        .await
        .unwrap();

    // The payee's (the demo service owner's) associated account of the mint, with memos
    // required on incoming transfers: made by Token-2022's own instructions.
    let payee = &w.service.owner;
    let destination = TokenProgram::Token2022.associated_account(&payee.pubkey(), &mint);
    let require = [
        create_associated_token_account_idempotent(&faucet, &payee.pubkey(), &mint, &t22),
        spl_token_2022::instruction::reallocate(
            &t22,
            &destination,
            &faucet,
            &payee.pubkey(),
            &[],
            &[ExtensionType::MemoTransfer],
        )
        .unwrap(),
        memo::enable_required_transfer_memos(&t22, &destination, &payee.pubkey(), &[]).unwrap(),
    ];
    s.env.send(&require, &[payee]).await.unwrap();

    // The demo's challenge for this mint and policy, paid by the payer's owner.
    let cfg = DemoConfig {
        mint,
        policy_id: POLICY,
        ..demo_config(&s)
    };
    let body = payment_of(&s, &cfg, &payer).await;
    let url = s.facilitator.url();
    let (status, _, v) = post_at(&s, &url, "/verify", &body).await;
    assert_eq!((status, reason(&v)), (422, "payee_requires_memo"), "{v}");
    assert!(
        v["invalidMessage"]
            .as_str()
            .unwrap()
            .contains(&destination.to_string()),
        "{v}"
    );
    // /settle names it too (the send's preflight meets Token-2022's NoMemo), for free.
    let lamports = fee_payer_balance(&s).await;
    let (status, _, r) = settle_req(&s, &body).await;
    assert_eq!((status, reason(&r)), (422, "payee_requires_memo"), "{r}");
    assert_eq!(fee_payer_balance(&s).await, lamports, "no fee was paid");

    // Memos no longer required: the same payment verifies and settles.
    let off =
        memo::disable_required_transfer_memos(&t22, &destination, &payee.pubkey(), &[]).unwrap();
    s.env.send(&[off], &[payee]).await.unwrap();
    // Still one round trip: the payee's token account and the payer agent's accounts come
    // back with the decision's simulation.
    let ((status, _, v), used) = calls_during(&s, post_at(&s, &url, "/verify", &body)).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        used,
        [("simulateTransaction".to_string(), 1)].into(),
        "a warm /verify is one RPC call"
    );
    let (status, _, r) = settle_req(&s, &body).await;
    assert_eq!(status, 200, "{r}");
}
