//! POST /dispute: only the payer of a settled payment may dispute it, with a transaction its
//! wallet signed (the facilitator co-signs as fee payer), once, within the dispute window.

use crate::services::{self, Services};
use crate::settle::{payer, prepared, request, settle_body, signed};
use base64::Engine as _;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::decode::{hex, DisputeRecord};
use trust_gate_client::settle;

/// Settles one demo payment through the facilitator; returns its payment id hash.
async fn settled(s: &Services) -> [u8; 32] {
    let p = prepared(s).await;
    let tx = signed(s, &p, &p.instructions().unwrap()).await;
    let (status, b) = settle_body(s, &request(&p, &tx)).await;
    assert_eq!(status, 200, "{b}");
    p.settlement.feedback.payment_id_hash
}

/// The dispute of `payment` signed by `wallet`, paid by the facilitator.
async fn dispute_tx(s: &Services, wallet: &Keypair, payment: [u8; 32]) -> VersionedTransaction {
    let d = settle::Dispute {
        collection: s.env.collection,
        payment_id_hash: payment,
        payee_asset: s.env.world.service.asset(),
        reason_hash: [7; 32],
        feedback_uri: "ipfs://not-delivered".into(),
    };
    let blockhash = s.env.rpc.get_latest_blockhash().await.unwrap();
    let facilitator = s.env.world.facilitator.pubkey();
    settle::dispute_transaction(&s.env.b, &facilitator, wallet, &d, blockhash).unwrap()
}

fn body(tx: &VersionedTransaction) -> Value {
    let bytes = bincode::serialize(tx).unwrap();
    json!({"transaction": base64::engine::general_purpose::STANDARD.encode(bytes)})
}

/// POSTs /dispute; returns (status, body).
async fn post(s: &Services, body: &Value) -> (u16, Value) {
    let (status, r) = s.post("/dispute", body).await;
    (status, r.json().await.unwrap())
}

#[tokio::test]
async fn only_the_payer_disputes_a_settled_payment_once() {
    let s = services::start().await;
    let payment = settled(&s).await;
    let payment_hex = hex(&payment);
    let record = s
        .env
        .b
        .pda
        .dispute(&s.env.world.facilitator.pubkey(), &payment);
    let before = s.receipt(&payment_hex).await;
    assert_eq!(before["dispute"], Value::Null, "{before}");

    // A stranger cannot make the facilitator lower the payee's reputation.
    let stranger = Keypair::new();
    let (status, b) = post(&s, &body(&dispute_tx(&s, &stranger, payment).await)).await;
    assert_eq!(
        (status, b["error"].as_str()),
        (403, Some("not_payment_payer")),
        "{b}"
    );
    // Neither can anyone with the old facilitator-signed body.
    let old = json!({"paymentIdHash": payment_hex, "payeeAgentAsset": s.env.world.service.asset().to_string(), "reason": "not delivered"});
    let (status, b) = post(&s, &old).await;
    assert_eq!(
        (status, b["error"].as_str()),
        (400, Some("input_invalid")),
        "{b}"
    );
    assert!(
        b["hint"].as_str().unwrap().contains("dispute_transaction"),
        "{b}"
    );
    // A transaction the payer did not sign (signature slot left empty).
    let mut unsigned = dispute_tx(&s, payer(&s), payment).await;
    unsigned.signatures[1] = Default::default();
    let (status, b) = post(&s, &body(&unsigned)).await;
    assert_eq!(status, 400, "{b}");
    assert!(
        b["message"].as_str().unwrap().contains("has not signed"),
        "{b}"
    );
    // A payment never settled here.
    let (status, b) = post(&s, &body(&dispute_tx(&s, payer(&s), [5; 32]).await)).await;
    assert_eq!(
        (status, b["error"].as_str()),
        (404, Some("not_found")),
        "{b}"
    );
    assert!(trust_gate_client::chain::account(&s.env.rpc, &record)
        .await
        .unwrap()
        .is_none());

    // The payer, with the client behind `trust-gate dispute`: 200, recorded with who
    // disputed; a second time 409.
    let outcome = trust_gate_demo::dispute::dispute(
        &s.http,
        &s.env.rpc,
        &trust_gate_demo::dispute::DisputeOptions {
            facilitator_url: s.facilitator.url(),
            payment_id_hash: payment,
            reason: "not delivered".into(),
            feedback_uri: "ipfs://not-delivered".into(),
            signer: payer(&s),
            overrides: Default::default(),
        },
    )
    .await
    .unwrap();
    let b = outcome.body;
    assert_eq!(outcome.status, 200, "{b}");
    assert_eq!(b["success"], true);
    assert_eq!(b["disputeRecord"]["paymentIdHash"], payment_hex);
    assert_eq!(
        b["disputeRecord"]["disputedBy"],
        payer(&s).pubkey().to_string()
    );
    let acc = trust_gate_client::chain::account(&s.env.rpc, &record)
        .await
        .unwrap()
        .unwrap();
    let r: DisputeRecord = trust_gate_client::decode::account("DisputeRecord", &acc.data).unwrap();
    assert_eq!(r.disputed_by, payer(&s).pubkey());
    let (status, b) = post(&s, &body(&dispute_tx(&s, payer(&s), payment).await)).await;
    assert_eq!(
        (status, b["error"].as_str()),
        (409, Some("already_disputed")),
        "{b}"
    );
    // The receipt: the settlement's feedback as it was, the dispute's beside it (score 0,
    // who, when, the reason's sha256), as the record holds it.
    let after = s.receipt(&payment_hex).await;
    assert_eq!(after["disputed"], true, "{after}");
    assert_eq!(after["score"], before["score"], "{after}");
    assert_eq!(
        after["dispute"],
        json!({
            "score": 0,
            "disputedBy": payer(&s).pubkey().to_string(),
            "reasonHash": hex(&Sha256::digest(b"not delivered")),
            "createdAt": r.created_at,
        }),
        "{after}"
    );
}

