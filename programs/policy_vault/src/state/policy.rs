use super::fixed::{Fields, FixedLayout};
use super::rules::PolicyRules;
use crate::engine::{
    self, ConfigError, ExtendedRules, GateMode, PolicyConfig, SpendingCaps, SpendingCounters,
    TrustRequirement, UnratedTreatment, ValidationRule, VelocityRule,
};
use crate::errors::PolicyVaultError;
use anchor_lang::prelude::*;

/// A spending policy as given to `init_policy` and stored, immutable, in the PolicyAccount.
/// All amounts are in the smallest units of `mint`.
#[derive(AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Debug, PartialEq, Eq)]
pub struct PolicyParams {
    /// Enabled rule kinds: 0x01 KillSwitch, 0x02 Spending, 0x04 Velocity,
    /// 0x08 CounterpartyTier, 0x10 RequireValidation.
    pub kinds: u8,
    /// Which tier CounterpartyTier compares: 0 immediate, 1 confirmed.
    pub gate_mode: u8,
    /// The policy's token; the default key (all zero) accepts any mint, which only a policy
    /// without Spending and Velocity may do.
    pub mint: Pubkey,
    pub per_tx_cap: u64,
    /// Per UTC day.
    pub daily_cap: u64,
    /// Per week starting Monday 00:00 UTC.
    pub weekly_cap: u64,
    pub velocity_window_secs: u64,
    pub velocity_max_in_window: u64,
    /// Share of the velocity cap for a payer of immediate tier 0 or unrated, 0..=10000 bps.
    pub tier0_decay_bps: u16,
    /// 0..=4.
    pub min_counterparty_tier: u8,
    /// 0..=255, 255 = off.
    pub max_counterparty_risk: u8,
    /// 0..=10000 bps, 0 = off.
    pub min_counterparty_confidence: u16,
    /// 0 Deny, 1 Allow, 2 RequireValidation.
    pub unrated_treatment: u8,
    /// sha256 of the capability namespace the payee must hold; zero = none.
    pub required_capability: [u8; 32],
    /// Up to two accepted attestors; default keys are empty slots; none = any attestor.
    pub accepted_attestors: [Pubkey; 2],
    /// Where the payments come from ([`funding`]): 0 the payer's wallet, 1 the agent's
    /// policy vault for `mint`, which only a settlement under this policy (or the
    /// authority's threshold) can empty.
    pub funding: u8,
}

/// The values of [`PolicyParams::funding`].
pub mod funding {
    /// The payer signer's own token account pays; the policy binds only payments that go
    /// through the gate.
    pub const WALLET: u8 = 0;
    /// The agent's vault pays: the strict gate releases exactly the amount on Allow.
    pub const VAULT: u8 = 1;
}

pub(crate) fn attestor_list(slots: &[Pubkey; 2]) -> Vec<Pubkey> {
    slots
        .iter()
        .copied()
        .filter(|k| *k != Pubkey::default())
        .collect()
}

pub(crate) fn gate_mode(v: u8) -> Result<GateMode> {
    GateMode::from_u8(v).ok_or_else(|| error!(PolicyVaultError::InvalidGateMode))
}

pub(crate) fn unrated_treatment(v: u8) -> Result<UnratedTreatment> {
    UnratedTreatment::from_u8(v).ok_or_else(|| error!(PolicyVaultError::InvalidUnratedTreatment))
}

impl PolicyParams {
    /// The engine's view of these parameters (a v1 policy: the v2 rules off); fails on enum
    /// bytes out of range.
    pub fn to_config(&self) -> Result<PolicyConfig> {
        self.to_config_with(None)
    }

