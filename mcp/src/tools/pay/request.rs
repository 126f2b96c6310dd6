//! What a `gate_pay` call asks for: its arguments, the request they describe (headers and
//! body checked), and which of a challenge's offers pays it.

use crate::args;
use crate::egress::Target;
use crate::envelope::{codes, ToolError};
use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use trust_gate_pay::exact::Request;
use trust_gate_x402::batch::SCHEME_GATED_BATCH;
use trust_gate_x402::upto::SCHEME_GATED_UPTO;
use trust_gate_x402::{PaymentRequired, PaymentRequirements, GATE_EXTENSION, SCHEME_TRUST_GATE};

/// Request headers the tool sets itself or that belong to the connection.
const RESERVED_HEADERS: [&str; 9] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "payment-signature",
    "x-payment",
    "te",
    // The payer agent is the `payer_agent` argument, checked against the offer.
    "x-payer-agent",
];
/// The most request headers, and the longest value.
const MAX_HEADERS: usize = 32;
const MAX_HEADER_VALUE: usize = 8_192;
/// The largest request body.
const MAX_REQUEST_BODY: usize = 1 << 20;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PayArgs {
    /// The resource to request and pay for (an http or https URL).
    pub url: String,
    /// The HTTP method: GET (the default), POST, PUT, PATCH or DELETE.
    pub method: Option<String>,
    /// Request headers, name to value, sent with the first request and with the paid one.
    pub headers: Option<BTreeMap<String, String>>,
    /// The request body, as text.
    pub body: Option<String>,
    /// The most this call may pay or commit, in base units of the offer's asset, as decimal
    /// digits: an exact price, an upto ceiling, a new session's deposit or a voucher's price.
    /// Above it, nothing is signed.
    pub max_amount: Option<args::Amount>,
    /// The payer agent (MPL Core asset, base58), sent as X-Payer-Agent; the server's offer
    /// must name it. Default: the one the server names.
    pub payer_agent: Option<String>,
    /// "exact" (trust-gate's settlement), "upto" or "session" (the gated channel schemes).
    /// Default: the open session with this server, else exact, else upto, else a new session.
    pub scheme: Option<String>,
    /// A new session's deposit, in requests' prices (1..=1000, default 10).
    #[schemars(range(min = 1, max = 1000))]
    pub session_requests: Option<u64>,
    /// Close the sessions open with this server: this request carries their refund, and the
    /// unspent deposit goes back to the payer.
    pub close_session: Option<bool>,
    /// The most characters of a text body returned (default 4000, at most 100000).
    #[schemars(range(min = 1, max = 100000))]
    pub max_body_chars: Option<usize>,
}

/// Which scheme the call asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    Exact,
    Upto,
    Session,
}

impl Wanted {
    pub(super) fn parse(v: &str) -> Result<Wanted, ToolError> {
        match v.trim() {
            "exact" | SCHEME_TRUST_GATE => Ok(Wanted::Exact),
            "upto" | SCHEME_GATED_UPTO => Ok(Wanted::Upto),
            "session" | "batch-settlement" | SCHEME_GATED_BATCH => Ok(Wanted::Session),
            other => Err(ToolError::input(
                "scheme",
                format!("{other:?} is not exact, upto or session"),
            )),
        }
    }

    fn scheme(self) -> &'static str {
        match self {
            Wanted::Exact => SCHEME_TRUST_GATE,
            Wanted::Upto => SCHEME_GATED_UPTO,
            Wanted::Session => SCHEME_GATED_BATCH,
        }
    }
}

/// The offer a challenge is paid with, or why none fits. `has_session` says whether a
/// session offer's terms have a session open. Pure, so the order is tested alone.
pub fn choose(
    required: &PaymentRequired,
    wanted: Option<Wanted>,
    has_session: impl Fn(&PaymentRequirements) -> bool,
) -> Result<(Wanted, PaymentRequirements), ToolError> {
    // Every scheme paid here goes through the gate: an offer without `extra.gate` is not one.
    let gated = |r: &PaymentRequirements| r.extra.contains_key(GATE_EXTENSION);
    let offer = |w: Wanted| {
        required
            .accepts
            .iter()
            .find(|r| r.scheme == w.scheme() && gated(r))
            .cloned()
            .map(|r| (w, r))
    };
    let chosen = match wanted {
        Some(w) => offer(w),
        None => required
            .accepts
            .iter()
            .find(|r| r.scheme == SCHEME_GATED_BATCH && gated(r) && has_session(r))
            .cloned()
            .map(|r| (Wanted::Session, r))
            .or_else(|| offer(Wanted::Exact))
            .or_else(|| offer(Wanted::Upto))
            .or_else(|| offer(Wanted::Session)),
    };
    chosen.ok_or_else(|| {
        let offered: Vec<&str> = required.accepts.iter().map(|r| r.scheme.as_str()).collect();
        let asked = wanted.map_or("none of trust-gate, trust-gate-upto or trust-gate-batch-settlement".to_string(), |w| w.scheme().to_string());
        ToolError::new(
            codes::RESOURCE_FAILURE,
            format!("the 402 offers {offered:?}: {asked} (a payment through the gate)"),
        )
        .hint("gate_pay pays only through the gate; a resource that offers no gated scheme is paid by another client")
    })
}

