//! The x402 sessions `gate_pay` keeps open. The first request a session offer pays opens a
//! channel (its deposit decided by the gate); later requests to the same server, for the same
//! payer, payee and asset, pay with vouchers off chain, until the model closes the session
//! (`close_session`) and the unspent deposit goes back. A session whose deposit is spent, or
//! whose voucher the server refused, is retired: the next request opens another, and
//! `close_session` sends the retired ones' refunds too. In process: a restart forgets them
//! (their channels then wait for the facilitator's crank to close them after their grace
//! period).

use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Mutex;
use trust_gate_pay::channels::OpenSession;
use trust_gate_x402::{GateExtension, PaymentRequirements};

/// What makes two requests share a session: the server, and the offer's terms.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct SessionKey {
    /// `scheme://host:port` of the resource.
    pub origin: String,
    pub scheme: String,
    pub network: String,
    pub asset: String,
    pub pay_to: String,
    /// The offer's payer agent (`extra.gate.payerAgentAsset`), empty when plain.
    pub payer_agent: String,
}

impl SessionKey {
    pub fn of(origin: &str, offer: &PaymentRequirements) -> SessionKey {
        SessionKey {
            origin: origin.to_string(),
            scheme: offer.scheme.clone(),
            network: offer.network.clone(),
            asset: offer.asset.clone(),
            pay_to: offer.pay_to.clone(),
            payer_agent: GateExtension::from_requirements(offer)
                .map(|g| g.payer_agent_asset)
                .unwrap_or_default(),
        }
    }
}

/// The sessions of one key: the one in use, and those retired (their deposit spent, or the
/// server refused a voucher) whose refund waits for `close_session`.
#[derive(Default)]
pub struct Slot {
    pub active: Option<OpenSession>,
    pub retired: Vec<OpenSession>,
}

impl Slot {
    pub fn is_empty(&self) -> bool {
        self.active.is_none() && self.retired.is_empty()
    }
}

/// The open sessions, a lock per key: a call paying with one session waits only for another
/// call using the same one (its vouchers are signed one after another), never for calls to
/// other servers. The map's own lock is held for lookups only, never across a request.
#[derive(Default)]
pub struct PaySessions {
    slots: std::sync::Mutex<HashMap<SessionKey, Arc<Mutex<Slot>>>>,
}

impl PaySessions {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<SessionKey, Arc<Mutex<Slot>>>> {
        // A panic while the map was locked leaves it consistent (each change is one call).
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The slot of `key`, made when missing.
    pub fn slot(&self, key: &SessionKey) -> Arc<Mutex<Slot>> {
        self.map().entry(key.clone()).or_default().clone()
    }

    /// Whether `key` has a session in use (one being used by another call counts).
    pub fn has_active(&self, key: &SessionKey) -> bool {
        self.map()
            .get(key)
            .is_some_and(|slot| slot.try_lock().map_or(true, |s| s.active.is_some()))
    }

    /// The slots of an origin (and payer agent, when given).
    pub fn of_origin(
        &self,
        origin: &str,
        payer_agent: Option<&str>,
    ) -> Vec<(SessionKey, Arc<Mutex<Slot>>)> {
        self.map()
            .iter()
            .filter(|(k, _)| k.origin == origin && payer_agent.is_none_or(|p| k.payer_agent == p))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Forgets `key` when nothing is left in its slot.
    pub fn prune(&self, key: &SessionKey) {
        let mut map = self.map();
        if map
            .get(key)
            .is_some_and(|slot| slot.try_lock().is_ok_and(|s| s.is_empty()))
        {
            map.remove(key);
        }
    }
}