    /// The engine's view of these parameters with a v2 policy's `rules`.
    pub fn to_config_with(&self, rules: Option<&PolicyRules>) -> Result<PolicyConfig> {
        Ok(PolicyConfig {
            kinds: self.kinds,
            spending: SpendingCaps {
                per_tx: self.per_tx_cap,
                daily: self.daily_cap,
                weekly: self.weekly_cap,
            },
            velocity: VelocityRule {
                window_secs: self.velocity_window_secs,
                max_in_window: self.velocity_max_in_window,
                tier0_decay_bps: self.tier0_decay_bps,
            },
            counterparty: TrustRequirement {
                min_tier: self.min_counterparty_tier,
                gate_mode: gate_mode(self.gate_mode)?,
                max_risk: self.max_counterparty_risk,
                min_confidence: self.min_counterparty_confidence,
                unrated: unrated_treatment(self.unrated_treatment)?,
            },
            validation: ValidationRule {
                capability: self.required_capability,
                attestors: attestor_list(&self.accepted_attestors),
            },
            extended: match rules {
                Some(r) => r.to_extended()?,
                None => ExtendedRules::OFF,
            },
        })
    }

    /// Validates every field (with a v2 policy's `rules`, theirs too); the error names the
    /// field.
    pub fn validate(&self, rules: Option<&PolicyRules>) -> Result<()> {
        let config = self.to_config_with(rules)?;
        engine::validate_policy(&config).map_err(config_error)?;
        if let Some(r) = rules {
            r.validate_list()?;
        }
        let needs_mint = engine::needs_mint(self.kinds) || config.extended.has_amount_caps();
        require!(
            !needs_mint || self.mint != Pubkey::default(),
            PolicyVaultError::MintRequired
        );
        require!(
            self.funding == funding::WALLET || self.funding == funding::VAULT,
            PolicyVaultError::InvalidFunding
        );
        // A vault holds one mint.
        require!(
            !self.is_vault_funded() || self.mint != Pubkey::default(),
            PolicyVaultError::VaultFundingNeedsMint
        );
        Ok(())
    }

    pub fn is_vault_funded(&self) -> bool {
        self.funding == funding::VAULT
    }
}

/// Maps the engine's configuration errors 1:1 to program errors.
pub(crate) fn config_error(e: ConfigError) -> Error {
    let code = match e {
        ConfigError::UnknownKindBits => PolicyVaultError::UnknownKindBits,
        ConfigError::SpendingCapZero => PolicyVaultError::SpendingCapZero,
        ConfigError::VelocityWindowZero => PolicyVaultError::VelocityWindowZero,
        ConfigError::VelocityMaxZero => PolicyVaultError::VelocityMaxZero,
        ConfigError::DecayOutOfRange => PolicyVaultError::DecayOutOfRange,
        ConfigError::MinTierOutOfRange => PolicyVaultError::MinTierOutOfRange,
        ConfigError::MinConfidenceOutOfRange => PolicyVaultError::MinConfidenceOutOfRange,
        ConfigError::RequiredCapabilityMissing => PolicyVaultError::RequiredCapabilityMissing,
        ConfigError::UnratedValidationWithoutCapability => {
            PolicyVaultError::UnratedValidationWithoutCapability
        }
        ConfigError::TooManyAttestors => PolicyVaultError::TooManyAttestors,
        ConfigError::DuplicateAttestor => PolicyVaultError::DuplicateAttestor,
        ConfigError::ValidityNegative => PolicyVaultError::ValidityNegative,
        ConfigError::ValidityInverted => PolicyVaultError::ValidityInverted,
    };
    error!(code)
}

