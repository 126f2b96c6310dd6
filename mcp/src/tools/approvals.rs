//! The payments a facilitator holds for an approval (RequireApproval): listing them, and
//! approving one on chain as a member of the payer's policy authority.
//!
//! The pending records live at the facilitator (`GET /approvals`); the server reads only the
//! facilitator it was configured with (`MCP_FACILITATOR_URL`, set by `trust-gate up`), never a
//! URL from a tool's arguments. An approval's terms are checked against its id (their
//! approval address) before anything is signed, so a facilitator cannot swap them.

use crate::args::pubkey;
use crate::context::Ctx;
use crate::envelope::{codes, ToolError, ToolResult};
use crate::tools::write::sent;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use solana_sdk::signature::Signer;
use std::time::Duration;
use trust_gate_client::approvals::{HeldPayment, HeldPayments, MAX_APPROVAL_SECS};
use trust_gate_client::chain;
use trust_gate_client::decode::PolicyAuthority;
use trust_gate_client::json::{Amount, Key};
use trust_gate_pay::exact::Body;

/// How long a call to the facilitator may take.
const FACILITATOR_TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes of a facilitator's answer read: a list of held payments is a few KiB per
/// payer; past this the facilitator is not answering what this server reads.
const FACILITATOR_MAX_BYTES: usize = 4 << 20;
/// How long an approval stands when the call names no expiry: a day.
const DEFAULT_EXPIRES_IN: i64 = 86_400;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListApprovalsArgs {
    /// Only this payer agent's (MPL Core asset, base58); omitted: every payer's.
    pub payer_agent: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ApproveArgs {
    /// The pending approval's id (the `X-Gate-Approval-Id` of the 402, or an id from
    /// gate_list_approvals).
    pub id: String,
    /// How long the approval stands on chain, in seconds (1..604800; default 86400): the
    /// payment must be made again within it.
    #[schemars(range(min = 1, max = 604800))]
    pub expires_in_secs: Option<i64>,
}

/// The configured facilitator's base URL.
fn facilitator_url(ctx: &Ctx) -> Result<&str, ToolError> {
    ctx.config
        .facilitator_url
        .as_deref()
        .map(|u| u.trim_end_matches('/'))
        .ok_or_else(|| {
            ToolError::new(
                codes::CONFIG_ERROR,
                "this server knows no facilitator: pending approvals are kept by the facilitator that held the payment",
            )
            .hint("set MCP_FACILITATOR_URL to the facilitator's URL (trust-gate up sets it)")
        })
}

/// `GET {facilitator}{path}`: its status and JSON body.
async fn get(ctx: &Ctx, path: &str) -> Result<(u16, Value), ToolError> {
    let url = format!("{}{path}", facilitator_url(ctx)?);
    let failed = |e: &dyn std::fmt::Display| {
        ToolError::new(
            codes::FACILITATOR_FAILURE,
            format!("the facilitator did not answer GET {path}"),
        )
        .cause(trust_gate_client::redact::urls_in(&e.to_string()))
    };
    let res = reqwest::Client::new()
        .get(&url)
        .timeout(FACILITATOR_TIMEOUT)
        .send()
        .await
        .map_err(|e| failed(&e))?;
    let status = res.status().as_u16();
    let body = Body::read(res, FACILITATOR_MAX_BYTES)
        .await
        .map_err(|e| failed(&e))?;
    if !body.complete {
        return Err(ToolError::new(
            codes::FACILITATOR_FAILURE,
            format!("the facilitator's answer to GET {path} is larger than {FACILITATOR_MAX_BYTES} bytes"),
        ));
    }
    let body = serde_json::from_slice::<Value>(&body.bytes).map_err(|e| failed(&e))?;
    Ok((status, body))
}

/// The facilitator's answer as `T`, or `facilitator_failure` naming what it sent.
fn answer<T: DeserializeOwned>(path: &str, v: Value) -> Result<T, ToolError> {
    crate::args::read::<T>(v).map_err(|why| {
        ToolError::new(
            codes::FACILITATOR_FAILURE,
            format!("the facilitator's answer to GET {path} is not what this server reads"),
        )
        .cause(why)
    })
}

/// The payments the configured facilitator holds for `payer`'s approval (its
/// `GET /approvals?payer=` list).
pub async fn pending_of(
    ctx: &Ctx,
    payer: &solana_sdk::pubkey::Pubkey,
) -> ToolResult<Vec<HeldPayment>> {
    let list = list_approvals(
        ctx,
        ListApprovalsArgs {
            payer_agent: Some(payer.to_string()),
        },
    )
    .await?;
    Ok(list.held.approvals)
}

/// The payments the configured facilitator holds for an approval, and what to do with one.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalsList {
    #[serde(flatten)]
    pub held: HeldPayments,
    /// What to do with one.
    pub next: String,
}

pub async fn list_approvals(ctx: &Ctx, a: ListApprovalsArgs) -> ToolResult<ApprovalsList> {
    let path = match a.payer_agent.as_deref() {
        Some(p) => format!("/approvals?payer={}", pubkey("payer_agent", p)?),
        None => "/approvals".to_string(),
    };
    let (status, v) = get(ctx, &path).await?;
    if status != 200 {
        return Err(ToolError::new(
            codes::FACILITATOR_FAILURE,
            format!(
                "the facilitator answered GET {path} with HTTP {status}: {}",
                v["message"].as_str().unwrap_or_default()
            ),
        ));
    }
    Ok(ApprovalsList {
        held: answer(&path, v)?,
        next: "a member of the payer's policy authority approves one with gate_approve {\"id\": ...} (threshold 1) or `trust-gate approve ID --keypair A --keypair B` (more members); the same payment then passes once".into(),
    })
}

