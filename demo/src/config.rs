//! The demo service's configuration: who it is (service key, payee agent, recipient), what
//! it charges, and where its facilitator is.

use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Keypair;
use solana_sdk::signer::Signer;
use std::sync::Arc;
use trust_gate_client::settle::Funding;
use trust_gate_migrations::{demo, DemoWorld};

#[derive(Clone, Debug)]
pub struct DemoConfig {
    /// The facilitator's base URL (its /verify and /settle).
    pub facilitator_url: String,
    /// The URL clients reach this server at (signed into every challenge).
    pub public_url: String,
    /// Signs challenges; the facilitator must trust its public key.
    pub service_key: Arc<Keypair>,
    /// The payee agent.
    pub payee_asset: Pubkey,
    /// The wallet paid (`payTo`): the payee agent's recipient.
    pub pay_to: Pubkey,
    pub mint: Pubkey,
    /// The Token-2022 mint of metered payments (payment channels) and the payers' policy
    /// for it.
    pub metered_mint: Pubkey,
    pub metered_policy_id: u32,
    /// Atomic units of `mint` per request.
    pub price: u64,
    /// GET /session's price a request (metered mint), and GET /metered's price a unit and
    /// the most units one request may use (its ceiling is their product).
    pub session_price: u64,
    pub unit_price: u64,
    pub max_units: u64,
    pub policy_id: u32,
    /// How long a challenge stays payable.
    pub max_timeout_seconds: u64,
    /// The demo payers, shown by /health.
    pub counterparties: Vec<Counterparty>,
    /// Whether a paid request must carry a payment id (x402's `payment-identifier`,
    /// `required: true` in every 402).
    pub payment_id_required: bool,
    /// The Redis where replicas share payment ids (`redis://host:port`); else kept in
    /// process.
    pub redis_url: Option<String>,
    /// The payee agent's live owner or agent wallet. With it the server gives held shares
    /// back to their payers: it serves x402's `refund` extension (POST /refund) and
    /// advertises it in the 402 of a payment that holds a share back (`crate::refund`).
    pub payee_signer: Option<Arc<Keypair>>,
    /// The cluster's JSON-RPC the refunds read and send through; `None`: the facilitator's
    /// (the `rpcUrl` origin its /healthz names).
    pub rpc_url: Option<String>,
}

/// A payer agent the demo knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counterparty {
    pub tier: u8,
    pub asset: Pubkey,
    /// Where its payments come from (its policy's funding).
    pub funding: Funding,
}

impl DemoConfig {
    /// The demo world's service (deterministic keys; see `trust-gate up`).
    pub fn demo_world(facilitator_url: &str, public_url: &str) -> Self {
        let w = DemoWorld::new();
        DemoConfig {
            facilitator_url: facilitator_url.trim_end_matches('/').to_string(),
            public_url: public_url.trim_end_matches('/').to_string(),
            service_key: Arc::new(w.service_key.insecure_clone()),
            payee_asset: w.service.asset(),
            pay_to: w.service.owner.pubkey(),
            mint: w.mint(),
            metered_mint: w.metered_mint(),
            metered_policy_id: demo::METERED_POLICY_ID,
            price: demo::PRICE,
            session_price: 1_000,
            unit_price: 100_000,
            max_units: 20,
            policy_id: demo::POLICY_ID,
            max_timeout_seconds: 300,
            counterparties: w
                .payers
                .iter()
                .map(|p| Counterparty {
                    tier: p.tier,
                    asset: p.asset(),
                    funding: p.funding,
                })
                .collect(),
            payment_id_required: false,
            redis_url: None,
            payee_signer: None,
            rpc_url: None,
        }
    }

    /// The demo world's low-tier payee (`service-tier-1`), which accepts a holdback, as the
    /// holdback payer pays it: under its policy with a holdback schedule
    /// (`demo::HOLDBACK_POLICY_ID`), so that its challenges state the share held back. Its
    /// owner's key signs the refunds of those shares (POST /refund).
    pub fn held_service(facilitator_url: &str, public_url: &str) -> Self {
        let w = DemoWorld::new();
        DemoConfig {
            payee_asset: w.held_service.asset(),
            pay_to: w.held_service.owner.pubkey(),
            policy_id: demo::HOLDBACK_POLICY_ID,
            payee_signer: Some(Arc::new(w.held_service.owner.insecure_clone())),
            ..DemoConfig::demo_world(facilitator_url, public_url)
        }
    }

    pub fn resource_url(&self) -> String {
        format!("{}/protected", self.public_url)
    }

    /// Where payers ask for a held share back (x402's `refund` extension's `refundEndpoint`).
    pub fn refund_url(&self) -> String {
        format!("{}/refund", self.public_url)
    }

    /// The metered route's URL (upto: a ceiling escrowed, the units used charged).
    pub fn metered_url(&self) -> String {
        format!("{}/metered", self.public_url)
    }

    /// The session route's URL (batch-settlement: one voucher a request).
    pub fn session_url(&self) -> String {
        format!("{}/session", self.public_url)
    }

    /// The payer used when a request names none: the first of the highest-tier demo agents
    /// (the wallet-funded tier-3 agent).
    pub fn default_payer(&self) -> Option<Pubkey> {
        let top = self.counterparties.iter().map(|c| c.tier).max()?;
        self.counterparties
            .iter()
            .find(|c| c.tier == top)
            .map(|c| c.asset)
    }
}
