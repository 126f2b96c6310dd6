//! The pages, as HTML (maud: templates checked at compile time, every value escaped) with
//! their charts as inline SVG: nothing is fetched from elsewhere, and the page holds no key.
//! What a person would do about what they see (pause the agent, approve a held payment,
//! dispute or refund a share held back) is shown as the exact command or MCP call to make.

mod subscriptions;

use crate::config::DashboardConfig;
use crate::view::{self, AgentView, HeldRow, PolicyView, Read, SettlementRow};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::holdback::{HoldStatus, HoldbackView};
use trust_gate_client::spend::Window;

const STYLE: &str = "
body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:12px 24px}header a{color:#fff}
main{padding:16px 24px;max-width:1100px}
section{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:12px 16px;margin:12px 0}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:0 0 8px}h3{font-size:14px;margin:12px 0 4px}
table{border-collapse:collapse;width:100%;font-size:13px}td,th{padding:4px 6px;border-bottom:1px solid #eef0f3;text-align:left}
code{font-size:12px;background:#eef0f3;padding:1px 4px;border-radius:3px;word-break:break-all}
.bar{display:flex;align-items:center;gap:8px;font-size:13px;margin:3px 0}.bar .label{width:90px}
.bar svg{flex:none}.muted{color:#6b7385;font-size:12px}
.badge{display:inline-block;padding:2px 8px;border-radius:10px;font-size:12px;font-weight:600}
.ok{background:#dff5e3;color:#176b2c}.stop{background:#fde2e1;color:#9b1c1c}.warn{background:#fff3cd;color:#7a5b00}
.nowrap{white-space:nowrap}
";

/// A whole page: `refresh` seconds between reloads (0: none).
fn layout(title: &str, refresh: u32, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                @if refresh > 0 {
                    meta http-equiv="refresh" content=(refresh);
                }
                title { (title) " · trust-gate" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header { h1 { a href="/" { "trust-gate" } " · " (title) } }
                main { (body) }
            }
        }
    }
}

/// The first page: the agents this dashboard knows, and any asset.
pub fn index(c: &DashboardConfig) -> Markup {
    layout(
        "owner's dashboard",
        0,
        html! {
            section {
                h2 { "An agent" }
                form method="get" action="/agent" {
                    input type="text" name="asset" size="50" placeholder="the agent's asset (base58)" required;
                    " "
                    button type="submit" { "Show" }
                }
                p.muted { "Read-only: the chain at " code { (trust_gate_client::redact::origin(&c.rpc_url)) } "; this page holds no key." }
            }
            section {
                h2 { "Known agents" }
                @if c.known.is_empty() {
                    p.muted { "None on this cluster: enter an asset above." }
                } @else {
                    table {
                        tr { th { "name" } th { "asset" } th { "what" } }
                        @for k in &c.known {
                            tr.agent {
                                td { a href=(format!("/agents/{}", k.asset)) { (k.name) } }
                                td { code { (k.asset) } }
                                td { (k.note) }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// A page saying what was wrong with the request.
pub fn problem(title: &str, message: &str) -> Markup {
    layout(
        title,
        0,
        html! { section { h2 { (title) } p { (message) } p { a href="/" { "Back" } } } },
    )
}

/// One horizontal bar: `spent` of `cap` (no cap: spent alone).
fn bar(id: &str, label: &str, spent: u64, cap: u64, decimals: Option<u8>, note: &str) -> Markup {
    let pct = view::percent(spent, cap);
    let width = 240u32;
    // The filled part in pixels, at least one when anything is spent.
    let filled = if cap == 0 {
        0
    } else {
        let w = u128::from(spent) * u128::from(width) / u128::from(cap);
        (w.min(u128::from(width)) as u32).max(u32::from(spent > 0))
    };
    let share = if cap == 0 {
        String::new()
    } else {
        format!("{:.1}%", spent as f64 * 100.0 / cap as f64)
    };
    let fill = match pct {
        0..=74 => "#3b82f6",
        75..=99 => "#f59e0b",
        _ => "#dc2626",
    };
    html! {
        div.bar id=(id) data-spent=(spent) data-cap=(cap) {
            span.label { (label) }
            svg width=(width) height="14" role="img" aria-label=(format!("{label}: {share}")) {
                // SVG elements are closed explicitly: inside <svg> an HTML parser does not
                // treat them as void, so `<rect>` alone would swallow what follows.
                rect x="0" y="0" width=(width) height="14" rx="3" fill="#e5e7eb" {}
                rect x="0" y="0" width=(filled) height="14" rx="3" fill=(fill) {}
            }
            span {
                (view::amount(spent, decimals))
                @if cap > 0 { " of " (view::amount(cap, decimals)) " (" (share) ")" } @else { " (no cap)" }
                " " span.muted { (note) }
            }
        }
    }
}

fn window(id: String, label: &str, w: &Window, decimals: Option<u8>, now: i64) -> Markup {
    let note = match w.resets_at {
        Some(at) => format!("starts over {}", view::until(at, now)),
        None => String::new(),
    };
    bar(&id, label, w.spent, w.cap, decimals, &note)
}

pub(crate) fn key(k: &Pubkey) -> Markup {
    html! { code title=(k) { (short(k)) } }
}

pub(crate) fn short(k: &Pubkey) -> String {
    let s = k.to_string();
    format!("{}…{}", &s[..4], &s[s.len() - 4..])
}

fn unreadable<T>(r: &Read<T>) -> Option<Markup> {
    r.as_ref()
        .err()
        .map(|e| html! { p.muted { "Could not read: " (e) } })
}

fn policy(p: &PolicyView, now: i64) -> Markup {
    let s = &p.spend;
    let d = p.decimals;
    let id = p.id;
    html! {
        div.policy id=(format!("policy-{id}")) {
            h3 {
                "Policy " (id)
                @if s.retired { " " span.badge.stop { "retired" } }
            }
            p.muted {
                "mint " (key(&p.mint)) " · per payment at most "
                (if s.per_transaction_cap == 0 { "any amount".to_string() } else { view::amount(s.per_transaction_cap, d) })
                @if s.approval_threshold > 0 { " · above " (view::amount(s.approval_threshold, d)) " needs an approval" }
                @if !s.spending_enforced { " · spending caps off" }
            }
            @for problem in &p.problems { p.muted { "Could not read all of it: " (problem) } }
            (window(format!("bar-{id}-day"), "today", &s.day, d, now))
            (window(format!("bar-{id}-week"), "this week", &s.week, d, now))
            @if let Some(m) = &s.month { (window(format!("bar-{id}-month"), "this month", m, d, now)) }
            @if let Some(l) = &s.lifetime { (window(format!("bar-{id}-lifetime"), "lifetime", l, d, now)) }
            @if let Some(v) = &s.velocity {
                (bar(&format!("bar-{id}-velocity"), "velocity", v.used, v.max_in_window, d,
                    &format!("in a {} s window{}", v.window_secs,
                        v.resets_at.map(|at| format!(", ends {}", view::until(at, now))).unwrap_or_default())))
            }
            @if let Some(pp) = &s.per_payee {
                p.muted { "per payee today: at most " (view::amount(pp.cap, d)) " each, " (pp.slots_free) " payee slots free" }
                @for payee in &pp.payees {
                    (bar(&format!("bar-{id}-payee-{}", payee.payee), &short(&payee.payee), payee.spent, pp.cap, d, ""))
                }
            }
            @if let Some(v) = &p.vault {
                p {
                    "Vault " (key(&v.address)) ": "
                    span id=(format!("vault-{id}")) {
                        @match v.balance { Some(b) => (view::amount(b, d)), None => "not opened" }
                    }
                    " · spender "
                    @match &v.spender { Some(s) => (key(s)), None => "none yet" }
                }
            }
        }
    }
}

/// The spend per day as vertical bars, oldest first, today last.
fn chart(days: &[(i64, u64)], decimals: Option<u8>) -> Markup {
    let (w, h, pad) = (640u64, 160u64, 24u64);
    let max = days.iter().map(|d| d.1).max().unwrap_or(0).max(1);
    let step = (w - pad) / days.len().max(1) as u64;
    // In u128: a day's total times the height may pass u64.
    let height = |total: u64| (u128::from(total) * u128::from(h) / u128::from(max)) as u64;
    html! {
        svg #chart width=(w) height=(h + 2 * pad) role="img" aria-label="spend per day" {
            line x1=(pad) y1=(h + pad) x2=(w) y2=(h + pad) stroke="#9ca3af" {}
            @for (i, (day, total)) in days.iter().enumerate() {
                @let bh = height(*total);
                @let x = pad + i as u64 * step;
                rect.day x=(x + 2) y=(h + pad - bh) width=(step.saturating_sub(4)) height=(bh) fill="#3b82f6" data-total=(total) {
                    title { (view::month_day(*day)) ": " (view::amount(*total, decimals)) }
                }
                text x=(x + step / 2) y=(h + pad + 14) font-size="10" text-anchor="middle" fill="#6b7385" { (view::month_day(*day)) }
            }
            text x=(pad) y="14" font-size="11" fill="#6b7385" { "max " (view::amount(max, decimals)) }
        }
    }
}

/// The settlements table: a row a payment, its receipt linked (a closed payment's at the
/// facilitator, whose record holds it).
fn settlements(c: &DashboardConfig, v: &AgentView, rows: &[SettlementRow]) -> Markup {
    html! {
        @if rows.is_empty() {
            p.muted { "None." }
        } @else {
            table #settlements {
                tr { th { "when" } th { "amount" } th { "held back" } th { "payee" } th { "facilitator" } th { "dispute window ends" } th { "receipt" } }
                @for r in rows.iter().take(50) {
                    tr.settlement {
                        td { (view::utc(r.created_at)) }
                        td { (view::amount(r.amount, v.decimals_of(&r.mint))) }
                        td.held {
                            @match &r.holdback {
                                Some(h) => { (view::amount(h.held.0, v.decimals_of(&r.mint))) " " (hold_badge(h, v.now)) },
                                None => span.muted { "none" },
                            }
                        }
                        td { (key(&r.payee)) }
                        td { (key(&r.facilitator)) }
                        td {
                            @if r.disputed { span.badge.stop { "disputed" } }
                            @else if r.closed { "closed" }
                            @else { (view::until(r.created_at + gate::state::DISPUTE_WINDOW_SECS, v.now)) }
                        }
                        td {
                            @let short_hash = r.payment_id_hash.get(..12).unwrap_or(&r.payment_id_hash);
                            @match (r.closed, &c.facilitator_url) {
                                (false, _) => a.receipt href=(format!("/receipts/{}", r.log)) { (short_hash) "…" },
                                (true, Some(f)) => a.receipt href=(format!("{f}/receipt/{}", r.payment_id_hash)) { (short_hash) "…" },
                                (true, None) => code { (short_hash) "…" },
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A held share's state as a badge: amber while it waits in the escrow, red while disputed,
/// green once paid out.
fn hold_badge(h: &HoldbackView, now: i64) -> Markup {
    let r = view::hold_reading(h, now);
    let class = match (r.open, h.state) {
        (true, HoldStatus::Disputed) => "badge stop",
        (true, _) => "badge warn",
        (false, _) => "badge ok",
    };
    html! { span class=(class) data-state=(r.state) title=(r.note) { (r.state) } }
}

/// Which side of its held payments a table shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HeldSide {
    /// The agent paid them: the payer's wallet disputes.
    Paid,
    /// They were paid to the agent: the payee refunds.
    Received,
}

/// The held payments of one side: a row a payment, with its share, state, release time and
/// what the side may do about it.
fn held_table(id: &str, side: HeldSide, v: &AgentView, rows: &[HeldRow]) -> Markup {
    html! {
        @if rows.is_empty() {
            p.muted { "None." }
        } @else {
            table id=(id) {
                tr {
                    th { "when" } th { "amount" } th { "held back" }
                    th { @if side == HeldSide::Paid { "payee" } @else { "paid by wallet" } }
                    th { "state" } th { "release" } th { "to act" } th { "receipt" }
                }
                @for r in rows.iter().take(50) {
                    @let h = &r.holdback;
                    @let reading = view::hold_reading(h, v.now);
                    @let d = v.decimals_of(&r.mint);
                    tr.held data-log=(r.log) data-held=(h.held.0) {
                        td { (view::utc(r.created_at)) }
                        td { (view::amount(r.amount, d)) }
                        td { (view::amount(h.held.0, d)) }
                        td { @if side == HeldSide::Paid { (key(&r.payee)) } @else { (key(&r.payer_wallet)) } }
                        td { (hold_badge(h, v.now)) }
                        td.release { (reading.note) }
                        td {
                            @match (side, h.state) {
                                (HeldSide::Paid, HoldStatus::Held) if v.now < h.hold_until => {
                                    "dispute it as the wallet that paid: " code { "trust-gate dispute " (r.payment_id_hash) }
                                }
                                (HeldSide::Received, HoldStatus::Held | HoldStatus::Disputed) => {
                                    "refund it as the payee: MCP " code { "gate_refund_holdback {\"payment_id_hash\": \"" (r.payment_id_hash) "\"}" }
                                }
                                (_, HoldStatus::Disputed) => {
                                    @match &h.arbiter {
                                        Some(a) => { "the arbiter " (key(&a.0)) " decides: MCP " code { "gate_arbitrate_holdback" } }
                                        None => "no arbiter: the payee refunds, or it goes to the payee when the arbitration ends",
                                    }
                                }
                                _ => span.muted { "nothing" },
                            }
                        }
                        td {
                            @let short_hash = r.payment_id_hash.get(..12).unwrap_or(&r.payment_id_hash);
                            a.receipt href=(format!("/receipts/{}", r.log)) { (short_hash) "…" }
                        }
                    }
                }
            }
        }
    }
}

/// An agent's page.
pub fn agent(c: &DashboardConfig, v: &AgentView) -> Markup {
    let title = v.name.clone().unwrap_or_else(|| short(&v.asset));
    // The chart counts one mint: the first policy's (amounts of different mints do not add).
    let chart_mint = v
        .policies
        .as_ref()
        .ok()
        .and_then(|p| p.first())
        .map(|p| p.mint)
        .or_else(|| {
            v.settlements
                .as_ref()
                .ok()
                .and_then(|r| r.first())
                .map(|r| r.mint)
        });
    let asset = v.asset.to_string();
    layout(
        &title,
        c.refresh_secs,
        html! {
            section #agent {
                h2 { "Agent " code { (asset) } }
                p {
                    "Owner "
                    @match &v.owner { Ok(o) => code { (o) }, Err(e) => span.muted { (e) } }
                }
                p {
                    "Kill switch: "
                    @match &v.paused {
                        Ok(Some(true)) => span #killswitch.badge.stop { "PAUSED: every payment is denied" },
                        Ok(Some(false)) => span #killswitch.badge.ok { "active" },
                        Ok(None) => span #killswitch.badge.warn { "none yet" },
                        Err(e) => span.muted { (e) },
                    }
                    " "
                    span.muted { "To pause: MCP " code { "gate_set_killswitch {\"agent_asset\": \"" (asset) "\", \"paused\": true}" } " as a member of its authority (threshold 1; more members sign together: the multisig-killswitch walkthrough)." }
                }
                p {
                    "Reputation engine: "
                    @match &v.reputation {
                        Ok(r) => span #tiers { "tier " (r.tier_immediate) " now, " (r.tier_confirmed) " confirmed · risk " (r.risk_score) " · confidence " (r.confidence / 100) "%" },
                        Err(e) => span #tiers.muted { (e) },
                    }
                }
            }
            section #policies {
                h2 { "Policies and spend" }
                @if let Some(m) = unreadable(&v.policies) { (m) }
                @if let Ok(list) = &v.policies {
                    @if list.is_empty() { p.muted { "No policy: this agent cannot pay through the gate." } }
                    @for p in list { (policy(p, v.now)) }
                }
            }
            section {
                h2 { "Spend per day" }
                @match (&v.settlements, chart_mint) {
                    (Ok(rows), Some(mint)) => {
                        (chart(&view::per_day(rows, &mint, v.now, v.chart_days), v.decimals_of(&mint)))
                        p.muted { "In mint " (key(&mint)) ", the last " (v.chart_days) " days." }
                    }
                    (Ok(_), None) => p.muted { "No payment and no policy." },
                    (Err(e), _) => p.muted { "Could not read: " (e) },
                }
                p.muted {
                    "Wallets searched: "
                    @for (i, (role, w)) in v.wallets.iter().enumerate() {
                        @if i > 0 { ", " }
                        (role) " " (key(w))
                    }
                    @if v.wallets.is_empty() { "none (the owner could not be read)" }
                    ". From " (v.settlements_source)
                }
            }
            section {
                h2 { "Recent settlements" }
                @match &v.settlements {
                    Ok(rows) => (settlements(c, v, rows)),
                    Err(e) => p.muted { "Could not read: " (e) },
                }
            }
            section #holdbacks {
                h2 { "Shares held back (holdback)" }
                p.muted { "A payer's policy may hold a share of a payment to a payee of low reputation in the payee's escrow, until the hold ends or a dispute is decided (docs/holdback.md)." }
                h3 { "From its payments" }
                @match &v.held_paid {
                    Ok(rows) => (held_table("held-paid", HeldSide::Paid, v, rows)),
                    Err(e) => p.muted { "Could not read: " (e) },
                }
                h3 { "From payments to it" }
                @match &v.held_received {
                    Ok(rows) => (held_table("held-received", HeldSide::Received, v, rows)),
                    Err(e) => p.muted { "Could not read: " (e) },
                }
            }
            (subscriptions::section(v))
            section {
                h2 { "Open channels" }
                @if let Some(m) = unreadable(&v.channels) { (m) }
                @if let Ok(list) = &v.channels {
                    @if list.is_empty() { p.muted { "None." } } @else {
                        table #channels {
                            tr { th { "channel" } th { "policy" } th { "payee" } th { "deposit" } th { "opened" } }
                            @for ch in list {
                                tr { td { (key(&ch.channel)) } td { (ch.policy_id) } td { (key(&ch.payee)) } td { (view::amount(ch.deposit, v.decimals_of(&ch.mint))) } td { (view::utc(ch.created_at)) } }
                            }
                        }
                    }
                }
            }
            section {
                h2 { "Payments held for an approval" }
                @if let Some(m) = unreadable(&v.approvals) { (m) }
                @if let Ok(list) = &v.approvals {
                    @if list.is_empty() { p.muted { "None." } } @else {
                        table #approvals {
                            tr { th { "amount" } th { "payee" } th { "policy" } th { "for" } th { "held until" } th { "to approve" } }
                            @for a in list {
                                tr {
                                    td { (view::amount(a.amount, v.decimals_of(&a.mint))) }
                                    td { (key(&a.payee_agent_asset)) }
                                    td { (a.policy_id) }
                                    td { (a.resource.as_deref().unwrap_or(&a.kind)) }
                                    td { (view::utc(a.expires_at)) }
                                    td { code { "trust-gate approve " (a.id) } " or MCP " code { "gate_approve {\"id\": \"" (a.id) "\"}" } }
                                }
                            }
                        }
                    }
                }
            }
            p.muted {
                "Read at " (view::utc(v.now)) " (" (v.clock) ")"
                @if c.refresh_secs > 0 { "; this page reloads every " (c.refresh_secs) " s" }
                "."
            }
        },
    )
}

/// A payment's receipt, from its log on chain (its held share, when its payer's policy held
/// one back, read at `now`).
pub fn receipt(
    c: &DashboardConfig,
    log: &Pubkey,
    r: &SettlementRow,
    disputed: &Read<bool>,
    decimals: Option<u8>,
    now: i64,
) -> Markup {
    layout(
        "receipt",
        0,
        html! {
            section #receipt {
                h2 { "Payment " code { (r.payment_id_hash) } }
                table {
                    tr { th { "log" } td { code { (log) } } }
                    tr { th { "settled" } td { (view::utc(r.created_at)) } }
                    tr { th { "amount" } td #amount { (view::amount(r.amount, decimals)) } }
                    tr { th { "mint" } td { code { (r.mint) } } }
                    tr { th { "payee" } td { code { (r.payee) } } }
                    tr { th { "facilitator" } td { code { (r.facilitator) } } }
                    tr { th { "deadline" } td { (view::utc(r.deadline)) } }
                    tr { th { "disputed" } td #disputed {
                        @match disputed { Ok(true) => "yes", Ok(false) => "no", Err(e) => { "could not be read: " (e) } }
                    } }
                    @if let Some(h) = &r.holdback {
                        @let reading = view::hold_reading(h, now);
                        tr { th { "held back" } td #held { (view::amount(h.held.0, decimals)) } }
                        tr { th { "held share" } td #hold-state { (reading.state) } }
                        tr { th { "release" } td #release { (reading.note) } }
                        tr { th { "held until" } td { (view::utc(h.hold_until)) } }
                        @if let Some(ends) = h.arbitration_ends {
                            tr { th { "arbitration ends" } td #arbitration-ends { (view::utc(ends)) } }
                        }
                        tr { th { "arbiter" } td { @match &h.arbiter { Some(a) => code { (a) }, None => "none" } } }
                        tr { th { "escrow" } td { code { (h.escrow) } } }
                        tr { th { "paid to the payee as" } td { code { (h.recipient) } } }
                    }
                }
                @if let Some(f) = &c.facilitator_url {
                    p { a href=(format!("{f}/receipt/{}", r.payment_id_hash)) { "The facilitator's receipt (JSON)" } }
                }
                p { a href="/" { "All agents" } }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_elements_are_closed_so_that_none_swallows_the_next() {
        let days: Vec<(i64, u64)> = (0..14)
            .map(|i| (i * 86_400, if i == 13 { 100_000 } else { 0 }))
            .collect();
        let svg = chart(&days, Some(6)).into_string();
        assert_eq!(svg.matches("<rect").count(), svg.matches("</rect>").count());
        assert!(svg.contains("</line>"), "{svg}");
        assert!(
            svg.contains(r##"height="160" fill="#3b82f6" data-total="100000""##),
            "{svg}"
        );
        let b = bar("b", "today", 5, 10, None, "").into_string();
        assert_eq!(b.matches("<rect").count(), 2);
        assert_eq!(b.matches("</rect>").count(), 2);
        assert!(b.contains(r#"width="120""#), "{b}");
    }

    #[test]
    fn values_are_escaped() {
        let p = problem("<b>", "a \"quoted\" <script>");
        let html = p.into_string();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }
}
