//! The 4 resources: `gate://programs` (program ids and explorer links), `gate://idl/{program}`
//! (the bundled IDLs), `gate://docs/{page}` (the docs corpus) and `gate://demo/{file}` (the
//! demo's source files, by plain file name only).

use crate::context::Ctx;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use rmcp::ErrorData;
use serde::Serialize;
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::{idl, Network, Program};

/// The demo's source files, bundled: (file name, source).
const DEMO_FILES: &[(&str, &str)] = &[
    ("lib.rs", include_str!("../../demo/src/lib.rs")),
    ("server.rs", include_str!("../../demo/src/server.rs")),
    ("challenge.rs", include_str!("../../demo/src/challenge.rs")),
    ("config.rs", include_str!("../../demo/src/config.rs")),
    (
        "facilitator_client.rs",
        include_str!("../../demo/src/facilitator_client.rs"),
    ),
    ("pay.rs", include_str!("../../pay/src/exact.rs")),
];

const JSON: &str = "application/json";
const MARKDOWN: &str = "text/markdown";
const RUST: &str = "text/x-rust";

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("gate://idl/{program}", "idl")
            .with_description("The bundled Anchor IDL of policy_vault, gate or validation_registry")
            .with_mime_type(JSON),
        ResourceTemplate::new("gate://docs/{page}", "docs")
            .with_description("A page of the docs corpus (see gate_docs to search it)")
            .with_mime_type(MARKDOWN),
        ResourceTemplate::new("gate://demo/{file}", "demo")
            .with_description(
                "A source file of the x402 demo service, or the paying client (pay.rs)",
            )
            .with_mime_type(RUST),
    ]
}

/// Every concrete resource.
pub fn list(ctx: &Ctx) -> Vec<Resource> {
    let mut out = vec![Resource::new("gate://programs", "programs")
        .with_description("Program ids of this network and their explorer URLs")
        .with_mime_type(JSON)];
    for p in Program::ALL {
        out.push(
            Resource::new(
                format!("gate://idl/{}", p.name()),
                format!("idl/{}", p.name()),
            )
            .with_mime_type(JSON),
        );
    }
    if let Ok(corpus) = &ctx.docs {
        for page in &corpus.pages {
            out.push(
                Resource::new(
                    format!("gate://docs/{}", page.name),
                    format!("docs/{}", page.name),
                )
                .with_title(page.title.clone())
                .with_mime_type(MARKDOWN),
            );
        }
    }
    for (name, _) in DEMO_FILES {
        out.push(
            Resource::new(format!("gate://demo/{name}"), format!("demo/{name}"))
                .with_mime_type(RUST),
        );
    }
    out
}

pub fn read(ctx: &Ctx, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let text = |t: String, mime: &str| {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            t, uri,
        )
        .with_mime_type(mime)]))
    };
    if uri == "gate://programs" {
        let manifest = serde_json::to_string(&programs(ctx)).expect("the manifest serializes");
        return text(manifest, JSON);
    }
    if let Some(name) = uri.strip_prefix("gate://idl/") {
        let program = Program::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| not_found(uri, "programs: policy_vault, gate, validation_registry"))?;
        let doc =
            idl::bundled(program).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        return text(serde_json::to_string_pretty(&doc).unwrap_or_default(), JSON);
    }
    if let Some(page) = uri.strip_prefix("gate://docs/") {
        let corpus = ctx
            .docs
            .as_ref()
            .map_err(|e| ErrorData::resource_not_found(e.message.clone(), None))?;
        let p = corpus
            .page(page)
            .ok_or_else(|| not_found(uri, "list resources for the pages of the docs corpus"))?;
        return text(p.text.clone(), MARKDOWN);
    }
    if let Some(file) = uri.strip_prefix("gate://demo/") {
        // Only the bundled names: nothing is read from disk, so no path can escape.
        if file.contains('/') || file.contains('\\') || file.contains("..") {
            return Err(ErrorData::invalid_params(
                format!("{uri}: a demo file is a plain file name; paths are not served"),
                None,
            ));
        }
        let (_, src) = DEMO_FILES
            .iter()
            .find(|(n, _)| *n == file)
            .ok_or_else(|| not_found(uri, &format!("demo files: {}", demo_names())))?;
        return text((*src).to_string(), RUST);
    }
    Err(not_found(
        uri,
        "resources: gate://programs, gate://idl/{program}, gate://docs/{page}, gate://demo/{file}",
    ))
}

fn demo_names() -> String {
    DEMO_FILES
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn not_found(uri: &str, known: &str) -> ErrorData {
    ErrorData::resource_not_found(format!("no resource {uri}; {known}"), None)
}

/// One of trust-gate's programs in the manifest.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OurProgram {
    name: &'static str,
    program_id: String,
    /// False for the mainnet sentinel: the deployment's id must be given.
    configured: bool,
    /// The variable that overrides its id.
    override_variable: &'static str,
    explorer_url: String,
}

/// A program trust-gate calls but does not deploy.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExternalProgram {
    name: &'static str,
    program_id: String,
    explorer_url: String,
}

/// `gate://programs`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    network: &'static str,
    /// The RPC's origin only (never an API key in its path or query).
    rpc_url: String,
    programs: Vec<OurProgram>,
    external: Vec<ExternalProgram>,
}

/// The program manifest: ids (the sentinel is flagged) and explorer URLs.
fn programs(ctx: &Ctx) -> Manifest {
    let ids = ctx.config.ids;
    let rpc = trust_gate_client::redact::origin(&ctx.config.rpc_url);
    let link = |id: &str| explorer(ctx.config.network, &rpc, id);
    let programs = Program::ALL
        .iter()
        .map(|p| {
            let id = ids.get(*p).to_string();
            OurProgram {
                name: p.name(),
                configured: ids.require(*p).is_ok(),
                override_variable: p.override_var(),
                explorer_url: link(&id),
                program_id: id,
            }
        })
        .collect();
    let external = |name, id: Pubkey| ExternalProgram {
        name,
        explorer_url: link(&id.to_string()),
        program_id: id.to_string(),
    };
    Manifest {
        network: ctx.config.network.name(),
        external: vec![
            external("agent_registry", ids.agent_registry),
            external("reputation_engine", ids.reputation_engine),
            external("mpl_core", ids.mpl_core),
        ],
        rpc_url: rpc,
        programs,
    }
}

fn explorer(network: Network, rpc_url: &str, id: &str) -> String {
    let base = format!("https://explorer.solana.com/address/{id}");
    match network {
        Network::Mainnet => base,
        Network::Devnet => format!("{base}?cluster=devnet"),
        Network::Localnet => format!("{base}?cluster=custom&customUrl={}", encode(rpc_url)),
    }
}

/// Percent-encodes a URL for a query parameter.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
