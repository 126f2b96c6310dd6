//! The delegator's side of a gated subscription: `gate_subscribe` sets one up in one
//! transaction, `gate_unsubscribe` ends it, both rents back. Each refuses by name, before
//! anything is signed, what the gate would refuse by error code.

use super::{read, SubscriptionRow};
use crate::args::{pubkey, Amount as AmountArg};
use crate::context::Ctx;
use crate::envelope::{codes, ToolError, ToolResult};
use crate::tools::write::sent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signer;
use trust_gate_client::instructions::Subscription;
use trust_gate_client::json::{Amount, Key};
use trust_gate_client::subscriptions::{self, RecurringTerms, MAX_PERIOD_SECS};
use trust_gate_client::{chain, pulls, ClientError};

/// How far before the cluster's clock a start may lie: the Subscriptions program refuses an
/// earlier one (404, `RecurringDelegationStartTimeInPast`).
const START_DRIFT_SECS: i64 = 120;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SubscribeArgs {
    /// The payer agent (base58); the server's signer, the delegator, must be its live owner
    /// or the agent wallet its owner set: its associated token account of the mint pays.
    pub payer_agent: String,
    /// The payee agent the pulls pay (base58), another party than the payer.
    pub payee_agent: String,
    /// The payer's policy every pull is counted under: wallet-funded, of the subscription's
    /// mint.
    pub policy_id: u32,
    /// The most one period's pulls take, in base units (decimal digits, or an integer); more
    /// than 0.
    pub amount_per_period: AmountArg,
    /// The period's length in seconds, 1..=31536000 (a year).
    #[schemars(range(min = 1, max = 31_536_000))]
    pub period_secs: u64,
    /// Unix seconds the first period starts, no earlier than two minutes before the
    /// cluster's clock; default: the cluster's clock now.
    pub start_ts: Option<i64>,
    /// Unix seconds after which nothing can be pulled, after the start; default: never.
    pub expiry_ts: Option<i64>,
    /// Tells apart the signer's subscriptions of the same payer, payee and facilitator;
    /// default: the lowest from 1 not in use. Given, a subscription already made with it is
    /// returned (created: false) rather than made twice.
    pub nonce: Option<u64>,
    /// The facilitator that will send the pulls (base58; it must have a GateAuthority);
    /// default: MCP_DEFAULT_FACILITATOR.
    pub facilitator: Option<String>,
    /// The token mint (base58); default: the policy's mint, which it must be.
    pub mint: Option<String>,
}

/// What `gate_subscribe` answers: the subscription as it is now.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeReply {
    #[serde(flatten)]
    pub subscription: SubscriptionRow,
    /// The delegation's nonce.
    pub nonce: u64,
    /// Whether this call created it (false: a subscription of this nonce existed and is
    /// returned as it is).
    pub created: bool,
    /// An existing subscription's: whether its terms (amount per period, period, expiry)
    /// are the ones asked for; a delegation's terms never change: another nonce makes a new
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches_request: Option<bool>,
    /// Whether this call also created the delegator's SubscriptionAuthority for the mint
    /// (it stays after gate_unsubscribe, for the delegator's other subscriptions).
    pub authority_created: bool,
    /// Lamports of rent the delegator paid: the delegation's and the record's (both back at
    /// gate_unsubscribe), and the authority's when this call created it ("0" when nothing
    /// was sent).
    pub rent_paid: Amount,
    /// The transaction sent (absent when nothing was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The facilitator named, else the configured one.
fn facilitator(ctx: &Ctx, given: Option<&str>) -> ToolResult<Pubkey> {
    match (given, ctx.config.default_facilitator) {
        (Some(f), _) => pubkey("facilitator", f),
        (None, Some(f)) => Ok(f),
        (None, None) => Err(ToolError::input(
            "facilitator",
            "required: no MCP_DEFAULT_FACILITATOR is configured",
        )),
    }
}

/// `e` naming the argument `field` when it says the agent it names is not one (no asset, no
/// registry account), so that a wrong key is refused as the argument it is.
fn agent_arg(field: &'static str) -> impl Fn(ClientError) -> ToolError {
    move |e| match e {
        ClientError::AccountNotFound { .. } | ClientError::Decode { .. } => {
            ToolError::input(field, format!("is not a registered agent: {e}"))
        }
        e => e.into(),
    }
}

