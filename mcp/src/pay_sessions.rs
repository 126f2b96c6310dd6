//! The x402 sessions `gate_pay` keeps open. The first request a session offer pays opens a
//! channel (its deposit decided by the gate); later requests to the same server, for the same
//! payer, payee and asset, pay with vouchers off chain, until the model closes the session
//! (`close_session`) and the unspent deposit goes back. In process: a restart forgets them
//! (their channels then wait for the facilitator's crank to close them after their grace
//! period).

use std::collections::HashMap;
use tokio::sync::Mutex;
use trust_gate_client::pay_channels::OpenSession;
use trust_gate_client::x402::{GateExtension, PaymentRequirements};

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

/// The open sessions. One lock: a session's vouchers are signed one after another anyway,
/// and a call holds it only while it pays with a session.
#[derive(Default)]
pub struct PaySessions {
    pub open: Mutex<HashMap<SessionKey, OpenSession>>,
}
