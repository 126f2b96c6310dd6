//! A payment the payer's policy holds a share of (docs/holdback.md), over HTTP: the demo's
//! low-tier payee is decided with its holdback terms, the challenge states them, the paying
//! client composes the held settlement from them and the facilitator settles it; one held
//! payment is disputed and the arbiter upholds it (the share returns to the payer), another is
//! released by the facilitator's crank after its hold. A challenge whose terms are not the gate's is refused by name.

use crate::services::{self, loopback, Services};
use crate::settle::landed;
use serde_json::{json, Value};
use solana_sdk::signer::Signer;
use std::str::FromStr;
use trust_gate_client::decode::hex;
use trust_gate_client::held::HeldBy;
use trust_gate_client::holdback::{HeldPayment, HoldState};
use trust_gate_client::settle::{self, TokenProgram};
use trust_gate_migrations::demo;
use trust_gate_pay::exact::{self as pay, PayOutcome};
use trust_gate_x402::holdback::HoldbackTerms;

/// The demo service of the low-tier payee, paid under the holdback payer's holdback policy.
pub async fn held_demo(s: &Services) -> trust_gate_demo::Server {
    let listener = std::net::TcpListener::bind(loopback()).unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let url = format!("http://{addr}");
    let config = trust_gate_demo::DemoConfig::held_service(&s.facilitator.url(), &url);
    trust_gate_demo::start(config, addr).await.unwrap()
}

/// Pays `demo_url` as the holdback payer: the settlement's transaction, the offer paid and
/// the payment id hash.
pub async fn pay_held(
    s: &Services,
    demo_url: &str,
) -> (String, trust_gate_x402::PaymentRequirements, [u8; 32]) {
    let payer = s.env.world.holdback_payer();
    match s
        .env
        .pay_protected(demo_url, Some(payer.asset()), &payer.owner)
        .await
    {
        PayOutcome::Paid {
            receipt,
            requirements,
            payment_id_hash,
            ..
        } => (
            receipt,
            requirements,
            trust_gate_client::decode::parse_hex32("payment id", &payment_id_hash).unwrap(),
        ),
        other => panic!("not paid: {other:?}"),
    }
}

/// The 402 a demo gives the holdback payer.
pub async fn held_challenge(s: &Services, demo_url: &str) -> trust_gate_x402::PaymentRequired {
    let payer = s.env.world.holdback_payer();
    let r = s
        .http
        .get(format!("{demo_url}/protected"))
        .header("X-Demo-Payer-Agent", payer.asset().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 402);
    trust_gate_x402::decode_header(
        trust_gate_x402::PAYMENT_REQUIRED,
        r.headers()["PAYMENT-REQUIRED"].to_str().unwrap(),
    )
    .unwrap()
}

