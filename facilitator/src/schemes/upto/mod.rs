//! POST /verify and /settle for x402's stock `upto` scheme on Solana (as `@x402/svm` 2.27's
//! server and client speak it), for routes a resource server configures as ungated: no
//! policy runs on these payments. One channel a request:
//!
//! - **deposit** (before the server's handler; `/verify` runs the same checks without
//!   sending): the client's open is checked ([`crate::channel_open`]), the channel must not
//!   exist yet, the facilitator co-signs it as the fee payer and sends it, then reads the
//!   channel back;
//! - **claim** (after the handler): the actual amount, at most the ceiling, with the server's
//!   voucher over it (checked here, strictly; a claim of 0 too, so that no one but the server
//!   can cancel); the facilitator seals the channel at it and distributes it in one
//!   transaction it alone signs.
//!
//! The gated variant, `trust-gate-upto`, is the same exchange under the payer's policy: its
//! offer carries the `gate` extension (authenticated as a payment's challenge, over the offer
//! the client accepted), the open has the gate's `gate_channel_open` right before the program's
//! `open` (the facilitator's lookup tables allowed), and the claim closes the channel through
//! the gate (`gate_channel_close`: what was not charged back to the policy, the payee's
//! feedback) in one v0 transaction with the facilitator's lookup tables.
//!
//! Not yet: delegated voucher keys, deduplication of concurrent identical requests across
//! replicas (the chain refuses the second open and the second seal), and the crank's close of
//! a gated deposit whose claim never came.

mod terms;

pub use terms::UptoRequest;
use terms::{terms, Terms};

use super::{Call, Scheme, Verified};
use crate::adapter::ChannelGate;
use crate::advances::ledger::ChannelKind;
use crate::answer::SettleReply;
use crate::channel_open::{self, Expected, Gated};
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::service::{co_signature, Outcome};
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::convert::identity;
use std::str::FromStr;
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Distribute, Status};
use trust_gate_client::settle::ComputeBudget;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::vouchers::Voucher;
use trust_gate_x402::upto::{self, UptoSettleType};

pub use trust_gate_x402::upto::{EXPIRY_SLACK_SECS, MAX_CHANNEL_LIFETIME_SECS};

/// What a deposit's checks found on chain.
enum Open {
    /// Not on chain: send it.
    New(Box<channel_open::Checked>),
    /// This very transaction landed (a retry of the same deposit): its signature.
    Landed(Signature),
    /// The channel is open as this deposit opens it, by a transaction whose status is not
    /// known yet: this one's signature (its outcome is asked again later).
    Unknown(Signature),
}

impl Upto {
    /// The request's terms, checked against this facilitator, its network and clock.
    async fn terms(f: &Facilitator, r: &UptoRequest) -> Result<Terms, Rejection> {
        let network = f
            .caip2()
            .await
            .map_err(|e| Rejection::new(Reason::NetworkUnavailable, e.message))?;
        terms(r, &f.facilitator(), &network, now_unix())
    }