/// The terms asked for, checked against the cluster's clock `now` as the Subscriptions
/// program will check them, each refusal naming its argument.
fn terms(a: &SubscribeArgs, now: i64, nonce: u64) -> ToolResult<RecurringTerms> {
    let amount = a.amount_per_period.value("amount_per_period")?;
    if amount == 0 {
        return Err(ToolError::input("amount_per_period", "must be more than 0"));
    }
    if a.period_secs == 0 || a.period_secs > MAX_PERIOD_SECS {
        return Err(ToolError::input(
            "period_secs",
            format!("must be 1..={MAX_PERIOD_SECS} (a year)"),
        ));
    }
    // Always an explicit start: the program's "start on landing" (0) would need an expiry,
    // the cluster's clock now needs none.
    let start = a.start_ts.unwrap_or(now);
    if start < now - START_DRIFT_SECS {
        return Err(ToolError::input(
            "start_ts",
            format!("{start} is more than two minutes before the cluster's clock ({now})"),
        ));
    }
    let expiry = match a.expiry_ts {
        Some(e) if e <= start => {
            return Err(ToolError::input(
                "expiry_ts",
                format!("{e} must be after the start ({start})"),
            ))
        }
        Some(e) => e,
        None => 0,
    };
    Ok(RecurringTerms {
        nonce,
        amount_per_period: amount,
        period_length_s: a.period_secs,
        start_ts: start,
        expiry_ts: expiry,
    })
}

