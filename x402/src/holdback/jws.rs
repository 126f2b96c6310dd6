//! Compact JWS (RFC 7515) of Solana keys: Ed25519 (`EdDSA`), the key named by a `did:pkh`
//! `kid`, over RFC 8785 canonical JSON; the format x402's offer-and-receipt extension gives
//! signed artifacts, which its refund extension reuses.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use std::str::FromStr;
use trust_gate_client::ClientError;

/// The only JWS algorithm here: Ed25519, the Solana keys'.
pub const JWS_ALG: &str = "EdDSA";

/// A JWS protected header. `jwk`, when given, must be the `kid`'s key; a `crit` header (an
/// extension we would have to understand) is refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct JwsHeader {
    alg: String,
    kid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jwk: Option<Jwk>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    crit: Option<Value>,
}

/// An Ed25519 public key as a JWK (RFC 8037).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Jwk {
    kty: String,
    crv: String,
    x: String,
}

/// A verified compact JWS: who signed it, the network its `kid` names, its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenedJws {
    pub signer: Pubkey,
    /// The CAIP-2 network of the `kid` (`solana:<reference>`).
    pub network: String,
    pub payload: Value,
}

/// The CAIP-2 reference of a Solana network id (`solana:<reference>`); `field` names it in
/// errors.
pub fn solana_reference<'a>(network: &'a str, field: &str) -> Result<&'a str, ClientError> {
    network
        .strip_prefix("solana:")
        .filter(|r| (1..=32).contains(&r.len()) && r.bytes().all(|b| b.is_ascii_alphanumeric()))
        .ok_or_else(|| {
            ClientError::input(field, "not a Solana CAIP-2 network (solana:<reference>)")
        })
}

/// The `did:pkh` of `key` on `network` (`did:pkh:solana:<reference>:<base58 key>`): a JWS
/// `kid` that names the key itself, so a verifier needs no lookup.
pub fn did_pkh(network: &str, key: &Pubkey, field: &str) -> Result<String, ClientError> {
    let reference = solana_reference(network, field)?;
    Ok(format!("did:pkh:solana:{reference}:{key}"))
}

/// The network and key a Solana `did:pkh` names.
fn parse_did_pkh(kid: &str, field: &str) -> Result<(String, Pubkey), ClientError> {
    let bad = || {
        ClientError::input(
            field,
            "its kid is not did:pkh:solana:<reference>:<base58 key>",
        )
    };
    let account = kid.strip_prefix("did:pkh:").ok_or_else(bad)?;
    let (network, key) = account.rsplit_once(':').ok_or_else(bad)?;
    solana_reference(network, field).map_err(|_| bad())?;
    let key = Pubkey::from_str(key).map_err(|_| bad())?;
    Ok((network.to_string(), key))
}

/// A compact JWS (`header.payload.signature`, base64url without padding) of `payload`'s
/// canonical JSON, signed by `signer` (EdDSA) under `kid`.
pub fn jws_sign(signer: &Keypair, kid: &str, payload: &Value) -> String {
    let header = JwsHeader {
        alg: JWS_ALG.into(),
        kid: kid.into(),
        jwk: None,
        crit: None,
    };
    let header = serde_json::to_value(&header).unwrap_or_default();
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(canonical_json(&header)),
        URL_SAFE_NO_PAD.encode(canonical_json(payload))
    );
    let signature = signer.sign_message(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
}

/// Verifies a compact JWS whose `kid` is a Solana `did:pkh`: its signature by that key over
/// the signing input, and a `jwk` (if any) of the same key. `field` names it in errors.
pub fn jws_open(jws: &str, field: &str) -> Result<OpenedJws, ClientError> {
    let err = |reason: &str| ClientError::input(field, reason);
    let mut parts = jws.split('.');
    let (Some(h64), Some(p64), Some(s64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(err("not a compact JWS (header.payload.signature)"));
    };
    let header = URL_SAFE_NO_PAD
        .decode(h64)
        .map_err(|_| err("its header is not base64url without padding"))?;
    let header: JwsHeader = serde_json::from_slice(&header)
        .map_err(|e| err(&format!("its header is not a JWS header: {e}")))?;
    if header.alg != JWS_ALG {
        return Err(err(&format!(
            "alg {:?}: only {JWS_ALG} is accepted",
            header.alg
        )));
    }
    if header.crit.is_some() {
        return Err(err("a crit header is not understood here"));
    }
    let (network, signer) = parse_did_pkh(&header.kid, field)?;
    if let Some(jwk) = &header.jwk {
        let x = URL_SAFE_NO_PAD.decode(&jwk.x).unwrap_or_default();
        if jwk.kty != "OKP" || jwk.crv != "Ed25519" || x != signer.to_bytes() {
            return Err(err("its jwk is not the Ed25519 key its kid names"));
        }
    }
    let signature = URL_SAFE_NO_PAD
        .decode(s64)
        .ok()
        .and_then(|b| Signature::try_from(b.as_slice()).ok())
        .ok_or_else(|| err("its signature is not 64 bytes of base64url"))?;
    let input = &jws[..h64.len() + 1 + p64.len()];
    if !signature.verify(signer.as_ref(), input.as_bytes()) {
        return Err(err(&format!(
            "the signature does not verify with {signer}, the key its kid names"
        )));
    }
    let payload = URL_SAFE_NO_PAD
        .decode(p64)
        .map_err(|_| err("its payload is not base64url without padding"))?;
    let payload = serde_json::from_slice(&payload)
        .map_err(|e| err(&format!("its payload is not JSON: {e}")))?;
    Ok(OpenedJws {
        signer,
        network,
        payload,
    })
}

/// JSON as RFC 8785 (JCS) canonicalizes it: object keys sorted by their UTF-16 code units, no
/// whitespace, strings escaped minimally. Integers are written as they are; the wire here has
/// no others (a float in an opaque `receipt` is written as serde_json writes it, which can
/// differ from JCS in its exponent form; verification compares parsed values, not bytes).
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        Value::Number(n) => match n.as_f64() {
            // JCS writes an integral double without a fraction ("1.0" is "1").
            Some(f) if !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 1e21 => {
                // `{:.0}` of -0.0 is "-0"; JCS writes 0.
                out.push_str(&format!("{:.0}", f + 0.0))
            }
            _ => out.push_str(&n.to_string()),
        },
        // Strings, booleans and null: serde_json escapes exactly what JCS escapes.
        other => out.push_str(&other.to_string()),
    }
}
