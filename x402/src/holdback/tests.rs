use super::*;
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use serde_json::{Map, Value};
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;

fn h() -> Holdback {
    Holdback {
        tier: 1,
        share_bps: 2_000,
        hold_secs: 86_400,
        held: 200,
    }
}

#[test]
fn terms_round_trip_to_the_quote_and_state_their_decision() {
    let escrow = Pubkey::new_unique();
    let t = HoldbackTerms::new(&h(), &escrow, &Pubkey::default());
    assert_eq!(t.arbiter, None, "the default key is no arbiter");
    let v = serde_json::to_value(&t).unwrap();
    assert_eq!(v["payeeTier"], 1);
    assert_eq!(v["held"], "200");
    assert!(v.get("arbiter").is_none());
    assert_eq!(
        t.quote("extra.gate.holdback").unwrap(),
        HoldbackQuote {
            tier: 1,
            held: 200,
            escrow
        }
    );
    assert!(t.states(&h()));
    assert!(!t.states(&Holdback { held: 199, ..h() }));
    assert!(!t.states(&Holdback { tier: 2, ..h() }));
}

const NETWORK: &str = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

fn request() -> RefundRequest {
    let mut r = RefundRequest::new(
        &Signature::from([7u8; 64]).to_string(),
        NETWORK,
        10_000,
        RefundReason::ServiceNotDelivered,
    );
    r.reason_detail = Some("the report was empty \u{e9}\"\n".into());
    r.receipt = Some(serde_json::json!({"format": "jws", "signature": "a.b.c"}));
    r
}

/// The JWS's three parts, the first two decoded.
fn parts(jws: &str) -> (Value, String, String) {
    let p: Vec<&str> = jws.split('.').collect();
    assert_eq!(p.len(), 3, "{jws}");
    let header = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p[0]).unwrap()).unwrap();
    let payload = String::from_utf8(URL_SAFE_NO_PAD.decode(p[1]).unwrap()).unwrap();
    (header, payload, p[2].to_string())
}

#[test]
fn a_signed_refund_request_verifies_to_its_payer() {
    let payer = Keypair::new();
    let signed = sign_refund_request(&payer, request()).unwrap();
    assert_eq!(verify_payer_signature(&signed).unwrap(), payer.pubkey());
    let (header, payload, _) = parts(&signed.payer_signature);
    assert_eq!(
        header,
        serde_json::json!({
            "alg": "EdDSA",
            "kid": format!("did:pkh:solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:{}", payer.pubkey()),
        })
    );
    // The payload is the request without its signature, canonical: sorted keys, no spaces.
    assert!(!payload.contains("payerSignature"), "{payload}");
    assert!(
        payload.starts_with("{\"amount\":\"10000\",\"idempotencyKey\":"),
        "{payload}"
    );
    assert_eq!(
        payload,
        canonical_json(&serde_json::to_value(signed.unsigned()).unwrap())
    );
    // Another signer's payload that writes an absent field as null signs the same request.
    let mut with_nulls = serde_json::to_value(signed.unsigned()).unwrap();
    with_nulls["refundTo"] = Value::Null;
    let kid = did_pkh(NETWORK, &payer.pubkey(), "n").unwrap();
    let other_writer = RefundRequest {
        payer_signature: jws_sign(&payer, &kid, &with_nulls),
        ..signed.clone()
    };
    assert_eq!(
        verify_payer_signature(&other_writer).unwrap(),
        payer.pubkey()
    );
    // Signing again gives the same signature (Ed25519 is deterministic).
    assert_eq!(sign_refund_request(&payer, signed.clone()).unwrap(), signed);
    // The wire: camelCase fields, the reason in snake_case; read back as sent.
    let v = serde_json::to_value(&signed).unwrap();
    assert_eq!(v["x402Version"], 2);
    assert_eq!(v["reason"], "service_not_delivered");
    assert_eq!(v["paymentReference"]["network"], NETWORK);
    let back: RefundRequest = serde_json::from_value(v).unwrap();
    assert_eq!(back, signed);
}

