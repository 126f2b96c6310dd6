//! POST /verify and /settle for x402's `batch-settlement` scheme on Solana, client mode (the
//! payer's key signs every voucher), plain for routes a resource server configures as
//! ungated and gated under `trust-gate-batch-settlement` (see `trust_gate_x402::batch`).
//! The facilitator keeps each session's state for its resource servers (the specification's
//! server-owned watermark, Phase 3), so that every server replica sees one.
//!
//! - **deposit** (a session's first request): the client's open (the gate's
//!   `gate_channel_open` before it, for the gated scheme) is checked
//!   ([`crate::channel_open`]) with the request's voucher, the session starts unconfirmed,
//!   the open is co-signed and sent; vouchers are taken once the channel is read open with
//!   its deposit ([`crate::sessions`]).
//! - **voucher** (every further request): checked off chain, no RPC call
//!   (`trust_gate_client::vouchers::check`: the signature, the channel, exactly the price
//!   more than the last one accepted, at most the deposit, and for a gated channel the
//!   policy's per-payment cap and the payer's kill switch as the poller last read it); the
//!   session keeps it as its latest. A voucher sent again is refused like any other that does
//!   not add the price (one authorization serves one request, Phase 3 step 6), with the
//!   session's `channelState` and `voucherState` for the server's corrective 402 (section
//!   4.6); so is every voucher once the payer asked to close the channel (section 4.5).
//! - **refund** (the client ends the session, with the server's close authorization,
//!   [`authority`]): the channel is sealed at the latest voucher and distributed, closed
//!   through the gate when gated ([`close`]).
//! - **claim**, **settle** and **seal** (the server's own, from a trusted service only): the
//!   listed channels' latest vouchers applied on chain now; what they applied paid out now
//!   (the channel stays open); a channel its payer moved to `Closing` collected at the
//!   server's voucher within its grace period.
//!
//! In the background ([`redeemer`]) the latest vouchers are applied in batches, and a session
//! is closed once its payer asked to close it, was paused, or left it idle.
//!
//! Server mode (`voucherSigner: "server"`, `authorization` payloads) answers
//! `invalid_batch_settlement_svm_server_mode_unsupported`.

pub mod authority;
mod claim;
pub mod close;
mod deposit;
mod offer;
pub mod redeemer;
mod request;

use close::Cooperative;
pub(crate) use deposit::opened;
use deposit::Deposit;
use offer::{
    channel_id, config_keys, offer, open_refusal, own_voucher, refusal, same_channel, voucher,
};
pub use offer::{ConfigKeys, Offer};
pub use request::{request, Accepted, BatchRequest, Requirements};

use super::{Call, Scheme, Verified};
use crate::advances::ledger::ChannelKind;
use crate::answer::SettleReply;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::sessions::{Change, Session};
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use std::sync::Arc;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::vouchers::{self, Voucher};
use trust_gate_x402::batch::{self, BatchPayload, ChannelState};

/// The scheme's channel state of a session.
pub fn channel_state(s: &Session) -> ChannelState {
    ChannelState {
        channel_id: s.channel_id.clone(),
        balance: s.deposit.to_string(),
        total_claimed: s.redeemed.to_string(),
        withdraw_requested_at: s.withdraw_requested_at,
        charged_cumulative_amount: s.accepted.to_string(),
    }
}

/// An answer's `extra` of a session's state.
fn state_extra(s: &Session) -> Value {
    json!({"channelState": channel_state(s)})
}

fn voucher_extra(s: &Session) -> Value {
    json!({
        "commitmentId": format!("{}:{}", s.channel_id, s.accepted),
        "chargedAmount": s.latest_price.to_string(),
        "channelState": channel_state(s),
    })
}

/// Refuses a closed session.
fn not_closed(s: &Session) -> Result<(), Rejection> {
    match s.closed_by {
        Some(_) => Err(Rejection::new(
            Reason::BatchCloseState,
            format!("channel {} is closed", s.channel),
        )),
        None => Ok(()),
    }
}

impl Batch {
    async fn offer(f: &Facilitator, r: &BatchRequest) -> Result<Offer, Rejection> {
        let network = Batch::network_id(f).await?;
        offer(r, &f.facilitator(), &network)
    }

    /// The network's CAIP-2 id.
    async fn network_id(f: &Facilitator) -> Result<String, Rejection> {
        f.caip2()
            .await
            .map_err(|e| Rejection::new(Reason::NetworkUnavailable, e.message))
    }

    /// The session of `channel`, open.
    async fn session(f: &Facilitator, channel: &Pubkey) -> Result<Session, Rejection> {
        let s = f.sessions.get(channel).await?.ok_or_else(|| {
            Rejection::new(
                Reason::BatchUnknownChannel,
                format!("this facilitator holds no session of channel {channel}: its first request is a deposit"),
            )
        })?;
        not_closed(&s)?;
        Ok(s)
    }

