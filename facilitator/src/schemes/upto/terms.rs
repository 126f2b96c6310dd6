//! An `upto` request as it arrives, and its terms checked against this facilitator, its
//! network and clock.

use crate::answer::SettleReply;
use crate::reject::{Reason, Rejection};
use crate::schemes::Body;
use serde_json::Value;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::str::FromStr;
use trust_gate_client::channels::{self, Channel, Split, Status};
use trust_gate_x402::upto::{
    self, UptoExtra, UptoPayload, EXPIRY_SLACK_SECS, MAX_CHANNEL_LIFETIME_SECS,
};
use trust_gate_x402::{PaymentRequirements, ResourceInfo};

/// An `upto` request to /verify or /settle.
#[derive(Clone, Debug)]
pub struct UptoRequest {
    pub requirements: PaymentRequirements,
    pub accepted: PaymentRequirements,
    pub resource: Option<ResourceInfo>,
    pub payload: UptoPayload,
    /// The gated variant (`trust-gate-upto`).
    pub gated: bool,
}

impl UptoRequest {
    /// Reads the body; anything else, a payload of another shape among them, is
    /// `unsupported_payload_type`.
    pub fn from_bytes(body: &[u8]) -> Result<UptoRequest, Rejection> {
        let b = Body::read(Body::json(body, "not an x402 upto request")?, "upto")?;
        let payload: UptoPayload =
            serde_json::from_value(b.payment_payload.payload).map_err(|e| {
                Rejection::new(
                    Reason::UnsupportedPayloadType,
                    format!("paymentPayload.payload is not an upto payload: {e}"),
                )
            })?;
        Ok(UptoRequest {
            gated: b.payment_requirements.scheme == upto::SCHEME_GATED_UPTO,
            requirements: b.payment_requirements,
            accepted: b.payment_payload.accepted,
            resource: b.payment_payload.resource,
            payload,
        })
    }
}

/// What the requirements and the payload say, checked.
pub(crate) struct Terms {
    pub(crate) extra: UptoExtra,
    pub(crate) from: Pubkey,
    pub(crate) mint: Pubkey,
    pub(crate) pay_to: Pubkey,
    pub(crate) receiver_authorizer: Pubkey,
    pub(crate) channel: Pubkey,
    pub(crate) ceiling: u64,
    pub(crate) salt: u64,
}

impl Terms {
    /// The distribution every upto open makes: 100 % to `payTo`.
    pub(crate) fn splits(&self) -> Vec<Split> {
        vec![Split {
            recipient: self.pay_to,
            bps: channels::ALL_BPS,
        }]
    }

    /// Whether `c` is the channel this payment's deposit opens: its payer, the facilitator
    /// as payee and rent payer, the mint, the voucher key, 100 % to `payTo`.
    pub(crate) fn is_ours(&self, c: &Channel, facilitator: &Pubkey) -> bool {
        (c.payer, c.payee, c.rent_payer, c.mint)
            == (self.from, *facilitator, *facilitator, self.mint)
            && c.authorized_signer == self.receiver_authorizer
            && c.distribution_hash == channels::distribution_hash(&self.splits())
    }

    /// Whether `c` is open as this payment's deposit opened it, with the ceiling.
    /// The answer of this payment's deposit, opened by `signature`.
    pub(crate) fn deposited(
        &self,
        signature: Signature,
        pending: bool,
        replayed: bool,
    ) -> SettleReply {
        let amount = self.ceiling.to_string();
        let reply = SettleReply::channel(signature.to_string(), amount, self.from, None, pending);
        if replayed {
            reply.replayed()
        } else {
            reply
        }
    }

    pub(crate) fn opened(&self, c: &Channel, facilitator: &Pubkey) -> bool {
        c.status == Status::Open && c.deposit == self.ceiling && self.is_ours(c, facilitator)
    }

    /// Whether the server's claim can still seal `c` at chain time `now`: this payment's
    /// channel, holding at least the ceiling (the payer may have topped it up: the rest goes
    /// back to it), open or closing within its grace period (the payer's `request_close`
    /// stops anyone's `settle`, never the payee's seal before the deadline).
    pub(crate) fn claimable(&self, c: &Channel, facilitator: &Pubkey, now: i64) -> bool {
        let live = match c.status {
            Status::Open => true,
            Status::Closing => {
                now < c
                    .closure_started_at
                    .saturating_add(i64::from(c.grace_period))
            }
            Status::Sealed | Status::Distributed => false,
        };
        live && c.deposit >= self.ceiling && self.is_ours(c, facilitator)
    }
}

