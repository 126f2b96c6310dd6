//! Facts about Solana's Subscriptions & Allowances program (solana-foundation/subscriptions,
//! program v0.4.0) as the gate uses it: a user's `SubscriptionAuthority` per mint is the one
//! SPL delegate of the user's associated token account, and a `RecurringDelegation` lets one
//! delegatee pull up to an amount per period from it. The gate is such a delegatee (a PDA per
//! payer agent, payee agent and facilitator: docs/subscriptions.md).
//!
//! Every id, seed, tag and offset here must match the deployed program; the `subscriptions`
//! test suite runs them against its real bytecode. The program is Pinocchio: one-byte
//! instruction tags, packed little-endian data, one-byte account discriminators.

use anchor_lang::prelude::*;

/// The program's id (mainnet and devnet alike).
pub const ID: Pubkey = pubkey!("De1egAFMkMWZSN5rYXRj9CAdheBamobVNubTsi9avR44");
/// Its event authority, the PDA `["event_authority"]` its event self-CPI names.
pub const EVENT_AUTHORITY: Pubkey = pubkey!("3Hnj4BYoDgtpBuqXfiy7Y8cNa3jXaNd4oqgSXBzkMcH7");

/// PDA seed prefixes.
pub mod seeds {
    /// `["SubscriptionAuthority", user, mint]`
    pub const SUBSCRIPTION_AUTHORITY: &[u8] = b"SubscriptionAuthority";
    /// `["delegation", subscription_authority, delegator, delegatee, nonce u64 LE]`
    pub const DELEGATION: &[u8] = b"delegation";
}

/// Instruction tags (the first data byte).
pub mod tag {
    pub const INIT_SUBSCRIPTION_AUTHORITY: u8 = 0;
    pub const CREATE_RECURRING_DELEGATION: u8 = 2;
    pub const REVOKE_DELEGATION: u8 = 3;
    pub const TRANSFER_RECURRING: u8 = 5;
    pub const CLOSE_SUBSCRIPTION_AUTHORITY: u8 = 6;
    pub const REVOKE_SUBSCRIPTION_AUTHORITY: u8 = 14;
}

/// The program's refusals (`Custom(n)`): of a recurring pull, in the order it checks them,
/// then of a delegation's creation.
pub mod error {
    /// The SubscriptionAuthority is not open (closed, or not at its PDA).
    pub const INVALID_SUBSCRIPTION_AUTHORITY_PDA: u32 = 103;
    /// The delegator's token account is not its associated token account.
    pub const INVALID_ASSOCIATED_TOKEN_ACCOUNT: u32 = 108;
    /// `now > expiry_ts`.
    pub const DELEGATION_EXPIRED: u32 = 128;
    pub const INVALID_AMOUNT: u32 = 129;
    /// Another delegator or delegatee than the delegation's.
    pub const UNAUTHORIZED: u32 = 130;
    /// The SubscriptionAuthority was closed and initialized again in a later slot.
    pub const STALE_SUBSCRIPTION_AUTHORITY: u32 = 136;
    /// A delegation is already at the address (creating one).
    pub const DELEGATION_ALREADY_EXISTS: u32 = 135;
    /// A start more than two minutes in the past (creating one).
    pub const START_IN_PAST: u32 = 404;
    /// A start at or after the expiry (creating one).
    pub const START_AFTER_EXPIRY: u32 = 405;
    /// More than what is left of the period's amount.
    pub const AMOUNT_EXCEEDS_PERIOD_LIMIT: u32 = 400;
    /// Before the delegation's start.
    pub const DELEGATION_NOT_STARTED: u32 = 407;
}

/// Account discriminators (the first byte).
pub mod discriminator {
    pub const SUBSCRIPTION_AUTHORITY: u8 = 0;
    pub const RECURRING_DELEGATION: u8 = 3;
}

