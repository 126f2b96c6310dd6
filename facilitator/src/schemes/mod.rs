//! The payment schemes this facilitator serves, each behind one trait ([`Scheme`]) and found
//! by name in one [`Registry`]: `/verify` and `/settle` read the scheme once, from the
//! accepted offer ([`Registry::route`]), and hand the request to its handler; `/supported`
//! lists what the registry holds. A scheme's folder keeps its request types, checks, state
//! and background work; what they share (the chain's reads and sends, the gate's decision,
//! the locks, the store, the rent bounds) lives below them.
//!
//! - `trust-gate` ([`trust_gate`]): one transaction of `[gate_payment_strict, TransferChecked,
//!   emit_feedback]`, the gate's decision at `/verify`.
//! - `upto` and `trust-gate-upto` ([`upto`]): one channel a request, claimed after the handler.
//! - `batch-settlement` and `trust-gate-batch-settlement` ([`batch`]): a session's channel,
//!   its vouchers off chain, redeemed and closed in the background.
//!
//! `/verify`'s decision-only body (a verify context, which names no scheme) is no scheme's:
//! the routes give it to the gate's decision directly.

pub mod batch;
pub mod trust_gate;
pub mod upto;

use crate::answer::SettleReply;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::verify::X402Verified;
use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::Value;
use solana_sdk::pubkey::Pubkey;
use std::sync::Arc;

/// A request to a scheme: its body as it came (each scheme parses it its own way) and its
/// headers (a service's signature).
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub body: &'a [u8],
    pub headers: &'a HeaderMap,
}

/// What `/verify` found.
pub enum Verified {
    /// Valid: the payer, and what the scheme adds to the answer (a session's state).
    Valid { payer: Pubkey, extra: Option<Value> },
    /// The gate's decision: 200 Allow, 402 otherwise, with its headers; for RequireApproval,
    /// the approval held.
    Decided(Box<X402Verified>),
}

/// One scheme family's handler (a stock scheme and its gated variant share one).
#[async_trait::async_trait]
pub trait Scheme: Send + Sync {
    /// The scheme names it serves, as the wire writes them.
    fn names(&self) -> &'static [&'static str];
    /// The `extra` of its `/supported` kind for `name`.
    async fn extra(&self, f: &Facilitator, name: &str) -> Value;
    /// Checks a request without writing anything on chain.
    async fn verify(&self, f: &Facilitator, call: Call<'_>) -> Result<Verified, Rejection>;
    /// Settles a request.
    async fn settle(&self, f: &Facilitator, call: Call<'_>) -> Result<SettleReply, Rejection>;
    /// Its background work, started beside the server (none by default).
    fn background(&self, _f: &Arc<Facilitator>) -> Option<tokio::task::JoinHandle<()>> {
        None
    }
}

/// The schemes this facilitator serves.
pub fn registry() -> &'static Registry {
    static SERVED: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(Registry::default);
    &SERVED
}

/// `/verify` of a request with x402's keys that the registry's probe could not read (a key
/// given twice, say): checked as a `trust-gate` payment, as it always was.
pub async fn verify_unprobed(
    f: &Facilitator,
    req: &trust_gate_x402::FacilitatorRequest,
) -> Result<X402Verified, Rejection> {
    trust_gate::TrustGate::verify_x402(f, req).await
}

/// The schemes served, in the order `/supported` lists them.
pub struct Registry {
    schemes: Vec<Box<dyn Scheme>>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            schemes: vec![
                Box::new(trust_gate::TrustGate),
                Box::new(upto::Upto),
                Box::new(batch::Batch),
            ],
        }
    }
}

/// A channel scheme's request as x402 wraps it, its payload left for the scheme to read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Body {
    pub payment_payload: PayloadEnvelope,
    pub payment_requirements: trust_gate_x402::PaymentRequirements,
}

#[derive(Deserialize)]
pub(crate) struct PayloadEnvelope {
    #[serde(default)]
    pub resource: Option<trust_gate_x402::ResourceInfo>,
    pub accepted: trust_gate_x402::PaymentRequirements,
    pub payload: Value,
}

impl Body {
    /// `body` as JSON, else `unsupported_payload_type` with `what` before the parser's words.
    pub(crate) fn json(body: &[u8], what: &str) -> Result<Value, Rejection> {
        serde_json::from_slice(body)
            .map_err(|e| Rejection::new(Reason::UnsupportedPayloadType, format!("{what}: {e}")))
    }

    /// Reads `body`; anything else is `unsupported_payload_type`, naming the `scheme`.
    pub(crate) fn read(body: Value, scheme: &str) -> Result<Body, Rejection> {
        serde_json::from_value(body).map_err(|e| {
            Rejection::new(
                Reason::UnsupportedPayloadType,
                format!("not an x402 {scheme} request: {e}"),
            )
        })
    }
}

/// Just enough of a body to tell its scheme; the rest is skipped, not kept.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Probe {
    #[serde(default)]
    payment_payload: Option<Envelope>,
    #[serde(default)]
    payment_requirements: Option<Named>,
}

/// The keys that make a body an x402 request, whatever they hold.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Keys {
    #[serde(default)]
    payment_payload: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    x402_version: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    accepted: Option<Named>,
}

