//! POST /verify: the body (a verify context or an x402 v2 facilitator request) and the
//! decision it gets. Nothing is written.

use crate::payee_account;
use crate::payer_signers;
use crate::reject::Rejection;
use crate::service::Facilitator;
use serde_json::{Map, Value};
use solana_sdk::pubkey::Pubkey;
use std::str::FromStr;
use trust_gate_client::chain;
use trust_gate_client::decode::Decision;
use trust_gate_client::simulate::PaymentQuery;
use trust_gate_x402::FacilitatorRequest;

/// A parsed /verify body.
#[derive(Clone, Debug)]
pub enum VerifyBody {
    Context(PaymentQuery),
    X402(Box<FacilitatorRequest>),
}

const CONTEXT_FIELDS: [&str; 5] = [
    "payerAgentAsset",
    "payeeAgentAsset",
    "amount",
    "mint",
    "policyId",
];

/// Parses a /verify body; every error names the field.
pub fn parse_body(body: &[u8], default_policy_id: Option<u32>) -> Result<VerifyBody, Rejection> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| Rejection::input("body", format!("not JSON: {e}")))?;
    let Value::Object(map) = v else {
        return Err(Rejection::input("body", "must be a JSON object"));
    };
    if map.contains_key("paymentPayload") || map.contains_key("x402Version") {
        return parse_x402(Value::Object(map)).map(|r| VerifyBody::X402(Box::new(r)));
    }
    parse_context(&map, default_policy_id).map(VerifyBody::Context)
}

/// An x402 v2 facilitator request (also the /settle body).
pub fn parse_x402(v: Value) -> Result<FacilitatorRequest, Rejection> {
    serde_json::from_value(v)
        .map_err(|e| Rejection::input("body", format!("not an x402 v2 facilitator request: {e}")))
}

fn parse_context(
    map: &Map<String, Value>,
    default_policy_id: Option<u32>,
) -> Result<PaymentQuery, Rejection> {
    if let Some(unknown) = map.keys().find(|k| !CONTEXT_FIELDS.contains(&k.as_str())) {
        return Err(Rejection::input(
            unknown,
            format!(
                "unknown field; a verify context has {}",
                CONTEXT_FIELDS.join(", ")
            ),
        ));
    }
    let policy_id = match map.get("policyId") {
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                Rejection::input(
                    "policyId",
                    format!("{v} is not an integer 0..={}", u32::MAX),
                )
            })?,
        None => default_policy_id.ok_or_else(|| {
            Rejection::input(
                "policyId",
                "missing, and this facilitator has no default policy id",
            )
        })?,
    };
    Ok(PaymentQuery {
        payer_asset: pubkey(map, "payerAgentAsset")?,
        payee_asset: pubkey(map, "payeeAgentAsset")?,
        amount: amount(map)?,
        mint: pubkey(map, "mint")?,
        policy_id,
    })
}

fn string<'a>(map: &'a Map<String, Value>, field: &str) -> Result<&'a str, Rejection> {
    match map.get(field) {
        None => Err(Rejection::input(field, "missing")),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(Rejection::input(
            field,
            format!("must be a string, got {other}"),
        )),
    }
}

fn pubkey(map: &Map<String, Value>, field: &str) -> Result<Pubkey, Rejection> {
    let s = string(map, field)?;
    Pubkey::from_str(s)
        .map_err(|_| Rejection::input(field, format!("{s:?} is not a base58 public key")))
}

/// The amount: a JSON string of decimal digits that fit in u64.
fn amount(map: &Map<String, Value>) -> Result<u64, Rejection> {
    let s = string(map, "amount")?;
    crate::adapter::decimal_u64(s).map_err(|why| Rejection::input("amount", format!("{s:?} {why}")))
}

/// The outcome of an x402 /verify.
pub struct X402Verified {
    pub decision: Decision,
    pub payer: Option<Pubkey>,
    /// For RequireApproval: the pending approval, recorded when the payer signed the request.
    pub held: Option<crate::holds::Held>,
}