/// Where a `RecurringDelegation`'s fields lie (after the discriminator at 0, the layout
/// version at 1 and the PDA's bump at 2), and a `SubscriptionAuthority`'s.
pub mod at {
    pub const VERSION: usize = 1;
    pub const BUMP: usize = 2;
    pub const DELEGATOR: usize = 3;
    pub const DELEGATEE: usize = 35;
    pub const PAYER: usize = 67;
    pub const INIT_ID: usize = 99;
    pub const SUBSCRIPTION_AUTHORITY: usize = 107;
    pub const MINT: usize = 139;
    pub const PERIOD_START: usize = 171;
    pub const PERIOD_LENGTH: usize = 179;
    pub const EXPIRY: usize = 187;
    pub const AMOUNT_PER_PERIOD: usize = 195;
    pub const PULLED_IN_PERIOD: usize = 203;

    /// A `SubscriptionAuthority`'s.
    pub mod authority {
        pub const USER: usize = 1;
        pub const MINT: usize = 33;
        pub const PAYER: usize = 65;
        pub const BUMP: usize = 97;
        pub const INIT_ID: usize = 98;
    }
}

/// The layout version the program writes.
pub const LAYOUT_VERSION: u8 = 1;

/// The longest period a recurring delegation may have (365 days).
pub const MAX_PERIOD_SECS: u64 = 31_536_000;

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?))
}

fn i64_at(data: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?))
}

fn key_at(data: &[u8], at: usize) -> Option<Pubkey> {
    Some(Pubkey::new_from_array(
        data.get(at..at + 32)?.try_into().ok()?,
    ))
}

/// A `RecurringDelegation` (211 bytes): at 0 the discriminator, 1 version, 2 bump, then the
/// fields at the offsets below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecurringDelegation {
    pub delegator: Pubkey,
    pub delegatee: Pubkey,
    /// Who paid its rent (and gets it back when it is revoked).
    pub payer: Pubkey,
    /// The SubscriptionAuthority's `init_id` when the delegation was created.
    pub init_id: i64,
    pub subscription_authority: Pubkey,
    pub mint: Pubkey,
    pub current_period_start_ts: i64,
    pub period_length_s: u64,
    /// 0: never.
    pub expiry_ts: i64,
    pub amount_per_period: u64,
    pub amount_pulled_in_period: u64,
}

impl RecurringDelegation {
    pub const LEN: usize = 211;

    /// Reads a recurring delegation's data; `None` for anything else (the caller checks the
    /// owning program).
    pub fn read(data: &[u8]) -> Option<RecurringDelegation> {
        if data.len() != Self::LEN || data[0] != discriminator::RECURRING_DELEGATION {
            return None;
        }
        Some(RecurringDelegation {
            delegator: key_at(data, at::DELEGATOR)?,
            delegatee: key_at(data, at::DELEGATEE)?,
            payer: key_at(data, at::PAYER)?,
            init_id: i64_at(data, at::INIT_ID)?,
            subscription_authority: key_at(data, at::SUBSCRIPTION_AUTHORITY)?,
            mint: key_at(data, at::MINT)?,
            current_period_start_ts: i64_at(data, at::PERIOD_START)?,
            period_length_s: u64_at(data, at::PERIOD_LENGTH)?,
            expiry_ts: i64_at(data, at::EXPIRY)?,
            amount_per_period: u64_at(data, at::AMOUNT_PER_PERIOD)?,
            amount_pulled_in_period: u64_at(data, at::PULLED_IN_PERIOD)?,
        })
    }