    /// The terms and the checked open of a deposit, or the signature of this very open when
    /// it landed already (a retry: neither the policy nor the channel's absence is asked
    /// again, for the deposit itself changed both).
    async fn checked_open(f: &Facilitator, r: &UptoRequest) -> Result<(Terms, Open), Rejection> {
        let fac = f.facilitator();
        let t = Upto::terms(f, r).await?;
        let required = upto::amount("amount", &r.requirements.amount)?;
        if required != t.ceiling {
            return Err(Rejection::new(
                Reason::UptoAmountMismatch,
                "payload.maxAmount is not the requirements' amount",
            ));
        }
        let (token_program, _) = f
            .mint(&t.mint)
            .await
            .map_err(|e| Rejection::new(Reason::UptoInvalidRequirements, e.message))?;
        if let Some(hint) = &t.extra.token_program {
            if *hint != token_program.id().to_string() {
                return Err(Rejection::new(
                    Reason::UptoInvalidRequirements,
                    "extra.tokenProgram is not the mint's token program",
                ));
            }
        }
        let gate = Upto::channel_gate(f, r)?;
        if gate.is_none() {
            f.check_plain_offer(&r.accepted, &t.mint, Reason::UptoInvalidRequirements)?;
        }
        let gated = gate.as_ref().map(Gated::from);
        let expected = Expected {
            mint: t.mint,
            token_program,
            pay_to: t.pay_to,
            receiver_authorizer: t.receiver_authorizer,
            withdraw_delay: t.extra.withdraw_delay,
            ceiling: t.ceiling,
            from: t.from,
            salt: t.salt,
            open_slot: r.payload.open_slot.0,
            channel: t.channel,
            memo: t.extra.memo.as_deref(),
            binding_memo: None,
            gated,
        };
        // The server's offer may name a slot a little ahead of this RPC's view.
        let offer_slot = t.extra.recent_slot.map(|s| s.0);
        let open = (
            r.payload.open_transaction.as_str(),
            Reason::UptoOpenTransaction,
        );
        let checked = (f.verify_open(open, offer_slot, expected, identity)).await?;
        if let Some(signature) = f
            .landed_open(&checked.tx, Reason::UptoChannelBroadcast)
            .await?
        {
            return Ok((t, Open::Landed(signature)));
        }
        if let Some(g) = gated {
            let url = r.resource.as_ref().map(|res| res.url.as_str());
            f.decide_deposit(g, t.ceiling, t.mint, url).await?;
        }
        if chain::account(&f.chain.rpc, &t.channel)
            .await
            .map_err(Rejection::rpc)?
            .is_some()
        {
            // Opened as this deposit opens it while the status of this very open is not
            // visible yet (a retry right after the first attempt): asked again later, never
            // refused for it.
            let as_ours = f.channel(&t.channel, Reason::UptoChannelState).await.ok();
            if let (Some(keypair), true) =
                (f.key.keypair(), as_ours.is_some_and(|c| t.opened(&c, &fac)))
            {
                return Ok((t, Open::Unknown(co_signature(&checked.tx, keypair))));
            }
            return Err(Rejection::new(
                Reason::UptoChannelAlreadyOpen,
                format!("channel {} exists already", t.channel),
            ));
        }
        Ok((t, Open::New(Box::new(checked))))
    }

    /// The channel a landed deposit opened, still as it opened it (unclaimed): else the
    /// payment is over, and a retry of its deposit is refused.
    async fn unclaimed(f: &Facilitator, t: &Terms, signature: &Signature) -> Result<(), Rejection> {
        let c = f.channel(&t.channel, Reason::UptoChannelState).await.ok();
        match c {
            Some(c) if t.opened(&c, &f.facilitator()) => Ok(()),
            _ => Err(Rejection::new(
                Reason::UptoChannelAlreadyOpen,
                format!(
                    "this deposit landed in {signature} and channel {} was claimed since: the payment is over",
                    t.channel
                ),
            )),
        }
    }

    /// A deposit that landed (sent now, or by an earlier attempt: `replayed`): the channel
    /// read back, the rent it holds kept, the approval it used forgotten.
    async fn deposit_landed(
        f: &Facilitator,
        r: &UptoRequest,
        t: &Terms,
        signature: Signature,
        approval: Option<Pubkey>,
        replayed: bool,
    ) -> Result<SettleReply, Rejection> {
        f.advanced(&t.channel).await;
        let c = f.channel(&t.channel, Reason::UptoChannelState).await?;
        if !t.opened(&c, &f.facilitator()) {
            return Err(Rejection::new(
                Reason::UptoChannelState,
                format!("channel {} is not the one the payment opens", t.channel),
            ));
        }
        if let (Some(a), Some(g)) = (approval, Upto::channel_gate(f, r)?) {
            f.forget_approval(&a, &g.payer_asset).await;
        }
        Ok(t.deposited(signature, false, replayed))
    }