#[test]
fn a_tampered_or_foreign_signature_is_refused_naming_payer_signature() {
    let payer = Keypair::new();
    let signed = sign_refund_request(&payer, request()).unwrap();
    let refused = |r: &RefundRequest| {
        let e = verify_payer_signature(r).unwrap_err().to_string();
        assert!(e.contains("payerSignature"), "{e}");
        e
    };
    // Any field changed after signing.
    let mut more = signed.clone();
    more.amount = "10001".into();
    assert!(refused(&more).contains("signs another request"));
    let mut elsewhere = signed.clone();
    elsewhere.refund_to = Some(Pubkey::new_unique().to_string());
    refused(&elsewhere);
    let mut other_key = signed.clone();
    other_key.idempotency_key = new_idempotency_key();
    refused(&other_key);
    // Another network than the kid's.
    let mut moved = signed.clone();
    moved.payment_reference.network = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp".into();
    assert!(refused(&moved).contains("kid names the network"));
    // The payload swapped for another request's, under the first signature.
    let (_, _, sig) = parts(&signed.payer_signature);
    let other = sign_refund_request(
        &payer,
        RefundRequest {
            amount: "1".into(),
            ..request()
        },
    )
    .unwrap();
    let p: Vec<&str> = other.payer_signature.split('.').collect();
    let mut spliced = other.clone();
    spliced.payer_signature = format!("{}.{}.{sig}", p[0], p[1]);
    assert!(refused(&spliced).contains("does not verify"));
    // A kid naming another key than the signer's.
    let h = URL_SAFE_NO_PAD.encode(
        serde_json::json!({"alg": "EdDSA", "kid": did_pkh(NETWORK, &Pubkey::new_unique(), "n").unwrap()}).to_string(),
    );
    let q: Vec<&str> = signed.payer_signature.split('.').collect();
    let mut impostor = signed.clone();
    impostor.payer_signature = format!("{h}.{}.{}", q[1], q[2]);
    assert!(refused(&impostor).contains("does not verify"));
    // Not EdDSA; a crit header; a jwk of another key; not three parts; missing.
    for header in [
        serde_json::json!({"alg": "none", "kid": did_pkh(NETWORK, &payer.pubkey(), "n").unwrap()}),
        serde_json::json!({"alg": "EdDSA", "kid": did_pkh(NETWORK, &payer.pubkey(), "n").unwrap(), "crit": ["b64"]}),
        serde_json::json!({"alg": "EdDSA", "kid": did_pkh(NETWORK, &payer.pubkey(), "n").unwrap(),
            "jwk": {"kty": "OKP", "crv": "Ed25519", "x": URL_SAFE_NO_PAD.encode([1u8; 32])}}),
        serde_json::json!({"alg": "EdDSA", "kid": format!("did:key:{}", payer.pubkey())}),
    ] {
        let h = URL_SAFE_NO_PAD.encode(header.to_string());
        let input = format!("{h}.{}", q[1]);
        let s = URL_SAFE_NO_PAD.encode(payer.sign_message(input.as_bytes()).as_ref());
        let mut r = signed.clone();
        r.payer_signature = format!("{input}.{s}");
        refused(&r);
    }
    // A jwk of the kid's own key is fine.
    let h = URL_SAFE_NO_PAD.encode(
        serde_json::json!({"alg": "EdDSA", "kid": did_pkh(NETWORK, &payer.pubkey(), "n").unwrap(),
            "jwk": {"kty": "OKP", "crv": "Ed25519", "x": URL_SAFE_NO_PAD.encode(payer.pubkey().to_bytes())}})
        .to_string(),
    );
    let input = format!("{h}.{}", q[1]);
    let mut with_jwk = signed.clone();
    with_jwk.payer_signature = format!(
        "{input}.{}",
        URL_SAFE_NO_PAD.encode(payer.sign_message(input.as_bytes()).as_ref())
    );
    assert_eq!(verify_payer_signature(&with_jwk).unwrap(), payer.pubkey());
    let mut two = signed.clone();
    two.payer_signature = format!("{}.{}", q[0], q[1]);
    refused(&two);
    refused(&signed.unsigned());
    // A network that is not Solana's cannot be signed for.
    let evm = RefundRequest::new("x", "eip155:8453", 1, RefundReason::Other);
    let e = sign_refund_request(&payer, evm).unwrap_err().to_string();
    assert!(e.contains("paymentReference.network"), "{e}");
}

#[test]
fn a_refund_requests_fields_are_checked_by_name() {
    let r = request();
    let c = r.check().unwrap();
    assert_eq!((c.amount, c.refund_to), (10_000, None));
    let named = |r: RefundRequest, field: &str| {
        let e = r.check().unwrap_err().to_string();
        assert!(e.contains(field), "{field}: {e}");
    };
    named(
        RefundRequest {
            x402_version: 1,
            ..request()
        },
        "x402Version",
    );
    for amount in [
        "",
        "0",
        "01",
        "-1",
        "+1",
        "1.5",
        " 1",
        "18446744073709551616",
    ] {
        named(
            RefundRequest {
                amount: amount.into(),
                ..request()
            },
            "amount",
        );
    }
    let mut tx = request();
    tx.payment_reference.tx_hash = "0xabc".into();
    named(tx, "paymentReference.txHash");
    let mut net = request();
    net.payment_reference.network = "eip155:8453".into();
    named(net, "paymentReference.network");
    let mut id = request();
    id.payment_reference.payment_id = Some("short".into());
    named(id, "paymentReference.paymentId");
    named(
        RefundRequest {
            refund_to: Some("0x12".into()),
            ..request()
        },
        "refundTo",
    );
    for key in ["", "a/b", "a b", &"k".repeat(129)] {
        named(
            RefundRequest {
                idempotency_key: key.into(),
                ..request()
            },
            "idempotencyKey",
        );
    }
    named(
        RefundRequest {
            reason_detail: Some("x".repeat(1_025)),
            ..request()
        },
        "reasonDetail",
    );
    // Unknown fields and reasons are refused when read.
    let mut v = serde_json::to_value(request()).unwrap();
    v["reason"] = "because".into();
    assert!(serde_json::from_value::<RefundRequest>(v).is_err());
    let mut v = serde_json::to_value(request()).unwrap();
    v["more"] = 1.into();
    assert!(serde_json::from_value::<RefundRequest>(v).is_err());
    // A fresh key is a version 4 UUID.
    let k = new_idempotency_key();
    assert_eq!(k.len(), 36);
    assert_eq!(&k[14..15], "4");
    assert_ne!(k, new_idempotency_key());
}

