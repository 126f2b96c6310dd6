//! `trust-gate bench session`: what many small payments cost through a gated
//! `batch-settlement` session (`trust-gate-batch-settlement`), on an in-process localnet with
//! the facilitator over HTTP on loopback.
//!
//! For N = 10, 100 and 1 000: the demo's tier-3 payer opens one channel of N prices under its
//! metered policy (its first request), pays N requests (the first with the open, the others
//! with a voucher each), ends the session (the refund: sealed, closed through the gate,
//! distributed), the clock is moved past the channel's slot window and the receipt's dispute
//! window, and the facilitator's crank runs until every lamport of rent is back. Then one
//! line each: `session: N payments in K transactions, net L lamports per payment`, where K
//! counts every transaction the facilitator signed for the session (its history's new
//! signatures) and L its balance's loss over the whole life, divided by N.
//!
//! Then one 10-second run over HTTP with 4 channels, 4 clients, each paying with a voucher of
//! its own channel (one POST /settle a voucher, which runs every check of /verify and keeps
//! it, in process), next to GET /healthz driven the same way in the same run: `vouchers: V/s over HTTP, R x the /healthz hop` (R = V / the
//! /healthz rate). The run's sessions are closed after it and each channel must have settled
//! exactly what its accepted vouchers add up to.