/// One spending policy of an agent: immutable configuration plus the spending counters.
///
/// Offsets: 8 asset, 40 policy_id (u32 LE), 44 params (kinds 44, gate_mode 45, mint 46..78,
/// per_tx 78, daily 86, weekly 94, window 102, max_in_window 110, decay 118, min tier 120,
/// max risk 121, min confidence 122, unrated 124, capability 125..157, attestors 157..221,
/// funding 221), 222 day_index, 230 day_spent, 238 week_index, 246 week_spent,
/// 254 created_at, 262 retired_at, 270 bump, 271 vault_bump.
#[account]
#[derive(InitSpace, Debug)]
pub struct PolicyAccount {
    /// The paying agent's asset.
    pub asset: Pubkey,
    pub policy_id: u32,
    pub params: PolicyParams,
    /// Days since the epoch (UTC) that `day_spent` counts.
    pub day_index: i64,
    pub day_spent: u64,
    /// Monday-based week index that `week_spent` counts.
    pub week_index: i64,
    pub week_spent: u64,
    pub created_at: i64,
    /// Unix time the authority's threshold retired the policy; 0 = in force. A retired
    /// policy is a hard error (`PolicyRetired`) for both gates.
    pub retired_at: i64,
    pub bump: u8,
    /// The bump of the agent's vault for `params.mint` (`["vault", asset, mint]`) when the
    /// policy is vault-funded, found once at creation so that a settlement does not search
    /// for it; 0 otherwise.
    pub vault_bump: u8,
    /// A vault-funded policy's spender: the one key whose token account a settlement's
    /// release may credit, so the one key that can sign payments from the vault (the strict
    /// gate requires the release's account to belong to the transfer's signer). Named by the
    /// authority's threshold (`set_vault_spender`); the default key (none yet) releases
    /// nothing. Unused for a wallet-funded policy.
    pub spender: Pubkey,
}

impl PolicyAccount {
    /// Whether this is `asset`'s policy `policy_id`. policy_vault creates a PolicyAccount
    /// only at the PDA of the asset and id it stores, so for an account it owns this is the
    /// seeds check, without deriving the address again (1 500 compute units).
    pub fn is_for(&self, asset: &Pubkey, policy_id: u32) -> bool {
        self.asset == *asset && self.policy_id == policy_id
    }

    pub fn is_retired(&self) -> bool {
        self.retired_at != 0
    }

    pub fn counters(&self) -> SpendingCounters {
        SpendingCounters {
            day_index: self.day_index,
            day_spent: self.day_spent,
            week_index: self.week_index,
            week_spent: self.week_spent,
        }
    }

    pub fn store_counters(&mut self, c: SpendingCounters) {
        self.day_index = c.day_index;
        self.day_spent = c.day_spent;
        self.week_index = c.week_index;
        self.week_spent = c.week_spent;
    }

    /// Writes the counters into a PolicyAccount's `data` in place, at the offsets above: a
    /// committing evaluation changes nothing else, and serializing the whole account again
    /// cost about 1 000 compute units. `data` is an account `Account::try_from` accepted.
    pub fn write_counters(data: &mut [u8], c: &SpendingCounters) {
        put(data, counters_at::DAY_INDEX, c.day_index.to_le_bytes());
        put(data, counters_at::DAY_SPENT, c.day_spent.to_le_bytes());
        put(data, counters_at::WEEK_INDEX, c.week_index.to_le_bytes());
        put(data, counters_at::WEEK_SPENT, c.week_spent.to_le_bytes());
    }
}

impl PolicyParams {
    fn read_from(f: &mut Fields) -> Self {
        PolicyParams {
            kinds: f.u8(),
            gate_mode: f.u8(),
            mint: f.key(),
            per_tx_cap: f.u64(),
            daily_cap: f.u64(),
            weekly_cap: f.u64(),
            velocity_window_secs: f.u64(),
            velocity_max_in_window: f.u64(),
            tier0_decay_bps: f.u16(),
            min_counterparty_tier: f.u8(),
            max_counterparty_risk: f.u8(),
            min_counterparty_confidence: f.u16(),
            unrated_treatment: f.u8(),
            required_capability: f.bytes(),
            accepted_attestors: [f.key(), f.key()],
            funding: f.u8(),
        }
    }
}

impl FixedLayout for PolicyAccount {
    const FIELDS_LEN: usize = 296;

    fn read_fields(data: &[u8]) -> Option<PolicyAccount> {
        let f = &mut Fields::new(data, Self::FIELDS_LEN)?;
        Some(PolicyAccount {
            asset: f.key(),
            policy_id: f.u32(),
            params: PolicyParams::read_from(f),
            day_index: f.i64(),
            day_spent: f.u64(),
            week_index: f.i64(),
            week_spent: f.u64(),
            created_at: f.i64(),
            retired_at: f.i64(),
            bump: f.u8(),
            vault_bump: f.u8(),
            spender: f.key(),
        })
    }
}

