//! Gated subscriptions (docs/subscriptions.md): recurring pulls through the gate, listed by
//! payer, payee or facilitator with what is due and when, set up and cancelled by their
//! delegator ([`write`]). The pulls themselves are the facilitator's crank's
//! (`PULL_SUBSCRIPTIONS`): a pull is signed by the subscription's facilitator, never by this
//! server.

use crate::args::pubkey;
use crate::context::Ctx;
use crate::envelope::{ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::json::{Amount, Key};
use trust_gate_client::pulls::{self, Standing, SubscribedBy, SubscriptionListing};
use trust_gate_client::{chain, Program};

pub mod write;
pub use write::{
    subscribe, unsubscribe, SubscribeArgs, SubscribeReply, UnsubscribeArgs, UnsubscribeReply,
};

/// One gated subscription: the gate's record, its delegation's terms as they read now, and
/// when a pull is due.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionRow {
    /// The gate's record (GatedSubscription): gate_unsubscribe takes it.
    pub address: Key,
    /// The recurring delegation of the Subscriptions program the pulls draw on.
    pub delegation: Key,
    /// The payer agent.
    pub payer_agent: Key,
    /// The payee agent, the only one its pulls pay.
    pub payee_agent: Key,
    /// The only facilitator that sends its pulls.
    pub facilitator: Key,
    /// The delegation's delegator: its associated token account pays; it paid the rents
    /// and alone unsubscribes.
    pub delegator: Key,
    /// The payer's policy every pull is evaluated and counted under.
    pub policy_id: u32,
    /// Unix seconds the record was created.
    pub created_at: i64,
    /// active, expired or revoked.
    pub state: Standing,
    /// The token mint (null once its delegation is gone).
    pub mint: Option<Key>,
    /// The most one period's pulls take, in base units (null once its delegation is gone).
    pub amount_per_period: Option<Amount>,
    /// The period's length in seconds (null once its delegation is gone).
    pub period_secs: Option<u64>,
    /// Unix seconds the period of the cluster's clock now started (in the future before the
    /// first period; null once its delegation is gone).
    pub period_start: Option<i64>,
    /// What was pulled in that period, in base units: its use (null once its delegation is
    /// gone).
    pub pulled_in_period: Option<Amount>,
    /// Whether a pull is due now (the facilitator's crank pulls it on its next round).
    pub due_now: bool,
    /// What a pull due now takes: the period's whole amount (null when none is due).
    pub due_amount: Option<Amount>,
    /// Unix seconds the next pull falls due (now or earlier when one is due; null when no
    /// period starts any more: expired, revoked).
    pub next_pull: Option<i64>,
    /// Unix seconds after which nothing can be pulled (null: never, or revoked).
    pub expiry: Option<i64>,
}

impl SubscriptionRow {
    /// `l` at `now` (the SDK's standing, due amount and next pull, which look at the
    /// authority behind the delegation too).
    fn of(l: &SubscriptionListing, now: i64) -> SubscriptionRow {
        let r = &l.record;
        let d = l.delegation.as_ref();
        let due = l.due(now);
        let period = d.map(|d| d.period_at(now));
        SubscriptionRow {
            address: Key(l.address),
            delegation: Key(r.delegation),
            payer_agent: Key(r.payer_asset),
            payee_agent: Key(r.payee_asset),
            facilitator: Key(r.facilitator),
            delegator: Key(r.delegator),
            policy_id: r.policy_id,
            created_at: r.created_at,
            state: l.standing(now),
            mint: d.map(|d| Key(d.mint)),
            amount_per_period: d.map(|d| Amount(d.amount_per_period)),
            period_secs: d.map(|d| d.period_length_s),
            period_start: period.map(|p| p.0),
            pulled_in_period: period.map(|p| Amount(p.1)),
            due_now: due.is_some(),
            due_amount: due.map(Amount),
            next_pull: l.next_pull(now),
            expiry: d.and_then(|d| (d.expiry_ts != 0).then_some(d.expiry_ts)),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListSubscriptionsArgs {
    /// List the subscriptions this payer agent pays (base58). Give exactly one of
    /// payer_agent, payee_agent and facilitator.
    pub payer_agent: Option<String>,
    /// List the subscriptions that pay this payee agent (base58).
    pub payee_agent: Option<String>,
    /// List the subscriptions this facilitator pulls (base58).
    pub facilitator: Option<String>,
}

/// Which key a list of subscriptions was found by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ListedBy {
    /// The payer agent.
    Payer,
    /// The payee agent.
    Payee,
    /// The facilitator that pulls them.
    Facilitator,
}

/// The gated subscriptions of a payer, a payee or a facilitator, oldest first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionList {
    /// What they were found by.
    pub by: ListedBy,
    /// The payer agent, payee agent or facilitator.
    pub key: Key,
    /// Unix seconds, the cluster's clock (what the periods and the next pulls compare with).
    pub now: i64,
    /// The subscriptions, oldest first.
    pub subscriptions: Vec<SubscriptionRow>,
    /// What may be done with them, and by whom.
    pub next: String,
}

pub async fn list(ctx: &Ctx, a: ListSubscriptionsArgs) -> ToolResult<SubscriptionList> {
    let gate = ctx.config.ids.require(Program::Gate)?;
    let given = [
        ("payer_agent", &a.payer_agent),
        ("payee_agent", &a.payee_agent),
        ("facilitator", &a.facilitator),
    ];
    let mut named = given.iter().filter_map(|(f, v)| Some((*f, v.as_deref()?)));
    let (field, value) = named.next().ok_or_else(|| {
        ToolError::input(
            "payer_agent",
            "give one of payer_agent, payee_agent or facilitator",
        )
    })?;
    if let Some((other, _)) = named.next() {
        return Err(ToolError::input(
            other,
            format!("give only one of payer_agent, payee_agent and facilitator ({field} is given)"),
        ));
    }
    let key = pubkey(field, value)?;
    let (by, listed_by) = match field {
        "payer_agent" => (SubscribedBy::Payer(key), ListedBy::Payer),
        "payee_agent" => (SubscribedBy::Payee(key), ListedBy::Payee),
        _ => (SubscribedBy::Facilitator(key), ListedBy::Facilitator),
    };
    let (listed, now) =
        tokio::try_join!(pulls::list(&ctx.rpc, &gate, by), chain::unix_time(&ctx.rpc))?;
    Ok(SubscriptionList {
        by: listed_by,
        key: Key(key),
        now,
        subscriptions: listed
            .iter()
            .map(|l| SubscriptionRow::of(l, now))
            .collect(),
        next: "the facilitator's crank pulls a due subscription's period once (with PULL_SUBSCRIPTIONS on), under the payer's policy, the payer's kill switch stopping every pull; its delegator alone cancels one, with gate_unsubscribe {\"subscription\": address}, both rents back to it".into(),
    })
}

/// The subscription whose record (or delegation) is at `address`, as it stands now; `None`
/// when there is none.
async fn read(ctx: &Ctx, address: &Pubkey) -> ToolResult<Option<SubscriptionListing>> {
    ctx.config.ids.require(Program::Gate)?;
    Ok(pulls::find(&ctx.rpc, &ctx.config.ids, address).await?)
}
