//! The 7 write tools. Each reads first and is idempotent: what already exists is returned,
//! not created again. Each needs the signer (`auth_required` otherwise).

use crate::args::{hex32, pubkey};
use crate::context::Ctx;
use crate::envelope::{ToolError, ToolResult};
use crate::policy_input::{self, PolicyInput};
use crate::tools::read::capability;
use crate::views::{
    AttestationView, AttestorView, AuthorityView, KillSwitchView, NamespaceView, PolicyView,
    RequestView,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::chain;
use trust_gate_client::decode::{
    AttestorProfile, CapabilityNamespace, KillSwitchState, PolicyAuthority, TakeOverRequest,
    ValidationRequest,
};
use trust_gate_client::instructions::{ed25519_verify, Claim};
use trust_gate_client::json::Key;
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

/// A write tool's answer about an account it creates: the account as it is now, whether
/// this call created it, and the transaction when one was sent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Created<V> {
    #[serde(flatten)]
    pub account: V,
    /// Whether this call created it (false: it existed and is returned as it is).
    pub created: bool,
    /// The transaction sent (absent when nothing was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// A write tool's answer about an account it changes: the account as it is now, whether
/// this call changed it, and the transaction when one was sent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Changed<V> {
    #[serde(flatten)]
    pub account: V,
    /// Whether this call changed it (false: it already was as asked).
    pub changed: bool,
    /// The transaction sent (absent when nothing was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

pub(crate) fn sent(signature: impl ToString) -> Option<String> {
    Some(signature.to_string())
}

/// What `gate_init_authority` answers: the authority the signer created, took over or asked
/// to take over, or the existing one.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorityReply {
    #[serde(flatten)]
    pub authority: AuthorityView,
    /// Whether this call created it.
    pub created: bool,
    /// An existing authority's: whether it was created by the asset's live owner (false:
    /// a previous owner's, which the live owner may take over).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<bool>,
    /// Whether this call completed a take-over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_over: Option<bool>,
    /// Whether this call requested a take-over (the members and threshold shown are the
    /// request's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub take_over_requested: Option<bool>,
    /// Whether the signer's take-over waits for its delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub take_over_pending: Option<bool>,
    /// A take-over's: unix seconds (the cluster's clock) from which it may be completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_at: Option<i64>,
    /// A take-over's: unix seconds after which the request lapses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lapses_after: Option<i64>,
    /// What to do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The transaction sent (absent when nothing was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl AuthorityReply {
    fn of(authority: AuthorityView, created: bool) -> Self {
        AuthorityReply {
            authority,
            created,
            current: None,
            taken_over: None,
            take_over_requested: None,
            take_over_pending: None,
            effective_at: None,
            lapses_after: None,
            hint: None,
            signature: None,
        }
    }
}

pub async fn init_authority(ctx: &Ctx, a: InitAuthorityArgs) -> ToolResult<AuthorityReply> {
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
                return Ok(AuthorityReply {
                    current: Some(current.owner == live),
                    ..AuthorityReply::of(AuthorityView::new(&address, current), false)
                });
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
    let shown = authority_shown(&address, &asset, signer, &members, threshold);
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
        return Ok(AuthorityReply {
            taken_over: Some(false),
            take_over_requested: Some(true),
            effective_at: Some(request.effective_at),
            lapses_after: Some(request.lapses_after()),
            hint: Some("the previous owner's members may cancel or accept it until then; call gate_init_authority again once effectiveAt has passed, and no later than lapsesAfter, to complete it".into()),
            signature: sent(sig),
            ..AuthorityReply::of(shown, false)
        });
    }
    let ix = b.init_authority(&signer.pubkey(), &asset, members, threshold);
    let sig = ctx.send(&[ix], signer, &[]).await?;
    Ok(AuthorityReply {
        taken_over: Some(false),
        signature: sent(sig),
        ..AuthorityReply::of(shown, true)
    })
}

/// The authority the signer creates or takes over, as it will be.
fn authority_shown(
    address: &Pubkey,
    asset: &Pubkey,
    signer: &Keypair,
    members: &[Pubkey],
    threshold: u8,
) -> AuthorityView {
    AuthorityView {
        address: Key(*address),
        asset: Key(*asset),
        owner: Key(signer.pubkey()),
        members: members.iter().map(Key::from).collect(),
        threshold,
    }
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
) -> ToolResult<AuthorityReply> {
    let shown = authority_shown(address, asset, signer, &request.members, request.threshold);
    let reply = AuthorityReply {
        effective_at: Some(request.effective_at),
        lapses_after: Some(request.lapses_after()),
        ..AuthorityReply::of(shown, false)
    };
    if chain::unix_time(&ctx.rpc).await? < request.effective_at {
        return Ok(AuthorityReply {
            taken_over: Some(false),
            take_over_pending: Some(true),
            hint: Some("the take-over takes effect at effectiveAt (unix seconds, the cluster's clock) and lapses after lapsesAfter; call again in between".into()),
            ..reply
        });
    }
    let ix = b.complete_take_over(asset, &request.rent_payer);
    let sig = ctx.send(&[ix], signer, &[]).await?;
    Ok(AuthorityReply {
        taken_over: Some(true),
        signature: sent(sig),
        ..reply
    })
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

/// A vault-funded policy's vault, opened with it when missing.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyVault {
    /// The vault's address (anyone may deposit into it with a plain transfer).
    pub address: Key,
    /// Whether this call opened it (empty).
    pub opened: bool,
}

