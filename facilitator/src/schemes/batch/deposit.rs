//! A session's first request: the deposit's checks, its open sent, the session started.

use super::{config_keys, open_refusal, voucher, voucher_extra, Batch, BatchRequest, Offer};
use crate::answer::SettleReply;
use crate::channel_open::{self, Expected, Gated};
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::service::{co_signature, Outcome};
use crate::sessions::{GatedTerms, Session};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::vouchers::Voucher;
use trust_gate_x402::batch::{self, BatchVoucher, ChannelConfig};

impl Batch {
    /// Every check of a deposit: the offer, the channel config, the gate's terms (gated),
    /// the open, the first voucher; the channel must not exist yet, unless this very deposit
    /// started its session (a retry: neither the policy nor the channel's absence is asked
    /// again, for the deposit itself changed both).
    pub(crate) async fn checked_deposit(
        f: &Facilitator,
        r: &BatchRequest,
        o: &Offer,
        c: &ChannelConfig,
        v: &BatchVoucher,
        deposit: &batch::DepositTx,
    ) -> Result<Deposit, Rejection> {
        let fac = f.facilitator();
        let k = config_keys(c, o, &fac)?;
        let v = voucher(v, &k.channel)?;
        let amount = batch::amount("deposit.amount", &deposit.amount)?;
        if amount == 0 {
            return Err(Rejection::new(
                Reason::BatchSetupTransaction,
                "deposit.amount is above 0",
            ));
        }
        let (token_program, _) = f
            .mint(&o.mint)
            .await
            .map_err(|e| Rejection::new(Reason::BatchInvalidRequirements, e.message))?;
        if o.extra.token_program != token_program.id().to_string() {
            return Err(Rejection::new(
                Reason::BatchTokenProgram,
                format!(
                    "extra.tokenProgram is not the mint's token program ({})",
                    token_program.id()
                ),
            ));
        }
        if !r.gated {
            f.check_plain_offer(
                &r.accepted.requirements()?,
                &o.mint,
                Reason::BatchInvalidRequirements,
            )?;
        }
        let gate = if r.gated {
            let g = f.channel_gate(
                &r.accepted.requirements()?,
                r.resource.as_ref().map(|res| res.url.as_str()),
                &r.requirements.network,
            )?;
            let policy = chain::policy(
                &f.chain.rpc,
                &f.chain.builder.ids,
                &g.payer_asset,
                g.policy_id,
            )
            .await
            .map_err(Rejection::rpc)?
            .ok_or_else(|| {
                Rejection::new(
                    Reason::PolicyNotFound,
                    format!(
                        "payer agent {} has no policy {}",
                        g.payer_asset, g.policy_id
                    ),
                )
            })?;
            Some(GatedTerms {
                payer_asset: g.payer_asset,
                payee_asset: g.payee_asset,
                policy_id: g.policy_id,
                per_payment_cap: policy.params.per_tx_cap,
            })
        } else {
            None
        };
        let binding = batch::binding_memo(&o.extra.receiver_authorizer);
        let expected = Expected {
            mint: o.mint,
            token_program,
            pay_to: o.pay_to,
            receiver_authorizer: k.voucher_key,
            withdraw_delay: o.extra.withdraw_delay,
            ceiling: amount,
            from: k.payer,
            salt: k.salt,
            open_slot: k.open_slot,
            channel: k.channel,
            memo: o.extra.memo.as_deref(),
            binding_memo: Some(&binding),
            gated: gate.as_ref().map(Gated::from),
        };
        let open = (deposit.transaction.as_str(), Reason::BatchSetupTransaction);
        let offer_slot = o.extra.recent_slot;
        let checked = (f.verify_open(open, offer_slot, expected, open_refusal)).await?;
        if let Some(again) = Batch::deposit_again(f, &checked.tx, &k.channel, &v).await? {
            return Ok(again);
        }
        if let Some(g) = &gate {
            let url = r.resource.as_ref().map(|res| res.url.as_str());
            f.decide_deposit(g.into(), amount, o.mint, url).await?;
        }
        let now = now_unix();
        let session = Session {
            channel: k.channel,
            payer: k.payer,
            voucher_key: k.voucher_key,
            pay_to: o.pay_to,
            mint: o.mint,
            token_2022: token_program == TokenProgram::Token2022,
            channel_id: k.channel.to_string(),
            config: c.clone(),
            deposit: amount,
            withdraw_delay: o.extra.withdraw_delay,
            gate,
            opened_by: String::new(),
            opened_at: now,
            accepted: 0,
            latest_signature: None,
            latest_price: 0,
            redeemed: 0,
            unredeemed_since: 0,
            active_at: now,
            closing_at: 0,
            withdraw_requested_at: 0,
            unconfirmed: None,
            closed_by: None,
        };
        // The first voucher pays the first request.
        Batch::accept(f, &session, o, &v)?;
        if chain::account(&f.chain.rpc, &k.channel)
            .await
            .map_err(Rejection::rpc)?
            .is_some()
        {
            return Err(Rejection::new(
                Reason::BatchChannelState,
                format!("channel {} exists already", k.channel),
            ));
        }
        Ok(Deposit::New(Box::new((checked, session, v))))
    }