#[test]
fn a_refund_receipt_verifies_with_the_service_key() {
    let service = Keypair::new();
    let payload = RefundReceiptPayload {
        version: REFUND_RECEIPT_VERSION,
        network: NETWORK.into(),
        resource_url: "http://127.0.0.1:4022/protected".into(),
        payer: Pubkey::new_unique().to_string(),
        issued_at: 1_700_000_000,
        payment_tx_hash: Signature::from([1u8; 64]).to_string(),
        refund_tx_hash: Signature::from([2u8; 64]).to_string(),
        amount: "10000".into(),
        asset: Pubkey::new_unique().to_string(),
        refund_to: Pubkey::new_unique().to_string(),
        escrow: Pubkey::new_unique().to_string(),
    };
    let receipt = sign_refund_receipt(&service, &payload).unwrap();
    assert_eq!(
        serde_json::to_value(&receipt)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["format", "signature"]
    );
    assert_eq!(
        verify_refund_receipt(&receipt).unwrap(),
        (service.pubkey(), payload.clone())
    );
    // Another payload under its signature does not verify.
    let other = sign_refund_receipt(
        &service,
        &RefundReceiptPayload {
            amount: "1".into(),
            ..payload
        },
    )
    .unwrap();
    let (a, b): (Vec<&str>, Vec<&str>) = (
        receipt.signature.split('.').collect(),
        other.signature.split('.').collect(),
    );
    let forged = SignedArtifact {
        signature: format!("{}.{}.{}", a[0], b[1], a[2]),
        ..receipt
    };
    let e = verify_refund_receipt(&forged).unwrap_err().to_string();
    assert!(e.contains("refundReceipt.signature"), "{e}");
}

#[test]
fn responses_and_the_extension_speak_the_specs_names() {
    let denied = RefundResponse::denied("5", DenialReason::AmountExceedsSettled);
    assert_eq!(
        serde_json::to_value(&denied).unwrap(),
        serde_json::json!({"status": "denied", "amount": "5", "denialReason": "amount_exceeds_settled"})
    );
    let info = RefundInfo {
        refund_endpoint: "http://127.0.0.1:4022/refund".into(),
        window_seconds: 120,
        partial_refunds: false,
        policy_url: None,
    };
    let mut ext = Map::new();
    ext.insert(REFUND.into(), info.extension());
    assert_eq!(ext[REFUND]["info"]["windowSeconds"], 120);
    assert_eq!(ext[REFUND]["schema"]["required"][0], "refundEndpoint");
    assert_eq!(RefundInfo::from_extensions(Some(&ext)).unwrap(), Some(info));
    assert_eq!(RefundInfo::from_extensions(None).unwrap(), None);
    ext.insert(
        REFUND.into(),
        serde_json::json!({"info": {"refundEndpoint": 1}}),
    );
    let e = RefundInfo::from_extensions(Some(&ext))
        .unwrap_err()
        .to_string();
    assert!(e.contains("extensions.refund.info"), "{e}");
}

#[test]
fn canonical_json_sorts_keys_and_writes_no_whitespace() {
    let v: Value = serde_json::from_str(
        r#"{"b": [1, {"z": null, "a": true}], "a": "\u0001/é\"", "\u20ac": 1.0, "aa": -0.0, "A": 1e2}"#,
    )
    .unwrap();
    assert_eq!(
        canonical_json(&v),
        r#"{"A":100,"a":"\u0001/é\"","aa":0,"b":[1,{"a":true,"z":null}],"€":1}"#
    );
}

#[test]
fn bad_terms_name_their_field() {
    let mut t = HoldbackTerms::new(&h(), &Pubkey::new_unique(), &Pubkey::new_unique());
    t.held = "-1".into();
    let e = t.quote("extra.gate.holdback").unwrap_err().to_string();
    assert!(e.contains("extra.gate.holdback.held"), "{e}");
    t.held = "1".into();
    t.escrow = "nope".into();
    let e = t.quote("extra.gate.holdback").unwrap_err().to_string();
    assert!(e.contains("extra.gate.holdback.escrow"), "{e}");
    let unknown = serde_json::json!({"payeeTier":1,"shareBps":1,"holdSeconds":1,"held":"1","escrow":"x","more":1});
    assert!(serde_json::from_value::<HoldbackTerms>(unknown).is_err());
}
