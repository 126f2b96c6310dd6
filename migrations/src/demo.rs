//! The demo world: who is in it and what they are configured with. All keys are derived
//! from fixed labels, so docs, tests and the demo services name the same accounts.

use anchor_lang::prelude::Pubkey;
use policy_vault::state::{
    AcceptanceParams, HoldbackAcceptance, HoldbackSchedule, HoldbackTerm, PolicyParams,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::instructions::Subscription;
use trust_gate_client::network::deterministic_keypair;
use trust_gate_client::settle::{Funding, TokenProgram};
use trust_gate_client::subscriptions::RecurringTerms;

/// Decimals of the demo stablecoin.
pub const DECIMALS: u8 = 6;
/// The demo's payment: 0.10 of the stablecoin.
pub const PRICE: u64 = 100_000;
/// The policy every demo payer has.
pub const POLICY_ID: u32 = 1;
/// The policy of metered payments (payment channels in the metered mint) every
/// wallet-funded demo payer has: [`payer_policy`] in the metered mint.
pub const METERED_POLICY_ID: u32 = 2;
/// The policy with a holdback schedule ([`holdback_schedule`]) that [`HOLDBACK_PAYER`] has,
/// in the demo mint: what it pays the low-tier service under.
pub const HOLDBACK_POLICY_ID: u32 = 3;
/// The demo payer with the holdback policy.
pub const HOLDBACK_PAYER: &str = "payer-tier-3";
/// The demo payer whose owner subscribes it to the demo service ([`DemoWorld::subscription`]).
pub const SUBSCRIBER: &str = "subscriber";
/// The demo subscription's pull: 1.00 of the demo mint per period.
pub const SUBSCRIPTION_AMOUNT: u64 = 1_000_000;
/// The demo subscription's period: a day.
pub const SUBSCRIPTION_PERIOD_SECS: u64 = 86_400;
/// How long the demo subscription runs from its seeding: a year.
pub const SUBSCRIPTION_LIFE_SECS: i64 = 365 * 86_400;
/// Tokens each demo payer holds after seeding (100.00).
pub const PAYER_BALANCE: u64 = 100_000_000;
/// The payer tier the demo service asks for.
pub const SERVICE_MIN_PAYER_TIER: u8 = 2;
/// Capability namespaces registered by the migrations (name, version, schema URI).
pub const NAMESPACES: [(&str, &str, &str); 2] = [
    (
        "kyc.tier-1.v1",
        "1.0.0",
        "https://schemas.trust-gate.dev/kyc.tier-1.v1.json",
    ),
    (
        "audit.smart-contract.v1",
        "1.0.0",
        "https://schemas.trust-gate.dev/audit.smart-contract.v1.json",
    ),
];

/// The demo payers' spending policy for `mint`: per-transaction, daily and weekly caps, a
/// one-hour velocity window and the kill switch.
pub fn payer_policy(mint: Pubkey) -> PolicyParams {
    PolicyParams {
        kinds: 0x01 | 0x02 | 0x04,
        gate_mode: 0,
        mint,
        per_tx_cap: 5_000_000,
        daily_cap: 20_000_000,
        weekly_cap: 50_000_000,
        velocity_window_secs: 3_600,
        velocity_max_in_window: 10_000_000,
        tier0_decay_bps: 5_000,
        min_counterparty_tier: 0,
        max_counterparty_risk: 255,
        min_counterparty_confidence: 0,
        unrated_treatment: 1,
        required_capability: [0; 32],
        accepted_attestors: [Pubkey::default(); 2],
        funding: policy_vault::state::funding::WALLET,
    }
}

/// The demo's holdback schedule (docs/holdback.md): short holds, so that the localnet shows
/// a release within minutes. Tier 0 and unrated payees: 20 % for 10 minutes; tier 1: 10 % for
/// 2 minutes; tier 2: 5 % for a minute; tiers 3 and 4: nothing. Disputes go to `arbiter`.
pub fn holdback_schedule(arbiter: Pubkey) -> HoldbackSchedule {
    let t = |share_bps, hold_secs| HoldbackTerm {
        share_bps,
        hold_secs,
    };
    HoldbackSchedule {
        terms: [
            t(2_000, 600),
            t(1_000, 120),
            t(500, 60),
            t(0, 0),
            t(0, 0),
            t(2_000, 600),
        ],
        arbiter,
    }
}

/// What the low-tier demo service accepts: any payer, and a holdback of up to 20 % for up
/// to 10 minutes decided by `arbiter`.
pub fn held_service_acceptance(arbiter: Pubkey) -> AcceptanceParams {
    AcceptanceParams {
        min_payer_tier: 0,
        unrated_treatment: 1,
        holdback: HoldbackAcceptance {
            max_share_bps: 2_000,
            max_hold_secs: 600,
            arbiters: [arbiter, Pubkey::default()],
        },
        ..service_acceptance()
    }
}

/// [`payer_policy`] paid from the agent's policy vault: the same limits, but binding, since
/// the agent's hot key holds nothing and the vault opens only to a gated settlement.
pub fn vault_payer_policy(mint: Pubkey) -> PolicyParams {
    PolicyParams {
        funding: policy_vault::state::funding::VAULT,
        ..payer_policy(mint)
    }
}

/// What the demo service asks of its payers: tier ≥ [`SERVICE_MIN_PAYER_TIER`]; unrated
/// payers are denied.
pub fn service_acceptance() -> AcceptanceParams {
    AcceptanceParams {
        min_payer_tier: SERVICE_MIN_PAYER_TIER,
        gate_mode: 0,
        max_payer_risk: 255,
        min_payer_confidence: 0,
        unrated_treatment: 0,
        required_capability: [0; 32],
        accepted_attestors: [Pubkey::default(); 2],
        holdback: Default::default(),
    }
}

/// A registered agent: the owner wallet and the asset key; a vault-funded payer also has a
/// hot key (the registry's agent wallet), which signs its payments and holds nothing.
pub struct DemoAgent {
    pub name: &'static str,
    pub tier: u8,
    pub owner: Keypair,
    pub asset: Keypair,
    pub funding: Funding,
    /// The agent wallet (vault-funded payers): not a member of the policy authority.
    pub hot_key: Option<Keypair>,
}

impl DemoAgent {
    fn new(name: &'static str, tier: u8) -> Self {
        DemoAgent {
            name,
            tier,
            owner: deterministic_keypair(&format!("demo/{name}/owner")),
            asset: deterministic_keypair(&format!("demo/{name}/asset")),
            funding: Funding::Wallet,
            hot_key: None,
        }
    }

    /// A payer whose funds sit in its policy vault; its hot key signs its payments.
    fn vault_funded(name: &'static str, tier: u8) -> Self {
        DemoAgent {
            funding: Funding::Vault,
            hot_key: Some(deterministic_keypair(&format!("demo/{name}/hot-key"))),
            ..DemoAgent::new(name, tier)
        }
    }

    pub fn asset(&self) -> Pubkey {
        self.asset.pubkey()
    }

    /// The key that signs the agent's payments: the hot key when it has one, else the owner.
    pub fn signer(&self) -> &Keypair {
        self.hot_key.as_ref().unwrap_or(&self.owner)
    }
}

/// Every key of the demo world.
pub struct DemoWorld {
    pub facilitator: Keypair,
    /// The service that signs x402 challenges (not the facilitator).
    pub service_key: Keypair,
    pub mint: Keypair,
    pub mint_authority: Keypair,
    /// A second stablecoin-like mint, in Token-2022, for metered payments (payment channels):
    /// a channel that pays two parties at once (the payee and the payer's refund) needs one
    /// call per payout, which Token-2022 makes and the localnet's classic SPL Token cannot
    /// batch (see docs/channels.md). The same authority and decimals as `mint`.
    pub metered_mint: Keypair,
    /// The demo service agent (payee).
    pub service: DemoAgent,
    /// A second payee, of engine tier 1, that accepts a holdback: [`HOLDBACK_PAYER`] pays it
    /// under [`HOLDBACK_POLICY_ID`], which holds a share back from a payee of its tier.
    pub held_service: DemoAgent,
    /// Decides disputes of held payments to [`DemoWorld::held_service`].
    pub arbiter: Keypair,
    /// Payer agents with engine tiers 0, 1 and 3 paying from their owners' wallets, a
    /// second tier-3 agent paying from its policy vault, and [`SUBSCRIBER`], a tier-3 agent
    /// paying from its owner's wallet, whose owner subscribed it to the service: the
    /// facilitator's crank pulls it once a day.
    pub payers: [DemoAgent; 5],
    pub attestor: Keypair,
}

impl Default for DemoWorld {
    fn default() -> Self {
        Self::new()
    }
}

impl DemoWorld {
    pub fn new() -> Self {
        DemoWorld {
            facilitator: deterministic_keypair("demo/facilitator"),
            service_key: deterministic_keypair("demo/service-key"),
            mint: deterministic_keypair("demo/mint"),
            mint_authority: deterministic_keypair("demo/mint-authority"),
            metered_mint: deterministic_keypair("demo/metered-mint"),
            service: DemoAgent::new("service", 3),
            held_service: DemoAgent::new("service-tier-1", 1),
            arbiter: deterministic_keypair("demo/arbiter"),
            payers: [
                DemoAgent::new("payer-tier-0", 0),
                DemoAgent::new("payer-tier-1", 1),
                DemoAgent::new("payer-tier-3", 3),
                DemoAgent::vault_funded("payer-tier-3-vault", 3),
                DemoAgent::new(SUBSCRIBER, 3),
            ],
            attestor: deterministic_keypair("demo/attestor"),
        }
    }

    pub fn mint(&self) -> Pubkey {
        self.mint.pubkey()
    }

    /// The Token-2022 mint of metered payments (see [`DemoWorld::metered_mint`]).
    pub fn metered_mint(&self) -> Pubkey {
        self.metered_mint.pubkey()
    }

    /// The wallet-funded payer agent with engine tier `tier` (the first of the list: not the
    /// subscriber).
    pub fn payer(&self, tier: u8) -> Option<&DemoAgent> {
        self.payers
            .iter()
            .find(|a| a.tier == tier && a.funding == Funding::Wallet)
    }

    /// The vault-funded payer agent.
    pub fn vault_payer(&self) -> &DemoAgent {
        self.payers
            .iter()
            .find(|a| a.funding == Funding::Vault)
            .expect("the demo world has a vault-funded payer")
    }

    /// The demo payers' spending policy (see [`payer_policy`]).
    pub fn payer_policy(&self) -> PolicyParams {
        payer_policy(self.mint())
    }

    /// `agent`'s spending policy: [`payer_policy`], from the vault when it is vault-funded.
    pub fn policy_of(&self, agent: &DemoAgent) -> PolicyParams {
        match agent.funding {
            Funding::Wallet => payer_policy(self.mint()),
            Funding::Vault => vault_payer_policy(self.mint()),
        }
    }

    /// The payer with the holdback policy ([`HOLDBACK_PAYER`]).
    pub fn holdback_payer(&self) -> &DemoAgent {
        self.payers
            .iter()
            .find(|a| a.name == HOLDBACK_PAYER)
            .expect("the demo world has the holdback payer")
    }

    /// The payer whose owner subscribed it to the service ([`SUBSCRIBER`]).
    pub fn subscriber(&self) -> &DemoAgent {
        self.payers
            .iter()
            .find(|a| a.name == SUBSCRIBER)
            .expect("the demo world has the subscriber")
    }

    /// The demo subscription (docs/subscriptions.md): [`SUBSCRIBER`]'s owner lets the
    /// facilitator pull [`SUBSCRIPTION_AMOUNT`] a day for the service under
    /// [`POLICY_ID`], from the seeding until `expiry_ts`. Its delegation's address does not
    /// depend on the dates.
    pub fn subscription(&self, expiry_ts: i64) -> Subscription {
        let subscriber = self.subscriber();
        Subscription {
            delegator: subscriber.owner.pubkey(),
            payer_asset: subscriber.asset(),
            payee_asset: self.service.asset(),
            facilitator: self.facilitator.pubkey(),
            mint: self.mint(),
            token_program: TokenProgram::SplToken,
            policy_id: POLICY_ID,
            terms: RecurringTerms {
                nonce: 1,
                amount_per_period: SUBSCRIPTION_AMOUNT,
                period_length_s: SUBSCRIPTION_PERIOD_SECS,
                start_ts: 0,
                expiry_ts,
            },
        }
    }

    /// [`HOLDBACK_PAYER`]'s policy [`HOLDBACK_POLICY_ID`]: [`payer_policy`] with
    /// [`holdback_schedule`].
    pub fn holdback_schedule(&self) -> HoldbackSchedule {
        holdback_schedule(self.arbiter.pubkey())
    }

    /// What the demo service asks of its payers (see [`service_acceptance`]).
    pub fn service_acceptance(&self) -> AcceptanceParams {
        service_acceptance()
    }

    /// The demo keys by label, as `trust-gate up` prints them: each agent's name (its
    /// owner: `payer-tier-3`, `service`, ...), `<agent>/hot-key` for a vault-funded payer,
    /// and `facilitator`, `service-key`, `attestor`, `mint-authority`, `arbiter`. Every key is derived
    /// from its label (see `deterministic_keypair`): public knowledge, for the localnet only.
    pub fn keys(&self) -> Vec<(String, &Keypair)> {
        let mut out: Vec<(String, &Keypair)> = vec![
            ("facilitator".into(), &self.facilitator),
            ("service-key".into(), &self.service_key),
            ("attestor".into(), &self.attestor),
            ("mint-authority".into(), &self.mint_authority),
            ("arbiter".into(), &self.arbiter),
        ];
        for a in [&self.service, &self.held_service]
            .into_iter()
            .chain(&self.payers)
        {
            out.push((a.name.to_string(), &a.owner));
            if let Some(hot) = &a.hot_key {
                out.push((format!("{}/hot-key", a.name), hot));
            }
        }
        out
    }

    /// The demo key with `label` (see [`DemoWorld::keys`]).
    pub fn key(&self, label: &str) -> Option<&Keypair> {
        self.keys()
            .into_iter()
            .find(|(l, _)| l == label)
            .map(|(_, k)| k)
    }

    /// A summary for printing and for tools (public keys only).
    pub fn summary(&self) -> DemoSummary {
        DemoSummary {
            facilitator: self.facilitator.pubkey().to_string(),
            service_key: self.service_key.pubkey().to_string(),
            mint: self.mint().to_string(),
            metered_mint: self.metered_mint().to_string(),
            decimals: DECIMALS,
            price: PRICE,
            policy_id: POLICY_ID,
            service: AgentSummary::of(&self.service),
            held_service: AgentSummary::of(&self.held_service),
            holdback_policy_id: HOLDBACK_POLICY_ID,
            arbiter: self.arbiter.pubkey().to_string(),
            payers: self.payers.iter().map(AgentSummary::of).collect(),
            attestor: self.attestor.pubkey().to_string(),
            namespaces: NAMESPACES.iter().map(|n| n.0.to_string()).collect(),
        }
    }
}

/// One agent of the demo world.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSummary {
    /// Its name in the demo.
    pub name: String,
    /// The reputation tier the demo gives it, 0..4.
    pub tier: u8,
    /// Its MPL Core asset (base58): the agent's identity.
    pub asset: String,
    /// The asset's owner (base58).
    pub owner: String,
    /// Where its payments come from: "wallet" or "vault".
    pub funding: Funding,
    /// The vault-funded payer's hot key (agent wallet), which signs its payments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_key: Option<String>,
}

