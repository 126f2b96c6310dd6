use anchor_lang::prelude::*;

/// A channel the gate let open: what it reserved under the payer's policy and in which
/// windows, so that what the sealed channel gives back can be credited to the windows that
/// still hold the reservation, and so that its close gives one feedback. At
/// `["channel_record", channel]`; created by `gate_channel_open` with the facilitator's rent
/// (one record per channel address: a channel's address changes with every opening).
///
/// Offsets: 8 channel, 40 payer_asset, 72 payee_asset, 104 payer_signer, 136 facilitator,
/// 168 mint, 200 decimals, 201 authorized_signer, 233 policy_id, 237 deposit, 245 open_slot,
/// 253 day_index, 261 week_index, 269 month_index, 277 created_at, 285 bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct ChannelRecord {
    pub channel: Pubkey,
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    /// The channel's payer: the payer agent's signer, which signed the open.
    pub payer_signer: Pubkey,
    /// The channel's payee and rent payer, which paid this record's rent.
    pub facilitator: Pubkey,
    pub mint: Pubkey,
    /// The mint's decimals (the close's feedback gives the settled amount in them).
    pub decimals: u8,
    /// The channel's voucher key.
    pub authorized_signer: Pubkey,
    pub policy_id: u32,
    /// What the gate evaluated and counted: the open's deposit. A top-up (which needs no
    /// gate) raises the channel's deposit, not this.
    pub deposit: u64,
    pub open_slot: u64,
    /// The UTC day, week (from Monday) and calendar month the deposit was counted in.
    pub day_index: i64,
    pub week_index: i64,
    pub month_index: i64,
    pub created_at: i64,
    pub bump: u8,
}
