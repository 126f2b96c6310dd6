//! What `gate_pay` answers: the resource's answer as the model sees it, what was paid, the
//! sessions retired or closed.

use crate::explain::DecisionReport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use trust_gate_client::json::{Amount, Key};
use trust_gate_pay::exact::Body;

/// The resource's answer as the model sees it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResponseView {
    /// The HTTP status of the answer returned.
    pub status: u16,
    /// Its Content-Type.
    pub content_type: Option<String>,
    /// A text body, cut at bodyLimitChars characters (null for a binary body).
    pub body: Option<String>,
    /// Whether the body is binary (not UTF-8), and so not returned.
    pub binary: bool,
    /// The most characters returned.
    pub body_limit_chars: usize,
    /// Whether the body is longer than what is returned.
    pub body_truncated: bool,
    /// The bytes read.
    pub body_bytes_read: usize,
    /// The body's full length, when known (not when cut at the response cap without a
    /// Content-Length).
    pub body_length: Option<u64>,
    /// Whether the answer was cut at the server's response cap.
    pub response_capped: bool,
}

impl ResponseView {
    /// `body` cut at `max_chars`, with its full length.
    pub fn new(status: u16, body: &Body, max_chars: usize) -> ResponseView {
        let (text, cut) = match body.text() {
            Some(t) => {
                let kept: String = t.chars().take(max_chars).collect();
                let cut = kept.len() < t.len();
                (Some(kept), cut)
            }
            None => (None, false),
        };
        ResponseView {
            status,
            content_type: body.content_type.clone(),
            binary: text.is_none() && !body.bytes.is_empty(),
            body: text,
            body_limit_chars: max_chars,
            body_truncated: cut || !body.complete,
            body_bytes_read: body.bytes.len(),
            body_length: body.length,
            response_capped: !body.complete,
        }
    }
}

/// A session's last voucher.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VoucherView {
    /// The cumulative amount it lets the server claim.
    pub cumulative: Amount,
}

/// A session that was spent before this request, retired.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpentSession {
    /// Its channel.
    pub channel: Key,
    /// What its vouchers add up to.
    pub charged: Amount,
    /// When its unspent deposit comes back: with close_session.
    pub refund: String,
}

/// The holdback terms an `exact` offer stated (its `extra.gate.holdback`, signed by the
/// service), under which the settlement held a share of the price in the payee's escrow
/// (docs/holdback.md).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HoldbackTermsView {
    /// The payee's tier the terms were quoted for: 0..=4, or 5 for a payee without engine
    /// stats.
    pub payee_tier: u8,
    /// The tier's share, in basis points of the price.
    pub share_bps: u16,
    /// How long the share is held after the settlement, in seconds.
    pub hold_seconds: u32,
    /// The share of this price held back, in atomic units ("0": it rounded down to nothing
    /// and the payee was paid in full).
    pub held: Amount,
    /// The payee's escrow the share waits in.
    pub escrow: Key,
    /// Who decides a dispute within the hold: a key or an arbiter set (null for none: the
    /// payee's refusal then ends a dispute in its favour).
    pub arbiter: Option<Key>,
}

impl HoldbackTermsView {
    /// The view of the offer's terms; `None` when a field is not what the gate accepted (a
    /// settlement that carried them had its held share and escrow parsed already).
    pub fn of(t: &trust_gate_x402::holdback::HoldbackTerms) -> Option<HoldbackTermsView> {
        let key = |s: &str| s.parse().ok().map(Key);
        Some(HoldbackTermsView {
            payee_tier: t.payee_tier,
            share_bps: t.share_bps,
            hold_seconds: t.hold_seconds,
            held: Amount(t.held.parse().ok()?),
            escrow: key(&t.escrow)?,
            arbiter: match &t.arbiter {
                Some(a) => Some(key(a)?),
                None => None,
            },
        })
    }
}

