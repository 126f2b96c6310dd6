//! x402's `payment-identifier` extension (`specs/extensions/payment_identifier.md`, as
//! `@x402/extensions` 2.27 implements it): a client's idempotency key for one payment.
//!
//! A resource server declares it in its 402 (`extensions["payment-identifier"]`, with `info.required`); a
//! client echoes the declaration with `info.id` (16 to 128 of `[A-Za-z0-9_-]`) in its payment
//! payload, and sends that same payload again when it lost the answer. The server looks the id
//! up before it verifies anything, bound to the exact payload (its [`digest`]): the same payload
//! gets the first answer back, another payload with the id is 409, and `required: true`
//! without an id is 400.
//!
//! This module is the wire, for both sides: the declaration, reading and attaching an id, and
//! the payload's digest. The servers' store is the facilitator crate's
//! (`trust_gate_server::paid_once`).

use rand::RngCore;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// The extension's key in `extensions`.
pub const KEY: &str = "payment-identifier";
pub const MIN_LEN: usize = 16;
pub const MAX_LEN: usize = 128;

/// The extension's JSON Schema of `info`, as the specification gives it.
pub fn schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "required": {"type": "boolean"},
            "id": {"type": "string", "minLength": MIN_LEN, "maxLength": MAX_LEN, "pattern": "^[a-zA-Z0-9_-]+$"},
        },
        "required": ["required"],
    })
}

/// A 402's declaration of the extension.
pub fn declaration(required: bool) -> Value {
    json!({"info": {"required": required}, "schema": schema()})
}

/// Whether `id` is a well-formed payment id.
pub fn is_valid(id: &str) -> bool {
    (MIN_LEN..=MAX_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A fresh id: `pay_` and 32 random hex digits (as the extension's `generatePaymentId`).
pub fn new_id() -> String {
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("pay_{}", trust_gate_client::decode::hex(&bytes))
}

/// Whether a 402's `extensions` declare the extension.
pub fn declared(extensions: Option<&Map<String, Value>>) -> bool {
    extensions
        .and_then(|e| e.get(KEY))
        .is_some_and(|d| d.pointer("/info/required").is_some_and(Value::is_boolean))
}

/// The payload's `extensions`, with the 402's declaration of the extension echoed and `id`
/// in its `info` (unchanged when the 402 does not declare it).
pub fn attach(
    declared_by: Option<&Map<String, Value>>,
    payload_extensions: Option<Map<String, Value>>,
    id: &str,
) -> Option<Map<String, Value>> {
    let Some(declaration) = declared_by.and_then(|e| e.get(KEY)).cloned() else {
        return payload_extensions;
    };
    let mut echoed = declaration;
    echoed["info"]["id"] = id.into();
    let mut extensions = payload_extensions.unwrap_or_default();
    extensions.insert(KEY.into(), echoed);
    Some(extensions)
}

/// The id a payment payload (as JSON) carries: `Ok(None)` without the extension or its
/// `info.id`; an `Err` naming the field when it is there but malformed.
pub fn id_of(payload: &Value) -> Result<Option<String>, String> {
    let Some(extension) = payload.get("extensions").and_then(|e| e.get(KEY)) else {
        return Ok(None);
    };
    let field = format!("extensions[\"{KEY}\"].info.id");
    match extension.get("info").and_then(|i| i.get("id")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(id)) if is_valid(id) => Ok(Some(id.clone())),
        Some(Value::String(_)) => Err(format!(
            "{field}: {MIN_LEN} to {MAX_LEN} letters, digits, '-' or '_'"
        )),
        Some(_) => Err(format!("{field}: not a string")),
    }
}

/// The digest of a payment payload that binds its id: SHA-256 of its JSON with every
/// object's keys sorted, so that the same payload re-encoded by another client library
/// gives the same digest, and any other payload (another transaction, another offer,
/// another id) another.
pub fn digest(payload: &Value) -> [u8; 32] {
    let mut canonical = Vec::new();
    write_sorted(payload, &mut canonical);
    Sha256::digest(&canonical).into()
}

fn write_sorted(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend(Value::String(k.clone()).to_string().as_bytes());
                out.push(b':');
                write_sorted(&m[k], out);
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_sorted(x, out);
            }
            out.push(b']');
        }
        other => out.extend(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_as_the_extension_takes_them() {
        assert!(is_valid(&new_id()));
        assert!(is_valid("pay_7d5d747be160e280504c099d984bcfe0"));
        assert!(!is_valid("short_id_123"));
        assert!(!is_valid(&"a".repeat(MAX_LEN + 1)));
        assert!(!is_valid("pay_7d5d747be160e280 504c099d"));
        assert_ne!(new_id(), new_id());
    }

    #[test]
    fn an_id_is_attached_only_where_declared_and_read_back() {
        let declared_by = json!({KEY: declaration(false)});
        let declared_by = declared_by.as_object();
        assert!(declared(declared_by));
        assert!(!declared(None));
        let id = new_id();
        let ext = attach(declared_by, None, &id).unwrap();
        assert_eq!(ext[KEY]["info"]["required"], false);
        assert_eq!(ext[KEY]["schema"], schema());
        let payload = json!({"x402Version": 2, "extensions": ext});
        assert_eq!(id_of(&payload), Ok(Some(id)));
        assert_eq!(attach(None, None, "pay_0123456789abcdef"), None);
        assert_eq!(id_of(&json!({"x402Version": 2})), Ok(None));
        let bad = json!({"extensions": {KEY: {"info": {"required": false, "id": "x"}}}});
        assert!(id_of(&bad).unwrap_err().contains("info.id"));
        let bad = json!({"extensions": {KEY: {"info": {"required": false, "id": 7}}}});
        assert!(id_of(&bad).unwrap_err().contains("not a string"));
    }

    #[test]
    fn the_digest_ignores_key_order_and_nothing_else() {
        let a: Value =
            serde_json::from_str(r#"{"a":1,"b":{"c":"x","d":[1,{"e":2,"f":3}]}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"b":{"d":[1,{"f":3,"e":2}],"c":"x"},"a":1}"#).unwrap();
        let c: Value =
            serde_json::from_str(r#"{"b":{"d":[{"f":3,"e":2},1],"c":"x"},"a":1}"#).unwrap();
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&c));
        assert_ne!(digest(&a), digest(&json!({"a": 1})));
    }
}
