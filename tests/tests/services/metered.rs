//! The demo's metered routes through the channel paying client (`trust-gate pay --scheme`'s
//! code path) over HTTP: GET /metered charges the units a request used out of the ceiling it
//! escrowed (`upto`, gated and plain), GET /session pays request by request with vouchers and
//! ends with the refund (`batch-settlement`, gated and plain); an offer that is not the
//! route's is refused before anything reaches the facilitator.

use crate::services::{self, Services};
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use trust_gate_client::channels::{Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::{chain, Overrides};
use trust_gate_pay::channels::ChannelPay;
use trust_gate_x402::{self as x402, PaymentRequired, PaymentRequirements};
use trust_gate_x402::{batch, upto};

async fn balance(s: &Services, owner: &Pubkey) -> u64 {
    let ata = TokenProgram::Token2022.associated_account(owner, &s.env.world.metered_mint());
    s.env.token_balance(&ata).await
}

fn client(s: &Services, url: String, ungated: bool) -> ChannelPay<'_> {
    ChannelPay {
        http: &s.http,
        rpc: &s.env.rpc,
        overrides: Overrides::default(),
        request: trust_gate_pay::exact::Request::get(url),
        payer_agent: None,
        signer: &s.env.world.payer(3).unwrap().owner,
        ungated,
        max_amount: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metered_route_charges_the_units_used_gated_and_plain() {
    let s = services::start().await;
    let w = &s.env.world;
    let pay_to = w.service.owner.pubkey();
    let payer = w.payer(3).unwrap().owner.pubkey();

    // The 402 offers both variants, the ceiling 20 units.
    let r = s.http.get(s.d("/metered")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 402);
    let pr: PaymentRequired = x402::decode_header(
        x402::PAYMENT_REQUIRED,
        &services::header(&r, x402::PAYMENT_REQUIRED),
    )
    .unwrap();
    let schemes: Vec<&str> = pr.accepts.iter().map(|a| a.scheme.as_str()).collect();
    assert_eq!(schemes, [upto::SCHEME_GATED_UPTO, upto::SCHEME_UPTO]);
    assert_eq!(pr.accepts[0].amount, "2000000");

    // Without `units`, a request uses the route's default.
    let default = trust_gate_demo::metered::DEFAULT_UNITS;
    for (ungated, query, units) in [
        (false, "?units=4", 4u64),
        (true, "?units=7", 7),
        (false, "", default),
    ] {
        let (to_before, payer_before) = (balance(&s, &pay_to).await, balance(&s, &payer).await);
        let paid = client(&s, s.d(&format!("/metered{query}")), ungated)
            .upto()
            .await
            .unwrap();
        let charge = units * 100_000;
        assert_eq!(paid.body.json()["units"], units, "{}", paid.body);
        assert_eq!(
            paid.body.json()["charged"],
            charge.to_string(),
            "{}",
            paid.body
        );
        assert_eq!(paid.amount(), Some(charge), "{:?}", paid.settlement);
        assert_eq!(balance(&s, &pay_to).await - to_before, charge);
        assert_eq!(payer_before - balance(&s, &payer).await, charge);
    }

    // Too many units for one request.
    let r = s.http.get(s.d("/metered?units=21")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_route_is_paid_request_by_request_then_refunded() {
    let s = services::start().await;
    let w = &s.env.world;
    let pay_to = w.service.owner.pubkey();
    for ungated in [false, true] {
        let to_before = balance(&s, &pay_to).await;
        let paid = client(&s, s.d("/session"), ungated)
            .session(5, 10)
            .await
            .unwrap();
        assert_eq!(paid.requests.len(), 5);
        assert_eq!(paid.charged, 5 * 1_000);
        // The first request opened the channel; the others were vouchers kept off chain.
        assert_ne!(paid.requests[0].transaction(), Some(""));
        assert!(paid.requests[0].transaction().is_some());
        for r in &paid.requests[1..] {
            assert_eq!(r.transaction(), Some(""), "{:?}", r.settlement);
        }
        assert_eq!(
            paid.requests[4].body.json()["channelState"]["chargedCumulativeAmount"],
            "5000"
        );
        assert_eq!(balance(&s, &pay_to).await - to_before, 5 * 1_000);
        let account = chain::account(&s.env.rpc, &paid.channel)
            .await
            .unwrap()
            .unwrap();
        let c = Channel::decode(&account.data).unwrap();
        assert_eq!((c.status, c.settled), (Status::Distributed, 5_000));
        let record = s.env.b.pda.channel_record(&paid.channel);
        let recorded = chain::account(&s.env.rpc, &record).await.unwrap();
        assert!(
            recorded.is_none(),
            "closed through the gate, or never recorded (plain)"
        );
    }
}

/// The 402 of `path`.
async fn offers_of(s: &Services, path: &str) -> PaymentRequired {
    let r = s.http.get(s.d(path)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 402);
    x402::decode_header(
        x402::PAYMENT_REQUIRED,
        &services::header(&r, x402::PAYMENT_REQUIRED),
    )
    .unwrap()
}

/// A payment of `path` for `offer` (its payload does not matter: it must not get that far).
async fn pay_with(s: &Services, path: &str, offer: &PaymentRequirements) -> (u16, Value) {
    let envelope = json!({"x402Version": 2, "accepted": offer, "payload": {"type": "voucher"}});
    let r = s
        .http
        .get(s.d(path))
        .header(
            x402::PAYMENT_SIGNATURE,
            x402::encode_header(&envelope).unwrap(),
        )
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offer_that_is_not_the_routes_is_refused_before_the_facilitator() {
    let s = services::start().await;
    let session = offers_of(&s, "/session").await;
    let metered = offers_of(&s, "/metered").await;
    assert_eq!(session.accepts[0].scheme, batch::SCHEME_GATED_BATCH);
    assert_eq!(metered.accepts[1].scheme, upto::SCHEME_UPTO);
    // The plain session offer with another payTo; the plain metered offer with a lower
    // ceiling; the gated metered offer with another amount than the service signed; the
    // metered route's gated offer sent to the session route.
    let mut other_pay_to = session.accepts[1].clone();
    other_pay_to.pay_to = Pubkey::new_unique().to_string();
    let mut cheaper = metered.accepts[1].clone();
    cheaper.amount = "100000".into();
    let mut resigned = metered.accepts[0].clone();
    resigned.amount = "1".into();
    for (path, offer) in [
        ("/session", &other_pay_to),
        ("/metered", &cheaper),
        ("/metered", &resigned),
        ("/session", &metered.accepts[0]),
    ] {
        let (status, body) = pay_with(&s, path, offer).await;
        assert_eq!(
            (status, &body["error"]),
            (402, &json!("offer_unknown")),
            "{path} {body}"
        );
    }
    // The route's own offers are taken (refused later, by the facilitator, for the payload).
    let (status, body) = pay_with(&s, "/metered", &metered.accepts[1]).await;
    assert_ne!(body["error"], "offer_unknown", "{status} {body}");
}
