//! `trust-gate up`: the embedded localnet with the demo world, on loopback, until Ctrl-C.

use crate::services::{shutdown_signal, start_demo, start_facilitator, DemoArgs, FacilitatorArgs};
use clap::Args;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use trust_gate_facilitator::redact;
use trust_gate_localnet::externals::ExternalPrograms;
use trust_gate_localnet::{Localnet, LocalnetConfig, Programs};

#[derive(Args)]
pub struct UpArgs {
    /// Address the services bind to.
    #[arg(long, default_value = "127.0.0.1", env = "TRUST_GATE_HOST")]
    host: IpAddr,
    /// Port of the localnet's Solana JSON-RPC.
    #[arg(long, default_value_t = 8899, env = "TRUST_GATE_RPC_PORT")]
    rpc_port: u16,
    /// Use this cluster instead of starting the localnet (the services that exist run
    /// against it; nothing is seeded).
    #[arg(long, env = "RPC_URL")]
    rpc_url: Option<String>,
    /// Do not seed the demo world into the localnet.
    #[arg(long)]
    no_seed: bool,
    /// Port of the x402 facilitator.
    #[arg(long, default_value_t = trust_gate_facilitator::DEFAULT_PORT, env = "FACILITATOR_PORT")]
    facilitator_port: u16,
    /// Port of the demo resource server.
    #[arg(long, default_value_t = trust_gate_demo::DEFAULT_PORT, env = "DEMO_PORT")]
    demo_port: u16,
    /// Port of the demo's low-tier payee, paid with a holdback (`trust-gate demo
    /// --held-service`).
    #[arg(long, default_value_t = trust_gate_demo::HELD_DEMO_PORT, env = "HELD_DEMO_PORT")]
    held_demo_port: u16,
    /// Port of the owner's dashboard.
    #[arg(long, default_value_t = trust_gate_dashboard::DEFAULT_PORT, env = "DASHBOARD_PORT")]
    dashboard_port: u16,
    /// Port of the MCP tool server (streamable HTTP).
    #[arg(long, default_value_t = trust_gate_mcp::config::DEFAULT_HTTP_PORT, env = "MCP_HTTP_PORT")]
    mcp_port: u16,
    /// The Redis the facilitator keeps its payer locks and pending settlements in, to run
    /// beside other replicas (`trust-gate facilitator --redis-url`) on one fee payer.
    #[arg(long, env = "REDIS_URL", hide_env_values = true)]
    redis_url: Option<String>,
    /// Run only the chain: no facilitator, no demo, no MCP server.
    #[arg(long)]
    no_services: bool,
    /// The folder of the SBF builds (`tools/sbf/build` writes target/deploy). Unset: the SBF
    /// builds in target/deploy if all are there, else the native programs.
    #[arg(long, env = "SBF_OUT_DIR", conflicts_with = "native")]
    sbf_out_dir: Option<PathBuf>,
    /// Run the native programs even when SBF builds exist.
    #[arg(long)]
    native: bool,
    /// Load the REAL agent registry and reputation engine from this folder
    /// (`agent_registry_8004.so`, `atom_engine.so`, and `mpl_core.so` when there) at their
    /// program ids, instead of the local stand-in, and seed the demo world through their own
    /// instructions; also the REAL payment-channels and Subscriptions programs
    /// (`payment_channels.so`, `subscriptions_program.so` in this folder or in the
    /// `payment-channels` and `subscriptions` folders beside it) instead of their stand-ins.
    #[arg(long, conflicts_with = "rpc_url")]
    external_programs: Option<PathBuf>,
}

/// Which programs the localnet runs: as asked, else the SBF builds where `tools/sbf/build`
/// puts them, else native.
fn choose_programs(args: &UpArgs) -> Result<Programs, String> {
    if args.native {
        return Ok(Programs::Native);
    }
    match &args.sbf_out_dir {
        Some(dir) => Programs::sbf_in(dir).map_err(|e| format!("--sbf-out-dir: {e}")),
        None => {
            Ok(Programs::sbf_in(std::path::Path::new("target/deploy")).unwrap_or(Programs::Native))
        }
    }
}

/// The services `up` runs besides the chain.
pub struct Services {
    facilitator: trust_gate_facilitator::Server,
    demo: trust_gate_demo::Server,
    held_demo: trust_gate_demo::Server,
    mcp: trust_gate_mcp::HttpServer,
    dashboard: trust_gate_dashboard::Server,
}

