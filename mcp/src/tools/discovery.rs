//! The 3 discovery tools: the demo world, docs search, integration walkthroughs.

use crate::context::Ctx;
use crate::docs::WALKTHROUGH_PREFIX;
use crate::envelope::{codes, ToolError, ToolResult};
use crate::views;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use trust_gate_migrations::demo::DemoWorld;

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

/// The demo world: from `DEMO_STATE_FILE` when set, else the world `trust-gate up` seeds.
pub fn demo_state(ctx: &Ctx) -> ToolResult {
    if let Some(path) = &ctx.config.demo_state_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ToolError::new(
                codes::NOT_FOUND,
                format!("cannot read DEMO_STATE_FILE {}: {e}", path.display()),
            )
        })?;
        return serde_json::from_str::<Value>(&text).map_err(|e| {
            ToolError::new(
                codes::CONFIG_ERROR,
                format!("DEMO_STATE_FILE {} is not JSON: {e}", path.display()),
            )
        });
    }
    let world = DemoWorld::new();
    let mut v = serde_json::to_value(world.summary()).map_err(crate::tools::read::internal)?;
    v["source"] = json!("bundled: the demo world `trust-gate up` seeds on its localnet");
    v["network"] = json!(ctx.config.network.name());
    v["rpcUrl"] = json!(ctx.config.rpc_url);
    v["payerPolicy"] = views::policy_params(&world.payer_policy());
    v["serviceAcceptance"] = views::acceptance_params(&world.service_acceptance());
    v["urls"] = json!({
        "facilitator": ctx.config.facilitator_url,
        "demo": ctx.config.demo_url,
        "protected": ctx.config.demo_url.as_ref().map(|u| format!("{u}/protected")),
    });
    Ok(v)
}

pub fn docs(ctx: &Ctx, a: DocsArgs) -> ToolResult {
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
    let hits = corpus.search(&a.query, max);
    Ok(json!({
        "query": a.query,
        "corpus": corpus.source,
        "count": hits.len(),
        "results": hits,
    }))
}

pub fn walkthrough(ctx: &Ctx, a: WalkthroughArgs) -> ToolResult {
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
    Ok(json!({
        "name": name,
        "title": page.title,
        "uri": format!("gate://docs/{}", page.name),
        "markdown": page.text,
    }))
}
