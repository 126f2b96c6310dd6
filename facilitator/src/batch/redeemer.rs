//! The sessions' background work, once per poll interval (`KILL_SWITCH_POLL_MS`, 1 s by
//! default):
//!
//! 1. the kill switches of the payers of gated sessions are read (one `getMultipleAccounts`
//!    per 100): a voucher is refused from the first read that finds its payer paused, so at
//!    most one interval (and the RPC's lag) behind the chain; every open channel of a paused
//!    payer is closed at the latest voucher accepted before the pause. Their policies are
//!    read in the same call (policies are immutable but for their payee lists and retirement): the
//!    sessions of a policy retired (or gone) are refused and closed the same way;
//! 2. the latest vouchers are applied on chain, [`batch::MAX_CHANNELS_PER_TRANSACTION`]
//!    channels a transaction, for the sessions that have at least `BATCH_REDEEM_AMOUNT`
//!    unapplied (0: no amount triggers) or whose oldest unapplied voucher is
//!    `BATCH_REDEEM_AGE_SECS` old;
//! 3. a session with no voucher for `BATCH_MAX_IDLE_SECS` (a week by default) is closed at
//!    its latest voucher, as a refund would close it: an abandoned channel's rent comes back
//!    (the scheme's idle close, which seals at what was applied; this one pays the payee what
//!    it was promised). In process, closed sessions are forgotten after a week, as Redis
//!    expires them.
//!
//! With Redis, every replica reads the kill switches (its own vouchers are refused from its
//! own read), and one replica a round closes and redeems (a short claim on a shared key).

use crate::service::Facilitator;
use crate::sessions::{Session, SESSION_TTL};

use solana_sdk::pubkey::Pubkey;
use std::collections::HashSet;
use std::sync::Arc;
use trust_gate_client::batch;
use trust_gate_client::decode::KillSwitchState;
use trust_gate_client::simulate::now_unix;
use trust_gate_client::{chain, decode};

const SESSION_TTL_SECS: i64 = SESSION_TTL.as_secs() as i64;

/// What one tick did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    /// Payer agents found paused.
    pub paused: Vec<Pubkey>,
    /// Channels closed because their payer is paused (or their close had stalled).
    pub closed: Vec<Pubkey>,
    /// Channels closed because no voucher came for `BATCH_MAX_IDLE_SECS`.
    pub idle: Vec<Pubkey>,
    /// Channels whose vouchers were applied.
    pub redeemed: Vec<Pubkey>,
    /// What failed (logged; tried again next tick).
    pub errors: Vec<String>,
}

/// Runs [`tick`] every `settings.poll` until aborted.
pub fn spawn(f: Arc<Facilitator>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(f.session_settings.poll);
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
/// a call): the payer agents, among `agents`, whose kill switch is paused now (a missing kill
/// switch is not a pause: the gate refused the open without one), and the policies, among
/// `policies` (payer agent, policy id), retired now or gone.
pub async fn stops(
    f: &Facilitator,
    agents: &[Pubkey],
    policies: &[(Pubkey, u32)],
) -> Result<(HashSet<Pubkey>, HashSet<(Pubkey, u32)>), String> {
    let keys: Vec<Pubkey> = agents
        .iter()
        .map(|a| f.builder.pda.killswitch(a))
        .chain(policies.iter().map(|(a, id)| f.builder.pda.policy(a, *id)))
        .collect();
    let mut accounts = chain::accounts(&f.rpc, &keys)
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
        if policy.is_none_or(|p| p.base().is_retired()) {
            retired.insert(*key);
        }
    }
    Ok((paused, retired))
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
    let mut agents: Vec<Pubkey> = open
        .iter()
        .filter_map(|s| s.gate.map(|g| g.payer_asset))
        .collect();
    agents.sort();
    agents.dedup();
    let mut policies: Vec<(Pubkey, u32)> = open
        .iter()
        .filter_map(|s| s.gate.map(|g| (g.payer_asset, g.policy_id)))
        .collect();
    policies.sort();
    policies.dedup();
    let mut retired = HashSet::new();
    match stops(f, &agents, &policies).await {
        Ok((p, r)) => {
            f.sessions.set_paused(p.clone());
            t.paused = p.into_iter().collect();
            f.sessions.set_retired(r.clone());
            retired = r;
        }
        Err(e) => t.errors.push(e),
    }
    // Every replica reads the kill switches (each refuses vouchers from its own read); one
    // replica a round closes and redeems.
    match f.sessions.take_tick(f.session_settings.poll).await {
        Ok(true) => {}
        Ok(false) => return t,
        Err(e) => {
            t.errors.push(e.to_string());
            return t;
        }
    }
    f.sessions.forget_closed(now_unix() - SESSION_TTL_SECS);
    let Some(keypair) = f.key.keypair() else {
        return t;
    };
    let mut due: Vec<Session> = Vec::new();
    let now = now_unix();
    let age = i64::try_from(f.session_settings.redeem_age.as_secs()).unwrap_or(i64::MAX);
    let stalled_after =
        i64::try_from((f.send_timeout * 2 + f.confirm_timeout).as_secs()).unwrap_or(i64::MAX);
    for s in open {
        let paused = s.gate.is_some_and(|g| {
            t.paused.contains(&g.payer_asset) || retired.contains(&(g.payer_asset, g.policy_id))
        });
        // A close that failed (a refund's, or a paused payer's) is tried again, once the one
        // under way would have finished.
        let under_way = s.closing_at != 0 && now.saturating_sub(s.closing_at) <= stalled_after;
        let stalled = s.closing_at != 0 && !under_way;
        let idle = s.closing_at == 0
            && f.session_settings.max_idle.is_some_and(|d| {
                now.saturating_sub(s.active_at) >= i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
            });
        if (paused && !under_way) || stalled || idle {
            match f.close_session(&s, keypair).await {
                Ok(_) if idle && !paused => t.idle.push(s.channel),
                Ok(_) => t.closed.push(s.channel),
                Err(r) => t
                    .errors
                    .push(format!("closing {}: {}", s.channel, r.message)),
            }
            continue;
        }
        let by_amount = f.session_settings.redeem_amount > 0
            && s.unredeemed() >= f.session_settings.redeem_amount;
        let by_age = s.unredeemed_since > 0 && now.saturating_sub(s.unredeemed_since) >= age;
        if s.unredeemed() > 0 && (by_amount || by_age) {
            due.push(s);
        }
    }
    for run in due.chunks(batch::MAX_CHANNELS_PER_TRANSACTION) {
        match f.redeem(run, keypair).await {
            Ok(_) => t.redeemed.extend(run.iter().map(|s| s.channel)),
            Err(r) => t.errors.push(format!("applying vouchers: {}", r.message)),
        }
    }
    t
}
