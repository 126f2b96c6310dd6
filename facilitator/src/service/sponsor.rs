//! The facilitator's checks before it sponsors a payment channel, and its upkeep of what it
//! advanced ([`crate::advances`]):
//!
//! - unclosed channels per payer wallet, counted apart for `upto` and for sessions
//!   (`UPTO_CHANNELS_PER_PAYER`, `SESSIONS_PER_PAYER`; 2 each): past it 429 naming it;
//! - the rent advanced in all (`MAX_RENT_ADVANCED_LAMPORTS`, 10 SOL): past it 503;
//! - a balance the facilitator keeps for settlements (`MIN_FEE_PAYER_BALANCE_LAMPORTS`,
//!   0.05 SOL): an open that would go below it is 503.
//!
//! All are checked before anything is co-signed. The count is rebuilt from the chain at the
//! start and every few minutes (the channels whose rent payer is this facilitator:
//! `reconcile_advances`), and released on a close, a failed open, a forgotten pending open
//! and a reclaim.
//!
//! The plain schemes (`upto`, `batch-settlement`, where no policy decides) take only the
//! assets configured (by default the stock assets of the network), and, when
//! `PLAIN_OFFERS_SIGNED` is set, only offers a trusted service signed
//! (`extra.offerSignature`, `trust_gate_x402::sign_plain_offer`), checked at the open:
//! a free wallet then needs a known service's offer for every channel it opens.

