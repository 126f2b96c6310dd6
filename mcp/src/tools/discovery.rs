//! The 3 discovery tools: the demo world, docs search, integration walkthroughs.

use crate::context::Ctx;
use crate::docs::Hit;
use crate::docs::WALKTHROUGH_PREFIX;
use crate::envelope::{codes, ToolError, ToolResult};
use crate::views::{AcceptanceView, PolicyParamsView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use trust_gate_migrations::demo::{DemoSummary, DemoWorld};

/// Most hits `gate_docs` returns.
pub const MAX_DOCS_RESULTS: usize = 20;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Empty {}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DocsArgs {
    /// Words to look for (for example "kill switch threshold" or "CounterpartyTierBelowMin").
    pub query: String,
    /// How many sections to return, 1..20 (default 5).
    #[schemars(range(min = 1, max = 20))]
    pub max_results: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WalkthroughArgs {
    /// The walkthrough: facilitator-x402, mount-verify, multisig-killswitch, agent-setup or
    /// validation-flow.
    pub name: String,
}

/// The facilitator, demo and protected resource URLs.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DemoUrls {
    /// The facilitator (null when not configured).
    pub facilitator: Option<String>,
    /// The demo service (null when not configured).
    pub demo: Option<String>,
    /// The demo's protected resource (null when not configured).
    pub protected: Option<String>,
}

/// The demo world: the one `trust-gate up` seeds, or `DEMO_STATE_FILE`'s.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DemoState {
    #[serde(flatten)]
    pub world: DemoSummary,
    /// Where this world comes from.
    pub source: String,
    /// The network the server is configured for.
    pub network: String,
    /// The server's RPC URL.
    pub rpc_url: String,
    /// The payers' policy parameters, as gate_get_policy shows them.
    pub payer_policy: PolicyParamsView,
    /// What the service asks of its payers.
    pub service_acceptance: AcceptanceView,
    /// The facilitator, demo and protected resource URLs.
    pub urls: DemoUrls,
}

/// The demo world: from `DEMO_STATE_FILE` when set (a [`DemoState`] as this tool returns
/// it), else the world `trust-gate up` seeds.
pub fn demo_state(ctx: &Ctx) -> ToolResult<DemoState> {
    if let Some(path) = &ctx.config.demo_state_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ToolError::new(
                codes::NOT_FOUND,
                format!("cannot read DEMO_STATE_FILE {}: {e}", path.display()),
            )
        })?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            ToolError::new(
                codes::CONFIG_ERROR,
                format!("DEMO_STATE_FILE {} is not JSON: {e}", path.display()),
            )
        })?;
        return crate::args::read::<DemoState>(value).map_err(|why| {
            ToolError::new(
                codes::CONFIG_ERROR,
                format!(
                    "DEMO_STATE_FILE {} is not a demo state as gate_demo_state returns it",
                    path.display()
                ),
            )
            .cause(why)
        });
    }
    let world = DemoWorld::new();
    let c = &ctx.config;
    Ok(DemoState {
        world: world.summary(),
        source: "bundled: the demo world `trust-gate up` seeds on its localnet".into(),
        network: c.network.name().into(),
        rpc_url: c.rpc_url.clone(),
        payer_policy: PolicyParamsView::from(&world.payer_policy()),
        service_acceptance: AcceptanceView::from(&world.service_acceptance()),
        urls: DemoUrls {
            facilitator: c.facilitator_url.clone(),
            demo: c.demo_url.clone(),
            protected: c.demo_url.as_ref().map(|u| format!("{u}/protected")),
        },
    })
}

/// The documentation sections that match a query, best first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DocsResults {
    /// The query.
    pub query: String,
    /// Where the docs come from: bundled, or MCP_DOCS_DIR's directory.
    pub corpus: String,
    /// How many results.
    pub count: usize,
    /// The sections, best first.
    pub results: Vec<Hit>,
}

pub fn docs(ctx: &Ctx, a: DocsArgs) -> ToolResult<DocsResults> {
    let corpus = ctx.docs.as_ref().map_err(Clone::clone)?;
    if a.query.trim().is_empty() {
        return Err(ToolError::input("query", "must not be empty"));
    }
    let max = match a.max_results {
        None => 5,
        Some(n @ 1..=20) => n as usize,
        Some(n) => {
            return Err(ToolError::input(
                "max_results",
                format!("{n}: must be 1..{MAX_DOCS_RESULTS}"),
            ))
        }
    };
    let results = corpus.search(&a.query, max);
    Ok(DocsResults {
        query: a.query,
        corpus: corpus.source.clone(),
        count: results.len(),
        results,
    })
}

/// A step-by-step integration guide.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Walkthrough {
    /// The walkthrough's name.
    pub name: String,
    /// Its title.
    pub title: String,
    /// Its resource URI (gate://docs/walkthroughs/...).
    pub uri: String,
    /// Its text, in markdown.
    pub markdown: String,
}

pub fn walkthrough(ctx: &Ctx, a: WalkthroughArgs) -> ToolResult<Walkthrough> {
    let corpus = ctx.docs.as_ref().map_err(Clone::clone)?;
    let name = a.name.trim().trim_start_matches(WALKTHROUGH_PREFIX);
    let page = corpus
        .page(&format!("{WALKTHROUGH_PREFIX}{name}"))
        .ok_or_else(|| {
            ToolError::new(
                codes::WALKTHROUGH_NOT_BUNDLED,
                format!("no walkthrough named {:?}", a.name),
            )
            .hint(format!(
                "bundled walkthroughs: {}",
                corpus.walkthroughs().join(", ")
            ))
        })?;
    Ok(Walkthrough {
        name: name.to_string(),
        title: page.title.clone(),
        uri: format!("gate://docs/{}", page.name),
        markdown: page.text.clone(),
    })
}
