use anchor_lang::prelude::*;

/// A recurring delegation of the Subscriptions program that the gate made for a payer agent,
/// and the terms of its pulls that are not in the delegation: whom they pay, under which of
/// the payer's policies, and which facilitator sends them (docs/subscriptions.md). At
/// `["gated_subscription", delegation]`; created by `subscribe` with the delegator's rent,
/// closed by `unsubscribe` to it.
///
/// Offsets: 8 payer_asset, 40 payee_asset, 72 facilitator, 104 delegation, 136 delegator,
/// 168 policy_id, 172 delegate_bump, 173 created_at, 181 bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct GatedSubscription {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    /// The only facilitator whose pulls the gate signs (its GateAuthority rates the payee).
    pub facilitator: Pubkey,
    /// The recurring delegation (the Subscriptions program's account).
    pub delegation: Pubkey,
    /// The delegation's delegator, a key of the payer agent when it subscribed: it paid this
    /// record's rent and alone may unsubscribe.
    pub delegator: Pubkey,
    /// The payer's policy every pull is evaluated and counted under.
    pub policy_id: u32,
    /// The bump of the delegatee, `["pull_delegate", payer_asset, payee_asset, facilitator]`.
    pub delegate_bump: u8,
    pub created_at: i64,
    pub bump: u8,
}