#[tokio::test]
async fn the_dispute_window_closes() {
    let s = services::start().await;
    let payment = settled(&s).await;
    let window = gate::instructions::DISPUTE_WINDOW_SECS as u64;
    s.env.localnet.warp(window + 60).await.unwrap();
    let (status, b) = post(&s, &body(&dispute_tx(&s, payer(&s), payment).await)).await;
    assert_eq!(
        (status, b["error"].as_str()),
        (403, Some("dispute_window_closed")),
        "{b}"
    );
    assert_eq!(s.receipt(&hex(&payment)).await["disputed"], false);
}

/// The payer disputes without the facilitator (`trust-gate dispute --facilitator-key`): it
/// signs and pays; the facilitator neither signs nor pays, and its receipt shows the dispute.
#[tokio::test]
async fn the_payer_disputes_without_the_facilitator() {
    let s = services::start().await;
    let payment = settled(&s).await;
    let facilitator = s.env.world.facilitator.pubkey();
    let before = s.env.rpc.get_balance(&facilitator).await.unwrap();
    let opts = |signer| trust_gate_demo::dispute::DisputeAloneOptions {
        facilitator,
        network: trust_gate_client::Network::Localnet,
        payment_id_hash: payment,
        reason: "not delivered".into(),
        feedback_uri: String::new(),
        signer,
        overrides: Default::default(),
    };
    // A stranger's dispute fails on chain with the gate's NotPaymentPayer.
    let stranger = Keypair::new();
    s.env
        .rpc
        .request_airdrop(&stranger.pubkey(), 1_000_000_000)
        .await
        .unwrap();
    for _ in 0..100 {
        if s.env.rpc.get_balance(&stranger.pubkey()).await.unwrap() > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let err = trust_gate_demo::dispute::dispute_alone(&s.env.rpc, &opts(&stranger))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("NotPaymentPayer"), "{err}");
    trust_gate_demo::dispute::dispute_alone(&s.env.rpc, &opts(payer(&s)))
        .await
        .unwrap();
    let r = s.receipt(&hex(&payment)).await;
    assert_eq!(r["disputed"], true, "{r}");
    assert_eq!(
        s.env.rpc.get_balance(&facilitator).await.unwrap(),
        before,
        "the facilitator paid nothing"
    );
    // A payment this facilitator never settled: named before anything is sent.
    let err = trust_gate_demo::dispute::dispute_alone(
        &s.env.rpc,
        &trust_gate_demo::dispute::DisputeAloneOptions {
            payment_id_hash: [5; 32],
            ..opts(payer(&s))
        },
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("nothing to dispute"), "{err}");
}
