//! The on-chain half of a session: applying the latest vouchers (up to
//! [`batch::MAX_CHANNELS_PER_TRANSACTION`] channels a transaction, `[Ed25519, settle]` each),
//! paying out what was applied (`distribute` of open channels), and the close: the latest
//! voucher applied and the channel sealed (`settle_and_seal`), closed through the gate when
//! gated (`gate_channel_close`: the unspent deposit back to the payer's policy, the payee's
//! feedback), and distributed (the payee its share, the payer the rest, the escrow's rent back
//! to the facilitator) in one transaction the facilitator alone signs (v0 with its lookup
//! tables when gated).

use super::bad;
use crate::reject::Rejection;
use crate::service::Facilitator;
use crate::sessions::Session;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use std::str::FromStr;
use trust_gate_client::batch::{self, reason};
use trust_gate_client::channels::{self, Distribute, Split, Status};
use trust_gate_client::settle::{ComputeBudget, TokenProgram};
use trust_gate_client::simulate::now_unix;
use trust_gate_client::vouchers::Voucher;

/// The close's unit limit (a gated close measured about 60 000 with its feedback).
pub const CLOSE_UNIT_LIMIT: u32 = 200_000;
/// A redemption's, per channel (an Ed25519 check and a `settle`: about 6 000).
pub const REDEEM_UNITS_PER_CHANNEL: u32 = 15_000;
/// A pay-out's, per channel (a `distribute` of one payout: about 15 000).
pub const PAY_OUT_UNITS_PER_CHANNEL: u32 = 30_000;

/// A closed session.
#[derive(Clone, Debug)]
pub struct Closed {
    pub signature: Signature,
    pub pending: bool,
    /// What the channel settled: paid to `payTo`; the rest of the deposit went back.
    pub settled: u64,
    pub session: Session,
}

impl Session {
    fn token_program(&self) -> TokenProgram {
        if self.token_2022 {
            TokenProgram::Token2022
        } else {
            TokenProgram::SplToken
        }
    }

    fn distribute(&self, fac: &Pubkey) -> Distribute {
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
    fn latest(&self) -> Option<Voucher> {
        let signature = Signature::from_str(self.latest_signature.as_deref()?).ok()?;
        Some(Voucher {
            channel: self.channel,
            cumulative: self.accepted,
            expires_at: 0,
            signature,
        })
    }
}

impl Facilitator {
    /// Seals `s` at its latest voucher, closes it through the gate (gated) and distributes
    /// it, in one transaction; the session is marked closed.
    pub async fn close_session(&self, s: &Session, keypair: &Keypair) -> Result<Closed, Rejection> {
        let fac = self.facilitator();
        // First no more vouchers: the close seals at the last one accepted before this.
        let s = &self
            .sessions
            .update::<Rejection>(&s.channel, |cur| {
                if cur.closed_by.is_some() {
                    return Err(bad(
                        reason::CLOSE_STATE,
                        format!("channel {} is closed", cur.channel),
                    ));
                }
                Ok(Session {
                    closing_at: if cur.closing_at == 0 {
                        now_unix()
                    } else {
                        cur.closing_at
                    },
                    ..cur.clone()
                })
            })
            .await
            .map_err(|e| self.change_rejection(&s.channel, e))?;
        let c = self.channel(&s.channel, reason::CHANNEL_STATE).await?;
        if c.status != Status::Open {
            // Sealed by another (the payer's request_close and the grace period, then anyone's
            // seal): nothing is left for this session to do but to stop.
            let why = format!("channel {} is {:?} on chain, not open", s.channel, c.status);
            let _ = self
                .sessions
                .update::<Rejection>(&s.channel, |cur| {
                    Ok(Session {
                        closed_by: Some(why.clone()),
                        ..cur.clone()
                    })
                })
                .await;
            return Err(bad(reason::CLOSE_STATE, why));
        }
        let mut ixs = ComputeBudget {
            unit_limit: Some(CLOSE_UNIT_LIMIT),
            unit_price_micro_lamports: None,
        }
        .instructions();
        let voucher = s.latest().filter(|v| v.cumulative > c.settled);
        if let Some(v) = &voucher {
            ixs.push(v.instruction(&s.voucher_key));
        }
        ixs.push(channels::settle_and_seal(
            &fac,
            &s.channel,
            voucher.is_some(),
        ));
        if s.gate.is_some() {
            ixs.push(
                self.gate_close(&s.channel, batch::SCHEME_GATED_BATCH)
                    .await?,
            );
        }
        ixs.push(s.distribute(&fac).instruction());
        let (signature, pending) = self
            .send_own(
                &ixs,
                s.gate.is_some(),
                keypair,
                reason::SETTLEMENT_SIMULATION,
            )
            .await?;
        let settled = voucher.map_or(c.settled, |v| v.cumulative);
        let session = self
            .sessions
            .update::<Rejection>(&s.channel, |cur| {
                Ok(Session {
                    redeemed: settled,
                    unredeemed_since: 0,
                    closed_by: Some(signature.to_string()),
                    ..cur.clone()
                })
            })
            .await
            .map_err(|e| self.change_rejection(&s.channel, e))?;
        tracing::info!(channel = %s.channel, %signature, settled, "session closed");
        Ok(Closed {
            signature,
            pending,
            settled,
            session,
        })
    }

