//! The pay adapter: turns an x402 v2 facilitator request into the payment's trust context.
//!
//! It reads `paymentRequirements.extra.gate`, checks that `payTo` is the payee's recipient,
//! derives the payment id hash from `extra.memo`, verifies the challenge's service signature
//! (by a service this facilitator trusts, never by the facilitator itself) over every
//! requirement field, and rejects expired challenges. Pure: the caller supplies the clock.

use crate::reject::{Reason, Rejection};
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use trust_gate_client::holdback::HoldbackQuote;
use trust_gate_client::simulate::PaymentQuery;
use trust_gate_x402::holdback::HoldbackTerms;
use trust_gate_x402::{
    self as x402, FacilitatorRequest, GateExtension, PaymentRequirements, SCHEME_EXACT,
    SCHEME_TRUST_GATE, X402_VERSION,
};

/// The longest memo the exact scheme allows (bytes).
pub const MAX_MEMO_BYTES: usize = 256;

/// A payment's trust context, read and authenticated from the requirements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateContext {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    /// The wallet that receives the payment (`payTo` == `payeeRecipient`).
    pub pay_to: Pubkey,
    pub policy_id: u32,
    pub amount: u64,
    pub mint: Pubkey,
    pub payment_id_hash: [u8; 32],
    /// The challenge's expiry (`issuedAt` + `maxTimeoutSeconds`): the strict gate's deadline
    /// must be exactly this.
    pub deadline: i64,
    /// The trusted service whose key signed the challenge.
    pub service: Pubkey,
    pub resource_url: String,
    /// The holdback terms the challenge states (`extra.gate.holdback`), checked readable.
    pub holdback: Option<HoldbackTerms>,
}

impl GateContext {
    /// The payment to decide.
    pub fn query(&self) -> PaymentQuery {
        PaymentQuery {
            payer_asset: self.payer_asset,
            payee_asset: self.payee_asset,
            amount: self.amount,
            mint: self.mint,
            policy_id: self.policy_id,
        }
    }

    /// The quote of the challenge's holdback terms (read checked them).
    pub fn holdback_quote(&self) -> Option<HoldbackQuote> {
        self.holdback
            .as_ref()
            .and_then(|t| t.quote(HOLDBACK_FIELD).ok())
    }
}

/// Where a challenge states its holdback terms.
const HOLDBACK_FIELD: &str = "extra.gate.holdback";

/// Why an `exact` payment is never settled here.
pub const EXACT_HINT: &str = "an exact-scheme transfer is never settled here: a trust-gate payment is one transaction of [gate_payment_strict, TransferChecked, emit_feedback] (the trust-gate SDK, `trust-gate pay`)";

/// What the adapter checks against.
#[derive(Clone, Copy, Debug)]
pub struct Expectations<'a> {
    pub facilitator: &'a Pubkey,
    /// This facilitator's CAIP-2 network id.
    pub network: &'a str,
    pub trusted_services: &'a [Pubkey],
    /// Unix seconds.
    pub now: i64,
    /// Tolerated clock skew, seconds.
    pub skew: i64,
}

