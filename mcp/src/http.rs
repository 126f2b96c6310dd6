//! The streamable HTTP transport: JSON-RPC by POST to `/`, server messages over SSE. Clients
//! of the 2025 revisions get one session (and one transport) per `Mcp-Session-Id`, idle
//! sessions evicted; clients of 2026-07-28 are served statelessly (rmcp answers
//! `server/discover` and reads the version and capabilities from each request's `_meta`).
//! `/healthz`; CORS for any origin with `Mcp-Session-Id` exposed, except that a server holding
//! a signer refuses a request from a browser origin other than this machine's and
//! `MCP_ALLOWED_ORIGINS`.
//!
//! With `MCP_BEARER_TOKEN` every request to the MCP endpoint must carry
//! `Authorization: Bearer <token>` (401 otherwise); a server holding a signer listens beyond
//! loopback only with one ([`Config::check_exposure`]). `/healthz` stays open: it shows
//! nothing secret (the signer's public key, the RPC's origin, counts), and load balancers
//! probe it without credentials.

use crate::config::{BearerToken, Config, Transport};
use crate::context::Ctx;
use crate::server::SERVICE_NAME;
use crate::tools::GateServer;
use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderName, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};

const SESSION_HEADER: &str = "mcp-session-id";

#[derive(Clone)]
struct AppState {
    ctx: Arc<Ctx>,
    sessions: Arc<LocalSessionManager>,
    tool_count: usize,
}

/// A running HTTP server.
pub struct HttpServer {
    pub addr: SocketAddr,
    /// How many tools it serves.
    pub tool_count: usize,
    sessions: Arc<LocalSessionManager>,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Sessions currently held.
    pub async fn active_sessions(&self) -> usize {
        self.sessions.sessions.read().await.len()
    }

    /// Stops accepting requests and ends every session.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }

    /// Waits until the server stops (it runs until shut down or dropped elsewhere).
    pub async fn wait(mut self) {
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Binds `addr` (port 0 picks one) and serves `config` over HTTP until shut down. A server
/// holding a signer without `MCP_BEARER_TOKEN` refuses an address that is not loopback
/// (`InvalidInput`, naming the variables).
pub async fn serve(mut config: Config, addr: SocketAddr) -> std::io::Result<HttpServer> {
    config
        .check_exposure(addr.ip())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    // Whatever MCP_TRANSPORT said, this server speaks HTTP (the auth_required hint depends on it).
    config.transport = Transport::Http;
    let ctx = Arc::new(Ctx::new(config));
    let cancel = CancellationToken::new();
    let mut manager = LocalSessionManager::default();
    // The worker of a session quits after this long without a message; the service then
    // closes the session, which removes it from the map.
    manager.session_config.keep_alive = Some(ctx.config.session_idle);
    let sessions = Arc::new(manager);
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.child_token())
        .with_legacy_session_mode(true);
    if !addr.ip().to_canonical().is_loopback() {
        // A hosted deploy answers to its own host names; DNS rebinding protection is for
        // servers on a user's machine, which bind loopback.
        config = config.disable_allowed_hosts();
    }
    if ctx.config.signer.is_some() {
        // A server that signs (and pays: gate_pay) answers no web page but its own machine's
        // and those named in MCP_ALLOWED_ORIGINS: otherwise any site a browser visits could
        // post tool calls to it on loopback. Clients outside a browser send no Origin.
        config = config
            .with_allowed_origins(ctx.config.allowed_origins.iter().cloned())
            .enforce_origin_validation();
    }
    let factory_ctx = ctx.clone();
    let service = StreamableHttpService::new(
        move || Ok(GateServer::new(factory_ctx.clone())),
        sessions.clone(),
        config,
    );
    let tool_count = GateServer::new(ctx.clone()).tool_router.list_all().len();
    let state = AppState {
        ctx,
        sessions: sessions.clone(),
        tool_count,
    };
    let mut mcp = Router::new()
        .route_service("/", service)
        .layer(middleware::from_fn_with_state(state.clone(), known_session));
    if let Some(token) = state.ctx.config.bearer_token.clone() {
        // Outermost: a caller without the token learns nothing, not even which sessions exist.
        mcp = mcp.layer(middleware::from_fn_with_state(Arc::new(token), bearer));
    }
    let app = Router::new()
        .route("/healthz", get(healthz))
        .with_state(state)
        .merge(mcp)
        .layer(cors());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let stop = cancel.clone();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });
    Ok(HttpServer {
        addr,
        tool_count,
        sessions,
        cancel,
        task: Some(task),
    })
}

