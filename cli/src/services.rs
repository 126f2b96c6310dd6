//! `trust-gate facilitator` and `trust-gate demo`: each service alone against any RPC URL
//! (and the start-up code `trust-gate up` shares).

use clap::Args;
use solana_sdk::signer::Signer;
use std::net::{IpAddr, SocketAddr};
use trust_gate_facilitator::config::validate_url;
use trust_gate_facilitator::RawSettings;
use trust_gate_migrations::DemoWorld;

#[derive(Args, Clone)]
pub struct FacilitatorArgs {
    #[arg(long, env = "FACILITATOR_HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,
    #[arg(long, env = "FACILITATOR_PORT", default_value_t = trust_gate_facilitator::DEFAULT_PORT)]
    pub port: u16,
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    pub rpc_url: String,
    /// solana-localnet, solana-devnet or solana-mainnet.
    #[arg(long, env = "NETWORK", default_value = "solana-localnet")]
    pub network: String,
    /// The facilitator's keypair: a JSON keypair file or a base58 secret key. On a localnet
    /// the demo world's facilitator is the default.
    #[arg(long, env = "FACILITATOR_KEYPAIR", hide_env_values = true)]
    pub keypair: Option<String>,
    /// Comma-separated service public keys whose challenges are settled. On a localnet the
    /// demo service's key is the default.
    #[arg(long, env = "TRUSTED_SERVICE_KEYS")]
    pub trusted_service_keys: Option<String>,
    /// Policy id used by /verify when a request names none.
    #[arg(long, env = "DEFAULT_POLICY_ID")]
    pub default_policy_id: Option<String>,
    /// Must be `true` when set: settlement is never split.
    #[arg(long, env = "ATOMICITY_ENFORCED")]
    pub atomicity_enforced: Option<String>,
    /// The highest priority fee per compute unit (micro-lamports) the facilitator co-pays;
    /// default 5000000, as the x402 exact scheme.
    #[arg(long, env = "MAX_COMPUTE_UNIT_PRICE")]
    pub max_compute_unit_price: Option<String>,
    /// The priority-fee caps past the unit price, and the rate limits (boxed: they are many).
    #[command(flatten)]
    pub limits: Box<LimitArgs>,
    /// The Redis that facilitator replicas share (redis://host:port): each payer's
    /// settlements run one at a time across all of them, and a retry on any replica finds the
    /// settlement another sent. Unset: in process, for one facilitator.
    #[arg(long, env = "REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
}