/// Reads and authenticates the context of `req`.
pub fn read(req: &FacilitatorRequest, e: Expectations<'_>) -> Result<GateContext, Rejection> {
    let r = &req.payment_requirements;
    let accepted = &req.payment_payload.accepted;
    if req.x402_version != X402_VERSION || req.payment_payload.x402_version != X402_VERSION {
        return Err(Rejection::new(
            Reason::InvalidX402Version,
            format!(
                "x402Version must be 2 (request {}, payload {})",
                req.x402_version, req.payment_payload.x402_version
            ),
        ));
    }
    if r.scheme != SCHEME_TRUST_GATE || accepted.scheme != SCHEME_TRUST_GATE {
        let scheme = if r.scheme != SCHEME_TRUST_GATE {
            &r.scheme
        } else {
            &accepted.scheme
        };
        let mut no = Rejection::new(
            Reason::UnsupportedScheme,
            format!("scheme {scheme:?} is not supported; only {SCHEME_TRUST_GATE:?}"),
        );
        if scheme == SCHEME_EXACT {
            no = no.hint(EXACT_HINT);
        }
        return Err(no);
    }
    if r.network != e.network || accepted.network != e.network {
        return Err(Rejection::new(
            Reason::InvalidNetwork,
            format!(
                "network {:?} is not this facilitator's {:?}",
                r.network, e.network
            ),
        ));
    }
    if accepted != r {
        return Err(Rejection::new(
            Reason::AcceptedRequirementsMismatch,
            "paymentPayload.accepted differs from paymentRequirements",
        )
        .hint("the client must copy the offered requirements verbatim into `accepted`"));
    }
    let fee_payer = r.extra.get("feePayer").and_then(|v| v.as_str());
    if fee_payer != Some(e.facilitator.to_string().as_str()) {
        return Err(Rejection::new(
            Reason::FeePayerNotManaged,
            format!(
                "extra.feePayer {:?} is not this facilitator ({})",
                fee_payer.unwrap_or(""),
                e.facilitator
            ),
        ));
    }
    let amount = decimal_u64(&r.amount)
        .and_then(|v| (v > 0).then_some(v).ok_or("must be greater than 0"))
        .map_err(|why| invalid(format!("paymentRequirements.amount {:?} {why}", r.amount)))?;
    let mint = pubkey("paymentRequirements.asset", &r.asset)?;
    let pay_to = pubkey("paymentRequirements.payTo", &r.pay_to)?;
    let gate = gate_extension(
        r,
        "the resource server must put the payment's trust context in accepts[i].extra.gate",
    )?;
    pays_the_recipient(pay_to, &gate)?;
    let memo = r
        .extra
        .get("memo")
        .and_then(|m| m.as_str())
        .filter(|m| !m.is_empty())
        .ok_or_else(|| {
            Rejection::new(
                Reason::MemoMissing,
                "extra.memo is required: it is the payment's id",
            )
        })?;
    let len = memo.len();
    if len > MAX_MEMO_BYTES {
        let message = format!("extra.memo has {len} bytes; at most {MAX_MEMO_BYTES}");
        return Err(Rejection::new(Reason::MemoTooLong, message));
    }
    let resource_url = req
        .payment_payload
        .resource
        .as_ref()
        .map(|res| res.url.as_str());
    let g = authenticate(r, resource_url, &gate, e)?;
    if let Some(t) = &gate.holdback {
        let q = t
            .quote(HOLDBACK_FIELD)
            .map_err(|err| invalid(err.to_string()))?;
        if q.held >= amount {
            return Err(invalid(format!(
                "{HOLDBACK_FIELD}.held {} is not below the amount {amount}",
                q.held
            )));
        }
    }
    Ok(GateContext {
        payer_asset: g.payer_asset,
        payee_asset: g.payee_asset,
        pay_to,
        policy_id: g.policy_id,
        amount,
        mint,
        payment_id_hash: x402::payment_id_hash(memo),
        deadline: x402::deadline(r, &gate),
        service: g.service,
        // `authenticate` refused a missing or empty URL.
        resource_url: resource_url.unwrap_or_default().to_string(),
        holdback: gate.holdback,
    })
}

/// The parties and policy of a gated channel's open, from the `gate` extension of the offer a
/// client accepted (`accepted`: at a claim the requirements' amount is the charge, which the
/// service did not sign), authenticated as a payment's challenge is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelGate {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub policy_id: u32,
    pub service: Pubkey,
}

/// Reads and authenticates the `gate` extension of `accepted` (see [`ChannelGate`]).
pub fn read_channel_gate(
    accepted: &PaymentRequirements,
    resource_url: Option<&str>,
    e: Expectations<'_>,
) -> Result<ChannelGate, Rejection> {
    let gate = gate_extension(
        accepted,
        "a gated channel's offer carries the payment's trust context in extra.gate",
    )?;
    pays_the_recipient(
        pubkey("paymentRequirements.payTo", &accepted.pay_to)?,
        &gate,
    )?;
    authenticate(accepted, resource_url, &gate, e)
}

/// `extra.gate` of `r`; `hint` says where it belongs.
fn gate_extension(r: &PaymentRequirements, hint: &str) -> Result<GateExtension, Rejection> {
    GateExtension::from_requirements(r)
        .map_err(|err| Rejection::new(Reason::GateExtensionMissing, err.to_string()).hint(hint))
}

