//! `gate_get_spend`: a payer agent's spend under one policy at a glance: every cap (day,
//! week, month, lifetime, per payee) with what is spent and left and when it starts over,
//! the velocity window's use, the kill switch, the vault's balance, the channels open through
//! the gate, and the payments its facilitator holds for an approval.

use crate::args::pubkey;
use crate::context::Ctx;
use crate::envelope::{ToolError, ToolResult};
use crate::tools::approvals;
use crate::tools::read::PolicyArgs;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use trust_gate_client::approvals::HeldPayment;
use trust_gate_client::decode::{self, KillSwitchState, VelocityLedger};
use trust_gate_client::json::{Amount, Key};
use trust_gate_client::spend::Spend;
use trust_gate_client::{chain, spend, Program};

/// The agent's kill switch.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SwitchState {
    /// Whether it is engaged (false when it does not exist).
    pub paused: bool,
}

/// A vault-funded policy's vault.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct VaultBalance {
    /// The vault's address.
    pub address: Key,
    /// Its balance (null when it does not exist).
    pub balance: Option<Amount>,
}

/// A channel open through the gate.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenChannel {
    /// The channel.
    pub channel: Key,
    /// The gate's channel record.
    pub record: Key,
    /// The payee agent.
    pub payee_agent_asset: Key,
    /// The token mint.
    pub mint: Key,
    /// The deposit.
    pub deposit: Amount,
    /// The facilitator.
    pub facilitator: Key,
    /// Unix seconds of the open.
    pub created_at: i64,
}

/// The payments the facilitator holds for an approval, or why they could not be read.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PendingApprovals {
    /// As gate_list_approvals lists them.
    Listed(Vec<HeldPayment>),
    /// No facilitator is configured, or it did not answer.
    Unavailable {
        /// Why.
        unavailable: String,
    },
}

/// A payer agent's spend under a policy at a glance.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendView {
    /// The payer agent's asset.
    pub agent_asset: Key,
    /// The policy id.
    pub policy_id: u32,
    /// The policy's address.
    pub policy: Key,
    #[serde(flatten)]
    pub spend: Spend,
    /// The agent's kill switch.
    pub kill_switch: SwitchState,
    /// A vault-funded policy's vault (null for a wallet-funded one).
    pub vault: Option<VaultBalance>,
    /// The channels open through the gate under this policy.
    pub open_channels: Vec<OpenChannel>,
    /// The payments the facilitator holds for an approval (as gate_list_approvals lists
    /// them), or `{"unavailable": reason}`.
    pub pending_approvals: PendingApprovals,
}

pub async fn get_spend(ctx: &Ctx, a: PolicyArgs) -> ToolResult<SpendView> {
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
    let params = &policy.params;
    let vault = if params.is_vault_funded() {
        let vault = chain::vault(&ctx.rpc, &ctx.config.ids, &asset, &params.mint).await?;
        Some(VaultBalance {
            address: Key(ctx.pda.vault(&asset, &params.mint)),
            balance: vault.map(|v| Amount(v.amount)),
        })
    } else {
        None
    };
    let channels = chain::channel_records_of_payer(&ctx.rpc, &ctx.config.ids, &asset).await?;
    let open_channels = channels
        .iter()
        .filter(|(_, r)| r.policy_id == a.policy_id)
        .map(|(record, r)| OpenChannel {
            channel: Key(r.channel),
            record: Key(*record),
            payee_agent_asset: Key(r.payee_asset),
            mint: Key(r.mint),
            deposit: Amount(r.deposit),
            facilitator: Key(r.facilitator),
            created_at: r.created_at,
        })
        .collect();
    // Held payments live at the facilitator: read when one is configured.
    let pending_approvals = match approvals::pending_of(ctx, &asset).await {
        Ok(list) => PendingApprovals::Listed(list),
        Err(e) => PendingApprovals::Unavailable {
            unavailable: e.message,
        },
    };
    Ok(SpendView {
        agent_asset: Key(asset),
        policy_id: a.policy_id,
        policy: Key(policy_key),
        spend: spend::spend(&policy, ledger.as_ref(), now),
        kill_switch: SwitchState { paused },
        vault,
        open_channels,
        pending_approvals,
    })
}
