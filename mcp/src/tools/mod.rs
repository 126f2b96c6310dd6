//! The 34 tools, registered with rmcp's `#[tool]` macros. Handlers are one line each: the
//! work is in [`read`], [`spend`], [`write`], [`approvals`], [`holdback`], [`subscriptions`],
//! [`pay`] and [`discovery`]. Each
//! returns `Result<Json<T>, ToolError>`: rmcp derives the tool's `outputSchema` from `T`
//! (a typed struct), and an error is the envelope ([`crate::envelope`]).

pub mod approvals;
pub mod discovery;
pub mod holdback;
pub mod pay;
pub mod read;
pub mod spend;
pub mod subscriptions;
pub mod write;

use crate::args::Parameters;
use crate::context::Ctx;
use crate::envelope::ToolError;
use crate::explain::{DecisionReport, Explained};
use crate::views::{
    AttestationView, AttestorView, AuthorityView, KillSwitchView, NamespaceView, PolicyView,
    RequestView, VaultAccount, VelocityView,
};
use approvals::{ApproveArgs, ListApprovalsArgs};
use discovery::{DemoState, DocsArgs, DocsResults, Empty, Walkthrough, WalkthroughArgs};
use read::*;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Json;
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
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_policy(
        &self,
        Parameters(a): Parameters<PolicyArgs>,
    ) -> Result<Json<PolicyView>, ToolError> {
        get_policy(&self.ctx, a).await.map(Json)
    }

    /// Read the velocity ledger of an agent's policy: what was paid in the current window.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_velocity_ledger(
        &self,
        Parameters(a): Parameters<PolicyArgs>,
    ) -> Result<Json<VelocityView>, ToolError> {
        get_velocity_ledger(&self.ctx, a).await.map(Json)
    }

    /// Read an agent's kill switch: paused or not, when and by whom.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_killswitch(
        &self,
        Parameters(a): Parameters<AgentArgs>,
    ) -> Result<Json<KillSwitchView>, ToolError> {
        get_killswitch(&self.ctx, a).await.map(Json)
    }

    /// Read an agent's policy vault for a mint: its address and balance. A vault-funded
    /// policy pays from it; only a gated settlement or the authority's threshold can empty it.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_vault(
        &self,
        Parameters(a): Parameters<VaultArgs>,
    ) -> Result<Json<VaultAccount>, ToolError> {
        get_vault(&self.ctx, a).await.map(Json)
    }

    /// Read an agent's policy authority: its members and the signature threshold.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_authority(
        &self,
        Parameters(a): Parameters<AgentArgs>,
    ) -> Result<Json<AuthorityView>, ToolError> {
        get_authority(&self.ctx, a).await.map(Json)
    }

    /// Read a payment's receipt: its feedback log while it exists; once closed (after its
    /// deadline and dispute window), what the chain's history holds, with closed: true and
    /// the settlement's transaction.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_feedback_log(
        &self,
        Parameters(a): Parameters<FeedbackLogArgs>,
    ) -> Result<Json<FeedbackLogView>, ToolError> {
        get_feedback_log(&self.ctx, a).await.map(Json)
    }

    /// Read a capability namespace by name or hash.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_capability_namespace(
        &self,
        Parameters(a): Parameters<NamespaceArgs>,
    ) -> Result<Json<NamespaceView>, ToolError> {
        get_capability_namespace(&self.ctx, a).await.map(Json)
    }

    /// Read an attestor's profile: attestations issued and revoked.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_attestor_profile(
        &self,
        Parameters(a): Parameters<AttestorArgs>,
    ) -> Result<Json<AttestorView>, ToolError> {
        get_attestor_profile(&self.ctx, a).await.map(Json)
    }

    /// Read a validation request (subject, capability, requester).
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_validation_request(
        &self,
        Parameters(a): Parameters<RequestArgs>,
    ) -> Result<Json<RequestView>, ToolError> {
        get_validation_request(&self.ctx, a).await.map(Json)
    }

    /// Read the attestations of a capability about an agent (one attestor's, or every
    /// attestor's), valid ones first.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_validation_attestation(
        &self,
        Parameters(a): Parameters<AttestationArgs>,
    ) -> Result<Json<Attestations>, ToolError> {
        get_validation_attestation(&self.ctx, a).await.map(Json)
    }

    /// Decide a payment the way the gate would, by simulation: {"kind":"Allow"}, a Deny
    /// with its decoded reason, or RequireValidation with the capability hash. Needs no
    /// signer and no SOL.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_simulate_payment(
        &self,
        Parameters(a): Parameters<SimulateArgs>,
    ) -> Result<Json<DecisionReport>, ToolError> {
        simulate_payment(&self.ctx, a).await.map(Json)
    }

    /// Read the reputation engine's block of an agent: tierImmediate, tierConfirmed,
    /// riskScore, confidence, schemaVersion; or an error field when the account fails the
    /// owner, size or schema checks.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_engine_reputation(
        &self,
        Parameters(a): Parameters<AgentArgs>,
    ) -> Result<Json<ReputationView>, ToolError> {
        get_engine_reputation(&self.ctx, a).await.map(Json)
    }

    /// Explain a deny reason code 1..27: name, category, meaning and what to do about it.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_explain_decision(
        &self,
        Parameters(a): Parameters<ExplainArgs>,
    ) -> Result<Json<Explained>, ToolError> {
        explain_decision(a).map(Json)
    }

    /// A payer agent's spend under a policy at a glance: every cap (per transaction, day,
    /// week, and under limits month, lifetime and per payee) with what is spent and left
    /// and when its window starts over, the velocity window's use, the kill switch, the
    /// vault's balance, the channels open through the gate, and the payments the facilitator
    /// holds for an approval.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_get_spend(
        &self,
        Parameters(a): Parameters<PolicyArgs>,
    ) -> Result<Json<spend::SpendView>, ToolError> {
        spend::get_spend(&self.ctx, a).await.map(Json)
    }

    /// The payments the facilitator holds for an approval (RequireApproval: above the payer
    /// policy's approval_threshold), each with its id, terms, what it was for, and its state
    /// (pending, or approved on chain until a time). Read from the configured facilitator.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_list_approvals(
        &self,
        Parameters(a): Parameters<ListApprovalsArgs>,
    ) -> Result<Json<approvals::ApprovalsList>, ToolError> {
        approvals::list_approvals(&self.ctx, a).await.map(Json)
    }

    /// The payments a payer agent made whose payee's tier made its policy hold a share back
    /// (docs/holdback.md), newest first, found by the wallets that signed them: each with its
    /// payment id hash, amount, log and held share (how much, until when, its state: held,
    /// disputed, released, refunded, upheld, rejected or lapsed; its arbiter).
    #[tool(annotations(read_only_hint = true))]
    async fn gate_list_payer_holdbacks(
        &self,
        Parameters(a): Parameters<AgentArgs>,
    ) -> Result<Json<holdback::HoldbackList>, ToolError> {
        holdback::list_payer(&self.ctx, a).await.map(Json)
    }

    /// The payments made to a payee agent of which the payer's policy held a share back in
    /// escrow (docs/holdback.md), newest first: each with its payment id hash, amount, log
    /// and held share (how much, until when, its state, its arbiter), and whether anyone may
    /// release it to the payee now.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_list_payee_holdbacks(
        &self,
        Parameters(a): Parameters<AgentArgs>,
    ) -> Result<Json<holdback::HoldbackList>, ToolError> {
        holdback::list_payee(&self.ctx, a).await.map(Json)
    }

    /// The gated subscriptions (recurring pulls through the gate, docs/subscriptions.md) of a
    /// payer agent, a payee agent or a facilitator (exactly one), oldest first, by the
    /// cluster's clock: each with its record and delegation, parties, delegator, policy,
    /// mint, amount per period and period, this period's start and what was pulled in it,
    /// whether a pull is due now and how much, the next pull, the expiry and its state
    /// (active, expired, revoked).
    #[tool(annotations(read_only_hint = true))]
    async fn gate_list_subscriptions(
        &self,
        Parameters(a): Parameters<subscriptions::ListSubscriptionsArgs>,
    ) -> Result<Json<subscriptions::SubscriptionList>, ToolError> {
        subscriptions::list(&self.ctx, a).await.map(Json)
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
    ) -> Result<Json<AuthorityReply>, ToolError> {
        init_authority(&self.ctx, a).await.map(Json)
    }

    /// Create a spending policy. Missing prerequisites are created in the same transaction
    /// (register_agent_via_cpi when agent_asset is omitted, init_authority, init_killswitch)
    /// and reported in selfHealed/healedSteps. A vault-funded policy (funding "vault") needs
    /// its spender, the one key that may pay from the vault. Idempotent: an existing policy is
    /// returned (with its spender renamed when another one is given).
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_init_policy(
        &self,
        Parameters(a): Parameters<InitPolicyArgs>,
    ) -> Result<Json<PolicyReply>, ToolError> {
        init_policy(&self.ctx, a).await.map(Json)
    }

    /// Engage (paused=true) or release the kill switch of an agent whose authority needs one
    /// signature. A threshold above 1 is refused: see the multisig-killswitch walkthrough.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_set_killswitch(
        &self,
        Parameters(a): Parameters<SetKillswitchArgs>,
    ) -> Result<Json<Changed<KillSwitchView>>, ToolError> {
        set_killswitch(&self.ctx, a).await.map(Json)
    }

    /// Register a capability namespace (its hash is sha256 of the name). Idempotent.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_register_namespace(
        &self,
        Parameters(a): Parameters<RegisterNamespaceArgs>,
    ) -> Result<Json<Created<NamespaceView>>, ToolError> {
        register_namespace(&self.ctx, a).await.map(Json)
    }

    /// Register the signer as an attestor. Idempotent.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_register_attestor(
        &self,
        Parameters(a): Parameters<RegisterAttestorArgs>,
    ) -> Result<Json<Created<AttestorView>>, ToolError> {
        register_attestor(&self.ctx, a).await.map(Json)
    }

    /// Ask for an attestation of a capability about an agent. Idempotent.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_request_validation(
        &self,
        Parameters(a): Parameters<RequestValidationArgs>,
    ) -> Result<Json<Created<RequestView>>, ToolError> {
        request_validation(&self.ctx, a).await.map(Json)
    }

    /// As an attestor (the signer), attest a capability about an agent until a slot; renews
    /// an existing attestation. Signature-verified through an Ed25519 instruction.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_respond_to_validation(
        &self,
        Parameters(a): Parameters<RespondArgs>,
    ) -> Result<Json<Changed<AttestationView>>, ToolError> {
        respond_to_validation(&self.ctx, a).await.map(Json)
    }

    /// Approve a payment the gate held for an approval (its pending id from the 402's
    /// X-Gate-Approval-Id or gate_list_approvals), on chain, as the signer: a member of the
    /// payer's policy authority whose threshold is 1 (more members sign together with
    /// `trust-gate approve`). The terms are read from the facilitator and checked against the
    /// id first. The same payment then passes once; the signer pays the approval's rent, back
    /// when it does. Idempotent: an approval already standing is returned.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_approve(
        &self,
        Parameters(a): Parameters<ApproveArgs>,
    ) -> Result<Json<approvals::ApproveReply>, ToolError> {
        approvals::approve(&self.ctx, a).await.map(Json)
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
    async fn gate_pay(
        &self,
        Parameters(a): Parameters<pay::PayArgs>,
    ) -> Result<Json<pay::PayResult>, ToolError> {
        pay::pay(&self.ctx, a).await.map(Json)
    }

    /// As the payee agent (the signer: its owner or agent wallet), give a held share back to
    /// the payer's wallet, disputed or not, before it is paid out (docs/holdback.md). The
    /// payer's token account is created when missing (the signer pays its rent). Idempotent:
    /// a share already refunded is returned as it is.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_refund_holdback(
        &self,
        Parameters(a): Parameters<holdback::RefundArgs>,
    ) -> Result<Json<holdback::HoldbackMove>, ToolError> {
        holdback::refund(&self.ctx, a).await.map(Json)
    }

    /// As the arbiter the payer's policy named (the signer: the key, or a member of an
    /// arbiter set of threshold 1), decide a disputed held share within its arbitration
    /// period: uphold gives it back to the payer's wallet, reject pays it to the payee
    /// (docs/holdback.md). Idempotent: a dispute already decided so is returned as it is.
    #[tool(annotations(read_only_hint = false, idempotent_hint = true))]
    async fn gate_arbitrate_holdback(
        &self,
        Parameters(a): Parameters<holdback::ArbitrateArgs>,
    ) -> Result<Json<holdback::HoldbackMove>, ToolError> {
        holdback::arbitrate(&self.ctx, a).await.map(Json)
    }

    /// As the delegator (the signer: the payer agent's owner or agent wallet), subscribe the
    /// payer agent to a payee: the subscription's facilitator may then pull up to
    /// amount_per_period every period_secs from the signer's token account, each pull
    /// evaluated and counted under the payer's (wallet-funded) policy and rated as a payment
    /// (docs/subscriptions.md). One transaction: the signer's SubscriptionAuthority for the
    /// mint (when missing), the recurring delegation and the gate's record, whose rents the
    /// signer pays. Idempotent with a nonce given: a subscription of that nonce is returned.
    #[tool(annotations(read_only_hint = false, idempotent_hint = false))]
    async fn gate_subscribe(
        &self,
        Parameters(a): Parameters<subscriptions::SubscribeArgs>,
    ) -> Result<Json<subscriptions::SubscribeReply>, ToolError> {
        subscriptions::subscribe(&self.ctx, a).await.map(Json)
    }

    /// As the subscription's delegator (the signer), cancel a gated subscription by its record
    /// or its delegation: the delegation revoked (when still open) and the record closed, both
    /// rents back to the signer. Refused before anything is sent when the signer is not the
    /// delegator.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false
    ))]
    async fn gate_unsubscribe(
        &self,
        Parameters(a): Parameters<subscriptions::UnsubscribeArgs>,
    ) -> Result<Json<subscriptions::UnsubscribeReply>, ToolError> {
        subscriptions::unsubscribe(&self.ctx, a).await.map(Json)
    }
}

