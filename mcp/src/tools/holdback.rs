//! The holdback (docs/holdback.md): the held payments of a payer or a payee agent, read from
//! their open payment logs, and the two moves of a held share that one key can make: the
//! payee's refund and the arbiter's decision of a dispute. The release (anyone, after the
//! hold) is the facilitator's crank's, and the dispute the payer's (`trust-gate dispute`).

use crate::args::{hex32, pubkey};
use crate::context::Ctx;
use crate::envelope::{codes, ToolError, ToolResult};
use crate::tools::read::AgentArgs;
use crate::tools::write::sent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::held::{self, HeldBy, HeldListing};
use trust_gate_client::holdback::{HoldState, HoldStatus, HoldbackView};
use trust_gate_client::json::{Amount, Hash, Key};
use trust_gate_client::Program;
use trust_gate_client::{chain, decode};

/// Which side of its held payments an agent is listed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The payments it made (found by the wallets that signed them).
    Payer,
    /// The payments made to it.
    Payee,
}

/// A wallet whose signed payments were searched: a payment log names the wallet that paid,
/// not the payer agent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchedWallet {
    /// owner (the asset's live owner), agent wallet (set by the owner in the registry) or
    /// vault spender (of a vault-funded policy).
    pub role: String,
    /// The wallet.
    pub wallet: Key,
}

/// A held payment: its log, what was paid, and where its held share stands.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeldRow {
    /// The payment's log (its FeedbackLog), which holds the share's state until it closes.
    pub log: Key,
    /// The payment id hash (gate_get_feedback_log, gate_refund_holdback and
    /// gate_arbitrate_holdback take it).
    pub payment_id_hash: Hash,
    /// The facilitator that settled it.
    pub facilitator: Key,
    /// The payee agent.
    pub payee: Key,
    /// The wallet that paid (the settlement's transfer authority): a refund or an upheld
    /// dispute pays the share back to it.
    pub payer_wallet: Key,
    /// The token mint.
    pub mint: Key,
    /// The whole amount paid, the held share included.
    pub amount: Amount,
    /// The mint's decimals.
    pub value_decimals: u8,
    /// Unix seconds of the settlement.
    pub created_at: i64,
    /// The held share: how much, its escrow, its recipient, its arbiter, until when it is
    /// held, its state and when the arbitration of its dispute ends.
    pub holdback: HoldbackView,
    /// Whether anyone may release the share to the payee now (its hold is over, or the
    /// arbitration of its dispute ended undecided): the facilitator's crank does.
    pub releasable: bool,
}

impl HeldRow {
    fn of(l: &HeldListing, now: i64) -> Option<HeldRow> {
        let r = &l.receipt;
        Some(HeldRow {
            log: Key(l.log),
            payment_id_hash: Hash(r.payment_id_hash),
            facilitator: Key(r.facilitator),
            payee: Key(r.payee_asset),
            payer_wallet: Key(r.payer_wallet),
            mint: Key(r.mint),
            amount: Amount(r.amount),
            value_decimals: r.value_decimals,
            created_at: r.created_at,
            holdback: r.holdback.clone()?,
            releasable: l.payment.releasable_at(now),
        })
    }
}

/// An agent's held payments whose logs are open, newest first.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HoldbackList {
    /// The agent.
    pub agent_asset: Key,
    /// Whether these are the payments it made or those made to it.
    pub side: Side,
    /// A payer's: the wallets whose signed payments were searched (a log names the wallet,
    /// so a wallet that pays for several agents shows all of theirs); empty for a payee.
    pub wallets: Vec<SearchedWallet>,
    /// Unix seconds, the cluster's clock (what holdUntil and arbitrationEnds compare with).
    pub now: i64,
    /// The held payments, newest first. A log closes once its share is paid out and its
    /// dispute window is over; a closed one's receipt is gate_get_feedback_log's.
    pub held: Vec<HeldRow>,
    /// What may be done with them, and by whom.
    pub next: String,
}

/// The held payments of `by`, as rows at the cluster's time.
async fn rows(ctx: &Ctx, by: HeldBy) -> ToolResult<(Vec<HeldRow>, i64)> {
    let gate = ctx.config.ids.require(Program::Gate)?;
    let (listed, now) =
        tokio::try_join!(held::list(&ctx.rpc, &gate, by), chain::unix_time(&ctx.rpc))?;
    Ok((
        listed.iter().filter_map(|l| HeldRow::of(l, now)).collect(),
        now,
    ))
}

pub async fn list_payee(ctx: &Ctx, a: AgentArgs) -> ToolResult<HoldbackList> {
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    let (held, now) = rows(ctx, HeldBy::Payee(asset)).await?;
    Ok(HoldbackList {
        agent_asset: Key(asset),
        side: Side::Payee,
        wallets: Vec::new(),
        now,
        held,
        next: "as the payee (its owner or agent wallet), gate_refund_holdback {\"payment_id_hash\": ...} gives a held or disputed share back to the payer; a share not disputed is released to the payee by anyone (the facilitator's crank) from holdUntil".into(),
    })
}