    /// Applies the latest voucher of each of `list` not yet applied, up to
    /// [`batch::MAX_CHANNELS_PER_TRANSACTION`] channels (all or nothing); returns the
    /// signature (none when there was nothing to apply) and the sessions as they are now.
    pub async fn redeem(
        &self,
        list: &[Session],
        keypair: &Keypair,
    ) -> Result<(Option<Signature>, bool, Vec<Session>), Rejection> {
        if list.len() > batch::MAX_CHANNELS_PER_TRANSACTION {
            return Err(bad(
                reason::PAYLOAD_TYPE,
                format!(
                    "at most {} channels a claim",
                    batch::MAX_CHANNELS_PER_TRANSACTION
                ),
            ));
        }
        let due: Vec<(&Session, Voucher)> = list
            .iter()
            .filter(|s| s.unredeemed() > 0)
            .filter_map(|s| s.latest().map(|v| (s, v)))
            .collect();
        if due.is_empty() {
            return Ok((None, false, list.to_vec()));
        }
        let units = REDEEM_UNITS_PER_CHANNEL.saturating_mul(due.len() as u32);
        let mut ixs = ComputeBudget {
            unit_limit: Some(units),
            unit_price_micro_lamports: None,
        }
        .instructions();
        for (s, v) in &due {
            ixs.push(v.instruction(&s.voucher_key));
            ixs.push(channels::settle(&s.channel));
        }
        let (signature, pending) = self
            .send_own(&ixs, false, keypair, reason::SETTLEMENT_SIMULATION)
            .await?;
        let mut now = Vec::new();
        for (s, v) in &due {
            let applied = v.cumulative;
            let next = self
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
                .map_err(|e| self.change_rejection(&s.channel, e))?;
            now.push(next);
        }
        tracing::info!(%signature, channels = due.len(), "vouchers applied");
        Ok((Some(signature), pending, now))
    }

    /// Pays out what `list`'s channels applied (`distribute` of each open channel: the
    /// payee's share of the settled amount); the channels stay open. Returns the amount
    /// paid out, read from the channels before.
    pub async fn pay_out(
        &self,
        list: &[Session],
        keypair: &Keypair,
    ) -> Result<(Signature, bool, u64), Rejection> {
        if list.is_empty() || list.len() > batch::MAX_CHANNELS_PER_TRANSACTION {
            return Err(bad(
                reason::PAYLOAD_TYPE,
                format!(
                    "a settle names 1 to {} channels",
                    batch::MAX_CHANNELS_PER_TRANSACTION
                ),
            ));
        }
        let fac = self.facilitator();
        let mut paid = 0u64;
        let units = PAY_OUT_UNITS_PER_CHANNEL.saturating_mul(list.len() as u32);
        let mut ixs = ComputeBudget {
            unit_limit: Some(units),
            unit_price_micro_lamports: None,
        }
        .instructions();
        for s in list {
            let c = self.channel(&s.channel, reason::CHANNEL_STATE).await?;
            paid = paid.saturating_add(c.settled.saturating_sub(c.payout_watermark));
            ixs.push(s.distribute(&fac).instruction());
        }
        let (signature, pending) = self
            .send_own(&ixs, false, keypair, reason::SETTLEMENT_SIMULATION)
            .await?;
        Ok((signature, pending, paid))
    }
}
