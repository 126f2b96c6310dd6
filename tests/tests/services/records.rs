//! Rent that comes back, over HTTP (issue 33): the crank closes a settled payment's log once
//! its deadline and dispute window have passed, the rent goes back to the facilitator, and
//! GET /receipt still answers for it (from the record store, in process and in Redis, else
//! from the chain's history); a payment id settled before is refused by name even with
//! another deadline; the crank runs beside settlements of the same payer. GET /payments lists a
//! payer's payments from the same records, before and after their logs close.

use crate::services::{self, Services};
use crate::settle::{prepared, request, settle_body, signed};
use serde_json::Value;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use trust_gate_client::decode::{hex, FeedbackLog, DISPUTE_WINDOW_SECS};
use trust_gate_pay::exact::Prepared;
use trust_gate_test_setup::RedisServer;
use trust_gate_x402::{self as x402, GateExtension};

/// Settles one demo payment through the facilitator at `url`; returns it and its signature.
async fn settle_one(s: &Services, url: &str) -> (Prepared, String) {
    let p = prepared(s).await;
    let tx = signed(s, &p, &p.instructions().unwrap()).await;
    let r = s
        .http
        .post(format!("{url}/settle"))
        .json(&request(&p, &tx))
        .send()
        .await
        .unwrap();
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["success"], true, "{b}");
    (p, b["transaction"].as_str().unwrap().to_string())
}

async fn receipt_at(s: &Services, url: &str, id: &[u8; 32]) -> Value {
    s.get_json(format!("{url}/receipt/{}", hex(id))).await
}

