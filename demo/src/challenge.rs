//! Fresh x402 v2 challenges: one `trust-gate` offer with `extra.feePayer`, a unique `extra.memo`
//! (the payment's id) and `extra.gate`, signed by the service key over every field.

use crate::config::DemoConfig;
use rand::RngCore;
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::decode::hex;
use trust_gate_x402::holdback::HoldbackTerms;
use trust_gate_x402::{
    self as x402, GateExtension, PaymentRequired, PaymentRequirements, ResourceInfo,
    GATE_EXTENSION, SCHEME_TRUST_GATE, X402_VERSION,
};

/// A signed challenge for `payer_asset` paying the demo service, issued at `now` (unix s),
/// for a payment its payer's policy holds nothing back of.
pub fn issue(
    c: &DemoConfig,
    network: &str,
    fee_payer: &Pubkey,
    payer_asset: &Pubkey,
    now: i64,
) -> PaymentRequired {
    issue_with_terms(c, network, fee_payer, payer_asset, now, None)
}

/// As [`issue`], stating the holdback terms the gate decided for the payment (the
/// facilitator's decision answer's `holdback`).
pub fn issue_with_terms(
    c: &DemoConfig,
    network: &str,
    fee_payer: &Pubkey,
    payer_asset: &Pubkey,
    now: i64,
    holdback: Option<HoldbackTerms>,
) -> PaymentRequired {
    let mut memo = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut memo);
    let mut extra = serde_json::Map::new();
    extra.insert("feePayer".into(), fee_payer.to_string().into());
    extra.insert("memo".into(), hex(&memo).into());
    let mut r = PaymentRequirements {
        scheme: SCHEME_TRUST_GATE.into(),
        network: network.into(),
        amount: c.price.to_string(),
        asset: c.mint.to_string(),
        pay_to: c.pay_to.to_string(),
        max_timeout_seconds: c.max_timeout_seconds,
        extra,
    };
    let mut gate = GateExtension {
        payer_agent_asset: payer_asset.to_string(),
        payee_agent_asset: c.payee_asset.to_string(),
        payee_recipient: c.pay_to.to_string(),
        policy_id: c.policy_id,
        issued_at: now,
        holdback,
        service_signature: String::new(),
    };
    let url = c.resource_url();
    x402::sign_challenge(&c.service_key, &r, &url, &mut gate);
    r.extra.insert(
        GATE_EXTENSION.into(),
        serde_json::to_value(&gate).unwrap_or_default(),
    );
    PaymentRequired {
        x402_version: X402_VERSION,
        error: Some("Payment required".into()),
        resource: ResourceInfo {
            url,
            description: Some("trust-gate demo: a report priced per request".into()),
            mime_type: Some("application/json".into()),
        },
        accepts: vec![r],
        extensions: None,
    }
}

/// The offer of a `batch-settlement` session in the metered mint at `price` a request,
/// gated (`trust-gate-batch-settlement`: the payer's metered policy decides the deposit; the
/// `gate` extension signed by the service over the offer and the session URL) or plain. The
/// service's key is the receiver's authorizer bound into each channel.
pub fn session_offer(
    c: &DemoConfig,
    network: &str,
    fee_payer: &Pubkey,
    payer_asset: &Pubkey,
    now: i64,
    price: u64,
    gated: bool,
) -> PaymentRequirements {
    use trust_gate_x402::batch;
    let scheme = if gated {
        batch::SCHEME_GATED_BATCH
    } else {
        batch::SCHEME_BATCH
    };
    ChannelOffer {
        scheme,
        amount: price,
        withdraw_delay: batch::MIN_WITHDRAW_DELAY,
        payment_flow: batch::PAYMENT_FLOW_AUTHORIZATION,
        url: c.session_url(),
    }
    .requirements(c, network, fee_payer, gated.then_some((payer_asset, now)))
}

/// The offer of GET /metered: x402 `upto` in the metered mint, its ceiling `max_units` units,
/// the service's key the voucher key of the claim; gated (`trust-gate-upto`, the payer's
/// metered policy decides the ceiling; the `gate` extension signed over the offer and the
/// metered URL) or plain.
pub fn metered_offer(
    c: &DemoConfig,
    network: &str,
    fee_payer: &Pubkey,
    payer_asset: &Pubkey,
    now: i64,
    gated: bool,
) -> PaymentRequirements {
    use trust_gate_x402::upto;
    let scheme = if gated {
        upto::SCHEME_GATED_UPTO
    } else {
        upto::SCHEME_UPTO
    };
    ChannelOffer {
        scheme,
        amount: c.unit_price.saturating_mul(c.max_units),
        withdraw_delay: 900,
        payment_flow: upto::PAYMENT_FLOW_ESCROW,
        url: c.metered_url(),
    }
    .requirements(c, network, fee_payer, gated.then_some((payer_asset, now)))
}