    /// The period a pull at `now` counts in, as the program rolls it over: its start and what
    /// was pulled in it (nothing when a new period began since the last pull). With an
    /// expiry, the period never moves to a start at or after it: the last one before it is
    /// the last billed.
    pub fn period_at(&self, now: i64) -> (i64, u64) {
        let start = self.current_period_start_ts;
        let length = i64::try_from(self.period_length_s)
            .unwrap_or(i64::MAX)
            .max(1);
        let since = now.saturating_sub(start);
        if since < length {
            return (start, self.amount_pulled_in_period);
        }
        let moved = start.saturating_add(since / length * length);
        if self.expiry_ts == 0 || moved < self.expiry_ts {
            return (moved, 0);
        }
        let span = self.expiry_ts.saturating_sub(1).saturating_sub(start);
        let last = start.saturating_add(span / length * length);
        match last > start {
            true => (last, 0),
            false => (start, self.amount_pulled_in_period),
        }
    }

    /// What may still be pulled in the period `now` falls in.
    pub fn available_at(&self, now: i64) -> u64 {
        self.amount_per_period.saturating_sub(self.period_at(now).1)
    }
}

/// A `SubscriptionAuthority` (106 bytes): 0 discriminator, 1 user, 33 mint, 65 payer, 97
/// bump, 98 init_id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubscriptionAuthority {
    pub user: Pubkey,
    pub mint: Pubkey,
    pub payer: Pubkey,
    /// Its PDA's bump (it signs the transfers as the token account's delegate).
    pub bump: u8,
    /// The slot it was initialized in: delegations made under another `init_id` are stale.
    pub init_id: i64,
}

impl SubscriptionAuthority {
    pub const LEN: usize = 106;

    pub fn read(data: &[u8]) -> Option<SubscriptionAuthority> {
        if data.len() != Self::LEN || data[0] != discriminator::SUBSCRIPTION_AUTHORITY {
            return None;
        }
        Some(SubscriptionAuthority {
            user: key_at(data, at::authority::USER)?,
            mint: key_at(data, at::authority::MINT)?,
            payer: key_at(data, at::authority::PAYER)?,
            bump: *data.get(at::authority::BUMP)?,
            init_id: i64_at(data, at::authority::INIT_ID)?,
        })
    }
}

/// The terms of a recurring delegation, as `create_recurring_delegation` takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, AnchorSerialize, AnchorDeserialize)]
pub struct RecurringTerms {
    /// Tells apart the delegations between one delegator and one delegatee.
    pub nonce: u64,
    pub amount_per_period: u64,
    /// 1..=[`MAX_PERIOD_SECS`].
    pub period_length_s: u64,
    /// Unix seconds the first period starts; 0 = when the creation lands (then an expiry is
    /// needed).
    pub start_ts: i64,
    /// Unix seconds after which nothing can be pulled; 0 = never.
    pub expiry_ts: i64,
}

/// `create_recurring_delegation`'s data: the terms and the SubscriptionAuthority `init_id`
/// the delegator consents to.
pub fn create_recurring_delegation_data(terms: &RecurringTerms, init_id: i64) -> Vec<u8> {
    let mut data = Vec::with_capacity(49);
    data.push(tag::CREATE_RECURRING_DELEGATION);
    data.extend_from_slice(&terms.nonce.to_le_bytes());
    data.extend_from_slice(&terms.amount_per_period.to_le_bytes());
    data.extend_from_slice(&terms.period_length_s.to_le_bytes());
    data.extend_from_slice(&terms.start_ts.to_le_bytes());
    data.extend_from_slice(&terms.expiry_ts.to_le_bytes());
    data.extend_from_slice(&init_id.to_le_bytes());
    data
}