/// The facilitator, demo and MCP server on `host`, against `rpc_url`, with the demo world's
/// keys.
async fn start_services(args: &UpArgs, rpc_url: &str, network: &str) -> Result<Services, String> {
    let mut fa = FacilitatorArgs::for_demo(args.host, args.facilitator_port, rpc_url, network);
    fa.redis_url = args.redis_url.clone();
    let facilitator = start_facilitator(&fa)
        .await
        .map_err(|e| format!("facilitator: {e} (try --facilitator-port)"))?;
    let da = DemoArgs {
        host: args.host,
        port: args.demo_port,
        facilitator_url: facilitator.url(),
        public_url: None,
        payment_id_required: false,
        // The demo's payment ids beside the facilitator's records, when it has a Redis.
        redis_url: args.redis_url.clone(),
        held_service: false,
    };
    let demo = start_demo(&da)
        .await
        .map_err(|e| format!("demo: {e} (try --demo-port)"))?;
    let held = DemoArgs {
        port: args.held_demo_port,
        held_service: true,
        ..da
    };
    let held_demo = start_demo(&held)
        .await
        .map_err(|e| format!("held demo: {e} (try --held-demo-port)"))?;
    let mcp = crate::mcp::start_for_up(
        args.host,
        args.mcp_port,
        rpc_url,
        network,
        &facilitator.url(),
        &demo.url(),
        &held_demo.url(),
    )
    .await
    .map_err(|e| format!("MCP server: {e}"))?;
    let config = crate::dashboard::config(rpc_url, network, Some(facilitator.url()))?;
    let dashboard =
        trust_gate_dashboard::start(config, SocketAddr::new(args.host, args.dashboard_port))
            .await
            .map_err(|e| format!("dashboard: {e} (try --dashboard-port)"))?;
    Ok(Services {
        facilitator,
        demo,
        held_demo,
        mcp,
        dashboard,
    })
}

pub async fn run(args: UpArgs) -> Result<(), String> {
    if let Some(url) = args.rpc_url.clone() {
        return external_cluster(&args, &url).await;
    }
    let addr = SocketAddr::new(args.host, args.rpc_port);
    let programs = choose_programs(&args)?;
    let externals = match &args.external_programs {
        Some(dir) => {
            Some(ExternalPrograms::in_dir(dir).map_err(|e| format!("--external-programs: {e}"))?)
        }
        None => None,
    };
    tracing::info!(programs = %programs.describe(), "starting the localnet");
    let localnet = Localnet::start(LocalnetConfig {
        rpc_addr: addr,
        clock: true,
        programs,
        externals,
    })
    .await
    .map_err(|e| {
        format!("{e} (is another localnet or validator using the port? try --rpc-port)")
    })?;
    let rpc_url = localnet.rpc_url();
    tracing::info!(%rpc_url, "localnet JSON-RPC listening");

    if !args.no_seed {
        tracing::info!("seeding the demo world");
        let log = |line: &str| tracing::info!("{}", line.trim());
        let (world, report) =
            trust_gate_migrations::seed_localnet(&crate::migrate::seed_keys(&localnet), &log)
                .await
                .map_err(|e| format!("seeding the demo world: {e}"))?;
        tracing::info!(
            created = report.created.len(),
            present = report.present.len(),
            "demo world ready"
        );
        print_world(&world);
    }
    let services = if args.no_services {
        None
    } else {
        Some(start_services(&args, &rpc_url, "solana-localnet").await?)
    };
    println!();
    println!("trust-gate is up:");
    println!("  localnet RPC  {rpc_url}   (Solana JSON-RPC)");
    println!("  programs      {}", localnet.programs.describe());
    match &localnet.externals {
        Some(real) => println!("  registry      {}", real.describe()),
        None => {
            println!("  registry      the local stand-in of the agent registry and its engine (--external-programs DIR loads the real ones)");
            println!("  channels      the local stand-in of Solana's payment-channels program (--external-programs DIR loads the real one)");
        }
    }
    match &services {
        Some(Services {
            facilitator,
            demo,
            held_demo,
            mcp,
            dashboard,
        }) => {
            let (f, d, h) = (facilitator.url(), demo.url(), held_demo.url());
            println!("  facilitator   {f}   ({})", facilitator_routes());
            println!("  demo          {d}   (/protected /metered /session /health)");
            println!("  held demo     {h}   (/protected: a tier-1 payee, paid with a holdback)");
            println!(
                "  MCP server    http://{}/   (streamable HTTP, {} tools; /healthz)",
                mcp.addr, mcp.tool_count
            );
            println!(
                "  dashboard     {}/   (the owner's view of each agent, read-only)",
                dashboard.url()
            );
            println!();
            println!("Try it:");
            println!("  1. curl -si {d}/protected   (402: a signed x402 v2 challenge for the tier-3 agent)");
            println!("  2. cargo run --release -- pay {d}/protected   (pays 0.10 in one transaction; prints the receipt)");
            if let Some(tier1) = trust_gate_migrations::DemoWorld::new().payer(1) {
                println!(
                    "  3. curl -si {d}/protected -H 'X-Demo-Payer-Agent: {}'   (402 Deny 6 CounterpartyTierBelowMin)",
                    tier1.asset()
                );
            }
            println!("  4. cargo run --release -- pay {d}/session --scheme batch-settlement   (10 requests: the open, a voucher each, the close)");
            println!("  5. cargo run --release -- pay {h}/protected   (10 % held back for 2 minutes; `trust-gate holdback list` shows it, the crank releases it)");
            println!("  6. cargo run --release -- subscriptions   (the subscriber's 1.00 a day: the crank pulls it a minute after the start; `GET /payments` lists the pull)");
        }
        None => {
            println!();
            println!("Try it:");
            println!("  1. curl -s {rpc_url} -H 'content-type: application/json' -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getHealth\"}}'");
            println!("  2. cargo run --release -- simulate --demo-payer-tier 1   (Deny 6: the service asks for tier >= 2)");
            println!("  3. cargo run --release -- simulate --demo-payer-tier 3   (Allow)");
        }
    }
    println!();
    println!("Ctrl-C stops everything.");

    shutdown_signal().await;
    tracing::info!("stopping");
    drop(services);
    drop(localnet);
    Ok(())
}