use clap::Args;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use trust_gate_client::channels::{Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::{chain, receipts, RpcClient};
use trust_gate_demo::{challenge, DemoConfig};
use trust_gate_localnet::Localnet;
use trust_gate_migrations::DemoWorld;
use trust_gate_pay::session::{PayerSession, SessionGate, SessionTerms};
use trust_gate_x402::batch::{BatchExtra, BatchPayload, BatchVoucher};
use trust_gate_x402::PaymentRequirements;

/// A request's price in the session runs (0.001 of the demo's 6-decimal mint).
const PRICE: u64 = 1_000;
/// The throughput run's: one base unit, so that its channels never run dry.
const THROUGHPUT_PRICE: u64 = 1;
const THROUGHPUT_DEPOSIT: u64 = 1_000_000;
const THROUGHPUT_CHANNELS: usize = 4;

#[derive(Args)]
pub struct SessionBench {
    /// Seconds of the voucher run (1 to 60).
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
}

/// The bench's world: the localnet, the facilitator, the demo's service terms.
struct Bench {
    localnet: Localnet,
    rpc: RpcClient,
    world: DemoWorld,
    url: String,
    http: reqwest::Client,
    demo: DemoConfig,
    caip2: String,
    server: trust_gate_facilitator::Server,
}

/// One payer session and the offer it pays.
struct Paying {
    session: PayerSession,
    offer: PaymentRequirements,
}

pub async fn run(a: SessionBench) -> Result<(), String> {
    if a.seconds == 0 || a.seconds > 60 {
        return Err("--seconds must be between 1 and 60".into());
    }
    let (localnet, world) = super::seeded_localnet().await?;
    let loopback = std::net::Ipv4Addr::LOCALHOST.into();
    let mut args = crate::services::FacilitatorArgs::for_demo(
        loopback,
        0,
        &localnet.rpc_url(),
        "solana-localnet",
    );
    // No limit on one caller, no crank but the bench's own rounds, and vouchers applied on
    // chain only at the close (the session's count is then the least a session needs).
    args.limits.rate_limit_per_address = Some("0".into());
    args.limits.reclaim_interval_secs = Some("0".into());
    // The bench's rounds reclaim the sessions alone: a pull of the demo's subscription would
    // add its fee and its receipt's rent to what the payments cost.
    args.limits.pull_subscriptions = Some("false".into());
    args.limits.batch_redeem_age_secs = Some("86400".into());
    // The voucher run's channels are all the tier-3 payer's: one wallet, that many sessions.
    args.limits.sessions_per_payer = Some(THROUGHPUT_CHANNELS.to_string());
    let server = crate::services::start_facilitator(&args).await?;
    let url = server.url();
    let caip2 = server
        .facilitator
        .caip2()
        .await
        .map_err(|e| e.message.clone())?;
    let b = Bench {
        rpc: trust_gate_migrations::rpc(&localnet.rpc_url()),
        demo: DemoConfig::demo_world(&url, "http://127.0.0.1:4021"),
        localnet,
        world,
        url,
        http: reqwest::Client::new(),
        caip2,
        server,
    };
    for n in [10u64, 100, 1_000] {
        println!("{}", b.session(n).await?);
    }
    println!("{}", b.vouchers(Duration::from_secs(a.seconds)).await?);
    Ok(())
}

fn fail(what: &str) -> impl Fn(String) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl Bench {
    /// `p`'s refund as the demo service forwards it: with its close authorization.
    fn refund(&self, p: &Paying) -> Result<BatchPayload, String> {
        let mut refund = p.session.refund_payload();
        let valid_before = trust_gate_client::simulate::now_unix()
            + i64::try_from(p.offer.max_timeout_seconds).unwrap_or(60);
        refund
            .authorize_close(
                &self.caip2,
                &self.world.facilitator.pubkey(),
                &self.demo.service_key,
                valid_before,
            )
            .map_err(|e| e.to_string())?;
        Ok(refund)
    }

    /// A gated session of the tier-3 payer, `deposit` in its channel (the open not yet sent):
    /// its first request's body.
    async fn open(&self, price: u64, deposit: u64) -> Result<(Paying, Value), String> {
        let payer = self.world.payer(3).ok_or("no tier-3 demo payer")?;
        // The facilitator checks a challenge's freshness by its own clock (the localnet's runs
        // ahead once the bench has moved it).
        let now = trust_gate_client::simulate::now_unix();
        let fee_payer = self.world.facilitator.pubkey();
        let offer = challenge::session_offer(
            &self.demo,
            &self.caip2,
            &fee_payer,
            &payer.asset(),
            now,
            price,
            true,
        );
        let extra: BatchExtra = serde_json::from_value(Value::Object(offer.extra.clone()))
            .map_err(|e| e.to_string())?;
        let tables = chain::lookup_tables(&self.rpc, &fee_payer)
            .await
            .map_err(|e| e.to_string())?;
        let salt = u64::from_le_bytes(
            Keypair::new().pubkey().to_bytes()[..8]
                .try_into()
                .unwrap_or_default(),
        );
        let (tx, mut session) = SessionTerms {
            builder: &self.server.facilitator.chain.builder,
            extra: &extra,
            mint: self.world.metered_mint(),
            token_program: TokenProgram::Token2022,
            pay_to: self.demo.pay_to,
            payer: &payer.owner,
            voucher_key: Keypair::new(),
            deposit,
            salt,
            open_slot: self.rpc.get_slot().await.map_err(|e| e.to_string())?,
            gate: Some(SessionGate {
                payer_asset: payer.asset(),
                payee_asset: self.demo.payee_asset,
                policy_id: self.demo.metered_policy_id,
                attestations: Default::default(),
                approval: None,
            }),
            tables: &tables,
            blockhash: self
                .rpc
                .get_latest_blockhash()
                .await
                .map_err(|e| e.to_string())?,
        }
        .open()
        .map_err(|e| e.to_string())?;
        let payload = session
            .deposit_payload(&tx, price)
            .map_err(|e| e.to_string())?;
        let body = body(&offer, &self.demo.session_url(), &payload);
        Ok((Paying { session, offer }, body))
    }

    async fn settle(&self, body: &Value) -> Result<Value, String> {
        let v: Value = self
            .http
            .post(format!("{}/settle", self.url))
            .json(body)
            .send()
            .await
            .map_err(|e| format!("POST /settle: {e}"))?
            .json()
            .await
            .map_err(|e| format!("POST /settle: {e}"))?;
        if v["success"] != true {
            return Err(format!("POST /settle answered {v}"));
        }
        Ok(v)
    }

    async fn history(&self, key: &Pubkey) -> Result<usize, String> {
        receipts::signatures_of(&self.rpc, key)
            .await
            .map(|s| s.len())
            .map_err(|e| format!("getSignaturesForAddress {key}: {e}"))
    }

    async fn balance(&self, key: &Pubkey) -> Result<u64, String> {
        self.rpc
            .get_balance(key)
            .await
            .map_err(|e| format!("getBalance {key}: {e}"))
    }

    async fn channel(&self, key: &Pubkey) -> Result<Option<Channel>, String> {
        Ok(chain::account(&self.rpc, key)
            .await
            .map_err(|e| e.to_string())?
            .and_then(|a| Channel::decode(&a.data)))
    }

    /// One session of `n` payments, its whole life (see the module docs).
    async fn session(&self, n: u64) -> Result<String, String> {
        let fac = self.world.facilitator.pubkey();
        let (before, history) = (self.balance(&fac).await?, self.history(&fac).await?);
        let (mut p, first) = self.open(PRICE, n * PRICE).await?;
        self.settle(&first).await.map_err(fail("the deposit"))?;
        for i in 1..n {
            let payload = p
                .session
                .voucher_payload(PRICE)
                .map_err(|e| e.to_string())?;
            let body = body(&p.offer, &self.demo.session_url(), &payload);
            self.settle(&body)
                .await
                .map_err(|e| format!("voucher {}: {e}", i + 1))?;
        }
        let refund = body(&p.offer, &self.demo.session_url(), &self.refund(&p)?);
        self.settle(&refund).await.map_err(fail("the refund"))?;
        let channel = p.session.channel;
        let c = self
            .channel(&channel)
            .await?
            .ok_or("the channel is gone after its close")?;
        if (c.status, c.settled) != (Status::Distributed, n * PRICE) {
            return Err(format!(
                "the channel is {:?} with {} settled; {} expected",
                c.status,
                c.settled,
                n * PRICE
            ));
        }
        eprintln!("session of {n}: paid and closed; moving the clock past the dispute window");
        let wait = trust_gate_client::decode::DISPUTE_WINDOW_SECS as u64 + 120;
        self.localnet.warp(wait).await?;
        let f = &self.server.facilitator;
        let receipt = f.chain.builder.pda.channel_receipt(&fac, &channel);
        for _ in 0..5 {
            f.reclaim_once().await.map_err(|e| e.message.clone())?;
            let left = chain::accounts(&self.rpc, &[channel, receipt])
                .await
                .map_err(|e| e.to_string())?;
            if left.iter().all(Option::is_none) {
                let k = self.history(&fac).await? - history;
                let net = before.saturating_sub(self.balance(&fac).await?);
                return Ok(format!(
                    "session: {n} payments in {k} transactions, net {} lamports per payment",
                    per(net, n)
                ));
            }
        }
        Err(format!(
            "the crank left the channel {channel} or its receipt {receipt} open"
        ))
    }

    /// The voucher run (see the module docs).
    async fn vouchers(&self, duration: Duration) -> Result<String, String> {
        let mut sessions = Vec::new();
        for _ in 0..THROUGHPUT_CHANNELS {
            let (p, first) = self.open(THROUGHPUT_PRICE, THROUGHPUT_DEPOSIT).await?;
            self.settle(&first).await.map_err(fail("a run's deposit"))?;
            sessions.push(p);
        }
        let clients = THROUGHPUT_CHANNELS;
        // Both runs' clients send to a URL parsed once.
        let parse = |path: &str| {
            reqwest::Url::parse(&format!("{}{path}", self.url)).map_err(|e| e.to_string())
        };
        let (healthz, settle) = (parse("/healthz")?, parse("/settle")?);

        // The vouchers, signed and written before the run (as `bench facilitator` builds its
        // settlements outside the timed call): the clients send, the facilitator checks and
        // keeps. As many as a one-second /healthz probe says the hop could carry.
        let probe = hop_slice(&self.http, &healthz, clients, Duration::from_secs(1)).await?;
        let per_client = (probe.0 as f64 / probe.1.as_secs_f64() * duration.as_secs_f64()
            / clients as f64) as usize;
        eprintln!("signing {} vouchers ...", per_client * clients);
        let resource = self.demo.session_url();
        let mut queues = Vec::new();
        for p in sessions.iter_mut() {
            let template = Template::of(&body(
                &p.offer,
                &resource,
                &BatchPayload::Voucher {
                    channel_config: p.session.config.clone(),
                    voucher: BatchVoucher {
                        channel_id: p.session.channel.to_string(),
                        max_claimable_amount: AMOUNT_HOLE.into(),
                        expires_at: 0,
                        signature: SIGNATURE_HOLE.into(),
                    },
                },
            ))?;
            let mut mine = std::collections::VecDeque::with_capacity(per_client);
            for _ in 0..per_client {
                let v = p
                    .session
                    .voucher(THROUGHPUT_PRICE)
                    .map_err(|e| e.to_string())?;
                mine.push_back(template.fill(&v.max_claimable_amount, &v.signature));
            }
            queues.push(Arc::new(Mutex::new(mine)));
        }

        // One-second slices, /healthz and vouchers in turn, so that whatever else the machine
        // does weighs on both alike.
        eprintln!(
            "GET /healthz and vouchers (one POST /settle each: /verify's checks, then kept) in turn: {} s each, {clients} clients ...",
            duration.as_secs()
        );
        let (mut hops, mut hop_time) = (0u64, Duration::ZERO);
        let (mut accepted, mut voucher_time) = (vec![0u64; clients], Duration::ZERO);
        for _ in 0..duration.as_secs() {
            let (n, t) = hop_slice(&self.http, &healthz, clients, Duration::from_secs(1)).await?;
            hops += n;
            hop_time += t;
            let (counts, t) =
                voucher_slice(&self.http, &settle, &queues, Duration::from_secs(1)).await?;
            for (a, n) in accepted.iter_mut().zip(counts) {
                *a += n;
            }
            voucher_time += t;
        }
        if queues
            .iter()
            .any(|q| q.lock().map(|q| q.is_empty()).unwrap_or(true))
        {
            eprintln!("the signed vouchers of a client ran out before the run's end");
        }
        let counts = accepted.clone();
        let total: u64 = accepted.iter().sum();
        // Every accepted voucher is settled at the close, and nothing more: the first (the
        // deposit's) and the run's.
        for (p, n) in sessions.iter_mut().zip(counts) {
            // The refund carries the latest voucher accepted: the run signed ahead of it (a
            // refund at another amount is refused, so this also checks the count).
            let expected = (n + 1) * THROUGHPUT_PRICE;
            p.session.charged = expected;
            let refund = body(&p.offer, &resource, &self.refund(p)?);
            self.settle(&refund).await.map_err(fail("a run's refund"))?;
            let c = self
                .channel(&p.session.channel)
                .await?
                .ok_or("a run's channel is gone after its close")?;
            if c.settled != expected {
                return Err(format!(
                    "channel {} settled {}, its accepted vouchers add up to {expected}",
                    p.session.channel, c.settled
                ));
            }
        }
        let rate = total as f64 / voucher_time.as_secs_f64();
        let hop = hops as f64 / hop_time.as_secs_f64();
        Ok(format!(
            "vouchers: {rate:.0}/s over HTTP, {:.2} x the /healthz hop",
            rate / hop
        ))
    }
}

/// `clients` clients GET `url` for `slice`: the answers (all 200) and the time taken.
async fn hop_slice(
    http: &reqwest::Client,
    url: &reqwest::Url,
    clients: usize,
    slice: Duration,
) -> Result<(u64, Duration), String> {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, url) = (http.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while start.elapsed() < slice {
                match http.get(url.clone()).send().await {
                    Ok(r) if r.status() == 200 => n += 1,
                    other => return Err(format!("GET /healthz: {other:?}")),
                }
            }
            Ok(n)
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.map_err(|e| e.to_string())??;
    }
    Ok((total, start.elapsed()))
}

