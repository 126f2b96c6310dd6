//! A session's close (what applies its vouchers without closing is [`super::claim`]'s), in one
//! transaction the facilitator alone signs (v0 with its lookup tables when gated), whatever
//! state the channel is in ([`plan`]):
//!
//! - open, or closing (the payer's `request_close`) within its grace period: the latest
//!   voucher applied and the channel sealed by its payee (`settle_and_seal`), closed through
//!   the gate when gated (`gate_channel_close`: the unspent deposit back to the payer's
//!   policy, the payee's feedback), and distributed (the payee its share, the payer the rest,
//!   the escrow's rent back to the facilitator);
//! - closing past its grace period: the program's `seal` at what was settled (vouchers not
//!   applied by then are the payee's loss, logged), then the gate's close and the distribute;
//! - sealed or distributed by someone else: what is left of the same (the gate's close, the
//!   distribute), so that a gated record's rent and the escrow's always come back;
//! - deleted: the gate's record closed alone (`close_channel_record`).
//!
//! The client's `refund` and the server's `seal` end a session here once their
//! [`super::authority`] checks pass; the server's `claim` applies vouchers now.

use super::{
    channel_id, config_keys, not_closed, same_channel, state_extra, voucher, Batch, BatchRequest,
    Offer,
};
use crate::answer::SettleReply;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::sessions::Session;
use solana_sdk::account::Account;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use std::str::FromStr;
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Channel, Distribute, Split, Status};
use trust_gate_client::settle::ComputeBudget;
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::vouchers::Voucher;
use trust_gate_x402::batch::{self, BatchVoucher, ChannelConfig, CloseAuthorization};

/// A closed session.
#[derive(Clone, Debug)]
pub struct Closed {
    /// The close's transaction; none when nothing was left to send (the channel was
    /// distributed or deleted by someone else, and no gate record was open).
    pub signature: Option<Signature>,
    pub pending: bool,
    /// What the channel settled: paid to `payTo`; the rest of the deposit went back.
    pub settled: u64,
    pub session: Session,
}

/// How a session's channel closes, from its state on chain (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClosePlan {
    /// Open, or closing within its grace period: sealed by the payee, `voucher` applied
    /// first when it is above what the channel settled.
    Cooperative { voucher: Option<Voucher> },
    /// Closing past its grace period: anyone's `seal`, at what was settled.
    Forced,
    /// Sealed by someone else: the gate's close and the distribute are left.
    Sealed,
    /// Distributed by someone else: the gate's close is left.
    Distributed,
    /// Deleted by the program: the gate's record is left.
    Gone,
}

/// The close of a channel in state `c` (none: deleted) at chain time `now`, sealing at
/// `latest` (the voucher to apply) when it still can.
pub fn plan(latest: Option<Voucher>, c: Option<&Channel>, now: i64) -> ClosePlan {
    let Some(c) = c else {
        return ClosePlan::Gone;
    };
    let cooperative = || ClosePlan::Cooperative {
        voucher: latest.filter(|v| v.cumulative > c.settled && v.cumulative <= c.deposit),
    };
    match c.status {
        Status::Open => cooperative(),
        Status::Closing if now < grace_ends(c) => cooperative(),
        Status::Closing => ClosePlan::Forced,
        Status::Sealed => ClosePlan::Sealed,
        Status::Distributed => ClosePlan::Distributed,
    }
}

/// When the grace period of a channel its payer moved to `Closing` ends: from then on
/// anyone may seal it at what was settled.
fn grace_ends(c: &Channel) -> i64 {
    c.closure_started_at
        .saturating_add(i64::from(c.grace_period))
}

/// The channel an account read holds: `None` when there is no account (the program deleted
/// the channel) or it is not the program's.
pub(super) fn program_channel(account: Option<Account>) -> Option<Channel> {
    account
        .filter(|a| a.owner == channels::PROGRAM_ID)
        .and_then(|a| Channel::decode(&a.data))
}

impl Session {
    pub(crate) fn token_program(&self) -> TokenProgram {
        if self.token_2022 {
            TokenProgram::Token2022
        } else {
            TokenProgram::SplToken
        }
    }

    pub(super) fn distribute(&self, fac: &Pubkey) -> Distribute {
        Distribute {
            channel: self.channel,
            payer: self.payer,
            rent_payer: *fac,
            payee: *fac,
            mint: self.mint,
            token_program: self.token_program(),
            splits: vec![Split {
                recipient: self.pay_to,
                bps: channels::ALL_BPS,
            }],
        }
    }

