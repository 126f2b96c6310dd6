//! x402's `batch-settlement` scheme (client mode) through the facilitator over HTTP, plain and
//! gated (`trust-gate-batch-settlement`), on the localnet `trust-gate up` runs: a session
//! opened by its first request, paid request by request with vouchers checked off chain, each
//! refusal named, the vouchers applied on chain by the server's claim and by the background
//! redemption, and the close (sealed at the latest voucher, through the gate when gated, and
//! distributed) by the client's refund and by the payer's kill switch. The payer side is the
//! paying clients' (`trust_gate_pay::session`); the test plays the resource server.
//!
//! Channels pay the payee and refund the payer in one distribute, which on this localnet
//! needs the demo world's Token-2022 mint (see docs/channels.md): every session here is in it,
//! under the demo payers' metered policy.

use crate::services::{self, Services};
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use std::time::{Duration, Instant};
use trust_gate_client::channels::{Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::{chain, simulate::now_unix};
use trust_gate_migrations::demo;
use trust_gate_pay::session::{PayerSession, SessionGate, SessionTerms};
use trust_gate_x402::batch::{self, BatchExtra, BatchPayload};
use trust_gate_x402::reason::Reason;
use trust_gate_x402::{self as x402, GateExtension, PaymentRequirements};

const PRICE: u64 = 1_000;
const DEPOSIT: u64 = 100_000;
const RESOURCE: &str = "http://127.0.0.1/metered";

pub(crate) struct Payer<'a> {
    pub s: &'a Services,
    pub owner: Keypair,
    pub asset: Pubkey,
    pub requirements: PaymentRequirements,
    pub session: PayerSession,
}

/// The offer of a route priced at `price`, gated or not, signed by the demo service.
pub(crate) async fn offer(
    s: &Services,
    gated: bool,
    payer_asset: &Pubkey,
    price: u64,
) -> PaymentRequirements {
    let w = &s.env.world;
    let network = s.facilitator.facilitator.caip2().await.unwrap();
    let extra = json!({
        "feePayer": w.facilitator.pubkey().to_string(),
        "receiverAuthorizer": w.service_key.pubkey().to_string(),
        "withdrawDelay": 900,
        "tokenProgram": TokenProgram::Token2022.id().to_string(),
        "paymentFlow": "authorization",
        "memo": "session-1",
    });
    let mut r = PaymentRequirements {
        scheme: if gated {
            batch::SCHEME_GATED_BATCH
        } else {
            batch::SCHEME_BATCH
        }
        .into(),
        network,
        amount: price.to_string(),
        asset: w.metered_mint().to_string(),
        pay_to: w.service.owner.pubkey().to_string(),
        max_timeout_seconds: 300,
        extra: extra.as_object().unwrap().clone(),
    };
    if gated {
        let mut g = GateExtension {
            payer_agent_asset: payer_asset.to_string(),
            payee_agent_asset: w.service.asset().to_string(),
            payee_recipient: r.pay_to.clone(),
            policy_id: demo::METERED_POLICY_ID,
            issued_at: now_unix(),
            holdback: None,
            service_signature: String::new(),
        };
        x402::sign_challenge(&w.service_key, &r, RESOURCE, &mut g);
        r.extra.insert(
            x402::GATE_EXTENSION.into(),
            serde_json::to_value(&g).unwrap(),
        );
    }
    r
}

impl<'a> Payer<'a> {
    /// The tier-3 demo payer's session, opened with a fresh salt (not yet sent).
    pub(crate) async fn new(s: &'a Services, gated: bool) -> (Payer<'a>, Value) {
        let asset = s.env.world.payer(3).unwrap().asset();
        let requirements = offer(s, gated, &asset, PRICE).await;
        let (p, deposit) = Payer::open(s, requirements, gated).await;
        let body = p.body(&deposit, PRICE);
        (p, body)
    }