/// The facilitator's routes as the banner lists them (the README's table lists the same).
pub(crate) fn facilitator_routes() -> String {
    trust_gate_facilitator::routes::ROUTES.join(" ")
}

fn print_world(world: &trust_gate_migrations::DemoWorld) {
    let s = world.summary();
    println!();
    println!("Demo world (deterministic keys, localnet only):");
    println!(
        "  mint           {} ({} decimals), price {}",
        s.mint, s.decimals, s.price
    );
    println!(
        "  metered mint   {} (Token-2022, for payment channels)",
        s.metered_mint
    );
    println!("  facilitator    {}", s.facilitator);
    println!(
        "  service agent  {} (accepts payers of tier >= {}; label {})",
        s.service.asset,
        trust_gate_migrations::demo::SERVICE_MIN_PAYER_TIER,
        s.service.name
    );
    for p in &s.payers {
        let funding = match &p.hot_key {
            Some(hot) => format!(
                "paid from its policy vault, hot key {hot} ({}/hot-key)",
                p.name
            ),
            None => "paid from the owner's wallet".to_string(),
        };
        println!(
            "  payer tier {}   {} (label {}: owner {}, policy {}, {funding})",
            p.tier, p.asset, p.name, p.owner, s.policy_id
        );
    }
    println!(
        "  held payee     {} (tier {}, label {}: accepts a holdback, decided by the arbiter {}); {} pays it under policy {}, which holds back a share from low tiers",
        s.held_service.asset,
        s.held_service.tier,
        s.held_service.name,
        s.arbiter,
        trust_gate_migrations::demo::HOLDBACK_PAYER,
        s.holdback_policy_id
    );
    println!(
        "  subscription   {} pays the service {} base units every {} s, pulled by the facilitator's crank (`trust-gate subscriptions`)",
        trust_gate_migrations::demo::SUBSCRIBER,
        trust_gate_migrations::demo::SUBSCRIPTION_AMOUNT,
        trust_gate_migrations::demo::SUBSCRIPTION_PERIOD_SECS,
    );
    println!("  keys           `trust-gate demo-key <label>` prints one as a keypair file (also facilitator, service-key, attestor, mint-authority, arbiter)");
    println!(
        "  attestor       {}; namespaces {}",
        s.attestor,
        s.namespaces.join(", ")
    );
}

async fn external_cluster(args: &UpArgs, url: &str) -> Result<(), String> {
    let rpc = trust_gate_migrations::rpc(url);
    // Shown by origin only: an RPC provider's API key sits in the path or query.
    let shown = redact::origin(url);
    let version = rpc
        .get_version()
        .await
        .map_err(|e| redact::urls_in(&format!("RPC_URL {shown} does not answer: {e}")))?;
    println!(
        "Using the cluster at {shown} (solana-core {}).",
        version.solana_core
    );
    let network = std::env::var("NETWORK").unwrap_or_else(|_| "solana-devnet".into());
    let services = if args.no_services {
        None
    } else {
        Some(start_services(args, url, &network).await?)
    };
    if let Some(s) = &services {
        println!("  facilitator   {}", s.facilitator.url());
        println!("  demo          {}", s.demo.url());
        println!("  held demo     {}", s.held_demo.url());
        println!("  MCP server    http://{}/", s.mcp.addr);
    }
    println!("The demo world must exist there (`trust-gate migrate`). Ctrl-C stops.");
    shutdown_signal().await;
    drop(services);
    Ok(())
}
