//! The fifth audit's findings on `batch-settlement` sessions, each tried as an attacker would,
//! over HTTP, on the REAL payment-channels bytecode (with the real registry, engine and MPL
//! Core: `../shared/fixtures`), plain and gated:
//!
//! - H-1: a payer's `request_close` stops its vouchers on every replica and its channel is
//!   closed at what was accepted, within the grace period by the payee's seal, past it (a
//!   facilitator down all along) by anyone's seal, the gate's close and the distribute, so
//!   that all rent comes back; a deposit whose open is not yet on chain serves no voucher; one
//!   closing channel never holds up another's redemption;
//! - M-1: a voucher sent again pays for nothing: the demo answers the corrective 402 and
//!   serves nothing, a refund ends the session without the resource, a client's claim or
//!   settle is refused, and the paying client resumes from the corrective 402;
//! - M-2: only the service ends or claims a session: a stranger's refund built from the
//!   open's public data is refused (the channel stays open), claims and settles need the
//!   service's signature, the same claim at once runs once;
//! - L-5: with Redis, an open session's key never expires.

use crate::batch::{lamports, refused, salt, Payer};
use crate::faults::{start_proxy, Mode};
use crate::real_registry::real;
use crate::services::{self, Services};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use std::time::{Duration, Instant};
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_facilitator::Config;
use trust_gate_pay::channels::ChannelPay;
use trust_gate_x402::batch::{self, BatchPayload};
use trust_gate_x402::reason::Reason;
use trust_gate_x402::{self as x402, PaymentRequired};

const PRICE: u64 = 1_000;

/// A facilitator reading every session's channel each round of `poll`.
fn watching(c: &mut Config) {
    c.sessions.poll = Duration::from_millis(100);
    c.sessions.channel_poll = Duration::ZERO;
}

/// The payer's own `request_close` of its session's channel (it pays the fee itself).
async fn request_close(p: &Payer<'_>) {
    let ix = channels::request_close(&p.owner.pubkey(), &p.session.channel);
    p.s.env.send(&[ix], &[&p.owner]).await.unwrap();
}

