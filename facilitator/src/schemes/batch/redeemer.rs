//! The sessions' background work, once per poll interval (`KILL_SWITCH_POLL_MS`, 1 s by
//! default):
//!
//! 1. the kill switches of the payers of gated sessions are read (one `getMultipleAccounts`
//!    per 100): a voucher is refused from the first read that finds its payer paused, so at
//!    most one interval (and the RPC's lag) behind the chain; every open channel of a paused
//!    payer is closed at the latest voucher accepted before the pause. Their policies are
//!    read in the same call (policies are immutable but for their payee lists and retirement): the
//!    sessions of a policy retired (or gone) are refused and closed the same way;
//! 2. the sessions' channels are read, each every tenth of its grace period and at least
//!    every `BATCH_CHANNEL_POLL_SECS` (60 s), an unconfirmed one every round (one
//!    `getMultipleAccounts` per 100; specification section 4.5): an open that landed with its
//!    deposit confirms its session; one that never landed is forgotten once its blockhash
//!    expired; a channel its payer moved to `Closing` (`request_close`), or that someone else
//!    sealed, distributed or deleted, is written into the shared session (every replica then
//!    refuses its vouchers) and closed at what was accepted ([`super::close::plan`]);
//! 3. the latest vouchers are applied on chain, [`batch::MAX_CHANNELS_PER_TRANSACTION`]
//!    channels a transaction, for the sessions that have at least `BATCH_REDEEM_AMOUNT`
//!    unapplied (0: no amount triggers) or whose oldest unapplied voucher is
//!    `BATCH_REDEEM_AGE_SECS` old; a batch the chain refuses is tried channel by channel, so
//!    that one channel's refusal never holds up another's;
//! 4. a session with no voucher for `BATCH_MAX_IDLE_SECS` (a week by default) is closed at
//!    its latest voucher, as a refund would close it: an abandoned channel's rent comes back
//!    (the scheme's idle close, which seals at what was applied; this one pays the payee what
//!    it was promised). In process, closed sessions are forgotten after a week, as Redis
//!    expires them.
//!
//! With Redis, every replica reads the kill switches (its own vouchers are refused from its
//! own read), and one replica a round reads the channels, closes and redeems (a short claim
//! on a shared key).

use super::close::program_channel;
use super::{opened, Batch};
use crate::service::Facilitator;
use crate::sessions::Session;

use solana_sdk::pubkey::Pubkey;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use trust_gate_client::channels::{Channel, Status};
use trust_gate_client::decode::KillSwitchState;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::{chain, decode};
use trust_gate_x402::batch;

/// What one tick did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    /// Payer agents found paused.
    pub paused: Vec<Pubkey>,
    /// Channels closed because their payer is paused (or their close had stalled).
    pub closed: Vec<Pubkey>,
    /// Channels closed because their payer asked to close them (`request_close`) or someone
    /// else sealed, distributed or deleted them.
    pub closing: Vec<Pubkey>,
    /// Channels closed because no voucher came for `BATCH_MAX_IDLE_SECS`.
    pub idle: Vec<Pubkey>,
    /// Channels whose open was read on chain with its deposit.
    pub confirmed: Vec<Pubkey>,
    /// Sessions forgotten: their open never landed.
    pub forgotten: Vec<Pubkey>,
    /// Channels whose vouchers were applied.
    pub redeemed: Vec<Pubkey>,
    /// What failed (logged; tried again next tick).
    pub errors: Vec<String>,
}

/// Runs [`tick`] every `settings.poll` until aborted.
pub fn spawn(f: Arc<Facilitator>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(f.settings.sessions.poll);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let t = tick(&f).await;
            for e in &t.errors {
                tracing::warn!("sessions: {e}");
            }
        }
    })
}

