//! The 27 tools, registered with rmcp's `#[tool]` macros. Handlers are one line each: the
//! work is in [`read`], [`spend`], [`write`], [`approvals`], [`pay`] and [`discovery`], and
//! [`call_result`] shapes the reply.

pub mod approvals;
pub mod discovery;
pub mod pay;
pub mod read;
pub mod spend;
pub mod write;

use crate::args::Parameters;
use crate::context::Ctx;
use crate::envelope::call_result;
use crate::output_schemas;
use approvals::{ApproveArgs, ListApprovalsArgs};
use discovery::{DocsArgs, Empty, WalkthroughArgs};
use read::*;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use std::sync::Arc;
use write::*;

/// The MCP server: one per session (cheap to clone; the context is shared).
#[derive(Clone)]
pub struct GateServer {
    pub ctx: Arc<Ctx>,
    pub tool_router: ToolRouter<GateServer>,
}

impl GateServer {
    pub fn new(ctx: Arc<Ctx>) -> Self {
        GateServer {
            ctx,
            tool_router: Self::read_tools() + Self::write_tools() + Self::discovery_tools(),
        }
    }
}

#[tool_router(router = read_tools, vis = "pub")]
impl GateServer {
    /// Read a spending policy (PolicyAccount) of an agent: kinds, caps, velocity,
    /// counterparty and validation rules, and what was spent today and this week.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_policy()
    )]
    async fn gate_get_policy(&self, Parameters(a): Parameters<PolicyArgs>) -> CallToolResult {
        call_result(get_policy(&self.ctx, a).await)
    }

    /// Read the velocity ledger of an agent's policy: what was paid in the current window.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_velocity_ledger()
    )]
    async fn gate_get_velocity_ledger(
        &self,
        Parameters(a): Parameters<PolicyArgs>,
    ) -> CallToolResult {
        call_result(get_velocity_ledger(&self.ctx, a).await)
    }

    /// Read an agent's kill switch: paused or not, when and by whom.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_killswitch()
    )]
    async fn gate_get_killswitch(&self, Parameters(a): Parameters<AgentArgs>) -> CallToolResult {
        call_result(get_killswitch(&self.ctx, a).await)
    }

    /// Read an agent's policy vault for a mint: its address and balance. A vault-funded
    /// policy pays from it; only a gated settlement or the authority's threshold can empty it.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_vault()
    )]
    async fn gate_get_vault(&self, Parameters(a): Parameters<VaultArgs>) -> CallToolResult {
        call_result(get_vault(&self.ctx, a).await)
    }

    /// Read an agent's policy authority: its members and the signature threshold.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_authority()
    )]
    async fn gate_get_authority(&self, Parameters(a): Parameters<AgentArgs>) -> CallToolResult {
        call_result(get_authority(&self.ctx, a).await)
    }

    /// Read a payment's receipt: its feedback log while it exists; once closed (after its
    /// deadline and dispute window), what the chain's history holds, with closed: true and
    /// the settlement's transaction.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_feedback_log()
    )]
    async fn gate_get_feedback_log(
        &self,
        Parameters(a): Parameters<FeedbackLogArgs>,
    ) -> CallToolResult {
        call_result(get_feedback_log(&self.ctx, a).await)
    }

    /// Read a capability namespace by name or hash.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_capability_namespace()
    )]
    async fn gate_get_capability_namespace(
        &self,
        Parameters(a): Parameters<NamespaceArgs>,
    ) -> CallToolResult {
        call_result(get_capability_namespace(&self.ctx, a).await)
    }

    /// Read an attestor's profile: attestations issued and revoked.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_attestor_profile()
    )]
    async fn gate_get_attestor_profile(
        &self,
        Parameters(a): Parameters<AttestorArgs>,
    ) -> CallToolResult {
        call_result(get_attestor_profile(&self.ctx, a).await)
    }

    /// Read a validation request (subject, capability, requester).
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_validation_request()
    )]
    async fn gate_get_validation_request(
        &self,
        Parameters(a): Parameters<RequestArgs>,
    ) -> CallToolResult {
        call_result(get_validation_request(&self.ctx, a).await)
    }

    /// Read the attestations of a capability about an agent (one attestor's, or every
    /// attestor's), valid ones first.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_validation_attestation()
    )]
    async fn gate_get_validation_attestation(
        &self,
        Parameters(a): Parameters<AttestationArgs>,
    ) -> CallToolResult {
        call_result(get_validation_attestation(&self.ctx, a).await)
    }

    /// Decide a payment the way the gate would, by simulation: {"kind":"Allow"}, a Deny
    /// with its decoded reason, or RequireValidation with the capability hash. Needs no
    /// signer and no SOL.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::simulate_payment()
    )]
    async fn gate_simulate_payment(
        &self,
        Parameters(a): Parameters<SimulateArgs>,
    ) -> CallToolResult {
        call_result(simulate_payment(&self.ctx, a).await)
    }

    /// Read the reputation engine's block of an agent: tierImmediate, tierConfirmed,
    /// riskScore, confidence, schemaVersion; or an error field when the account fails the
    /// owner, size or schema checks.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_engine_reputation()
    )]
    async fn gate_get_engine_reputation(
        &self,
        Parameters(a): Parameters<AgentArgs>,
    ) -> CallToolResult {
        call_result(get_engine_reputation(&self.ctx, a).await)
    }

    /// Explain a deny reason code 1..23: name, category, meaning and what to do about it.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::explain_decision()
    )]
    async fn gate_explain_decision(
        &self,
        Parameters(a): Parameters<ExplainArgs>,
    ) -> CallToolResult {
        call_result(explain_decision(a))
    }

    /// A payer agent's spend under a policy at a glance: every cap (per transaction, day,
    /// week, and under limits month, lifetime and per payee) with what is spent and left
    /// and when its window starts over, the velocity window's use, the kill switch, the
    /// vault's balance, the channels open through the gate, and the payments the facilitator
    /// holds for an approval.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::get_spend()
    )]
    async fn gate_get_spend(&self, Parameters(a): Parameters<PolicyArgs>) -> CallToolResult {
        call_result(spend::get_spend(&self.ctx, a).await)
    }

    /// The payments the facilitator holds for an approval (RequireApproval: above the payer
    /// policy's approval_threshold), each with its id, terms, what it was for, and its state
    /// (pending, or approved on chain until a time). Read from the configured facilitator.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::list_approvals()
    )]
    async fn gate_list_approvals(
        &self,
        Parameters(a): Parameters<ListApprovalsArgs>,
    ) -> CallToolResult {
        call_result(approvals::list_approvals(&self.ctx, a).await)
    }
}