impl Facilitator {
    /// An x402 request: authenticate the challenge, check the transaction when one is
    /// present, then decide. What else can make the settlement fail is read by the same
    /// simulation, at no extra round trip: the engine's pause flag, the payee's token account
    /// (a Token-2022 account that requires memos can never be paid), and, with a transaction,
    /// the payer agent's AgentAccount and asset (whether its signer may act for it).
    pub async fn verify_x402(&self, req: &FacilitatorRequest) -> Result<X402Verified, Rejection> {
        let ctx = self.context(req).await?;
        let payer = if req.payment_payload.payload.transaction.is_empty() {
            None
        } else {
            Some(self.inspect(req, &ctx).await?.payer)
        };
        let query = ctx.query();
        let ids = self.chain.builder.ids;
        // The mint's token program is cached: it names the payee's token account.
        let (program, _) = self.mint(&ctx.mint).await?;
        let destination = program.associated_account(&ctx.pay_to, &ctx.mint);
        let mut extra = vec![self.chain.builder.pda.atom_config(), destination];
        if payer.is_some() {
            extra.extend([
                self.chain.builder.pda.agent_account(&ctx.payer_asset),
                ctx.payer_asset,
            ]);
        }
        let (decision, read) = self.decide_reading(query, &extra).await?;
        let seen = |i: usize| read.get(i).and_then(Option::as_ref);
        if let Some(signer) = payer {
            let agent =
                payer_signers::read(&ids.agent_registry, &ctx.payer_asset, seen(2), seen(3))?;
            self.caches.agents.put(ctx.payer_asset, agent);
            payer_signers::judge(&ctx.payer_asset, &agent, &signer)?;
        }
        if decision != Decision::Allow {
            let resource = crate::holds::resource(Some(&ctx.resource_url));
            let held = self
                .hold(
                    &decision,
                    &query.approval_terms(),
                    "payment",
                    resource,
                    payer.is_some(),
                )
                .await;
            return Ok(X402Verified {
                decision,
                payer,
                held,
            });
        }
        // Only while the engine is paused are the payee's accounts read, to tell whether its
        // feedback (so the settlement) would fail.
        if chain::engine_paused(&ids, seen(0))
            && chain::rated_by_engine(&self.chain.rpc, &ids, &ctx.payee_asset)
                .await
                .map_err(Rejection::from)?
        {
            return Err(crate::settle::engine_paused(
                &ids.reputation_engine,
                "its settlement",
            ));
        }
        if seen(1).is_some_and(payee_account::requires_memo) {
            return Err(payee_account::refusal(&destination));
        }
        Ok(X402Verified {
            decision,
            payer,
            held: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> String {
        let e = parse_body(body.as_bytes(), None).unwrap_err();
        assert_eq!(e.status(), 400);
        assert_eq!(e.reason, "input_invalid");
        e.message
    }

    #[test]
    fn context_errors_name_the_field() {
        let k = Pubkey::new_unique().to_string();
        let ok = format!(
            r#"{{"payerAgentAsset":"{k}","payeeAgentAsset":"{k}","amount":"5","mint":"{k}","policyId":1}}"#
        );
        assert!(
            matches!(parse_body(ok.as_bytes(), None).unwrap(), VerifyBody::Context(q) if q.amount == 5)
        );
        assert!(err("[1]").starts_with("body"));
        assert!(err("{").starts_with("body: not JSON"));
        assert!(err(&ok.replace(r#""amount":"5""#, r#""amount":"5x""#)).starts_with("amount"));
        assert!(
            err(&ok.replace(r#""amount":"5""#, r#""amount":"18446744073709551616""#))
                .contains("u64")
        );
        assert!(err(&ok.replace(r#""amount":"5""#, r#""amount":5"#))
            .starts_with("amount: must be a string"));
        assert!(
            err(&ok.replace(&format!(r#""mint":"{k}""#), r#""mint":"0OIl""#)).starts_with("mint")
        );
        assert!(
            err(&ok.replace(&format!(r#""payerAgentAsset":"{k}","#), ""))
                .starts_with("payerAgentAsset: missing")
        );
        assert!(
            err(&ok.replace(r#""policyId":1"#, r#""policyId":1,"extra":2"#))
                .starts_with("extra: unknown field")
        );
        assert!(err(&ok.replace(r#","policyId":1"#, "")).starts_with("policyId: missing"));
        assert!(err(&ok.replace(r#""policyId":1"#, r#""policyId":-1"#)).starts_with("policyId"));
        let defaulted = parse_body(ok.replace(r#","policyId":1"#, "").as_bytes(), Some(7)).unwrap();
        assert!(matches!(defaulted, VerifyBody::Context(q) if q.policy_id == 7));
    }
}