/// `transfer_recurring`'s data: the amount, the delegator and the mint.
pub fn transfer_recurring_data(amount: u64, delegator: &Pubkey, mint: &Pubkey) -> Vec<u8> {
    let mut data = Vec::with_capacity(73);
    data.push(tag::TRANSFER_RECURRING);
    data.extend_from_slice(&amount.to_le_bytes());
    data.extend_from_slice(delegator.as_ref());
    data.extend_from_slice(mint.as_ref());
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delegation(start: i64, length: u64, pulled: u64) -> RecurringDelegation {
        RecurringDelegation {
            delegator: Pubkey::new_unique(),
            delegatee: Pubkey::new_unique(),
            payer: Pubkey::new_unique(),
            init_id: 7,
            subscription_authority: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            current_period_start_ts: start,
            period_length_s: length,
            expiry_ts: 0,
            amount_per_period: 100,
            amount_pulled_in_period: pulled,
        }
    }

    #[test]
    fn a_delegation_is_read_at_the_programs_offsets() {
        let d = delegation(1_000, 86_400, 60);
        let mut data = vec![0u8; RecurringDelegation::LEN];
        data[0] = discriminator::RECURRING_DELEGATION;
        data[3..35].copy_from_slice(d.delegator.as_ref());
        data[35..67].copy_from_slice(d.delegatee.as_ref());
        data[67..99].copy_from_slice(d.payer.as_ref());
        data[99..107].copy_from_slice(&d.init_id.to_le_bytes());
        data[107..139].copy_from_slice(d.subscription_authority.as_ref());
        data[139..171].copy_from_slice(d.mint.as_ref());
        data[171..179].copy_from_slice(&d.current_period_start_ts.to_le_bytes());
        data[179..187].copy_from_slice(&d.period_length_s.to_le_bytes());
        data[187..195].copy_from_slice(&d.expiry_ts.to_le_bytes());
        data[195..203].copy_from_slice(&d.amount_per_period.to_le_bytes());
        data[203..211].copy_from_slice(&d.amount_pulled_in_period.to_le_bytes());
        assert_eq!(RecurringDelegation::read(&data), Some(d));
        // Another discriminator, another size.
        let mut other = data.clone();
        other[0] = 2;
        assert_eq!(RecurringDelegation::read(&other), None);
        assert_eq!(RecurringDelegation::read(&data[..210]), None);
    }

    #[test]
    fn the_period_rolls_over_as_the_program_rolls_it() {
        let d = delegation(1_000, 100, 60);
        assert_eq!(d.period_at(1_000), (1_000, 60));
        assert_eq!(d.period_at(1_099), (1_000, 60));
        assert_eq!(d.available_at(1_099), 40);
        assert_eq!(d.period_at(1_100), (1_100, 0));
        assert_eq!(d.period_at(1_350), (1_300, 0));
        assert_eq!(d.available_at(1_350), 100);
        // With an expiry at 1 250, the last period billed starts at 1 200.
        let capped = RecurringDelegation {
            expiry_ts: 1_250,
            ..d
        };
        assert_eq!(capped.period_at(1_300), (1_200, 0));
        let at_edge = RecurringDelegation {
            expiry_ts: 1_100,
            ..d
        };
        assert_eq!(at_edge.period_at(1_100), (1_000, 60));
        // The ends of i64 saturate rather than overflow.
        let far = RecurringDelegation {
            expiry_ts: i64::MIN,
            ..d
        };
        assert_eq!(far.period_at(1_100), (1_000, 60));
        assert_eq!(d.period_at(i64::MIN), (1_000, 60));
    }

    #[test]
    fn instruction_data_is_packed_little_endian() {
        let terms = RecurringTerms {
            nonce: 1,
            amount_per_period: 2,
            period_length_s: 3,
            start_ts: 4,
            expiry_ts: 5,
        };
        let data = create_recurring_delegation_data(&terms, -6);
        assert_eq!(data.len(), 49);
        assert_eq!(data[0], 2);
        assert_eq!(&data[41..49], &(-6i64).to_le_bytes());
        let (d, m) = (Pubkey::new_unique(), Pubkey::new_unique());
        let data = transfer_recurring_data(9, &d, &m);
        assert_eq!(data.len(), 73);
        assert_eq!((data[0], &data[1..9]), (5, &9u64.to_le_bytes()[..]));
        assert_eq!((&data[9..41], &data[41..73]), (d.as_ref(), m.as_ref()));
    }
}
