//! Reading an agent's page: its accounts over JSON-RPC (a few calls, most in parallel) and
//! the payments its facilitator holds. A part that cannot be read is shown as why, not as an
//! error of the whole page.

use crate::config::DashboardConfig;
use crate::view::{AgentView, ChannelView, PolicyView, Read, SettlementRow, VaultView};
use solana_sdk::pubkey::Pubkey;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;
use trust_gate_client::approvals::PendingApproval;
use trust_gate_client::decode::{self, KillSwitchState, VelocityLedger};
use trust_gate_client::pda::Pdas;
use trust_gate_client::{chain, spend, ClientError, RpcClient};

/// How long the facilitator may take to list held payments.
const FACILITATOR_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the settlements on the page come from.
pub const SETTLEMENTS_SOURCE: &str = "the chain: the payment logs the gate still holds for \
     payments signed by the agent's owner or its vaults' spenders. A log closes once its \
     deadline and its 7-day dispute window have passed, so this reaches back about a week.";

fn why(e: ClientError) -> String {
    trust_gate_client::redact::urls_in(&e.to_string())
}

/// Everything the page of `asset` shows.
pub async fn agent(
    rpc: &RpcClient,
    http: &reqwest::Client,
    c: &DashboardConfig,
    asset: Pubkey,
) -> AgentView {
    let pda = Pdas::new(c.ids);
    let killswitch_key = pda.killswitch(&asset);
    let (now, owner, killswitch, reputation, policies, channels, approvals) = tokio::join!(
        chain::unix_time(rpc),
        chain::asset_owner(rpc, &asset),
        chain::account(rpc, &killswitch_key),
        chain::engine_reputation(rpc, &c.ids, &asset),
        chain::policies_of(rpc, &c.ids, &asset),
        chain::channel_records_of_payer(rpc, &c.ids, &asset),
        held(http, c, &asset),
    );
    let now = now.unwrap_or_else(|_| trust_gate_client::simulate::now_unix());
    let paused = killswitch.map_err(why).and_then(|a| {
        a.map(|a| {
            decode::account::<KillSwitchState>("KillSwitchState", &a.data)
                .map(|k| k.paused)
                .map_err(why)
        })
        .transpose()
    });
    let reputation = match reputation {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(why(e)),
    };
    let policies = match policies {
        Ok(list) => Ok(policy_views(rpc, c, &asset, list, now).await),
        Err(e) => Err(why(e)),
    };
    let channels = channels.map_err(why).map(|list| {
        list.into_iter()
            .map(|(_, r)| ChannelView {
                channel: r.channel,
                policy_id: r.policy_id,
                payee: r.payee_asset,
                mint: r.mint,
                deposit: r.deposit,
                created_at: r.created_at,
            })
            .collect()
    });
    // The wallets whose signatures paid for the agent: its owner, and its vaults' spenders.
    let mut wallets = BTreeSet::new();
    if let Ok(o) = &owner {
        wallets.insert(*o);
    }
    if let Ok(list) = &policies {
        for p in list {
            if let Some(s) = p.vault.as_ref().and_then(|v| v.spender) {
                wallets.insert(s);
            }
        }
    }
    let settlements = settlements(rpc, c, &wallets).await;
    AgentView {
        asset,
        now,
        name: c
            .known
            .iter()
            .find(|k| k.asset == asset)
            .map(|k| k.name.clone()),
        owner: owner.map_err(why),
        paused,
        reputation,
        policies,
        channels,
        approvals,
        settlements,
        settlements_source: SETTLEMENTS_SOURCE.into(),
    }
}

/// Each policy's spend now (its velocity ledger read with it), its mint's decimals, and a
/// vault-funded policy's vault.
async fn policy_views(
    rpc: &RpcClient,
    c: &DashboardConfig,
    asset: &Pubkey,
    list: Vec<(Pubkey, decode::Policy)>,
    now: i64,
) -> Vec<PolicyView> {
    let pda = Pdas::new(c.ids);
    let mut decimals: HashMap<Pubkey, Option<u8>> = HashMap::new();
    let mut out = Vec::with_capacity(list.len());
    for (address, policy) in list {
        let base = policy.base();
        let id = base.policy_id;
        let ledger = chain::account(rpc, &pda.velocity(asset, id))
            .await
            .ok()
            .flatten()
            .and_then(|a| decode::account::<VelocityLedger>("VelocityLedger", &a.data).ok());
        let mint = base.params.mint;
        if let std::collections::hash_map::Entry::Vacant(e) = decimals.entry(mint) {
            let d = chain::mint(rpc, "mint", &mint)
                .await
                .ok()
                .flatten()
                .map(|m| m.decimals);
            e.insert(d);
        }
        let vault = if base.params.is_vault_funded() {
            let balance = chain::vault(rpc, &c.ids, asset, &mint)
                .await
                .ok()
                .flatten()
                .map(|v| v.amount);
            Some(VaultView {
                address: pda.vault(asset, &mint),
                balance,
                spender: (base.spender != Pubkey::default()).then_some(base.spender),
            })
        } else {
            None
        };
        out.push(PolicyView {
            address,
            id,
            mint,
            decimals: decimals.get(&mint).copied().flatten(),
            spend: spend::spend(&policy, ledger.as_ref(), now),
            vault,
        });
    }
    out
}

/// The payments `wallets` signed whose logs the gate still holds, newest first.
async fn settlements(
    rpc: &RpcClient,
    c: &DashboardConfig,
    wallets: &BTreeSet<Pubkey>,
) -> Read<Vec<SettlementRow>> {
    let mut rows = Vec::new();
    for w in wallets {
        for (log, l) in chain::payment_logs_of_wallet(rpc, &c.ids, w)
            .await
            .map_err(why)?
        {
            rows.push(SettlementRow::of_log(log, &l));
        }
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.created_at));
    Ok(rows)
}

/// The payments the configured facilitator holds for `payer`'s approval.
async fn held(
    http: &reqwest::Client,
    c: &DashboardConfig,
    payer: &Pubkey,
) -> Read<Vec<PendingApproval>> {
    let Some(f) = &c.facilitator_url else {
        return Err("no facilitator is configured (--facilitator-url)".into());
    };
    let res = http
        .get(format!("{f}/approvals?payer={payer}"))
        .timeout(FACILITATOR_TIMEOUT)
        .send()
        .await
        .map_err(|e| {
            format!(
                "the facilitator did not answer: {}",
                trust_gate_client::redact::urls_in(&e.to_string())
            )
        })?;
    if !res.status().is_success() {
        return Err(format!("the facilitator answered HTTP {}", res.status()));
    }
    let body: serde_json::Value = res
        .json()
        .await
        .map_err(|e| format!("the facilitator's answer is not JSON: {e}"))?;
    serde_json::from_value(body["approvals"].clone())
        .map_err(|e| format!("the facilitator's list is not one of held payments: {e}"))
}