/// Waits until `p`'s channel is distributed or gone; returns it (none when gone).
async fn closed(p: &Payer<'_>, within: Duration) -> Option<Channel> {
    let deadline = Instant::now() + within;
    loop {
        let c = p.channel().await;
        if c.as_ref().is_none_or(|c| c.status == Status::Distributed) {
            return c;
        }
        assert!(Instant::now() < deadline, "the channel is closed: {c:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether an account exists.
async fn exists(s: &Services, key: &Pubkey) -> bool {
    chain::account(&s.env.rpc, key).await.unwrap().is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h1_request_close_stops_vouchers_and_closes_the_channel_at_what_was_accepted() {
    for gated in [false, true] {
        let Some(s) = real(watching).await else {
            return;
        };
        let w = &s.env.world;
        let (mut p, deposit) = Payer::new(&s, gated).await;
        assert_eq!(p.settle(&deposit).await.1["success"], true);
        for _ in 0..2 {
            let v = p.next();
            assert_eq!(p.settle(&v).await.1["success"], true);
        }
        let pay_to = p.ata(&w.service.owner.pubkey());
        let payer_ata = p.ata(&p.owner.pubkey());
        let (to_before, payer_before) = (
            s.env.token_balance(&pay_to).await,
            s.env.token_balance(&payer_ata).await,
        );
        let accepted_before = p.session.charged;
        request_close(&p).await;
        let asked = Instant::now();
        // From the next read of the channel every voucher is refused: the program would take
        // none of them (its `settle` refuses a closing channel).
        let why = p.next_until_refused(&s.facilitator.url(), asked).await;
        assert!(
            why == Reason::BatchChannelClosing || why == Reason::BatchCloseState,
            "gated {gated}: {why}"
        );
        let accepted = p.session.charged;
        eprintln!(
            "gated {gated}: vouchers refused {:?} after request_close; {} accepted after it",
            asked.elapsed(),
            (accepted - accepted_before) / PRICE
        );
        // Sealed by the payee within the grace period at the latest voucher: the payee paid
        // every voucher accepted, the payer the rest back, the gate's record closed.
        let c = closed(&p, Duration::from_secs(20)).await;
        if let Some(c) = &c {
            assert_eq!(c.settled, accepted, "gated {gated}");
        }
        assert_eq!(
            s.env.token_balance(&pay_to).await - to_before,
            accepted,
            "gated {gated}: payTo paid what was accepted"
        );
        assert_eq!(
            s.env.token_balance(&payer_ata).await - payer_before,
            p.session.deposit - accepted,
            "gated {gated}: the payer gets the rest of its deposit back"
        );
        let escrow =
            TokenProgram::Token2022.associated_account(&p.session.channel, &w.metered_mint());
        assert!(!exists(&s, &escrow).await, "the escrow is closed");
        let record = s.env.b.pda.channel_record(&p.session.channel);
        assert!(
            !exists(&s, &record).await,
            "gated {gated}: no gate record left"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h1_two_replicas_on_one_redis_both_refuse_after_request_close() {
    for gated in [false, true] {
        let Some(s) = real(|_| {}).await else {
            return;
        };
        let redis = trust_gate_test_setup::RedisServer::start();
        let rpc = s.env.localnet.rpc_url();
        let mut replicas = Vec::new();
        for _ in 0..2 {
            replicas.push(facilitator(&s, &rpc, Some(&redis), watching).await);
        }
        let urls: Vec<String> = replicas.iter().map(|r| r.url()).collect();
        let (mut p, deposit) = Payer::new(&s, gated).await;
        assert_eq!(p.settle_at(&urls[0], &deposit).await["success"], true);
        for url in &urls {
            let v = p.next();
            assert_eq!(p.settle_at(url, &v).await["success"], true);
        }
        let pay_to = p.ata(&s.env.world.service.owner.pubkey());
        let to_before = s.env.token_balance(&pay_to).await;
        request_close(&p).await;
        // The replica whose round reads the channel writes it into the shared session: the
        // other refuses too, from its next voucher.
        let asked = Instant::now();
        for url in &urls {
            let why = p.next_until_refused(url, asked).await;
            assert!(
                why == Reason::BatchChannelClosing || why == Reason::BatchCloseState,
                "gated {gated}, {url}: {why}"
            );
        }
        let accepted = p.session.charged;
        let c = closed(&p, Duration::from_secs(20)).await;
        assert!(c.as_ref().is_none_or(|c| c.settled == accepted), "{c:?}");
        assert_eq!(s.env.token_balance(&pay_to).await - to_before, accepted);
    }
}

/// A facilitator of the demo's keys on `s`'s localnet (its RPC at `rpc_url`), sharing `redis`
/// when given, its background round every 100 ms.
async fn facilitator(
    s: &Services,
    rpc_url: &str,
    redis: Option<&trust_gate_test_setup::RedisServer>,
    edit: impl FnOnce(&mut Config),
) -> trust_gate_facilitator::Server {
    let mut c = services::config(&s.env, rpc_url);
    c.redis_url = redis.map(|r| r.url());
    c.sessions.poll = Duration::from_millis(100);
    edit(&mut c);
    trust_gate_facilitator::start(c, services::loopback())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h1_a_facilitator_down_through_the_grace_period_still_closes_and_returns_all_rent() {
    // Its sessions lost (in process) or kept (Redis), plain and gated.
    for (gated, shared) in [(false, false), (true, false), (true, true)] {
        let Some(s) = real(|_| {}).await else {
            return;
        };
        let w = &s.env.world;
        let fac = w.facilitator.pubkey();
        let redis = shared.then(trust_gate_test_setup::RedisServer::start);
        let rpc = s.env.localnet.rpc_url();
        let (mut p, deposit) = Payer::new(&s, gated).await;
        let payer_ata = p.ata(&p.owner.pubkey());
        let pay_to = p.ata(&w.service.owner.pubkey());
        let (fac_before, payer_before, to_before) = (
            lamports(&s, &fac).await,
            s.env.token_balance(&payer_ata).await,
            s.env.token_balance(&pay_to).await,
        );
        let a = facilitator(&s, &rpc, redis.as_ref(), |_| {}).await;
        assert_eq!(p.settle_at(&a.url(), &deposit).await["success"], true);
        for _ in 0..2 {
            let v = p.next();
            assert_eq!(p.settle_at(&a.url(), &v).await["success"], true);
        }
        // The payer asks to close, and the facilitator is down through the grace period.
        request_close(&p).await;
        drop(a);
        s.env.localnet.warp(900 + 60).await.unwrap();
        assert_eq!(p.channel().await.unwrap().status, Status::Closing);
        let b = facilitator(&s, &rpc, redis.as_ref(), |_| {}).await;
        if !shared {
            // Its sessions gone, the crank finds the channel and finishes it.
            let round = b.facilitator.reclaim_once().await.unwrap();
            assert_eq!(round.channels_finished, 1, "gated {gated}: {round:?}");
        }
        // Sealed at what the channel settled (the vouchers were never applied: past the
        // grace period they are the payee's loss), closed through the gate, distributed: this
        // late after the open the channel is deleted in the same instruction.
        let c = closed(&p, Duration::from_secs(20)).await;
        assert!(c.is_none(), "gated {gated} shared {shared}: {c:?}");
        let record = s.env.b.pda.channel_record(&p.session.channel);
        assert!(
            !exists(&s, &record).await,
            "gated {gated}: the record's rent came back"
        );
        let escrow =
            TokenProgram::Token2022.associated_account(&p.session.channel, &w.metered_mint());
        assert!(!exists(&s, &escrow).await);
        assert_eq!(s.env.token_balance(&payer_ata).await, payer_before);
        assert_eq!(s.env.token_balance(&pay_to).await, to_before);
        assert_eq!(
            fac_before - lamports(&s, &fac).await,
            3 * 5_000,
            "gated {gated} shared {shared}: every lamport of rent back, the open's two signatures and the close's paid"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h1_a_deposit_not_yet_on_chain_serves_no_voucher() {
    for gated in [false, true] {
        let Some(s) = real(|_| {}).await else {
            return;
        };
        let (proxy, rpc) = start_proxy(s.env.localnet.rpc_url()).await;
        // Its background round runs when the test says (once at the start, then hourly).
        let f = facilitator(&s, &rpc, None, |c| {
            c.confirm_timeout = Duration::from_millis(300);
            c.sessions.poll = Duration::from_secs(3_600);
        })
        .await;
        proxy.set(Mode::HideStatuses);
        let (mut p, deposit) = Payer::new(&s, gated).await;
        let d = p.settle_at(&f.url(), &deposit).await;
        assert_eq!(d["errorReason"], Reason::SettlementPending, "{d}");
        // The deposit may never land: until the channel is read open with it, a voucher
        // serves nothing.
        let v = p.next();
        let r = p.settle_at(&f.url(), &v).await;
        assert_eq!(
            refused(&r),
            Reason::BatchDepositUnconfirmed,
            "gated {gated}: {r}"
        );
        // It landed (the proxy hid only its status): the round's read confirms the session.
        let t = trust_gate_facilitator::schemes::batch::redeemer::tick(&f.facilitator).await;
        assert_eq!(t.confirmed, vec![p.session.channel], "{t:?}");
        let r = p.settle_at(&f.url(), &v).await;
        assert_eq!(r["success"], true, "{r}");
        assert_eq!(
            r["extra"]["channelState"]["chargedCumulativeAmount"],
            (2 * PRICE).to_string()
        );
        proxy.set(Mode::Forward);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h1_one_closing_channel_never_holds_up_anothers_redemption() {
    for gated in [false, true] {
        // The background round runs when the test says (once at the start, then hourly).
        let Some(s) = real(|c| {
            c.sessions.poll = Duration::from_secs(3_600);
            c.sessions.redeem_amount = PRICE;
        })
        .await
        else {
            return;
        };
        let (mut closing, a) = Payer::new(&s, gated).await;
        let (mut honest, b) = Payer::new(&s, gated).await;
        for (p, deposit) in [(&mut closing, a), (&mut honest, b)] {
            assert_eq!(p.settle(&deposit).await.1["success"], true);
            let v = p.next();
            assert_eq!(p.settle(&v).await.1["success"], true);
        }
        // One payer asks to close before the round reads its channel again: the two
        // channels' vouchers go in one transaction, which the program refuses for it.
        request_close(&closing).await;
        let f = &s.facilitator.facilitator;
        let t = trust_gate_facilitator::schemes::batch::redeemer::tick(f).await;
        assert!(
            t.redeemed.contains(&honest.session.channel),
            "gated {gated}: {t:?}"
        );
        assert!(!t.redeemed.contains(&closing.session.channel), "{t:?}");
        assert_eq!(
            honest.channel().await.unwrap().settled,
            honest.session.charged,
            "gated {gated}: the honest payer's vouchers are applied"
        );
        // The refusal is logged whole: the program's words, not cut mid-word.
        let id = closing.session.channel.to_string();
        let why = t.errors.iter().find(|e| e.contains(&id)).unwrap();
        assert!(why.contains("(Program "), "{why}");
    }
}

/// The demo's /session route as a client pays it: the offer of its 402, a session opened by
/// the client SDK, payloads sent in `PAYMENT-SIGNATURE`.
struct DemoSession<'a> {
    required: PaymentRequired,
    /// The tier-3 payer's session of the offer.
    p: Payer<'a>,
}

/// A response: its status, headers and JSON body.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Value,
}

impl<'a> DemoSession<'a> {
    /// The tier-3 payer's session of the demo's gated or plain offer, and its deposit payload.
    async fn open(s: &'a Services, gated: bool) -> (DemoSession<'a>, BatchPayload) {
        let payer = s.env.world.payer(3).unwrap();
        let res = s
            .http
            .get(s.d("/session"))
            .header(x402::X_PAYER_AGENT, payer.asset().to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 402);
        let required: PaymentRequired = x402::decode_header(
            x402::PAYMENT_REQUIRED,
            res.headers()[x402::PAYMENT_REQUIRED].to_str().unwrap(),
        )
        .unwrap();
        let scheme = if gated {
            batch::SCHEME_GATED_BATCH
        } else {
            batch::SCHEME_BATCH
        };
        let offer = required
            .accepts
            .iter()
            .find(|o| o.scheme == scheme)
            .unwrap()
            .clone();
        let (p, deposit) = Payer::open(s, offer, gated).await;
        (DemoSession { required, p }, deposit)
    }

    /// `payload` as the `PAYMENT-SIGNATURE` of the accepted offer.
    fn header(&self, payload: &BatchPayload) -> String {
        x402::encode_header(&json!({
            "x402Version": 2,
            "resource": self.required.resource,
            "accepted": self.p.requirements,
            "payload": payload,
        }))
        .unwrap()
    }

    async fn get(&self, header: &str) -> Answer {
        let res = self
            .p
            .s
            .http
            .get(self.p.s.d("/session"))
            .header(x402::PAYMENT_SIGNATURE, header)
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        Answer {
            status,
            headers,
            body: res.json().await.unwrap(),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_m1_a_voucher_sent_again_pays_for_nothing_and_the_paying_client_resumes() {
    for gated in [false, true] {
        let Some(s) = real(|_| {}).await else {
            return;
        };
        let (mut d, deposit) = DemoSession::open(&s, gated).await;
        let first = d.get(&d.header(&deposit)).await;
        assert_eq!(first.status, 200, "{}", first.body);
        assert!(first.body["report"].is_string());
        let second = d.p.session.voucher_payload(PRICE).unwrap();
        let header = d.header(&second);
        let paid = d.get(&header).await;
        assert_eq!(paid.status, 200, "{}", paid.body);
        assert_eq!(paid.body["charged"], PRICE.to_string());
        // The same payment again, byte for byte: nothing served, the corrective 402 instead.
        let again = d.get(&header).await;
        assert_eq!(again.status, 402, "gated {gated}: {}", again.body);
        assert!(again.body.get("report").is_none(), "{}", again.body);
        assert!(
            again.headers.get(x402::PAYMENT_RESPONSE).is_none(),
            "a stock client reads the corrective 402 only without a settlement"
        );
        let corrective: Value = x402::decode_header(
            x402::PAYMENT_REQUIRED,
            again.headers[x402::PAYMENT_REQUIRED].to_str().unwrap(),
        )
        .unwrap();
        let (channel, voucher) = batch::corrective_state(&corrective).unwrap();
        assert_eq!(channel.charged_cumulative_amount, (2 * PRICE).to_string());
        assert_eq!(d.p.session.resync(&channel, &voucher).unwrap(), 2 * PRICE);
        // A client's claim or settle is never a payment.
        let config = d.p.session.config.clone();
        let id = d.p.session.channel.to_string();
        let own: [BatchPayload; 2] = [
            serde_json::from_value(json!({"type": "claim", "claims": [{
                "channelId": id, "channelConfig": config,
                "voucher": second_voucher(&second)}]}))
            .unwrap(),
            serde_json::from_value(json!({"type": "settle", "channels": [{
                "channelId": id, "channelConfig": config}]}))
            .unwrap(),
        ];
        for payload in own {
            let r = d.get(&d.header(&payload)).await;
            assert_eq!(r.status, 400, "{}", r.body);
            assert_eq!(r.body["error"], "payment_type_refused");
        }
        // The refund ends the session and serves no resource.
        let refund = d.get(&d.header(&d.p.session.refund_payload())).await;
        assert_eq!(refund.status, 200, "{}", refund.body);
        assert_eq!(refund.body["session"], "closed");
        assert!(refund.body.get("report").is_none());
        let c = channel_of(&s, &d.p.session.channel).await;
        assert!(c.as_ref().is_none_or(|c| c.settled == 2 * PRICE), "{c:?}");

        // The paying client (`trust-gate pay`, `gate_pay`) loses an answer and resumes.
        let pay = paying(&s, "/session", gated);
        let scheme = pay.session_scheme();
        let offer = pay.offer_of(&d.required, scheme).unwrap();
        let (mut open, _) = pay.open_session(&d.required, &offer, 10).await.unwrap();
        pay.voucher(&mut open, &d.required, &offer, 2)
            .await
            .unwrap();
        // The answer to the second request never came: the client counts it as not paid.
        open.session.charged -= PRICE;
        let resumed = pay
            .voucher(&mut open, &d.required, &offer, 3)
            .await
            .unwrap();
        assert_eq!(
            resumed.settlement.unwrap().extra.unwrap()["channelState"]["chargedCumulativeAmount"],
            (3 * PRICE).to_string(),
            "gated {gated}: resumed from the corrective 402"
        );
        pay.close(&open).await.unwrap();
        let c = channel_of(&s, &open.session.channel).await;
        assert!(c.as_ref().is_none_or(|c| c.settled == 3 * PRICE), "{c:?}");
    }
}

/// The Rust paying client (`trust-gate pay`, `gate_pay`) of the demo's `path`, as the tier-3
/// payer, gated or plain.
fn paying<'a>(s: &'a Services, path: &str, gated: bool) -> ChannelPay<'a> {
    crate::paid_once::paying_at(s, s.d(path), gated)
}

fn second_voucher(p: &BatchPayload) -> Value {
    match p {
        BatchPayload::Voucher { voucher, .. } => json!(voucher),
        _ => unreachable!(),
    }
}

async fn channel_of(s: &Services, address: &Pubkey) -> Option<Channel> {
    chain::account(&s.env.rpc, address)
        .await
        .unwrap()
        .and_then(|a| Channel::decode(&a.data))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_m2_only_the_service_ends_or_claims_a_session() {
    for gated in [false, true] {
        let Some(s) = real(|_| {}).await else {
            return;
        };
        let w = &s.env.world;
        let (mut p, deposit) = Payer::new(&s, gated).await;
        assert_eq!(p.settle(&deposit).await.1["success"], true);
        let v = p.next();
        assert_eq!(p.settle(&v).await.1["success"], true);
        let network = s.facilitator.facilitator.caip2().await.unwrap();
        let config = p.session.config.clone();

        // A stranger's refunds, from what the open transaction publishes (the channel's
        // config) and what it can sign: each refused, the channel still open.
        let stranger = Keypair::new();
        let latest = match p.session.refund_payload() {
            BatchPayload::Refund { voucher, .. } => voucher.unwrap(),
            _ => unreachable!(),
        };
        let bare = json!({"type": "refund", "channelConfig": config});
        let forged_voucher =
            trust_gate_client::vouchers::Voucher::sign(&stranger, &p.session.channel, 2 * PRICE, 0);
        let mut self_authorized: BatchPayload = serde_json::from_value(
            json!({"type": "refund", "channelConfig": config, "voucher": latest}),
        )
        .unwrap();
        self_authorized
            .authorize_close(
                &network,
                &w.facilitator.pubkey(),
                &stranger,
                trust_gate_client::simulate::now_unix() + 60,
            )
            .unwrap();
        let attempts: [(Value, &str); 5] = [
            (bare, Reason::BatchCloseState.wire()),
            (
                json!({"type": "refund", "channelConfig": config, "voucher": latest, "amount": "1"}),
                Reason::BatchCloseAmountUnsupported.wire(),
            ),
            (
                json!({"type": "refund", "channelConfig": config, "voucher": {
                    "channelId": p.session.channel.to_string(),
                    "maxClaimableAmount": (2 * PRICE).to_string(), "expiresAt": 0,
                    "signature": forged_voucher.signature.to_string()}}),
                Reason::BatchVoucherSignature.wire(),
            ),
            (
                json!({"type": "refund", "channelConfig": config, "voucher": latest}),
                Reason::BatchCloseAuthorization.wire(),
            ),
            (
                json!(self_authorized),
                Reason::BatchCloseAuthorization.wire(),
            ),
        ];
        for (payload, why) in attempts {
            let payload: BatchPayload = serde_json::from_value(payload).unwrap();
            let (status, r) = p.settle(&p.body(&payload, PRICE)).await;
            assert_eq!((status, refused(&r)), (400, why), "gated {gated}: {r}");
        }
        assert_eq!(p.channel().await.unwrap().status, Status::Open);

        // Claims and settles: the service's, signed; anyone else's refused.
        let claim: BatchPayload = serde_json::from_value(json!({"type": "claim", "claims": [{
            "channelId": p.session.channel.to_string(), "channelConfig": config,
            "voucher": latest}]}))
        .unwrap();
        let settle: BatchPayload = serde_json::from_value(json!({"type": "settle", "channels": [{
            "channelId": p.session.channel.to_string(), "channelConfig": config}]}))
        .unwrap();
        for payload in [&claim, &settle] {
            let (status, r) = p.settle(&p.body(payload, PRICE)).await;
            assert_eq!(
                (status, refused(&r)),
                (401, Reason::BatchServiceUnauthenticated.wire()),
                "{r}"
            );
        }
        assert_eq!(p.channel().await.unwrap().settled, 0);
        // The same claim twice at once: one transaction.
        let body = p.body(&claim, PRICE);
        let ((s1, r1), (s2, r2)) =
            tokio::join!(p.settle_as_service(&body), p.settle_as_service(&body));
        assert_eq!((s1, s2), (200, 200), "{r1} {r2}");
        assert_eq!(r1["transaction"], r2["transaction"], "coalesced");
        assert_eq!(p.channel().await.unwrap().settled, 2 * PRICE);
        let (status, paid) = p.settle_as_service(&p.body(&settle, PRICE)).await;
        assert_eq!(
            (status, &paid["amount"]),
            (200, &json!((2 * PRICE).to_string())),
            "{paid}"
        );

        // The payer's refund, with the service's authorization: closed at what was accepted.
        let (status, r) = p.settle(&p.refund_body().await).await;
        assert_eq!(status, 200, "{r}");
        assert_eq!(r["amount"], (p.session.deposit - 2 * PRICE).to_string());
        // The same refund again answers the close it made.
        let (_, again) = p.settle(&p.refund_body().await).await;
        assert_eq!(again["transaction"], r["transaction"], "{again}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_l5_an_open_sessions_key_never_expires_in_redis() {
    let Some(s) = real(|_| {}).await else {
        return;
    };
    let redis = trust_gate_test_setup::RedisServer::start();
    let f = facilitator(&s, &s.env.localnet.rpc_url(), Some(&redis), |_| {}).await;
    let (mut p, deposit) = Payer::new(&s, true).await;
    assert_eq!(p.settle_at(&f.url(), &deposit).await["success"], true);
    let v = p.next();
    assert_eq!(p.settle_at(&f.url(), &v).await["success"], true);
    let mut con = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let key = format!("trust-gate:batch:{}", p.session.channel);
    let ttl =
        |con: &mut redis::Connection| -> i64 { redis::cmd("TTL").arg(&key).query(con).unwrap() };
    assert_eq!(ttl(&mut con), -1, "an open session's key has no expiry");
    let refund = p.refund_body().await;
    assert_eq!(p.settle_at(&f.url(), &refund).await["success"], true);
    let left = ttl(&mut con);
    assert!(
        left > 6 * 24 * 3_600,
        "a closed session's key expires a week on: {left}"
    );
}

/// The facilitator's balance, and whether `p`'s channel exists, around `f`.
async fn nothing_sent<F: std::future::Future<Output = Value>>(
    s: &Services,
    p: &Payer<'_>,
    f: F,
) -> Value {
    let fac = s.env.world.facilitator.pubkey();
    let before = lamports(s, &fac).await;
    let r = f.await;
    assert_eq!(lamports(s, &fac).await, before, "nothing sent, no fee: {r}");
    assert!(p.channel().await.is_none(), "no channel: {r}");
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h2_a_wallets_third_unclosed_channel_is_refused_with_nothing_sent() {
    for gated in [false, true] {
        let Some(s) = real(|_| {}).await else {
            return;
        };
        let mut open = Vec::new();
        for _ in 0..2 {
            let (p, deposit) = Payer::new(&s, gated).await;
            assert_eq!(p.settle(&deposit).await.1["success"], true);
            open.push(p);
        }
        let (third, deposit) = Payer::new(&s, gated).await;
        let r = nothing_sent(&s, &third, async { p_settle(&third, &deposit).await }).await;
        assert_eq!(
            r["errorReason"], "payer_channels_limit",
            "gated {gated}: {r}"
        );
        assert!(
            r["errorMessage"]
                .as_str()
                .unwrap()
                .contains("SESSIONS_PER_PAYER"),
            "{r}"
        );
        // The same wallet still pays an upto request (its own bound): the demo's metered route.
        paying(&s, "/metered?units=2", gated).upto().await.unwrap();
        // Once a session closes, the wallet may open another.
        let (status, r) = open[0].settle(&open[0].refund_body().await).await;
        assert_eq!(status, 200, "{r}");
        let (fresh, deposit) = Payer::new(&s, gated).await;
        assert_eq!(fresh.settle(&deposit).await.1["success"], true);
    }
}

async fn p_settle(p: &Payer<'_>, body: &Value) -> Value {
    p.settle(body).await.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h2_the_bound_is_shared_by_replicas_and_counted_again_after_a_restart() {
    let Some(s) = real(|_| {}).await else {
        return;
    };
    let redis = trust_gate_test_setup::RedisServer::start();
    let rpc = s.env.localnet.rpc_url();
    let a = facilitator(&s, &rpc, Some(&redis), |_| {}).await;
    let b = facilitator(&s, &rpc, Some(&redis), |_| {}).await;
    for url in [a.url(), b.url()] {
        let (p, deposit) = Payer::new(&s, false).await;
        assert_eq!(p.settle_at(&url, &deposit).await["success"], true);
    }
    for url in [a.url(), b.url()] {
        let (third, deposit) = Payer::new(&s, false).await;
        let r = nothing_sent(&s, &third, third.settle_at(&url, &deposit)).await;
        assert_eq!(r["errorReason"], "payer_channels_limit", "{url}: {r}");
    }
    drop((a, b));
    // A new store (Redis emptied), and a replica without one: each counts from the chain.
    let fresh = trust_gate_test_setup::RedisServer::start();
    for shared in [Some(&fresh), None] {
        let c = facilitator(&s, &rpc, shared, |_| {}).await;
        let (third, deposit) = Payer::new(&s, false).await;
        let r = nothing_sent(&s, &third, third.settle_at(&c.url(), &deposit)).await;
        assert_eq!(
            r["errorReason"],
            "payer_channels_limit",
            "counted after a restart (Redis {}): {r}",
            shared.is_some()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h2_the_rent_advanced_and_the_fee_payers_balance_are_bounded() {
    let Some(s) = real(|_| {}).await else {
        return;
    };
    let rpc = s.env.localnet.rpc_url();
    let fac = s.env.world.facilitator.pubkey();
    let one = trust_gate_facilitator::advances::rent_of_open(TokenProgram::Token2022, false);
    // Room for one channel's rent in all.
    let f = facilitator(&s, &rpc, None, |c| {
        c.sponsor.max_rent_advanced = one + one / 2
    })
    .await;
    let (p, deposit) = Payer::new(&s, false).await;
    assert_eq!(p.settle_at(&f.url(), &deposit).await["success"], true);
    let (q, deposit) = Payer::new(&s, false).await;
    let r = nothing_sent(&s, &q, q.settle_at(&f.url(), &deposit)).await;
    assert_eq!(r["errorReason"], "rent_advance_limit", "{r}");
    assert!(
        r["errorMessage"]
            .as_str()
            .unwrap()
            .contains("MAX_RENT_ADVANCED_LAMPORTS"),
        "{r}"
    );
    // What it keeps for settlements: an open that would go below it is refused.
    let balance = lamports(&s, &fac).await;
    let g = facilitator(&s, &rpc, None, |c| c.sponsor.min_balance = balance).await;
    let r = nothing_sent(&s, &q, q.settle_at(&g.url(), &deposit)).await;
    assert_eq!(r["errorReason"], "fee_payer_balance_low", "{r}");
    assert!(
        r["errorMessage"]
            .as_str()
            .unwrap()
            .contains("MIN_FEE_PAYER_BALANCE_LAMPORTS"),
        "{r}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_h2_plain_channels_only_in_configured_assets_and_signed_offers_when_asked() {
    let Some(s) = real(|_| {}).await else {
        return;
    };
    let rpc = s.env.localnet.rpc_url();
    let w = &s.env.world;
    // The plain schemes take the demo mint only here: a plain session in the metered mint is
    // refused naming `asset`; a gated one (the payer's policy decides) opens.
    let f = facilitator(&s, &rpc, None, |c| {
        c.sponsor.plain_assets =
            trust_gate_facilitator::advances::assets::PlainAssets::List(vec![w.mint()]);
    })
    .await;
    let (p, deposit) = Payer::new(&s, false).await;
    let r = nothing_sent(&s, &p, p.settle_at(&f.url(), &deposit)).await;
    assert_eq!(r["errorReason"], Reason::BatchInvalidRequirements, "{r}");
    assert!(r["errorMessage"].as_str().unwrap().contains("asset"), "{r}");
    let (g, deposit) = Payer::new(&s, true).await;
    assert_eq!(g.settle_at(&f.url(), &deposit).await["success"], true);

    // Signed offers: a plain offer is taken only as a trusted service signed it.
    let f = facilitator(&s, &rpc, None, |c| c.sponsor.signed_plain_offers = true).await;
    let signers = [
        (None, false),
        (Some(Keypair::new()), false),
        (Some(w.service_key.insecure_clone()), true),
    ];
    for (signer, taken) in signers {
        let (p, mut deposit) = Payer::new(&s, false).await;
        let mut r = p.requirements.clone();
        if let Some(k) = &signer {
            x402::sign_plain_offer(k, &mut r, trust_gate_client::simulate::now_unix());
        }
        deposit["paymentPayload"]["accepted"] = json!(r);
        deposit["paymentRequirements"]["extra"] = json!(r.extra);
        let answer = p.settle_at(&f.url(), &deposit).await;
        assert_eq!(answer["success"] == true, taken, "{answer}");
        if !taken {
            assert!(
                answer["errorMessage"]
                    .as_str()
                    .unwrap()
                    .contains("offerSignature"),
                "{answer}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit5_l6_an_upto_claim_collects_after_a_top_up_and_within_the_grace_period() {
    const CEILING: u64 = 2_000_000;
    const TOP_UP: u64 = 500_000;
    const CHARGE: u64 = 1_250_000;
    for gated in [false, true] {
        for top_up in [true, false] {
            let Some(s) = real(|_| {}).await else {
                return;
            };
            let w = &s.env.world;
            let c = if gated {
                crate::upto::Client::gated(&s).await
            } else {
                crate::upto::Client::of(&s, w.metered_mint(), TokenProgram::Token2022).await
            };
            let (open, payload) = c.payload(salt()).await;
            let pay_to = w.service.owner.pubkey();
            let (payer_before, paid_before) =
                (c.tokens(&c.payer.pubkey()).await, c.tokens(&pay_to).await);
            let mut deposit = payload.clone();
            deposit["type"] = "deposit".into();
            let d = c.post("/settle", &c.body(&deposit, CEILING)).await;
            assert_eq!(d["success"], true, "{d}");
            // The payer moves before the server's claim: more deposit, or its request_close.
            let ix = if top_up {
                channels::top_up(
                    &c.payer.pubkey(),
                    &open.channel(),
                    &w.metered_mint(),
                    TokenProgram::Token2022,
                    TOP_UP,
                )
            } else {
                channels::request_close(&c.payer.pubkey(), &open.channel())
            };
            s.env.send(&[ix], &[&c.payer]).await.unwrap();
            let claimed = c
                .post(
                    "/settle",
                    &c.claim(&payload, &open.channel(), CHARGE, &c.server),
                )
                .await;
            assert_eq!(
                claimed["success"], true,
                "gated {gated}, top-up {top_up}: the server's claim collects: {claimed}"
            );
            assert_eq!(c.tokens(&pay_to).await, paid_before + CHARGE);
            assert_eq!(
                c.tokens(&c.payer.pubkey()).await,
                payer_before - CHARGE,
                "the rest (the top-up too) back to the payer"
            );
            let ch = channel_of(&s, &open.channel()).await;
            assert!(
                ch.as_ref()
                    .is_none_or(|ch| (ch.status, ch.settled) == (Status::Distributed, CHARGE)),
                "{ch:?}"
            );
        }
    }
}