#[tool_router(router = write_tools, vis = "pub")]
impl GateServer {
    /// Create an agent's policy authority (members and threshold). Idempotent: an existing
    /// authority is returned with its members and threshold. After a sale of the agent, its
    /// new owner (the signer) requests to take the previous owner's authority over instead
    /// (`takeOverRequested`, `effectiveAt`: the previous owner's members may cancel or accept
    /// it until then) and, called again once that time has passed and before `lapsesAfter`,
    /// completes it (`takenOver`); a lapsed request is asked for again.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_init_authority(
        &self,
        Parameters(a): Parameters<InitAuthorityArgs>,
    ) -> CallToolResult {
        call_result(init_authority(&self.ctx, a).await)
    }

    /// Create a spending policy. Missing prerequisites are created in the same transaction
    /// (register_agent_via_cpi when agent_asset is omitted, init_authority, init_killswitch)
    /// and reported in selfHealed/healedSteps. A vault-funded policy (funding "vault") needs
    /// its spender, the one key that may pay from the vault. Idempotent: an existing policy is
    /// returned (with its spender renamed when another one is given).
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_init_policy(&self, Parameters(a): Parameters<InitPolicyArgs>) -> CallToolResult {
        call_result(init_policy(&self.ctx, a).await)
    }

    /// Engage (paused=true) or release the kill switch of an agent whose authority needs one
    /// signature. A threshold above 1 is refused: see the multisig-killswitch walkthrough.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_set_killswitch(
        &self,
        Parameters(a): Parameters<SetKillswitchArgs>,
    ) -> CallToolResult {
        call_result(set_killswitch(&self.ctx, a).await)
    }

    /// Register a capability namespace (its hash is sha256 of the name). Idempotent.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_register_namespace(
        &self,
        Parameters(a): Parameters<RegisterNamespaceArgs>,
    ) -> CallToolResult {
        call_result(register_namespace(&self.ctx, a).await)
    }

    /// Register the signer as an attestor. Idempotent.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_register_attestor(
        &self,
        Parameters(a): Parameters<RegisterAttestorArgs>,
    ) -> CallToolResult {
        call_result(register_attestor(&self.ctx, a).await)
    }

    /// Ask for an attestation of a capability about an agent. Idempotent.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_request_validation(
        &self,
        Parameters(a): Parameters<RequestValidationArgs>,
    ) -> CallToolResult {
        call_result(request_validation(&self.ctx, a).await)
    }

    /// As an attestor (the signer), attest a capability about an agent until a slot; renews
    /// an existing attestation. Signature-verified through an Ed25519 instruction.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_respond_to_validation(
        &self,
        Parameters(a): Parameters<RespondArgs>,
    ) -> CallToolResult {
        call_result(respond_to_validation(&self.ctx, a).await)
    }

    /// Approve a payment the gate held for an approval (its pending id from the 402's
    /// X-Gate-Approval-Id or gate_list_approvals), on chain, as the signer: a member of the
    /// payer's policy authority whose threshold is 1 (more members sign together with
    /// `trust-gate approve`). The terms are read from the facilitator and checked against the
    /// id first. The same payment then passes once; the signer pays the approval's rent, back
    /// when it does. Idempotent: an approval already standing is returned.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_approve(&self, Parameters(a): Parameters<ApproveArgs>) -> CallToolResult {
        call_result(approvals::approve(&self.ctx, a).await)
    }

    /// Request an x402 resource and, on a 402, pay it through the gate as the signer's payer
    /// agent (trust-gate's settlement, a gated upto, or a gated session kept open for later
    /// requests to the same server; close_session ends it), then return the resource's
    /// status, content type and body (cut at max_body_chars, with its full length), the
    /// decision, the signature or voucher and the receipt URL. A Deny, RequireValidation or
    /// RequireApproval is a result (paid false) with the reason, what it means, what to do,
    /// and an approval's pending id. Above max_amount nothing is signed. Public addresses
    /// only, unless the server's operator allows others.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = true
    ))]
    async fn gate_pay(&self, Parameters(a): Parameters<pay::PayArgs>) -> CallToolResult {
        call_result(pay::pay(&self.ctx, a).await)
    }
}

#[tool_router(router = discovery_tools, vis = "pub")]
impl GateServer {
    /// The demo world: agents and their tiers, the payers' policy, the mint, the facilitator
    /// and the service URLs.
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::demo_state()
    )]
    async fn gate_demo_state(&self, Parameters(_): Parameters<Empty>) -> CallToolResult {
        call_result(discovery::demo_state(&self.ctx))
    }

    /// Search the bundled documentation (architecture, policies, deny codes, settlement,
    /// validation, walkthroughs).
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::docs()
    )]
    async fn gate_docs(&self, Parameters(a): Parameters<DocsArgs>) -> CallToolResult {
        call_result(discovery::docs(&self.ctx, a))
    }

    /// A step-by-step integration guide by name (facilitator-x402, mount-verify,
    /// multisig-killswitch, agent-setup, validation-flow).
    #[tool(
        annotations(read_only_hint = true),
        output_schema = output_schemas::walkthrough()
    )]
    async fn gate_facilitator_walkthrough(
        &self,
        Parameters(a): Parameters<WalkthroughArgs>,
    ) -> CallToolResult {
        call_result(discovery::walkthrough(&self.ctx, a))
    }
}
