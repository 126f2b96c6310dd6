//! `trust-gate dashboard` in a real browser: the command serves the owner's dashboard against
//! a seeded localnet with its facilitator, and headless Chromium (Debian's `chromium` and
//! `chromium-driver`, driven over WebDriver by fantoccini) loads the first page, opens the
//! tier-3 payer's page, sees a payment move its spend bar, the chart and add its receipt row,
//! follows the receipt link, sees a dispute of the payment there, and saves the screenshot
//! the README shows (docs/images/dashboard.png). Then a payment of which the payer's policy
//! holds a share back (docs/holdback.md): the payer's page lists it held with its release
//! time, its settlement row and receipt show the share, the payee's page lists it too, and
//! the receipt follows its dispute and the arbiter's decision. And the demo's subscription
//! (docs/subscriptions.md): the subscriber's page shows it due with nothing pulled, the
//! facilitator's crank pulls it, and the page shows the period's use, the next pull and the
//! pull among the settlements; the payee's page shows it paid to it.

use crate::fixture;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;
use solana_sdk::signer::Signer;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use trust_gate_client::holdback::HeldPayment;
use trust_gate_client::token::TokenProgram;
use trust_gate_migrations::demo;
use trust_gate_pay::exact::PayOutcome;

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `url` answers 200.
async fn ready(url: &str, what: &str) {
    for _ in 0..200 {
        if reqwest::get(url)
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not come up at {url}");
}

/// chromedriver on a free loopback port, and a headless Chromium session through it.
async fn browser() -> (Killed, Client) {
    let port = free_port();
    let driver = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("chromedriver: {e}: install Debian's chromium and chromium-driver packages (.ci/run does)")
        });
    let driver = Killed(driver);
    ready(&format!("http://127.0.0.1:{port}/status"), "chromedriver").await;
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                        "--disable-dev-shm-usage", "--window-size=1280,1250"]}),
    );
    let client = ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a Chromium session (is Debian's chromium installed?)");
    (driver, client)
}