/// The facilitator's caps on what a co-signed transaction may cost it, past the unit price,
/// and its rate limits (each per process).
#[derive(Args, Clone)]
pub struct LimitArgs {
    /// The highest compute-unit limit a co-signed transaction may request; default 400000.
    #[arg(long, env = "MAX_COMPUTE_UNIT_LIMIT")]
    pub max_compute_unit_limit: Option<String>,
    /// The highest priority fee (unit limit x unit price) of one co-signed transaction, in
    /// lamports; default 100000 (0.0001 SOL).
    #[arg(long, env = "MAX_PRIORITY_FEE_LAMPORTS")]
    pub max_priority_fee_lamports: Option<String>,
    /// With a unit price, a transaction may request at most the units its simulation used
    /// times (100 + this) / 100, plus --compute-unit-limit-margin-units; default and least 25.
    #[arg(long, env = "COMPUTE_UNIT_LIMIT_MARGIN_PERCENT")]
    pub compute_unit_limit_margin_percent: Option<String>,
    /// See --compute-unit-limit-margin-percent; default and least 10000.
    #[arg(long, env = "COMPUTE_UNIT_LIMIT_MARGIN_UNITS")]
    pub compute_unit_limit_margin_units: Option<String>,
    /// Requests a second one HTTP peer address may send (every route but /healthz); default
    /// 1000, 0 for no limit. Per process.
    #[arg(long, env = "RATE_LIMIT_PER_ADDRESS")]
    pub rate_limit_per_address: Option<String>,
    /// Requests one address may send at once; default 2000.
    #[arg(long, env = "RATE_LIMIT_PER_ADDRESS_BURST")]
    pub rate_limit_per_address_burst: Option<String>,
    /// Settlements a second of one payer agent; default 10, 0 for no limit. Per process.
    #[arg(long, env = "RATE_LIMIT_PER_PAYER")]
    pub rate_limit_per_payer: Option<String>,
    /// Settlements of one payer agent at once; default 20.
    #[arg(long, env = "RATE_LIMIT_PER_PAYER_BURST")]
    pub rate_limit_per_payer_burst: Option<String>,
    /// Settlements of one payer agent that may wait for its turn (429 payer_busy past it);
    /// default 32. Per process.
    #[arg(long, env = "MAX_WAITING_PER_PAYER")]
    pub max_waiting_per_payer: Option<String>,
    /// Seconds between the crank's rounds, which close the payment records whose deadline
    /// and dispute window have passed (their rent back to the facilitator); default 60, 0
    /// for never (then reclaim with `trust-gate reclaim`).
    #[arg(long, env = "RECLAIM_INTERVAL_SECS")]
    pub reclaim_interval_secs: Option<String>,
    /// Milliseconds between reads of the kill switches of the payers of open
    /// batch-settlement sessions: the most a pause takes to stop their vouchers; default 1000.
    #[arg(long, env = "KILL_SWITCH_POLL_MS")]
    pub kill_switch_poll_ms: Option<String>,
    /// Seconds after which an accepted voucher is applied on chain (with up to three other
    /// channels' in one transaction); default 300.
    #[arg(long, env = "BATCH_REDEEM_AGE_SECS")]
    pub batch_redeem_age_secs: Option<String>,
    /// Atomic units accepted and not yet applied that make a session's vouchers applied at
    /// the next round; default 0 (only by age, and at the close).
    #[arg(long, env = "BATCH_REDEEM_AMOUNT")]
    pub batch_redeem_amount: Option<String>,
    /// Seconds without a voucher after which a session is closed at its latest voucher (its
    /// channel's rent back to the facilitator); default 604800 (a week), 0 for never.
    #[arg(long, env = "BATCH_MAX_IDLE_SECS")]
    pub batch_max_idle_secs: Option<String>,
    /// Seconds a payment held for an approval stays listed (GET /approvals); default 86400
    /// (a day), at most 604800.
    #[arg(long, env = "APPROVAL_PENDING_SECS")]
    pub approval_pending_secs: Option<String>,
    /// Pending approvals kept per payer agent (the one expiring first goes past it);
    /// default 16.
    #[arg(long, env = "APPROVALS_PER_PAYER")]
    pub approvals_per_payer: Option<String>,
    /// The longest, in seconds, between two reads of a session's channel (each is read
    /// every tenth of its grace period, at most this); default 60.
    #[arg(long, env = "BATCH_CHANNEL_POLL_SECS")]
    pub batch_channel_poll_secs: Option<String>,
    /// Unclosed upto channels one payer wallet may have the facilitator sponsor; default 2.
    #[arg(long, env = "UPTO_CHANNELS_PER_PAYER")]
    pub upto_channels_per_payer: Option<String>,
    /// Unclosed session channels one payer wallet may have the facilitator sponsor;
    /// default 2.
    #[arg(long, env = "SESSIONS_PER_PAYER")]
    pub sessions_per_payer: Option<String>,
    /// The channel rent the facilitator advances in all, in lamports; default 10000000000.
    #[arg(long, env = "MAX_RENT_ADVANCED_LAMPORTS")]
    pub max_rent_advanced_lamports: Option<String>,
    /// Lamports the facilitator keeps for settlements: no channel is opened below it;
    /// default 50000000.
    #[arg(long, env = "MIN_FEE_PAYER_BALANCE_LAMPORTS")]
    pub min_fee_payer_balance_lamports: Option<String>,
    /// Comma-separated mints the plain upto and batch-settlement schemes take; default the
    /// network's stock x402 assets (on a localnet, the demo world's mints).
    #[arg(long, env = "PLAIN_ASSETS")]
    pub plain_assets: Option<String>,
    /// true: the plain channel schemes take only offers a trusted service signed
    /// (extra.offerSignature); default false.
    #[arg(long, env = "PLAIN_OFFERS_SIGNED")]
    pub plain_offers_signed: Option<String>,
    /// true: the crank pulls the gated subscriptions this facilitator sends when a pull is
    /// due (docs/subscriptions.md); default true on a localnet, else false.
    #[arg(long, env = "PULL_SUBSCRIPTIONS")]
    pub pull_subscriptions: Option<String>,
}

