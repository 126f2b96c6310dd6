//! The checks of a request's offer, channel config and voucher, off chain.

use super::{channel_state, BatchRequest};
use crate::reject::{Reason, Rejection};
use crate::sessions::Session;
use serde_json::json;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::str::FromStr;
use trust_gate_client::channels;
use trust_gate_client::vouchers::{Refusal, Voucher};
use trust_gate_x402::batch::{self, BatchExtra, BatchVoucher, ChannelConfig, VoucherState};

/// The requirements, checked: this facilitator, the flow, the grace period; the price.
#[derive(Clone, Debug)]
pub struct Offer {
    pub extra: BatchExtra,
    pub mint: Pubkey,
    pub pay_to: Pubkey,
    /// The request's price (`amount`).
    pub price: u64,
    /// The gated scheme: only a channel the gate opened pays it.
    pub gated: bool,
}

/// A channel config, checked against the offer and the facilitator: its address.
#[derive(Clone, Copy, Debug)]
pub struct ConfigKeys {
    pub channel: Pubkey,
    pub payer: Pubkey,
    pub voucher_key: Pubkey,
    pub salt: u64,
    pub open_slot: u64,
}

pub(crate) fn offer(r: &BatchRequest, fac: &Pubkey, network: &str) -> Result<Offer, Rejection> {
    let (q, a) = (&r.requirements, &r.accepted);
    if q.network != network || a.network != network {
        return Err(Rejection::new(
            Reason::NetworkMismatch,
            format!(
                "the network is {}; this facilitator settles on {network}",
                q.network
            ),
        ));
    }
    if (&q.asset, &q.pay_to) != (&a.asset, &a.pay_to) {
        return Err(Rejection::new(
            Reason::BatchInvalidRequirements,
            "the requirements' asset or payTo is not the accepted offer's",
        ));
    }
    let extra = q.extra.clone();
    if extra.fee_payer != fac.to_string() {
        return Err(Rejection::new(
            Reason::BatchFeePayerMismatch,
            format!(
                "extra.feePayer is {}; this facilitator is {fac}",
                extra.fee_payer
            ),
        ));
    }
    if extra
        .payment_flow
        .as_deref()
        .is_some_and(|f| f != batch::PAYMENT_FLOW_AUTHORIZATION)
    {
        return Err(Rejection::new(
            Reason::BatchPaymentFlow,
            "extra.paymentFlow, when present, is \"authorization\"",
        ));
    }
    if extra
        .voucher_signer
        .as_deref()
        .is_some_and(|v| v != "client")
        || extra.operator.is_some()
    {
        return Err(Rejection::new(
            Reason::BatchServerModeUnsupported,
            "extra.voucherSigner \"server\" and extra.operator are server mode's; this facilitator serves client mode only",
        ));
    }
    if !(batch::MIN_WITHDRAW_DELAY..=batch::MAX_WITHDRAW_DELAY).contains(&extra.withdraw_delay)
        || u64::from(extra.withdraw_delay) < q.max_timeout_seconds
    {
        return Err(Rejection::new(
            Reason::BatchWithdrawDelayOutOfRange,
            format!(
                "extra.withdrawDelay is {}; it is {}..={} seconds and at least maxTimeoutSeconds",
                extra.withdraw_delay,
                batch::MIN_WITHDRAW_DELAY,
                batch::MAX_WITHDRAW_DELAY
            ),
        ));
    }
    let key = |field: &str, v: &str| {
        Pubkey::from_str(v).map_err(|_| {
            Rejection::new(
                Reason::BatchInvalidRequirements,
                format!("{field} is not a base58 address"),
            )
        })
    };
    let price = batch::amount("amount", &q.amount)?;
    let (mint, pay_to) = (key("asset", &q.asset)?, key("payTo", &q.pay_to)?);
    // Checked only: the channel config and the open's binding Memo name it as written.
    key("extra.receiverAuthorizer", &extra.receiver_authorizer)?;
    Ok(Offer {
        mint,
        pay_to,
        extra,
        price,
        gated: r.gated,
    })
}

/// The channel config against the offer and the facilitator; its address.
pub(crate) fn config_keys(
    c: &ChannelConfig,
    o: &Offer,
    fac: &Pubkey,
) -> Result<ConfigKeys, Rejection> {
    let payer = batch::key("channelConfig.payer", &c.payer)?;
    let voucher_key = batch::key("channelConfig.payerAuthorizer", &c.payer_authorizer)?;
    if payer == *fac || voucher_key == *fac {
        return Err(Rejection::new(
            Reason::BatchFeePayerMismatch,
            "the channel's payer and its voucher key are not the facilitator",
        ));
    }
    if c.receiver != o.pay_to.to_string() || c.token != o.mint.to_string() {
        return Err(Rejection::new(
            Reason::BatchChannelIdMismatch,
            "channelConfig.receiver and .token are payTo and asset",
        ));
    }
    same_receiver_authorizer(c, o)?;
    if c.withdraw_delay != o.extra.withdraw_delay {
        return Err(Rejection::new(
            Reason::BatchWithdrawDelayMismatch,
            "channelConfig.withdrawDelay is not extra.withdrawDelay",
        ));
    }
    if c.voucher_signer.as_deref().is_some_and(|v| v != "client") {
        return Err(Rejection::new(
            Reason::BatchServerModeUnsupported,
            "channelConfig.voucherSigner is \"client\" in client mode",
        ));
    }
    let salt = c.salt.parse().map_err(|_| {
        Rejection::new(
            Reason::UnsupportedPayloadType,
            "channelConfig.salt is not a decimal u64",
        )
    })?;
    let (channel, _) =
        channels::channel_address(&payer, fac, &o.mint, &voucher_key, salt, c.open_slot);
    Ok(ConfigKeys {
        channel,
        payer,
        voucher_key,
        salt,
        open_slot: c.open_slot,
    })
}

