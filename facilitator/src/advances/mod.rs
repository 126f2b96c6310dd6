//! What the facilitator advances for the payment channels it sponsors, and the bounds on it.
//! Each channel open it co-signs (an `upto` payment's, a session's) makes it pay the fees and
//! advance the rent of the channel, its escrow and, gated, the gate's record until the close
//! and the `reclaim` give them back. Wallets are free, so the bounds are on what is advanced,
//! not on who asks: unclosed channels per payer wallet, counted apart for `upto` and for
//! sessions; the rent advanced in all; a balance kept for settlements. The ledger of it
//! ([`ledger`]) is shared by replicas through Redis; the plain schemes take only the assets
//! configured ([`assets`]). The checks themselves, before an open is co-signed, are
//! [`crate::service::sponsor`]'s.

pub mod assets;
pub mod ledger;

use solana_sdk::rent::Rent;
use trust_gate_client::channels;
use trust_gate_client::settle::TokenProgram;

/// The facilitator's bounds on what it sponsors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SponsorSettings {
    /// `UPTO_CHANNELS_PER_PAYER`: unclosed `upto` channels of one payer wallet.
    pub upto_per_payer: usize,
    /// `SESSIONS_PER_PAYER`: unclosed session channels of one payer wallet.
    pub sessions_per_payer: usize,
    /// `MAX_RENT_ADVANCED_LAMPORTS`: the rent advanced in all.
    pub max_rent_advanced: u64,
    /// `MIN_FEE_PAYER_BALANCE_LAMPORTS`: what the facilitator keeps for settlements.
    pub min_balance: u64,
    /// `PLAIN_ASSETS`: the mints the plain schemes take.
    pub plain_assets: assets::PlainAssets,
    /// `PLAIN_OFFERS_SIGNED`: the plain schemes take only offers a trusted service signed.
    pub signed_plain_offers: bool,
}

pub const DEFAULT_PER_PAYER: usize = 2;
pub const DEFAULT_MAX_RENT_ADVANCED: u64 = 10_000_000_000;
pub const DEFAULT_MIN_BALANCE: u64 = 50_000_000;

impl Default for SponsorSettings {
    fn default() -> Self {
        SponsorSettings {
            upto_per_payer: DEFAULT_PER_PAYER,
            sessions_per_payer: DEFAULT_PER_PAYER,
            max_rent_advanced: DEFAULT_MAX_RENT_ADVANCED,
            min_balance: DEFAULT_MIN_BALANCE,
            plain_assets: assets::PlainAssets::Stock,
            signed_plain_offers: false,
        }
    }
}

/// The rent one open makes the facilitator advance: the channel's account, its escrow (a
/// Token-2022 escrow carries its `ImmutableOwner` extension) and, gated, the gate's record.
/// Estimated before the open; the ledger keeps what the chain shows once it lands.
pub fn rent_of_open(token_program: TokenProgram, gated: bool) -> u64 {
    let rent = Rent::default();
    let escrow = match token_program {
        TokenProgram::SplToken => 165,
        // The account, its type byte and the ImmutableOwner extension's header.
        TokenProgram::Token2022 => 165 + 1 + 4,
    };
    let record = 8 + <gate::state::ChannelRecord as anchor_lang::Space>::INIT_SPACE;
    rent.minimum_balance(channels::CHANNEL_LEN)
        + rent.minimum_balance(escrow)
        + if gated {
            rent.minimum_balance(record)
        } else {
            0
        }
}

/// How often the ledger is rebuilt from the chain (besides at the start).
pub const REBUILD_EVERY_SECS: i64 = 300;

/// How long a reservation not yet on chain is kept by a rebuild: past any blockhash's life
/// (about 90 s) and a send's timeouts.
pub const PENDING_OPEN_SECS: i64 = 300;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opens_rent_is_what_the_channel_program_and_the_gate_take() {
        // The fixture's README: about 4.7 M lamports come back from a plain channel; a gated
        // open's record adds its own (7 593 360 in all in an SPL Token mint, measured); a
        // Token-2022 escrow is 5 bytes longer.
        assert_eq!(rent_of_open(TokenProgram::SplToken, false), 4_711_920);
        assert_eq!(rent_of_open(TokenProgram::SplToken, true), 7_593_360);
        assert_eq!(rent_of_open(TokenProgram::Token2022, false), 4_746_720);
        assert_eq!(rent_of_open(TokenProgram::Token2022, true), 7_628_160);
    }
}