    /// The session of `channel`, open, whose channel `config` names under the offer.
    async fn listed_session(
        f: &Facilitator,
        channel: &Pubkey,
        config: &batch::ChannelConfig,
        o: &Offer,
    ) -> Result<Session, Rejection> {
        let s = Batch::session(f, channel).await?;
        same_channel(config, &s, o)?;
        Ok(s)
    }

    fn change_rejection<E: Into<Rejection>>(channel: &Pubkey, e: Change<E>) -> Rejection {
        match e {
            Change::Refused(r) => r.into(),
            Change::Missing => Rejection::new(
                Reason::BatchUnknownChannel,
                format!("this facilitator holds no session of channel {channel}"),
            ),
            Change::Unavailable(e) => e.into(),
        }
    }

    /// The session after `v` pays the offer's price (pure: no RPC). A voucher already
    /// accepted is refused like any other that does not add exactly the price
    /// (specification Phase 3, step 6: one authorization serves one request), with the
    /// session's state for the resource server's corrective 402.
    fn accept(f: &Facilitator, s: &Session, o: &Offer, v: &Voucher) -> Result<Session, Rejection> {
        not_closed(s)?;
        if s.withdraw_requested_at != 0 {
            return Err(Rejection::new(
                Reason::BatchChannelClosing,
                format!(
                    "the payer asked to close channel {} at {} (request_close): the program takes no more vouchers",
                    s.channel, s.withdraw_requested_at
                ),
            ));
        }
        if s.closing_at != 0 {
            return Err(Rejection::new(
                Reason::BatchChannelClosing,
                format!("channel {} is being closed", s.channel),
            ));
        }
        if s.unconfirmed.is_some() {
            return Err(Rejection::new(
                Reason::BatchDepositUnconfirmed,
                format!(
                    "the open of channel {} was sent but is not yet on chain with its deposit: vouchers are taken once it is (retry shortly)",
                    s.channel
                ),
            ));
        }
        if let Some(g) = s.gate.filter(|g| f.sessions.is_retired(g)) {
            return Err(Rejection::new(
                Reason::BatchPolicyRetired,
                format!(
                    "payer agent {}'s policy {} is retired: no payment may use it",
                    g.payer_asset, g.policy_id
                ),
            ));
        }
        let paused = s.gate.is_some_and(|g| f.sessions.is_paused(&g.payer_asset));
        let terms = vouchers::Terms {
            channel: s.channel,
            voucher_key: s.voucher_key,
            cap: s.deposit,
            per_payment_cap: s.gate.map_or(0, |g| g.per_payment_cap),
        };
        let now = now_unix();
        let accepted = vouchers::check_with(&terms, s.accepted, v, o.price, now, paused, |v, k| {
            f.sessions.signed(v, k)
        })
        .map_err(|r| refusal(r, s))?;
        Ok(Session {
            accepted,
            latest_signature: Some(v.signature.to_string()),
            latest_price: o.price,
            unredeemed_since: if s.unredeemed_since == 0 {
                now
            } else {
                s.unredeemed_since
            },
            active_at: now,
            ..s.clone()
        })
    }
}

/// The `batch-settlement` family's handler: the stock scheme and its gated variant.
pub struct Batch;