    /// The latest accepted voucher, when there is one.
    pub(super) fn latest(&self) -> Option<Voucher> {
        let signature = Signature::from_str(self.latest_signature.as_deref()?).ok()?;
        Some(Voucher {
            channel: self.channel,
            cumulative: self.accepted,
            expires_at: 0,
            signature,
        })
    }
}

/// Which cooperative close a request asks for.
#[derive(Clone, Copy)]
pub(crate) enum Cooperative<'a> {
    /// The client's `refund` (specification section 3): its voucher is the amount accepted;
    /// the answer's amount is what went back to the payer.
    Refund,
    /// The server's `seal` of the channel `id` names, which its payer moved to `Closing`, at
    /// the server's latest voucher within the grace period (section 4.5); the answer's amount
    /// is what the close paid out.
    Seal { id: &'a str },
}

/// The answer to a close: its signature (none when nothing was sent), its amount, the
/// session's state.
fn close_reply(
    signature: Option<Signature>,
    amount: u64,
    s: &Session,
    pending: bool,
) -> SettleReply {
    SettleReply::channel(
        signature.map(|s| s.to_string()).unwrap_or_default(),
        amount.to_string(),
        s.payer,
        Some(state_extra(s)),
        pending,
    )
}

impl Batch {
    /// Closes `s` as its channel's state allows (see [`plan`]) at `voucher` (a server's
    /// `seal`), else at the session's latest; the session is marked closed.
    pub async fn close_session(
        f: &Facilitator,
        s: &Session,
        voucher: Option<Voucher>,
        keypair: &Keypair,
    ) -> Result<Closed, Rejection> {
        let fac = f.facilitator();
        let stalled_after = Batch::stalled_after(f);
        // First no more vouchers: the close seals at the last one accepted before this. One
        // close at a time (a second is refused while the first may still land).
        let s = &f
            .sessions
            .update::<Rejection>(&s.channel, |cur| {
                not_closed(cur)?;
                let now = now_unix();
                if cur.closing_at != 0 && now.saturating_sub(cur.closing_at) <= stalled_after {
                    return Err(Rejection::new(
                        Reason::DuplicateSettlement,
                        format!("a close of channel {} is under way", cur.channel),
                    ));
                }
                Ok(Session {
                    closing_at: now,
                    ..cur.clone()
                })
            })
            .await
            .map_err(|e| Batch::change_rejection(&s.channel, e))?;
        let account = chain::account(&f.chain.rpc, &s.channel)
            .await
            .map_err(Rejection::rpc)?;
        let c = program_channel(account);
        let chain_now = match c.as_ref().map(|c| c.status) {
            Some(Status::Closing) => chain::unix_time(&f.chain.rpc)
                .await
                .map_err(Rejection::rpc)?,
            _ => 0,
        };
        let plan = plan(voucher.or_else(|| s.latest()), c.as_ref(), chain_now);
        let on_chain = c.as_ref().map_or(s.redeemed, |c| c.settled);
        let mut ixs =
            ComputeBudget::limit(trust_gate_client::units::channel_close(s.gate.is_some()));
        let budget = ixs.len();
        let settled = match &plan {
            ClosePlan::Cooperative { voucher } => {
                if let Some(v) = voucher {
                    ixs.push(v.instruction(&s.voucher_key));
                }
                ixs.push(channels::settle_and_seal(
                    &fac,
                    &s.channel,
                    voucher.is_some(),
                ));
                voucher.as_ref().map_or(on_chain, |v| v.cumulative)
            }
            ClosePlan::Forced => {
                ixs.push(channels::seal(&s.channel));
                on_chain
            }
            ClosePlan::Sealed | ClosePlan::Distributed | ClosePlan::Gone => on_chain,
        };
        if s.gate.is_some() {
            if plan == ClosePlan::Gone {
                if Batch::channel_record_open(f, &s.channel).await? {
                    ixs.push(f.chain.builder.close_channel_record(&s.channel, &fac));
                }
            } else if let Some(close) = f
                .gate_close_if_recorded(&s.channel, batch::SCHEME_GATED_BATCH)
                .await?
            {
                ixs.push(close);
            }
        }
        if !matches!(plan, ClosePlan::Distributed | ClosePlan::Gone) {
            ixs.push(s.distribute(&fac).instruction());
        }
        let (signature, pending) = if ixs.len() > budget {
            let (sig, pending) = f
                .send_own(
                    &ixs,
                    s.gate.is_some(),
                    keypair,
                    Reason::BatchSettlementSimulation,
                )
                .await?;
            (Some(sig), pending)
        } else {
            (None, false)
        };
        let unpaid = s.accepted.saturating_sub(settled);
        if unpaid > 0 {
            tracing::warn!(
                channel = %s.channel,
                pay_to = %s.pay_to,
                accepted = s.accepted,
                settled,
                unpaid,
                ?plan,
                "session closed below the vouchers accepted: the payee was not paid {unpaid}"
            );
        }
        let withdraw_requested_at = c
            .as_ref()
            .filter(|c| c.status == Status::Closing)
            .map_or(s.withdraw_requested_at, |c| c.closure_started_at);
        let closed_by = match signature {
            Some(sig) => sig.to_string(),
            None => format!("nothing left to close: the channel was {plan:?} on chain"),
        };
        let session = f
            .sessions
            .update::<Rejection>(&s.channel, |cur| {
                Ok(Session {
                    redeemed: settled,
                    unredeemed_since: 0,
                    withdraw_requested_at,
                    closed_by: Some(closed_by.clone()),
                    ..cur.clone()
                })
            })
            .await
            .map_err(|e| Batch::change_rejection(&s.channel, e))?;
        if plan == ClosePlan::Gone {
            f.released_advance(&s.channel).await;
        } else {
            f.closed_advance(&s.channel).await;
        }
        tracing::info!(channel = %s.channel, signature = %closed_by, settled, ?plan, "session closed");
        Ok(Closed {
            signature,
            pending,
            settled,
            session,
        })
    }