impl LimitArgs {
    /// The values `trust-gate up` passes through from its environment.
    fn from_env() -> Self {
        LimitArgs {
            max_compute_unit_limit: env("MAX_COMPUTE_UNIT_LIMIT"),
            max_priority_fee_lamports: env("MAX_PRIORITY_FEE_LAMPORTS"),
            compute_unit_limit_margin_percent: env("COMPUTE_UNIT_LIMIT_MARGIN_PERCENT"),
            compute_unit_limit_margin_units: env("COMPUTE_UNIT_LIMIT_MARGIN_UNITS"),
            rate_limit_per_address: env("RATE_LIMIT_PER_ADDRESS"),
            rate_limit_per_address_burst: env("RATE_LIMIT_PER_ADDRESS_BURST"),
            rate_limit_per_payer: env("RATE_LIMIT_PER_PAYER"),
            rate_limit_per_payer_burst: env("RATE_LIMIT_PER_PAYER_BURST"),
            max_waiting_per_payer: env("MAX_WAITING_PER_PAYER"),
            reclaim_interval_secs: env("RECLAIM_INTERVAL_SECS"),
            kill_switch_poll_ms: env("KILL_SWITCH_POLL_MS"),
            batch_redeem_age_secs: env("BATCH_REDEEM_AGE_SECS"),
            batch_redeem_amount: env("BATCH_REDEEM_AMOUNT"),
            batch_max_idle_secs: env("BATCH_MAX_IDLE_SECS"),
            approval_pending_secs: env("APPROVAL_PENDING_SECS"),
            approvals_per_payer: env("APPROVALS_PER_PAYER"),
            batch_channel_poll_secs: env("BATCH_CHANNEL_POLL_SECS"),
            upto_channels_per_payer: env("UPTO_CHANNELS_PER_PAYER"),
            sessions_per_payer: env("SESSIONS_PER_PAYER"),
            max_rent_advanced_lamports: env("MAX_RENT_ADVANCED_LAMPORTS"),
            min_fee_payer_balance_lamports: env("MIN_FEE_PAYER_BALANCE_LAMPORTS"),
            plain_assets: env("PLAIN_ASSETS"),
            plain_offers_signed: env("PLAIN_OFFERS_SIGNED"),
            pull_subscriptions: env("PULL_SUBSCRIPTIONS"),
        }
    }
}

impl FacilitatorArgs {
    /// The facilitator that serves the demo world's service on `rpc_url`: the demo
    /// facilitator's key on a localnet (its key is public, being deterministic), else
    /// `FACILITATOR_KEYPAIR`; the demo service trusted; demo policy 1 by default.
    pub fn for_demo(host: IpAddr, port: u16, rpc_url: &str, network: &str) -> Self {
        let keypair = if network == "solana-localnet" {
            None
        } else {
            std::env::var("FACILITATOR_KEYPAIR").ok()
        };
        FacilitatorArgs {
            host,
            port,
            rpc_url: rpc_url.to_string(),
            network: network.to_string(),
            keypair,
            trusted_service_keys: Some(DemoWorld::new().service_key.pubkey().to_string()),
            default_policy_id: Some(trust_gate_migrations::demo::POLICY_ID.to_string()),
            atomicity_enforced: None,
            max_compute_unit_price: env("MAX_COMPUTE_UNIT_PRICE"),
            limits: Box::new(LimitArgs::from_env()),
            redis_url: None,
        }
    }

