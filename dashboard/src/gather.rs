//! Reading an agent's page: its accounts over JSON-RPC (ten reads at once, then three per
//! policy at once, then the settlements and the shares held back from the agent's payments),
//! the payments its facilitator holds and has settled.
//! A part that cannot be read is shown as why, not as a zero or an error of the whole page.

use crate::config::DashboardConfig;
use crate::view::{
    AgentView, ChannelView, HeldRow, PolicyView, Read, SettlementRow, VaultView, CHART_DAYS,
    CHART_DAYS_CHAIN, SETTLEMENTS_MAX,
};
use solana_sdk::pubkey::Pubkey;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;
use trust_gate_client::approvals::{HeldPayments, PendingApproval};
use trust_gate_client::decode::{self, KillSwitchState, VelocityLedger};
use trust_gate_client::held::{self, HeldBy};
use trust_gate_client::pda::Pdas;
use trust_gate_client::{chain, spend, ClientError, RpcClient};

/// How long the facilitator may take to list held payments.
const FACILITATOR_TIMEOUT: Duration = Duration::from_secs(5);
/// The most bytes of one of the facilitator's answers read: its lists are capped
/// (`SETTLEMENTS_MAX` payments, an agent's held payments), far below this, so a longer answer
/// is a facilitator gone wrong, which must not make the dashboard hold it all in memory.
pub const FACILITATOR_MAX_BYTES: usize = 4 << 20;

