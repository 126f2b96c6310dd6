//! `gate_get_spend`: a payer agent's spend under one policy at a glance: every cap (day,
//! week, month, lifetime, per payee) with what is spent and left and when it starts over,
//! the velocity window's use, the kill switch, the vault's balance, the channels open through
//! the gate, and the payments its facilitator holds for an approval.

use crate::args::pubkey;
use crate::context::Ctx;
use crate::envelope::{ToolError, ToolResult};
use crate::tools::approvals;
use crate::tools::read::PolicyArgs;
use serde_json::{json, Value};
use trust_gate_client::decode::{self, KillSwitchState, VelocityLedger};
use trust_gate_client::{chain, spend, Program};

pub async fn get_spend(ctx: &Ctx, a: PolicyArgs) -> ToolResult {
    ctx.config.ids.require(Program::PolicyVault)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let policy_key = ctx.pda.policy(&asset, a.policy_id);
    let keys = [
        policy_key,
        ctx.pda.velocity(&asset, a.policy_id),
        ctx.pda.killswitch(&asset),
    ];
    // The three accounts and the cluster's clock (what the engine counts windows by).
    let (read, now) =
        tokio::try_join!(chain::accounts(&ctx.rpc, &keys), chain::unix_time(&ctx.rpc))?;
    let policy = read[0]
        .as_ref()
        .ok_or_else(|| ToolError::not_found("PolicyAccount", policy_key))?;
    let policy = decode::policy(&policy.data)?;
    let ledger = read[1]
        .as_ref()
        .map(|a| decode::account::<VelocityLedger>("VelocityLedger", &a.data))
        .transpose()?;
    let paused = read[2]
        .as_ref()
        .map(|a| decode::account::<KillSwitchState>("KillSwitchState", &a.data))
        .transpose()?
        .is_some_and(|k| k.paused);
    let mut v = serde_json::to_value(spend::spend(&policy, ledger.as_ref(), now))
        .map_err(crate::tools::read::internal)?;
    v["agentAsset"] = json!(asset.to_string());
    v["policyId"] = json!(a.policy_id);
    v["policy"] = json!(policy_key.to_string());
    v["killSwitch"] = json!({"paused": paused});

    let params = &policy.params;
    v["vault"] = if params.is_vault_funded() {
        let vault = chain::vault(&ctx.rpc, &ctx.config.ids, &asset, &params.mint).await?;
        json!({
            "address": ctx.pda.vault(&asset, &params.mint).to_string(),
            "balance": vault.map(|v| v.amount.to_string()),
        })
    } else {
        Value::Null
    };
    let channels = chain::channel_records_of_payer(&ctx.rpc, &ctx.config.ids, &asset).await?;
    v["openChannels"] = channels
        .iter()
        .filter(|(_, r)| r.policy_id == a.policy_id)
        .map(|(record, r)| {
            json!({
                "channel": r.channel.to_string(),
                "record": record.to_string(),
                "payeeAgentAsset": r.payee_asset.to_string(),
                "mint": r.mint.to_string(),
                "deposit": r.deposit.to_string(),
                "facilitator": r.facilitator.to_string(),
                "createdAt": r.created_at,
            })
        })
        .collect();
    // Held payments live at the facilitator: read when one is configured.
    v["pendingApprovals"] = match approvals::pending_of(ctx, &asset).await {
        Ok(list) => list,
        Err(e) => json!({"unavailable": e.message}),
    };
    Ok(v)
}