/// What the two channel routes' offers differ in; the rest is the metered mint's terms.
struct ChannelOffer {
    scheme: &'static str,
    amount: u64,
    withdraw_delay: u32,
    payment_flow: &'static str,
    /// The route's URL, which a gated offer's signature covers.
    url: String,
}

impl ChannelOffer {
    /// The requirements; gated (`gate`: the payer agent and the signing time) with the
    /// `gate` extension of the payer's metered policy signed by the service.
    fn requirements(
        self,
        c: &DemoConfig,
        network: &str,
        fee_payer: &Pubkey,
        gate: Option<(&Pubkey, i64)>,
    ) -> PaymentRequirements {
        use solana_sdk::signer::Signer;
        use trust_gate_client::settle::TokenProgram;
        let mut extra = serde_json::Map::new();
        extra.insert("feePayer".into(), fee_payer.to_string().into());
        extra.insert(
            "receiverAuthorizer".into(),
            c.service_key.pubkey().to_string().into(),
        );
        extra.insert("withdrawDelay".into(), self.withdraw_delay.into());
        extra.insert(
            "tokenProgram".into(),
            TokenProgram::Token2022.id().to_string().into(),
        );
        extra.insert("paymentFlow".into(), self.payment_flow.into());
        let mut r = PaymentRequirements {
            scheme: self.scheme.into(),
            network: network.into(),
            amount: self.amount.to_string(),
            asset: c.metered_mint.to_string(),
            pay_to: c.pay_to.to_string(),
            max_timeout_seconds: c.max_timeout_seconds,
            extra,
        };
        if let Some((payer_asset, now)) = gate {
            sign_gate(c, &mut r, &self.url, payer_asset, c.metered_policy_id, now);
        }
        r
    }
}

/// Adds the `gate` extension of `payer_asset` paying the service under `policy_id`, signed
/// over `r` and `url`.
fn sign_gate(
    c: &DemoConfig,
    r: &mut PaymentRequirements,
    url: &str,
    payer_asset: &Pubkey,
    policy_id: u32,
    now: i64,
) {
    let mut gate = GateExtension {
        payer_agent_asset: payer_asset.to_string(),
        payee_agent_asset: c.payee_asset.to_string(),
        payee_recipient: c.pay_to.to_string(),
        policy_id,
        issued_at: now,
        holdback: None,
        service_signature: String::new(),
    };
    x402::sign_challenge(&c.service_key, r, url, &mut gate);
    r.extra.insert(
        GATE_EXTENSION.into(),
        serde_json::to_value(&gate).unwrap_or_default(),
    );
}

/// The fields of a session offer's `extra` that only a corrective 402 carries (the session's
/// state, specification section 4.6): a client may send them back in the offer it accepted.
pub const CORRECTIVE_FIELDS: [&str; 2] = ["channelState", "voucherState"];

/// A plain channel offer as the routes send it: signed by the service at `now`
/// (`extra.offerSignature`), so that a facilitator that sponsors channels only for known
/// services' offers (`PLAIN_OFFERS_SIGNED`) takes it.
pub fn signed(c: &DemoConfig, mut r: PaymentRequirements, now: i64) -> PaymentRequirements {
    x402::sign_plain_offer(&c.service_key, &mut r, now);
    r
}

/// Whether `r` is an offer of this service for `url`: gated, its `gate` extension signed by the
/// service over every field; plain, exactly the route's plain offer `plain` (which depends on
/// no time and no payer), but for its signature and a corrective 402's fields.
pub fn is_our_offer(
    c: &DemoConfig,
    r: &PaymentRequirements,
    url: &str,
    plain: &PaymentRequirements,
) -> bool {
    use solana_sdk::signer::Signer;
    match GateExtension::from_requirements(r) {
        Ok(g) => x402::challenge_signed_by(&c.service_key.pubkey(), r, url, &g),
        // The facilitator checks the offer's signature, when it asks for one.
        Err(_) => {
            let mut r = r.clone();
            for key in CORRECTIVE_FIELDS.iter().chain([&x402::OFFER_SIGNATURE]) {
                r.extra.remove(*key);
            }
            r == *plain
        }
    }
}

/// Whether `r` is a challenge this service issued (its signature over every field).
pub fn is_ours(c: &DemoConfig, r: &PaymentRequirements) -> bool {
    use solana_sdk::signer::Signer;
    GateExtension::from_requirements(r)
        .is_ok_and(|g| x402::challenge_signed_by(&c.service_key.pubkey(), r, &c.resource_url(), &g))
}