/// The terms an approval binds.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Terms {
    /// The payer agent.
    pub payer_agent_asset: Key,
    /// The payee agent.
    pub payee_agent_asset: Key,
    /// The token mint.
    pub mint: Key,
    /// The amount.
    pub amount: Amount,
    /// The payer's policy id.
    pub policy_id: u32,
}

/// An approval that already stands on chain.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlreadyApproved {
    /// Unix seconds it stands until.
    pub expires_at: i64,
    /// Who paid its rent.
    pub rent_payer: Key,
    /// How many members signed.
    pub signers: u8,
}

/// What `gate_approve` answers.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApproveReply {
    /// The pending id: the approval's address.
    pub id: Key,
    /// The terms approved, read from the facilitator and checked against the id.
    pub terms: Terms,
    /// What was held: payment or channel.
    pub kind: String,
    /// The x402 resource it was for, when the request named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Whether this call approved it (false: an approval already stands).
    pub approved: bool,
    /// The approval that already stood, when this call made none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub already_approved: Option<AlreadyApproved>,
    /// Unix seconds the new approval stands until.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// Who paid the new approval's rent (back to it when the payment uses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rent_payer: Option<Key>,
    /// What to do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// The transaction sent (absent when nothing was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

pub async fn approve(ctx: &Ctx, a: ApproveArgs) -> ToolResult<ApproveReply> {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_approve")?;
    let id = pubkey("id", &a.id)?;
    let expires_in = a.expires_in_secs.unwrap_or(DEFAULT_EXPIRES_IN);
    if !(1..=MAX_APPROVAL_SECS).contains(&expires_in) {
        return Err(ToolError::input(
            "expires_in_secs",
            format!(
                "{expires_in} is not 1..={MAX_APPROVAL_SECS} (an approval stands a week at most)"
            ),
        ));
    }
    let (status, v) = get(ctx, &format!("/approvals/{id}")).await?;
    if status == 404 {
        return Err(ToolError::not_found("pending approval", id).hint(
            "the facilitator holds no payment under this id (never held, already used, or expired): list them with gate_list_approvals",
        ));
    }
    if status != 200 {
        return Err(ToolError::new(
            codes::FACILITATOR_FAILURE,
            format!("the facilitator answered HTTP {status}: {v}"),
        ));
    }
    let pending = answer::<HeldPayment>(&format!("/approvals/{id}"), v)?.record;
    if pending.id != id {
        return Err(ToolError::new(
            codes::FACILITATOR_FAILURE,
            format!(
                "the facilitator answered the record of {} for {id}",
                pending.id
            ),
        ));
    }
    pending.check_id(&b)?;
    let terms = pending.terms();
    let reply = ApproveReply {
        id: Key(id),
        terms: Terms {
            payer_agent_asset: Key(terms.payer_asset),
            payee_agent_asset: Key(terms.payee_asset),
            mint: Key(terms.mint),
            amount: Amount(terms.amount),
            policy_id: terms.policy_id,
        },
        kind: pending.kind.clone(),
        resource: pending.resource.clone(),
        approved: false,
        already_approved: None,
        expires_at: None,
        rent_payer: None,
        next: None,
        signature: None,
    };
    if let Some((_, stands)) = chain::approval(&ctx.rpc, &b.ids, &terms).await? {
        return Ok(ApproveReply {
            already_approved: Some(AlreadyApproved {
                expires_at: stands.expires_at,
                rent_payer: Key(stands.rent_payer),
                signers: stands.signers,
            }),
            ..reply
        });
    }
    let auth_key = b.pda.policy_authority(&terms.payer_asset);
    let auth: PolicyAuthority = chain::anchor_account(&ctx.rpc, "PolicyAuthority", &auth_key)
        .await?
        .ok_or_else(|| ToolError::not_found("PolicyAuthority", auth_key))?;
    let me = signer.pubkey();
    if !auth.members.contains(&me) {
        return Err(ToolError::new(
            codes::AUTH_REQUIRED,
            format!(
                "the signer {me} is not a member of payer agent {}'s policy authority",
                terms.payer_asset
            ),
        ));
    }
    if auth.threshold > 1 {
        return Err(ToolError::new(
            codes::AUTH_REQUIRED,
            format!(
                "to approve a payment, the payer's authority needs {} of {} member signatures and this server holds one key",
                auth.threshold,
                auth.members.len()
            ),
        )
        .hint(format!(
            "the members sign one transaction together: trust-gate approve {id} --keypair A --keypair B"
        )));
    }
    let now = chain::unix_time(&ctx.rpc).await?;
    let expires_at = now + expires_in;
    let ix = b.approve_payment(&me, &[], terms, expires_at);
    let sig = ctx.send(&[ix], signer, &[]).await?;
    Ok(ApproveReply {
        approved: true,
        expires_at: Some(expires_at),
        rent_payer: Some(Key(me)),
        next: Some("the same payment now passes once: pay again (its rent comes back to the signer when it does)".into()),
        signature: sent(sig),
        ..reply
    })
}