#[async_trait::async_trait]
impl Scheme for Batch {
    fn names(&self) -> &'static [&'static str] {
        &[batch::SCHEME_BATCH, batch::SCHEME_GATED_BATCH]
    }

    async fn extra(&self, f: &Facilitator, _name: &str) -> Value {
        // The gated variant's open may load from the lookup tables the trust-gate kind
        // lists. A session idle this long is closed (listed only when set).
        let mut extra = json!({"feePayer": f.facilitator().to_string()});
        if let Some(idle) = f.settings.sessions.max_idle {
            extra["maxIdleSecs"] = json!(idle.as_secs());
        }
        extra
    }

    /// `/verify`: the deposit's checks without sending, or the voucher's without keeping it.
    async fn verify(&self, f: &Facilitator, call: Call<'_>) -> Result<Verified, Rejection> {
        let r = request(call.body)?;
        let o = Batch::offer(f, &r).await?;
        let s = match &r.payload {
            BatchPayload::Deposit {
                channel_config,
                voucher: v,
                deposit,
            } => match Batch::checked_deposit(f, &r, &o, channel_config, v, deposit).await? {
                Deposit::Again(s, _) => *s,
                Deposit::New(new) => Session {
                    accepted: new.2.cumulative,
                    ..new.1
                },
            },
            BatchPayload::Voucher {
                channel_config,
                voucher: v,
            } => {
                let v = own_voucher(v)?;
                let s = Batch::listed_session(f, &v.channel, channel_config, &o).await?;
                Batch::accept(f, &s, &o, &v)?
            }
            other => {
                return Err(Rejection::new(
                    Reason::BatchPayloadType,
                    format!(
                        "/verify takes a deposit or a voucher, not a {}",
                        other.type_name()
                    ),
                ))
            }
        };
        Ok(Verified::Valid {
            payer: s.payer,
            extra: Some(state_extra(&s)),
        })
    }

    /// `/settle` (see the module docs). A server's payload (`claim`, `settle`, `seal`) is
    /// taken only from a trusted service that signed the request (`X-Service-Authorization`).
    async fn settle(&self, f: &Facilitator, call: Call<'_>) -> Result<SettleReply, Rejection> {
        let r = request(call.body)?;
        let Some(keypair) = f.key.keypair() else {
            return Err(Rejection::not_signing("settle"));
        };
        if r.payload.is_servers() {
            if let Err(why) = Batch::service_caller(f, call.headers, "/settle", call.body) {
                return Err(Rejection::new(
                    Reason::BatchServiceUnauthenticated,
                    format!(
                        "a {} is the resource server's own request: {why}",
                        r.payload.type_name()
                    ),
                )
                .hint("sign the request with a service key the facilitator trusts (X-Service-Authorization)"));
            }
        }
        let o = Batch::offer(f, &r).await?;
        match &r.payload {
            BatchPayload::Deposit {
                channel_config,
                voucher: v,
                deposit,
            } => {
                let (checked, session, v) =
                    match Batch::checked_deposit(f, &r, &o, channel_config, v, deposit).await? {
                        Deposit::Again(s, signature) => {
                            return Batch::deposit_outcome(f, *s, signature).await
                        }
                        Deposit::New(new) => *new,
                    };
                f.limit_deposits(&session.payer)?;
                let reserved = f
                    .advance(
                        &session.channel,
                        &session.payer,
                        ChannelKind::Session,
                        session.token_program(),
                        session.gate.is_some(),
                    )
                    .await?;
                if !reserved {
                    return Err(Rejection::new(
                        Reason::DuplicateSettlement,
                        format!("channel {} is being opened already", session.channel),
                    ));
                }
                let used = checked.approval.zip(session.gate.map(|g| g.payer_asset));
                let opened =
                    Batch::open_session(f, checked.tx, session, v, o.price, keypair).await?;
                if let Some((a, payer)) = used.filter(|_| !opened.pending) {
                    f.forget_approval(&a.address, &payer).await;
                }
                Ok(opened)
            }
            BatchPayload::Voucher {
                channel_config,
                voucher: v,
            } => {
                let v = own_voucher(v)?;
                let s = f
                    .sessions
                    .update(&v.channel, |s| {
                        same_channel(channel_config, s, &o)?;
                        Batch::accept(f, s, &o, &v)
                    })
                    .await
                    .map_err(|e| Batch::change_rejection(&v.channel, e))?;
                Ok(SettleReply::channel(
                    String::new(),
                    String::new(),
                    s.payer,
                    Some(voucher_extra(&s)),
                    false,
                ))
            }
            BatchPayload::Refund {
                channel_config,
                voucher: v,
                close_authorization,
                transaction,
                amount,
            } => {
                if amount.is_some() {
                    return Err(Rejection::new(
                        Reason::BatchCloseAmountUnsupported,
                        "a refund names no amount: the whole unused escrow goes back to the payer",
                    ));
                }
                if transaction.is_some() {
                    return Err(Rejection::new(
                        Reason::BatchRefundTransaction,
                        "this facilitator does not sponsor a payer's request_close: the payer sends its own (it pays the fee)",
                    ));
                }
                let auth = close_authorization.as_ref();
                let kind = Cooperative::Refund;
                Batch::cooperative_close(f, &r, &o, kind, channel_config, v.as_ref(), auth, keypair)
                    .await
            }
            BatchPayload::Seal {
                channel_id: id,
                channel_config,
                voucher: v,
                close_authorization: auth,
            } => {
                let kind = Cooperative::Seal { id };
                Batch::cooperative_close(
                    f,
                    &r,
                    &o,
                    kind,
                    channel_config,
                    Some(v),
                    Some(auth),
                    keypair,
                )
                .await
            }
            BatchPayload::Claim { claims } => Batch::claim_sessions(f, claims, &o, keypair).await,
            BatchPayload::Settle { channels } => {
                Batch::settle_sessions(f, channels, &o, keypair).await
            }
        }
    }

    /// The sessions' rounds: kill switches, channel reads, redemption and closes.
    fn background(&self, f: &Arc<Facilitator>) -> Option<tokio::task::JoinHandle<()>> {
        Some(redeemer::spawn(f.clone()))
    }
}
