//! Gated subscriptions (docs/subscriptions.md) as a user meets them on the localnet `up`
//! serves: the demo world's subscription is listed due; the facilitator's own crank, running
//! in the background with pulls on as `up` runs it, pulls it; `GET /payments` and
//! `/receipt` show the pull and `trust-gate subscriptions` the period's use and the next
//! pull; the payer's kill switch stops the next period's pull, by name, and its release lets
//! it through; `trust-gate unsubscribe` returns the rent. Then `trust-gate subscribe` sets up
//! another, bad input and a stranger's cancel are refused by name.

use crate::fixture::{self, Env};
use serde_json::Value;
use solana_sdk::signer::Signer;
use std::time::Duration;
use trust_gate_client::pulls::{self, SubscribedBy};
use trust_gate_migrations::demo;

const DAY: u64 = 86_400;

fn cli(env: &Env, args: &[&str]) -> (bool, String, String) {
    crate::trust_gate(env, args, &["NETWORK"])
}

/// The subscriber's pulls `GET /payments` lists, waiting up to 30 s for `count` of them.
async fn pulls_listed(facilitator: &str, payer: &str, count: usize) -> Vec<Value> {
    let url = format!("{facilitator}/payments?payer={payer}");
    let mut last = Vec::new();
    for _ in 0..300 {
        let body: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        last = body["payments"].as_array().cloned().unwrap_or_default();
        if last.len() >= count {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{count} pull(s) of {payer} not listed in time: {last:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crank_pulls_the_demo_subscription_and_the_cli_follows_it() {
    let env = fixture::seeded().await;
    let w = &env.world;
    let subscriber = w.subscriber();
    let asset = subscriber.asset().to_string();
    let delegation = env.b.subscription_delegation(&w.subscription(0));
    let record = env.b.pda.gated_subscription(&delegation).to_string();

    // Seeded: listed by the demo facilitator (the default), due now, nothing pulled.
    let (ok, out, err) = cli(&env, &["subscriptions"]);
    assert!(ok, "{out}{err}");
    assert!(out.starts_with("1 subscription(s)"), "{out}");
    assert!(out.contains(&record) && out.contains(&asset), "{out}");
    let amount = demo::SUBSCRIPTION_AMOUNT;
    assert!(out.contains(&format!("pulled 0 of {amount}")), "{out}");
    assert!(
        out.contains(&format!("next pull: {amount} due now")),
        "{out}"
    );

    // The facilitator as `up` runs it: pulls on, its crank in the background.
    let mut config = env.facilitator_config();
    config.pull_subscriptions = true;
    config.reclaim_interval = Some(Duration::from_secs(1));
    let loopback: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let server = trust_gate_facilitator::start(config, loopback)
        .await
        .unwrap();
    let listed = pulls_listed(&server.url(), &asset, 1).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let pull = &listed[0];
    assert!(pull["transaction"].is_string(), "{pull}");
    let id = pull["paymentIdHash"].as_str().unwrap().to_string();
    let receipt: Value = reqwest::get(format!("{}/receipt/{id}", server.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(receipt["exists"], true, "{receipt}");
    assert_eq!(receipt["value"], amount.to_string(), "{receipt}");
    let (ok, out, err) = cli(&env, &["subscriptions", "--payer-agent", &asset]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(&format!("pulled {amount} of {amount}")),
        "{out}"
    );
    assert!(out.contains("next pull: at "), "{out}");

    // The next period with the payer's kill switch engaged (before the clock moves, so that
    // no round of the crank slips in between): refused by name, nothing moves.
    let owner = &subscriber.owner;
    let pause = env
        .b
        .set_killswitch(&owner.pubkey(), &[], &subscriber.asset(), true);
    env.send(&[pause], &[owner]).await.unwrap();
    env.localnet.warp(DAY).await.unwrap();
    let round = server.facilitator.reclaim_once().await.unwrap();
    assert!(
        round
            .failures
            .iter()
            .any(|f| f.contains("KillSwitchEngaged")),
        "{round:?}"
    );
    let (_, out, _) = cli(&env, &["subscriptions", "--payer-agent", &asset]);
    assert!(out.contains(&format!("pulled 0 of {amount}")), "{out}");
    assert_eq!(pulls_listed(&server.url(), &asset, 1).await.len(), 1);
    let release = env
        .b
        .set_killswitch(&owner.pubkey(), &[], &subscriber.asset(), false);
    env.send(&[release], &[owner]).await.unwrap();
    let listed = pulls_listed(&server.url(), &asset, 2).await;
    assert_ne!(listed[0]["paymentIdHash"], listed[1]["paymentIdHash"]);

    // The cancel: both rents back to the delegator, less the fee it pays.
    let before = env.rpc.get_balance(&owner.pubkey()).await.unwrap();
    let (ok, out, err) = cli(&env, &["unsubscribe", &record]);
    assert!(ok, "{out}{err}");
    let rent = rent_returned(&out);
    assert_eq!(rent, 2_157_600 + 2_359_440, "{out}");
    let after = env.rpc.get_balance(&owner.pubkey()).await.unwrap();
    assert_eq!(after, before + rent - 5_000);
    let (_, out, _) = cli(&env, &["subscriptions", "--payer-agent", &asset]);
    assert!(out.starts_with("0 subscription(s)"), "{out}");
}

/// The lamports `unsubscribe` says it returned.
fn rent_returned(out: &str) -> u64 {
    out.lines()
        .find_map(|l| l.split_once("lamports").map(|(head, _)| head))
        .and_then(|head| head.rsplit(' ').nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no rent returned in {out}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_sets_one_up_and_bad_input_is_named() {
    let env = fixture::seeded().await;
    let w = &env.world;
    let payer = w.payer(3).unwrap();
    let service = w.service.asset().to_string();
    let base = ["subscribe", "--payee", &service];

    let (ok, _, err) = cli(
        &env,
        &[&base[..], &["--amount", "0", "--period-secs", "60"]].concat(),
    );
    assert!(!ok && err.contains("--amount"), "{err}");
    let (ok, _, err) = cli(
        &env,
        &[&base[..], &["--amount", "5", "--period-secs", "0"]].concat(),
    );
    assert!(!ok && err.contains("--period-secs"), "{err}");
    let (ok, _, err) = cli(
        &env,
        &[
            &base[..],
            &["--amount", "5", "--period-secs", "60", "--policy-id", "9"],
        ]
        .concat(),
    );
    assert!(
        !ok && err.contains("--policy-id") && err.contains("no policy 9"),
        "{err}"
    );
    // The vault-funded payer's policy: the chain refuses it by name.
    let vault = w.vault_payer().asset().to_string();
    let (ok, out, err) = cli(
        &env,
        &[
            &base[..],
            &[
                "--amount",
                "5",
                "--period-secs",
                "60",
                "--payer-agent",
                &vault,
            ],
        ]
        .concat(),
    );
    assert!(!ok && err.contains("SubscriptionVaultFunded"), "{out}{err}");

    let (ok, out, err) = cli(
        &env,
        &[&base[..], &["--amount", "250000", "--period-secs", "3600"]].concat(),
    );
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("Subscribed: ") && out.contains("(nonce 1)"),
        "{out}"
    );
    let by_payer = SubscribedBy::Payer(payer.asset());
    let mine = pulls::list(&env.rpc, &env.b.ids.gate, by_payer)
        .await
        .unwrap();
    assert_eq!(mine.len(), 1, "{mine:?}");
    let d = mine[0].delegation.unwrap();
    assert_eq!((d.amount_per_period, d.period_length_s), (250_000, 3_600));
    assert_eq!(d.delegator, payer.owner.pubkey());
    let record = mine[0].address.to_string();
    assert!(out.contains(&format!("record {record}")), "{out}");
    // A second one takes the next free nonce.
    let (ok, out, err) = cli(
        &env,
        &[&base[..], &["--amount", "1", "--period-secs", "60"]].concat(),
    );
    assert!(ok && out.contains("(nonce 2)"), "{out}{err}");

    // Someone else's key cannot cancel it: refused before anything is sent.
    let stranger = tempfile_keypair(&w.service.owner);
    let (ok, _, err) = cli(&env, &["unsubscribe", &record, "--keypair", &stranger]);
    assert!(
        !ok && err.contains("is not the subscription's delegator"),
        "{err}"
    );
    let (ok, _, err) = cli(&env, &["unsubscribe", &service]);
    assert!(!ok && err.contains("neither a gated subscription"), "{err}");
    let (ok, out, err) = cli(&env, &["unsubscribe", &record, "--revoke-authority"]);
    assert!(ok, "{out}{err}");
    // The record's, the delegation's and the authority's rent.
    assert_eq!(
        rent_returned(&out),
        2_157_600 + 2_359_440 + 1_628_640,
        "{out}"
    );
}

/// `key` written to a keypair file in a fresh temporary directory; its path.
fn tempfile_keypair(key: &solana_sdk::signature::Keypair) -> String {
    let dir = std::env::temp_dir().join(format!("trust-gate-sub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stranger.json");
    solana_sdk::signature::write_keypair_file(key, &path).unwrap();
    path.to_string_lossy().into_owned()
}