    /// The session this very deposit started (its open co-signed is the same transaction,
    /// its voucher the session's latest), when one did: a retry of the deposit.
    pub(crate) async fn deposit_again(
        f: &Facilitator,
        tx: &solana_sdk::transaction::VersionedTransaction,
        channel: &Pubkey,
        v: &Voucher,
    ) -> Result<Option<Deposit>, Rejection> {
        let Some(keypair) = f.key.keypair() else {
            return Ok(None);
        };
        let Some(s) = f.sessions.get(channel).await? else {
            return Ok(None);
        };
        let signature = co_signature(tx, keypair);
        let same = s.closed_by.is_none()
            && s.accepted == v.cumulative
            && s.latest_signature.as_deref() == Some(v.signature.to_string().as_str())
            && (s.opened_by.is_empty() || s.opened_by == signature.to_string());
        Ok(same.then_some(Deposit::Again(Box::new(s), signature)))
    }

    /// A retried deposit's answer: its open's outcome (awaited while the session is not
    /// confirmed yet), never a second open nor a second acceptance of its voucher.
    pub(crate) async fn deposit_outcome(
        f: &Facilitator,
        s: Session,
        signature: Signature,
    ) -> Result<SettleReply, Rejection> {
        let pending = s.unconfirmed.is_some();
        let settled = if pending {
            match f.confirm(&signature).await {
                Outcome::Landed(Ok(())) => {
                    Batch::opened_session(f, &s.channel, signature, false).await?
                }
                Outcome::Landed(Err(err)) => {
                    return Err(Rejection::new(
                        Reason::TransactionFailed,
                        format!("the deposit's open {signature} failed on chain: {err}"),
                    ))
                }
                Outcome::Pending => settled(&s, signature, true),
            }
        } else {
            settled(&s, signature, false)
        };
        Ok(settled.replayed())
    }

    /// Starts the session, unconfirmed, with its first voucher, then co-signs and sends the
    /// open: the session is there before anything is sent, so that a second deposit of the
    /// same channel sends nothing, and a facilitator that stops mid-way finds it (the
    /// background round forgets it if the open never lands). Confirmed once the channel is
    /// read open with its deposit; forgotten when the open is refused.
    pub(crate) async fn open_session(
        f: &Facilitator,
        tx: solana_sdk::transaction::VersionedTransaction,
        session: Session,
        v: Voucher,
        price: u64,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<SettleReply, Rejection> {
        let now = now_unix();
        let s = Session {
            accepted: v.cumulative,
            latest_signature: Some(v.signature.to_string()),
            latest_price: price,
            unredeemed_since: now,
            active_at: now,
            unconfirmed: Some(tx.message.recent_blockhash().to_string()),
            ..session
        };
        let channel = s.channel;
        if !f.sessions.insert(&s).await? {
            return Err(Rejection::new(
                Reason::DuplicateSettlement,
                format!("channel {channel} has a session already"),
            ));
        }
        let sent = f
            .send_open(
                tx,
                keypair,
                Reason::TransactionFailed,
                Reason::BatchSettlementSimulation,
            )
            .await;
        let (signature, pending) = match sent {
            Ok(sent) => sent,
            Err(refused) => {
                // Refused by the simulation, or failed on chain: no channel, no session, no
                // rent advanced.
                if let Err(e) = f.sessions.remove(&channel).await {
                    tracing::warn!(%channel, "forgetting a refused open's session: {e}");
                }
                f.released_advance(&channel).await;
                return Err(refused);
            }
        };
        Batch::opened_session(f, &channel, signature, pending).await
    }

    /// The session after its open was sent (`pending`: outcome not known in time), or
    /// landed: confirmed once the channel is read open with its deposit.
    pub(crate) async fn opened_session(
        f: &Facilitator,
        channel: &Pubkey,
        signature: Signature,
        pending: bool,
    ) -> Result<SettleReply, Rejection> {
        let channel = *channel;
        if !pending {
            let s = Batch::session(f, &channel).await?;
            let c = f.channel(&channel, Reason::BatchChannelState).await?;
            if !opened(&c, &s, &f.facilitator()) {
                return Err(Rejection::new(
                    Reason::BatchChannelState,
                    format!("channel {channel} is not the one the deposit opens"),
                ));
            }
            f.advanced(&channel).await;
            // Read just now: the background round's next read of it comes a period later.
            f.sessions
                .work
                .read_at
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(channel, now_unix());
        }
        let s = f
            .sessions
            .update::<Rejection>(&channel, |cur| {
                Ok(Session {
                    opened_by: signature.to_string(),
                    unconfirmed: if pending {
                        cur.unconfirmed.clone()
                    } else {
                        None
                    },
                    ..cur.clone()
                })
            })
            .await
            .map_err(|e| Batch::change_rejection(&channel, e))?;
        Ok(settled(&s, signature, pending))
    }
}

/// A deposit's answer: its open's signature, the deposit, the first voucher's charge.
pub(crate) fn settled(s: &Session, signature: Signature, pending: bool) -> SettleReply {
    let extra = Some(voucher_extra(s));
    SettleReply::channel(
        signature.to_string(),
        s.deposit.to_string(),
        s.payer,
        extra,
        pending,
    )
}

/// What a deposit's checks found.
pub(crate) enum Deposit {
    /// A new session: the open to send, the session it starts, its first voucher.
    New(Box<(channel_open::Checked, Session, Voucher)>),
    /// This very deposit started a session already: the session kept and its open's
    /// signature.
    Again(Box<Session>, Signature),
}

/// Whether `c` is open as the deposit of `s` opened it.
pub(crate) fn opened(c: &Channel, s: &Session, fac: &Pubkey) -> bool {
    let splits = [channels::Split {
        recipient: s.pay_to,
        bps: channels::ALL_BPS,
    }];
    c.status == Status::Open
        && (c.payer, c.payee, c.rent_payer, c.mint) == (s.payer, *fac, *fac, s.mint)
        && c.authorized_signer == s.voucher_key
        && c.deposit == s.deposit
        && c.distribution_hash == channels::distribution_hash(&splits)
}