pub async fn subscribe(ctx: &Ctx, a: SubscribeArgs) -> ToolResult<SubscribeReply> {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_subscribe")?;
    let me = signer.pubkey();
    let payer = pubkey("payer_agent", &a.payer_agent)?;
    let payee = pubkey("payee_agent", &a.payee_agent)?;
    if payee == payer {
        return Err(ToolError::input(
            "payee_agent",
            "is the payer agent: a subscription pays another party",
        ));
    }
    let facilitator = facilitator(ctx, a.facilitator.as_deref())?;
    let now = chain::unix_time(&ctx.rpc).await?;
    // Checked before anything else is read: bad terms need no chain to be refused.
    let mut terms = terms(&a, now, a.nonce.unwrap_or(1))?;

    // What `subscribe` refuses by error code, said here by name before anything is signed.
    let policy_key = b.pda.policy(&payer, a.policy_id);
    let policy = chain::policy(&ctx.rpc, &b.ids, &payer, a.policy_id)
        .await?
        .ok_or_else(|| {
            ToolError::not_found("PolicyAccount", policy_key)
                .hint("the payer agent's policy of this id: create it with gate_init_policy")
        })?;
    if policy.params.is_vault_funded() {
        return Err(ToolError::input(
            "policy_id",
            "is vault-funded: a recurring delegation pulls from the delegator's wallet, never from a vault (SubscriptionVaultFunded)",
        ));
    }
    let policy_mint = policy.params.mint;
    if policy_mint == Pubkey::default() {
        return Err(ToolError::input(
            "policy_id",
            "names no mint: a subscription's policy counts its pulls in one mint",
        ));
    }
    let mint = match &a.mint {
        Some(m) => pubkey("mint", m)?,
        None => policy_mint,
    };
    if mint != policy_mint {
        return Err(ToolError::input(
            "mint",
            format!("the policy counts {policy_mint}, not {mint} (SubscriptionPolicyMismatch)"),
        ));
    }
    let token = chain::mint(&ctx.rpc, "mint", &mint)
        .await?
        .ok_or_else(|| ToolError::not_found("mint", mint))?;
    if token.transfer_hook.is_some() {
        return Err(ToolError::input(
            "mint",
            "has a transfer hook, which a gated pull cannot carry (SubscriptionTransferHook)",
        ));
    }
    let owner = chain::asset_owner(&ctx.rpc, &payer)
        .await
        .map_err(agent_arg("payer_agent"))?;
    let agent = chain::agent(&ctx.rpc, &b.ids, &payer)
        .await
        .map_err(agent_arg("payer_agent"))?;
    if !agent.may_sign(&owner, &me) {
        return Err(ToolError::new(
            codes::AUTH_REQUIRED,
            format!(
                "the signer {me} is neither the payer agent {payer}'s owner nor its agent wallet: only they subscribe it (the delegator's wallet pays)"
            ),
        ));
    }
    chain::agent(&ctx.rpc, &b.ids, &payee)
        .await
        .map_err(agent_arg("payee_agent"))?;
    if chain::account(&ctx.rpc, &b.pda.gate_authority(&facilitator))
        .await?
        .is_none()
    {
        return Err(ToolError::input(
            "facilitator",
            format!("{facilitator} has no GateAuthority: it cannot send pulls through the gate"),
        ));
    }

    let mut s = Subscription {
        delegator: me,
        payer_asset: payer,
        payee_asset: payee,
        facilitator,
        mint,
        token_program: token.token_program,
        policy_id: a.policy_id,
        terms,
    };
    if a.nonce.is_none() {
        terms.nonce = pulls::free_nonce(&ctx.rpc, &b, &s).await?;
        s.terms = terms;
    }
    let delegation = b.subscription_delegation(&s);
    let record = b.pda.gated_subscription(&delegation);
    // A subscription of this nonce made already (a call sent again): returned, not made
    // twice; a delegation of it the gate holds no record of cannot be subscribed over.
    if let Some(r) = read(ctx, &record).await? {
        // The start is left out: defaulted to the clock, it differs on every call.
        let matches = r.delegation.is_some_and(|d| {
            (d.amount_per_period, d.period_length_s, d.expiry_ts)
                == (
                    terms.amount_per_period,
                    terms.period_length_s,
                    terms.expiry_ts,
                )
        });
        return Ok(SubscribeReply {
            subscription: SubscriptionRow::of(&r, now),
            nonce: terms.nonce,
            created: false,
            matches_request: Some(matches),
            authority_created: false,
            rent_paid: Amount(0),
            signature: None,
        });
    }
    if chain::account(&ctx.rpc, &delegation).await?.is_some() {
        return Err(ToolError::input(
            "nonce",
            format!(
                "{} is in use by the delegation {delegation}, of which the gate holds no record",
                terms.nonce
            ),
        ));
    }
    let authority = subscriptions::subscription_authority(&me, &mint);
    let authority_existed = chain::account(&ctx.rpc, &authority).await?.is_some();

    let sig = ctx.send(&[b.subscribe(&s)], signer, &[]).await?;
    let r = read(ctx, &record)
        .await?
        .ok_or_else(|| ToolError::not_found("GatedSubscription", record))?;
    let authority_rent = match authority_existed {
        true => 0,
        false => chain::account(&ctx.rpc, &authority)
            .await?
            .map_or(0, |acc| acc.lamports),
    };
    let now = chain::unix_time(&ctx.rpc).await?;
    Ok(SubscribeReply {
        subscription: SubscriptionRow::of(&r, now),
        nonce: terms.nonce,
        created: true,
        matches_request: None,
        authority_created: !authority_existed,
        rent_paid: Amount(r.rent + authority_rent),
        signature: sent(sig),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UnsubscribeArgs {
    /// The subscription's record (base58: `address` in gate_list_subscriptions). Give it or
    /// delegation.
    pub subscription: Option<String>,
    /// The subscription's recurring delegation (base58).
    pub delegation: Option<String>,
}

/// What `gate_unsubscribe` answers: the subscription that ended and the rent returned.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnsubscribeReply {
    /// The record, closed.
    pub subscription: Key,
    /// Its recurring delegation.
    pub delegation: Key,
    /// The payer agent.
    pub payer_agent: Key,
    /// The payee agent.
    pub payee_agent: Key,
    /// The delegator (the signer), which got the rents back.
    pub delegator: Key,
    /// Whether this call revoked the delegation (false: it was revoked before, and only the
    /// record was closed).
    pub delegation_revoked: bool,
    /// Lamports of rent returned to the delegator: the record's and, when this call revoked
    /// it, the delegation's. The SubscriptionAuthority stays (revoke_subscription_authority
    /// removes it).
    pub rent_returned: Amount,
    /// The transaction sent.
    pub signature: String,
}

pub async fn unsubscribe(ctx: &Ctx, a: UnsubscribeArgs) -> ToolResult<UnsubscribeReply> {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_unsubscribe")?;
    let address = match (&a.subscription, &a.delegation) {
        (Some(s), None) => pubkey("subscription", s)?,
        (None, Some(d)) => b.pda.gated_subscription(&pubkey("delegation", d)?),
        (Some(_), Some(_)) => {
            return Err(ToolError::input(
                "delegation",
                "give subscription or delegation, not both",
            ))
        }
        (None, None) => {
            return Err(ToolError::input(
                "subscription",
                "give subscription (the record's address) or delegation",
            ))
        }
    };
    let r = read(ctx, &address).await?.ok_or_else(|| {
        ToolError::not_found("GatedSubscription", address)
            .hint("it was never made, or was unsubscribed already: gate_list_subscriptions lists what stands")
    })?;
    let record = r.record;
    // The program refuses anyone else (SubscriptionNotDelegator): said here by name, before
    // anything is signed.
    let me = signer.pubkey();
    if record.delegator != me {
        return Err(ToolError::new(
            codes::AUTH_REQUIRED,
            format!(
                "the signer {me} is not the subscription's delegator {}: only its delegator unsubscribes (and gets the rents back)",
                record.delegator
            ),
        ));
    }
    let sig = ctx.send(&[b.unsubscribe(&record)], signer, &[]).await?;
    Ok(UnsubscribeReply {
        subscription: Key(address),
        delegation: Key(record.delegation),
        payer_agent: Key(record.payer_asset),
        payee_agent: Key(record.payee_asset),
        delegator: Key(me),
        delegation_revoked: r.delegation.is_some(),
        rent_returned: Amount(r.rent),
        signature: sig.to_string(),
    })
}
