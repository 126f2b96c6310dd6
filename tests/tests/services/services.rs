//! A seeded localnet with the facilitator and the demo running on loopback.

use crate::fixture::{self, Env};
use reqwest::{Client, Response};
use serde_json::Value;
use solana_sdk::signer::Signer;
use std::net::SocketAddr;
use std::sync::Arc;
use trust_gate_client::{AtomicityEnforced, Network};
use trust_gate_facilitator::{Config, FacilitatorKey, MountConfig};

pub struct Services {
    pub env: Env,
    pub facilitator: trust_gate_facilitator::Server,
    pub demo: trust_gate_demo::Server,
    pub http: Client,
}

pub fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// The demo facilitator's configuration against `rpc_url`.
pub fn config(env: &Env, rpc_url: &str) -> Config {
    let mut c = Config::new(MountConfig {
        rpc_url: rpc_url.into(),
        facilitator: FacilitatorKey::Keypair(Arc::new(env.world.facilitator.insecure_clone())),
        network: Network::Localnet,
        atomicity_enforced: AtomicityEnforced::TRUE,
        default_policy_id: None,
    });
    c.trusted_services = vec![env.world.service_key.pubkey()];
    // The plain channel schemes take the demo world's mints, as `trust-gate up` sets.
    c.sponsor.plain_assets = trust_gate_facilitator::advances::assets::PlainAssets::List(vec![
        env.world.mint(),
        env.world.metered_mint(),
    ]);
    // No crank unless a test runs one: its rounds' reads would count in the tests that count
    // a route's RPC calls.
    c.reclaim_interval = None;
    c
}

pub async fn start() -> Services {
    start_on(fixture::seeded().await).await
}

/// As [`start`], with the facilitator's configuration edited first.
pub async fn start_with(edit: impl FnOnce(&mut Config)) -> Services {
    start_on_with(fixture::seeded().await, edit).await
}

/// Lets one payer's settlements arrive all at once: no per-payer rate limit and no bound on
/// those waiting for the payer's turn. The tests of many concurrent payments of one payer
/// send them far faster than one payer on a cluster could settle them.
pub fn unthrottled_payers(c: &mut Config) {
    c.limits.per_payer = None;
    c.limits.max_waiting_per_payer = usize::MAX;
}

/// The facilitator and the demo on `env`'s seeded localnet.
pub async fn start_on(env: Env) -> Services {
    start_on_with(env, |_| {}).await
}

/// As [`start_on`], with the facilitator's configuration edited first.
pub async fn start_on_with(env: Env, edit: impl FnOnce(&mut Config)) -> Services {
    let mut c = config(&env, &env.localnet.rpc_url());
    edit(&mut c);
    let facilitator = trust_gate_facilitator::start(c, loopback()).await.unwrap();
    // The demo signs its own URL into challenges: bind first, then tell it where it is.
    let listener = std::net::TcpListener::bind(loopback()).unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let demo_config =
        trust_gate_demo::DemoConfig::demo_world(&facilitator.url(), &format!("http://{addr}"));
    let demo = trust_gate_demo::start(demo_config, addr).await.unwrap();
    Services {
        env,
        facilitator,
        demo,
        http: Client::new(),
    }
}

impl Services {
    pub fn f(&self, path: &str) -> String {
        format!("{}{path}", self.facilitator.url())
    }

    pub fn d(&self, path: &str) -> String {
        format!("{}{path}", self.demo.url())
    }

    /// Pays the demo's /protected with the paying client (`trust-gate pay`'s code path),
    /// signed by `signer`, as the payer agent `payer_agent` (the demo's default when `None`).
    pub async fn pay(
        &self,
        payer_agent: Option<solana_sdk::pubkey::Pubkey>,
        signer: &solana_sdk::signature::Keypair,
    ) -> trust_gate_pay::exact::PayOutcome {
        self.env
            .pay_protected(&self.demo.url(), payer_agent, signer)
            .await
    }

    /// GET the demo's /protected as the payer agent `asset` (the demo's payer header).
    pub async fn protected_as(&self, asset: &solana_sdk::pubkey::Pubkey) -> Response {
        self.http
            .get(self.d("/protected"))
            .header("X-Demo-Payer-Agent", asset.to_string())
            .send()
            .await
            .unwrap()
    }

    /// GET `url` and its JSON body.
    pub async fn get_json(&self, url: String) -> Value {
        self.http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The facilitator's receipt of a payment id hash (hex).
    pub async fn receipt(&self, payment_id_hex: &str) -> Value {
        self.get_json(self.f(&format!("/receipt/{payment_id_hex}")))
            .await
    }

    pub async fn post(&self, path: &str, body: &Value) -> (u16, Response) {
        let r = self
            .http
            .post(self.f(path))
            .json(body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r)
    }
}

/// A header's value, or "" when absent.
pub fn header(r: &Response, name: &str) -> String {
    r.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}