    /// The tier-3 demo payer's session of `requirements` (a gated or plain offer of the
    /// metered mint paying the demo service), opened with a fresh salt, and its deposit's
    /// payload (not yet sent).
    pub(crate) async fn open(
        s: &'a Services,
        requirements: PaymentRequirements,
        gated: bool,
    ) -> (Payer<'a>, BatchPayload) {
        let w = &s.env.world;
        let agent = w.payer(3).unwrap();
        let owner = agent.owner.insecure_clone();
        let asset = agent.asset();
        let extra: BatchExtra =
            serde_json::from_value(Value::Object(requirements.extra.clone())).unwrap();
        let tables = s.env.tables().await;
        let (tx, mut session) = SessionTerms {
            builder: &s.env.b,
            extra: &extra,
            mint: requirements.asset.parse().unwrap(),
            token_program: TokenProgram::Token2022,
            pay_to: requirements.pay_to.parse().unwrap(),
            payer: &owner,
            voucher_key: Keypair::new(),
            deposit: DEPOSIT,
            salt: salt(),
            open_slot: s.env.rpc.get_slot().await.unwrap(),
            gate: gated.then(|| SessionGate {
                payer_asset: asset,
                payee_asset: w.service.asset(),
                policy_id: demo::METERED_POLICY_ID,
                attestations: Default::default(),
                approval: None,
            }),
            tables: &tables,
            blockhash: s.env.rpc.get_latest_blockhash().await.unwrap(),
        }
        .open()
        .unwrap();
        let deposit = session.deposit_payload(&tx, PRICE).unwrap();
        let p = Payer {
            s,
            owner,
            asset,
            requirements,
            session,
        };
        (p, deposit)
    }

    /// Sends the next vouchers to the facilitator at `url` until one is refused, within 20 s
    /// of `since`: the refusal's reason (the refused voucher is taken back from the count).
    pub(crate) async fn next_until_refused(&mut self, url: &str, since: Instant) -> String {
        loop {
            let v = self.next();
            let r = self.settle_at(url, &v).await;
            if r["success"] == false {
                self.session.charged -= PRICE;
                return r["errorReason"].as_str().unwrap().to_string();
            }
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "{url} still takes vouchers {:?} after",
                since.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub(crate) fn body(&self, payload: &BatchPayload, price: u64) -> Value {
        let mut r = self.requirements.clone();
        r.amount = price.to_string();
        json!({
            "x402Version": 2,
            "paymentPayload": {
                "x402Version": 2,
                "resource": {"url": RESOURCE},
                "accepted": self.requirements,
                "payload": payload,
            },
            "paymentRequirements": r,
        })
    }

    /// The session's refund as the demo service forwards it: with its close authorization
    /// (the service is the channel's receiver authorizer).
    pub(crate) async fn refund_body(&self) -> Value {
        let mut refund = self.session.refund_payload();
        let network = self.s.facilitator.facilitator.caip2().await.unwrap();
        let w = &self.s.env.world;
        refund
            .authorize_close(
                &network,
                &w.facilitator.pubkey(),
                &w.service_key,
                now_unix() + 300,
            )
            .unwrap();
        self.body(&refund, PRICE)
    }

    /// POST /settle of a server's own payload (a claim, a settle, a seal), signed as the demo
    /// service (`X-Service-Authorization`).
    pub(crate) async fn settle_as_service(&self, body: &Value) -> (u16, Value) {
        let bytes = serde_json::to_vec(body).unwrap();
        let auth = x402::sign_service_request(
            &self.s.env.world.service_key,
            "/settle",
            now_unix(),
            &bytes,
        );
        let res = self
            .s
            .http
            .post(self.s.f("/settle"))
            .header(x402::X_SERVICE_AUTHORIZATION, auth)
            .header("content-type", "application/json")
            .body(bytes)
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), res.json().await.unwrap())
    }

    /// The next request's voucher body.
    pub(crate) fn next(&mut self) -> Value {
        let p = self.session.voucher_payload(PRICE).unwrap();
        self.body(&p, PRICE)
    }

