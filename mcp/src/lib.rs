//! trust-gate's MCP tool server: 34 tools (18 read, 13 write, 3 discovery), 4 resources and
//! 3 prompts over stdio or streamable HTTP, built on rmcp.
//!
//! - [`config`]: the environment table, validated at boot; [`signer`]: the signer chain.
//! - [`tools`]: the tools ([`tools::read`], [`tools::write`], [`tools::holdback`],
//!   [`tools::subscriptions`], [`tools::pay`], [`tools::discovery`]), each returning a typed
//!   result whose schema is its `outputSchema`; [`args`] parses their arguments,
//!   [`envelope`] shapes errors, [`views`] types accounts, [`policy_input`] turns policy
//!   arguments into program parameters.
//! - [`server`]: the MCP handler; [`resources`], [`prompts`], [`docs`] (the bundled corpus),
//!   [`explain`] (deny codes).
//! - [`egress`]: where `gate_pay` may send requests (no loopback, private or link-local
//!   address unless allowed); [`pay_sessions`]: the x402 sessions it keeps open.
//! - [`http`]: the streamable HTTP transport: sessions for 2025 clients, stateless for
//!   2026-07-28 ones, `/healthz`, CORS and the bearer token (`MCP_BEARER_TOKEN`), without
//!   which a server holding a signer stays on loopback.

pub mod args;
pub mod config;
pub mod context;
pub mod docs;
pub mod egress;
pub mod envelope;
pub mod explain;
pub mod http;
pub mod pay_sessions;
pub mod policy_input;
pub mod prompts;
pub mod resources;
pub mod server;
pub mod signer;
pub mod tools;
pub mod views;

pub use config::{Config, Transport};
pub use context::Ctx;
pub use http::HttpServer;
pub use tools::GateServer;

use rmcp::ServiceExt;
use std::net::SocketAddr;
use std::sync::Arc;

/// Serves MCP over stdin/stdout until the client closes it.
pub async fn serve_stdio(config: Config) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let ctx = Arc::new(Ctx::new(config));
    let running = GateServer::new(ctx).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

/// Serves streamable HTTP on the configured host and port.
pub async fn serve_http(config: Config) -> std::io::Result<HttpServer> {
    let addr = SocketAddr::new(config.http_host, config.http_port);
    http::serve(config, addr).await
}

/// Boots from the environment: prints the one mainnet warning (stderr) and serves the
/// configured transport.
pub async fn run(config: Config) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if let Some(w) = &config.warning {
        eprintln!("warning: {w}");
    }
    match config.transport {
        Transport::Stdio => serve_stdio(config).await,
        Transport::Http => {
            let server = serve_http(config).await?;
            eprintln!(
                "trust-gate-mcp: streamable HTTP on http://{}/ (health: /healthz)",
                server.addr
            );
            server.wait().await;
            Ok(())
        }
    }
}