/// `GET /payments?payer=` at `url`: the payer's payments.
async fn payments_at(s: &Services, url: &str, payer: &Pubkey) -> Vec<Value> {
    let v = s.get_json(format!("{url}/payments?payer={payer}")).await;
    v["payments"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .clone()
}

fn log_of(s: &Services, id: &[u8; 32]) -> Pubkey {
    s.env
        .b
        .pda
        .feedback_log(&s.env.world.facilitator.pubkey(), id)
}

async fn exists(s: &Services, key: &Pubkey) -> bool {
    trust_gate_client::chain::account(&s.env.rpc, key)
        .await
        .unwrap()
        .is_some()
}

/// getSignaturesForAddress calls the localnet has served.
fn history_reads(s: &Services) -> u64 {
    s.env
        .localnet
        .chain
        .rpc_calls()
        .get("getSignaturesForAddress")
        .copied()
        .unwrap_or_default()
}

/// Past every deadline and dispute window so far.
async fn past_the_window(s: &Services) {
    s.env
        .localnet
        .warp(DISPUTE_WINDOW_SECS as u64 + 120)
        .await
        .unwrap();
}

/// The receipt fields a closed payment must keep: everything its log held, and the
/// settlement's transaction.
fn kept(r: &Value) -> Value {
    let mut v = r.clone();
    for field in ["closed", "closedBy", "payerVault"] {
        v.as_object_mut().unwrap().remove(field);
    }
    v
}

#[tokio::test]
async fn the_crank_returns_the_rent_and_the_receipt_still_answers_in_process() {
    let s = services::start().await;
    let url = s.facilitator.url();
    let (p, signature) = settle_one(&s, &url).await;
    let id = p.settlement.feedback.payment_id_hash;
    let open = receipt_at(&s, &url, &id).await;
    assert_eq!(
        (&open["exists"], &open["closed"], &open["transaction"]),
        (
            &Value::Bool(true),
            &Value::Bool(false),
            &Value::String(signature.clone())
        ),
        "{open}"
    );
    assert_eq!(open["payer"], p.settlement.payer_asset.to_string());
    assert_eq!(open["deadline"], p.settlement.deadline);
    // Listed under its payer, its log still open.
    let payer = p.settlement.payer_asset;
    let listed = payments_at(&s, &url, &payer).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["paymentIdHash"], hex(&id));
    assert_eq!(listed[0]["transaction"], signature);
    assert_eq!(listed[0]["closed"], false);
    assert_eq!(listed[0]["feedbackLog"], log_of(&s, &id).to_string());
    assert!(payments_at(&s, &url, &Pubkey::new_unique())
        .await
        .is_empty());
    for (query, field) in [
        ("payer=nope".to_string(), "payer"),
        (String::new(), "payer"),
        (format!("limit=0&payer={payer}"), "limit"),
        (format!("payer={payer}&since=1"), "since"),
    ] {
        let r = s
            .http
            .get(format!("{url}/payments?{query}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{query}");
        let b: Value = r.json().await.unwrap();
        assert!(b.to_string().contains(field), "{query}: {b}");
    }

    // Not yet closable: the crank leaves it.
    let f = &s.facilitator.facilitator;
    let round = f.reclaim_once().await.unwrap();
    assert_eq!((round.closed, round.open), (0, 1), "{round:?}");

    past_the_window(&s).await;
    let fee_payer = s.env.world.facilitator.pubkey();
    let log = log_of(&s, &id);
    let rent = s.env.rpc.get_balance(&log).await.unwrap();
    let before = s.env.rpc.get_balance(&fee_payer).await.unwrap();
    let round = f.reclaim_once().await.unwrap();
    assert_eq!(
        (round.closed, round.transactions, round.lamports),
        (1, 1, rent)
    );
    assert!(!exists(&s, &log).await, "the log is closed");
    // The rent back, less the closing transaction's one signature.
    assert_eq!(
        s.env.rpc.get_balance(&fee_payer).await.unwrap(),
        before + rent - 5_000
    );

    // The receipt: what the log held, closed, with the settlement's signature, from the
    // record store (no history read).
    let reads = history_reads(&s);
    let closed = receipt_at(&s, &url, &id).await;
    assert_eq!(history_reads(&s), reads, "answered from the record store");
    assert_eq!(closed["closed"], true, "{closed}");
    assert!(closed["closedBy"].is_string(), "{closed}");
    assert_eq!(kept(&closed), kept(&open));
    // Still listed, closed, with what its log held.
    let listed = payments_at(&s, &url, &payer).await;
    assert_eq!(listed[0]["closed"], true, "{listed:?}");
    assert_eq!(listed[0]["receipt"]["value"], open["value"]);
    assert!(open["value"].is_string(), "{open}");

    // A facilitator of the same key that never saw the payment (a restart: the in-process
    // store is gone) rebuilds it from the chain's history.
    let fresh = trust_gate_facilitator::start(
        services::config(&s.env, &s.env.localnet.rpc_url()),
        services::loopback(),
    )
    .await
    .unwrap();
    let rebuilt = receipt_at(&s, &fresh.url(), &id).await;
    assert!(history_reads(&s) > reads, "read from the history");
    assert_eq!(kept(&rebuilt), kept(&open), "{rebuilt}");
    assert_eq!(
        (&rebuilt["closed"], &rebuilt["closedBy"]),
        (&closed["closed"], &closed["closedBy"])
    );

    // A payment never made is still not found (after looking at the history).
    let never = receipt_at(&s, &url, &[0x5a; 32]).await;
    assert_eq!(never["exists"], false, "{never}");
}

#[tokio::test]
async fn with_redis_another_replica_answers_the_receipt_of_a_closed_payment() {
    let redis = RedisServer::start();
    let s = services::start_with(|c| c.redis_url = Some(redis.url())).await;
    let url = s.facilitator.url();
    let (p, signature) = settle_one(&s, &url).await;
    let id = p.settlement.feedback.payment_id_hash;
    let open = receipt_at(&s, &url, &id).await;
    past_the_window(&s).await;
    let round = s.facilitator.facilitator.reclaim_once().await.unwrap();
    assert_eq!(round.closed, 1, "{round:?}");
    assert!(!exists(&s, &log_of(&s, &id)).await);

    let mut c = services::config(&s.env, &s.env.localnet.rpc_url());
    c.redis_url = Some(redis.url());
    let replica = trust_gate_facilitator::start(c, services::loopback())
        .await
        .unwrap();
    let reads = history_reads(&s);
    let closed = receipt_at(&s, &replica.url(), &id).await;
    assert_eq!(history_reads(&s), reads, "answered from Redis");
    assert_eq!(closed["closed"], true, "{closed}");
    assert_eq!(closed["transaction"], signature);
    assert_eq!(kept(&closed), kept(&open));
    // The other replica lists it under its payer from Redis, closed, with its fields.
    let listed = payments_at(&s, &replica.url(), &p.settlement.payer_asset).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["transaction"], signature);
    assert_eq!(listed[0]["closed"], true);
    assert_eq!(listed[0]["receipt"]["value"], open["value"]);
    assert!(open["value"].is_string(), "{open}");
}

