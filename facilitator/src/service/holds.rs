//! Holding a payment for its approval: a refusal whose decision is RequireApproval gets the
//! pending approval's id (and, when the payer signed the request, its record in
//! [`crate::approvals`]); a payment that used its approval forgets the record.

pub use crate::approvals::Held;
use crate::approvals::PendingApproval;
use crate::channel_open::Gated;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::approvals::{ApprovalState, HeldPayment, HeldPayments, StandingApproval};
use trust_gate_client::decode::{ApprovalTerms, Decision};
use trust_gate_client::json::Key;
use trust_gate_client::simulate::{now_unix, PaymentQuery};

/// The x402 resource a held payment was for, as its record keeps it (at most 500
/// characters: the URL comes from the client's request).
pub fn resource(url: Option<&str>) -> Option<String> {
    url.map(|u| u.chars().take(500).collect())
}

impl Facilitator {
    /// `d`'s hold for a payment of `terms`: `None` unless `d` is RequireApproval. The record
    /// is kept only when `signed` (the payer's signer signed the request); a store that
    /// fails leaves the answer without one (the approval on chain is what counts).
    pub async fn hold(
        &self,
        d: &Decision,
        terms: &ApprovalTerms,
        kind: &str,
        resource: Option<String>,
        signed: bool,
    ) -> Option<Held> {
        if *d != Decision::RequireApproval {
            return None;
        }
        if !signed {
            let id = self.chain.builder.pda.approval(terms);
            return Some(Held { id, record: None });
        }
        let pending = self.approvals.settings().pending;
        let record = PendingApproval::new(
            &self.chain.builder,
            terms,
            kind,
            resource,
            now_unix(),
            pending,
        );
        let id = record.id;
        match self.approvals.hold(&record).await {
            Ok(()) => {
                tracing::info!(%id, payer = %terms.payer_asset, amount = terms.amount, "held for approval");
                Some(Held {
                    id,
                    record: Some(record),
                })
            }
            Err(e) => {
                tracing::warn!(%id, error = %e.message, "could not keep the pending approval");
                Some(Held { id, record: None })
            }
        }
    }

    /// `r` with the hold of its decision, when it is RequireApproval, for a request the
    /// payer signed.
    pub async fn held(
        &self,
        mut r: Rejection,
        terms: &ApprovalTerms,
        kind: &str,
        resource: Option<String>,
    ) -> Rejection {
        if let Some(d) = r.decision.as_deref().copied() {
            r.held = self
                .hold(&d, terms, kind, resource, true)
                .await
                .map(Box::new);
        }
        r
    }

    /// Forgets the pending approval `id` of `payer`: its payment used the approval.
    pub async fn forget_approval(&self, id: &Pubkey, payer: &Pubkey) {
        if let Err(e) = self.approvals.remove(id, payer).await {
            tracing::warn!(%id, error = %e.message, "could not forget the used approval");
        }
    }
}

impl Facilitator {
    /// The pending approvals of `payer` (every payer's when `None`), each with its approval
    /// on chain, if a member made it (read in one call): `GET /approvals`.
    pub async fn pending_approvals(
        &self,
        payer: Option<&Pubkey>,
    ) -> Result<HeldPayments, Rejection> {
        let now = now_unix();
        let records = self.approvals.list(payer, now).await?;
        let ids: Vec<Pubkey> = records.iter().map(|r| r.id).collect();
        let onchain = trust_gate_client::chain::accounts(&self.chain.rpc, &ids).await?;
        let approvals = records
            .into_iter()
            .zip(&onchain)
            .map(|(r, acc)| self.held_payment(r, acc.as_ref(), now))
            .collect();
        Ok(HeldPayments {
            payer_agent_asset: payer.map(Key::from),
            approvals,
            pending_secs: self.approvals.settings().pending.as_secs(),
            per_payer: self.approvals.settings().per_payer,
        })
    }

    /// The pending approval `id` with its approval on chain: `GET /approvals/{id}`.
    pub async fn pending_approval(&self, id: &Pubkey) -> Result<HeldPayment, Rejection> {
        let now = now_unix();
        let record = self.approvals.get(id, now).await?.ok_or_else(|| {
            Rejection::new(
                Reason::NotFound,
                format!("no pending approval {id} here (never held, used, or expired)"),
            )
        })?;
        let acc = trust_gate_client::chain::account(&self.chain.rpc, id).await?;
        Ok(self.held_payment(record, acc.as_ref(), now))
    }

    /// A record and its state: `pending` (no approval on chain yet), `approved` (one stands
    /// until `approval.expiresAt`) or `expired` (one stands but has expired: closed by anyone,
    /// its rent to the member).
    fn held_payment(
        &self,
        record: PendingApproval,
        acc: Option<&solana_sdk::account::Account>,
        now: i64,
    ) -> HeldPayment {
        use trust_gate_client::decode::PaymentApproval;
        let approval = acc
            .filter(|a| a.owner == self.chain.builder.ids.policy_vault)
            .and_then(|a| {
                trust_gate_client::decode::account::<PaymentApproval>("PaymentApproval", &a.data)
                    .ok()
            });
        let state = match &approval {
            None => ApprovalState::Pending,
            Some(a) if now <= a.expires_at => ApprovalState::Approved,
            Some(_) => ApprovalState::Expired,
        };
        HeldPayment {
            record,
            state,
            approval: approval.map(|a| StandingApproval {
                expires_at: a.expires_at,
                approved_at: a.approved_at,
                rent_payer: Key(a.rent_payer),
                signers: a.signers,
            }),
        }
    }
}

/// A public key from a path or query parameter `field`, else 400 naming it.
pub fn parse_key(field: &str, s: &str) -> Result<Pubkey, Rejection> {
    s.parse()
        .map_err(|_| Rejection::input(field, format!("{s:?} is not a base58 public key")))
}

impl Facilitator {
    /// The gate's decision of a gated channel's deposit of `amount`, asked before its open is
    /// co-signed (the open's payer signature checked): anything but Allow refuses with the
    /// decision (402 and its headers), a RequireApproval held for the payer's members.
    pub(crate) async fn decide_deposit(
        &self,
        g: Gated,
        amount: u64,
        mint: Pubkey,
        resource_url: Option<&str>,
    ) -> Result<(), Rejection> {
        let deposit = PaymentQuery {
            payer_asset: g.payer_asset,
            payee_asset: g.payee_asset,
            amount,
            mint,
            policy_id: g.policy_id,
        };
        let d = self.decide(deposit).await?.decision;
        if d == Decision::Allow {
            return Ok(());
        }
        let terms = deposit.approval_terms();
        Err((self.held(
            Rejection::decision(d),
            &terms,
            "channel",
            resource(resource_url),
        ))
        .await)
    }
}
