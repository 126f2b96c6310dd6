//! x402's `payment-identifier` on a resource server: a paid request is answered once per
//! payment id (`trust_gate_x402::payment_identifier` has the wire).
//!
//! [`PaidOnce::layer`] runs before the route's handler, so before anything verifies the
//! payment (a resend can no longer pass verification once its payment settled). A paid
//! request that carries an id is looked up by (method, path, id), bound to its payload's
//! digest:
//!
//! - a new id runs the handler; its answer is kept as it was sent (status, headers with
//!   `PAYMENT-RESPONSE`, body);
//! - the same id and payload again gets that answer back, and the handler does not run; while
//!   the first still runs, the resend waits for its answer (up to [`WAIT`]), else gets 503
//!   `payment_in_progress` with `Retry-After`;
//! - the same id with another payload is 409 `payment_identifier_conflict`;
//! - without an id where the route requires one, 400 `payment_identifier_required`; a
//!   malformed id is 400 `invalid_payment_identifier`.
//!
//! An answer that is not final (a 5xx, or a settlement still pending) is not kept: the id
//! stays bound to its payload, and the next resend of that payload runs the handler again
//! with [`Resumed`] set. Only then may a handler serve a settlement the facilitator reports
//! as `replayed` (sent by an earlier attempt): no answer was given for it yet. Without an id,
//! a replayed settlement is a payment already used.
//!
//! Kept in process, or in Redis when replicas share the ids (`redis_store`), for the
//! configured time (at least the challenges' lifetime). A handler that never finishes (its
//! replica died) leaves its id running for [`LEASE`]; after it, a resend runs again.

use crate::error::ApiError;
use crate::expiring::Expiring;
use crate::redis_store::RedisStore;
use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use trust_gate_client::simulate::now_unix;
use trust_gate_x402 as x402;
use trust_gate_x402::payment_identifier;

/// How long a resend waits for the first attempt's answer before it is told to retry.
pub const WAIT: Duration = Duration::from_secs(10);
/// A first attempt running longer than this is taken as lost (its replica died): a resend
/// then runs the handler again.
pub const LEASE: Duration = Duration::from_secs(120);
/// The largest answer kept (a larger one is passed on and not kept: the id is then resumable).
pub const MAX_KEPT_BYTES: usize = 1 << 20;

/// Set on a paid request whose id and payload were seen before without a final answer: the
/// handler may serve a settlement the facilitator reports as replayed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resumed(pub bool);

/// What is kept of an id.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    /// The payload's digest (hex).
    digest: String,
    #[serde(flatten)]
    phase: Phase,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "camelCase")]
enum Phase {
    /// A handler runs it, since this unix time.
    Running { since: i64 },
    /// Its last run gave no final answer.
    Open,
    /// Its answer.
    Done { answer: Kept },
}

/// An answer as it was sent.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Kept {
    status: u16,
    headers: Vec<(String, String)>,
    /// Base64.
    body: String,
}

impl Kept {
    fn response(&self) -> Response {
        let mut h = HeaderMap::new();
        for (k, v) in &self.headers {
            if let (Ok(k), Ok(v)) = (
                HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_str(v),
            ) {
                h.append(k, v);
            }
        }
        let body = STANDARD.decode(&self.body).unwrap_or_default();
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::OK);
        (status, h, body).into_response()
    }
}

/// Where ids are kept.
enum Store {
    /// One process: JSON values.
    Local(Expiring<String, String>),
    Redis(Arc<RedisStore>),
}

impl Store {
    /// Writes `value` unless `key` holds one: `None` when written, else the value there.
    async fn claim(&self, key: &str, value: &str, ttl: Duration) -> Result<Option<String>, String> {
        match self {
            Store::Local(m) => Ok(m.claim(key.to_string(), value.to_string(), ttl)),
            Store::Redis(r) => r
                .claim(key, value, Some(ttl))
                .await
                .map_err(|e| r.unavailable(e).to_string()),
        }
    }

    /// Replaces `old` with `new` at `key`; false when it no longer held `old`.
    async fn replace_if(
        &self,
        key: &str,
        old: &str,
        new: &str,
        ttl: Duration,
    ) -> Result<bool, String> {
        match self {
            Store::Local(m) => {
                Ok(m.replace_if(&key.to_string(), &old.to_string(), new.to_string(), ttl))
            }
            Store::Redis(r) => r
                .replace_if(key, old, new, Some(ttl))
                .await
                .map_err(|e| r.unavailable(e).to_string()),
        }
    }
}

/// What the lookup decided.
enum Begin {
    /// Run the handler (`resumed`: the payload was seen before without a final answer); the
    /// entry now says running, as this value.
    Run { resumed: bool, running: String },
    /// Answer this without running the handler.
    Answer(Response),
}

/// A resource server's payment ids (see the module docs).
pub struct PaidOnce {
    store: Store,
    /// How long an id is kept.
    ttl: Duration,
    /// Whether a paid request without an id is refused (the 402s declare `required: true`).
    pub required: bool,
}

impl PaidOnce {
    /// Ids kept in this process for `ttl`.
    pub fn in_process(ttl: Duration, required: bool) -> PaidOnce {
        PaidOnce {
            store: Store::Local(Expiring::default()),
            ttl,
            required,
        }
    }

    /// Ids kept in the Redis at `url` (shared by replicas) for `ttl`.
    pub fn redis(url: &str, ttl: Duration, required: bool) -> Result<PaidOnce, String> {
        Ok(PaidOnce {
            store: Store::Redis(Arc::new(RedisStore::new(url)?)),
            ttl,
            required,
        })
    }

