//! A soak, bounded in payers, payments and time: many payers pay the demo service at once
//! through the facilitator's /settle, half of them under a daily cap the run crosses. At the
//! end the books must balance: every payer's velocity ledger and day and week counters equal
//! the sum of its settled payments, the payers' losses equal the payee's gains, there is a
//! receipt for every settled payment and none for a refused one, nothing is counted twice,
//! and no settlement failed on chain (the facilitator paid no fee for a refusal).

use crate::services::{self, Services};
use crate::settle::request;
use futures::stream::{self, StreamExt};
use policy_vault::state::PolicyParams;
use serde_json::Value;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use std::collections::HashMap;
use std::time::Instant;
use trust_gate_client::decode::{self, PolicyAccount, VelocityLedger};
use trust_gate_client::settle::{self, TokenProgram};
use trust_gate_client::{chain, AtomicityEnforced};
use trust_gate_demo::{challenge, DemoConfig};
use trust_gate_migrations::demo;
use trust_gate_migrations::payers::extra_payers;
use trust_gate_pay::exact as pay;

const PAYERS: usize = 8;
const PAYMENTS_EACH: usize = 12;
/// The capped payers may spend this much a day: 5 payments of the demo price.
const SMALL_DAILY_CAP: u64 = 5 * demo::PRICE;

struct Payer {
    owner: Keypair,
    asset: Pubkey,
    capped: bool,
    token: Pubkey,
}

/// New tier-3 agents with the demo payer policy (or a small daily cap) and 10.00 each.
async fn new_payers(s: &Services, count: usize, capped: bool) -> Vec<Payer> {
    let w = &s.env.world;
    let policy = PolicyParams {
        daily_cap: if capped {
            SMALL_DAILY_CAP
        } else {
            w.payer_policy().daily_cap
        },
        ..w.payer_policy()
    };
    extra_payers(
        &crate::fixture::seed_keys(&s.env.localnet),
        w,
        count,
        policy,
        10_000_000,
    )
    .await
    .unwrap()
    .into_iter()
    .map(|p| Payer {
        owner: p.owner,
        asset: p.asset,
        capped,
        token: p.token,
    })
    .collect()
}

/// A /settle body: a fresh signed challenge for `payer`, paid by its owner.
async fn payment(s: &Services, cfg: &DemoConfig, caip2: &str, payer: &Payer) -> Value {
    let fee_payer = s.env.world.facilitator.pubkey();
    let pr = challenge::issue(cfg, caip2, &fee_payer, &payer.asset, now());
    let p = pay::prepare(&s.env.rpc, &pr, &payer.owner.pubkey(), Default::default())
        .await
        .unwrap();
    let ixs = settle::compose(&p.builder, &p.settlement, AtomicityEnforced::TRUE).unwrap();
    let tx = p.transaction(&s.env.rpc, &ixs, &payer.owner).await.unwrap();
    request(&p, &tx)
}

fn now() -> i64 {
    trust_gate_client::simulate::now_unix()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_payers_settle_and_the_books_balance() {
    let s = services::start().await;
    let w = &s.env.world;
    let caip2 = s.get_json(s.f("/supported")).await["kinds"][0]["network"]
        .as_str()
        .unwrap()
        .to_string();
    let cfg = DemoConfig::demo_world(&s.facilitator.url(), &s.demo.url());
    let mut payers = new_payers(&s, PAYERS / 2, true).await;
    payers.extend(new_payers(&s, PAYERS - PAYERS / 2, false).await);
    let payee_token =
        TokenProgram::SplToken.associated_account(&w.service.owner.pubkey(), &w.mint());
    let payee_before = s.env.token_balance(&payee_token).await;
    let fee_payer_before = s
        .env
        .rpc
        .get_balance(&w.facilitator.pubkey())
        .await
        .unwrap();

    // Every payment prepared first, then all sent at once (16 in flight).
    let mut bodies = Vec::new();
    for _ in 0..PAYMENTS_EACH {
        for (i, p) in payers.iter().enumerate() {
            bodies.push((i, payment(&s, &cfg, &caip2, p).await));
        }
    }
    let started = Instant::now();
    let url = s.f("/settle");
    let outcomes: Vec<(usize, u16, Value)> = stream::iter(bodies.into_iter().map(|(i, body)| {
        let (http, url) = (s.http.clone(), url.clone());
        async move {
            let r = http.post(url).json(&body).send().await.unwrap();
            (i, r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    }))
    .buffer_unordered(16)
    .collect()
    .await;
    let elapsed = started.elapsed();

    let mut settled: HashMap<usize, u64> = HashMap::new();
    let (mut ok, mut refused) = (0, 0);
    for (i, status, body) in &outcomes {
        match status {
            200 => {
                ok += 1;
                *settled.entry(*i).or_default() += demo::PRICE;
                let hash = body["receipt"]["paymentIdHash"].as_str().unwrap();
                assert_eq!(s.receipt(hash).await["exists"], true);
            }
            402 => {
                refused += 1;
                assert!(payers[*i].capped, "only capped payers are refused: {body}");
                assert_eq!(body["errorReason"], "SpendingDailyExceeded", "{body}");
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(ok + refused, PAYERS * PAYMENTS_EACH);

    // The books.
    let mut paid_total = 0;
    for (i, p) in payers.iter().enumerate() {
        let paid = settled.get(&i).copied().unwrap_or_default();
        paid_total += paid;
        let want = if p.capped {
            SMALL_DAILY_CAP
        } else {
            PAYMENTS_EACH as u64 * demo::PRICE
        };
        assert_eq!(paid, want, "payer {i} settled exactly up to its cap");
        let ledger: VelocityLedger = chain::anchor_account(
            &s.env.rpc,
            "VelocityLedger",
            &s.env.b.pda.velocity(&p.asset, demo::POLICY_ID),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(ledger.cumulative, paid, "payer {i}: velocity ledger");
        let acc = chain::account(&s.env.rpc, &s.env.b.pda.policy(&p.asset, demo::POLICY_ID))
            .await
            .unwrap()
            .unwrap();
        let policy: PolicyAccount = decode::account("PolicyAccount", &acc.data).unwrap();
        assert_eq!(
            (policy.day_spent, policy.week_spent),
            (paid, paid),
            "payer {i}: spending counters"
        );
        assert_eq!(
            s.env.token_balance(&p.token).await,
            10_000_000 - paid,
            "payer {i}: balance"
        );
    }
    assert_eq!(
        s.env.token_balance(&payee_token).await - payee_before,
        paid_total,
        "the payers' losses are the payee's gains"
    );
    // Fees: one signature per settled payment (the facilitator's and the payer's), plus the
    // feedback logs' rent; a refusal costs nothing, since none failed on chain.
    let fee_payer_after = s
        .env
        .rpc
        .get_balance(&w.facilitator.pubkey())
        .await
        .unwrap();
    let spent = fee_payer_before - fee_payer_after;
    let per_settlement = spent / ok as u64;
    assert_eq!(
        per_settlement * ok as u64,
        spent,
        "every settlement cost the same"
    );
    println!(
        "soak: {PAYERS} payers x {PAYMENTS_EACH} payments, 16 in flight: {ok} settled, {refused} refused (daily cap), {:.1} s ({:.0} payments/s); books balance, 0 double counts, 0 on-chain failures",
        elapsed.as_secs_f64(),
        (ok + refused) as f64 / elapsed.as_secs_f64()
    );
}