/// `payTo` must be the payee's recipient the challenge names.
fn pays_the_recipient(pay_to: Pubkey, gate: &GateExtension) -> Result<(), Rejection> {
    let payee_recipient = pubkey("extra.gate.payeeRecipient", &gate.payee_recipient)?;
    if pay_to != payee_recipient {
        return Err(Rejection::new(
            Reason::PayToMismatch,
            format!("payTo {pay_to} is not the payee's recipient {payee_recipient}"),
        ));
    }
    Ok(())
}

/// The challenge's parties, once a trusted service's key is found to have signed it (over
/// `resource_url` too) and it is fresh.
fn authenticate(
    r: &PaymentRequirements,
    resource_url: Option<&str>,
    gate: &GateExtension,
    e: Expectations<'_>,
) -> Result<ChannelGate, Rejection> {
    let resource_url = resource_url.filter(|u| !u.is_empty()).ok_or_else(|| {
        Rejection::new(
            Reason::ResourceMissing,
            "paymentPayload.resource.url is required: the service signature covers it",
        )
    })?;
    if gate.service_signature.is_empty() {
        return Err(Rejection::new(
            Reason::ChallengeUnsigned,
            "extra.gate.serviceSignature is empty",
        ));
    }
    if e.trusted_services.is_empty() {
        return Err(Rejection::new(
            Reason::ServiceNotTrusted,
            "this facilitator trusts no service key",
        )
        .hint("set TRUSTED_SERVICE_KEYS to the public keys of the services whose challenges it settles"));
    }
    let service = e
        .trusted_services
        .iter()
        .find(|k| x402::challenge_signed_by(k, r, resource_url, gate))
        .copied()
        .ok_or_else(|| {
            Rejection::new(
                Reason::ChallengeSignatureInvalid,
                "extra.gate.serviceSignature is not a signature of a trusted service over these requirements",
            )
            .hint("a challenge is signed over every field; any change after issue invalidates it")
        })?;
    let timeout = i64::try_from(r.max_timeout_seconds).unwrap_or(i64::MAX);
    let expires = gate.issued_at.saturating_add(timeout);
    if e.now > expires.saturating_add(e.skew) {
        return Err(Rejection::new(
            Reason::ChallengeExpired,
            format!(
                "the challenge expired at {expires} (issuedAt {} + maxTimeoutSeconds {timeout}); now {}",
                gate.issued_at, e.now
            ),
        )
        .hint("request the resource again for a fresh challenge"));
    }
    if gate.issued_at > e.now.saturating_add(e.skew) {
        return Err(Rejection::new(
            Reason::ChallengeNotYetValid,
            format!(
                "issuedAt {} is in the future (now {})",
                gate.issued_at, e.now
            ),
        ));
    }
    Ok(ChannelGate {
        payer_asset: pubkey("extra.gate.payerAgentAsset", &gate.payer_agent_asset)?,
        payee_asset: pubkey("extra.gate.payeeAgentAsset", &gate.payee_agent_asset)?,
        policy_id: gate.policy_id,
        service,
    })
}

/// Decimal digits (no sign, no exponent) that fit in u64; the error says why not. Amounts
/// travel as strings because u64 exceeds JSON's safe integers.
pub fn decimal_u64(s: &str) -> Result<u64, &'static str> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return Err("is not decimal digits");
    }
    s.parse().map_err(|_| "does not fit in u64")
}

/// 400 `invalid_payment_requirements`.
fn invalid(message: String) -> Rejection {
    Rejection::new(Reason::InvalidPaymentRequirements, message)
}

