//! The `trust-gate` scheme: one client-signed transaction of `[gate_payment_strict,
//! TransferChecked, emit_feedback]`, the gate's decision at `/verify` (by simulation) and the
//! atomic settlement at `/settle` (co-signed as fee payer): see [`verify`] and [`settle`].

mod refusals;
mod settle;
mod verify;

use super::{Call, Scheme, Verified};
use crate::answer::SettleReply;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::verify::{self as verify_body};
use serde_json::{json, Value};
use trust_gate_x402::{FacilitatorRequest, SCHEME_TRUST_GATE};

pub struct TrustGate;

/// The request, or why it is none (`reason` names the refusal: each route has its own).
fn request(body: &[u8], reason: Reason) -> Result<FacilitatorRequest, Rejection> {
    serde_json::from_slice::<Value>(body)
        .map_err(|e| Rejection::input("body", format!("not JSON: {e}")))
        .and_then(verify_body::parse_x402)
        .map_err(|e| Rejection::new(reason, e.message))
}

#[async_trait::async_trait]
impl Scheme for TrustGate {
    fn names(&self) -> &'static [&'static str] {
        &[SCHEME_TRUST_GATE]
    }

    async fn extra(&self, f: &Facilitator, _name: &str) -> Value {
        let ids = &f.chain.builder.ids;
        let tables: Vec<String> = f.tables().await.iter().map(|t| t.key.to_string()).collect();
        json!({
            "feePayer": f.facilitator().to_string(),
            "gate": {
                "gateProgram": ids.gate.to_string(),
                "policyVaultProgram": ids.policy_vault.to_string(),
                "validationRegistryProgram": ids.validation_registry.to_string(),
                "lookupTable": tables.first(),
                "lookupTables": tables,
                "settlement": crate::inspect::NAMES,
            }
        })
    }

    async fn verify(&self, f: &Facilitator, call: Call<'_>) -> Result<Verified, Rejection> {
        let req = request(call.body, Reason::InputInvalid)?;
        Ok(Verified::Decided(Box::new(
            TrustGate::verify_x402(f, &req).await?,
        )))
    }

    async fn settle(&self, f: &Facilitator, call: Call<'_>) -> Result<SettleReply, Rejection> {
        let req = request(call.body, Reason::InvalidPayload)?;
        TrustGate::settle_payment(f, &req).await
    }
}
