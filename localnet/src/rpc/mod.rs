//! Solana JSON-RPC 2.0 over HTTP for the in-process chain.
//!
//! `POST /` with one request or a batch; the methods and response shapes of a cluster's RPC
//! for what trust-gate and common clients (solana-rpc-client, @solana/web3.js) call. Unknown
//! methods answer -32601.

mod encoding;
mod methods;

use crate::chain::Chain;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;

/// The version the localnet reports (the Solana crates it runs on).
pub const SOLANA_VERSION: &str = "3.1.12";

/// A JSON-RPC error.
#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError {
            code: -32602,
            message: message.into(),
            data: None,
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        RpcError {
            code: -32603,
            message: message.into(),
            data: None,
        }
    }
}

pub type RpcResult = Result<Value, RpcError>;

/// The router serving JSON-RPC at `/` (GET `/health` answers "ok" like a validator).
pub fn router(chain: Arc<Chain>) -> Router {
    Router::new()
        .route("/", post(handle))
        .route("/health", axum::routing::get(|| async { "ok" }))
        .layer(tower_http::cors::CorsLayer::permissive())
        .with_state(chain)
}

/// Binds `addr` and serves until the task is dropped; returns the bound address.
pub async fn serve(
    chain: Arc<Chain>,
    addr: SocketAddr,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = router(chain);
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("localnet RPC server stopped: {e}");
        }
    });
    Ok((bound, task))
}

async fn handle(State(chain): State<Arc<Chain>>, body: axum::body::Bytes) -> Json<Value> {
    let parsed: Result<Value, _> = serde_json::from_slice(&body);
    let Ok(request) = parsed else {
        return Json(error_response(
            Value::Null,
            RpcError {
                code: -32700,
                message: "Parse error".into(),
                data: None,
            },
        ));
    };
    match request {
        Value::Array(batch) => {
            let mut out = Vec::with_capacity(batch.len());
            for r in batch {
                out.push(one(&chain, r).await);
            }
            Json(Value::Array(out))
        }
        r => Json(one(&chain, r).await),
    }
}

async fn one(chain: &Arc<Chain>, request: Value) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = request.get("method").and_then(|m| m.as_str()) else {
        return error_response(
            id,
            RpcError {
                code: -32600,
                message: "Invalid request".into(),
                data: None,
            },
        );
    };
    chain.count_rpc_call(method);
    let params = match request.get("params") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => {
            return error_response(id, RpcError::invalid_params("params must be an array"));
        }
    };
    match methods::dispatch(chain, method, &params).await {
        Ok(result) => json!({"jsonrpc": "2.0", "result": result, "id": id}),
        Err(e) => error_response(id, e),
    }
}

fn error_response(id: Value, e: RpcError) -> Value {
    let mut error = json!({"code": e.code, "message": e.message});
    if let Some(data) = e.data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "error": error, "id": id})
}