/// `/healthz`: open to anyone (CORS allows any origin), so nothing secret.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Health {
    ok: bool,
    service: &'static str,
    version: &'static str,
    network: &'static str,
    /// The RPC's origin only, never its API key.
    rpc_url: String,
    uptime_seconds: u64,
    active_sessions: usize,
    tool_count: usize,
    /// The signer's public key, when the server holds one.
    signer: Option<String>,
}

async fn healthz(State(s): State<AppState>) -> Json<Health> {
    let c = &s.ctx.config;
    Json(Health {
        ok: true,
        service: SERVICE_NAME,
        version: env!("CARGO_PKG_VERSION"),
        network: c.network.name(),
        rpc_url: trust_gate_client::redact::origin(&c.rpc_url),
        uptime_seconds: s.ctx.started.elapsed().as_secs(),
        active_sessions: s.sessions.sessions.read().await.len(),
        tool_count: s.tool_count,
        signer: c
            .signer
            .as_ref()
            .map(|(k, _)| solana_sdk::signer::Signer::pubkey(k.as_ref()).to_string()),
    })
}

/// The first protocol revision without sessions: a request of it or later is served
/// statelessly, whatever `Mcp-Session-Id` it carries. (Revisions are dates, so they compare as
/// strings.)
pub const STATELESS_REVISION: &str = "2026-07-28";

/// Whether a request speaks a stateless revision (its `MCP-Protocol-Version` header, a
/// `YYYY-MM-DD` date; anything else is left to rmcp to refuse).
fn stateless(req: &Request) -> bool {
    req.headers()
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .is_some_and(|v| {
            let b = v.as_bytes();
            b.len() == 10
                && b.iter().enumerate().all(|(i, c)| {
                    if i == 4 || i == 7 {
                        *c == b'-'
                    } else {
                        c.is_ascii_digit()
                    }
                })
                && v >= STATELESS_REVISION
        })
}

/// A request naming a session this server does not hold (never created, closed or evicted)
/// gets 404 with a JSON-RPC error that says what to do, instead of a bare status. A request
/// of a stateless revision has no session: a stale `Mcp-Session-Id` on it is ignored, as the
/// revision asks, and dropped so that nothing downstream looks it up.
async fn known_session(State(s): State<AppState>, mut req: Request, next: Next) -> Response {
    if stateless(&req) {
        req.headers_mut().remove(SESSION_HEADER);
        return next.run(req).await;
    }
    let Some(id) = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return next.run(req).await;
    };
    if req.method() == Method::OPTIONS
        || s.sessions
            .has_session(&id.clone().into())
            .await
            .unwrap_or(false)
    {
        return next.run(req).await;
    }
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32001,
            "message": format!(
                "Session not found: {id}. It expired after {} s idle, was closed, or never \
                 existed; send initialize without Mcp-Session-Id to start a new session",
                s.ctx.config.session_idle.as_secs()
            ),
        },
    });
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

/// Every request to the MCP endpoint carries `Authorization: Bearer <MCP_BEARER_TOKEN>`, else
/// 401 with `WWW-Authenticate: Bearer` and a JSON-RPC error saying so (RFC 6750's
/// `invalid_token` when a token was sent but is not this one). A CORS preflight is answered
/// before this (browsers send no credentials on one), and tells nothing.
async fn bearer(State(token): State<Arc<BearerToken>>, req: Request, next: Next) -> Response {
    let presented = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    let (challenge, message) = match presented {
        Some(t) if token.matches(t) => return next.run(req).await,
        Some(_) => (
            format!(r#"Bearer realm="{SERVICE_NAME}", error="invalid_token""#),
            "Unauthorized: the Authorization: Bearer token is not this server's \
             (MCP_BEARER_TOKEN)",
        ),
        None => (
            format!(r#"Bearer realm="{SERVICE_NAME}""#),
            "Unauthorized: this server needs Authorization: Bearer <token> on every request \
             (the token is its MCP_BEARER_TOKEN)",
        ),
    };
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32000, "message": message},
    });
    let mut res = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    if let Ok(v) = challenge.parse() {
        res.headers_mut().insert(WWW_AUTHENTICATE, v);
    }
    res
}

fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::any())
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        // Whatever a browser asks to send: MCP 2026-07-28 adds `Mcp-Method`, `Mcp-Name` and a
        // `Mcp-Param-*` per marked argument, which no fixed list can name. No credentials are
        // allowed, so mirroring opens nothing more than any origin already has.
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([HeaderName::from_static(SESSION_HEADER)])
        .max_age(std::time::Duration::from_secs(600))
}