/// A disputed payment: its receipt shows the dispute's feedback (score 0, who, when, the
/// reason's hash) beside the settlement's score, and the same once the crank has closed its
/// log and dispute record, from the record store and from the chain's history.
#[tokio::test]
async fn a_disputed_payments_receipt_keeps_its_dispute_once_closed() {
    let s = services::start().await;
    let url = s.facilitator.url();
    let (p, _) = settle_one(&s, &url).await;
    let id = p.settlement.feedback.payment_id_hash;
    let payer = crate::settle::payer(&s);
    let d = trust_gate_client::settle::Dispute {
        collection: s.env.collection,
        payment_id_hash: id,
        payee_asset: s.env.world.service.asset(),
        reason_hash: [7; 32],
        feedback_uri: "ipfs://not-delivered".into(),
    };
    trust_gate_client::settle::dispute(&s.env.rpc, &s.env.b, &s.env.world.facilitator, payer, &d)
        .await
        .unwrap();
    let open = receipt_at(&s, &url, &id).await;
    assert_eq!(open["disputed"], true, "{open}");
    assert_eq!(open["score"], p.settlement.feedback.score, "{open}");
    assert_eq!(
        (
            &open["dispute"]["score"],
            &open["dispute"]["disputedBy"],
            &open["dispute"]["reasonHash"]
        ),
        (
            &Value::from(0),
            &Value::from(payer.pubkey().to_string()),
            &Value::from(hex(&[7; 32]))
        ),
        "{open}"
    );
    assert!(open["dispute"]["createdAt"].as_i64().unwrap() >= open["createdAt"].as_i64().unwrap());

    past_the_window(&s).await;
    let round = s.facilitator.facilitator.reclaim_once().await.unwrap();
    assert_eq!(round.closed, 1, "{round:?}");
    let closed = receipt_at(&s, &url, &id).await;
    assert_eq!(closed["closed"], true, "{closed}");
    assert_eq!(kept(&closed), kept(&open), "from the record store");
    let fresh = trust_gate_facilitator::start(
        services::config(&s.env, &s.env.localnet.rpc_url()),
        services::loopback(),
    )
    .await
    .unwrap();
    let rebuilt = receipt_at(&s, &fresh.url(), &id).await;
    assert_eq!(rebuilt["closed"], true, "{rebuilt}");
    assert_eq!(kept(&rebuilt), kept(&open), "from the history");
}