/// What stops sessions, read in one `getMultipleAccounts` (`chain::accounts` runs it 100 keys
/// a call): among the payer agents of `policies` (payer agent, policy id, sorted), those whose
/// kill switch is paused now (a missing kill switch is not a pause: the gate refused the open
/// without one), and among `policies`, those retired now or gone.
pub async fn stops(
    f: &Facilitator,
    policies: &[(Pubkey, u32)],
) -> Result<(HashSet<Pubkey>, HashSet<(Pubkey, u32)>), String> {
    let mut agents: Vec<Pubkey> = policies.iter().map(|(a, _)| *a).collect();
    agents.dedup();
    let keys: Vec<Pubkey> = agents
        .iter()
        .map(|a| f.chain.builder.pda.killswitch(a))
        .chain(
            policies
                .iter()
                .map(|(a, id)| f.chain.builder.pda.policy(a, *id)),
        )
        .collect();
    let mut accounts = chain::accounts(&f.chain.rpc, &keys)
        .await
        .map_err(|e| format!("reading kill switches and policies: {e}"))?
        .into_iter();
    let mut paused = HashSet::new();
    for (agent, acc) in agents.iter().zip(accounts.by_ref()) {
        let state =
            acc.and_then(|a| decode::account::<KillSwitchState>("KillSwitchState", &a.data).ok());
        if state.is_some_and(|s| s.paused) {
            paused.insert(*agent);
        }
    }
    let mut retired = HashSet::new();
    for (key, acc) in policies.iter().zip(accounts) {
        let policy = acc.and_then(|a| decode::policy(&a.data).ok());
        if policy.is_none_or(|p| p.is_retired()) {
            retired.insert(*key);
        }
    }
    Ok((paused, retired))
}

/// How often a session's channel is read: every tenth of its grace period, at most
/// `longest` apart; an unconfirmed session's every round.
pub fn read_every(s: &Session, longest: Duration) -> i64 {
    if s.unconfirmed.is_some() {
        return 0;
    }
    let tenth = i64::from(s.withdraw_delay / 10);
    tenth.min(i64::try_from(longest.as_secs()).unwrap_or(i64::MAX))
}

/// What a read of its channel tells of a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// Nothing new.
    Unchanged,
    /// The open landed with its deposit.
    Confirmed,
    /// The open is not on chain and its blockhash expired: it never will be.
    NeverOpened,
    /// Not open any more (its payer's `request_close`, or someone else sealed, distributed or
    /// deleted it): the session takes no voucher and closes. The channel's
    /// `closure_started_at` (or the time it was seen so, when the program reset it).
    Closing { requested_at: i64 },
}

/// What the channel `c` (none: no account) tells of `s` at `now`; `blockhash_valid` says
/// whether an unconfirmed open may still land.
pub fn seen(
    s: &Session,
    c: Option<&Channel>,
    fac: &Pubkey,
    blockhash_valid: bool,
    now: i64,
) -> Seen {
    match (c, s.unconfirmed.is_some()) {
        (None, true) if !blockhash_valid => Seen::NeverOpened,
        (Some(c), true) if opened(c, s, fac) => Seen::Confirmed,
        (_, true) => Seen::Unchanged,
        (None, false) => Seen::Closing { requested_at: now },
        (Some(c), false) if c.status == Status::Open => Seen::Unchanged,
        (Some(c), false) => Seen::Closing {
            requested_at: if c.closure_started_at != 0 {
                c.closure_started_at
            } else {
                now
            },
        },
    }
}

/// Reads the channels due and writes what they say into the sessions (shared: every replica
/// refuses by it); returns the sessions as they are now, without those forgotten.
async fn observe(f: &Facilitator, open: Vec<Session>, t: &mut Tick) -> Vec<Session> {
    let now = now_unix();
    let longest = f.settings.sessions.channel_poll;
    let read_at = || {
        f.sessions
            .work
            .read_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    };
    let due: Vec<Pubkey> = {
        let mut read_at = read_at();
        let live: HashSet<Pubkey> = open.iter().map(|s| s.channel).collect();
        read_at.retain(|k, _| live.contains(k));
        open.iter()
            .filter(|s| {
                let last = read_at.get(&s.channel).copied().unwrap_or(i64::MIN);
                now.saturating_sub(last) >= read_every(s, longest)
            })
            .map(|s| s.channel)
            .collect()
    };
    if due.is_empty() {
        return open;
    }
    // Each session's channel, none when it has no account the program owns.
    let read: HashMap<Pubkey, Option<Channel>> = match chain::accounts(&f.chain.rpc, &due).await {
        Ok(accounts) => due
            .iter()
            .copied()
            .zip(accounts.into_iter().map(program_channel))
            .collect(),
        Err(e) => {
            t.errors
                .push(format!("reading the sessions' channels: {e}"));
            return open;
        }
    };
    read_at().extend(due.iter().map(|k| (*k, now)));
    let fac = f.facilitator();
    let mut now_open = Vec::with_capacity(open.len());
    for s in open {
        let Some(c) = read.get(&s.channel) else {
            now_open.push(s);
            continue;
        };
        let valid = match (&s.unconfirmed, c) {
            (Some(hash), None) => blockhash_valid(f, hash).await,
            _ => true,
        };
        let change = match seen(&s, c.as_ref(), &fac, valid, now) {
            Seen::Unchanged => {
                now_open.push(s);
                continue;
            }
            Seen::NeverOpened => {
                match f.sessions.remove(&s.channel).await {
                    Ok(()) => {
                        f.released_advance(&s.channel).await;
                        tracing::info!(channel = %s.channel, "session forgotten: its open never landed");
                        t.forgotten.push(s.channel);
                    }
                    Err(e) => t.errors.push(e.to_string()),
                }
                continue;
            }
            Seen::Confirmed => {
                t.confirmed.push(s.channel);
                None
            }
            Seen::Closing { requested_at } => Some(requested_at),
        };
        let updated = f
            .sessions
            .update::<()>(&s.channel, |cur| {
                Ok(Session {
                    unconfirmed: None,
                    withdraw_requested_at: match change {
                        Some(at) if cur.withdraw_requested_at == 0 => at,
                        _ => cur.withdraw_requested_at,
                    },
                    ..cur.clone()
                })
            })
            .await;
        match updated {
            Ok(s) => now_open.push(s),
            Err(crate::sessions::Change::Unavailable(e)) => {
                t.errors.push(e.to_string());
                now_open.push(s);
            }
            Err(_) => {}
        }
    }
    now_open
}