async fn attr(c: &Client, css: &str, name: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .attr(name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{css} has no {name}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_a_payment_in_a_real_browser() {
    let env = fixture::seeded().await;
    let (facilitator, demo_server) = services(&env).await;
    // Port 0: the command prints the URL it took.
    let mut server = Command::new(env!("CARGO_BIN_EXE_trust-gate"))
        .args(["dashboard", "--rpc-url", &env.localnet.rpc_url()])
        .args(["--facilitator-url", &facilitator.url()])
        .args(["--port", "0", "--refresh-secs", "0"])
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = server.stdout.take().unwrap();
    let _server = Killed(server);
    // Its first line names the URL; the rest is read to the end, so that the command never
    // writes into a closed pipe.
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(stdout).lines();
        let _ = tx.send(lines.next().and_then(Result::ok).unwrap_or_default());
        for _ in lines {}
    });
    let first = rx.await.unwrap();
    let base = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {first:?}"))
        .trim_end_matches('/')
        .to_string();
    ready(&format!("{base}/healthz"), "the dashboard").await;

    // A bad asset is named, not a blank page.
    let bad = reqwest::get(format!("{base}/agents/nope")).await.unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("asset"));

    let (_driver, c) = browser().await;
    c.goto(&base).await.unwrap();
    let payer = env.world.payer(3).unwrap();
    let link = c
        .find(Locator::LinkText(payer.name))
        .await
        .expect("the first page lists the demo payers");
    link.click().await.unwrap();
    let page = c.current_url().await.unwrap();
    assert!(page.path().ends_with(&payer.asset().to_string()), "{page}");
    let day = format!("#bar-{}-day", demo::POLICY_ID);
    let spent_before: u64 = attr(&c, &day, "data-spent").await.parse().unwrap();
    let rows_before = c
        .find_all(Locator::Css("tr.settlement"))
        .await
        .unwrap()
        .len();
    let chart_before = chart_sum(&c).await;
    let killswitch = c.find(Locator::Css("#killswitch")).await.unwrap();
    assert_eq!(killswitch.text().await.unwrap(), "active");
    let tiers = c
        .find(Locator::Css("#tiers"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(tiers.starts_with("tier 3"), "{tiers}");

    // One payment, then the page again: the bar and the settlements moved.
    let PayOutcome::Paid {
        payment_id_hash, ..
    } = env
        .pay_protected(&demo_server.url(), None, payer.signer())
        .await
    else {
        panic!("not paid")
    };
    c.refresh().await.unwrap();
    let spent_after: u64 = attr(&c, &day, "data-spent").await.parse().unwrap();
    assert_eq!(spent_after, spent_before + demo::PRICE);
    let rows = c.find_all(Locator::Css("tr.settlement")).await.unwrap();
    assert_eq!(rows.len(), rows_before + 1);
    // The chart's days add up to one price more (whichever day it fell on).
    assert_eq!(chart_sum(&c).await, chart_before + demo::PRICE);

    // The screenshot the README shows.
    let png = c.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/images");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("dashboard.png"), &png).unwrap();

    // The newest row's receipt: the payment just made.
    c.find(Locator::Css("tr.settlement a.receipt"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let receipt = c.find(Locator::Css("#receipt h2")).await.unwrap();
    assert!(
        receipt.text().await.unwrap().contains(&payment_id_hash),
        "the receipt of {payment_id_hash}"
    );
    let amount = c.find(Locator::Css("#amount")).await.unwrap();
    assert_eq!(amount.text().await.unwrap(), "0.1");
    let disputed = c.find(Locator::Css("#disputed")).await.unwrap();
    assert_eq!(disputed.text().await.unwrap(), "no");

    // The payer disputes it: the receipt says so.
    let outcome = trust_gate_demo::dispute::dispute(
        &reqwest::Client::new(),
        &env.rpc,
        &trust_gate_demo::dispute::DisputeOptions {
            facilitator_url: facilitator.url(),
            payment_id_hash: trust_gate_client::decode::parse_hex32("hash", &payment_id_hash)
                .unwrap(),
            reason: "not delivered".into(),
            feedback_uri: String::new(),
            signer: payer.signer(),
            overrides: Default::default(),
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.status, 200, "{}", outcome.body);
    c.refresh().await.unwrap();
    let disputed = c.find(Locator::Css("#disputed")).await.unwrap();
    assert_eq!(disputed.text().await.unwrap(), "yes");

    subscription(&env, &c, &base, &facilitator).await;
    held_payment(&env, &c, &base, &facilitator.url()).await;
    c.close().await.unwrap();
}

/// The demo facilitator as the suites run it (`Env::facilitator_config`: no crank in the
/// background), but pulling gated subscriptions when a round runs, which the test starts
/// itself; and the demo charging through it.
async fn services(env: &fixture::Env) -> (trust_gate_facilitator::Server, trust_gate_demo::Server) {
    let mut config = env.facilitator_config();
    config.pull_subscriptions = true;
    env.services_with(config, demo::POLICY_ID, demo::METERED_POLICY_ID)
        .await
}

/// The demo's subscription on the subscriber's page before and after the facilitator's crank
/// pulls it, and on the payee's page.
async fn subscription(
    env: &fixture::Env,
    c: &Client,
    base: &str,
    facilitator: &trust_gate_facilitator::Server,
) {
    let w = &env.world;
    let subscriber = w.subscriber();
    let delegation = env.b.subscription_delegation(&w.subscription(0));
    c.goto(base).await.unwrap();
    c.find(Locator::LinkText(subscriber.name))
        .await
        .expect("the first page lists the subscriber")
        .click()
        .await
        .unwrap();
    let row = format!("#subscriptions-paid tr.subscription[data-delegation=\"{delegation}\"]");
    // Subscribed at seeding, pulled by no one yet: due, nothing pulled this period.
    assert_eq!(attr(c, &row, "data-pulled").await, "0");
    assert_eq!(
        text(c, &format!("{row} td.use")).await,
        "pulled 0 of 1 this period"
    );
    assert_eq!(text(c, &format!("{row} td.next")).await, "due now");
    let amount = text(c, &format!("{row} td.amount")).await;
    assert!(amount.starts_with("1 per day"), "{amount}");
    assert_eq!(
        attr(c, &format!("{row} td.state span.badge"), "data-state").await,
        "active"
    );
    let rows_before = c
        .find_all(Locator::Css("tr.settlement"))
        .await
        .unwrap()
        .len();

    // The crank's round pulls it: a settled payment the facilitator keeps a record of.
    let round = facilitator.facilitator.reclaim_once().await.unwrap();
    assert_eq!((round.pulled, round.failures.len()), (1, 0), "{round:?}");
    let payments: serde_json::Value = reqwest::get(format!(
        "{}/payments?payer={}",
        facilitator.url(),
        subscriber.asset()
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let listed = payments["payments"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{payments}");
    let pull = listed[0]["paymentIdHash"].as_str().unwrap().to_string();

    c.refresh().await.unwrap();
    assert_eq!(
        attr(c, &row, "data-pulled").await,
        demo::SUBSCRIPTION_AMOUNT.to_string()
    );
    assert_eq!(
        text(c, &format!("{row} td.use")).await,
        "pulled 1 of 1 this period"
    );
    // The next pull: the next period's start, as the delegation counts its periods.
    let now = trust_gate_client::chain::unix_time(&env.rpc).await.unwrap();
    let subs = trust_gate_client::pulls::list(
        &env.rpc,
        &env.b.ids.gate,
        trust_gate_client::pulls::SubscribedBy::Payer(subscriber.asset()),
    )
    .await
    .unwrap();
    let d = subs
        .iter()
        .find(|l| l.record.delegation == delegation)
        .and_then(|l| l.delegation)
        .expect("the subscription's delegation");
    let next = d.period_at(now).0 + demo::SUBSCRIPTION_PERIOD_SECS as i64;
    assert_eq!(attr(c, &row, "data-next").await, next.to_string());
    let shown = text(c, &format!("{row} td.next")).await;
    assert!(
        shown.starts_with(&trust_gate_dashboard::view::utc(next)),
        "{shown}"
    );
    // The pull among its settlements, from its receipt: 1 to the service.
    let mut settled = None;
    let rows = c.find_all(Locator::Css("tr.settlement")).await.unwrap();
    assert_eq!(rows.len(), rows_before + 1);
    for r in rows {
        if r.text().await.unwrap().contains(&pull[..12]) {
            let amount = r.find(Locator::Css("td:nth-child(2)")).await.unwrap();
            let payee = r.find(Locator::Css("td:nth-child(4) code")).await.unwrap();
            settled = Some((
                amount.text().await.unwrap(),
                payee.attr("title").await.unwrap(),
            ));
        }
    }
    assert_eq!(
        settled,
        Some(("1".to_string(), Some(w.service.asset().to_string())))
    );

    // The payee's page: paid to it, by the subscriber, pulled this period.
    c.goto(&format!("{base}/agents/{}", w.service.asset()))
        .await
        .unwrap();
    let received =
        format!("#subscriptions-received tr.subscription[data-delegation=\"{delegation}\"]");
    assert_eq!(
        attr(c, &format!("{received} td code"), "title").await,
        subscriber.asset().to_string()
    );
    assert_eq!(
        text(c, &format!("{received} td.use")).await,
        "pulled 1 of 1 this period"
    );
}

/// The demo of the tier-1 payee that accepts a holdback, charging under the holdback payer's
/// holdback policy.
async fn held_demo(facilitator_url: &str) -> trust_gate_demo::Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config =
        trust_gate_demo::DemoConfig::held_service(facilitator_url, &format!("http://{addr}"));
    trust_gate_demo::start(config, addr).await.unwrap()
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .unwrap()
}

/// A held payment on the payer's page, the payee's page and its receipt, through its dispute
/// and the arbiter's decision.
async fn held_payment(env: &fixture::Env, c: &Client, base: &str, facilitator_url: &str) {
    let w = &env.world;
    let payer = w.holdback_payer();
    let payee = w.held_service.asset();
    let share = demo::PRICE * u64::from(w.holdback_schedule().terms[1].share_bps) / 10_000;
    let held_demo = held_demo(facilitator_url).await;
    let PayOutcome::Paid {
        payment_id_hash, ..
    } = env
        .pay_protected(&held_demo.url(), Some(payer.asset()), &payer.owner)
        .await
    else {
        panic!("the held payment was not paid")
    };

    // The payer's page: the payment held, the share, when it is released.
    c.goto(&format!("{base}/agents/{}", payer.asset()))
        .await
        .unwrap();
    let row = "#held-paid tr.held";
    assert_eq!(attr(c, row, "data-held").await, share.to_string());
    assert_eq!(
        attr(c, &format!("{row} span.badge"), "data-state").await,
        "held"
    );
    let release = text(c, &format!("{row} td.release")).await;
    assert!(release.contains("released to the payee from"), "{release}");
    // Its settlement row shows the share held back.
    let mut settled = None;
    for r in c.find_all(Locator::Css("tr.settlement")).await.unwrap() {
        if r.text().await.unwrap().contains(&payment_id_hash[..12]) {
            let cell = r.find(Locator::Css("td.held")).await.unwrap();
            settled = Some(cell.text().await.unwrap());
        }
    }
    assert_eq!(settled.as_deref(), Some("0.01 held"));

    // The payee's page lists it too, with what the payee may do.
    c.goto(&format!("{base}/agents/{payee}")).await.unwrap();
    let received = text(c, "#held-received tr.held").await;
    assert!(received.contains("gate_refund_holdback"), "{received}");
    assert!(received.contains(&payment_id_hash), "{received}");

    // Its receipt: the share, its state and release time.
    c.find(Locator::Css("#held-received tr.held a.receipt"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert!(text(c, "#receipt h2").await.contains(&payment_id_hash));
    assert_eq!(text(c, "#held").await, "0.01");
    assert_eq!(text(c, "#hold-state").await, "held");

    // The payer disputes it within the hold: frozen until the arbiter decides.
    let outcome = trust_gate_demo::dispute::dispute(
        &reqwest::Client::new(),
        &env.rpc,
        &trust_gate_demo::dispute::DisputeOptions {
            facilitator_url: facilitator_url.to_string(),
            payment_id_hash: trust_gate_client::decode::parse_hex32("hash", &payment_id_hash)
                .unwrap(),
            reason: "not delivered".into(),
            feedback_uri: String::new(),
            signer: &payer.owner,
            overrides: Default::default(),
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.status, 200, "{}", outcome.body);
    c.refresh().await.unwrap();
    assert_eq!(text(c, "#hold-state").await, "disputed");
    assert!(text(c, "#release").await.contains("the arbiter decides"));
    assert!(c.find(Locator::Css("#arbitration-ends")).await.is_ok());

    // The arbiter upholds it: given back to the payer.
    let hash = trust_gate_client::decode::parse_hex32("hash", &payment_id_hash).unwrap();
    let log = env.b.pda.feedback_log(&w.facilitator.pubkey(), &hash);
    let data = env.rpc.get_account(&log).await.unwrap().data;
    let held = HeldPayment::from_log_data(&data, TokenProgram::SplToken.id()).unwrap();
    let to = TokenProgram::SplToken.associated_account(&payer.owner.pubkey(), &w.mint());
    let uphold = env.b.arbitrate_holdback(&held, true, &to, &[]);
    env.send(&[uphold], &[&w.arbiter]).await.unwrap();
    c.refresh().await.unwrap();
    assert_eq!(text(c, "#hold-state").await, "upheld");
    c.goto(&format!("{base}/agents/{}", payer.asset()))
        .await
        .unwrap();
    assert_eq!(
        attr(c, "#held-paid tr.held span.badge", "data-state").await,
        "upheld"
    );
}

/// What the chart's days add up to.
async fn chart_sum(c: &Client) -> u64 {
    let mut sum = 0;
    for day in c.find_all(Locator::Css("#chart rect.day")).await.unwrap() {
        let total: u64 = day
            .attr("data-total")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        sum += total;
    }
    sum
}