#[derive(Default, Deserialize)]
struct Named {
    #[serde(default)]
    scheme: Option<String>,
    #[serde(default)]
    network: Option<String>,
}

/// Whether `body` is a JSON object (serde would also read a struct from an array).
fn is_object(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

impl Registry {
    /// Every handler, in order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Scheme> {
        self.schemes.iter().map(|s| s.as_ref())
    }

    /// The handler of `name`.
    pub fn get(&self, name: &str) -> Option<&dyn Scheme> {
        self.iter().find(|s| s.names().contains(&name))
    }

    /// Whether `body` is an x402 request (it has `paymentPayload` or `x402Version`): anything
    /// else at `/verify` is a decision-only body.
    pub fn is_x402(body: &[u8]) -> bool {
        is_object(body)
            && serde_json::from_slice::<Keys>(body)
                .is_ok_and(|k| k.payment_payload.is_some() || k.x402_version.is_some())
    }

    /// The handler of an x402 request: the scheme its accepted offer names (else its
    /// requirements'); a request that names none goes to `trust-gate`'s, whose parser says
    /// what is missing. A scheme served nowhere here is refused, named with its network.
    pub fn route(&self, body: &[u8]) -> Result<&dyn Scheme, Rejection> {
        let probe = is_object(body).then(|| serde_json::from_slice::<Probe>(body));
        let Some(Ok(p)) = probe else {
            return Ok(&trust_gate::TrustGate);
        };
        let accepted = p
            .payment_payload
            .and_then(|e| e.accepted)
            .unwrap_or_default();
        let required = p.payment_requirements.unwrap_or_default();
        let Some(name) = accepted.scheme.or(required.scheme) else {
            return Ok(&trust_gate::TrustGate);
        };
        self.get(&name).ok_or_else(|| {
            let served: Vec<&str> = self
                .iter()
                .flat_map(|s| s.names().iter().copied())
                .collect();
            let network = accepted.network.or(required.network).unwrap_or_default();
            let mut no = Rejection::new(
                Reason::UnsupportedScheme,
                format!(
                    "scheme {name:?} on network {network:?} is not served here; the schemes are {}",
                    served.join(", ")
                ),
            );
            if name == trust_gate_x402::SCHEME_EXACT {
                no = no.hint(crate::adapter::EXACT_HINT);
            }
            no
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(accepted: &str, required: &str) -> Vec<u8> {
        format!(
            r#"{{"x402Version":2,"paymentPayload":{{"accepted":{accepted}}},"paymentRequirements":{required}}}"#
        )
        .into_bytes()
    }

    fn routed(r: &Registry, body: &[u8]) -> Result<&'static str, Rejection> {
        r.route(body).map(|s| s.names()[0])
    }

    #[test]
    fn the_accepted_offer_names_the_scheme_and_an_unknown_one_is_refused_by_name() {
        let r = Registry::default();
        let named = |s: &str| format!(r#"{{"scheme":"{s}","network":"solana:x"}}"#);
        for (scheme, handler) in [
            ("trust-gate", "trust-gate"),
            ("upto", "upto"),
            ("trust-gate-upto", "upto"),
            ("batch-settlement", "batch-settlement"),
            ("trust-gate-batch-settlement", "batch-settlement"),
        ] {
            let b = body(&named(scheme), "{}");
            assert_eq!(routed(&r, &b).ok(), Some(handler), "{scheme}");
            // The accepted offer's, read first; the requirements' when it names none.
            let b = body(&named(scheme), &named("upto"));
            assert_eq!(routed(&r, &b).ok(), Some(handler), "{scheme}");
            let b = body("{}", &named(scheme));
            assert_eq!(routed(&r, &b).ok(), Some(handler), "{scheme}");
        }
        // Naming none: trust-gate's parser says what is missing.
        let array = br#"[{"accepted":{"scheme":"upto"}}]"#;
        for b in [
            &b"not json"[..],
            b"{}",
            br#"{"paymentPayload":5}"#,
            array,
            &body("{}", "{}"),
        ] {
            assert_eq!(routed(&r, b).ok(), Some("trust-gate"));
        }
        let no = routed(&r, &body(&named("lightning"), "{}")).unwrap_err();
        assert_eq!(
            (no.status().as_u16(), no.reason.wire()),
            (400, "unsupported_scheme")
        );
        assert!(
            no.message.contains(r#""lightning" on network "solana:x""#),
            "{}",
            no.message
        );
        assert!(
            no.message.contains("trust-gate-batch-settlement"),
            "{}",
            no.message
        );
        assert_eq!(no.hint, None);
        let exact = routed(&r, &body(&named("exact"), "{}")).unwrap_err();
        assert_eq!(exact.hint.as_deref(), Some(crate::adapter::EXACT_HINT));
    }

    #[test]
    fn a_body_is_x402_by_its_keys_whatever_they_hold() {
        assert!(Registry::is_x402(br#"{"x402Version":2}"#));
        assert!(Registry::is_x402(br#"{"paymentPayload":5}"#));
        assert!(!Registry::is_x402(
            br#"{"payerAgentAsset":"a","amount":"1"}"#
        ));
        assert!(!Registry::is_x402(b"[1]"));
        assert!(!Registry::is_x402(b"not json"));
    }
}