/// Whether `hash` (base58) may still land a transaction (an RPC failure counts as yes: the
/// session is looked at again next round).
async fn blockhash_valid(f: &Facilitator, hash: &str) -> bool {
    let Ok(hash) = hash.parse() else {
        return false;
    };
    f.chain
        .rpc
        .is_blockhash_valid(&hash, f.chain.rpc.commitment())
        .await
        .unwrap_or(true)
}

/// One round of the background work (see the module docs).
pub async fn tick(f: &Facilitator) -> Tick {
    let mut t = Tick::default();
    let open = match f.sessions.open().await {
        Ok(o) => o,
        Err(e) => {
            t.errors.push(e.to_string());
            return t;
        }
    };
    let mut policies: Vec<(Pubkey, u32)> = open
        .iter()
        .filter_map(|s| s.gate.map(|g| (g.payer_asset, g.policy_id)))
        .collect();
    policies.sort();
    policies.dedup();
    let mut retired = HashSet::new();
    match stops(f, &policies).await {
        Ok((p, r)) => {
            f.sessions.set_paused(p.clone());
            t.paused = p.into_iter().collect();
            f.sessions.set_retired(r.clone());
            retired = r;
        }
        Err(e) => t.errors.push(e),
    }
    // Every replica reads the kill switches (each refuses vouchers from its own read); one
    // replica a round reads the channels, closes and redeems.
    match f.sessions.take_tick(f.settings.sessions.poll).await {
        Ok(true) => {}
        Ok(false) => return t,
        Err(e) => {
            t.errors.push(e.to_string());
            return t;
        }
    }
    // What was advanced, counted again from the chain now and then (a replica's crash, a
    // close by someone else, a reclaim elsewhere).
    if f.advances
        .rebuild_due(now_unix(), crate::advances::REBUILD_EVERY_SECS)
    {
        if let Err(r) = f.reconcile_advances().await {
            t.errors
                .push(format!("counting the rent advanced: {}", r.message));
        }
    }
    let Some(keypair) = f.key.keypair() else {
        return t;
    };
    let open = observe(f, open, &mut t).await;
    let mut due: Vec<Session> = Vec::new();
    let now = now_unix();
    let age = i64::try_from(f.settings.sessions.redeem_age.as_secs()).unwrap_or(i64::MAX);
    let stalled_after = Batch::stalled_after(f);
    for s in open {
        // A close under way (a refund's, or a paused payer's) may still land: one that failed
        // is tried again once it would have finished.
        let under_way = s.closing_at != 0 && now.saturating_sub(s.closing_at) <= stalled_after;
        if s.unconfirmed.is_some() || under_way {
            continue;
        }
        let paused = s.gate.is_some_and(|g| {
            t.paused.contains(&g.payer_asset) || retired.contains(&(g.payer_asset, g.policy_id))
        });
        let stalled = s.closing_at != 0;
        let closing = s.withdraw_requested_at != 0;
        let idle = !stalled
            && f.settings.sessions.max_idle.is_some_and(|d| {
                now.saturating_sub(s.active_at) >= i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
            });
        if paused || closing || stalled || idle {
            match Batch::close_session(f, &s, None, keypair).await {
                Ok(_) if closing => t.closing.push(s.channel),
                Ok(_) if idle && !paused => t.idle.push(s.channel),
                Ok(_) => t.closed.push(s.channel),
                Err(r) => t
                    .errors
                    .push(format!("closing {}: {}", s.channel, r.message)),
            }
            continue;
        }
        let by_amount = f.settings.sessions.redeem_amount > 0
            && s.unredeemed() >= f.settings.sessions.redeem_amount;
        let by_age = s.unredeemed_since > 0 && now.saturating_sub(s.unredeemed_since) >= age;
        if s.unredeemed() > 0 && (by_amount || by_age) {
            due.push(s);
        }
    }
    for run in due.chunks(batch::MAX_CHANNELS_PER_TRANSACTION) {
        match Batch::redeem(f, run, keypair).await {
            Ok(_) => t.redeemed.extend(run.iter().map(|s| s.channel)),
            // One channel the chain refuses (its payer's request_close since the last read,
            // say) must not hold up the others: each is tried alone.
            Err(r) if run.len() > 1 => {
                t.errors.push(format!(
                    "applying vouchers of {} channels: {}",
                    run.len(),
                    r.message
                ));
                for s in run {
                    match Batch::redeem(f, std::slice::from_ref(s), keypair).await {
                        Ok(_) => t.redeemed.push(s.channel),
                        Err(r) => t
                            .errors
                            .push(format!("applying vouchers of {}: {}", s.channel, r.message)),
                    }
                }
            }
            Err(r) => t.errors.push(format!(
                "applying vouchers of {}: {}",
                run[0].channel, r.message
            )),
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_client::channels;

    fn session(unconfirmed: bool) -> Session {
        Session {
            withdraw_delay: 3_600,
            unconfirmed: unconfirmed.then(|| "hash".into()),
            ..crate::sessions::tests::session()
        }
    }

    /// The channel `s`'s deposit opened, with `status`.
    fn channel_of(s: &Session, fac: &Pubkey, status: Status, closure_started_at: i64) -> Channel {
        let mut data = vec![0u8; channels::CHANNEL_LEN];
        data[..4].copy_from_slice(&[1, 1, 255, 0]);
        let mut c = Channel::decode(&data).unwrap();
        c.status = status;
        c.deposit = s.deposit;
        c.closure_started_at = closure_started_at;
        c.payer = s.payer;
        c.payee = *fac;
        c.rent_payer = *fac;
        c.mint = s.mint;
        c.authorized_signer = s.voucher_key;
        c.distribution_hash = channels::distribution_hash(&[channels::Split {
            recipient: s.pay_to,
            bps: channels::ALL_BPS,
        }]);
        c
    }

    #[test]
    fn a_channel_read_tells_what_became_of_its_session() {
        let fac = Pubkey::new_unique();
        let pending = session(true);
        let open = channel_of(&pending, &fac, Status::Open, 0);
        assert_eq!(seen(&pending, Some(&open), &fac, true, 5), Seen::Confirmed);
        // Open, but not with this deposit: not this session's open.
        let mut other = open.clone();
        other.deposit += 1;
        assert_eq!(seen(&pending, Some(&other), &fac, true, 5), Seen::Unchanged);
        assert_eq!(seen(&pending, None, &fac, true, 5), Seen::Unchanged);
        assert_eq!(seen(&pending, None, &fac, false, 5), Seen::NeverOpened);

        let s = session(false);
        // What a read of the session's channel in `status` since `at` tells.
        let seen_as = |status, at| seen(&s, Some(&channel_of(&s, &fac, status, at)), &fac, true, 5);
        assert_eq!(seen_as(Status::Open, 0), Seen::Unchanged);
        assert_eq!(
            seen_as(Status::Closing, 77),
            Seen::Closing { requested_at: 77 }
        );
        assert_eq!(
            seen_as(Status::Sealed, 0),
            Seen::Closing { requested_at: 5 }
        );
        assert_eq!(
            seen(&s, None, &fac, true, 5),
            Seen::Closing { requested_at: 5 }
        );
    }

    #[test]
    fn a_channel_is_read_every_tenth_of_its_grace_period_at_most_the_longest_apart() {
        let longest = Duration::from_secs(60);
        let mut s = session(false);
        s.withdraw_delay = 900;
        assert_eq!(read_every(&s, longest), 60);
        s.withdraw_delay = 300;
        assert_eq!(read_every(&s, longest), 30);
        assert_eq!(read_every(&s, Duration::from_secs(1)), 1);
        assert_eq!(
            read_every(&session(true), longest),
            0,
            "an unconfirmed open every round"
        );
    }
}
