//! The 7 write tools. Each reads first and is idempotent: what already exists is returned,
//! not created again. Each needs the signer (`auth_required` otherwise).

use crate::args::{hex32, pubkey};
use crate::context::Ctx;
use crate::envelope::{ToolError, ToolResult};
use crate::policy_input::{self, PolicyInput};
use crate::tools::read::capability;
use crate::views;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::chain;
use trust_gate_client::decode::{
    AttestorProfile, CapabilityNamespace, KillSwitchState, PolicyAuthority, TakeOverRequest,
    ValidationRequest,
};
use trust_gate_client::instructions::{ed25519_verify, Claim};
use trust_gate_client::Builder;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct InitAuthorityArgs {
    /// The agent's asset (base58); the signer must own it (its live MPL Core owner). When the
    /// agent's authority was created by a previous owner (the agent was sold), the signer
    /// requests to take it over with these members and threshold; called again once the
    /// request's delay has passed, it completes the take-over.
    pub agent_asset: String,
    /// Members of the authority (base58); default: the signer alone.
    pub members: Option<Vec<String>>,
    /// Signatures needed to act, 1..members (default 1).
    #[schemars(range(min = 1))]
    pub threshold: Option<u8>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct InitPolicyArgs {
    /// The agent's asset (base58). Omit it to register a new agent (owned by the signer) in
    /// the same transaction.
    pub agent_asset: Option<String>,
    /// The policy id; policies are immutable, a new rule set takes a new id.
    pub policy_id: u32,
    /// The metadata URI of a newly registered agent (only used when agent_asset is omitted).
    pub metadata_uri: Option<String>,
    /// With funding "vault": the one key that may pay from the vault (base58; usually the
    /// agent's hot key, the registry's agent wallet). Required for a vault-funded policy.
    pub spender: Option<String>,
    #[serde(flatten)]
    pub policy: PolicyInput,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SetKillswitchArgs {
    /// The agent's asset (base58).
    pub agent_asset: String,
    /// true engages the kill switch (every payment denied), false releases it.
    pub paused: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RegisterNamespaceArgs {
    /// The namespace name; its sha256 is the capability hash.
    pub name: String,
    /// Version label (default "1").
    pub version: Option<String>,
    /// Where the claim schema is described (default empty).
    pub schema_uri: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RegisterAttestorArgs {
    /// A URI naming the attestor (default empty).
    pub display_name_uri: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RequestValidationArgs {
    /// The agent to be attested (base58).
    pub subject_asset: String,
    /// The capability namespace name (must be registered).
    pub capability_name: String,
    /// Hash of the claim's URI: 64 hex characters (default zero).
    pub claim_uri_hash: Option<String>,
    /// The slot by which an answer is wanted (at least 1).
    #[schemars(range(min = 1))]
    pub deadline_slot: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RespondArgs {
    /// The agent attested (base58).
    pub subject_asset: String,
    /// The capability namespace name (preferred).
    pub capability_name: Option<String>,
    /// The capability hash (64 hex characters) when no name is given.
    pub capability_hash: Option<String>,
    /// Hash of the evidence: 64 hex characters (default zero).
    pub claim_payload_hash: Option<String>,
    /// The slot at which the attestation expires (at least 1).
    #[schemars(range(min = 1))]
    pub expires_at_slot: u64,
}

pub(crate) fn ok_sent(signature: impl ToString, mut v: Value) -> Value {
    v["signature"] = json!(signature.to_string());
    v
}

pub async fn init_authority(ctx: &Ctx, a: InitAuthorityArgs) -> ToolResult {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_init_authority")?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let address = b.pda.policy_authority(&asset);
    let existing =
        chain::anchor_account::<PolicyAuthority>(&ctx.rpc, "PolicyAuthority", &address).await?;
    // An authority created by a previous owner of the asset (the agent was sold) is taken
    // over by its live owner, never at once: a request, completed once its delay has passed
    // and before it lapses (on-chain rule; a lapsed one is asked for again); one that is
    // still current is returned as it is.
    let take_over = match &existing {
        Some(current) => {
            let live = chain::asset_owner(&ctx.rpc, &asset).await?;
            if current.owner == live || live != signer.pubkey() {
                let mut v = views::authority(&address, current);
                v["created"] = json!(false);
                v["current"] = json!(current.owner == live);
                return Ok(v);
            }
            let request_address = b.pda.take_over_request(&asset);
            let request = chain::anchor_account::<TakeOverRequest>(
                &ctx.rpc,
                "TakeOverRequest",
                &request_address,
            )
            .await?;
            if let Some(r) = request.filter(|r| r.new_owner == signer.pubkey()) {
                if !r.has_lapsed(chain::unix_time(&ctx.rpc).await?) {
                    return complete_take_over(ctx, &b, signer, &address, &asset, &r).await;
                }
            }
            true
        }
        None => false,
    };
    let members = match &a.members {
        None => vec![signer.pubkey()],
        Some(list) if list.is_empty() => {
            return Err(ToolError::input("members", "give at least one member"))
        }
        Some(list) => list
            .iter()
            .map(|m| pubkey("members", m))
            .collect::<Result<Vec<_>, _>>()?,
    };
    let threshold = a.threshold.unwrap_or(1);
    if threshold == 0 || usize::from(threshold) > members.len() {
        return Err(ToolError::input(
            "threshold",
            format!("must be 1..{} (the number of members)", members.len()),
        ));
    }
    let members_json: Vec<String> = members.iter().map(|m| m.to_string()).collect();
    if take_over {
        let ix = b.request_take_over(&signer.pubkey(), &asset, members, threshold);
        let sig = ctx.send(&[ix], signer, &[]).await?;
        let request = chain::anchor_account::<TakeOverRequest>(
            &ctx.rpc,
            "TakeOverRequest",
            &b.pda.take_over_request(&asset),
        )
        .await?
        .ok_or_else(|| ToolError::not_found("TakeOverRequest", "the request just sent"))?;
        let mut v = authority_reply(&address, &asset, signer, &members_json, threshold);
        v["created"] = json!(false);
        v["takenOver"] = json!(false);
        v["takeOverRequested"] = json!(true);
        v["effectiveAt"] = json!(request.effective_at);
        v["lapsesAfter"] = json!(request.lapses_after());
        v["hint"] = json!("the previous owner's members may cancel or accept it until then; call gate_init_authority again once effectiveAt has passed, and no later than lapsesAfter, to complete it");
        return Ok(ok_sent(sig, v));
    }
    let ix = b.init_authority(&signer.pubkey(), &asset, members, threshold);
    let sig = ctx.send(&[ix], signer, &[]).await?;
    let mut v = authority_reply(&address, &asset, signer, &members_json, threshold);
    v["created"] = json!(true);
    v["takenOver"] = json!(false);
    Ok(ok_sent(sig, v))
}

/// What `gate_init_authority` answers about the authority the signer creates or takes over.
fn authority_reply(
    address: &Pubkey,
    asset: &Pubkey,
    signer: &Keypair,
    members: &[String],
    threshold: u8,
) -> Value {
    json!({
        "address": address.to_string(),
        "asset": asset.to_string(),
        "owner": signer.pubkey().to_string(),
        "members": members,
        "threshold": threshold,
    })
}

/// The signer's own pending take-over that has not lapsed: completed when its delay has
/// passed by the cluster's clock, else reported with the time it may be completed.
async fn complete_take_over(
    ctx: &Ctx,
    b: &Builder,
    signer: &Keypair,
    address: &Pubkey,
    asset: &Pubkey,
    request: &TakeOverRequest,
) -> ToolResult {
    let members: Vec<String> = request.members.iter().map(|m| m.to_string()).collect();
    let mut v = authority_reply(address, asset, signer, &members, request.threshold);
    v["created"] = json!(false);
    v["effectiveAt"] = json!(request.effective_at);
    v["lapsesAfter"] = json!(request.lapses_after());
    if chain::unix_time(&ctx.rpc).await? < request.effective_at {
        v["takenOver"] = json!(false);
        v["takeOverPending"] = json!(true);
        v["hint"] = json!("the take-over takes effect at effectiveAt (unix seconds, the cluster's clock) and lapses after lapsesAfter; call again in between");
        return Ok(v);
    }
    let ix = b.complete_take_over(asset, &request.rent_payer);
    let sig = ctx.send(&[ix], signer, &[]).await?;
    v["takenOver"] = json!(true);
    Ok(ok_sent(sig, v))
}

/// What `gate_init_policy` must create before the policy itself, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prerequisites {
    pub agent_registered: bool,
    pub authority_exists: bool,
    pub killswitch_exists: bool,
}

/// The self-heal steps, in the order they run in the transaction.
pub fn heal_steps(p: Prerequisites) -> Vec<&'static str> {
    let mut steps = Vec::new();
    if !p.agent_registered {
        steps.push("register_agent_via_cpi");
    }
    if !p.authority_exists {
        steps.push("init_authority");
    }
    if !p.killswitch_exists {
        steps.push("init_killswitch");
    }
    steps
}

pub async fn init_policy(ctx: &Ctx, a: InitPolicyArgs) -> ToolResult {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_init_policy")?;
    let params = policy_input::params(&a.policy)?;
    let spender = match (&a.spender, params.is_vault_funded()) {
        (Some(s), true) => Some(pubkey("spender", s)?),
        (None, true) => {
            return Err(ToolError::input(
                "spender",
                "required when funding is \"vault\": the one key that may pay from the vault (usually the agent's hot key)",
            ))
        }
        (Some(_), false) => {
            return Err(ToolError::input(
                "spender",
                "only a vault-funded policy (funding \"vault\") has a spender",
            ))
        }
        (None, false) => None,
    };
    // A new agent needs its asset key to sign its registration, so only an omitted
    // agent_asset can be registered here.
    let new_asset = a.agent_asset.is_none().then(Keypair::new);
    let asset = match (&a.agent_asset, &new_asset) {
        (Some(s), _) => pubkey("agent_asset", s)?,
        (None, Some(k)) => k.pubkey(),
        (None, None) => unreachable!("new_asset is set when agent_asset is None"),
    };
    let keys = [
        b.pda.agent_account(&asset),
        b.pda.policy_authority(&asset),
        b.pda.killswitch(&asset),
        b.pda.policy(&asset, a.policy_id),
    ];
    let found = chain::accounts(&ctx.rpc, &keys).await?;
    let pre = Prerequisites {
        agent_registered: found[0].is_some(),
        authority_exists: found[1].is_some(),
        killswitch_exists: found[2].is_some(),
    };
    if let Some(auth) = &found[1] {
        let auth: PolicyAuthority =
            trust_gate_client::decode::account("PolicyAuthority", &auth.data)?;
        if auth.threshold > 1 {
            return Err(threshold_required(&auth, "create a policy"));
        }
    }
    if !pre.agent_registered && new_asset.is_none() {
        return Err(ToolError::not_found("agent", format!("{asset} in the agent registry"))
            .hint("omit agent_asset to register a new agent owned by the signer in the same transaction"));
    }
    let rules = policy_input::rules(&a.policy, b.pda.payee_list(&asset, a.policy_id))?;
    let threshold = a.policy.approval_threshold()?;
    if let Some(existing) = &found[3] {
        let any = trust_gate_client::decode::policy(&existing.data)?;
        let mut v = views::policy(&keys[3], &any);
        let p = &any;
        v["created"] = json!(false);
        v["matchesRequest"] = json!(
            p.params == params
                && any.rules().copied().unwrap_or_default() == rules
                && any.approval_threshold == threshold
        );
        v["selfHealed"] = json!(false);
        v["healedSteps"] = json!([]);
        // The rule is immutable, but a vault-funded policy's spender is renamed by the
        // threshold: a different spender in the request renames it.
        if let Some(spender) = spender.filter(|s| p.params.is_vault_funded() && p.spender != *s) {
            let ix = b.set_vault_spender(&signer.pubkey(), &[], &asset, a.policy_id, &spender);
            let sig = ctx.send(&[ix], signer, &[]).await?;
            v["spender"] = json!(spender.to_string());
            v["spenderChanged"] = json!(true);
            return Ok(ok_sent(sig, v));
        }
        return Ok(v);
    }
    let steps = heal_steps(pre);
    let me = signer.pubkey();
    let mut ixs = Vec::new();
    for step in &steps {
        ixs.push(match *step {
            "register_agent_via_cpi" => {
                let collection = chain::base_collection(&ctx.rpc, &b.ids).await?;
                b.register_agent_via_cpi(
                    &me,
                    &asset,
                    &collection,
                    a.metadata_uri.clone().unwrap_or_default(),
                )
            }
            "init_authority" => b.init_authority(&me, &asset, vec![me], 1),
            _ => b.init_killswitch(&me, &asset),
        });
    }
    // A vault-funded policy pays from the agent's vault for its mint: open it when missing
    // (an empty vault; anyone may deposit into it with a plain transfer).
    let vault = if params.is_vault_funded() {
        let address = b.pda.vault(&asset, &params.mint);
        if chain::vault(&ctx.rpc, &b.ids, &asset, &params.mint)
            .await?
            .is_none()
        {
            let mint = chain::mint(&ctx.rpc, "mint", &params.mint)
                .await?
                .ok_or_else(|| ToolError::not_found("mint", params.mint))?;
            ixs.push(b.open_vault(&me, &[], &asset, &params.mint, &mint.token_program.id()));
            Some(json!({"address": address.to_string(), "opened": true}))
        } else {
            Some(json!({"address": address.to_string(), "opened": false}))
        }
    } else {
        None
    };
    ixs.push(b.init_policy(&me, &[], &asset, a.policy_id, params, rules, threshold));
    if let Some(spender) = &spender {
        ixs.push(b.set_vault_spender(&me, &[], &asset, a.policy_id, spender));
    }
    let extra: Vec<&Keypair> = new_asset.iter().collect();
    let sig = ctx.send(&ixs, signer, &extra).await?;
    let p = chain::policy(&ctx.rpc, &b.ids, &asset, a.policy_id)
        .await?
        .ok_or_else(|| ToolError::not_found("PolicyAccount", keys[3]))?;
    let mut v = views::policy(&keys[3], &p);
    v["created"] = json!(true);
    v["selfHealed"] = json!(!steps.is_empty());
    v["healedSteps"] = json!(steps);
    if let Some(vault) = vault {
        v["vault"] = vault;
    }
    Ok(ok_sent(sig, v))
}

/// `auth_required`: the authority's threshold is above the one key this server holds.
fn threshold_required(auth: &PolicyAuthority, what: &str) -> ToolError {
    ToolError::new(
        crate::envelope::codes::AUTH_REQUIRED,
        format!(
            "to {what}, the agent's authority needs {} of {} member signatures and this server holds one key",
            auth.threshold,
            auth.members.len()
        ),
    )
    .hint("gather the members' signatures in one transaction: gate_facilitator_walkthrough {\"name\":\"multisig-killswitch\"}")
}

pub async fn set_killswitch(ctx: &Ctx, a: SetKillswitchArgs) -> ToolResult {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_set_killswitch")?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let auth_key = b.pda.policy_authority(&asset);
    let auth: PolicyAuthority = chain::anchor_account(&ctx.rpc, "PolicyAuthority", &auth_key)
        .await?
        .ok_or_else(|| {
            ToolError::not_found("PolicyAuthority", auth_key)
                .hint("create it with gate_init_authority")
        })?;
    if auth.threshold > 1 {
        return Err(threshold_required(&auth, "set the kill switch"));
    }
    let ks_key = b.pda.killswitch(&asset);
    let current =
        chain::anchor_account::<KillSwitchState>(&ctx.rpc, "KillSwitchState", &ks_key).await?;
    if let Some(k) = current.as_ref().filter(|k| k.paused == a.paused) {
        let mut v = views::killswitch(&ks_key, k);
        v["changed"] = json!(false);
        return Ok(v);
    }
    let me = signer.pubkey();
    let mut ixs = Vec::new();
    if current.is_none() {
        ixs.push(b.init_killswitch(&me, &asset));
    }
    ixs.push(b.set_killswitch(&me, &[], &asset, a.paused));
    let sig = ctx.send(&ixs, signer, &[]).await?;
    let k: KillSwitchState = chain::anchor_account(&ctx.rpc, "KillSwitchState", &ks_key)
        .await?
        .ok_or_else(|| ToolError::not_found("KillSwitchState", ks_key))?;
    let mut v = views::killswitch(&ks_key, &k);
    v["changed"] = json!(true);
    Ok(ok_sent(sig, v))
}

pub async fn register_namespace(ctx: &Ctx, a: RegisterNamespaceArgs) -> ToolResult {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_register_namespace")?;
    let name = a.name.trim();
    if name.is_empty() {
        return Err(ToolError::input("name", "must not be empty"));
    }
    let (hash, _) = capability(Some(name), None, "name", "hash")?;
    let address = b.pda.namespace(&hash);
    if let Some(n) =
        chain::anchor_account::<CapabilityNamespace>(&ctx.rpc, "CapabilityNamespace", &address)
            .await?
    {
        let mut v = views::namespace(&address, &n);
        v["created"] = json!(false);
        return Ok(v);
    }
    let ix = b.register_namespace(
        &signer.pubkey(),
        name,
        a.version.as_deref().unwrap_or("1"),
        a.schema_uri.as_deref().unwrap_or(""),
    );
    let sig = ctx.send(&[ix], signer, &[]).await?;
    let n: CapabilityNamespace = chain::anchor_account(&ctx.rpc, "CapabilityNamespace", &address)
        .await?
        .ok_or_else(|| ToolError::not_found("CapabilityNamespace", address))?;
    let mut v = views::namespace(&address, &n);
    v["created"] = json!(true);
    Ok(ok_sent(sig, v))
}

pub async fn register_attestor(ctx: &Ctx, a: RegisterAttestorArgs) -> ToolResult {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_register_attestor")?;
    let address = b.pda.attestor_profile(&signer.pubkey());
    if let Some(p) =
        chain::anchor_account::<AttestorProfile>(&ctx.rpc, "AttestorProfile", &address).await?
    {
        let mut v = views::attestor(&address, &p);
        v["created"] = json!(false);
        return Ok(v);
    }
    let ix = b.register_attestor(
        &signer.pubkey(),
        a.display_name_uri.as_deref().unwrap_or(""),
    );
    let sig = ctx.send(&[ix], signer, &[]).await?;
    let p: AttestorProfile = chain::anchor_account(&ctx.rpc, "AttestorProfile", &address)
        .await?
        .ok_or_else(|| ToolError::not_found("AttestorProfile", address))?;
    let mut v = views::attestor(&address, &p);
    v["created"] = json!(true);
    Ok(ok_sent(sig, v))
}

pub async fn request_validation(ctx: &Ctx, a: RequestValidationArgs) -> ToolResult {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_request_validation")?;
    let subject = pubkey("subject_asset", &a.subject_asset)?;
    let (cap, _) = capability(
        Some(&a.capability_name),
        None,
        "capability_name",
        "capability_hash",
    )?;
    if a.deadline_slot == 0 {
        return Err(ToolError::input("deadline_slot", "must be at least 1"));
    }
    let uri_hash = match &a.claim_uri_hash {
        Some(h) => hex32("claim_uri_hash", h)?,
        None => [0u8; 32],
    };
    let address = b.pda.validation_request(&subject, &cap, &signer.pubkey());
    if let Some(r) =
        chain::anchor_account::<ValidationRequest>(&ctx.rpc, "ValidationRequest", &address).await?
    {
        let mut v = views::request(&address, &r);
        v["created"] = json!(false);
        return Ok(v);
    }
    let ix = b.request_validation(&signer.pubkey(), &subject, &cap, uri_hash, a.deadline_slot);
    let sig = ctx.send(&[ix], signer, &[]).await?;
    let r: ValidationRequest = chain::anchor_account(&ctx.rpc, "ValidationRequest", &address)
        .await?
        .ok_or_else(|| ToolError::not_found("ValidationRequest", address))?;
    let mut v = views::request(&address, &r);
    v["created"] = json!(true);
    Ok(ok_sent(sig, v))
}

pub async fn respond_to_validation(ctx: &Ctx, a: RespondArgs) -> ToolResult {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_respond_to_validation")?;
    let subject = pubkey("subject_asset", &a.subject_asset)?;
    let (cap, _) = capability(
        a.capability_name.as_deref(),
        a.capability_hash.as_deref(),
        "capability_name",
        "capability_hash",
    )?;
    if a.expires_at_slot == 0 {
        return Err(ToolError::input("expires_at_slot", "must be at least 1"));
    }
    let claim = Claim {
        subject,
        capability: cap,
        payload_hash: match &a.claim_payload_hash {
            Some(h) => hex32("claim_payload_hash", h)?,
            None => [0u8; 32],
        },
        uri_hash: [0u8; 32],
        expires_at_slot: a.expires_at_slot,
    };
    let address = b.pda.attestation(&subject, &cap, &signer.pubkey());
    // Same claim and expiry already recorded and live: nothing to renew.
    let now = trust_gate_client::simulate::now_unix();
    if let Some(existing) =
        chain::anchor_account::<trust_gate_client::decode::ValidationAttestation>(
            &ctx.rpc,
            "ValidationAttestation",
            &address,
        )
        .await?
        .filter(|e| {
            !e.revoked
                && !e.is_expired(now)
                && e.claim_payload_hash == claim.payload_hash
                && e.expires_at_slot == claim.expires_at_slot
        })
    {
        let mut v = views::attestation(&address, &existing);
        v["changed"] = json!(false);
        return Ok(v);
    }
    // The Ed25519 instruction before it marks the attestation as signature-verified.
    let ixs = [
        ed25519_verify(signer, &claim.message()),
        b.respond_to_validation(&signer.pubkey(), &claim),
    ];
    let sig = ctx.send(&ixs, signer, &[]).await?;
    let att: trust_gate_client::decode::ValidationAttestation =
        chain::anchor_account(&ctx.rpc, "ValidationAttestation", &address)
            .await?
            .ok_or_else(|| ToolError::not_found("ValidationAttestation", address))?;
    let mut v = views::attestation(&address, &att);
    v["changed"] = json!(true);
    Ok(ok_sent(sig, v))
}