    /// The 402's declaration of the extension.
    pub fn declaration(&self) -> Value {
        payment_identifier::declaration(self.required)
    }

    /// The middleware (`axum::middleware::from_fn_with_state`).
    pub async fn layer(State(p): State<Arc<PaidOnce>>, mut req: Request, next: Next) -> Response {
        let Some(payload) = req
            .headers()
            .get(x402::PAYMENT_SIGNATURE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| x402::decode_header::<Value>(x402::PAYMENT_SIGNATURE, v).ok())
        else {
            // No payment, or one the handler refuses as malformed.
            return next.run(req).await;
        };
        let id = match payment_identifier::id_of(&payload) {
            Ok(Some(id)) => id,
            Ok(None) if p.required => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "payment_identifier_required",
                    format!(
                        "extensions[\"{}\"].info.id: this route requires a payment id",
                        payment_identifier::KEY
                    ),
                )
            }
            Ok(None) => return next.run(req).await,
            Err(m) => return refusal(StatusCode::BAD_REQUEST, "invalid_payment_identifier", m),
        };
        let key = format!("paid-once:{} {}:{id}", req.method(), req.uri().path());
        let digest = trust_gate_client::decode::hex(&payment_identifier::digest(&payload));
        let running = match p.begin(&key, &digest).await {
            Ok(Begin::Answer(r)) => return r,
            Ok(Begin::Run { resumed, running }) => {
                req.extensions_mut().insert(Resumed(resumed));
                running
            }
            Err(m) => {
                return refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "payment_identifier_store_unavailable",
                    format!("{m}; nothing was settled"),
                )
            }
        };
        let answer = next.run(req).await;
        p.finish(&key, &digest, &running, answer).await
    }

    /// Looks `key` up, bound to `digest` (see the module docs).
    async fn begin(&self, key: &str, digest: &str) -> Result<Begin, String> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(10);
        loop {
            let running = self.entry(digest, Phase::Running { since: now_unix() });
            let Some(held) = self.store.claim(key, &running, self.ttl).await? else {
                return Ok(Begin::Run {
                    resumed: false,
                    running,
                });
            };
            let entry: Entry =
                serde_json::from_str(&held).map_err(|e| format!("a kept payment id: {e}"))?;
            if entry.digest != digest {
                return Ok(Begin::Answer(refusal(
                    StatusCode::CONFLICT,
                    "payment_identifier_conflict",
                    format!(
                        "extensions[\"{}\"].info.id: this id was used with another payment",
                        payment_identifier::KEY
                    ),
                )));
            }
            let lost = match entry.phase {
                Phase::Done { answer } => return Ok(Begin::Answer(answer.response())),
                Phase::Open => true,
                Phase::Running { since } => {
                    now_unix().saturating_sub(since)
                        > i64::try_from(LEASE.as_secs()).unwrap_or(i64::MAX)
                }
            };
            if lost {
                if self
                    .store
                    .replace_if(key, &held, &running, self.ttl)
                    .await?
                {
                    return Ok(Begin::Run {
                        resumed: true,
                        running,
                    });
                }
                continue;
            }
            if started.elapsed() >= WAIT {
                let mut r = refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "payment_in_progress",
                    "the first request with this payment id is still running: send the same payment again shortly",
                );
                r.headers_mut()
                    .insert("retry-after", HeaderValue::from_static("1"));
                return Ok(Begin::Answer(r));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// Keeps `answer` when it is final, else leaves the id open for a resend; returns it.
    async fn finish(&self, key: &str, digest: &str, running: &str, answer: Response) -> Response {
        let (parts, body) = answer.into_parts();
        let bytes = match to_bytes(body, MAX_KEPT_BYTES).await {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(%key, "a paid answer's body: {e}");
                let open = self.entry(digest, Phase::Open);
                self.keep(key, running, &open).await;
                return refusal(
                    StatusCode::BAD_GATEWAY,
                    "answer_lost",
                    "the paid answer could not be read: send the same payment again",
                );
            }
        };
        let state = if is_final(&parts.headers, parts.status) {
            Phase::Done {
                answer: Kept {
                    status: parts.status.as_u16(),
                    headers: parts
                        .headers
                        .iter()
                        .filter(|(k, _)| *k != "content-length" && *k != "transfer-encoding")
                        .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
                        .collect(),
                    body: STANDARD.encode(&bytes),
                },
            }
        } else {
            Phase::Open
        };
        self.keep(key, running, &self.entry(digest, state)).await;
        Response::from_parts(parts, Body::from(bytes))
    }

    async fn keep(&self, key: &str, running: &str, next: &str) {
        match self.store.replace_if(key, running, next, self.ttl).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!(%key, "a payment id changed while its request ran"),
            Err(e) => tracing::warn!(%key, "keeping a paid answer: {e}"),
        }
    }

    fn entry(&self, digest: &str, phase: Phase) -> String {
        serde_json::to_string(&Entry {
            digest: digest.into(),
            phase,
        })
        .unwrap_or_default()
    }
}

/// Whether an answer is the payment's last word: not a 5xx, not a settlement still pending.
fn is_final(headers: &HeaderMap, status: StatusCode) -> bool {
    let pending = headers
        .get(x402::PAYMENT_RESPONSE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| x402::decode_header::<Value>(x402::PAYMENT_RESPONSE, v).ok())
        .is_some_and(|s| s["errorReason"] == "settlement_pending");
    !status.is_server_error() && !pending
}

fn refusal(status: StatusCode, code: &'static str, message: impl Into<String>) -> Response {
    ApiError::new(status, code, message).into_response()
}