pub async fn list_payer(ctx: &Ctx, a: AgentArgs) -> ToolResult<HoldbackList> {
    let gate = ctx.config.ids.require(Program::Gate)?;
    let asset = pubkey("agent_asset", &a.agent_asset)?;
    // The logs name the wallet that signed the transfer, never the payer agent: the agent's
    // wallets are those that may sign for it (its owner, the agent wallet its owner set) and
    // its vaults' spenders.
    let owner = chain::asset_owner(&ctx.rpc, &asset).await?;
    let (registered, policies) = tokio::try_join!(
        chain::agent(&ctx.rpc, &ctx.config.ids, &asset),
        chain::policies_of(&ctx.rpc, &ctx.config.ids, &asset)
    )?;
    let mut wallets = vec![SearchedWallet {
        role: "owner".into(),
        wallet: Key(owner),
    }];
    if let Some(w) = registered.wallet(&owner) {
        wallets.push(SearchedWallet {
            role: "agent wallet".into(),
            wallet: Key(w),
        });
    }
    for (_, p) in &policies {
        if p.params.is_vault_funded() && p.spender != Pubkey::default() {
            wallets.push(SearchedWallet {
                role: "vault spender".into(),
                wallet: Key(p.spender),
            });
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    wallets.retain(|w| seen.insert(w.wallet));
    let now = chain::unix_time(&ctx.rpc).await?;
    let mut held = Vec::new();
    for w in &wallets {
        let listed = held::list(&ctx.rpc, &gate, HeldBy::PayerWallet(w.wallet.0)).await?;
        held.extend(listed.iter().filter_map(|l| HeldRow::of(l, now)));
    }
    held.sort_by_key(|r| std::cmp::Reverse(r.created_at));
    Ok(HoldbackList {
        agent_asset: Key(asset),
        side: Side::Payer,
        wallets,
        now,
        held,
        next: "the wallet that paid may dispute a payment before holdUntil (`trust-gate dispute`), which freezes its share until the payee refunds it, the arbiter decides (gate_arbitrate_holdback, as the arbiter) or the arbitration ends".into(),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RefundArgs {
    /// The held payment's id hash: 64 hex characters (a row of gate_list_payee_holdbacks).
    pub payment_id_hash: String,
    /// The facilitator that settled it (base58); needed only when several facilitators
    /// settled a payment of this id.
    pub facilitator: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ArbitrateArgs {
    /// The disputed payment's id hash: 64 hex characters.
    pub payment_id_hash: String,
    /// The facilitator that settled it (base58); needed only when several facilitators
    /// settled a payment of this id.
    pub facilitator: Option<String>,
    /// true upholds the dispute (the share goes back to the payer's wallet); false rejects it
    /// (the share goes to the payee's recipient).
    pub uphold: bool,
}

/// What a move of a held share answers: the payment as it is now, whether this call moved
/// its share, where to and in which transaction.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HoldbackMove {
    #[serde(flatten)]
    pub payment: HeldRow,
    /// Whether this call moved the share (false: it already was where asked).
    pub changed: bool,
    /// The token account the share was paid to (absent when nothing was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paid_to: Option<Key>,
    /// The transaction sent (absent when nothing was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The open held log of payment `hash` (of `facilitator` when given).
async fn find(ctx: &Ctx, hash: &str, facilitator: Option<&str>) -> ToolResult<(HeldListing, i64)> {
    let gate = ctx.config.ids.require(Program::Gate)?;
    let hash = hex32("payment_id_hash", hash)?;
    let facilitator = facilitator.map(|f| pubkey("facilitator", f)).transpose()?;
    let (mut listed, now) = tokio::try_join!(
        held::list(&ctx.rpc, &gate, HeldBy::Payment(hash)),
        chain::unix_time(&ctx.rpc)
    )?;
    listed.retain(|l| facilitator.is_none_or(|f| l.payment.facilitator == f));
    match listed.len() {
        1 => Ok((listed.remove(0), now)),
        0 => Err(ToolError::new(
            codes::NOT_FOUND,
            format!(
                "no open log of a held payment {} exists",
                decode::hex(&hash)
            ),
        )
        .hint("it held nothing, or its log closed once its share was paid out and its dispute window was over: gate_get_feedback_log reads its receipt")),
        n => Err(ToolError::input(
            "facilitator",
            format!("{n} facilitators settled a held payment of this id: name the one meant"),
        )),
    }
}

/// The payment `before` was, read again after a move.
async fn reread(ctx: &Ctx, before: &HeldListing) -> ToolResult<HeldRow> {
    let (found, now) = find(
        ctx,
        &decode::hex(&before.payment.payment_id_hash),
        Some(&before.payment.facilitator.to_string()),
    )
    .await?;
    HeldRow::of(&found, now).ok_or_else(|| ToolError::not_found("held payment log", before.log))
}

/// Why a share in `state` cannot be moved as asked.
fn paid_out(state: HoldState, what: &str) -> ToolError {
    // The state as receipts name it (`released`, `upheld`, ...).
    let state = format!("{:?}", HoldStatus::from(state)).to_lowercase();
    ToolError::input(
        "payment_id_hash",
        format!("its held share was already paid out ({state}): there is nothing to {what}"),
    )
}

/// The answer to a move already made: the payment as it stands, nothing sent.
fn unchanged(found: &HeldListing, now: i64) -> ToolResult<HoldbackMove> {
    Ok(HoldbackMove {
        payment: HeldRow::of(found, now)
            .ok_or_else(|| ToolError::not_found("held payment log", found.log))?,
        changed: false,
        paid_to: None,
        signature: None,
    })
}

pub async fn refund(ctx: &Ctx, a: RefundArgs) -> ToolResult<HoldbackMove> {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_refund_holdback")?;
    let (found, now) = find(ctx, &a.payment_id_hash, a.facilitator.as_deref()).await?;
    let p = found.payment;
    match p.state {
        HoldState::Held | HoldState::Disputed => {}
        HoldState::Refunded => return unchanged(&found, now),
        other => return Err(paid_out(other, "refund")),
    }
    // The program takes the payee agent's keys at the time of the refund (after a sale, its
    // new owner's): said here by name rather than as a chain error.
    let me = signer.pubkey();
    let owner = chain::asset_owner(&ctx.rpc, &p.payee_asset).await?;
    let agent = chain::agent(&ctx.rpc, &ctx.config.ids, &p.payee_asset).await?;
    if !agent.may_sign(&owner, &me) {
        return Err(ToolError::new(
            codes::AUTH_REQUIRED,
            format!(
                "the signer {me} is neither the payee agent {}'s owner nor its agent wallet: only the payee refunds a held share",
                p.payee_asset
            ),
        ));
    }
    send_payout(ctx, signer, &found, true, |to| {
        b.refund_holdback(&me, &p, to)
    })
    .await
}

pub async fn arbitrate(ctx: &Ctx, a: ArbitrateArgs) -> ToolResult<HoldbackMove> {
    let b = ctx.builder()?;
    let signer = ctx.signer("gate_arbitrate_holdback")?;
    let (found, now) = find(ctx, &a.payment_id_hash, a.facilitator.as_deref()).await?;
    let p = found.payment;
    let decided = if a.uphold {
        HoldState::Upheld
    } else {
        HoldState::Rejected
    };
    match p.state {
        HoldState::Disputed if now < p.arbitration_ends => {}
        HoldState::Disputed => {
            return Err(ToolError::input(
                "payment_id_hash",
                format!(
                    "its arbitration ended at {} (unix seconds): the share is the payee's, released by anyone (lapsed)",
                    p.arbitration_ends
                ),
            ))
        }
        HoldState::Held => {
            return Err(ToolError::input(
                "payment_id_hash",
                "its held share is not disputed: an arbiter decides only a dispute the payer's wallet made within the hold",
            ))
        }
        s if s == decided => {
            return unchanged(&found, now)
        }
        other => return Err(paid_out(other, "arbitrate")),
    }
    // A key arbiter signs itself; an arbiter set by its members, of which this server holds
    // one key: enough for a set of threshold 1.
    let me = signer.pubkey();
    let members = if p.arbiter == me {
        Vec::new()
    } else {
        // A key arbiter is no account of the gate's; a set is one.
        let set = chain::account(&ctx.rpc, &p.arbiter)
            .await?
            .filter(|acc| acc.owner == b.ids.gate)
            .and_then(|acc| {
                decode::account::<gate::state::ArbiterSet>("ArbiterSet", &acc.data).ok()
            });
        match set {
            Some(s) if s.threshold == 1 && s.members.contains(&me) => vec![me],
            Some(s) if s.members.contains(&me) => {
                return Err(ToolError::new(
                    codes::AUTH_REQUIRED,
                    format!(
                        "the arbiter {} is a set deciding by {} of its members and this server holds one key",
                        p.arbiter, s.threshold
                    ),
                )
                .hint("the members sign one arbitrate_holdback transaction together (Builder::arbitrate_holdback with the signing members)"))
            }
            _ => {
                return Err(ToolError::new(
                    codes::AUTH_REQUIRED,
                    format!(
                        "the signer {me} is not the payment's arbiter {} (nor a member of it)",
                        p.arbiter
                    ),
                ))
            }
        }
    };
    send_payout(ctx, signer, &found, a.uphold, |to| {
        b.arbitrate_holdback(&p, a.uphold, to, &members)
    })
    .await
}

/// Pays `found`'s share out with the instruction `make` builds for the token account it is
/// paid to (the payer wallet's when `to_payer`, else the recipient's), created first when
/// missing: the signer pays its rent, as it pays the fee.
async fn send_payout(
    ctx: &Ctx,
    signer: &Keypair,
    found: &HeldListing,
    to_payer: bool,
    make: impl FnOnce(&Pubkey) -> solana_sdk::instruction::Instruction,
) -> ToolResult<HoldbackMove> {
    let (to, create) = found.payment.payout_account(to_payer, &signer.pubkey())?;
    let sig = ctx.send(&[create, make(&to)], signer, &[]).await?;
    Ok(HoldbackMove {
        payment: reread(ctx, found).await?,
        changed: true,
        paid_to: Some(Key(to)),
        signature: sent(sig),
    })
}
