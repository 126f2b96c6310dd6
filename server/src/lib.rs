//! What trust-gate's HTTP servers share (the facilitator and resource servers such as the
//! demo), with no chain work of its own.
//!
//! Its modules:
//!
//! - [`error`]: [`error::ApiError`], errors as the routes answer them: JSON
//!   `{"error","message","hint"}`, URLs cut to their origin.
//! - [`layers`]: the body limit, timeout and CORS in front of every route.
//! - [`expiring`]: an in-process map whose entries expire, swept amortized.
//! - [`redis_store`]: the Redis connection replicas share, with its scripts.
//! - [`paid_once`]: x402's `payment-identifier` on a resource server: a paid request answered
//!   once per payment id, in process or in Redis.

pub mod error;
pub mod expiring;
pub mod layers;
pub mod paid_once;
pub mod redis_store;