/// What a call paid or was asked to pay. Each scheme fills its own fields: `exact` the
/// price and the settlement's receipt; `upto` the ceiling and the charge; a session its
/// channel, price, deposit and voucher.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentView {
    /// exact (and a held payment): the price, atomic units of the asset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// upto: the ceiling escrowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<String>,
    /// upto: what the resource charged of the ceiling (the rest went back to the payer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged: Option<Amount>,
    /// The offer's asset (the token mint).
    pub asset: String,
    /// The offer's payTo.
    pub pay_to: String,
    /// exact: the settlement's network (CAIP-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// exact: who paid, as the settlement reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payer: Option<String>,
    /// The transaction on chain (exact: the settlement; upto: the claim; a session: its
    /// open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// exact: the payment id hash (gate_get_feedback_log reads the receipt by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_id_hash: Option<String>,
    /// exact: the settling facilitator (its fee payer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facilitator: Option<String>,
    /// exact: the receipt's URL at the configured facilitator, when it settled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_url: Option<String>,
    /// exact: the holdback terms the payment was settled under, when the payer's policy held
    /// a share of it back (gate_list_payer_holdbacks shows where the share stands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdback: Option<HoldbackTermsView>,
    /// A session: its channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<Key>,
    /// A session: whether this request opened it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<bool>,
    /// A session: the price of a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Amount>,
    /// A session: its deposit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposit: Option<Amount>,
    /// A session: the voucher this request carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voucher: Option<VoucherView>,
    /// A session: what is left of the deposit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<Amount>,
    /// A session opened for this request: the one it replaced, spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_session: Option<SpentSession>,
}

/// A session this call retired: the server did not take its voucher.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetiredSession {
    /// Its channel.
    pub channel: Key,
    /// Always true: the next request opens another, close_session sends its refund.
    pub retired: bool,
}

/// A session close_session ended, or tried to.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClosedSession {
    /// Its channel.
    pub channel: Key,
    /// Its deposit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposit: Option<Amount>,
    /// What its vouchers add up to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged: Option<Amount>,
    /// What went back to the payer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refunded: Option<Amount>,
    /// The refund's transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The answer to the request that carried the refund.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseView>,
    /// Why it could not be closed (kept, for the next close_session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What `gate_pay` answers: whether it paid, the gate's decision, what was paid and the
/// resource's answer; or, with close_session, the sessions closed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayResult {
    /// Whether this call paid.
    pub paid: bool,
    /// The scheme paid or held (trust-gate, trust-gate-upto,
    /// trust-gate-batch-settlement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// The gate's decision (absent when the resource asked for no payment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionReport>,
    /// What was paid, or held for an approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment: Option<PaymentView>,
    /// The resource's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseView>,
    /// The session this call retired, when the server refused its voucher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<RetiredSession>,
    /// close_session: the sessions closed (or kept, with their error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_sessions: Option<Vec<ClosedSession>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_cut_at_the_stated_size_with_its_length() {
        let body = Body {
            content_type: Some("text/plain".into()),
            bytes: "héllo wörld".as_bytes().to_vec(),
            complete: true,
            length: Some(13),
        };
        let v = ResponseView::new(200, &body, 5);
        assert_eq!(v.body.as_deref(), Some("héllo"));
        assert!(v.body_truncated);
        assert_eq!(v.body_length, Some(13));
        assert!(!ResponseView::new(200, &body, 100).body_truncated);
        let capped = Body {
            complete: false,
            length: None,
            ..body.clone()
        };
        let v = ResponseView::new(200, &capped, 100);
        assert!(v.body_truncated);
        assert!(v.response_capped);
        assert_eq!(v.body_length, None);
        let binary = Body {
            bytes: vec![0xff, 0xfe, 0],
            ..body
        };
        let v = ResponseView::new(200, &binary, 100);
        assert_eq!(v.body, None);
        assert!(v.binary);
    }

    #[test]
    fn a_deny_carries_its_meaning_and_remediation() {
        let v = DecisionReport::deny(Some(6), Some("CounterpartyTierBelowMin".into()));
        assert_eq!(v.category.as_deref(), Some("counterparty"));
        assert!(v.remediation.unwrap().len() > 10);
        let a = DecisionReport {
            approval_id: Some("ID".into()),
            ..DecisionReport::of_kind("RequireApproval")
        };
        assert_eq!(a.gate_error_code, Some(6077));
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["approvalId"], "ID");
        assert_eq!(v["kind"], "RequireApproval");
    }
}
