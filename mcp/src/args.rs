//! Tool arguments: the extractor that turns a bad argument into `input_invalid` naming the
//! field, and parsers for the string-typed fields (public keys, digit strings, hex hashes).

use crate::envelope::{codes, ToolError};
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;

/// A tool's arguments, deserialized with the path of the first bad field. Named
/// `Parameters` so rmcp's `#[tool]` macro derives the input schema from `T`.
pub struct Parameters<T>(pub T);

impl<T: JsonSchema> JsonSchema for Parameters<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// The marker at the start of an invalid-params message produced here, so the server can
/// turn it into the `input_invalid` envelope (see [`crate::server`]).
pub const INVALID_ARGUMENT: &str = "invalid argument";

impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<T> {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, rmcp::ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        parse(serde_json::Value::Object(arguments))
            .map(Parameters)
            .map_err(|e| rmcp::ErrorData::invalid_params(e.message, None))
    }
}

/// Deserializes `value`, naming the field that failed ("invalid policy_id: invalid type:
/// string \"x\", expected u32").
pub fn parse<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ToolError> {
    deserialize(value).map_err(|(field, why)| {
        ToolError::new(
            codes::INPUT_INVALID,
            format!("{INVALID_ARGUMENT} {field}: {why}"),
        )
    })
}

/// Deserializes JSON this server reads from elsewhere (a facilitator's answer, a state
/// file): what failed, naming the field ("payerPolicy.kinds: invalid type ...").
pub fn read<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    deserialize(value).map_err(|(field, why)| format!("{field}: {why}"))
}

/// Deserializes `value`, or the path of the field that failed and why.
fn deserialize<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // A missing field is reported at the parent; serde names it in the message.
        let field = match (path.as_str(), missing_field(&inner)) {
            (".", Some(f)) => f.to_string(),
            (p, Some(f)) => format!("{p}.{f}"),
            (p, None) => p.to_string(),
        };
        (field, strip_position(&inner).to_string())
    })
}

fn missing_field(msg: &str) -> Option<&str> {
    msg.strip_prefix("missing field `")?.split('`').next()
}

fn strip_position(msg: &str) -> &str {
    msg.split(" at line ").next().unwrap_or(msg)
}

/// A base58 public key.
pub fn pubkey(field: &str, v: &str) -> Result<Pubkey, ToolError> {
    Pubkey::from_str(v.trim())
        .map_err(|_| ToolError::input(field, format!("{:?} is not a base58 public key", short(v))))
}

/// A non-negative integer written in decimal digits (amounts exceed JSON's safe integers).
pub fn digits(field: &str, v: &str) -> Result<u64, ToolError> {
    let v = v.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ToolError::input(
            field,
            format!("{:?} is not a string of decimal digits", short(v)),
        ));
    }
    v.parse()
        .map_err(|_| ToolError::input(field, format!("{v} does not fit in 64 bits")))
}

/// An amount in base units: decimal digits (the safe form: amounts exceed JSON's safe
/// integers), or a JSON integer, which clients that type their arguments send.
#[derive(Clone, Debug, serde::Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Amount {
    Digits(String),
    Integer(u64),
}

impl Amount {
    pub fn value(&self, field: &str) -> Result<u64, ToolError> {
        match self {
            Amount::Digits(d) => digits(field, d),
            Amount::Integer(n) => Ok(*n),
        }
    }
}

/// Exactly 64 hex characters.
pub fn hex32(field: &str, v: &str) -> Result<[u8; 32], ToolError> {
    trust_gate_client::decode::parse_hex32(field, v).map_err(ToolError::from)
}

fn short(v: &str) -> String {
    v.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        window_secs: u64,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Args {
        policy_id: u32,
        velocity: Option<Inner>,
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse::<Args>(json!({"policy_id": "x"})).unwrap_err();
        assert_eq!(e.error_code, "input_invalid");
        assert!(
            e.message
                .starts_with("invalid argument policy_id: invalid type"),
            "{}",
            e.message
        );
        let e = parse::<Args>(json!({})).unwrap_err();
        assert_eq!(
            e.message,
            "invalid argument policy_id: missing field `policy_id`"
        );
        let e = parse::<Args>(json!({"policy_id": 1, "velocity": {}})).unwrap_err();
        assert!(
            e.message
                .starts_with("invalid argument velocity.window_secs:"),
            "{}",
            e.message
        );
        let e = parse::<Args>(json!({"policy_id": -1})).unwrap_err();
        assert!(
            e.message.starts_with("invalid argument policy_id:"),
            "{}",
            e.message
        );
    }

    #[test]
    fn string_fields_are_checked() {
        assert_eq!(digits("amount", "100").unwrap(), 100);
        for bad in ["", "1.5", "-1", "1e3", "99999999999999999999"] {
            let e = digits("amount", bad).unwrap_err();
            assert!(
                e.message.starts_with("invalid amount:"),
                "{bad}: {}",
                e.message
            );
        }
        assert!(pubkey("mint", "nope")
            .unwrap_err()
            .message
            .contains("invalid mint"));
        assert!(hex32("payment_id_hash", "ab")
            .unwrap_err()
            .message
            .contains("payment_id_hash"));
    }
}