fn pubkey(field: &str, s: &str) -> Result<Pubkey, Rejection> {
    Pubkey::from_str(s).map_err(|_| invalid(format!("{field} {s:?} is not a base58 public key")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use solana_sdk::signature::Keypair;
    use solana_sdk::signer::Signer;
    use trust_gate_x402::{ExactSvmPayload, PaymentPayload, ResourceInfo};

    const NET: &str = "solana:localnet";

    /// A change to a request.
    type Edit = Box<dyn Fn(&mut FacilitatorRequest)>;
    const URL: &str = "http://127.0.0.1:4021/protected";

    struct Fixture {
        service: Keypair,
        trusted: [Pubkey; 1],
        facilitator: Pubkey,
        pay_to: Pubkey,
    }

    impl Fixture {
        fn new() -> Self {
            let service = Keypair::new();
            Fixture {
                trusted: [service.pubkey()],
                service,
                facilitator: Pubkey::new_unique(),
                pay_to: Pubkey::new_unique(),
            }
        }

        fn request(
            &self,
            edit: impl FnOnce(&mut PaymentRequirements, &mut GateExtension),
        ) -> FacilitatorRequest {
            let mut r: PaymentRequirements = serde_json::from_value(json!({
                "scheme": "trust-gate", "network": NET, "amount": "100000",
                "asset": Pubkey::new_unique().to_string(), "payTo": self.pay_to.to_string(),
                "maxTimeoutSeconds": 300,
                "extra": {"feePayer": self.facilitator.to_string(), "memo": "order-1"}
            }))
            .unwrap();
            let mut g = GateExtension {
                payer_agent_asset: Pubkey::new_unique().to_string(),
                payee_agent_asset: Pubkey::new_unique().to_string(),
                payee_recipient: self.pay_to.to_string(),
                policy_id: 1,
                issued_at: 1_000,
                holdback: None,
                service_signature: String::new(),
            };
            edit(&mut r, &mut g);
            x402::sign_challenge(&self.service, &r, URL, &mut g);
            r.extra
                .insert("gate".into(), serde_json::to_value(&g).unwrap());
            FacilitatorRequest {
                x402_version: 2,
                payment_payload: PaymentPayload {
                    x402_version: 2,
                    resource: Some(ResourceInfo {
                        url: URL.into(),
                        description: None,
                        mime_type: None,
                    }),
                    accepted: r.clone(),
                    payload: ExactSvmPayload {
                        transaction: String::new(),
                    },
                    extensions: None,
                },
                payment_requirements: r,
            }
        }

        fn expect(&self, now: i64) -> Expectations<'_> {
            Expectations {
                facilitator: &self.facilitator,
                network: NET,
                trusted_services: &self.trusted,
                now,
                skew: 30,
            }
        }
    }

    fn reason(r: Result<GateContext, Rejection>) -> String {
        r.unwrap_err().reason.to_string()
    }

    #[test]
    fn a_signed_fresh_challenge_reads() {
        let f = Fixture::new();
        let ctx = read(&f.request(|_, _| {}), f.expect(1_100)).unwrap();
        assert_eq!(ctx.amount, 100_000);
        assert_eq!(ctx.pay_to, f.pay_to);
        assert_eq!(ctx.service, f.service.pubkey());
        assert_eq!(ctx.payment_id_hash, x402::payment_id_hash("order-1"));
    }

    #[test]
    fn every_tampered_field_breaks_the_signature() {
        let f = Fixture::new();
        let tampers: Vec<Edit> = vec![
            Box::new(|q| q.payment_requirements.amount = "1".into()),
            Box::new(|q| q.payment_requirements.asset = Pubkey::new_unique().to_string()),
            Box::new(|q| q.payment_requirements.max_timeout_seconds = 301),
            Box::new(|q| {
                q.payment_requirements
                    .extra
                    .insert("memo".into(), json!("order-2"));
            }),
            Box::new(|q| {
                q.payment_requirements.extra["gate"]["policyId"] = json!(2);
            }),
            Box::new(|q| {
                q.payment_requirements.extra["gate"]["payerAgentAsset"] =
                    json!(Pubkey::new_unique().to_string());
            }),
            Box::new(|q| {
                q.payment_requirements.extra["gate"]["issuedAt"] = json!(1_050);
            }),
            Box::new(|q| {
                q.payment_payload.resource.as_mut().unwrap().url = "http://x/other".into()
            }),
        ];
        for (i, t) in tampers.iter().enumerate() {
            let mut q = f.request(|_, _| {});
            t(&mut q);
            q.payment_payload.accepted = q.payment_requirements.clone();
            assert_eq!(
                reason(read(&q, f.expect(1_100))),
                "challenge_signature_invalid",
                "tamper {i}"
            );
        }
    }

    #[test]
    fn expiry_unsigned_untrusted_and_pay_to() {
        let f = Fixture::new();
        assert_eq!(
            reason(read(&f.request(|_, _| {}), f.expect(1_331))),
            "challenge_expired"
        );
        assert!(
            read(&f.request(|_, _| {}), f.expect(1_329)).is_ok(),
            "within the skew"
        );
        assert_eq!(
            reason(read(&f.request(|_, _| {}), f.expect(900))),
            "challenge_not_yet_valid"
        );

        let mut unsigned = f.request(|_, _| {});
        unsigned.payment_requirements.extra["gate"]["serviceSignature"] = json!("");
        unsigned.payment_payload.accepted = unsigned.payment_requirements.clone();
        assert_eq!(
            reason(read(&unsigned, f.expect(1_100))),
            "challenge_unsigned"
        );

        let other = Fixture::new();
        let signed_by_other = other.request(|_, _| {});
        let mut e = f.expect(1_100);
        e.facilitator = &other.facilitator;
        assert_eq!(
            reason(read(&signed_by_other, e)),
            "challenge_signature_invalid"
        );
        e.trusted_services = &[];
        assert_eq!(reason(read(&signed_by_other, e)), "service_not_trusted");

        let wrong_recipient =
            f.request(|_, g| g.payee_recipient = Pubkey::new_unique().to_string());
        assert_eq!(
            reason(read(&wrong_recipient, f.expect(1_100))),
            "pay_to_mismatch"
        );
    }

    #[test]
    fn requirement_shape_errors() {
        let f = Fixture::new();
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|q| q.x402_version = 1), "invalid_x402_version"),
            (
                Box::new(|q| q.payment_requirements.scheme = "upto".into()),
                "unsupported_scheme",
            ),
            // The standard exact scheme, offered and accepted: not a trust-gate settlement.
            (
                Box::new(|q| {
                    q.payment_requirements.scheme = "exact".into();
                    q.payment_payload.accepted.scheme = "exact".into();
                }),
                "unsupported_scheme",
            ),
            (
                Box::new(|q| q.payment_requirements.network = "solana:other".into()),
                "invalid_network",
            ),
            (
                Box::new(|q| q.payment_payload.accepted.amount = "5".into()),
                "accepted_requirements_mismatch",
            ),
            (
                Box::new(|q| {
                    q.payment_requirements
                        .extra
                        .insert("feePayer".into(), json!("x"));
                }),
                "fee_payer_not_managed_by_facilitator",
            ),
            (
                Box::new(|q| q.payment_requirements.amount = "1e5".into()),
                "invalid_payment_requirements",
            ),
            (
                Box::new(|q| q.payment_requirements.amount = "18446744073709551616".into()),
                "invalid_payment_requirements",
            ),
            (
                Box::new(|q| {
                    q.payment_requirements.extra.remove("gate");
                }),
                "gate_extension_missing",
            ),
            (
                Box::new(|q| {
                    q.payment_requirements.extra.remove("memo");
                }),
                "memo_missing",
            ),
            (
                Box::new(|q| {
                    q.payment_requirements
                        .extra
                        .insert("memo".into(), json!("m".repeat(257)));
                }),
                "memo_too_long",
            ),
            (
                Box::new(|q| q.payment_payload.resource = None),
                "resource_missing",
            ),
        ];
        for (edit, want) in cases {
            let mut q = f.request(|_, _| {});
            edit(&mut q);
            if want != "accepted_requirements_mismatch" && want != "invalid_x402_version" {
                q.payment_payload.accepted = q.payment_requirements.clone();
                q.payment_payload.accepted.network = q.payment_requirements.network.clone();
            }
            assert_eq!(reason(read(&q, f.expect(1_100))), want);
        }
        // Our offer, but the payload says it accepted the exact scheme.
        let mut q = f.request(|_, _| {});
        q.payment_payload.accepted.scheme = "exact".into();
        let no = read(&q, f.expect(1_100)).unwrap_err();
        assert_eq!(no.reason, "unsupported_scheme");
        assert!(no.message.contains("\"exact\""), "{}", no.message);
    }
}
