//! trust-gate's x402 v2 facilitator.
//!
//! - POST /verify: the gate's decision for a verify context or an x402 request, by
//!   simulation (nothing is written).
//! - POST /settle: the atomic settlement of a client-signed
//!   [gate_payment_strict, TransferChecked, emit_feedback] transaction (optionally after a
//!   ComputeBudget unit limit and unit price), co-signed as fee payer.
//! - POST /dispute: a payer-signed `dispute_payment` transaction, checked and co-signed.
//! - GET /receipt/{paymentIdHashHex}: the payment's receipt, also once its records are closed.
//! - GET /payments?payer=: a payer agent's payments this facilitator keeps records of.
//! - GET /approvals, GET /approvals/{id}: the payments held for an approval.
//! - GET /supported, GET /healthz.
//!
//! [`routes::ROUTES`] lists them (`trust-gate up` prints that list).
//!
//! [`mount`] gives only /verify and /receipt, for embedding in another axum app.
//!
//! Modules: [`routes`] (HTTP) hands each x402 request to its scheme in [`schemes`] (each
//! scheme behind one trait, found by name in one registry: `trust-gate`, and x402's channel
//! schemes `upto` and `batch-settlement`, stock and gated), which work on what they share,
//! [`service`]: the [`Facilitator`] (the chain, the key, settings, limits, caches, keepers),
//! sending, a channel's reads and opens, payments held for an approval, the rent advanced
//! for channels, receipts and payments, disputes and the crank. Below them: [`config`]
//! (typed config and its validation), [`verify`] (a `/verify` body), [`adapter`] (a
//! challenge: `extra.gate`, service signature, memo, expiry), [`inspect`] and
//! [`channel_open`] (a payment's and an open's transaction checks), [`budget`] (the
//! priority-fee caps), [`decisions`] (deciding in one round trip from checked cached
//! inputs), [`payer_signers`] (who may sign for a payer agent), [`payee_account`] (required
//! memos), [`limits`] (rate limits), [`advances`] (the rent ledger and its bounds),
//! [`coalesce`] (the same on-chain work asked at once runs once), [`store`] (what outlives a
//! request: in process, or in Redis shared by replicas) and its keepers [`payer_locks`],
//! [`payment_records`], [`sessions`] and [`approvals`], [`answer`] (a settlement's answer,
//! every scheme's), [`reject`] (refusals, one type for every route) and [`redact`] (URLs
//! shown as their origin only). Resource servers beside it answer a paid request once per
//! payment id with `trust_gate_server::paid_once`.

pub mod adapter;
pub mod advances;
pub mod answer;
pub mod approvals;
pub mod bounded;
pub mod budget;
pub mod channel_open;
pub mod coalesce;
pub mod config;
pub mod decisions;
pub mod holdback;
pub mod inspect;
pub mod limits;
pub mod payee_account;
pub mod payer_locks;
pub mod payer_signers;
pub mod payment_records;
/// URLs shown as their origin only; the client SDK's, which the MCP server shares.
pub use trust_gate_client::redact;
pub mod reject;
pub mod routes;
pub mod schemes;
pub mod service;
pub mod sessions;
pub mod store;
pub mod verify;

pub use config::{Config, ConfigError, FacilitatorKey, MountConfig, RawSettings};
pub use service::Facilitator;

use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;

/// Default port of the facilitator.
pub const DEFAULT_PORT: u16 = 4020;

/// The mountable router: POST /verify and GET /receipt only. `config.atomicity_enforced`
/// can only be `true` (its type has no other value).
pub fn mount(config: MountConfig) -> Result<Router, ConfigError> {
    let f = Facilitator::new(Config::new(config))?;
    Ok(routes::mount_routes(f))
}

/// Every route, with the HTTP layers (body limit, timeout, CORS, and the per-address rate
/// limit, which needs the peer address: serve with
/// `into_make_service_with_connect_info::<SocketAddr>()`, as [`start`] does).
pub fn router(f: Arc<Facilitator>) -> Router {
    routes::http_layers(routes::limit_callers(routes::all_routes(f.clone()), f))
}

/// A running facilitator server. Dropping it stops the server.
pub struct Server {
    pub addr: SocketAddr,
    pub facilitator: Arc<Facilitator>,
    task: tokio::task::JoinHandle<()>,
    /// The crank, when it runs (see [`service::crank`]), and the schemes' background work
    /// (see [`schemes::Scheme::background`]).
    background: Vec<tokio::task::JoinHandle<()>>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
        for task in &self.background {
            task.abort();
        }
    }
}

/// Why the server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Validates `config` against the cluster (RPC reachable, network, lookup tables) and the
/// lock store (Redis answers, when configured), binds `addr` and serves until the returned
/// [`Server`] is dropped; with a keypair and a reclaim interval, the crank runs beside it.
pub async fn start(config: Config, addr: SocketAddr) -> Result<Server, StartError> {
    let reclaim_every = config.reclaim_interval;
    let f = Facilitator::new(config)?;
    f.check().await?;
    // What it advanced, counted from the chain before it sponsors anything.
    match f.reconcile_advances().await {
        Ok(n) => tracing::info!(channels = n, "rent advanced: counted from the chain"),
        Err(r) => tracing::warn!("counting the rent advanced: {}", r.message),
    }
    f.advances
        .rebuild_due(trust_gate_client::simulate::now_unix(), 0);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| StartError::Bind { addr, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| StartError::Bind { addr, source })?;
    let app = router(f.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("facilitator server stopped: {e}");
        }
    });
    let crank = match reclaim_every {
        Some(every) if f.key.keypair().is_some() => Some(service::crank::spawn(f.clone(), every)),
        _ => None,
    };
    let background = (schemes::registry().iter())
        .filter_map(|s| s.background(&f))
        .chain(crank)
        .collect();
    Ok(Server {
        addr,
        facilitator: f,
        task,
        background,
    })
}