    pub(crate) async fn settle(&self, body: &Value) -> (u16, Value) {
        let (status, res) = self.s.post("/settle", body).await;
        (status, res.json().await.unwrap())
    }

    /// POST /settle of the facilitator at `url` (a replica).
    pub(crate) async fn settle_at(&self, url: &str, body: &Value) -> Value {
        crate::faults::settle_at(self.s, url, body).await.1
    }

    pub(crate) async fn channel(&self) -> Option<Channel> {
        chain::account(&self.s.env.rpc, &self.session.channel)
            .await
            .unwrap()
            .and_then(|a| Channel::decode(&a.data))
    }

    pub(crate) fn ata(&self, owner: &Pubkey) -> Pubkey {
        TokenProgram::Token2022.associated_account(owner, &self.s.env.world.metered_mint())
    }
}

/// A salt no other test's channel has.
pub(crate) fn salt() -> u64 {
    let k = Keypair::new().pubkey().to_bytes();
    u64::from_le_bytes(k[..8].try_into().unwrap())
}

pub(crate) fn refused(body: &Value) -> &str {
    assert_eq!(body["success"], false, "{body}");
    body["errorReason"].as_str().unwrap()
}

pub(crate) async fn lamports(s: &Services, key: &Pubkey) -> u64 {
    s.env.rpc.get_balance(key).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_session_pays_per_request_off_chain_and_closes_through_the_gate() {
    let s = services::start().await;
    let w = &s.env.world;
    let fac = w.facilitator.pubkey();
    let (mut p, deposit) = Payer::new(&s, true).await;
    let pay_to = p.ata(&w.service.owner.pubkey());
    let payer_ata = p.ata(&p.owner.pubkey());
    let (to_before, payer_before) = (
        s.env.token_balance(&pay_to).await,
        s.env.token_balance(&payer_ata).await,
    );
    let fac_before = lamports(&s, &fac).await;

    // /verify checks the deposit without sending it.
    let (status, v) = s.post("/verify", &deposit).await;
    let v: Value = v.json().await.unwrap();
    assert_eq!((status, &v["isValid"]), (200, &json!(true)), "{v}");
    assert!(p.channel().await.is_none());

    let (status, d) = p.settle(&deposit).await;
    assert_eq!((status, &d["success"]), (200, &json!(true)), "{d}");
    assert_eq!(d["amount"], DEPOSIT.to_string());
    assert_eq!(
        d["extra"]["channelState"]["chargedCumulativeAmount"],
        PRICE.to_string()
    );
    let c = p.channel().await.unwrap();
    assert_eq!((c.status, c.deposit, c.settled), (Status::Open, DEPOSIT, 0));
    let record = s.env.b.pda.channel_record(&p.session.channel);
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_some());
    // The same deposit again (a client resending after a lost answer) gets the outcome of
    // its own open: the same transaction, nothing opened or charged twice.
    let (status, again) = p.settle(&deposit).await;
    assert_eq!((status, &again["success"]), (200, &json!(true)), "{again}");
    assert_eq!(again["replayed"], json!(true), "{again}");
    assert_eq!(again["transaction"], d["transaction"]);
    assert_eq!(
        again["extra"]["channelState"]["chargedCumulativeAmount"],
        PRICE.to_string()
    );
    assert_eq!(p.channel().await.unwrap().deposit, DEPOSIT);

    // Vouchers: each one the price more, kept off chain.
    let sigs_before = lamports(&s, &fac).await;
    for i in 2..=20u64 {
        let body = p.next();
        let (status, r) = p.settle(&body).await;
        assert_eq!((status, &r["success"]), (200, &json!(true)), "{r}");
        assert_eq!(r["transaction"], "");
        assert_eq!(
            r["extra"]["channelState"]["chargedCumulativeAmount"],
            (i * PRICE).to_string()
        );
        assert_eq!(
            r["extra"]["commitmentId"],
            format!("{}:{}", p.session.channel, i * PRICE)
        );
        if i == 20 {
            // The same voucher again pays for nothing: refused, with the session's state and
            // the payer's own voucher of it, from which a server answers its corrective 402.
            let (_, again) = p.settle(&body).await;
            assert_eq!(refused(&again), Reason::BatchCumulativeAmountMismatch);
            assert_eq!(
                again["extra"]["channelState"], r["extra"]["channelState"],
                "{again}"
            );
            assert_eq!(
                again["extra"]["voucherState"]["signature"],
                body["paymentPayload"]["payload"]["voucher"]["signature"]
            );
        }
    }
    assert_eq!(
        lamports(&s, &fac).await,
        sigs_before,
        "a voucher sends nothing"
    );
    assert_eq!(p.channel().await.unwrap().settled, 0);

    // Refusals, each named; the session is unchanged by them.
    let mut skip = p.session.voucher_payload(PRICE).unwrap();
    if let BatchPayload::Voucher { voucher, .. } = &mut skip {
        let v = p.session.voucher(PRICE).unwrap();
        *voucher = v;
    }
    assert_eq!(
        refused(&p.settle(&p.body(&skip, PRICE)).await.1),
        Reason::BatchCumulativeAmountMismatch
    );
    p.session.charged = 20 * PRICE;
    let over_cap = p.session.voucher_payload(5_000_001).err();
    assert!(
        over_cap.is_some(),
        "the SDK refuses a voucher past the deposit"
    );
    let mut body = p.next();
    p.session.charged = 20 * PRICE;
    body["paymentRequirements"]["amount"] = json!("5000001");
    assert_eq!(
        refused(&p.settle(&body).await.1),
        Reason::BatchPriceOverPerPaymentCap
    );
    let mut forged = p.next();
    p.session.charged = 20 * PRICE;
    let other = trust_gate_client::vouchers::Voucher::sign(
        &Keypair::new(),
        &p.session.channel,
        21 * PRICE,
        0,
    );
    forged["paymentPayload"]["payload"]["voucher"]["signature"] =
        json!(other.signature.to_string());
    assert_eq!(
        refused(&p.settle(&forged).await.1),
        Reason::BatchVoucherSignature
    );
    let mut expiring = p.next();
    p.session.charged = 20 * PRICE;
    expiring["paymentPayload"]["payload"]["voucher"]["expiresAt"] = json!(now_unix() + 60);
    assert_eq!(
        refused(&p.settle(&expiring).await.1),
        Reason::BatchVoucherExpiry
    );

    // The server mode's payloads are named as unsupported.
    let mut authorization = p.next();
    p.session.charged = 20 * PRICE;
    authorization["paymentPayload"]["payload"]["type"] = json!("authorization");
    assert_eq!(
        refused(&p.settle(&authorization).await.1),
        Reason::BatchServerModeUnsupported
    );

    // The refund: sealed at the latest voucher, closed through the gate, distributed.
    let refund = p.refund_body().await;
    let (status, r) = p.settle(&refund).await;
    assert_eq!((status, &r["success"]), (200, &json!(true)), "{r}");
    let charged = 20 * PRICE;
    assert_eq!(r["amount"], (DEPOSIT - charged).to_string());
    assert_eq!(s.env.token_balance(&pay_to).await - to_before, charged);
    assert_eq!(
        payer_before - s.env.token_balance(&payer_ata).await,
        charged
    );
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_none());
    let c = p.channel().await.unwrap();
    assert_eq!((c.status, c.settled), (Status::Distributed, charged));
    // The gate's receipt of the close (the payee's feedback) names the channel.
    let receipt = s.env.b.pda.channel_receipt(&fac, &p.session.channel);
    assert!(chain::account(&s.env.rpc, &receipt)
        .await
        .unwrap()
        .is_some());
    // What the facilitator's lamports paid for: the open's and the close's signatures and the
    // rent still held (the channel until its reclaim, the receipt until its dispute window).
    let held = lamports(&s, &p.session.channel).await + lamports(&s, &receipt).await;
    let spent = fac_before - lamports(&s, &fac).await;
    assert_eq!(
        spent - held,
        4 * 5_000,
        "two signatures the open, two the close (one Ed25519)"
    );

    // A closed session takes no more vouchers.
    let late = p.next();
    assert_eq!(refused(&p.settle(&late).await.1), Reason::BatchCloseState);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_the_payer_stops_its_vouchers_and_closes_its_channel() {
    let s = services::start_with(|c| c.sessions.poll = Duration::from_millis(100)).await;
    let w = &s.env.world;
    let (mut p, deposit) = Payer::new(&s, true).await;
    assert_eq!(p.settle(&deposit).await.1["success"], true);
    for _ in 0..2 {
        let body = p.next();
        assert_eq!(p.settle(&body).await.1["success"], true);
    }
    let pay_to = p.ata(&w.service.owner.pubkey());
    let to_before = s.env.token_balance(&pay_to).await;
    let pause = s
        .env
        .b
        .set_killswitch(&p.owner.pubkey(), &[], &p.asset, true);
    s.env.send(&[pause], &[&p.owner]).await.unwrap();
    let paused_at = Instant::now();
    // Within the poll (and the background round that closes), vouchers are refused...
    let why = p.next_until_refused(&s.facilitator.url(), paused_at).await;
    assert!(
        why == Reason::BatchPayerPaused
            || why == Reason::BatchChannelClosing
            || why == Reason::BatchCloseState,
        "{why}"
    );
    let refused_after = paused_at.elapsed();
    eprintln!("vouchers refused {refused_after:?} after the pause landed (poll 100 ms)");
    // ... and the channel is closed at the latest voucher accepted before it.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let c = p.channel().await.unwrap();
        if c.status == Status::Distributed {
            let accepted = p.session.charged;
            assert_eq!(c.settled, accepted);
            assert_eq!(s.env.token_balance(&pay_to).await - to_before, accepted);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the paused payer's channel is closed: {c:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let record = s.env.b.pda.channel_record(&p.session.channel);
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_none());
    let unpause = s
        .env
        .b
        .set_killswitch(&p.owner.pubkey(), &[], &p.asset, false);
    s.env.send(&[unpause], &[&p.owner]).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retiring_the_payers_policy_stops_its_vouchers_and_closes_its_channel() {
    let s = services::start_with(|c| c.sessions.poll = Duration::from_millis(100)).await;
    let (mut p, deposit) = Payer::new(&s, true).await;
    assert_eq!(p.settle(&deposit).await.1["success"], true);
    let body = p.next();
    assert_eq!(p.settle(&body).await.1["success"], true);
    let retire = s
        .env
        .b
        .retire_policy(&p.owner.pubkey(), &[], &p.asset, demo::METERED_POLICY_ID);
    s.env.send(&[retire], &[&p.owner]).await.unwrap();
    let retired_at = Instant::now();
    let why = p.next_until_refused(&s.facilitator.url(), retired_at).await;
    assert!(
        why == Reason::BatchPolicyRetired
            || why == Reason::BatchChannelClosing
            || why == Reason::BatchCloseState,
        "{why}"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let c = p.channel().await.unwrap();
        if c.status == Status::Distributed {
            assert_eq!(c.settled, p.session.charged);
            break;
        }
        assert!(Instant::now() < deadline, "the channel is closed: {c:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_closed_at_its_latest_voucher() {
    const IDLE: u64 = 3;
    let s = services::start_with(|c| {
        c.sessions.poll = Duration::from_millis(100);
        c.sessions.max_idle = Some(Duration::from_secs(IDLE));
    })
    .await;
    // The scheme's `maxIdleSecs`, listed for both batch kinds.
    let supported = s.get_json(s.f("/supported")).await;
    let idle: Vec<&Value> = supported["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["scheme"].as_str().unwrap().ends_with("batch-settlement"))
        .map(|k| &k["extra"]["maxIdleSecs"])
        .collect();
    assert_eq!(idle, vec![&json!(IDLE), &json!(IDLE)], "{supported}");

    let (mut p, deposit) = Payer::new(&s, false).await;
    let payer_ata = p.ata(&p.owner.pubkey());
    let payer_before = s.env.token_balance(&payer_ata).await;
    assert_eq!(p.settle(&deposit).await.1["success"], true);
    let body = p.next();
    assert_eq!(p.settle(&body).await.1["success"], true);
    let last_voucher = Instant::now();
    let pay_to = p.ata(&s.env.world.service.owner.pubkey());
    let to_before = s.env.token_balance(&pay_to).await;
    assert_eq!(p.channel().await.unwrap().status, Status::Open);
    // No voucher for IDLE seconds: closed at the latest one, the rest back to the payer.
    let deadline = Instant::now() + Duration::from_secs(IDLE + 20);
    loop {
        let c = p.channel().await.unwrap();
        if c.status == Status::Distributed {
            assert!(
                last_voucher.elapsed() >= Duration::from_secs(IDLE - 1),
                "closed {:?} after the last voucher, before the idle time",
                last_voucher.elapsed()
            );
            assert_eq!(c.settled, p.session.charged);
            assert_eq!(s.env.token_balance(&pay_to).await - to_before, 2 * PRICE);
            assert_eq!(
                payer_before - s.env.token_balance(&payer_ata).await,
                2 * PRICE,
                "the unspent deposit is back with the payer"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the idle channel is closed: {c:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let late = p.next();
    assert_eq!(refused(&p.settle(&late).await.1), Reason::BatchCloseState);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_session_is_claimed_by_the_server_and_redeemed_in_the_background() {
    let s = services::start_with(|c| {
        c.sessions.poll = Duration::from_millis(100);
        c.sessions.redeem_amount = 3 * PRICE;
    })
    .await;
    let w = &s.env.world;
    let (mut p, deposit) = Payer::new(&s, false).await;
    let d = p.settle(&deposit).await.1;
    assert_eq!(d["success"], true, "{d}");
    // No gate: no record.
    let record = s.env.b.pda.channel_record(&p.session.channel);
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_none());

    // Its voucher offered under the gated scheme: a gated route takes only gated channels.
    let mut as_gated = p.next();
    p.session.charged -= PRICE;
    for at in [
        "/paymentPayload/accepted/scheme",
        "/paymentRequirements/scheme",
    ] {
        *as_gated.pointer_mut(at).unwrap() = json!(batch::SCHEME_GATED_BATCH);
    }
    let r = p.settle(&as_gated).await.1;
    assert_eq!(refused(&r), Reason::BatchChannelIdMismatch, "{r}");
    assert!(
        r["errorMessage"]
            .as_str()
            .unwrap()
            .contains("without the gate"),
        "{r}"
    );

    // The server's claim applies the latest voucher now.
    let body = p.next();
    let r = p.settle(&body).await.1;
    let voucher = r["extra"]["commitmentId"].clone();
    assert!(voucher.is_string());
    let latest = body["paymentPayload"]["payload"]["voucher"].clone();
    let claim = json!({
        "type": "claim",
        "claims": [{
            "channelId": p.session.channel.to_string(),
            "channelConfig": p.session.config,
            "voucher": latest,
        }],
    });
    let payload: BatchPayload = serde_json::from_value(claim).unwrap();
    let r = p.settle_as_service(&p.body(&payload, PRICE)).await.1;
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(
        r["extra"]["accepts"][0]["totalClaimed"],
        (2 * PRICE).to_string()
    );
    assert_eq!(p.channel().await.unwrap().settled, 2 * PRICE);
    // The server's settle pays it out; the channel stays open.
    let pay_to = p.ata(&w.service.owner.pubkey());
    let to_before = s.env.token_balance(&pay_to).await;
    let settle = json!({
        "type": "settle",
        "channels": [{"channelId": p.session.channel.to_string(), "channelConfig": p.session.config}],
    });
    let payload: BatchPayload = serde_json::from_value(settle).unwrap();
    let r = p.settle_as_service(&p.body(&payload, PRICE)).await.1;
    assert_eq!(
        (&r["success"], &r["amount"]),
        (&json!(true), &json!((2 * PRICE).to_string())),
        "{r}"
    );
    assert_eq!(s.env.token_balance(&pay_to).await - to_before, 2 * PRICE);
    assert_eq!(p.channel().await.unwrap().status, Status::Open);

    // Three prices unapplied: the background round applies them.
    for _ in 0..3 {
        let body = p.next();
        assert_eq!(p.settle(&body).await.1["success"], true);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.channel().await.unwrap().settled != 5 * PRICE {
        assert!(
            Instant::now() < deadline,
            "the background round applies the vouchers"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Past an upto claim's longest wait the crank leaves the session's channel alone: it is
    // not an abandoned claim (its open binds the receiver's authorizer).
    s.env.localnet.warp(2 * 3_600).await.unwrap();
    let round = s.facilitator.facilitator.reclaim_once().await.unwrap();
    assert_eq!(round.channels_unclaimed_closed, 0, "{round:?}");
    assert_eq!(p.channel().await.unwrap().status, Status::Open);

    // A deposit whose open lacks the binding memo is refused before anything is sent.
    let (q, _) = Payer::new(&s, false).await;
    let extra: BatchExtra =
        serde_json::from_value(Value::Object(q.requirements.extra.clone())).unwrap();
    let unbound = BatchExtra {
        receiver_authorizer: Pubkey::new_unique().to_string(),
        ..extra
    };
    let (tx, mut session) = SessionTerms {
        builder: &s.env.b,
        extra: &unbound,
        mint: w.metered_mint(),
        token_program: TokenProgram::Token2022,
        pay_to: w.service.owner.pubkey(),
        payer: &q.owner,
        voucher_key: Keypair::new(),
        deposit: DEPOSIT,
        salt: salt(),
        open_slot: s.env.rpc.get_slot().await.unwrap(),
        gate: None,
        tables: &[],
        blockhash: s.env.rpc.get_latest_blockhash().await.unwrap(),
    }
    .open()
    .unwrap();
    let payload = session.deposit_payload(&tx, PRICE).unwrap();
    let mut body = q.body(&payload, PRICE);
    body["paymentPayload"]["payload"]["channelConfig"]["receiverAuthorizer"] =
        json!(q.requirements.extra["receiverAuthorizer"]);
    let (_, r) = q.settle(&body).await;
    assert_eq!(refused(&r), Reason::BatchSetupTransaction, "{r}");
    assert!(
        r["errorMessage"].as_str().unwrap().contains("binding Memo"),
        "{r}"
    );

    // The refund closes it at the latest voucher: the payee gets the three prices not yet
    // paid out, the payer the rest. Distributed this late after its open, the channel is
    // deleted in the same instruction (its rent back at once).
    let payer_ata = p.ata(&p.owner.pubkey());
    let (to_before, payer_before) = (
        s.env.token_balance(&pay_to).await,
        s.env.token_balance(&payer_ata).await,
    );
    let r = p.settle(&p.refund_body().await).await.1;
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["amount"], (DEPOSIT - 5 * PRICE).to_string());
    assert_eq!(s.env.token_balance(&pay_to).await - to_before, 3 * PRICE);
    assert_eq!(
        s.env.token_balance(&payer_ata).await - payer_before,
        DEPOSIT - 5 * PRICE
    );
    assert!(p.channel().await.is_none());
}

/// Two replicas on one Redis share each session's watermark: a deposit on one, vouchers on
/// the other, the same voucher again refused on either; of two different vouchers that each pay on
/// top of the same watermark, sent at once to the two replicas, exactly one is accepted (the
/// compare-and-replace); the payer's pause stops its vouchers on both replicas and one of them
/// closes the channel at exactly what was accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_on_redis_share_a_sessions_watermark() {
    let s = services::start().await;
    let redis = trust_gate_test_setup::RedisServer::start();
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let mut c = services::config(&s.env, &s.env.localnet.rpc_url());
        c.redis_url = Some(redis.url());
        c.sessions.poll = Duration::from_millis(100);
        replicas.push(
            trust_gate_facilitator::start(c, services::loopback())
                .await
                .unwrap(),
        );
    }
    let (a, b) = (replicas[0].url(), replicas[1].url());
    let (mut p, deposit) = Payer::new(&s, true).await;
    let d = p.settle_at(&a, &deposit).await;
    assert_eq!(d["success"], true, "{d}");
    let voucher = p.next();
    let on_b = p.settle_at(&b, &voucher).await;
    assert_eq!(on_b["success"], true, "{on_b}");
    let again = p.settle_at(&a, &voucher).await;
    assert_eq!(
        refused(&again),
        Reason::BatchCumulativeAmountMismatch,
        "the same voucher on the other replica"
    );
    assert_eq!(
        again["extra"]["channelState"],
        on_b["extra"]["channelState"]
    );

    let mut accepted = 2 * PRICE;
    for _ in 0..10 {
        // One voucher pays one price on top of the watermark, the other two prices.
        let base = p.session.charged;
        let one = p.next();
        p.session.charged = base;
        let payload = p.session.voucher_payload(2 * PRICE).unwrap();
        let two = p.body(&payload, 2 * PRICE);
        let (r1, r2) = tokio::join!(p.settle_at(&a, &one), p.settle_at(&b, &two));
        let won: Vec<bool> = [&r1, &r2].iter().map(|r| r["success"] == true).collect();
        assert_eq!(won.iter().filter(|w| **w).count(), 1, "{r1} {r2}");
        let loser = if won[0] { &r2 } else { &r1 };
        assert_eq!(
            loser["errorReason"],
            Reason::BatchCumulativeAmountMismatch,
            "{loser}"
        );
        accepted += if won[0] { PRICE } else { 2 * PRICE };
        p.session.charged = accepted;
    }
    let key = format!("trust-gate:batch:{}", p.session.channel);
    let stored: String = redis::cmd("GET")
        .arg(&key)
        .query(
            &mut redis::Client::open(redis.url())
                .unwrap()
                .get_connection()
                .unwrap(),
        )
        .unwrap();
    assert!(
        stored.contains(&format!("\"accepted\":{accepted}")),
        "{stored}"
    );

    let pause = s
        .env
        .b
        .set_killswitch(&p.owner.pubkey(), &[], &p.asset, true);
    s.env.send(&[pause], &[&p.owner]).await.unwrap();
    let paused_at = Instant::now();
    let deadline = paused_at + Duration::from_secs(20);
    for url in [&a, &b] {
        let why = p.next_until_refused(url, paused_at).await;
        assert!(
            [
                Reason::BatchPayerPaused.wire(),
                Reason::BatchChannelClosing.wire(),
                Reason::BatchCloseState.wire()
            ]
            .contains(&why.as_str()),
            "{url}: {why}"
        );
    }
    let accepted = p.session.charged;
    loop {
        let c = p.channel().await.unwrap();
        if c.status == Status::Distributed {
            assert_eq!(c.settled, accepted);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the paused payer's channel is closed: {c:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let unpause = s
        .env
        .b
        .set_killswitch(&p.owner.pubkey(), &[], &p.asset, false);
    s.env.send(&[unpause], &[&p.owner]).await.unwrap();
}
