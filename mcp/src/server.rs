//! The MCP handler: tools through the router (a bad argument becomes the `input_invalid`
//! envelope instead of a protocol error), resources and prompts.

use crate::args::INVALID_ARGUMENT;
use crate::envelope::{codes, ToolError};
use crate::tools::GateServer;
use crate::{prompts, resources};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, DiscoverResult, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

/// The name in `serverInfo` and `/healthz`.
pub const SERVICE_NAME: &str = "trust-gate-mcp";

/// How long a 2026-07-28 client may reuse what this server lists and serves (`ttlMs`):
/// discovery, the tools, prompts, resources and templates, and a bundled resource's text.
/// They are fixed by the server's build and configuration, so an hour; a restart with other
/// settings is the only change, and an hour-old list still names tools that exist.
pub const TTL_MS: u64 = 3_600_000;
/// A resource read from a docs folder on disk (`MCP_DOCS_DIR`), which may be edited: a
/// minute.
pub const DOCS_DIR_TTL_MS: u64 = 60_000;
/// Every one of them is the same for every caller (no list or resource depends on who asks
/// or on the signer), so shared caches may keep them (`cacheScope: public`).
pub const CACHE_SCOPE: CacheScope = CacheScope::Public;

impl ServerHandler for GateServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new(SERVICE_NAME, env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "trust-gate: a payment policy gate for agent-to-agent payments on Solana. Read \
             tools and discovery tools need no signer; write tools sign with the server's key. \
             Start with gate_demo_state, gate_docs or the gate_setup_agent prompt.",
        )
    }

    /// MCP 2026-07-28's `server/discover`: what rmcp derives from [`Self::get_info`], with
    /// the cache hints set deliberately (rmcp's default is 0 ms, private).
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        )
        .with_ttl_ms(TTL_MS)
        .with_cache_scope(CACHE_SCOPE))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let tcc = ToolCallContext::new(self, request, context);
        match self.tool_router.call(tcc).await {
            // Arguments that fail their schema are the tool's error, named, not a protocol one.
            Err(e)
                if e.code == ErrorCode::INVALID_PARAMS
                    && e.message.starts_with(INVALID_ARGUMENT) =>
            {
                Ok(ToolError::new(codes::INPUT_INVALID, e.message.to_string())
                    .hint(format!("see the input schema of {name} in tools/list"))
                    .into_result()
                    .into())
            }
            other => other,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all())
            .with_ttl_ms(TTL_MS)
            .with_cache_scope(CACHE_SCOPE))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(
            ListResourcesResult::with_all_items(resources::list(&self.ctx))
                .with_ttl_ms(TTL_MS)
                .with_cache_scope(CACHE_SCOPE),
        )
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(
            ListResourceTemplatesResult::with_all_items(resources::templates())
                .with_ttl_ms(TTL_MS)
                .with_cache_scope(CACHE_SCOPE),
        )
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let ttl = match self.ctx.config.docs_dir {
            Some(_) if request.uri.starts_with("gate://docs/") => DOCS_DIR_TTL_MS,
            _ => TTL_MS,
        };
        resources::read(&self.ctx, &request.uri)
            .map(|r| r.with_ttl_ms(ttl).with_cache_scope(CACHE_SCOPE).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list())
            .with_ttl_ms(TTL_MS)
            .with_cache_scope(CACHE_SCOPE))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(&request.name, request.arguments.unwrap_or_default()).map(Into::into)
    }
}
