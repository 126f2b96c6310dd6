//! x402's `refund` extension for a held share (docs/holdback.md, "The refund extension"), over
//! HTTP: the held demo's 402 advertises it for the hold; the payer's signed request gets the
//! whole share back on chain with the service's signed receipt, once per idempotency key; each
//! refusal says why, and a request changed after signing is refused naming `payerSignature`.

use crate::holdback::{held_challenge, held_demo, pay_held};
use crate::services::{self, Services};
use serde_json::Value;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use trust_gate_client::held::HeldBy;
use trust_gate_client::holdback::HoldState;
use trust_gate_client::ids::CAIP2_DEVNET;
use trust_gate_client::settle::TokenProgram;
use trust_gate_migrations::demo;
use trust_gate_pay::exact::PayOutcome;
use trust_gate_pay::refund::{self, RefundError};
use trust_gate_x402::holdback::{
    sign_refund_request, verify_refund_receipt, DenialReason, RefundInfo, RefundReason,
    RefundRequest, RefundResponse, RefundStatus,
};
use trust_gate_x402::PaymentRequired;

/// The share of the demo price the tier-1 payee's term holds back.
fn held_amount(s: &Services) -> u64 {
    let term = s.env.world.holdback_schedule().terms[1];
    demo::PRICE * u64::from(term.share_bps) / 10_000
}

/// The state of payment `id`'s held share.
async fn state(s: &Services, id: [u8; 32]) -> HoldState {
    let listed = trust_gate_client::held::list(&s.env.rpc, &s.env.b.ids.gate, HeldBy::Payment(id))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    listed[0].payment.state
}

/// The payer's token account of the demo mint.
fn payer_token(s: &Services) -> Pubkey {
    let w = &s.env.world;
    TokenProgram::SplToken.associated_account(&w.holdback_payer().owner.pubkey(), &w.mint())
}