    /// How long a close (or any transaction of the facilitator) may still land after it
    /// began: past it, a close that did not finish is tried again.
    pub(crate) fn stalled_after(f: &Facilitator) -> i64 {
        i64::try_from((f.settings.send_timeout * 2 + f.settings.confirm_timeout).as_secs())
            .unwrap_or(i64::MAX)
    }

    /// Whether the gate's record of `channel` is open.
    async fn channel_record_open(f: &Facilitator, channel: &Pubkey) -> Result<bool, Rejection> {
        let key = f.chain.builder.pda.channel_record(channel);
        Ok(chain::account(&f.chain.rpc, &key)
            .await
            .map_err(Rejection::rpc)?
            .is_some_and(|a| a.owner == f.chain.builder.ids.gate))
    }

    /// A cooperative close (see [`Cooperative`]), once it shows the session of its channel
    /// (what binds its receiver authorizer: without one this facilitator cannot check a
    /// close, the payer's own `request_close` remains), the channel config its own, the
    /// voucher signed by the channel's voucher key, and the receiver authorizer's consent to
    /// closing at that voucher ([`super::authority`]). A retry of a close made answers as
    /// the close did; the same close at once runs once.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn cooperative_close(
        f: &Facilitator,
        r: &BatchRequest,
        o: &Offer,
        kind: Cooperative<'_>,
        config: &ChannelConfig,
        v: Option<&BatchVoucher>,
        auth: Option<&CloseAuthorization>,
        keypair: &Keypair,
    ) -> Result<SettleReply, Rejection> {
        let what = match kind {
            Cooperative::Refund => "refund",
            Cooperative::Seal { .. } => "seal",
        };
        let k = config_keys(config, o, &f.facilitator())?;
        if let Cooperative::Seal { id } = kind {
            if channel_id(id)? != k.channel {
                return Err(Rejection::new(
                    Reason::BatchChannelIdMismatch,
                    format!(
                        "channelId {id} is not the channel of channelConfig ({})",
                        k.channel
                    ),
                ));
            }
        }
        let channel = k.channel;
        let s = f.sessions.get(&channel).await?.ok_or_else(|| {
            Rejection::new(
                Reason::BatchReceiverBindingUnavailable,
                format!(
                    "this facilitator holds no session of channel {channel}, so not its receiver authorizer: the payer ends it with request_close"
                ),
            )
        })?;
        same_channel(config, &s, o)?;
        let v = v.ok_or_else(|| {
            Rejection::new(
                Reason::BatchCloseState,
                format!("a {what} carries the latest voucher, at the amount the server accepted"),
            )
        })?;
        let v = voucher(v, &channel)?;
        if !f.sessions.signed(&v, &s.voucher_key) {
            return Err(Rejection::new(
                Reason::BatchVoucherSignature,
                format!("the {what}'s voucher is not signed by the channel's voucher key"),
            ));
        }
        let network = Batch::network_id(f).await?;
        Batch::check_close_authorization(
            f,
            &s,
            o,
            &network,
            v.cumulative,
            auth,
            r.requirements.max_timeout_seconds,
        )?;
        // A seal reads the channel: its state is checked, and its answer counts what the
        // close paid out beyond what the channel had paid out before.
        let c = match kind {
            Cooperative::Refund => None,
            Cooperative::Seal { .. } => Some(f.channel(&channel, Reason::BatchCloseState).await?),
        };
        let amount = |settled: u64| match &c {
            None => s.deposit.saturating_sub(settled),
            Some(c) => settled.saturating_sub(c.payout_watermark),
        };
        if s.closed_by.is_some() && s.redeemed == v.cumulative {
            // A retry of this very close: its signature and amount again.
            let Some(sig) = s.closed_by.as_deref().and_then(|c| c.parse().ok()) else {
                return Err(Rejection::new(
                    Reason::BatchCloseState,
                    format!(
                        "channel {} is closed: {}",
                        s.channel,
                        s.closed_by.as_deref().unwrap_or_default()
                    ),
                ));
            };
            return Ok(close_reply(Some(sig), amount(s.redeemed), &s, false));
        }
        match &c {
            None if s.closed_by.is_none() && v.cumulative != s.accepted => {
                return Err(Rejection::new(
                    Reason::BatchCloseState,
                    format!(
                        "the refund's voucher is {}; the amount accepted on channel {} is {}",
                        v.cumulative, s.channel, s.accepted
                    ),
                ));
            }
            None => {}
            Some(c) => {
                let now = chain::unix_time(&f.chain.rpc)
                    .await
                    .map_err(Rejection::rpc)?;
                let deadline = grace_ends(c);
                if c.status != Status::Closing
                    || now >= deadline
                    || !(c.settled..=c.deposit).contains(&v.cumulative)
                {
                    return Err(Rejection::new(
                        Reason::BatchCloseState,
                        format!(
                            "a seal is for a closing channel within its grace period, at a voucher from its settled {} to its deposit {}: channel {channel} is {:?} (grace until {deadline}, now {now}), the voucher {}",
                            c.settled, c.deposit, c.status, v.cumulative
                        ),
                    ));
                }
            }
        }
        // A seal closes at its own voucher, a refund at the session's latest.
        let at = c.is_some().then_some(v);
        let work = async {
            let closed = Batch::close_session(f, &s, at, keypair).await?;
            let amount = amount(closed.settled);
            Ok(close_reply(
                closed.signature,
                amount,
                &closed.session,
                closed.pending,
            ))
        };
        f.sessions
            .work
            .closes
            .run((channel, v.cumulative), work)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_sdk::signature::Keypair;

    fn channel(status: Status, settled: u64, closure_started_at: i64) -> Channel {
        let mut data = vec![0u8; channels::CHANNEL_LEN];
        data[..4].copy_from_slice(&[1, 1, 255, 0]);
        let mut c = Channel::decode(&data).unwrap();
        c.status = status;
        c.deposit = 100;
        c.settled = settled;
        c.closure_started_at = closure_started_at;
        c.grace_period = 900;
        c
    }

    #[test]
    fn the_close_follows_the_channel_state() {
        let key = Keypair::new();
        let at = |n| Voucher::sign(&key, &Pubkey::new_unique(), n, 0);
        let (v30, v10) = (at(30), at(10));
        // Open: the latest voucher applied when above what was settled.
        assert_eq!(
            plan(Some(v30), Some(&channel(Status::Open, 10, 0)), 0),
            ClosePlan::Cooperative { voucher: Some(v30) }
        );
        assert_eq!(
            plan(Some(v10), Some(&channel(Status::Open, 10, 0)), 0),
            ClosePlan::Cooperative { voucher: None }
        );
        assert_eq!(
            plan(None, Some(&channel(Status::Open, 0, 0)), 0),
            ClosePlan::Cooperative { voucher: None }
        );
        // Never above the deposit (the program would refuse the whole close).
        assert_eq!(
            plan(Some(at(101)), Some(&channel(Status::Open, 0, 0)), 0),
            ClosePlan::Cooperative { voucher: None }
        );
        // Closing: the payee seals within the grace period; past it, anyone's seal.
        let closing = channel(Status::Closing, 10, 1_000);
        assert_eq!(
            plan(Some(v30), Some(&closing), 1_899),
            ClosePlan::Cooperative { voucher: Some(v30) }
        );
        assert_eq!(plan(Some(v30), Some(&closing), 1_900), ClosePlan::Forced);
        assert_eq!(
            plan(Some(v30), Some(&channel(Status::Sealed, 10, 0)), 0),
            ClosePlan::Sealed
        );
        assert_eq!(
            plan(Some(v30), Some(&channel(Status::Distributed, 10, 0)), 0),
            ClosePlan::Distributed
        );
        assert_eq!(plan(Some(v30), None, 0), ClosePlan::Gone);
    }
}