use crate::advances::ledger::{Advance, Bounds, ChannelKind, Full};
use crate::advances::{rent_of_open, PENDING_OPEN_SECS};
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::rent::Rent;
use std::collections::HashSet;
use trust_gate_client::channels::{self, Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::{chain, channel_reclaim};

impl Facilitator {
    /// Whether this facilitator sponsors a plain channel for the offer `accepted` in `mint`
    /// (the gated schemes are the payer's policy's to decide): its asset, and its service's
    /// signature when `PLAIN_OFFERS_SIGNED` asks for one. `reason` is the scheme's name of a
    /// refused requirement.
    pub(crate) fn check_plain_offer(
        &self,
        accepted: &trust_gate_x402::PaymentRequirements,
        mint: &Pubkey,
        reason: Reason,
    ) -> Result<(), Rejection> {
        let s = &self.settings.sponsor;
        if !s.plain_assets.takes(self.chain.network, mint) {
            return Err(s.plain_assets.refusal(self.chain.network, mint, reason));
        }
        if s.signed_plain_offers {
            let max_age = i64::try_from(accepted.max_timeout_seconds).unwrap_or(i64::MAX);
            let skew = i64::try_from(self.settings.clock_skew.as_secs()).unwrap_or(i64::MAX);
            trust_gate_x402::plain_offer_signer(
                accepted,
                now_unix(),
                max_age,
                skew,
                &self.settings.trusted_services,
            )
            .map_err(|m| Rejection::new(reason, m))?;
        }
        Ok(())
    }

    /// Reserves what opening `channel` for `payer` advances, before the open is co-signed:
    /// refused with nothing sent past a bound (see the module docs). `false` when the
    /// channel is being opened already (reserved by an earlier attempt: nothing reserved).
    pub(crate) async fn advance(
        &self,
        channel: &Pubkey,
        payer: &Pubkey,
        kind: ChannelKind,
        token_program: TokenProgram,
        gated: bool,
    ) -> Result<bool, Rejection> {
        let s = &self.settings.sponsor;
        let lamports = rent_of_open(token_program, gated);
        let fac = self.facilitator();
        let balance = self
            .within(async {
                self.chain
                    .rpc
                    .get_balance(&fac)
                    .await
                    .map_err(Rejection::rpc)
            })
            .await?;
        if balance.saturating_sub(lamports) < s.min_balance {
            return Err(Rejection::new(
                Reason::FeePayerBalanceLow,
                format!(
                    "this facilitator holds {balance} lamports: advancing {lamports} of rent for channel {channel} would leave less than the {} it keeps for settlements (MIN_FEE_PAYER_BALANCE_LAMPORTS); nothing was sent",
                    s.min_balance
                ),
            )
            .hint("retry later, once closed channels' rent came back, or ask the operator to fund the fee payer"));
        }
        let (per_payer, variable) = match kind {
            ChannelKind::Upto => (s.upto_per_payer, "UPTO_CHANNELS_PER_PAYER"),
            ChannelKind::Session => (s.sessions_per_payer, "SESSIONS_PER_PAYER"),
        };
        let advance = Advance {
            payer: payer.to_string(),
            kind,
            lamports,
            open: true,
            reserved_at: now_unix(),
        };
        let bounds = Bounds {
            per_payer,
            total: s.max_rent_advanced,
        };
        let full = self.advances.reserve(channel, &advance, bounds).await?;
        match full {
            Ok(()) => Ok(true),
            Err(Full::Exists) => Ok(false),
            Err(Full::Payer { open }) => Err(Rejection::new(
                Reason::PayerChannelsLimit,
                format!(
                    "wallet {payer} has {open} {} channels open that this facilitator sponsors, its bound ({variable}); nothing was sent (no fee)",
                    match kind {
                        ChannelKind::Upto => "upto",
                        ChannelKind::Session => "session",
                    }
                ),
            )
            .retry_after(60)
            .hint("close a channel first (a session's refund; an upto payment closes with its claim)")),
            Err(Full::Total { advanced }) => Err(Rejection::new(
                Reason::RentAdvanceLimit,
                format!(
                    "this facilitator advanced {advanced} lamports of channel rent, and {lamports} more would pass its bound of {} (MAX_RENT_ADVANCED_LAMPORTS); nothing was sent",
                    s.max_rent_advanced
                ),
            )
            .hint("retry later: rent comes back as channels close")),
        }
    }

    /// The open of `channel` landed: the ledger keeps the rent the chain shows.
    pub(crate) async fn advanced(&self, channel: &Pubkey) {
        match self.held_rent(&[*channel]).await {
            Ok(held) => {
                let lamports = held.first().map_or(0, |(_, l, _)| *l);
                self.log_store(
                    self.advances
                        .update(channel, |e| e.lamports = lamports)
                        .await,
                );
            }
            Err(e) => tracing::warn!(%channel, "reading an open's rent: {}", e.message),
        }
    }

    /// The channel closed (sealed and distributed): no longer counted against its payer;
    /// the channel's own rent stays out until its `reclaim`.
    pub(crate) async fn closed_advance(&self, channel: &Pubkey) {
        let rent = Rent::default().minimum_balance(channels::CHANNEL_LEN);
        let r = self
            .advances
            .update(channel, |e| {
                e.open = false;
                e.lamports = e.lamports.min(rent);
            })
            .await;
        self.log_store(r);
    }

    /// Every lamport of `channel` back (reclaimed, or its open never landed).
    pub(crate) async fn released_advance(&self, channel: &Pubkey) {
        let r = self.advances.remove(channel).await;
        self.log_store(r);
    }

    fn log_store(&self, r: Result<(), trust_gate_server::redis_store::StoreUnavailable>) {
        if let Err(e) = r {
            tracing::warn!("the advances ledger: {e} (the next rebuild from the chain mends it)");
        }
    }

    /// For each of `channels` (those the program owns), its status and the rent it holds
    /// (the channel's, its escrow's, its open gate record's), in two `getMultipleAccounts`.
    async fn held_rent(&self, list: &[Pubkey]) -> Result<Vec<(Pubkey, u64, Channel)>, Rejection> {
        let accounts = chain::accounts(&self.chain.rpc, list)
            .await
            .map_err(Rejection::rpc)?;
        let read: Vec<(Pubkey, u64, Channel)> = list
            .iter()
            .zip(accounts)
            .filter_map(|(k, a)| {
                let a = a.filter(|a| a.owner == channels::PROGRAM_ID)?;
                let c = Channel::decode(&a.data)?;
                Some((*k, a.lamports, c))
            })
            .collect();
        // The escrow (its token program unknown here: either's address) and the record.
        let mut extra = Vec::new();
        for (k, _, c) in &read {
            extra.push(TokenProgram::SplToken.associated_account(k, &c.mint));
            extra.push(TokenProgram::Token2022.associated_account(k, &c.mint));
            extra.push(self.chain.builder.pda.channel_record(k));
        }
        let more = chain::accounts(&self.chain.rpc, &extra)
            .await
            .map_err(Rejection::rpc)?;
        Ok(read
            .into_iter()
            .zip(more.chunks(3))
            .map(|((k, lamports, c), held)| {
                let rest: u64 = held.iter().flatten().map(|a| a.lamports).sum();
                (k, lamports.saturating_add(rest), c)
            })
            .collect())
    }

    /// Rebuilds the ledger from the chain: every channel whose rent payer is this facilitator,
    /// with the rent it holds (its kind from the ledger, a session this facilitator holds, or
    /// its open's binding Memo); entries of channels gone are dropped, but for reservations
    /// younger than an open's lifetime. Returns the channels counted.
    pub async fn reconcile_advances(&self) -> Result<usize, Rejection> {
        let fac = self.facilitator();
        let known = self.advances.all().await?;
        let ours = channel_reclaim::sponsored(&self.chain.rpc, &fac).await?;
        let addresses: Vec<Pubkey> = ours.iter().map(|(k, _)| *k).collect();
        let held = self.held_rent(&addresses).await?;
        let now = now_unix();
        let mut seen = HashSet::new();
        for (channel, lamports, c) in &held {
            seen.insert(*channel);
            let kind = match known.get(channel) {
                Some(e) => e.kind,
                None => self.kind_of(channel, c).await,
            };
            let advance = Advance {
                payer: c.payer.to_string(),
                kind,
                lamports: *lamports,
                open: matches!(c.status, Status::Open | Status::Closing),
                reserved_at: known.get(channel).map_or(now, |e| e.reserved_at),
            };
            self.advances.put(channel, &advance).await?;
        }
        for (channel, e) in &known {
            if !seen.contains(channel) && now.saturating_sub(e.reserved_at) > PENDING_OPEN_SECS {
                self.advances.remove(channel).await?;
            }
        }
        Ok(seen.len())
    }

    /// A channel not in the ledger: a session's when this facilitator holds its session or
    /// its open bound a receiver authorizer, else an `upto` payment's.
    async fn kind_of(&self, channel: &Pubkey, c: &Channel) -> ChannelKind {
        if let Ok(Some(_)) = self.sessions.get(channel).await {
            return ChannelKind::Session;
        }
        match channel_reclaim::opened_with(&self.chain.rpc, channel, c).await {
            Ok(Some(o)) if o.session => ChannelKind::Session,
            _ => ChannelKind::Upto,
        }
    }
}