/// Where Borsh keeps a PolicyAccount's spending counters in its data (the layout above; a
/// unit test holds them to the serialization).
pub mod counters_at {
    /// `params.funding`, read by the gate's channel open.
    pub const FUNDING: usize = 221;
    pub const DAY_INDEX: usize = 222;
    pub const DAY_SPENT: usize = 230;
    pub const WEEK_INDEX: usize = 238;
    pub const WEEK_SPENT: usize = 246;
    /// The two fields the authority's threshold may change after creation.
    pub const RETIRED_AT: usize = 262;
    pub const SPENDER: usize = 272;
}

impl PolicyAccount {
    /// `params.funding` of a policy account's `data`, either version (the same offset);
    /// `None` when `data` is too short.
    pub fn funding_in(data: &[u8]) -> Option<u8> {
        data.get(counters_at::FUNDING).copied()
    }

    /// Writes `retired_at` in place: the same offset in a v1 and a v2 account.
    pub fn write_retired_at(data: &mut [u8], at: i64) {
        put(data, counters_at::RETIRED_AT, at.to_le_bytes());
    }

    /// Writes `spender` in place: the same offset in a v1 and a v2 account.
    pub fn write_spender(data: &mut [u8], spender: &Pubkey) {
        put(data, counters_at::SPENDER, spender.to_bytes());
    }
}

/// Writes `bytes` at `at`; the account's length was checked when it was deserialized.
pub(crate) fn put<const N: usize>(data: &mut [u8], at: usize, bytes: [u8; N]) {
    data[at..at + N].copy_from_slice(&bytes);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use anchor_lang::{AccountDeserialize, AccountSerialize};

    /// A v1 policy with every field set (a v2 policy's tests reuse it as its `base`).
    pub(crate) fn account() -> PolicyAccount {
        PolicyAccount {
            asset: Pubkey::new_unique(),
            policy_id: 7,
            params: PolicyParams {
                kinds: 1,
                gate_mode: 0,
                mint: Pubkey::new_unique(),
                per_tx_cap: 1,
                daily_cap: 2,
                weekly_cap: 3,
                velocity_window_secs: 4,
                velocity_max_in_window: 5,
                tier0_decay_bps: 6,
                min_counterparty_tier: 1,
                max_counterparty_risk: 9,
                min_counterparty_confidence: 10,
                unrated_treatment: 0,
                required_capability: [3; 32],
                accepted_attestors: [Pubkey::new_unique(), Pubkey::new_unique()],
                funding: 1,
            },
            day_index: 11,
            day_spent: 12,
            week_index: 13,
            week_spent: 14,
            created_at: 15,
            retired_at: 16,
            bump: 17,
            vault_bump: 18,
            spender: Pubkey::new_unique(),
        }
    }

    #[test]
    fn counters_written_in_place_are_what_borsh_would_store() {
        let mut expected = account();
        let mut data = Vec::new();
        expected.try_serialize(&mut data).unwrap();
        let c = SpendingCounters {
            day_index: -3,
            day_spent: u64::MAX - 1,
            week_index: 1 << 40,
            week_spent: 99,
        };
        PolicyAccount::write_counters(&mut data, &c);
        expected.store_counters(c);
        let mut again = Vec::new();
        expected.try_serialize(&mut again).unwrap();
        assert_eq!(data, again);
        let read = PolicyAccount::try_deserialize(&mut &data[..]).unwrap();
        assert_eq!(read.counters(), c);
        let spender = Pubkey::new_unique();
        PolicyAccount::write_retired_at(&mut data, 1_234);
        PolicyAccount::write_spender(&mut data, &spender);
        let read = PolicyAccount::try_deserialize(&mut &data[..]).unwrap();
        assert_eq!((read.retired_at, read.spender), (1_234, spender));
        assert_eq!(PolicyAccount::funding_in(&data), Some(read.params.funding));
        assert_eq!(read.counters(), c);
    }
}