#[tool_router(router = discovery_tools, vis = "pub")]
impl GateServer {
    /// The demo world: agents and their tiers, the payers' policy, the mint, the facilitator
    /// and the service URLs.
    #[tool(annotations(read_only_hint = true))]
    async fn gate_demo_state(
        &self,
        Parameters(_): Parameters<Empty>,
    ) -> Result<Json<DemoState>, ToolError> {
        discovery::demo_state(&self.ctx).map(Json)
    }

    /// Search the bundled documentation (architecture, policies, deny codes, settlement,
    /// validation, walkthroughs).
    #[tool(annotations(read_only_hint = true))]
    async fn gate_docs(
        &self,
        Parameters(a): Parameters<DocsArgs>,
    ) -> Result<Json<DocsResults>, ToolError> {
        discovery::docs(&self.ctx, a).map(Json)
    }

    /// A step-by-step integration guide by name (facilitator-x402, mount-verify,
    /// multisig-killswitch, agent-setup, validation-flow).
    #[tool(annotations(read_only_hint = true))]
    async fn gate_facilitator_walkthrough(
        &self,
        Parameters(a): Parameters<WalkthroughArgs>,
    ) -> Result<Json<Walkthrough>, ToolError> {
        discovery::walkthrough(&self.ctx, a).map(Json)
    }
}