impl AgentSummary {
    fn of(a: &DemoAgent) -> Self {
        AgentSummary {
            name: a.name.to_string(),
            tier: a.tier,
            asset: a.asset().to_string(),
            owner: a.owner.pubkey().to_string(),
            funding: a.funding,
            hot_key: a.hot_key.as_ref().map(|k| k.pubkey().to_string()),
        }
    }
}

/// The demo world in public keys: what `trust-gate up` seeds.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DemoSummary {
    /// The facilitator's key (base58): the fee payer of every settlement.
    pub facilitator: String,
    /// The demo service's key (base58).
    pub service_key: String,
    /// The demo mint (base58).
    pub mint: String,
    /// The Token-2022 mint of metered payments (base58; see [`DemoWorld::metered_mint`]).
    pub metered_mint: String,
    /// The mints' decimals.
    pub decimals: u8,
    /// The protected resource's price, atomic units.
    pub price: u64,
    /// The payers' policy id.
    pub policy_id: u32,
    /// The service agent, the payee.
    pub service: AgentSummary,
    /// The low-tier payee that accepts a holdback.
    pub held_service: AgentSummary,
    /// The policy id under which the holdback payer pays it.
    pub holdback_policy_id: u32,
    /// Who decides disputes of its held payments (base58).
    pub arbiter: String,
    /// The payer agents.
    pub payers: Vec<AgentSummary>,
    /// The demo attestor (base58).
    pub attestor: String,
    /// The capability namespaces registered.
    pub namespaces: Vec<String>,
}