    /// The settings, with the demo world's keys as localnet defaults.
    pub fn settings(&self) -> RawSettings {
        let localnet = self
            .network
            .parse::<trust_gate_client::Network>()
            .is_ok_and(|n| n == trust_gate_client::Network::Localnet);
        let world = localnet.then(DemoWorld::new);
        RawSettings {
            rpc_url: self.rpc_url.clone(),
            keypair: self
                .keypair
                .clone()
                .or_else(|| world.as_ref().map(|w| w.facilitator.to_base58_string())),
            network: self.network.clone(),
            atomicity_enforced: self.atomicity_enforced.clone(),
            default_policy_id: self.default_policy_id.clone(),
            trusted_services: self
                .trusted_service_keys
                .clone()
                .or_else(|| world.as_ref().map(|w| w.service_key.pubkey().to_string())),
            max_compute_unit_price: self.max_compute_unit_price.clone(),
            max_compute_unit_limit: self.limits.max_compute_unit_limit.clone(),
            max_priority_fee_lamports: self.limits.max_priority_fee_lamports.clone(),
            compute_unit_limit_margin_percent: self
                .limits
                .compute_unit_limit_margin_percent
                .clone(),
            compute_unit_limit_margin_units: self.limits.compute_unit_limit_margin_units.clone(),
            rate_limit_per_address: self.limits.rate_limit_per_address.clone(),
            rate_limit_per_address_burst: self.limits.rate_limit_per_address_burst.clone(),
            rate_limit_per_payer: self.limits.rate_limit_per_payer.clone(),
            rate_limit_per_payer_burst: self.limits.rate_limit_per_payer_burst.clone(),
            max_waiting_per_payer: self.limits.max_waiting_per_payer.clone(),
            redis_url: self.redis_url.clone(),
            reclaim_interval_secs: self.limits.reclaim_interval_secs.clone(),
            kill_switch_poll_ms: self.limits.kill_switch_poll_ms.clone(),
            batch_redeem_age_secs: self.limits.batch_redeem_age_secs.clone(),
            batch_redeem_amount: self.limits.batch_redeem_amount.clone(),
            batch_max_idle_secs: self.limits.batch_max_idle_secs.clone(),
            approval_pending_secs: self.limits.approval_pending_secs.clone(),
            approvals_per_payer: self.limits.approvals_per_payer.clone(),
            batch_channel_poll_secs: self.limits.batch_channel_poll_secs.clone(),
            upto_channels_per_payer: self.limits.upto_channels_per_payer.clone(),
            sessions_per_payer: self.limits.sessions_per_payer.clone(),
            max_rent_advanced_lamports: self.limits.max_rent_advanced_lamports.clone(),
            min_fee_payer_balance_lamports: self.limits.min_fee_payer_balance_lamports.clone(),
            // The demo world's mints on a localnet, whose plain offers the demo makes.
            plain_assets: self.limits.plain_assets.clone().or_else(|| {
                world
                    .as_ref()
                    .map(|w| format!("{},{}", w.mint(), w.metered_mint()))
            }),
            plain_offers_signed: self.limits.plain_offers_signed.clone(),
            // A localnet's subscriptions (the demo world's) are pulled unless turned off.
            pull_subscriptions: self
                .limits
                .pull_subscriptions
                .clone()
                .or_else(|| localnet.then(|| "true".into())),
        }
    }
}

/// An environment variable, when set.
fn env(variable: &str) -> Option<String> {
    std::env::var(variable).ok()
}

/// Validates the configuration, checks it against the cluster, and serves.
pub async fn start_facilitator(
    a: &FacilitatorArgs,
) -> Result<trust_gate_facilitator::Server, String> {
    let config = a.settings().validate().map_err(|e| e.to_string())?;
    let key = config.mount.facilitator.pubkey();
    let server = trust_gate_facilitator::start(config, SocketAddr::new(a.host, a.port))
        .await
        .map_err(|e| e.to_string())?;
    let store = server.facilitator.store.name();
    let rpc = &server.facilitator.chain.rpc_origin;
    tracing::info!(url = %server.url(), facilitator = %key, %rpc, lock_store = %store, "facilitator listening");
    Ok(server)
}

pub async fn facilitator(a: FacilitatorArgs) -> Result<(), String> {
    let server = start_facilitator(&a).await?;
    println!("Facilitator listening on {}", server.url());
    shutdown_signal().await;
    Ok(())
}

#[derive(Args, Clone)]
pub struct DemoArgs {
    #[arg(long, env = "DEMO_HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,
    #[arg(long, env = "DEMO_PORT", default_value_t = trust_gate_demo::DEFAULT_PORT)]
    pub port: u16,
    /// The facilitator that verifies and settles (it must be up).
    #[arg(long, env = "FACILITATOR_URL", default_value = "http://127.0.0.1:4020")]
    pub facilitator_url: String,
    /// The URL clients use to reach the demo (signed into challenges); default
    /// http://<host>:<port>.
    #[arg(long, env = "DEMO_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Every paid request must carry a payment id (x402's payment-identifier, declared
    /// `required: true`); without one it is refused with 400.
    #[arg(long, env = "DEMO_PAYMENT_ID_REQUIRED")]
    pub payment_id_required: bool,
    /// The Redis where demo replicas share payment ids (redis://host:port); default: kept in
    /// process.
    #[arg(long, env = "DEMO_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
    /// Serve the demo world's low-tier payee (`service-tier-1`), which accepts a holdback,
    /// paid under the holdback payer's policy (docs/holdback.md), instead of the demo service.
    #[arg(long)]
    pub held_service: bool,
}

