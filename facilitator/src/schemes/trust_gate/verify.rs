//! `/verify` of a `trust-gate` payment: the challenge authenticated, the transaction checked
//! when there is one, then the gate's decision, by one simulation that also reads what else
//! would make the settlement fail.

use super::refusals::engine_paused;
use super::TrustGate;
use crate::holdback;
use crate::payee_account;
use crate::payer_signers;
use crate::reject::Rejection;
use crate::service::Facilitator;
use crate::verify::X402Verified;
use trust_gate_client::chain;
use trust_gate_client::decode::Decision;
use trust_gate_x402::FacilitatorRequest;

impl TrustGate {
    /// An x402 request: authenticate the challenge, check the transaction when one is
    /// present, then decide. What else can make the settlement fail is read by the same
    /// simulation, at no extra round trip: the engine's pause flag, the payee's token account
    /// (a Token-2022 account that requires memos can never be paid), and, with a transaction,
    /// the payer agent's AgentAccount and asset (whether its signer may act for it).
    pub async fn verify_x402(
        f: &Facilitator,
        req: &FacilitatorRequest,
    ) -> Result<X402Verified, Rejection> {
        let ctx = TrustGate::context(f, req).await?;
        let payer = if req.payment_payload.payload.transaction.is_empty() {
            None
        } else {
            let verified = TrustGate::inspect(f, req, &ctx).await?;
            Some(verified.settlement.payer_signer)
        };
        let query = ctx.query();
        let ids = f.chain.builder.ids;
        // The mint's token program is cached: it names the payee's token account.
        let (program, _) = f.mint(&ctx.mint).await?;
        let destination = program.associated_account(&ctx.pay_to, &ctx.mint);
        // The payee's escrow: a held share needs it open.
        let escrow = f
            .chain
            .builder
            .pda
            .holdback_escrow(&ctx.payee_asset, &ctx.mint);
        let mut extra = vec![f.chain.builder.pda.atom_config(), destination, escrow];
        if payer.is_some() {
            extra.extend([
                f.chain.builder.pda.agent_account(&ctx.payer_asset),
                ctx.payer_asset,
            ]);
        }
        let (decided, read) = f.decide_reading(query, &extra).await?;
        let decision = decided.decision;
        let seen = |i: usize| read.get(i).and_then(Option::as_ref);
        if let Some(signer) = payer {
            let agent =
                payer_signers::read(&ids.agent_registry, &ctx.payer_asset, seen(3), seen(4))?;
            f.caches.agents.put(ctx.payer_asset, agent);
            payer_signers::judge(&ctx.payer_asset, &agent, &signer)?;
        }
        if decision != Decision::Allow {
            let resource = crate::service::holds::resource(Some(&ctx.resource_url));
            let held = f
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
                holdback: None,
            });
        }
        holdback::terms_hold(ctx.holdback.as_ref(), decided.holdback.as_ref())?;
        if ctx.holdback_quote().is_some_and(|q| q.held != 0) && seen(2).is_none() {
            return Err(holdback::escrow_missing(&escrow, &ctx.payee_asset));
        }
        // Only while the engine is paused are the payee's accounts read, to tell whether its
        // feedback (so the settlement) would fail.
        if chain::engine_paused(&ids, seen(0))
            && chain::rated_by_engine(&f.chain.rpc, &ids, &ctx.payee_asset)
                .await
                .map_err(Rejection::from)?
        {
            return Err(engine_paused(&ids.reputation_engine, "its settlement"));
        }
        if seen(1).is_some_and(payee_account::requires_memo) {
            return Err(payee_account::refusal(&destination));
        }
        Ok(X402Verified {
            decision,
            payer,
            held: None,
            holdback: ctx.holdback.clone(),
        })
    }
}
