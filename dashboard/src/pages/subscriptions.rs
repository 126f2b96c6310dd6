//! The Subscriptions section of an agent's page (its rows read by [`crate::subscriptions`]):
//! what the agent pays, then what is paid to it, each with its terms, the period's use, the
//! next pull, the expiry and its state.

use super::{key, short};
use crate::subscriptions::{next_text, period, reading, use_text};
use crate::view::{self, AgentView};
use maud::{html, Markup};
use trust_gate_client::pulls::{Standing, SubscriptionListing};

/// Which side of its subscriptions a table shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The agent pays them: its kill switch stops their pulls.
    Pays,
    /// They are paid to the agent.
    Paid,
}

fn table(id: &str, side: Side, v: &AgentView, rows: &[SubscriptionListing]) -> Markup {
    // Only the agent's own kill switch is read: it stops the pulls of what the agent pays.
    let paused = side == Side::Pays && matches!(v.paused, Ok(Some(true)));
    html! {
        table id=(id) {
            tr {
                th { @if side == Side::Pays { "payee" } @else { "payer" } }
                th { "amount" } th { "this period" } th { "next pull" } th { "expires" }
                th { "state" } th { "facilitator" } th { "record" }
            }
            @for row in rows {
                @let l = row;
                @let r = reading(row, v.now);
                @let d = row.mint().and_then(|m| v.decimals_of(&m));
                @let badge = match r.state {
                    Standing::Active => "badge ok",
                    Standing::Revoked => "badge stop",
                    Standing::Expired => "badge warn",
                };
                tr.subscription data-record=(l.address) data-delegation=(l.record.delegation)
                    data-pulled=[r.period.map(|p| p.1)] data-next=[r.next_pull]
                    data-due=[r.due] {
                    td.nowrap { @if side == Side::Pays { (key(&l.record.payee_asset)) } @else { (key(&l.record.payer_asset)) } }
                    td.amount {
                        @match &l.delegation {
                            Some(t) => span.nowrap { (view::amount(t.amount_per_period, d)) " per " (period(t.period_length_s)) },
                            None => span.muted { "unknown" },
                        }
                        br;
                        span.muted { "policy " (l.record.policy_id) }
                    }
                    td.use { (use_text(row, &r, d, v.now)) }
                    td.next title="the subscription's facilitator pulls a due period on its crank's next round" {
                        @if r.due_now(v.now) { span.badge.warn { (next_text(&r, v.now, paused)) } }
                        @else { (next_text(&r, v.now, paused)) }
                    }
                    td {
                        @match l.delegation.map(|t| t.expiry_ts) {
                            Some(0) => "never",
                            Some(at) => { (view::utc(at)) " (" (view::until(at, v.now)) ")" }
                            None => span.muted { "unknown" },
                        }
                    }
                    td.state {
                        span class=(badge) data-state=(r.state.name()) title=(r.why) { (r.state.name()) }
                        @if !r.why.is_empty() { br; span.muted { (r.why) } }
                    }
                    td.nowrap { (key(&l.record.facilitator)) }
                    td.nowrap { code title=(format!("record {}, delegation {}", l.address, l.record.delegation)) { (short(&l.address)) } }
                }
            }
        }
    }
}

/// The section: what the agent pays, then what is paid to it.
pub(super) fn section(v: &AgentView) -> Markup {
    html! {
        section #subscriptions {
            h2 { "Subscriptions" }
            p.muted {
                "Recurring pulls through the gate (docs/subscriptions.md): the subscription's facilitator pulls the period's whole amount once a period, each pull a payment under the payer's policy and kill switch, listed among the settlements with its receipt. The delegator cancels one with `trust-gate unsubscribe <record>` (MCP: gate_unsubscribe), its rent returned."
            }
            h3 { "It pays" }
            @match &v.subscriptions_paid {
                Ok(rows) if rows.is_empty() => p.muted { "None: it pays no subscription through the gate." },
                Ok(rows) => (table("subscriptions-paid", Side::Pays, v, rows)),
                Err(e) => p.muted { "Could not read: " (e) },
            }
            h3 { "Paid to it" }
            @match &v.subscriptions_received {
                Ok(rows) if rows.is_empty() => p.muted { "None: no subscription pays it through the gate." },
                Ok(rows) => (table("subscriptions-received", Side::Paid, v, rows)),
                Err(e) => p.muted { "Could not read: " (e) },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subscriptions::tests::{row, START};
    use solana_sdk::pubkey::Pubkey;
    use std::collections::HashMap;
    use trust_gate_client::pulls::Backing;

    fn page(paid: Vec<SubscriptionListing>, paused: bool) -> AgentView {
        AgentView {
            asset: Pubkey::new_unique(),
            now: START + 60,
            clock: "the cluster's clock",
            name: None,
            owner: Err("-".into()),
            paused: Ok(Some(paused)),
            reputation: Err("-".into()),
            policies: Err("-".into()),
            channels: Err("-".into()),
            approvals: Err("-".into()),
            held_paid: Err("-".into()),
            held_received: Err("-".into()),
            subscriptions_paid: Ok(paid),
            subscriptions_received: Err("the RPC <failed>".into()),
            settlements: Err("-".into()),
            settlements_source: String::new(),
            wallets: Vec::new(),
            chart_days: 7,
            decimals: HashMap::new(),
        }
    }

    #[test]
    fn the_section_draws_each_row_the_empty_state_and_what_could_not_be_read() {
        let due = row(0, 0);
        let mut v = page(vec![due.clone()], false);
        v.decimals.insert(due.mint().unwrap(), 6);
        let html = section(&v).into_string();
        assert!(
            html.contains(&format!(
                r#"data-delegation="{}" data-pulled="0" data-next="{START}" data-due="1000000""#,
                due.record.delegation
            )),
            "{html}"
        );
        assert!(html.contains("1 per day"), "{html}");
        assert!(html.contains(r#"<td class="next" "#), "{html}");
        assert!(
            html.contains(r#"<span class="badge warn">due now</span></td>"#),
            "{html}"
        );
        assert!(html.contains(r#"data-state="active""#), "{html}");
        // The other side could not be read: said in its place, escaped.
        assert!(
            html.contains("Could not read: the RPC &lt;failed&gt;"),
            "{html}"
        );
        // The agent's kill switch stops what it pays.
        let paused = section(&page(vec![due], true)).into_string();
        assert!(paused.contains("kill switch refuses it"), "{paused}");
        // A revoked one: no next pull, and no attribute claiming one.
        let gone = SubscriptionListing {
            backing: Some(Backing::Closed),
            ..row(0, 0)
        };
        let html = section(&page(vec![gone], false)).into_string();
        assert!(html.contains(r#"data-state="revoked""#), "{html}");
        assert!(!html.contains("data-next"), "{html}");
        let none = section(&page(Vec::new(), false)).into_string();
        assert!(none.contains("None: it pays no subscription"), "{none}");
        assert!(!none.contains("<table"), "{none}");
    }
}
