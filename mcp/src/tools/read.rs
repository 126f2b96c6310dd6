//! The 12 read tools: accounts of the three programs, the engine's reputation, simulation
//! and deny-code explanations. None needs a signer.

use crate::args::{digits, hex32, pubkey};
use crate::context::Ctx;
use crate::envelope::{ToolError, ToolResult};
use crate::explain;
use crate::views;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::decode::{
    self, hex, AttestorProfile, CapabilityNamespace, DecisionView, KillSwitchState,
    PolicyAuthority, ValidationAttestation, ValidationRequest, VelocityLedger,
};
use trust_gate_client::instructions::capability_hash;
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
    /// A deny reason code, 1..23 (with decision Deny, the default).
    #[schemars(range(min = 1, max = 23))]
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

pub async fn get_policy(ctx: &Ctx, a: PolicyArgs) -> ToolResult {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = ctx.pda.policy(&asset, a.policy_id);
    let p = chain::policy(&ctx.rpc, &ctx.config.ids, &asset, a.policy_id)
        .await?
        .ok_or_else(|| ToolError::not_found("PolicyAccount", address))?;
    Ok(views::policy(&address, &p))
}

pub async fn get_velocity_ledger(ctx: &Ctx, a: PolicyArgs) -> ToolResult {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = ctx.pda.velocity(&asset, a.policy_id);
    let v: VelocityLedger = read(ctx, "VelocityLedger", &address).await?;
    Ok(views::velocity(&address, &v))
}

pub async fn get_killswitch(ctx: &Ctx, a: AgentArgs) -> ToolResult {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = ctx.pda.killswitch(&asset);
    let k: KillSwitchState = read(ctx, "KillSwitchState", &address).await?;
    Ok(views::killswitch(&address, &k))
}

pub async fn get_authority(ctx: &Ctx, a: AgentArgs) -> ToolResult {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = ctx.pda.policy_authority(&asset);
    let auth: PolicyAuthority = read(ctx, "PolicyAuthority", &address).await?;
    Ok(views::authority(&address, &auth))
}

pub async fn get_vault(ctx: &Ctx, a: VaultArgs) -> ToolResult {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let mint = pubkey("mint", &a.mint)?;
    let v = chain::vault(&ctx.rpc, &ctx.config.ids, &asset, &mint)
        .await?
        .ok_or_else(|| ToolError::not_found("policy vault", ctx.pda.vault(&asset, &mint)))?;
    Ok(views::vault(&asset, &v))
}

pub async fn get_feedback_log(ctx: &Ctx, a: FeedbackLogArgs) -> ToolResult {
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
        return Ok(views::feedback_log(&address, &r, live.disputed, None));
    }
    match receipts::from_history(&ctx.rpc, &ctx.pda, &facilitator, &hash).await? {
        Some(h) => Ok(views::feedback_log(
            &address,
            &h.receipt,
            h.disputed,
            Some(h.closed_by),
        )),
        None => Err(ToolError::not_found("FeedbackLog", address)),
    }
}

pub async fn get_capability_namespace(ctx: &Ctx, a: NamespaceArgs) -> ToolResult {
    ctx.config.ids.require(Program::ValidationRegistry)?;
    let (hash, _) = capability(a.name.as_deref(), a.hash.as_deref(), "name", "hash")?;
    let address = ctx.pda.namespace(&hash);
    let n: CapabilityNamespace = read(ctx, "CapabilityNamespace", &address).await?;
    Ok(views::namespace(&address, &n))
}

pub async fn get_attestor_profile(ctx: &Ctx, a: AttestorArgs) -> ToolResult {
    ctx.config.ids.require(Program::ValidationRegistry)?;
    let attestor = pubkey("attestor", &a.attestor)?;
    let address = ctx.pda.attestor_profile(&attestor);
    let p: AttestorProfile = read(ctx, "AttestorProfile", &address).await?;
    Ok(views::attestor(&address, &p))
}