    async fn deposit(
        f: &Facilitator,
        r: &UptoRequest,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<SettleReply, Rejection> {
        let (t, open) = Upto::checked_open(f, r).await?;
        let checked = match open {
            Open::Landed(signature) => {
                Upto::unclaimed(f, &t, &signature).await?;
                return Upto::deposit_landed(f, r, &t, signature, None, true).await;
            }
            Open::Unknown(signature) => return Ok(t.deposited(signature, true, true)),
            Open::New(checked) => *checked,
        };
        f.limit_deposits(&t.from)?;
        let reserved = f
            .advance(
                &t.channel,
                &t.from,
                ChannelKind::Upto,
                checked.open.token_program,
                r.gated,
            )
            .await?;
        let used = checked.approval.map(|a| a.address);
        if !reserved {
            // Being opened already: by this very transaction (a retry while the first
            // attempt waits), whose outcome is awaited here; another open of the channel
            // never lands under this signature and answers pending until it lapses.
            let signature = co_signature(&checked.tx, keypair);
            return match f.confirm(&signature).await {
                Outcome::Landed(Ok(())) => {
                    Upto::deposit_landed(f, r, &t, signature, used, true).await
                }
                Outcome::Landed(Err(err)) => Err(Rejection::new(
                    Reason::UptoChannelBroadcast,
                    format!("{signature} failed on chain: {err}"),
                )),
                Outcome::Pending => Ok(t.deposited(signature, true, true)),
            };
        }
        let sent = f
            .send_open(
                checked.tx,
                keypair,
                Reason::UptoChannelBroadcast,
                Reason::UptoSettlementSimulation,
            )
            .await;
        let (signature, pending) = match sent {
            Ok(sent) => sent,
            Err(refused) => {
                f.released_advance(&t.channel).await;
                return Err(refused);
            }
        };
        if !pending {
            return Upto::deposit_landed(f, r, &t, signature, used, false).await;
        }
        Ok(t.deposited(signature, true, false))
    }

    async fn claim(
        f: &Facilitator,
        r: &UptoRequest,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<SettleReply, Rejection> {
        let fac = f.facilitator();
        let t = Upto::terms(f, r).await?;
        let actual = upto::amount("amount", &r.requirements.amount)?;
        if actual > t.ceiling {
            return Err(Rejection::new(
                Reason::UptoSettlementExceedsAmount,
                format!("the charge {actual} is above the ceiling {}", t.ceiling),
            ));
        }
        let (token_program, _) = f
            .mint(&t.mint)
            .await
            .map_err(|e| Rejection::new(Reason::UptoInvalidRequirements, e.message))?;
        let c = f.channel(&t.channel, Reason::UptoChannelState).await?;
        let now = match c.status {
            Status::Closing => chain::unix_time(&f.chain.rpc)
                .await
                .map_err(Rejection::rpc)?,
            _ => 0,
        };
        if !t.claimable(&c, &fac, now) {
            return Err(Rejection::new(
                Reason::UptoChannelState,
                format!(
                    "channel {} is not this payment's, or can no longer be sealed ({:?}, deposit {})",
                    t.channel, c.status, c.deposit
                ),
            ));
        }
        let mut ixs = ComputeBudget::limit(trust_gate_client::units::channel_close(r.gated));
        // Every claim, 0 included, carries the server's voucher of its amount: without it
        // anyone holding the payload could seal the channel at nothing before the server
        // charges. A voucher of 0 is checked here only (the program wants none to seal).
        let sig = r.payload.voucher_signature.as_deref().ok_or_else(|| {
            Rejection::new(
                Reason::UptoMissingVoucher,
                "a claim carries the server's voucherSignature of its amount",
            )
        })?;
        let signature = Signature::from_str(sig).map_err(|_| {
            Rejection::new(
                Reason::UptoVoucherSignature,
                "voucherSignature is not a base58 signature",
            )
        })?;
        let voucher = Voucher {
            channel: t.channel,
            cumulative: actual,
            expires_at: r.payload.expires_at,
            signature,
        };
        if !voucher.signed_by(&t.receiver_authorizer) {
            return Err(Rejection::new(
                Reason::UptoVoucherSignature,
                "voucherSignature is not extra.receiverAuthorizer's signature of the charge",
            ));
        }
        if actual > 0 {
            ixs.push(voucher.instruction(&t.receiver_authorizer));
        }
        ixs.push(channels::settle_and_seal(&fac, &t.channel, actual > 0));
        if r.gated {
            ixs.push(f.gate_close(&t.channel, upto::SCHEME_GATED_UPTO).await?);
        }
        ixs.push(
            Distribute {
                channel: t.channel,
                payer: t.from,
                rent_payer: fac,
                payee: fac,
                mint: t.mint,
                token_program,
                splits: t.splits(),
            }
            .instruction(),
        );
        // A gated claim fits a packet only with the facilitator's lookup tables.
        let (signature, pending) = f
            .send_own(&ixs, r.gated, keypair, Reason::UptoSettlementSimulation)
            .await?;
        f.closed_advance(&t.channel).await;
        let amount = actual.to_string();
        Ok(SettleReply::channel(
            signature.to_string(),
            amount,
            c.payer,
            None,
            pending,
        ))
    }

    /// The gated variant's parties and policy, from the accepted offer's `gate` extension
    /// (`None` for the stock scheme).
    fn channel_gate(f: &Facilitator, r: &UptoRequest) -> Result<Option<ChannelGate>, Rejection> {
        if !r.gated {
            return Ok(None);
        }
        f.channel_gate(
            &r.accepted,
            r.resource.as_ref().map(|res| res.url.as_str()),
            &r.requirements.network,
        )
        .map(Some)
    }
}

/// The `upto` family's handler: `upto` and `trust-gate-upto`.
pub struct Upto;

#[async_trait::async_trait]
impl Scheme for Upto {
    fn names(&self) -> &'static [&'static str] {
        &[upto::SCHEME_UPTO, upto::SCHEME_GATED_UPTO]
    }

    async fn extra(&self, f: &Facilitator, _name: &str) -> Value {
        // A server copies every key of this into its offers: the sponsor only.
        json!({"feePayer": f.facilitator().to_string()})
    }

    async fn verify(&self, f: &Facilitator, call: Call<'_>) -> Result<Verified, Rejection> {
        // The deposit's checks, without sending.
        let r = UptoRequest::from_bytes(call.body)?;
        if r.payload.voucher_signature.is_some() {
            return Err(Rejection::new(
                Reason::UptoUnexpectedVoucher,
                "a client's payload carries no voucherSignature",
            ));
        }
        if r.payload.settle_type.is_some() {
            return Err(Rejection::new(
                Reason::UptoPayloadType,
                "type is the server's, for /settle",
            ));
        }
        let (t, open) = Upto::checked_open(f, &r).await?;
        match open {
            // A retry of a deposit that landed is valid while its channel is still the
            // deposit's, unclaimed: the same request's /settle answers its outcome.
            Open::Landed(signature) => Upto::unclaimed(f, &t, &signature).await?,
            Open::Unknown(signature) => {
                return Err(Rejection::new(
                    Reason::UptoChannelAlreadyOpen,
                    format!("channel {} is open; whether by this deposit ({signature}) is not known yet: retry shortly", t.channel),
                ))
            }
            Open::New(_) => {}
        }
        Ok(Verified::Valid {
            payer: t.from,
            extra: None,
        })
    }

    async fn settle(&self, f: &Facilitator, call: Call<'_>) -> Result<SettleReply, Rejection> {
        // A deposit or a claim (see the module docs).
        let r = UptoRequest::from_bytes(call.body)?;
        let Some(keypair) = f.key.keypair() else {
            return Err(Rejection::not_signing("settle"));
        };
        match r.payload.settle_type {
            Some(UptoSettleType::Claim) => Upto::claim(f, &r, keypair).await,
            Some(UptoSettleType::Deposit) | None => {
                if r.payload.voucher_signature.is_some() {
                    return Err(Rejection::new(
                        Reason::UptoUnexpectedVoucher,
                        "a deposit carries no voucherSignature",
                    ));
                }
                Upto::deposit(f, &r, keypair).await
            }
        }
    }
}