/// Where the settlements on the page come from, without a facilitator's records.
pub const CHAIN_SOURCE: &str = "the chain: the payment logs the gate still holds of payments \
     signed by the wallets above (a log names the wallet, not the agent: a wallet that pays \
     for several agents shows all of theirs). A log closes once its deadline and its 7-day \
     dispute window have passed and a facilitator's crank closes it, so this reaches back \
     about a week.";

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
    let as_payee = [HeldBy::Payee(asset)];
    let (
        now,
        owner,
        registered,
        killswitch,
        reputation,
        policies,
        channels,
        approvals,
        held_received,
        (subscriptions_paid, subscriptions_received),
    ) = tokio::join!(
        chain::unix_time(rpc),
        chain::asset_owner(rpc, &asset),
        chain::agent(rpc, &c.ids, &asset),
        chain::account(rpc, &killswitch_key),
        chain::engine_reputation(rpc, &c.ids, &asset),
        chain::policies_of(rpc, &c.ids, &asset),
        chain::channel_records_of_payer(rpc, &c.ids, &asset),
        held(http, c, &asset),
        held_rows(rpc, c, &as_payee),
        crate::subscriptions::of(rpc, c, &asset),
    );
    let (now, clock) = match now {
        Ok(t) => (t, "the cluster's clock"),
        Err(_) => (
            trust_gate_client::simulate::now_unix(),
            "this machine's clock: the cluster's could not be read",
        ),
    };
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
    let mut decimals = HashMap::new();
    let policies = match policies {
        Ok(list) => Ok(policy_views(rpc, c, &asset, list, now, &mut decimals).await),
        Err(e) => Err(why(e)),
    };
    let channels: Read<Vec<ChannelView>> = channels.map_err(why).map(|list| {
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
    // The wallets whose signatures pay for the agent: its owner, the agent wallet its owner
    // set in the registry, and its vaults' spenders. (A log names the wallet, not the agent.)
    let mut wallets: Vec<(&'static str, Pubkey)> = Vec::new();
    if let Ok(o) = &owner {
        wallets.push(("owner", *o));
    }
    if let Some(w) = registered.as_ref().ok().and_then(|a| a.agent_wallet) {
        wallets.push(("agent wallet", w));
    }
    if let Ok(list) = &policies {
        for p in list {
            if let Some(s) = p.vault.as_ref().and_then(|v| v.spender) {
                wallets.push(("vault spender", s));
            }
        }
    }
    wallets.dedup_by_key(|(_, k)| *k);
    let keys: BTreeSet<Pubkey> = wallets.iter().map(|(_, k)| *k).collect();
    let (mut settlements, settlements_source, from_records) =
        settlements(rpc, http, c, &asset, &keys).await;
    let by_wallet: Vec<HeldBy> = keys.iter().map(|w| HeldBy::PayerWallet(*w)).collect();
    let held_paid = held_rows(rpc, c, &by_wallet).await;
    // A settlement's row shows its held share: from its open log (the list above), or from
    // the facilitator's record once the log has closed.
    if let (Ok(rows), Ok(held)) = (&mut settlements, &held_paid) {
        for row in rows.iter_mut().filter(|r| r.holdback.is_none()) {
            row.holdback = held
                .iter()
                .find(|h| h.log == row.log)
                .map(|h| h.holdback.clone());
        }
    }
    // Every mint a row names, read once.
    let mut mints: BTreeSet<Pubkey> = BTreeSet::new();
    if let Ok(rows) = &settlements {
        mints.extend(rows.iter().map(|r| r.mint));
    }
    for held in [&held_paid, &held_received].into_iter().flatten() {
        mints.extend(held.iter().map(|h| h.mint));
    }
    if let Ok(list) = &channels {
        mints.extend(list.iter().map(|ch: &ChannelView| ch.mint));
    }
    for subs in [&subscriptions_paid, &subscriptions_received]
        .into_iter()
        .flatten()
    {
        mints.extend(subs.iter().filter_map(|s| s.mint()));
    }
    if let Ok(list) = &approvals {
        mints.extend(list.iter().map(|a: &PendingApproval| a.mint));
    }
    for mint in mints {
        if let std::collections::hash_map::Entry::Vacant(e) = decimals.entry(mint) {
            if let Ok(Some(m)) = chain::mint(rpc, "mint", &mint).await {
                e.insert(m.decimals);
            }
        }
    }
    AgentView {
        asset,
        now,
        clock,
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
        held_paid,
        held_received,
        subscriptions_paid,
        subscriptions_received,
        settlements,
        settlements_source,
        wallets,
        chart_days: if from_records {
            CHART_DAYS
        } else {
            CHART_DAYS_CHAIN
        },
        decimals,
    }
}

/// Each policy's spend now (its velocity ledger read with it), and a vault-funded policy's
/// vault; what cannot be read is named in the policy's `problems`. The mints' decimals go
/// into `decimals`.
async fn policy_views(
    rpc: &RpcClient,
    c: &DashboardConfig,
    asset: &Pubkey,
    list: Vec<(Pubkey, decode::PolicyAccount)>,
    now: i64,
    decimals: &mut HashMap<Pubkey, u8>,
) -> Vec<PolicyView> {
    let pda = Pdas::new(c.ids);
    let mut out = Vec::with_capacity(list.len());
    for (address, policy) in list {
        let base = &policy;
        let id = base.policy_id;
        let mint = base.params.mint;
        let mut problems = Vec::new();
        let ledger_key = pda.velocity(asset, id);
        let (ledger, token, vault) = tokio::join!(
            chain::account(rpc, &ledger_key),
            chain::mint(rpc, "mint", &mint),
            async {
                if base.params.is_vault_funded() {
                    Some(chain::vault(rpc, &c.ids, asset, &mint).await)
                } else {
                    None
                }
            }
        );
        let ledger = match ledger {
            Ok(a) => {
                a.and_then(|a| decode::account::<VelocityLedger>("VelocityLedger", &a.data).ok())
            }
            Err(e) => {
                problems.push(format!("its velocity ledger could not be read: {}", why(e)));
                None
            }
        };
        match token {
            Ok(Some(m)) => {
                decimals.insert(mint, m.decimals);
            }
            Ok(None) => problems.push(format!("its mint {mint} does not exist")),
            Err(e) => problems.push(format!("its mint could not be read: {}", why(e))),
        }
        let vault = vault.map(|read| {
            let balance = match read {
                Ok(v) => v.map(|v| v.amount),
                Err(e) => {
                    problems.push(format!("its vault could not be read: {}", why(e)));
                    None
                }
            };
            VaultView {
                address: pda.vault(asset, &mint),
                balance,
                spender: (base.spender != Pubkey::default()).then_some(base.spender),
            }
        });
        out.push(PolicyView {
            address,
            id,
            mint,
            decimals: decimals.get(&mint).copied(),
            spend: spend::spend(&policy, ledger.as_ref(), now),
            vault,
            problems,
        });
    }
    out
}

/// The agent's payments, newest first, and where they come from: the configured
/// facilitator's records of the payments it settled (kept 90 days; a closed log's fields come
/// from the record), with the payment logs the gate still holds of payments `wallets` signed
/// (about a week; any facilitator's). Each says whether it was disputed.
async fn settlements(
    rpc: &RpcClient,
    http: &reqwest::Client,
    c: &DashboardConfig,
    payer: &Pubkey,
    wallets: &BTreeSet<Pubkey>,
) -> (Read<Vec<SettlementRow>>, String, bool) {
    let mut rows = match live_rows(rpc, c, wallets).await {
        Ok(rows) => rows,
        Err(e) => return (Err(e), CHAIN_SOURCE.into(), false),
    };
    let Some(f) = &c.facilitator_url else {
        return (Ok(rows), CHAIN_SOURCE.into(), false);
    };
    let known: BTreeSet<Pubkey> = rows.iter().map(|r| r.log).collect();
    match records(rpc, http, c, f, payer, &known).await {
        Ok(more) => {
            rows.extend(more);
            rows.sort_by_key(|r| std::cmp::Reverse(r.created_at));
            rows.truncate(SETTLEMENTS_MAX);
            (
                Ok(rows),
                format!(
                    "the facilitator's records of the payments it settled for this agent (kept 90 days), and {CHAIN_SOURCE}"
                ),
                true,
            )
        }
        Err(e) => (
            Ok(rows),
            format!("{CHAIN_SOURCE} (The facilitator's records could not be read: {e}.)"),
            false,
        ),
    }
}

/// The payment logs the gate holds of payments `wallets` signed, each with whether it was
/// disputed (their dispute records read in one call per 100).
async fn live_rows(
    rpc: &RpcClient,
    c: &DashboardConfig,
    wallets: &BTreeSet<Pubkey>,
) -> Read<Vec<SettlementRow>> {
    let mut logs = Vec::new();
    for w in wallets {
        logs.extend(
            chain::payment_logs_of_wallet(rpc, &c.ids, w)
                .await
                .map_err(why)?,
        );
    }
    // Only the newest are shown: their dispute records alone are read.
    logs.sort_by_key(|(_, l)| std::cmp::Reverse(l.created_at));
    logs.truncate(SETTLEMENTS_MAX);
    let mut rows = with_disputes(rpc, c, logs).await?;
    rows.sort_by_key(|r| std::cmp::Reverse(r.created_at));
    Ok(rows)
}

/// Rows of payment logs, each with whether its dispute record exists.
async fn with_disputes(
    rpc: &RpcClient,
    c: &DashboardConfig,
    logs: Vec<(Pubkey, gate::state::FeedbackLog)>,
) -> Read<Vec<SettlementRow>> {
    let pda = Pdas::new(c.ids);
    let disputes: Vec<Pubkey> = logs
        .iter()
        .map(|(_, l)| pda.dispute(&l.facilitator, &l.payment_id_hash))
        .collect();
    let records = chain::accounts(rpc, &disputes).await.map_err(why)?;
    Ok(logs
        .iter()
        .zip(records)
        .map(|((log, l), record)| SettlementRow {
            disputed: record.is_some_and(|a| a.owner == c.ids.gate),
            ..SettlementRow::of_log(*log, l)
        })
        .collect())
}

/// The facilitator's records of `payer`'s payments whose logs are not among `known` (the
/// rows read from the chain): a closed one from its record, a live one (signed by another
/// wallet) from its log.
async fn records(
    rpc: &RpcClient,
    http: &reqwest::Client,
    c: &DashboardConfig,
    facilitator_url: &str,
    payer: &Pubkey,
    known: &BTreeSet<Pubkey>,
) -> Result<Vec<SettlementRow>, String> {
    let body = get_json(
        http,
        &format!("{facilitator_url}/payments?payer={payer}&limit={SETTLEMENTS_MAX}"),
    )
    .await?;
    let listed = body["payments"]
        .as_array()
        .ok_or("the facilitator's answer has no payments list")?;
    let mut rows = Vec::new();
    let mut to_read = Vec::new();
    for p in listed {
        let Some(log) = p["feedbackLog"]
            .as_str()
            .and_then(|l| l.parse::<Pubkey>().ok())
        else {
            continue;
        };
        if known.contains(&log) {
            continue;
        }
        match trust_gate_client::receipts::Receipt::from_json(&p["receipt"]) {
            Some(r) => rows.push(SettlementRow {
                log,
                payment_id_hash: decode::hex(&r.payment_id_hash),
                facilitator: r.facilitator,
                payee: r.payee_asset,
                mint: r.mint,
                amount: r.amount,
                created_at: r.created_at,
                deadline: r.deadline.unwrap_or(r.created_at),
                disputed: p["disputed"].as_bool().unwrap_or(false),
                closed: true,
                holdback: r.holdback,
            }),
            None if p["closed"] == false => to_read.push(log),
            None => {}
        }
    }
    let read = chain::accounts(rpc, &to_read).await.map_err(why)?;
    let logs: Vec<(Pubkey, gate::state::FeedbackLog)> = to_read
        .into_iter()
        .zip(read)
        .filter_map(|(k, a)| {
            let a = a.filter(|a| a.owner == c.ids.gate)?;
            decode::account::<gate::state::FeedbackLog>("FeedbackLog", &a.data)
                .ok()
                .map(|l| (k, l))
        })
        .collect();
    rows.extend(with_disputes(rpc, c, logs).await?);
    Ok(rows)
}

/// `GET url`'s JSON, in [`FACILITATOR_TIMEOUT`], of at most [`FACILITATOR_MAX_BYTES`]: the
/// body is read a chunk at a time and dropped past the cap.
async fn get_json(http: &reqwest::Client, url: &str) -> Result<serde_json::Value, String> {
    let mut res = http
        .get(url)
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
    // The path only: the query names the agent, and the origin is the configured one.
    let path = res.url().path().to_string();
    let too_long = || {
        format!("the facilitator's answer to {path} is longer than {FACILITATOR_MAX_BYTES} bytes")
    };
    if res
        .content_length()
        .is_some_and(|n| n > FACILITATOR_MAX_BYTES as u64)
    {
        return Err(too_long());
    }
    let mut body = Vec::new();
    while let Some(chunk) = res.chunk().await.map_err(|e| {
        format!(
            "the facilitator's answer to {path} broke off: {}",
            trust_gate_client::redact::urls_in(&e.to_string())
        )
    })? {
        if body.len() + chunk.len() > FACILITATOR_MAX_BYTES {
            return Err(too_long());
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body)
        .map_err(|e| format!("the facilitator's answer to {path} is not JSON: {e}"))
}

/// The held payments (docs/holdback.md) whose logs are open, of every key in `by` (a log
/// names one payee and one wallet, so none is found twice), newest first.
async fn held_rows(rpc: &RpcClient, c: &DashboardConfig, by: &[HeldBy]) -> Read<Vec<HeldRow>> {
    let mut rows: Vec<HeldRow> = Vec::new();
    for b in by {
        let listed = held::list(rpc, &c.ids.gate, *b).await.map_err(why)?;
        rows.extend(listed.iter().filter_map(HeldRow::of));
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
    let body = get_json(http, &format!("{f}/approvals?payer={payer}")).await?;
    serde_json::from_value::<HeldPayments>(body)
        .map(|list| list.approvals.into_iter().map(|h| h.record).collect())
        .map_err(|e| format!("the facilitator's list is not one of held payments: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A facilitator on loopback whose every answer is `len` bytes of JSON, sent with its
    /// `Content-Length` or (`sized: false`) without one, to the connection's end.
    fn facilitator(len: usize, sized: bool) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.ends_with(b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let pad = len - r#"{"payments":[],"pad":""}"#.len();
                let body = format!(r#"{{"payments":[],"pad":"{}"}}"#, "x".repeat(pad));
                let length = if sized {
                    format!("content-length: {len}\r\n")
                } else {
                    String::new()
                };
                // The client hangs up past the cap: a failed write is expected.
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{length}connection: close\r\n\r\n{body}"
                );
            }
        });
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn an_answer_past_the_cap_is_refused_naming_the_path_and_the_cap() {
        let http = reqwest::Client::new();
        for sized in [true, false] {
            let within = facilitator(FACILITATOR_MAX_BYTES, sized);
            let body = get_json(&http, &format!("{within}/payments?payer=x"))
                .await
                .unwrap();
            assert_eq!(body["payments"], serde_json::json!([]), "sized: {sized}");
            let past = facilitator(FACILITATOR_MAX_BYTES + 1, sized);
            let e = match get_json(&http, &format!("{past}/payments?payer=x")).await {
                Ok(_) => panic!("an answer past the cap was read whole (sized: {sized})"),
                Err(e) => e,
            };
            assert!(
                e.contains("/payments") && e.contains(&FACILITATOR_MAX_BYTES.to_string()),
                "{e}"
            );
        }
    }
}