/// The checks of every phase: the scheme, the network, the facilitator, the requirements,
/// the payload's amounts, keys and times.
pub(crate) fn terms(
    r: &UptoRequest,
    fac: &Pubkey,
    network: &str,
    now: i64,
) -> Result<Terms, Rejection> {
    let scheme = if r.gated {
        upto::SCHEME_GATED_UPTO
    } else {
        upto::SCHEME_UPTO
    };
    if r.accepted.scheme != scheme || r.requirements.scheme != scheme {
        return Err(Rejection::new(
            Reason::UnsupportedScheme,
            format!("the requirements and the accepted offer are not both {scheme}"),
        ));
    }
    if r.accepted.network != r.requirements.network || r.requirements.network != network {
        return Err(Rejection::new(
            Reason::NetworkMismatch,
            format!(
                "the network is {}; this facilitator settles on {network}",
                r.requirements.network
            ),
        ));
    }
    let invalid = |m: String| Rejection::new(Reason::UptoInvalidRequirements, m);
    let extra: UptoExtra = serde_json::from_value(Value::Object(r.requirements.extra.clone()))
        .map_err(|e| invalid(format!("extra: {e}")))?;
    if extra.fee_payer != fac.to_string() {
        return Err(Rejection::new(
            Reason::UptoFacilitatorMismatch,
            format!(
                "extra.feePayer is {}; this facilitator is {fac}",
                extra.fee_payer
            ),
        ));
    }
    if extra.withdraw_delay == 0 || r.requirements.max_timeout_seconds == 0 {
        return Err(invalid(
            "extra.withdrawDelay and maxTimeoutSeconds are whole seconds above 0".into(),
        ));
    }
    if r.requirements.max_timeout_seconds > MAX_CHANNEL_LIFETIME_SECS {
        return Err(Rejection::new(
            Reason::UptoChannelLifetimeExceeded,
            format!(
                "maxTimeoutSeconds is {}; this facilitator holds an upto channel's rent for at most {MAX_CHANNEL_LIFETIME_SECS} s",
                r.requirements.max_timeout_seconds
            ),
        ));
    }
    let key = |field: &str, v: &str| {
        Pubkey::from_str(v).map_err(|_| invalid(format!("{field} is not a base58 address")))
    };
    let receiver_authorizer = key("extra.receiverAuthorizer", &extra.receiver_authorizer)?;
    let mint = key("asset", &r.requirements.asset)?;
    let pay_to = key("payTo", &r.requirements.pay_to)?;

    let p = &r.payload;
    let from = upto::key("from", &p.from)?;
    let channel = upto::key("channelId", &p.channel_id)?;
    let authorized = upto::key("authorizedSigner", &p.authorized_signer)?;
    if authorized != receiver_authorizer {
        return Err(Rejection::new(
            Reason::UptoReceiverAuthorizer,
            "payload.authorizedSigner is not extra.receiverAuthorizer",
        ));
    }
    let amount = |field: &str, v: &str| upto::amount(field, v).map_err(Rejection::from);
    let ceiling = amount("maxAmount", &p.max_amount)?;
    if amount("deposit", &p.deposit)? != ceiling {
        return Err(Rejection::new(
            Reason::UptoDepositNotCeiling,
            "payload.deposit is not payload.maxAmount",
        ));
    }
    let salt = p.nonce.parse().map_err(|_| {
        Rejection::new(
            Reason::UptoChannelSeed,
            "payload.nonce is not a decimal u64",
        )
    })?;
    if now < p.valid_after {
        return Err(Rejection::new(
            Reason::UptoNotYetActive,
            format!("the payment is valid after {}", p.valid_after),
        ));
    }
    if p.expires_at == 0 || now >= p.expires_at {
        return Err(Rejection::new(
            Reason::UptoExpired,
            format!("the payment expired at {}", p.expires_at),
        ));
    }
    let latest = now
        .saturating_add(i64::try_from(r.requirements.max_timeout_seconds).unwrap_or(i64::MAX))
        .saturating_add(EXPIRY_SLACK_SECS);
    if p.expires_at > latest {
        return Err(Rejection::new(
            Reason::UptoExpiresAtMismatch,
            "payload.expiresAt is further ahead than maxTimeoutSeconds allows",
        ));
    }
    Ok(Terms {
        extra,
        from,
        mint,
        pay_to,
        receiver_authorizer,
        channel,
        ceiling,
        salt,
    })
}