/// The held payment that `payment`'s log records.
async fn held(s: &Services, payment: &[u8; 32]) -> HeldPayment {
    let log = s
        .env
        .b
        .pda
        .feedback_log(&s.env.world.facilitator.pubkey(), payment);
    let acc = s.env.rpc.get_account(&log).await.unwrap();
    HeldPayment::from_log_data(&acc.data, TokenProgram::SplToken.id()).expect("a held share")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_tier_payee_is_paid_with_a_holdback_through_the_facilitator() {
    let s = services::start().await;
    let w = &s.env.world;
    let payer = w.holdback_payer();
    let (mint, payee) = (w.mint(), w.held_service.asset());
    let escrow = s.env.b.pda.holdback_escrow(&payee, &mint);
    let schedule = w.holdback_schedule();
    let term = schedule.terms[1];
    let held_amount = demo::PRICE * u64::from(term.share_bps) / 10_000;

    // The decision states the terms of the payee's tier 1.
    let (status, r) = s
        .post(
            "/verify",
            &json!({
                "payerAgentAsset": payer.asset().to_string(),
                "payeeAgentAsset": payee.to_string(),
                "amount": demo::PRICE.to_string(),
                "mint": mint.to_string(),
                "policyId": demo::HOLDBACK_POLICY_ID,
            }),
        )
        .await;
    let body: Value = r.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    let terms: HoldbackTerms = serde_json::from_value(body["holdback"].clone()).unwrap();
    assert_eq!(
        terms,
        HoldbackTerms {
            payee_tier: 1,
            share_bps: term.share_bps,
            hold_seconds: term.hold_secs,
            held: held_amount.to_string(),
            escrow: escrow.to_string(),
            arbiter: Some(w.arbiter.pubkey().to_string()),
        }
    );
    // The demo's own payee holds nothing back under the same payer's plain policy.
    let (_, plain) = s
        .post(
            "/verify",
            &json!({
                "payerAgentAsset": payer.asset().to_string(),
                "payeeAgentAsset": w.service.asset().to_string(),
                "amount": demo::PRICE.to_string(),
                "mint": mint.to_string(),
                "policyId": demo::POLICY_ID,
            }),
        )
        .await;
    let plain: Value = plain.json().await.unwrap();
    assert_eq!(plain["holdback"], Value::Null, "{plain}");

    // Paid through the demo and the facilitator: the share to the escrow, the rest to payTo.
    let d = held_demo(&s).await;
    let payee_token =
        TokenProgram::SplToken.associated_account(&w.held_service.owner.pubkey(), &mint);
    let payer_token = TokenProgram::SplToken.associated_account(&payer.owner.pubkey(), &mint);
    let before = (
        s.env.token_balance(&escrow).await,
        s.env.token_balance(&payee_token).await,
        s.env.token_balance(&payer_token).await,
    );
    let (sig, _, payment) = pay_held(&s, &d.url()).await;
    assert_eq!(
        (
            s.env.token_balance(&escrow).await,
            s.env.token_balance(&payee_token).await,
            s.env.token_balance(&payer_token).await,
        ),
        (
            before.0 + held_amount,
            before.1 + demo::PRICE - held_amount,
            before.2 - demo::PRICE
        )
    );
    // One transaction: [ComputeBudget, gate, transfer, transfer, feedback].
    let (meta, tx) = landed(
        &s,
        &solana_sdk::signature::Signature::from_str(&sig).unwrap(),
    )
    .await;
    assert!(meta.err.is_none());
    assert_eq!(tx.message.instructions().len(), 5);
    let h = held(&s, &payment).await;
    assert_eq!(
        (h.held, h.state, h.recipient, h.arbiter, h.escrow),
        (
            held_amount,
            HoldState::Held,
            w.held_service.owner.pubkey(),
            w.arbiter.pubkey(),
            escrow
        )
    );

    let r = s.receipt(&hex(&payment)).await;
    assert_eq!(r["holdback"]["state"], "held", "{r}");
    assert_eq!(r["holdback"]["holdUntil"], h.hold_until, "{r}");

    // A second held payment is disputed by its payer; the arbiter upholds: the share goes back.
    let (_, _, disputed) = pay_held(&s, &d.url()).await;
    let dispute = settle::Dispute {
        collection: s.env.collection,
        payment_id_hash: disputed,
        payee_asset: payee,
        reason_hash: [9; 32],
        feedback_uri: "ipfs://not-delivered".into(),
    };
    settle::dispute(&s.env.rpc, &s.env.b, &w.facilitator, &payer.owner, &dispute)
        .await
        .unwrap();
    // A third is disputed and never decided: its arbitration lapses.
    let (_, _, lapsing) = pay_held(&s, &d.url()).await;
    let dispute = settle::Dispute {
        payment_id_hash: lapsing,
        ..dispute
    };
    settle::dispute(&s.env.rpc, &s.env.b, &w.facilitator, &payer.owner, &dispute)
        .await
        .unwrap();
    // The three, as the SDK lists a payee's and a payer wallet's held payments.
    let gate = s.env.b.ids.gate;
    let of = |by| trust_gate_client::held::list(&s.env.rpc, &gate, by);
    let listed = of(HeldBy::Payee(payee)).await.unwrap();
    // Newest first (payments of one slot in any order).
    let mut ids: Vec<[u8; 32]> = listed.iter().map(|l| l.receipt.payment_id_hash).collect();
    let when: Vec<_> = listed
        .iter()
        .map(|l| (l.receipt.created_at, l.receipt.slot))
        .collect();
    assert!(
        when.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {when:?}"
    );
    ids.sort();
    let mut want = vec![lapsing, disputed, payment];
    want.sort();
    assert_eq!(ids, want);
    assert_eq!(
        listed
            .iter()
            .map(|l| l.payment.token_program)
            .collect::<Vec<_>>(),
        [TokenProgram::SplToken.id(); 3].to_vec()
    );
    let by_payer = of(HeldBy::PayerWallet(payer.owner.pubkey())).await.unwrap();
    assert_eq!(by_payer, listed);
    assert!(of(HeldBy::Payee(w.service.asset()))
        .await
        .unwrap()
        .is_empty());
    let h2 = held(&s, &disputed).await;
    assert_eq!(h2.state, HoldState::Disputed);
    let before = s.env.token_balance(&payer_token).await;
    let uphold = s.env.b.arbitrate_holdback(&h2, true, &payer_token, &[]);
    s.env.send(&[uphold], &[&w.arbiter]).await.unwrap();
    assert_eq!(held(&s, &disputed).await.state, HoldState::Upheld);
    assert_eq!(
        s.env.token_balance(&payer_token).await,
        before + held_amount
    );

    // The crank releases nothing before the hold is over, then the first one to the payee;
    // the upheld one is paid out already. Neither log closes: their dispute window is open.
    let crank = &s.facilitator.facilitator;
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(round.holdbacks_released, 0, "{round:?}");
    s.env
        .localnet
        .warp(u64::from(term.hold_secs) + 5)
        .await
        .unwrap();
    let before = s.env.token_balance(&payee_token).await;
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(
        (
            round.holdbacks_released,
            round.holdbacks_without_account,
            round.closed
        ),
        (1, 0, 0),
        "{round:?}"
    );
    assert_eq!(held(&s, &payment).await.state, HoldState::Released);
    assert_eq!(
        s.env.token_balance(&payee_token).await,
        before + held_amount
    );

    // Past the dispute window the released and the upheld logs close, while the undecided
    // dispute's share is released (it lapses) and its log stays until its payout.
    s.env.localnet.warp(7 * 86_400).await.unwrap();
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(
        (round.holdbacks_released, round.closed, round.failures.len()),
        (1, 2, 0),
        "{round:?}"
    );
    assert_eq!(held(&s, &lapsing).await.state, HoldState::Lapsed);

    // All three, as /receipt and GET /payments show them (the closed ones from the records
    // the crank kept).
    for (id, state) in [
        (payment, "released"),
        (disputed, "upheld"),
        (lapsing, "lapsed"),
    ] {
        let r = s.receipt(&hex(&id)).await;
        assert_eq!(r["holdback"]["state"], state, "{r}");
        assert_eq!(r["holdback"]["held"], held_amount.to_string(), "{r}");
        assert_eq!(r["holdback"]["escrow"], escrow.to_string(), "{r}");
    }
    let listed = s
        .get_json(s.f(&format!("/payments?payer={}", payer.asset())))
        .await;
    let state_of = |id: &[u8; 32]| {
        listed["payments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["paymentIdHash"] == hex(id))
            .map(|p| p["holdback"]["state"].clone())
    };
    assert_eq!(state_of(&payment), Some(json!("released")), "{listed}");
    assert_eq!(state_of(&disputed), Some(json!("upheld")), "{listed}");
    assert_eq!(state_of(&lapsing), Some(json!("lapsed")), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_must_state_the_gates_holdback_terms() {
    let s = services::start().await;
    let w = &s.env.world;
    let payer = w.holdback_payer();
    let d = held_demo(&s).await;
    // The demo's challenge, paid as issued, is checked by /verify with its transaction.
    let required = held_challenge(&s, &d.url()).await;
    let p = pay::prepare(
        &s.env.rpc,
        &required,
        &payer.owner.pubkey(),
        Default::default(),
    )
    .await
    .unwrap();
    let quote = p.settlement.holdback.expect("the challenge's terms");
    assert_eq!(quote.tier, 1);
    let ixs = p.instructions().unwrap();
    let tx = p.transaction(&s.env.rpc, &ixs, &payer.owner).await.unwrap();
    let (status, b) = s.post("/verify", &crate::settle::request(&p, &tx)).await;
    let b: Value = b.json().await.unwrap();
    assert_eq!((status, b["isValid"].clone()), (200, json!(true)), "{b}");
    assert_eq!(b["holdback"]["payeeTier"], 1, "{b}");

    // The held share sent to the payee instead of the escrow: refused by name.
    let mut paid_in_full = p.clone();
    paid_in_full.settlement.holdback = None;
    let ixs = paid_in_full.instructions().unwrap();
    let tx = p.transaction(&s.env.rpc, &ixs, &payer.owner).await.unwrap();
    let (status, b) = crate::settle::settle_body(&s, &crate::settle::request(&p, &tx)).await;
    assert_eq!(
        (status, b["errorReason"].as_str()),
        (400, Some("holdback_mismatch")),
        "{b}"
    );

    // A challenge stating terms of another tier is stale: the gate's are tier 1's.
    let mut g = trust_gate_x402::GateExtension::from_requirements(&p.requirements).unwrap();
    let mut stale = g.holdback.clone().unwrap();
    stale.payee_tier = 0;
    g.holdback = Some(stale);
    let mut r = p.requirements.clone();
    r.extra.remove("gate");
    trust_gate_x402::sign_challenge(&w.service_key, &r, &p.resource.url, &mut g);
    r.extra
        .insert("gate".into(), serde_json::to_value(&g).unwrap());
    let mut resigned = p.clone();
    resigned.requirements = r;
    let mut quoted = resigned.settlement.clone();
    quoted.holdback = Some(trust_gate_client::holdback::HoldbackQuote { tier: 0, ..quote });
    resigned.settlement = quoted;
    let ixs = resigned.instructions().unwrap();
    let tx = resigned
        .transaction(&s.env.rpc, &ixs, &payer.owner)
        .await
        .unwrap();
    let (status, b) = s
        .post("/verify", &crate::settle::request(&resigned, &tx))
        .await;
    let b: Value = b.json().await.unwrap();
    assert_eq!(
        (status, b["invalidReason"].as_str()),
        (409, Some("holdback_terms_stale")),
        "{b}"
    );
}