pub async fn get_validation_request(ctx: &Ctx, a: RequestArgs) -> ToolResult {
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
    Ok(views::request(&address, &r))
}

pub async fn get_validation_attestation(ctx: &Ctx, a: AttestationArgs) -> ToolResult {
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
    if found.is_empty() {
        return Err(ToolError::not_found(
            "attestation",
            format!(
                "of capability {} about {subject}",
                name.clone().unwrap_or_else(|| hex(&cap))
            ),
        )
        .hint("an attestor creates one with gate_respond_to_validation"));
    }
    let mut list: Vec<Value> = found
        .iter()
        .map(|(k, att)| {
            let mut v = views::attestation(k, att);
            v["valid"] = json!(!att.revoked && !att.is_expired(now));
            v
        })
        .collect();
    // Valid attestations first: the one a gate would count.
    list.sort_by_key(|v| !v["valid"].as_bool().unwrap_or(false));
    Ok(json!({
        "subjectAsset": subject.to_string(),
        "capabilityHash": hex(&cap),
        "capabilityName": name,
        "valid": list[0]["valid"],
        "attestations": list,
    }))
}

pub async fn simulate_payment(ctx: &Ctx, a: SimulateArgs) -> ToolResult {
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
    let mut v = serde_json::to_value(DecisionView::from(&decision)).map_err(internal)?;
    if let Some(e) = v["reasonCode"]
        .as_u64()
        .and_then(|c| explain::explain(c as u8))
    {
        v["meaning"] = json!(e.meaning);
        v["remediation"] = json!(e.remediation);
    }
    Ok(v)
}

pub async fn get_engine_reputation(ctx: &Ctx, a: AgentArgs) -> ToolResult {
    // Only the engine's id is needed, so this works on mainnet without overrides.
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let stats = ctx.pda.atom_stats(&asset);
    let base = json!({
        "agentAsset": asset.to_string(),
        "statsAccount": stats.to_string(),
        "engine": ctx.config.ids.reputation_engine.to_string(),
    });
    let mut v = base;
    match chain::engine_reputation(&ctx.rpc, &ctx.config.ids, &asset).await? {
        Ok(rep) => v["reputation"] = serde_json::to_value(rep).map_err(internal)?,
        Err(e) => {
            v["error"] = json!({"errorCode": e.code(), "message": e.to_string()});
        }
    }
    Ok(v)
}

pub fn explain_decision(a: ExplainArgs) -> ToolResult {
    match (a.decision.as_deref().map(str::trim), a.reason_code) {
        (None | Some("Deny"), Some(code)) => explain_deny(code),
        (None | Some("Deny"), None) => Err(ToolError::input(
            "reason_code",
            "missing: a Deny is explained by its reason code 1..23",
        )),
        (Some(d), None) => explain::explain_decision(d)
            .map(|e| {
                json!({
                    "decision": e.decision,
                    "meaning": e.meaning,
                    "remediation": e.remediation,
                    "gateErrorCode": e.gate_error_code,
                })
            })
            .ok_or_else(|| {
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

fn explain_deny(code: i64) -> ToolResult {
    let e = u8::try_from(code)
        .ok()
        .and_then(explain::explain)
        .ok_or_else(|| {
            ToolError::input("reason_code", format!("{code} is not a reason code 1..23"))
        })?;
    Ok(json!({
        "decision": "Deny",
        "reasonCode": e.code,
        "name": e.name,
        "category": e.category,
        "meaning": e.meaning,
        "remediation": e.remediation,
        // 6000 + code for 1..=15, 6100 + code from 16 (the strict gate's errors).
        "gateErrorCode": policy_vault::engine::DenyReason::from_code(e.code)
            .map(|r| r.strict_error_code()),
    }))
}

pub fn internal(e: impl std::fmt::Display) -> ToolError {
    ToolError::new(crate::envelope::codes::INTERNAL, e.to_string())
}