#[tokio::test]
async fn a_payment_id_settled_before_is_refused_by_name_after_its_log_closed() {
    let s = services::start().await;
    let url = s.facilitator.url();
    let (p, signature) = settle_one(&s, &url).await;
    let id = p.settlement.feedback.payment_id_hash;
    past_the_window(&s).await;
    assert!(exists(&s, &log_of(&s, &id)).await);
    assert_eq!(
        s.facilitator
            .facilitator
            .reclaim_once()
            .await
            .unwrap()
            .closed,
        1
    );

    // The same memo under a fresh challenge (a later issuedAt: another deadline), signed by
    // the service: the facilitator's record refuses it before anything is sent.
    let mut r = p.requirements.clone();
    let mut g = GateExtension::from_requirements(&r).unwrap();
    g.issued_at = trust_gate_client::simulate::now_unix() + 1;
    x402::sign_challenge(&s.env.world.service_key, &r, &p.resource.url, &mut g);
    r.extra
        .insert("gate".into(), serde_json::to_value(&g).unwrap());
    let mut again = Prepared {
        requirements: r.clone(),
        ..p.clone()
    };
    again.settlement.deadline = x402::deadline(&r, &g);
    assert_ne!(again.settlement.deadline, p.settlement.deadline);
    let tx = signed(&s, &again, &again.instructions().unwrap()).await;
    let (status, b) = settle_body(&s, &request(&again, &tx)).await;
    assert_eq!(
        (status, b["errorReason"].as_str()),
        (409, Some("payment_already_settled")),
        "{b}"
    );
    let message = b["errorMessage"].as_str().unwrap();
    assert!(message.contains(&signature), "{message}");

    // A deadline other than the challenge's is refused before anything else.
    let fresh = prepared(&s).await;
    let mut other = fresh.clone();
    other.settlement.deadline += 1;
    let tx = signed(&s, &other, &other.instructions().unwrap()).await;
    let (status, b) = settle_body(&s, &request(&other, &tx)).await;
    assert_eq!(
        (status, b["errorReason"].as_str()),
        (400, Some("deadline_mismatch")),
        "{b}"
    );
}

/// Makes payment `id`'s log as if it had been settled `secs` ago (its deadline as far back),
/// so that it is closable while the cluster's clock stays with the services' own.
async fn age(s: &Services, id: &[u8; 32], secs: i64) {
    use anchor_lang::AccountSerialize;
    let key = log_of(s, id);
    let mut acc = trust_gate_client::chain::account(&s.env.rpc, &key)
        .await
        .unwrap()
        .unwrap();
    let mut log: FeedbackLog =
        trust_gate_client::decode::account("FeedbackLog", &acc.data).unwrap();
    log.created_at -= secs;
    log.deadline -= secs;
    acc.data.clear();
    log.try_serialize(&mut acc.data).unwrap();
    trust_gate_client::chain::localnet_set_account(&s.env.rpc, &key, &acc)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_crank_runs_beside_settlements_of_the_same_payer() {
    let s = services::start_with(|c| {
        services::unthrottled_payers(c);
        c.reclaim_interval = Some(std::time::Duration::from_millis(200));
    })
    .await;
    let url = s.facilitator.url();
    let mut old = Vec::new();
    for _ in 0..4 {
        old.push(
            settle_one(&s, &url)
                .await
                .0
                .settlement
                .feedback
                .payment_id_hash,
        );
    }
    for id in &old {
        age(&s, id, DISPUTE_WINDOW_SECS + 120).await;
    }
    // The crank's rounds now close the old logs while the same payer settles new payments,
    // several at once.
    let settling = futures::future::join_all((0..6).map(|_| settle_one(&s, &url))).await;
    let new: Vec<[u8; 32]> = settling
        .into_iter()
        .map(|(p, _)| p.settlement.feedback.payment_id_hash)
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let mut open = 0;
        for id in &old {
            open += usize::from(exists(&s, &log_of(&s, id)).await);
        }
        if open == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{open} old logs still open"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for id in &new {
        assert!(
            exists(&s, &log_of(&s, id)).await,
            "a new payment's log stays open"
        );
        let r = receipt_at(&s, &url, id).await;
        assert_eq!(
            (&r["exists"], &r["closed"]),
            (&Value::Bool(true), &Value::Bool(false))
        );
    }
    for id in &old {
        let r = receipt_at(&s, &url, id).await;
        assert_eq!(
            (&r["exists"], &r["closed"]),
            (&Value::Bool(true), &Value::Bool(true)),
            "{r}"
        );
    }
}
