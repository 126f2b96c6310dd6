//! The server's `claim` and the background redemption: the latest vouchers applied on chain
//! (up to [`batch::MAX_CHANNELS_PER_TRANSACTION`] channels a transaction, `[Ed25519, settle]`
//! each) and what they applied paid out (`distribute` of open channels), the channels left
//! open.

use super::{channel_id, channel_state, voucher, Batch, Offer};
use crate::answer::SettleReply;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::sessions::Session;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use trust_gate_client::channels;
use trust_gate_client::settle::ComputeBudget;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::vouchers::Voucher;
use trust_gate_x402::batch::{self, Claim, SettleChannel};

/// A redemption's, per channel (an Ed25519 check and a `settle`: about 6 000).
pub const REDEEM_UNITS_PER_CHANNEL: u32 = 15_000;
/// A pay-out's, per channel (a `distribute` of one payout: about 15 000).
pub const PAY_OUT_UNITS_PER_CHANNEL: u32 = 30_000;

/// A server's `claim` or `settle` (`what`) names `n` channels: one transaction's worth, 1 to
/// [`batch::MAX_CHANNELS_PER_TRANSACTION`].
fn one_transaction(what: &str, n: usize) -> Result<(), Rejection> {
    if n == 0 || n > batch::MAX_CHANNELS_PER_TRANSACTION {
        return Err(Rejection::new(
            Reason::BatchPayloadType,
            format!(
                "a {what} names 1 to {} channels",
                batch::MAX_CHANNELS_PER_TRANSACTION
            ),
        ));
    }
    Ok(())
}

impl Batch {
    /// The server's `claim`: the listed channels' latest vouchers applied now; the same
    /// claim at once runs once.
    pub(crate) async fn claim_sessions(
        f: &Facilitator,
        claims: &[Claim],
        o: &Offer,
        keypair: &Keypair,
    ) -> Result<SettleReply, Rejection> {
        one_transaction("claim", claims.len())?;
        let mut list = Vec::new();
        for c in claims {
            let channel = channel_id(&c.channel_id)?;
            let v = voucher(&c.voucher, &channel)?;
            let s = Batch::listed_session(f, &channel, &c.channel_config, o).await?;
            redeemable(&s)?;
            if v.cumulative > s.accepted || !f.sessions.signed(&v, &s.voucher_key) {
                return Err(Rejection::new(
                    Reason::BatchVoucherSignature,
                    format!(
                        "a claim's voucher of {} is one this facilitator accepted (at most {}, signed by the channel's key)",
                        channel, s.accepted
                    ),
                ));
            }
            list.push(s);
        }
        let mut key: Vec<(Pubkey, u64)> = list.iter().map(|s| (s.channel, s.accepted)).collect();
        key.sort();
        let work = async {
            let (sig, pending, done) = Batch::redeem(f, &list, keypair).await?;
            let accepts: Vec<Value> = done
                .iter()
                .map(|s| json!({"channelId": s.channel.to_string(), "totalClaimed": s.redeemed.to_string()}))
                .collect();
            Ok(SettleReply::channel(
                sig.map(|s| s.to_string()).unwrap_or_default(),
                String::new(),
                list.first().map(|s| s.payer).unwrap_or_default(),
                Some(json!({ "accepts": accepts })),
                pending,
            ))
        };
        f.sessions.work.claims.run(key, work).await
    }

    /// Applies the latest voucher of each of `list` (at most
    /// [`batch::MAX_CHANNELS_PER_TRANSACTION`], as every caller keeps it) not yet applied, all
    /// or nothing; returns the signature (none when there was nothing to apply) and the
    /// sessions as they are now.
    pub async fn redeem(
        f: &Facilitator,
        list: &[Session],
        keypair: &Keypair,
    ) -> Result<(Option<Signature>, bool, Vec<Session>), Rejection> {
        for s in list {
            redeemable(s)?;
        }
        let due: Vec<(&Session, Voucher)> = list
            .iter()
            .filter(|s| s.unredeemed() > 0)
            .filter_map(|s| s.latest().map(|v| (s, v)))
            .collect();
        if due.is_empty() {
            return Ok((None, false, list.to_vec()));
        }
        let mut ixs =
            ComputeBudget::limit(REDEEM_UNITS_PER_CHANNEL.saturating_mul(due.len() as u32));
        for (s, v) in &due {
            ixs.push(v.instruction(&s.voucher_key));
            ixs.push(channels::settle(&s.channel));
        }
        let (signature, pending) = f
            .send_own(&ixs, false, keypair, Reason::BatchSettlementSimulation)
            .await?;
        let mut now = Vec::new();
        for (s, v) in &due {
            let applied = v.cumulative;
            let next = f
                .sessions
                .update::<Rejection>(&s.channel, |cur| {
                    let caught_up = cur.accepted <= applied;
                    Ok(Session {
                        redeemed: cur.redeemed.max(applied),
                        unredeemed_since: if caught_up { 0 } else { now_unix() },
                        ..cur.clone()
                    })
                })
                .await
                .map_err(|e| Batch::change_rejection(&s.channel, e))?;
            now.push(next);
        }
        tracing::info!(%signature, channels = due.len(), "vouchers applied");
        Ok((Some(signature), pending, now))
    }

    /// The server's `settle`: what the listed channels applied paid out now (`distribute` of
    /// each open channel: the payee's share of the settled amount); the channels stay open.
    /// Its amount is what was paid out, read from the channels before.
    pub(crate) async fn settle_sessions(
        f: &Facilitator,
        channels: &[SettleChannel],
        o: &Offer,
        keypair: &Keypair,
    ) -> Result<SettleReply, Rejection> {
        let mut list = Vec::new();
        for c in channels {
            let channel = channel_id(&c.channel_id)?;
            list.push(Batch::listed_session(f, &channel, &c.channel_config, o).await?);
        }
        one_transaction("settle", list.len())?;
        let fac = f.facilitator();
        let mut paid = 0u64;
        let mut ixs =
            ComputeBudget::limit(PAY_OUT_UNITS_PER_CHANNEL.saturating_mul(list.len() as u32));
        for s in &list {
            let c = f.channel(&s.channel, Reason::BatchChannelState).await?;
            paid = paid.saturating_add(c.settled.saturating_sub(c.payout_watermark));
            ixs.push(s.distribute(&fac).instruction());
        }
        let (signature, pending) = f
            .send_own(&ixs, false, keypair, Reason::BatchSettlementSimulation)
            .await?;
        let states: Vec<_> = list.iter().map(channel_state).collect();
        Ok(SettleReply::channel(
            signature.to_string(),
            paid.to_string(),
            list.first().map(|s| s.payer).unwrap_or_default(),
            Some(json!({ "channels": states })),
            pending,
        ))
    }
}

/// Whether the program can still `settle` the session's vouchers: not once its payer asked
/// to close it (only the payee's seal applies a voucher then), nor before its open is read on
/// chain.
pub(crate) fn redeemable(s: &Session) -> Result<(), Rejection> {
    if s.withdraw_requested_at != 0 {
        return Err(Rejection::new(
            Reason::BatchChannelClosing,
            format!(
                "the payer asked to close channel {} (request_close): a seal collects its vouchers now",
                s.channel
            ),
        ));
    }
    if s.unconfirmed.is_some() {
        return Err(Rejection::new(
            Reason::BatchDepositUnconfirmed,
            format!("the open of channel {} is not yet on chain", s.channel),
        ));
    }
    Ok(())
}
