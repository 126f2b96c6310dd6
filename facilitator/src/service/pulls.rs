//! The crank's pulls of the gated subscriptions this facilitator sends (docs/subscriptions.md):
//! each round, every subscription with a pull due (the period's whole amount, once a period:
//! `trust_gate_client::pulls`) is pulled through the gate into the payee's recipient's
//! associated token account (the crank creates none, as for held shares), and its record kept
//! for `GET /payments` and `/receipt` under the payer agent. Off unless `PULL_SUBSCRIPTIONS`
//! is on.

use crate::payment_records::PaymentRecord;
use crate::reject::{Reason, Rejection};
use crate::service::crank::{Round, MAX_CLOSES_PER_ROUND};
use crate::service::Facilitator;
use solana_sdk::signature::{Keypair, Signature};
use trust_gate_client::chain;
use trust_gate_client::instructions::Attestations;
use trust_gate_client::pulls::{self, SubscribedBy, SubscriptionListing};
use trust_gate_client::settle::ComputeBudget;
use trust_gate_client::subscriptions::RecurringDelegation;

impl Facilitator {
    /// Pulls what is due at `now` (at most [`MAX_CLOSES_PER_ROUND`] a round), one
    /// transaction each; a refusal (the payer's policy, its kill switch, the delegation) is
    /// the round's failure, named, and the pull is tried again next round.
    pub(crate) async fn pull_due(
        &self,
        keypair: &Keypair,
        now: i64,
        round: &mut Round,
    ) -> Result<(), Rejection> {
        let fac = self.facilitator();
        let gate = self.chain.builder.ids.gate;
        let listed = pulls::list(&self.chain.rpc, &gate, SubscribedBy::Facilitator(fac)).await?;
        let due = listed
            .iter()
            .filter_map(|l| Some((l, l.due(now)?, l.delegation?)))
            .take(MAX_CLOSES_PER_ROUND);
        for (listing, amount, delegation) in due {
            match self.pull(keypair, listing, &delegation, amount).await {
                Ok(Some(_)) => {
                    round.pulled += 1;
                    round.transactions += 1;
                }
                Ok(None) => round.pulls_without_account += 1,
                Err(e) => round.failures.push(format!(
                    "pull of {}: {}",
                    listing.record.delegation, e.message
                )),
            }
        }
        Ok(())
    }

    /// One pull of `amount`; `None` when the payee's recipient has no associated token
    /// account of the mint.
    async fn pull(
        &self,
        keypair: &Keypair,
        l: &SubscriptionListing,
        d: &RecurringDelegation,
        amount: u64,
    ) -> Result<Option<Signature>, Rejection> {
        let (rpc, b) = (&self.chain.rpc, &self.chain.builder);
        let payee = &l.record.payee_asset;
        let recipient = chain::agent(rpc, &b.ids, payee)
            .await?
            .recipient(&chain::asset_owner(rpc, payee).await?);
        let (program, _) = self.mint(&d.mint).await?;
        let destination = program.associated_account(&recipient, &d.mint);
        if chain::account(rpc, &destination).await?.is_none() {
            return Ok(None);
        }
        let payee_list = chain::policy(rpc, &b.ids, &l.record.payer_asset, l.record.policy_id)
            .await?
            .and_then(|p| p.payee_list());
        let att = Attestations {
            payee_list,
            ..Attestations::default()
        };
        let feedback = super::own_feedback("subscription");
        let collection = self.collection().await?;
        let mut ixs = ComputeBudget::limit(trust_gate_client::units::PULL);
        ixs.push(b.gate_pull(
            &l.record,
            d,
            &destination,
            program,
            &collection,
            amount,
            feedback,
            att,
        ));
        let (signature, _) = self
            .send_own(&ixs, true, keypair, Reason::TransactionFailed)
            .await?;
        let id = gate::subscription::payment_id_hash(&l.record.delegation, d);
        let record = PaymentRecord {
            signature: Some(signature),
            payer_asset: Some(l.record.payer_asset),
            ..PaymentRecord::default()
        };
        // Best effort: the pull landed, its receipt is on chain.
        if let Err(e) = self.payment_records.keep(&id, &record).await {
            tracing::warn!(error = %e, "could not keep the pull's record");
        }
        tracing::info!(delegation = %l.record.delegation, amount, %signature, "pulled a subscription");
        Ok(Some(signature))
    }
}