/// The channel config names the offer's receiver authorizer.
fn same_receiver_authorizer(c: &ChannelConfig, o: &Offer) -> Result<(), Rejection> {
    if c.receiver_authorizer != o.extra.receiver_authorizer {
        return Err(Rejection::new(
            Reason::BatchReceiverAuthorizerMismatch,
            "channelConfig.receiverAuthorizer is not extra.receiverAuthorizer",
        ));
    }
    Ok(())
}

/// The channel a payload names (a voucher's `channelId`), as a key.
pub(crate) fn channel_id(id: &str) -> Result<Pubkey, Rejection> {
    Pubkey::from_str(id).map_err(|_| {
        Rejection::new(
            Reason::BatchChannelIdMismatch,
            format!("channelId {id:?} is not a base58 address"),
        )
    })
}

/// Whether the channel config is the session's channel (compared field by field with the
/// one its deposit checked, so that a voucher costs no address derivation) under the offer.
pub(crate) fn same_channel(c: &ChannelConfig, s: &Session, o: &Offer) -> Result<(), Rejection> {
    let d = &s.config;
    let same = (&c.payer, &c.payer_authorizer, &c.salt, c.open_slot)
        == (&d.payer, &d.payer_authorizer, &d.salt, d.open_slot)
        && (&c.receiver, &c.token, c.withdraw_delay) == (&d.receiver, &d.token, d.withdraw_delay)
        && (s.pay_to, s.mint) == (o.pay_to, o.mint);
    if !same {
        return Err(Rejection::new(
            Reason::BatchChannelIdMismatch,
            format!(
                "channelConfig and the requirements are not those of channel {}",
                s.channel
            ),
        ));
    }
    same_receiver_authorizer(c, o)?;
    // A route that asks for the gate is paid only by a channel the gate opened (and a plain
    // route's session stays plain).
    if o.gated != s.gate.is_some() {
        let (opened, offer) = if o.gated {
            ("without", batch::SCHEME_GATED_BATCH)
        } else {
            ("through", batch::SCHEME_BATCH)
        };
        return Err(Rejection::new(
            Reason::BatchChannelIdMismatch,
            format!(
                "channel {} was opened {opened} the gate; this offer is {offer}",
                s.channel
            ),
        ));
    }
    Ok(())
}

/// A voucher on the wire, of `channel`.
pub(crate) fn voucher(v: &BatchVoucher, channel: &Pubkey) -> Result<Voucher, Rejection> {
    if channel_id(&v.channel_id)? != *channel {
        return Err(Rejection::new(
            Reason::BatchChannelIdMismatch,
            format!("voucher.channelId is not the channel of channelConfig ({channel})"),
        ));
    }
    if v.expires_at != 0 {
        return Err(Rejection::new(
            Reason::BatchVoucherExpiry,
            "voucher.expiresAt is 0 in batch-settlement",
        ));
    }
    let cumulative = batch::amount("voucher.maxClaimableAmount", &v.max_claimable_amount)?;
    let signature = Signature::from_str(&v.signature).map_err(|_| {
        Rejection::new(
            Reason::BatchVoucherSignature,
            "voucher.signature is not a base58 signature",
        )
    })?;
    Ok(Voucher {
        channel: *channel,
        cumulative,
        expires_at: 0,
        signature,
    })
}

/// A voucher on the wire, of the channel it names.
pub(crate) fn own_voucher(v: &BatchVoucher) -> Result<Voucher, Rejection> {
    voucher(v, &channel_id(&v.channel_id)?)
}

/// A voucher refusal as the scheme names it. A voucher that does not add exactly the price
/// to what was accepted (a resend, one lost in flight, another amount) carries the session's
/// state: the amount charged and the payer's own voucher of it (specification section 4.6).
pub(crate) fn refusal(r: Refusal, s: &Session) -> Rejection {
    let reason = match r {
        Refusal::Paused => Reason::BatchPayerPaused,
        Refusal::WrongChannel => Reason::BatchChannelIdMismatch,
        Refusal::OverPerPaymentCap { .. } => Reason::BatchPriceOverPerPaymentCap,
        Refusal::WrongAmount { .. } => Reason::BatchCumulativeAmountMismatch,
        Refusal::OverDeposit { .. } => Reason::BatchCumulativeExceedsDeposit,
        Refusal::Expired { .. } => Reason::BatchVoucherExpiry,
        Refusal::BadSignature => Reason::BatchVoucherSignature,
    };
    let refused = Rejection::new(reason, r.to_string());
    match (r, &s.latest_signature) {
        (Refusal::WrongAmount { .. }, Some(signature)) => refused.with_extra(json!({
            "channelState": channel_state(s),
            "voucherState": VoucherState {
                signed_max_claimable: s.accepted.to_string(),
                expires_at: 0,
                signature: signature.clone(),
            },
        })),
        _ => refused,
    }
}

/// The open verifier's reasons (upto's) as this scheme names them.
pub(crate) fn open_refusal(r: Rejection) -> Rejection {
    let reason = match r.reason {
        Reason::UptoFacilitatorMismatch => Reason::BatchFeePayerMismatch,
        Reason::UptoChannelId | Reason::UptoNonce | Reason::UptoPayerMismatch => {
            Reason::BatchChannelIdMismatch
        }
        _ => Reason::BatchSetupTransaction,
    };
    Rejection { reason, ..r }
}
