//! The routes: `/` (the known agents, any asset), `/agents/{asset}` (an agent's page),
//! `/agent?asset=` (the form's target), `/receipts/{log}` (a payment's receipt) and
//! `/healthz`. Handlers are thin: [`crate::gather`] reads, [`crate::pages`] draws.

use crate::config::DashboardConfig;
use crate::view::SettlementRow;
use crate::{gather, pages};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use solana_commitment_config::CommitmentConfig;
use solana_sdk::pubkey::Pubkey;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use trust_gate_client::holdback::HoldbackView;
use trust_gate_client::pda::Pdas;
use trust_gate_client::{chain, decode, RpcClient};

/// How long one JSON-RPC call may take.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);
/// How long reading a page may take in all.
const PAGE_TIMEOUT: Duration = Duration::from_secs(30);

struct App {
    config: DashboardConfig,
    rpc: RpcClient,
    http: reqwest::Client,
}

type Shared = State<Arc<App>>;

/// A running dashboard.
pub struct Server {
    pub addr: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Serves until the process ends.
    pub async fn wait(mut self) {
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

/// Binds `addr` (port 0 picks one) and serves the dashboard.
pub async fn start(config: DashboardConfig, addr: SocketAddr) -> std::io::Result<Server> {
    // A slow node must not hold a page: each call gives up after RPC_TIMEOUT, and a page
    // after PAGE_TIMEOUT.
    let rpc = RpcClient::new_with_timeout_and_commitment(
        config.rpc_url.clone(),
        RPC_TIMEOUT,
        CommitmentConfig::confirmed(),
    );
    let app = Arc::new(App {
        config,
        rpc,
        http: reqwest::Client::new(),
    });
    let router = Router::new()
        .route("/", get(index))
        .route("/agent", get(agent_form))
        .route("/agents/{asset}", get(agent))
        .route("/receipts/{log}", get(receipt))
        .route("/healthz", get(healthz))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(Server {
        addr,
        task: Some(task),
    })
}

fn bad_request(field: &str, value: &str) -> Response {
    let shown: String = value.chars().take(60).collect();
    (
        StatusCode::BAD_REQUEST,
        Html(
            pages::problem(
                "Not an address",
                &format!("{field}: {shown:?} is not a base58 public key"),
            )
            .into_string(),
        ),
    )
        .into_response()
}

async fn index(State(app): Shared) -> Html<String> {
    Html(pages::index(&app.config).into_string())
}

#[derive(Deserialize)]
struct AssetQuery {
    asset: Option<String>,
}

/// The form's answer: to the agent's own page, so that it can be bookmarked.
async fn agent_form(Query(q): Query<AssetQuery>) -> Response {
    let asset = q.asset.unwrap_or_default();
    match Pubkey::from_str(asset.trim()) {
        Ok(a) => Redirect::to(&format!("/agents/{a}")).into_response(),
        Err(_) => bad_request("asset", &asset),
    }
}

async fn agent(State(app): Shared, Path(asset): Path<String>) -> Response {
    let Ok(asset) = Pubkey::from_str(&asset) else {
        return bad_request("asset", &asset);
    };
    match tokio::time::timeout(
        PAGE_TIMEOUT,
        gather::agent(&app.rpc, &app.http, &app.config, asset),
    )
    .await
    {
        Ok(view) => Html(pages::agent(&app.config, &view).into_string()).into_response(),
        Err(_) => (
            StatusCode::GATEWAY_TIMEOUT,
            Html(
                pages::problem(
                    "The chain did not answer in time",
                    &format!(
                        "reading the agent's accounts took more than {} s; the page will try again",
                        PAGE_TIMEOUT.as_secs()
                    ),
                )
                .into_string(),
            ),
        )
            .into_response(),
    }
}

async fn receipt(State(app): Shared, Path(log): Path<String>) -> Response {
    let Ok(log) = Pubkey::from_str(&log) else {
        return bad_request("log", &log);
    };
    let read = match chain::account(&app.rpc, &log).await {
        Ok(a) => a,
        Err(e) => {
            let why = trust_gate_client::redact::urls_in(&e.to_string());
            return (
                StatusCode::BAD_GATEWAY,
                Html(pages::problem("The chain did not answer", &why).into_string()),
            )
                .into_response();
        }
    };
    let read = read.filter(|a| a.owner == app.config.ids.gate);
    let log_account = read
        .as_ref()
        .and_then(|a| decode::account::<gate::state::FeedbackLog>("FeedbackLog", &a.data).ok());
    // A held payment's log goes on with its share, which Anchor's reading leaves aside.
    let holdback = read
        .as_ref()
        .and_then(|a| HoldbackView::from_log_data(&a.data));
    let Some(l) = log_account else {
        return (
            StatusCode::NOT_FOUND,
            Html(
                pages::problem(
                    "No payment log",
                    &format!("{log} holds no payment log of the gate: it was never one, or it has closed (its facilitator's /receipt keeps a closed payment's record)"),
                )
                .into_string(),
            ),
        )
            .into_response();
    };
    let decimals = chain::mint(&app.rpc, "mint", &l.mint)
        .await
        .ok()
        .flatten()
        .map(|m| m.decimals);
    let dispute = Pdas::new(app.config.ids).dispute(&l.facilitator, &l.payment_id_hash);
    let disputed = chain::account(&app.rpc, &dispute)
        .await
        .map(|a| a.is_some_and(|a| a.owner == app.config.ids.gate))
        .map_err(|e| trust_gate_client::redact::urls_in(&e.to_string()));
    let row = SettlementRow {
        disputed: disputed.as_ref().is_ok_and(|d| *d),
        holdback,
        ..SettlementRow::of_log(log, &l)
    };
    // The held share's times are the cluster's, as the agent's page reads them.
    let now = chain::unix_time(&app.rpc)
        .await
        .unwrap_or_else(|_| trust_gate_client::simulate::now_unix());
    Html(pages::receipt(&app.config, &log, &row, &disputed, decimals, now).into_string())
        .into_response()
}

async fn healthz(State(app): Shared) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "ok": true,
        "service": "trust-gate-dashboard",
        "network": app.config.ids.network.name(),
        "rpcUrl": trust_gate_client::redact::origin(&app.config.rpc_url),
        "facilitator": app.config.facilitator_url.as_deref().map(trust_gate_client::redact::origin),
        "knownAgents": app.config.known.len(),
    }))
}