/// POSTs `body` as it is (no signing) to `endpoint`: its status and JSON.
async fn post_raw(s: &Services, endpoint: &str, body: &Value) -> (u16, Value) {
    let r = s.http.post(endpoint).json(body).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payer_gets_its_held_share_back_once_through_the_refund_extension() {
    let s = services::start().await;
    let w = &s.env.world;
    let payer = w.holdback_payer();
    let held = held_amount(&s);
    let d = held_demo(&s).await;

    // The held demo's 402 advertises refunds of the share for its hold, whole only.
    let required = held_challenge(&s, &d.url()).await;
    let info = refund::offered(&required)
        .unwrap()
        .expect("extensions.refund");
    assert_eq!(
        info,
        RefundInfo {
            refund_endpoint: format!("{}/refund", d.url()),
            window_seconds: 120,
            partial_refunds: false,
            policy_url: None,
        }
    );
    assert_eq!(
        required.extensions.as_ref().unwrap()["refund"]["schema"]["required"],
        serde_json::json!(["refundEndpoint", "windowSeconds", "partialRefunds"])
    );
    // The demo's own payee holds nothing back: no refund offered, no refund route.
    let plain: PaymentRequired = held_challenge(&s, &s.demo.url()).await;
    assert_eq!(refund::offered(&plain).unwrap(), None);
    let r = s
        .http
        .post(s.d("/refund"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    // Paid, then the payer asks for the share back.
    let (tx, requirements, id) = pay_held(&s, &d.url()).await;
    let request =
        refund::for_held_payment(&requirements, &tx, RefundReason::ServiceNotDelivered).unwrap();
    assert_eq!(request.amount, held.to_string());
    assert_eq!(request.payment_reference.network, requirements.network);
    let before = s.env.token_balance(&payer_token(&s)).await;
    let answer = refund::request(
        &s.http,
        &info.refund_endpoint,
        request.clone(),
        &payer.owner,
    )
    .await
    .unwrap();
    assert_eq!(
        (answer.status, answer.amount.as_str(), answer.denial_reason),
        (RefundStatus::Executed, held.to_string().as_str(), None),
        "{answer:?}"
    );
    let refund_tx = answer.refund_tx_hash.clone().expect("refundTxHash");
    assert_eq!(s.env.token_balance(&payer_token(&s)).await, before + held);
    assert_eq!(state(&s, id).await, HoldState::Refunded);

    // The receipt is the service key's JWS over what moved.
    let (signer, receipt) =
        verify_refund_receipt(answer.refund_receipt.as_ref().expect("refundReceipt")).unwrap();
    assert_eq!(signer, w.service_key.pubkey());
    assert_eq!(
        (
            receipt.network.as_str(),
            receipt.payer.as_str(),
            receipt.payment_tx_hash.as_str(),
            receipt.refund_tx_hash.as_str(),
            receipt.amount.as_str(),
            receipt.asset.as_str(),
            receipt.refund_to.as_str(),
            receipt.escrow.as_str(),
        ),
        (
            requirements.network.as_str(),
            payer.owner.pubkey().to_string().as_str(),
            tx.as_str(),
            refund_tx.as_str(),
            held.to_string().as_str(),
            w.mint().to_string().as_str(),
            payer_token(&s).to_string().as_str(),
            s.env
                .b
                .pda
                .holdback_escrow(&w.held_service.asset(), &w.mint())
                .to_string()
                .as_str(),
        )
    );
    assert_eq!(receipt.resource_url, format!("{}/protected", d.url()));

    // The same request again: the first answer, no second transfer; also by its key.
    let again = refund::request(
        &s.http,
        &info.refund_endpoint,
        request.clone(),
        &payer.owner,
    )
    .await
    .unwrap();
    assert_eq!(again, answer);
    let kept = refund::status(&s.http, &info.refund_endpoint, &request.idempotency_key)
        .await
        .unwrap();
    assert_eq!(kept, answer);
    assert_eq!(s.env.token_balance(&payer_token(&s)).await, before + held);
    match refund::status(&s.http, &info.refund_endpoint, "never-sent").await {
        Err(RefundError::Refused { status: 404, .. }) => {}
        other => panic!("{other:?}"),
    }
    // The key with another request is a conflict, not an answer.
    let other = RefundRequest {
        reason: RefundReason::Other,
        ..request.clone()
    };
    match refund::request(&s.http, &info.refund_endpoint, other, &payer.owner).await {
        Err(RefundError::Refused {
            status: 409, code, ..
        }) => {
            assert_eq!(code, "idempotency_key_reused")
        }
        other => panic!("{other:?}"),
    }
    // A new key for the same payment: the share went back already.
    let second = RefundRequest {
        idempotency_key: trust_gate_x402::holdback::new_idempotency_key(),
        ..request
    };
    let denied = refund::request(&s.http, &info.refund_endpoint, second, &payer.owner)
        .await
        .unwrap();
    assert_eq!(
        denied,
        RefundResponse::denied(&held.to_string(), DenialReason::AlreadyRefunded)
    );
    assert_eq!(s.env.token_balance(&payer_token(&s)).await, before + held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_refused_refund_says_why_and_moves_nothing() {
    let s = services::start().await;
    let w = &s.env.world;
    let payer = w.holdback_payer();
    let held = held_amount(&s);
    let d = held_demo(&s).await;
    let endpoint = format!("{}/refund", d.url());
    let (tx, requirements, id) = pay_held(&s, &d.url()).await;
    // A payment of the same payer to the demo's own payee, which holds nothing back.
    let plain_tx = match s.pay(Some(payer.asset()), &payer.owner).await {
        PayOutcome::Paid { receipt, .. } => receipt,
        other => panic!("not paid: {other:?}"),
    };
    let before = s.env.token_balance(&payer_token(&s)).await;
    let base =
        refund::for_held_payment(&requirements, &tx, RefundReason::ServiceDefective).unwrap();
    // Each request a fresh key, so that none is answered from another's.
    let fresh = |edit: &dyn Fn(&mut RefundRequest)| {
        let mut r = RefundRequest {
            idempotency_key: trust_gate_x402::holdback::new_idempotency_key(),
            ..base.clone()
        };
        edit(&mut r);
        r
    };
    let ask = |r: RefundRequest, signer: &Keypair| {
        let (http, endpoint) = (s.http.clone(), endpoint.clone());
        let signer = signer.insecure_clone();
        async move {
            let answer = refund::request(&http, &endpoint, r, &signer).await.unwrap();
            assert_eq!(answer.status, RefundStatus::Denied, "{answer:?}");
            assert_eq!((answer.refund_tx_hash, answer.refund_receipt), (None, None));
            answer.denial_reason.unwrap()
        }
    };

    // Not a held payment to this payee, not on this network, or no transaction at all.
    let not_held = fresh(&|r| r.payment_reference.tx_hash = plain_tx.clone());
    assert_eq!(
        ask(not_held, &payer.owner).await,
        DenialReason::UnknownPayment
    );
    let never = fresh(&|r| r.payment_reference.tx_hash = Signature::from([3u8; 64]).to_string());
    assert_eq!(ask(never, &payer.owner).await, DenialReason::UnknownPayment);
    let elsewhere = fresh(&|r| r.payment_reference.network = CAIP2_DEVNET.into());
    assert_eq!(
        ask(elsewhere, &payer.owner).await,
        DenialReason::UnknownPayment
    );
    // Signed by a key that did not pay.
    assert_eq!(
        ask(fresh(&|_| {}), &Keypair::new()).await,
        DenialReason::NotPayer
    );
    // More than the share; less than the share; somewhere else than the payer.
    let more = fresh(&|r| r.amount = (held + 1).to_string());
    assert_eq!(
        ask(more, &payer.owner).await,
        DenialReason::AmountExceedsSettled
    );
    let less = fresh(&|r| r.amount = (held - 1).to_string());
    assert_eq!(ask(less, &payer.owner).await, DenialReason::PolicyDenied);
    let redirected = fresh(&|r| r.refund_to = Some(Pubkey::new_unique().to_string()));
    assert_eq!(
        ask(redirected, &payer.owner).await,
        DenialReason::PolicyDenied
    );

    // Changed after signing, or not signed: refused naming payerSignature.
    let mut tampered = sign_refund_request(&payer.owner, fresh(&|_| {})).unwrap();
    tampered.refund_to = Some(Pubkey::new_unique().to_string());
    let (status, body) = post_raw(&s, &endpoint, &serde_json::to_value(&tampered).unwrap()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("payer_signature_invalid")),
        "{body}"
    );
    assert!(
        body["message"].as_str().unwrap().contains("payerSignature"),
        "{body}"
    );
    let unsigned = serde_json::to_value(fresh(&|_| {})).unwrap();
    let (status, body) = post_raw(&s, &endpoint, &unsigned).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("payerSignature"),
        "{body}"
    );
    // Malformed fields are named.
    let signed =
        serde_json::to_value(sign_refund_request(&payer.owner, fresh(&|_| {})).unwrap()).unwrap();
    for (field, value) in [
        ("reason", Value::from("because")),
        ("amount", Value::from("1.5")),
        ("idempotencyKey", Value::from("a/b")),
    ] {
        let mut bad = signed.clone();
        bad[field] = value;
        let (status, body) = post_raw(&s, &endpoint, &bad).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("input_invalid")),
            "{body}"
        );
        assert!(
            body["message"].as_str().unwrap().contains(field),
            "{field}: {body}"
        );
    }

    // Nothing moved.
    assert_eq!(s.env.token_balance(&payer_token(&s)).await, before);
    assert_eq!(state(&s, id).await, HoldState::Held);

    // Past the hold (on the cluster's clock) the window is over, though the share is still
    // in the escrow until someone releases it.
    let hold = w.holdback_schedule().terms[1].hold_secs;
    s.env.localnet.warp(u64::from(hold) + 5).await.unwrap();
    assert_eq!(
        ask(fresh(&|_| {}), &payer.owner).await,
        DenialReason::OutsideWindow
    );
    assert_eq!(state(&s, id).await, HoldState::Held);
    assert_eq!(s.env.token_balance(&payer_token(&s)).await, before);
}