pub async fn start_demo(a: &DemoArgs) -> Result<trust_gate_demo::Server, String> {
    let facilitator_url =
        validate_url("FACILITATOR_URL", &a.facilitator_url).map_err(|e| e.to_string())?;
    let public_url = match &a.public_url {
        Some(u) => validate_url("DEMO_PUBLIC_URL", u).map_err(|e| e.to_string())?,
        None => format!("http://{}", SocketAddr::new(a.host, a.port)),
    };
    let world = if a.held_service {
        trust_gate_demo::DemoConfig::held_service(&facilitator_url, &public_url)
    } else {
        trust_gate_demo::DemoConfig::demo_world(&facilitator_url, &public_url)
    };
    let config = trust_gate_demo::DemoConfig {
        payment_id_required: a.payment_id_required,
        redis_url: a.redis_url.clone(),
        ..world
    };
    let server = trust_gate_demo::start(config, SocketAddr::new(a.host, a.port)).await?;
    tracing::info!(url = %server.url(), "demo listening");
    Ok(server)
}

pub async fn demo(a: DemoArgs) -> Result<(), String> {
    let server = start_demo(&a).await?;
    println!("Demo listening on {}", server.url());
    shutdown_signal().await;
    Ok(())
}

/// Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        facilitator: FacilitatorArgs,
    }

    fn validate(args: &[&str]) -> Result<trust_gate_facilitator::Config, String> {
        let mut all = vec!["trust-gate-facilitator"];
        all.extend(args);
        let cli = Cli::try_parse_from(all).map_err(|e| e.to_string())?;
        cli.facilitator
            .settings()
            .validate()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_caps_and_limits_flags_reach_the_facilitator_and_a_bad_one_names_its_variable() {
        let c = validate(&[
            "--max-compute-unit-limit",
            "250000",
            "--max-priority-fee-lamports",
            "50000",
            "--compute-unit-limit-margin-percent",
            "40",
            "--compute-unit-limit-margin-units",
            "12000",
            "--rate-limit-per-address",
            "0",
            "--rate-limit-per-payer",
            "2.5",
            "--rate-limit-per-payer-burst",
            "5",
            "--max-waiting-per-payer",
            "8",
        ])
        .unwrap();
        assert_eq!(
            (
                c.compute.max_unit_limit,
                c.compute.max_priority_fee_lamports,
                c.compute.margin_percent,
                c.compute.margin_units
            ),
            (250_000, 50_000, 40, 12_000)
        );
        assert_eq!(c.limits.per_caller, None);
        assert_eq!(
            c.limits.per_payer,
            Some(trust_gate_facilitator::config::Rate {
                per_second: 2.5,
                burst: 5
            })
        );
        assert_eq!(c.limits.max_waiting_per_payer, 8);
        // Without them, the defaults.
        let d = validate(&[]).unwrap();
        assert_eq!(d.compute, Default::default());
        assert_eq!(d.limits, Default::default());
        let e = validate(&["--max-priority-fee-lamports", "a lot"]).unwrap_err();
        assert!(e.starts_with("MAX_PRIORITY_FEE_LAMPORTS: "), "{e}");
        let e = validate(&["--rate-limit-per-payer=-1"]).unwrap_err();
        assert!(e.starts_with("RATE_LIMIT_PER_PAYER: "), "{e}");
    }

    #[test]
    fn a_localnets_facilitator_pulls_subscriptions_unless_told_not_to() {
        assert!(validate(&[]).unwrap().pull_subscriptions);
        let off = validate(&["--pull-subscriptions", "false"]).unwrap();
        assert!(!off.pull_subscriptions);
        let devnet = validate(&[
            "--network",
            "solana-devnet",
            "--keypair",
            &solana_sdk::signature::Keypair::new().to_base58_string(),
        ])
        .unwrap();
        assert!(!devnet.pull_subscriptions, "off outside a localnet");
    }
}