/// The request the call describes, its headers and body checked.
pub(super) fn request(
    a: &PayArgs,
    target: &Target,
    max_body_bytes: usize,
) -> Result<Request, ToolError> {
    let method = match a.method.as_deref().map(str::trim) {
        None | Some("") => Method::GET,
        Some(m) => match m.to_ascii_uppercase().as_str() {
            "GET" => Method::GET,
            "POST" => Method::POST,
            "PUT" => Method::PUT,
            "PATCH" => Method::PATCH,
            "DELETE" => Method::DELETE,
            _ => {
                return Err(ToolError::input(
                    "method",
                    format!("{m:?} is not GET, POST, PUT, PATCH or DELETE"),
                ))
            }
        },
    };
    let headers = a.headers.clone().unwrap_or_default();
    if headers.len() > MAX_HEADERS {
        return Err(ToolError::input(
            "headers",
            format!("{} headers; at most {MAX_HEADERS}", headers.len()),
        ));
    }
    let mut checked = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let field = format!("headers.{name}");
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(ToolError::input(&field, "not an HTTP header name"));
        }
        if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(ToolError::input(
                &field,
                "set by the tool or the connection, not by the call",
            ));
        }
        if value.len() > MAX_HEADER_VALUE || reqwest::header::HeaderValue::from_str(&value).is_err()
        {
            return Err(ToolError::input(
                &field,
                format!("not a header value of at most {MAX_HEADER_VALUE} visible ASCII bytes"),
            ));
        }
        checked.push((name, value));
    }
    let body = a.body.as_ref().map(|b| b.as_bytes().to_vec());
    if body.as_ref().is_some_and(|b| b.len() > MAX_REQUEST_BODY) {
        return Err(ToolError::input(
            "body",
            format!("larger than {MAX_REQUEST_BODY} bytes"),
        ));
    }
    Ok(Request {
        method,
        url: target.url.to_string(),
        headers: checked,
        body,
        max_body_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};
    use trust_gate_x402::ResourceInfo;

    fn offer(scheme: &str, gate: bool) -> PaymentRequirements {
        let mut extra = Map::new();
        if gate {
            extra.insert("gate".into(), json!({}));
        }
        serde_json::from_value(json!({
            "scheme": scheme, "network": "solana:local", "amount": "1", "asset": "A",
            "payTo": "P", "maxTimeoutSeconds": 60, "extra": extra,
        }))
        .unwrap()
    }

    fn required(offers: Vec<PaymentRequirements>) -> PaymentRequired {
        PaymentRequired {
            x402_version: 2,
            error: None,
            resource: ResourceInfo {
                url: "http://x/".into(),
                description: None,
                mime_type: None,
            },
            accepts: offers,
            extensions: None,
        }
    }

    #[test]
    fn the_offer_is_an_open_session_then_exact_then_upto_then_a_new_session() {
        let all = required(vec![
            offer("exact", false),
            offer(SCHEME_GATED_BATCH, true),
            offer(SCHEME_GATED_UPTO, true),
            offer(SCHEME_TRUST_GATE, true),
        ]);
        let pick = |r: &PaymentRequired, w, open: bool| choose(r, w, |_| open).map(|(w, _)| w);
        assert_eq!(pick(&all, None, false).unwrap(), Wanted::Exact);
        assert_eq!(pick(&all, None, true).unwrap(), Wanted::Session);
        assert_eq!(pick(&all, Some(Wanted::Upto), true).unwrap(), Wanted::Upto);
        let channels = required(vec![
            offer(SCHEME_GATED_BATCH, true),
            offer(SCHEME_GATED_UPTO, true),
        ]);
        assert_eq!(pick(&channels, None, false).unwrap(), Wanted::Upto);
        // A trust-gate offer without extra.gate is no settlement through the gate.
        let plain = required(vec![
            offer("exact", false),
            offer(SCHEME_TRUST_GATE, false),
            offer("upto", false),
        ]);
        let e = pick(&plain, None, false).unwrap_err();
        assert_eq!(e.error_code, codes::RESOURCE_FAILURE);
        assert!(e.message.contains("\"exact\""), "{e:?}");
        assert!(pick(&channels, Some(Wanted::Exact), false).is_err());
        // Gated schemes' names without the extension: never paid (no policy would run).
        let ungated = required(vec![
            offer(SCHEME_GATED_BATCH, false),
            offer(SCHEME_GATED_UPTO, false),
        ]);
        assert!(pick(&ungated, None, true).is_err());
        assert!(pick(&ungated, Some(Wanted::Session), true).is_err());
    }
}