/// What `gate_init_policy` answers: the policy as it is now.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyReply {
    #[serde(flatten)]
    pub policy: PolicyView,
    /// Whether this call created it.
    pub created: bool,
    /// An existing policy's: whether its rules are the ones asked for (policies are
    /// immutable: another rule set takes another policy_id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches_request: Option<bool>,
    /// Whether missing prerequisites were created in the same transaction.
    pub self_healed: bool,
    /// The prerequisites created, in order (register_agent_via_cpi, init_authority,
    /// init_killswitch).
    pub healed_steps: Vec<String>,
    /// Whether this call renamed an existing vault-funded policy's spender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spender_changed: Option<bool>,
    /// A vault-funded policy's vault, when this call created the policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vault: Option<PolicyVault>,
    /// The transaction sent (absent when nothing was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

pub async fn init_policy(ctx: &Ctx, a: InitPolicyArgs) -> ToolResult<PolicyReply> {
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
        let p = trust_gate_client::decode::policy(&existing.data)?;
        let mut reply = PolicyReply {
            policy: PolicyView::new(&keys[3], &p),
            created: false,
            matches_request: Some(
                p.params == params
                    && p.rules().copied().unwrap_or_default() == rules
                    && p.approval_threshold == threshold,
            ),
            self_healed: false,
            healed_steps: Vec::new(),
            spender_changed: None,
            vault: None,
            signature: None,
        };
        // The rule is immutable, but a vault-funded policy's spender is renamed by the
        // threshold: a different spender in the request renames it.
        if let Some(spender) = spender.filter(|s| p.params.is_vault_funded() && p.spender != *s) {
            let ix = b.set_vault_spender(&signer.pubkey(), &[], &asset, a.policy_id, &spender);
            let sig = ctx.send(&[ix], signer, &[]).await?;
            reply.policy.spender = Some(Key(spender));
            reply.spender_changed = Some(true);
            reply.signature = sent(sig);
        }
        return Ok(reply);
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
            Some(PolicyVault {
                address: Key(address),
                opened: true,
            })
        } else {
            Some(PolicyVault {
                address: Key(address),
                opened: false,
            })
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
    Ok(PolicyReply {
        policy: PolicyView::new(&keys[3], &p),
        created: true,
        matches_request: None,
        self_healed: !steps.is_empty(),
        healed_steps: steps.iter().map(|s| s.to_string()).collect(),
        spender_changed: None,
        vault,
        signature: sent(sig),
    })
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

pub async fn set_killswitch(
    ctx: &Ctx,
    a: SetKillswitchArgs,
) -> ToolResult<Changed<KillSwitchView>> {
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
        return Ok(Changed {
            account: KillSwitchView::new(&ks_key, k),
            changed: false,
            signature: None,
        });
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
    Ok(Changed {
        account: KillSwitchView::new(&ks_key, &k),
        changed: true,
        signature: sent(sig),
    })
}

pub async fn register_namespace(
    ctx: &Ctx,
    a: RegisterNamespaceArgs,
) -> ToolResult<Created<NamespaceView>> {
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
        return Ok(Created {
            account: NamespaceView::new(&address, &n),
            created: false,
            signature: None,
        });
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
    Ok(Created {
        account: NamespaceView::new(&address, &n),
        created: true,
        signature: sent(sig),
    })
}

pub async fn register_attestor(
    ctx: &Ctx,
    a: RegisterAttestorArgs,
) -> ToolResult<Created<AttestorView>> {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_register_attestor")?;
    let address = b.pda.attestor_profile(&signer.pubkey());
    if let Some(p) =
        chain::anchor_account::<AttestorProfile>(&ctx.rpc, "AttestorProfile", &address).await?
    {
        return Ok(Created {
            account: AttestorView::new(&address, &p),
            created: false,
            signature: None,
        });
    }
    let ix = b.register_attestor(
        &signer.pubkey(),
        a.display_name_uri.as_deref().unwrap_or(""),
    );
    let sig = ctx.send(&[ix], signer, &[]).await?;
    let p: AttestorProfile = chain::anchor_account(&ctx.rpc, "AttestorProfile", &address)
        .await?
        .ok_or_else(|| ToolError::not_found("AttestorProfile", address))?;
    Ok(Created {
        account: AttestorView::new(&address, &p),
        created: true,
        signature: sent(sig),
    })
}

pub async fn request_validation(
    ctx: &Ctx,
    a: RequestValidationArgs,
) -> ToolResult<Created<RequestView>> {
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
        return Ok(Created {
            account: RequestView::new(&address, &r),
            created: false,
            signature: None,
        });
    }
    let ix = b.request_validation(&signer.pubkey(), &subject, &cap, uri_hash, a.deadline_slot);
    let sig = ctx.send(&[ix], signer, &[]).await?;
    let r: ValidationRequest = chain::anchor_account(&ctx.rpc, "ValidationRequest", &address)
        .await?
        .ok_or_else(|| ToolError::not_found("ValidationRequest", address))?;
    Ok(Created {
        account: RequestView::new(&address, &r),
        created: true,
        signature: sent(sig),
    })
}

pub async fn respond_to_validation(
    ctx: &Ctx,
    a: RespondArgs,
) -> ToolResult<Changed<AttestationView>> {
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
        return Ok(Changed {
            account: AttestationView::new(&address, &existing),
            changed: false,
            signature: None,
        });
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
    Ok(Changed {
        account: AttestationView::new(&address, &att),
        changed: true,
        signature: sent(sig),
    })
}
