//! x402's answer to a settlement, for every scheme: 200 with what settled, or 202
//! `settlement_pending` with the signature when it was sent but its outcome was not known in
//! time (the client retries the same request, which sends nothing new, or looks it up).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::decode::hex;
use trust_gate_x402::{ChannelSettlement, SettlementResponse};

/// What a scheme settled.
#[derive(Clone, Debug)]
pub struct SettleReply {
    /// The signature (a session's voucher kept off chain has none: empty).
    pub transaction: String,
    pub payer: Pubkey,
    pub pending: bool,
    pub detail: Detail,
}

/// What each kind of settlement adds to the answer.
#[derive(Clone, Debug)]
pub enum Detail {
    /// An exact payment's receipt.
    Receipt {
        payment_id_hash: [u8; 32],
        feedback_log: Pubkey,
        replayed: bool,
    },
    /// A channel scheme's amount (the deposit or the charge), whether an earlier attempt
    /// sent it, and a session's state (`extra`).
    Channel {
        amount: String,
        replayed: bool,
        extra: Option<Value>,
    },
}

impl SettleReply {
    /// A channel scheme's answer: the open's, the claim's or the close's `transaction` (empty
    /// for a voucher kept off chain), the `amount` deposited or charged, what the scheme adds
    /// (`extra`: a session's state). Not a retry; see [`SettleReply::replayed`].
    pub fn channel(
        transaction: String,
        amount: String,
        payer: Pubkey,
        extra: Option<Value>,
        pending: bool,
    ) -> Self {
        SettleReply {
            transaction,
            payer,
            pending,
            detail: Detail::Channel {
                amount,
                replayed: false,
                extra,
            },
        }
    }

    /// The same answer for a retry whose transaction an earlier attempt sent.
    pub fn replayed(mut self) -> Self {
        match &mut self.detail {
            Detail::Receipt { replayed, .. } | Detail::Channel { replayed, .. } => *replayed = true,
        }
        self
    }

    pub fn into_response(self, network: String) -> Response {
        let SettleReply {
            transaction,
            payer,
            pending,
            detail,
        } = self;
        if pending {
            let mut body = json!({
                "success": false,
                "errorReason": "settlement_pending",
                "errorMessage": format!("{transaction} was sent but not confirmed in time; it may still land"),
                "transaction": transaction,
                "network": network,
                "payer": payer.to_string(),
            });
            match detail {
                Detail::Receipt { .. } => {
                    body["hint"] = "retry the same request: it returns the signature once the settlement lands, and never pays twice".into();
                }
                Detail::Channel {
                    extra: Some(extra), ..
                } => body["extra"] = extra,
                Detail::Channel { extra: None, .. } => {}
            }
            return (StatusCode::ACCEPTED, Json(body)).into_response();
        }
        match detail {
            // x402's settle response, in its fields' order.
            Detail::Receipt {
                payment_id_hash,
                feedback_log,
                replayed,
            } => Json(SettlementResponse {
                success: true,
                error_reason: None,
                payer: Some(payer.to_string()),
                transaction,
                network,
                error_message: None,
                receipt: Some(json!({
                    "paymentIdHash": hex(&payment_id_hash),
                    "feedbackLog": feedback_log.to_string(),
                    "replayed": replayed,
                })),
            })
            .into_response(),
            Detail::Channel {
                amount,
                replayed,
                extra,
            } => Json(ChannelSettlement {
                amount,
                extra,
                network,
                payer: payer.to_string(),
                replayed,
                success: true,
                transaction,
            })
            .into_response(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_sdk::signature::Signature;

    async fn answer(res: Response) -> (StatusCode, String) {
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    fn keys() -> (Pubkey, Signature) {
        (Pubkey::new_from_array([7; 32]), Signature::from([9; 64]))
    }

    #[tokio::test]
    async fn settle_answers_keep_their_bytes() {
        let (payer, sig) = keys();
        let net = || "solana:test".to_string();
        for pending in [false, true] {
            let exact = SettleReply {
                transaction: sig.to_string(),
                payer,
                pending,
                detail: Detail::Receipt {
                    payment_id_hash: [1; 32],
                    feedback_log: Pubkey::new_from_array([2; 32]),
                    replayed: true,
                },
            };
            let upto = SettleReply::channel(sig.to_string(), "5".into(), payer, None, pending);
            let extra = json!({"channelState": {"b": 1, "a": 2}});
            let batch =
                SettleReply::channel(sig.to_string(), "6".into(), payer, Some(extra), pending)
                    .replayed();
            for (res, want) in [
                (exact.into_response(net()), GOLDEN_EXACT[pending as usize]),
                (upto.into_response(net()), GOLDEN_UPTO[pending as usize]),
                (batch.into_response(net()), GOLDEN_BATCH[pending as usize]),
            ] {
                let (status, body) = answer(res).await;
                assert_eq!(status, if pending { 202 } else { 200 });
                assert_eq!(
                    body,
                    want.replace("SIG", &sig.to_string())
                        .replace("PAYER", &payer.to_string())
                );
            }
        }
    }

    /// The answers as they were when the three schemes built them apart, keys sorted as
    /// serde_json writes a map (the exact success alone in its struct's order).
    const GOLDEN_EXACT: [&str; 2] = [
        r#"{"success":true,"payer":"PAYER","transaction":"SIG","network":"solana:test","receipt":{"feedbackLog":"8qbHbw2BbbTHBW1sbeqakYXVKRQM8Ne7pLK7m6CVfeR","paymentIdHash":"0101010101010101010101010101010101010101010101010101010101010101","replayed":true}}"#,
        r#"{"errorMessage":"SIG was sent but not confirmed in time; it may still land","errorReason":"settlement_pending","hint":"retry the same request: it returns the signature once the settlement lands, and never pays twice","network":"solana:test","payer":"PAYER","success":false,"transaction":"SIG"}"#,
    ];
    const GOLDEN_UPTO: [&str; 2] = [
        r#"{"amount":"5","network":"solana:test","payer":"PAYER","replayed":false,"success":true,"transaction":"SIG"}"#,
        r#"{"errorMessage":"SIG was sent but not confirmed in time; it may still land","errorReason":"settlement_pending","network":"solana:test","payer":"PAYER","success":false,"transaction":"SIG"}"#,
    ];
    const GOLDEN_BATCH: [&str; 2] = [
        r#"{"amount":"6","extra":{"channelState":{"a":2,"b":1}},"network":"solana:test","payer":"PAYER","replayed":true,"success":true,"transaction":"SIG"}"#,
        r#"{"errorMessage":"SIG was sent but not confirmed in time; it may still land","errorReason":"settlement_pending","extra":{"channelState":{"a":2,"b":1}},"network":"solana:test","payer":"PAYER","success":false,"transaction":"SIG"}"#,
    ];
}