/// Each client sends its next vouchers for `slice`: how many each got accepted, and the time
/// taken. Stops at the first refusal: the vouchers after it no longer add up.
async fn voucher_slice(
    http: &reqwest::Client,
    url: &reqwest::Url,
    queues: &[Arc<Mutex<std::collections::VecDeque<Vec<u8>>>>],
    slice: Duration,
) -> Result<(Vec<u64>, Duration), String> {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for q in queues {
        let (http, url, q) = (http.clone(), url.clone(), q.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while start.elapsed() < slice {
                let Some(b) = q.lock().ok().and_then(|mut q| q.pop_front()) else {
                    break;
                };
                let sent = http
                    .post(url.clone())
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(b)
                    .send()
                    .await;
                match sent {
                    Ok(r) if r.status() == 200 => n += 1,
                    Ok(r) => return Err(format!("a voucher was refused: {}", r.status())),
                    Err(e) => return Err(format!("POST /settle: {e}")),
                }
            }
            Ok(n)
        }));
    }
    let mut counts = Vec::new();
    for t in tasks {
        counts.push(t.await.map_err(|e| e.to_string())??);
    }
    Ok((counts, start.elapsed()))
}

const AMOUNT_HOLE: &str = "@AMOUNT@";
const SIGNATURE_HOLE: &str = "@SIGNATURE@";

/// A voucher request's JSON cut at its two holes.
struct Template {
    parts: [String; 3],
}

impl Template {
    fn of(body: &Value) -> Result<Template, String> {
        let text = body.to_string();
        let (a, rest) = text
            .split_once(AMOUNT_HOLE)
            .ok_or("the voucher template has no amount hole")?;
        let (b, c) = rest
            .split_once(SIGNATURE_HOLE)
            .ok_or("the voucher template has no signature hole")?;
        Ok(Template {
            parts: [a.into(), b.into(), c.into()],
        })
    }

    fn fill(&self, amount: &str, signature: &str) -> Vec<u8> {
        let [a, b, c] = &self.parts;
        [a.as_str(), amount, b, signature, c].concat().into_bytes()
    }
}

/// An x402 request body for `payload` under `offer`.
fn body(offer: &PaymentRequirements, resource: &str, payload: &BatchPayload) -> Value {
    json!({
        "x402Version": 2,
        "paymentPayload": {
            "x402Version": 2,
            "resource": {"url": resource},
            "accepted": offer,
            "payload": payload,
        },
        "paymentRequirements": offer,
    })
}

/// `total / n`, whole when it is.
fn per(total: u64, n: u64) -> String {
    let v = total as f64 / n as f64;
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
