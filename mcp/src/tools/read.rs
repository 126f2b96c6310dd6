//! The 12 read tools: accounts of the three programs, the engine's reputation, simulation
//! and deny-code explanations. None needs a signer.

use crate::args::{digits, hex32, pubkey};
use crate::context::Ctx;
use crate::envelope::{ToolError, ToolResult};
use crate::explain::{self, DecisionReport};
use crate::views::{
    AttestationView, AttestorView, AuthorityView, KillSwitchView, NamespaceView, PolicyView,
    RequestView, VaultAccount, VelocityView,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::decode::{
    self, hex, AttestorProfile, CapabilityNamespace, EngineReputation, KillSwitchState,
    PolicyAuthority, ValidationAttestation, ValidationRequest, VelocityLedger,
};
use trust_gate_client::instructions::capability_hash;
use trust_gate_client::json::{Hash, Key};
use trust_gate_client::receipts::Receipt;
use trust_gate_client::simulate::{gate_payment, now_unix, Caller, PaymentQuery};
use trust_gate_client::Program;
use trust_gate_client::{chain, receipts};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PolicyArgs {
    /// The agent's asset (base58 public key).
    pub agent_asset: String,
    /// The policy id (each agent can hold several policies).
    pub policy_id: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AgentArgs {
    /// The agent's asset (base58 public key).
    pub agent_asset: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct VaultArgs {
    /// The agent's asset (base58 public key).
    pub agent_asset: String,
    /// The vault's token mint (base58): an agent has one vault per mint.
    pub mint: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FeedbackLogArgs {
    /// The payment id hash: 64 hex characters (32 bytes).
    pub payment_id_hash: String,
    /// The facilitator that settled the payment (base58); defaults to MCP_DEFAULT_FACILITATOR.
    pub facilitator: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NamespaceArgs {
    /// The capability namespace name (its hash is sha256 of the name).
    pub name: Option<String>,
    /// The capability hash: 64 hex characters. Used when `name` is absent.
    pub hash: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AttestorArgs {
    /// The attestor's public key (base58).
    pub attestor: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RequestArgs {
    /// The agent the validation is about (base58).
    pub subject_asset: String,
    /// The capability namespace name (preferred).
    pub capability_name: Option<String>,
    /// The capability hash: 64 hex characters. Used when `capability_name` is absent.
    pub capability_hash: Option<String>,
    /// Who asked for the validation (base58).
    pub requester: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AttestationArgs {
    /// The agent the attestation is about (base58).
    pub subject_asset: String,
    /// The capability namespace name (preferred; wins when both are given).
    pub capability_name: Option<String>,
    /// The capability hash: 64 hex characters. Used when `capability_name` is absent.
    pub capability_hash: Option<String>,
    /// Only this attestor's attestation (base58); otherwise every attestor's.
    pub attestor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SimulateArgs {
    /// Who asks (base58 public key). It signs nothing and needs no SOL.
    pub caller: String,
    /// The paying agent's asset (base58).
    pub payer_agent: String,
    /// The paid agent's asset (base58).
    pub payee_agent: String,
    /// The amount in the mint's smallest units, as decimal digits.
    pub amount: String,
    /// The token mint (base58).
    pub mint: String,
    /// The payer's policy id.
    pub policy_id: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExplainArgs {
    /// A deny reason code, 1..27 (with decision Deny, the default).
    #[schemars(range(min = 1, max = 27))]
    pub reason_code: Option<i64>,
    /// The decision: "Deny" (the default: give reason_code), "RequireValidation" or
    /// "RequireApproval".
    pub decision: Option<String>,
}

/// The capability hash from a name (preferred) or a hex hash; one is required.
pub fn capability(
    name: Option<&str>,
    hash: Option<&str>,
    name_field: &str,
    hash_field: &str,
) -> Result<([u8; 32], Option<String>), ToolError> {
    match (name.map(str::trim).filter(|n| !n.is_empty()), hash) {
        (Some(n), _) => Ok((capability_hash(n), Some(n.to_string()))),
        (None, Some(h)) => Ok((hex32(hash_field, h)?, None)),
        (None, None) => Err(ToolError::input(
            name_field,
            format!("give {name_field} or {hash_field} (64 hex characters)"),
        )),
    }
}

async fn read<T: anchor_lang::AccountDeserialize>(
    ctx: &Ctx,
    what: &'static str,
    address: &Pubkey,
) -> Result<T, ToolError> {
    chain::anchor_account::<T>(&ctx.rpc, what, address)
        .await?
        .ok_or_else(|| ToolError::not_found(what, address))
}

pub async fn get_policy(ctx: &Ctx, a: PolicyArgs) -> ToolResult<PolicyView> {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = ctx.pda.policy(&asset, a.policy_id);
    let p = chain::policy(&ctx.rpc, &ctx.config.ids, &asset, a.policy_id)
        .await?
        .ok_or_else(|| ToolError::not_found("PolicyAccount", address))?;
    Ok(PolicyView::new(&address, &p))
}

pub async fn get_velocity_ledger(ctx: &Ctx, a: PolicyArgs) -> ToolResult<VelocityView> {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = ctx.pda.velocity(&asset, a.policy_id);
    let v: VelocityLedger = read(ctx, "VelocityLedger", &address).await?;
    Ok(VelocityView::new(&address, &v))
}

pub async fn get_killswitch(ctx: &Ctx, a: AgentArgs) -> ToolResult<KillSwitchView> {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = ctx.pda.killswitch(&asset);
    let k: KillSwitchState = read(ctx, "KillSwitchState", &address).await?;
    Ok(KillSwitchView::new(&address, &k))
}

pub async fn get_authority(ctx: &Ctx, a: AgentArgs) -> ToolResult<AuthorityView> {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = ctx.pda.policy_authority(&asset);
    let auth: PolicyAuthority = read(ctx, "PolicyAuthority", &address).await?;
    Ok(AuthorityView::new(&address, &auth))
}

pub async fn get_vault(ctx: &Ctx, a: VaultArgs) -> ToolResult<VaultAccount> {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let mint = pubkey("mint", &a.mint)?;
    let v = chain::vault(&ctx.rpc, &ctx.config.ids, &asset, &mint)
        .await?
        .ok_or_else(|| ToolError::not_found("policy vault", ctx.pda.vault(&asset, &mint)))?;
    Ok(VaultAccount::new(&asset, &v))
}

/// A payment's receipt: its feedback log while it exists, else (closed: true) what the
/// chain's history holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackLogView {
    /// The feedback log's address.
    pub address: Key,
    #[serde(flatten)]
    pub receipt: trust_gate_client::receipts::ReceiptView,
    /// Whether the payment was disputed.
    pub disputed: bool,
    /// Whether the log is closed (the receipt then comes from the chain's history).
    pub closed: bool,
    /// A closed log's: the transaction that closed it, when found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_by: Option<String>,
}

impl FeedbackLogView {
    fn new(
        address: &Pubkey,
        r: &Receipt,
        disputed: bool,
        closed: Option<Option<solana_sdk::signature::Signature>>,
    ) -> Self {
        FeedbackLogView {
            address: Key(*address),
            receipt: r.view(),
            disputed,
            closed: closed.is_some(),
            closed_by: closed.flatten().map(|s| s.to_string()),
        }
    }
}

pub async fn get_feedback_log(ctx: &Ctx, a: FeedbackLogArgs) -> ToolResult<FeedbackLogView> {
    ctx.config.ids.require(Program::Gate)?;
    let hash = hex32("payment_id_hash", &a.payment_id_hash)?;
    let facilitator = match (&a.facilitator, ctx.config.default_facilitator) {
        (Some(f), _) => pubkey("facilitator", f)?,
        (None, Some(f)) => f,
        (None, None) => {
            return Err(ToolError::input(
                "facilitator",
                "required: no MCP_DEFAULT_FACILITATOR is configured",
            ))
        }
    };
    let address = ctx.pda.feedback_log(&facilitator, &hash);
    // The log while it exists; once closed, what the chain's history of its address holds.
    let live = receipts::live(&ctx.rpc, &ctx.pda, &facilitator, &hash).await?;
    if let Some(r) = live.receipt {
        return Ok(FeedbackLogView::new(&address, &r, live.disputed, None));
    }
    match receipts::from_history(&ctx.rpc, &ctx.pda, &facilitator, &hash).await? {
        Some(h) => Ok(FeedbackLogView::new(
            &address,
            &h.receipt,
            h.disputed,
            Some(h.closed_by),
        )),
        None => Err(ToolError::not_found("FeedbackLog", address)),
    }
}

pub async fn get_capability_namespace(ctx: &Ctx, a: NamespaceArgs) -> ToolResult<NamespaceView> {
    ctx.config.ids.require(Program::ValidationRegistry)?;
    let (hash, _) = capability(a.name.as_deref(), a.hash.as_deref(), "name", "hash")?;
    let address = ctx.pda.namespace(&hash);
    let n: CapabilityNamespace = read(ctx, "CapabilityNamespace", &address).await?;
    Ok(NamespaceView::new(&address, &n))
}

pub async fn get_attestor_profile(ctx: &Ctx, a: AttestorArgs) -> ToolResult<AttestorView> {
    ctx.config.ids.require(Program::ValidationRegistry)?;
    let attestor = pubkey("attestor", &a.attestor)?;
    let address = ctx.pda.attestor_profile(&attestor);
    let p: AttestorProfile = read(ctx, "AttestorProfile", &address).await?;
    Ok(AttestorView::new(&address, &p))
}

pub async fn get_validation_request(ctx: &Ctx, a: RequestArgs) -> ToolResult<RequestView> {
    ctx.config.ids.require(Program::ValidationRegistry)?;
    let subject = pubkey("subject_asset", &a.subject_asset)?;
    let requester = pubkey("requester", &a.requester)?;
    let (cap, _) = capability(
        a.capability_name.as_deref(),
        a.capability_hash.as_deref(),
        "capability_name",
        "capability_hash",
    )?;
    let address = ctx.pda.validation_request(&subject, &cap, &requester);
    let r: ValidationRequest = read(ctx, "ValidationRequest", &address).await?;
    Ok(RequestView::new(&address, &r))
}

/// An attestation and whether it counts now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RatedAttestation {
    #[serde(flatten)]
    pub attestation: AttestationView,
    /// Not revoked and not expired now: one a gate would count.
    pub valid: bool,
}

/// The attestations of a capability about an agent, valid ones first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attestations {
    /// The agent they are about.
    pub subject_asset: Key,
    /// The capability.
    pub capability_hash: Hash,
    /// The capability's name when it was given (null when asked by hash).
    pub capability_name: Option<String>,
    /// Whether one of them counts now (the first one's validity).
    pub valid: bool,
    /// At least one; valid ones first.
    pub attestations: Vec<RatedAttestation>,
}

pub async fn get_validation_attestation(ctx: &Ctx, a: AttestationArgs) -> ToolResult<Attestations> {
    let registry = ctx.config.ids.require(Program::ValidationRegistry)?;
    let subject = pubkey("subject_asset", &a.subject_asset)?;
    let (cap, name) = capability(
        a.capability_name.as_deref(),
        a.capability_hash.as_deref(),
        "capability_name",
        "capability_hash",
    )?;
    let now = now_unix();
    let found: Vec<(Pubkey, ValidationAttestation)> = match &a.attestor {
        Some(att) => {
            let attestor = pubkey("attestor", att)?;
            let address = ctx.pda.attestation(&subject, &cap, &attestor);
            match chain::account(&ctx.rpc, &address).await? {
                Some(acc) if acc.owner == registry => vec![(
                    address,
                    decode::account::<ValidationAttestation>("ValidationAttestation", &acc.data)?,
                )],
                _ => Vec::new(),
            }
        }
        None => chain::attestations_about(&ctx.rpc, &ctx.config.ids, &subject, Some(&cap)).await?,
    };
    let mut list: Vec<RatedAttestation> = found
        .iter()
        .map(|(k, att)| RatedAttestation {
            attestation: AttestationView::new(k, att),
            valid: !att.revoked && !att.is_expired(now),
        })
        .collect();
    // Valid attestations first: the one a gate would count.
    list.sort_by_key(|a| !a.valid);
    let Some(first) = list.first() else {
        return Err(ToolError::not_found(
            "attestation",
            format!(
                "of capability {} about {subject}",
                name.clone().unwrap_or_else(|| hex(&cap))
            ),
        )
        .hint("an attestor creates one with gate_respond_to_validation"));
    };
    Ok(Attestations {
        subject_asset: Key(subject),
        capability_hash: Hash(cap),
        capability_name: name,
        valid: first.valid,
        attestations: list,
    })
}

pub async fn simulate_payment(ctx: &Ctx, a: SimulateArgs) -> ToolResult<DecisionReport> {
    let b = ctx.builder()?;
    let q = PaymentQuery {
        payer_asset: pubkey("payer_agent", &a.payer_agent)?,
        payee_asset: pubkey("payee_agent", &a.payee_agent)?,
        amount: digits("amount", &a.amount)?,
        mint: pubkey("mint", &a.mint)?,
        policy_id: a.policy_id,
    };
    let caller = pubkey("caller", &a.caller)?;
    let decision = gate_payment(&ctx.rpc, &b, Caller::Pubkey(caller), q).await?;
    Ok(DecisionReport::new(&(&decision).into()))
}

/// Why an agent has no reputation block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReputationUnread {
    /// unrated, wrong_owner, size_mismatch or schema_mismatch.
    pub error_code: String,
    /// What was found.
    pub message: String,
}

/// The reputation engine's block of an agent, or why it could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReputationView {
    /// The agent's asset.
    pub agent_asset: Key,
    /// The engine's stats account of the agent.
    pub stats_account: Key,
    /// The reputation engine's program id.
    pub engine: Key,
    /// The reputation block, when the account passes the owner, size and schema checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reputation: Option<EngineReputation>,
    /// Why there is no reputation block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ReputationUnread>,
}

pub async fn get_engine_reputation(ctx: &Ctx, a: AgentArgs) -> ToolResult<ReputationView> {
    // Only the engine's id is needed, so this works on mainnet without overrides.
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let read = chain::engine_reputation(&ctx.rpc, &ctx.config.ids, &asset).await?;
    Ok(ReputationView {
        agent_asset: Key(asset),
        stats_account: Key(ctx.pda.atom_stats(&asset)),
        engine: Key(ctx.config.ids.reputation_engine),
        error: read.as_ref().err().map(|e| ReputationUnread {
            error_code: e.code().to_string(),
            message: e.to_string(),
        }),
        reputation: read.ok(),
    })
}

pub fn explain_decision(a: ExplainArgs) -> ToolResult<explain::Explained> {
    match (a.decision.as_deref().map(str::trim), a.reason_code) {
        (None | Some("Deny"), Some(code)) => u8::try_from(code)
            .ok()
            .and_then(explain::Explained::deny)
            .ok_or_else(|| {
                ToolError::input("reason_code", format!("{code} is not a reason code 1..27"))
            }),
        (None | Some("Deny"), None) => Err(ToolError::input(
            "reason_code",
            "missing: a Deny is explained by its reason code 1..27",
        )),
        (Some(d), None) => explain::Explained::decision(d).ok_or_else(|| {
            ToolError::input(
                "decision",
                format!("{d:?} is not Deny, RequireValidation or RequireApproval"),
            )
        }),
        (Some(d), Some(_)) => Err(ToolError::input(
            "reason_code",
            format!("only a Deny has a reason code, not {d:?}"),
        )),
    }
}
