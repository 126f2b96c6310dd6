use super::fixed::{self, Fields};
use super::holdback::HoldbackSchedule;
use super::rules::PolicyRules;
use crate::engine::{
    self, ConfigError, GateMode, HoldbackRule, LimitCounters, LimitRules, LimitUpdate, PayeeDay,
    PayeeSlot as EnginePayeeSlot, PolicyConfig, SpendingCaps, SpendingCounters, TrustRequirement,
    UnratedTreatment, ValidationRule, VelocityRule, PAYEE_SLOTS,
};
use crate::errors::PolicyVaultError;
use anchor_lang::prelude::*;
use trust_gate_program_common::{keys, pda_account};

/// A spending policy's core rules as given to `init_policy` and stored, immutable, in the
/// PolicyAccount (the limits, [`PolicyRules`], are given beside them).
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
    /// The engine's view of these parameters, for a policy without a limits section (every
    /// limit off); fails on enum bytes out of range.
    pub fn to_config(&self) -> Result<PolicyConfig> {
        self.to_config_with(None)
    }

    /// The engine's view of these parameters with the policy's limit `rules`, if it has any.
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
            limits: match rules {
                Some(r) => r.to_extended()?,
                None => LimitRules::OFF,
            },
        })
    }

    /// Validates every field (with limit `rules`, theirs too); the error names the
    /// field.
    pub fn validate(&self, rules: Option<&PolicyRules>) -> Result<()> {
        let config = self.to_config_with(rules)?;
        engine::validate_policy(&config).map_err(config_error)?;
        if let Some(r) = rules {
            r.validate_list()?;
        }
        let needs_mint = engine::needs_mint(self.kinds) || config.limits.has_amount_caps();
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
        ConfigError::Holdback(e) => return super::holdback::holdback_error(e),
    };
    error!(code)
}

/// The layout version a policy is created with. A later version appends sections after
/// `payee_day` (a policy is immutable, so an account keeps the version it was created with);
/// a reader takes the sections a version lacks as absent.
pub const POLICY_VERSION: u8 = 1;

/// One spending policy of an agent: its rules, immutable, and the counters its payments
/// move. One layout for every policy: a fixed head, then the sections that only some
/// policies need, each an `Option` that costs one byte when absent (`limits` for the rules of
/// [`PolicyRules`], `payee_day` under a per-payee daily cap), so a policy pays rent only for
/// the rules it uses and a settlement reads only them.
///
/// Offsets ([`at`]): 8 asset, 40 policy_id (u32 LE), 44 params (kinds 44, gate_mode 45, mint
/// 46..78, per_tx 78, daily 86, weekly 94, window 102, max_in_window 110, decay 118, min tier
/// 120, max risk 121, min confidence 122, unrated 124, capability 125..157, attestors 157..221,
/// funding 221), 222 day_index, 230 day_spent, 238 week_index, 246 week_spent, 254
/// created_at, 262 retired_at, 270 bump, 271 vault_bump, 272 spender, 304 vault, 336
/// approval_threshold, 344 version, 345 the `limits` tag; with limits: 346 rules (mode 346,
/// payees 347..475, payee_list 475..507, not_before 507, not_after 515, monthly 523, lifetime
/// 531, payee_daily 539), 547 month_index, 555 month_spent, 563 lifetime_spent, 571 the
/// `payee_day` tag; with a per-payee cap: 572 the slots' day, 580..1220 the 16 slots (payee
/// 32, spent 8 each); then the `holdback` tag (347, 572 or 1 220, [`at::holdback_tag`]) and
/// with a schedule its 6 terms (share u16, hold u32) and arbiter, 68 bytes. Sizes
/// ([`PolicyAccount::space`]): 348, 573 or 1 221 bytes, 68 more with a holdback schedule.
#[account]
#[derive(InitSpace, Debug, PartialEq)]
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
    /// policy is vault-funded, found once at creation so that a release signs for the vault
    /// without searching for it; 0 otherwise.
    pub vault_bump: u8,
    /// A vault-funded policy's spender: the one key whose token account a settlement's
    /// release may credit, so the one key that can sign payments from the vault (the strict
    /// gate requires the release's account to belong to the transfer's signer). Named by the
    /// authority's threshold (`set_vault_spender`); the default key (none yet) releases
    /// nothing. Unused for a wallet-funded policy.
    pub spender: Pubkey,
    /// The agent's vault for `params.mint` when the policy is vault-funded, derived once at
    /// creation so that a settlement compares it rather than derives it (about 350 compute
    /// units); the default key otherwise.
    pub vault: Pubkey,
    /// A payment (or a gated channel's deposit) of more than this needs the authority's
    /// approval of its terms (`approve_payment`); 0 = none.
    pub approval_threshold: u64,
    /// [`POLICY_VERSION`] at creation: which sections after this one the account has.
    pub version: u8,
    /// The limits beyond the core rules (payee list, validity window, monthly, lifetime and
    /// per-payee caps) and their counters; absent when the policy sets none of them.
    pub limits: Option<PolicyLimits>,
    /// The per-payee daily cap's slots; present exactly when `limits` sets that cap. The
    /// program reads them in place ([`PolicyAccount::payee_day_in`]), never through
    /// [`PolicyAccount::from_data`], which leaves this `None`.
    pub payee_day: Option<PayeeDaySlots>,
    /// The holdback schedule, when the policy holds back a share of payments to payees of
    /// low reputation (docs/holdback.md). Read in place ([`PolicyAccount::holdback_in`]);
    /// [`PolicyAccount::from_data`] leaves this `None`.
    pub holdback: Option<HoldbackSchedule>,
}

/// A policy's limit rules and the month and lifetime counters they move.
#[derive(AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyLimits {
    pub rules: PolicyRules,
    /// Calendar months since 1970-01 (UTC) that `month_spent` counts.
    pub month_index: i64,
    pub month_spent: u64,
    /// Everything paid under the policy (saturating).
    pub lifetime_spent: u64,
}

impl PolicyLimits {
    pub fn counters(&self) -> LimitCounters {
        LimitCounters {
            month_index: self.month_index,
            month_spent: self.month_spent,
            lifetime_spent: self.lifetime_spent,
        }
    }
}

/// One payee's spending of the day under the per-payee daily cap (default payee = empty).
#[derive(
    AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub struct PayeeSlot {
    pub payee: Pubkey,
    pub spent: u64,
}

/// The payees one policy paid on one UTC day, under its per-payee daily cap.
#[derive(
    AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub struct PayeeDaySlots {
    /// The UTC day (days since the epoch) that `slots` count.
    pub day: i64,
    pub slots: [PayeeSlot; PAYEE_SLOTS],
}

impl PayeeDaySlots {
    /// The slots as the engine sees them.
    pub fn engine_slots(&self) -> [EnginePayeeSlot; PAYEE_SLOTS] {
        self.slots.map(|s| EnginePayeeSlot {
            payee: s.payee,
            spent: s.spent,
        })
    }
}

/// Where Borsh keeps a PolicyAccount's fields in its data (the layout above; unit tests hold
/// them to the serialization). The sections' fields sit at fixed offsets because a policy
/// with per-payee slots always has its limits before them.
pub mod at {
    use super::PAYEE_SLOTS as SLOTS;
    /// `params.funding`, read by the gate's channel open.
    pub const FUNDING: usize = 221;
    pub const DAY_INDEX: usize = 222;
    pub const DAY_SPENT: usize = 230;
    pub const WEEK_INDEX: usize = 238;
    pub const WEEK_SPENT: usize = 246;
    /// The two fields the authority's threshold may change after creation.
    pub const RETIRED_AT: usize = 262;
    pub const SPENDER: usize = 272;
    pub const VAULT: usize = 304;
    pub const APPROVAL_THRESHOLD: usize = 336;
    pub const VERSION: usize = 344;
    /// The `limits` option's tag; the head ends here.
    pub const LIMITS_TAG: usize = 345;
    pub const RULES: usize = 346;
    pub const MONTH_INDEX: usize = RULES + super::PolicyRules::LEN;
    pub const MONTH_SPENT: usize = MONTH_INDEX + 8;
    pub const LIFETIME_SPENT: usize = MONTH_SPENT + 8;
    /// The `payee_day` option's tag in a policy with limits.
    pub const PAYEE_TAG: usize = LIFETIME_SPENT + 8;
    pub const PAYEE_DAY: usize = PAYEE_TAG + 1;
    pub const PAYEE_SLOTS: usize = PAYEE_DAY + 8;
    pub const SLOT_LEN: usize = 40;
    pub const SLOTS_END: usize = PAYEE_SLOTS + SLOTS * SLOT_LEN;

    /// Where the `holdback` option's tag is in a policy's `data`: after the sections before
    /// it, which its tags say are there; `None` for data too short to say.
    pub fn holdback_tag(data: &[u8]) -> Option<usize> {
        Some(
            match (*data.get(LIMITS_TAG)?, *data.get(PAYEE_TAG).unwrap_or(&0)) {
                (0, _) => LIMITS_TAG + 2,
                (_, 0) => PAYEE_TAG + 1,
                _ => SLOTS_END,
            },
        )
    }
}

/// The fixed head's bytes after the discriminator: up to `version`.
const HEAD_LEN: usize = at::LIMITS_TAG - 8;

impl PolicyAccount {
    /// The account's size for a policy with these limit rules (`None`: no limits section)
    /// and, or not, a holdback schedule.
    pub fn space(rules: Option<&PolicyRules>, holdback: bool) -> usize {
        let limits = rules.map_or(0, |_| PolicyLimits::INIT_SPACE);
        let payee = match rules {
            Some(r) if r.payee_daily_cap != 0 => PayeeDaySlots::INIT_SPACE,
            _ => 0,
        };
        let schedule = if holdback {
            HoldbackSchedule::INIT_SPACE
        } else {
            0
        };
        at::LIMITS_TAG + 1 + limits + 1 + payee + 1 + schedule
    }

    /// The holdback schedule in a policy's `data` (an account [`PolicyAccount::read`]
    /// accepted), read in place; `None` for a policy without one.
    pub fn holdback_in(data: &[u8]) -> Option<HoldbackRule> {
        let tag = at::holdback_tag(data)?;
        if *data.get(tag)? != 1 {
            return None;
        }
        let f = &mut Fields::new(data.get(tag + 1..)?, HoldbackSchedule::INIT_SPACE)?;
        Some(HoldbackSchedule::read_from(f))
    }

    /// Whether this is `asset`'s policy `policy_id`. policy_vault creates a PolicyAccount
    /// only at the PDA of the asset and id it stores, so for an account it owns this is the
    /// seeds check, without deriving the address again (1 500 compute units).
    pub fn is_for(&self, asset: &Pubkey, policy_id: u32) -> bool {
        self.asset == *asset && self.policy_id == policy_id
    }

    pub fn is_retired(&self) -> bool {
        self.retired_at != 0
    }

    /// The limit rules, when the policy has any.
    pub fn rules(&self) -> Option<&PolicyRules> {
        self.limits.as_ref().map(|l| &l.rules)
    }

    /// The payee list account the policy names, if any.
    pub fn payee_list(&self) -> Option<Pubkey> {
        self.rules()
            .filter(|r| r.has_list_account())
            .map(|r| r.payee_list)
    }

    /// Whether a payment of `amount` under this policy needs an approval on chain.
    pub fn needs_approval(&self, amount: u64) -> bool {
        self.approval_threshold != 0 && amount > self.approval_threshold
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

    /// Stores an Allow's limit update (what [`PolicyAccount::write_limits`] does in place).
    pub fn store_limits(&mut self, u: &LimitUpdate) {
        if let Some(l) = &mut self.limits {
            l.month_index = u.counters.month_index;
            l.month_spent = u.counters.month_spent;
            l.lifetime_spent = u.counters.lifetime_spent;
        }
        if let (Some(w), Some(p)) = (&u.slot, &mut self.payee_day) {
            let mut slots = p.engine_slots();
            w.apply(&mut slots, &mut p.day);
            p.slots = slots.map(|s| PayeeSlot {
                payee: s.payee,
                spent: s.spent,
            });
        }
    }

    /// Reads a policy account as an Anchor `Account` would be read: owner, then
    /// discriminator (the same errors), then its fields, in place (see [`super::fixed`]).
    pub fn read(info: &AccountInfo) -> Result<Box<PolicyAccount>> {
        pda_account::check_owner(info, &crate::ID)?;
        Self::from_data(&info.try_borrow_data()?)
    }

    /// The head and the limits of the policy in `data` (an account `read` checked), read in
    /// place; the per-payee slots are left to [`PolicyAccount::payee_day_in`]. Boxed: moving
    /// the fields through the results that carry them cost more than the allocation.
    pub fn from_data(data: &[u8]) -> Result<Box<PolicyAccount>> {
        let bad = || error!(ErrorCode::AccountDidNotDeserialize);
        let fields = fixed::fields_of::<PolicyAccount>(data)?;
        let f = &mut Fields::new(fields, HEAD_LEN + 1).ok_or_else(bad)?;
        let mut policy = Box::new(PolicyAccount {
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
            vault: f.key(),
            approval_threshold: f.u64(),
            version: f.u8(),
            limits: None,
            payee_day: None,
            holdback: None,
        });
        if f.bool().ok_or_else(bad)? {
            let f =
                &mut Fields::new(&data[at::RULES..], PolicyLimits::INIT_SPACE).ok_or_else(bad)?;
            policy.limits = Some(PolicyLimits {
                rules: PolicyRules::read_from(f),
                month_index: f.i64(),
                month_spent: f.u64(),
                lifetime_spent: f.u64(),
            });
        }
        Ok(policy)
    }

    /// `params.funding` of a policy account's `data`; `None` when `data` is too short.
    pub fn funding_in(data: &[u8]) -> Option<u8> {
        data.get(at::FUNDING).copied()
    }

    /// What the slots in `data` say about `payee`, read in place: a settlement compares up
    /// to 16 keys rather than deserializing 640 bytes. Slots fill in order, so the scan stops
    /// at the payee's slot or the first empty one; a held payee's `free` is not needed and
    /// stays `None`. A policy without slots has neither.
    pub fn payee_day_in(data: &[u8], payee: &Pubkey) -> PayeeDay {
        let mut day = PayeeDay::default();
        let Some(slots) = data.get(at::PAYEE_SLOTS..at::SLOTS_END) else {
            return day;
        };
        day.day = i64_at(data, at::PAYEE_DAY);
        let payee = payee.as_array();
        for (i, slot) in slots.chunks_exact(at::SLOT_LEN).enumerate() {
            let (Some(key), Some(spent)) = (slot.first_chunk::<32>(), slot.last_chunk::<8>())
            else {
                break;
            };
            if keys::is_zero(key) {
                // Slots fill in order from the first (a new day empties them all and writes
                // the first), so the first empty one ends the day's payees.
                day.free = Some(i);
                break;
            }
            if keys::eq(key, payee) {
                day.held = Some((i, u64::from_le_bytes(*spent)));
                break;
            }
        }
        day
    }

    /// Writes the counters into a PolicyAccount's `data` in place, at the offsets above: a
    /// committing evaluation changes nothing else, and serializing the whole account again
    /// cost about 1 000 compute units. `data` is an account [`PolicyAccount::read`] accepted.
    pub fn write_counters(data: &mut [u8], c: &SpendingCounters) {
        put(data, at::DAY_INDEX, c.day_index.to_le_bytes());
        put(data, at::DAY_SPENT, c.day_spent.to_le_bytes());
        put(data, at::WEEK_INDEX, c.week_index.to_le_bytes());
        put(data, at::WEEK_SPENT, c.week_spent.to_le_bytes());
    }

    /// Writes an Allow's limit update into the `data` of a policy with limits, in place (see
    /// [`PolicyAccount::write_counters`]): the counters, and under a per-payee cap the one
    /// slot (all of them emptied first on a new day).
    pub fn write_limits(data: &mut [u8], u: &LimitUpdate) {
        let c = &u.counters;
        put(data, at::MONTH_INDEX, c.month_index.to_le_bytes());
        put(data, at::MONTH_SPENT, c.month_spent.to_le_bytes());
        put(data, at::LIFETIME_SPENT, c.lifetime_spent.to_le_bytes());
        let Some(w) = &u.slot else { return };
        if w.evict {
            data[at::PAYEE_SLOTS..at::SLOTS_END].fill(0);
        }
        put(data, at::PAYEE_DAY, w.day.to_le_bytes());
        let slot = at::PAYEE_SLOTS + w.index * at::SLOT_LEN;
        put(data, slot, w.payee.to_bytes());
        put(data, slot + 32, w.spent.to_le_bytes());
    }

    /// Writes `retired_at` in place.
    pub fn write_retired_at(data: &mut [u8], at: i64) {
        put(data, self::at::RETIRED_AT, at.to_le_bytes());
    }

    /// Writes `spender` in place.
    pub fn write_spender(data: &mut [u8], spender: &Pubkey) {
        put(data, at::SPENDER, spender.to_bytes());
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

fn i64_at(data: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(data[at..at + 8].try_into().unwrap_or_default())
}

/// Writes `bytes` at `at`; the account's length was checked when it was read.
pub(crate) fn put<const N: usize>(data: &mut [u8], at: usize, bytes: [u8; N]) {
    data[at..at + N].copy_from_slice(&bytes);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::SlotWrite;
    use crate::state::rules::INLINE_PAYEES;
    use anchor_lang::AccountSerialize;

    /// A policy with every field set; `limits` and `payee_day` as asked.
    pub(crate) fn account(limits: bool, payee_day: bool) -> PolicyAccount {
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
            vault: Pubkey::new_unique(),
            approval_threshold: 19,
            version: POLICY_VERSION,
            limits: limits.then(|| PolicyLimits {
                rules: PolicyRules {
                    payee_list_mode: 1,
                    payees: [Pubkey::new_unique(); INLINE_PAYEES],
                    payee_list: Pubkey::new_unique(),
                    not_before: 1,
                    not_after: 2,
                    monthly_cap: 3,
                    lifetime_cap: 4,
                    payee_daily_cap: u64::from(payee_day),
                },
                month_index: 6,
                month_spent: 7,
                lifetime_spent: 8,
            }),
            payee_day: payee_day.then(|| PayeeDaySlots {
                day: 9,
                slots: [PayeeSlot {
                    payee: Pubkey::new_unique(),
                    spent: 10,
                }; PAYEE_SLOTS],
            }),
            holdback: None,
        }
    }

    /// A schedule with every field set.
    pub(crate) fn schedule() -> HoldbackSchedule {
        HoldbackSchedule {
            terms: core::array::from_fn(|i| crate::state::HoldbackTerm {
                share_bps: 600 - 100 * i as u16,
                hold_secs: 6_000 - 1_000 * i as u32,
            }),
            arbiter: Pubkey::new_unique(),
        }
    }

    fn bytes(p: &PolicyAccount) -> Vec<u8> {
        let mut data = Vec::new();
        p.try_serialize(&mut data).unwrap();
        data
    }

    #[test]
    fn the_reader_reads_what_borsh_stores_at_the_documented_offsets() {
        let cases = [(false, false), (true, false), (true, true)];
        for ((limits, payee_day), holdback) in
            cases.into_iter().flat_map(|c| [(c, false), (c, true)])
        {
            let p = PolicyAccount {
                holdback: holdback.then(schedule),
                ..account(limits, payee_day)
            };
            let data = bytes(&p);
            assert_eq!(
                data.len(),
                PolicyAccount::space(p.rules(), holdback),
                "{limits} {payee_day} {holdback}"
            );
            let read = PolicyAccount::from_data(&data).unwrap();
            assert_eq!(
                *read,
                PolicyAccount {
                    payee_day: None,
                    holdback: None,
                    ..p.clone()
                }
            );
            assert_eq!(
                PolicyAccount::holdback_in(&data),
                p.holdback.map(|h| h.to_rule())
            );
            assert!(PolicyAccount::from_data(&data[..at::LIMITS_TAG]).is_err());
            assert_eq!(data[at::VERSION], POLICY_VERSION);
            assert_eq!(PolicyAccount::funding_in(&data), Some(p.params.funding));
            if limits {
                assert!(PolicyAccount::from_data(&data[..at::PAYEE_TAG - 1]).is_err());
                assert_eq!(data[at::PAYEE_TAG], u8::from(payee_day));
            }
        }
        assert_eq!(
            [false, true]
                .map(|l| PolicyAccount::space(l.then(PolicyRules::default).as_ref(), false)),
            [348, 573]
        );
        assert_eq!(8 + PolicyAccount::INIT_SPACE, 1221 + 68);
        assert_eq!(at::SLOTS_END, 1220);
        let mut bad_tag = bytes(&account(false, false));
        bad_tag[at::LIMITS_TAG] = 2;
        assert!(PolicyAccount::from_data(&bad_tag).is_err());
    }

    proptest::proptest! {
        /// Every byte string is a valid head (no field of it has invalid values), so the
        /// reader must give back what Borsh deserializes from any of them.
        #[test]
        fn the_reader_reads_any_head_as_borsh(head in proptest::collection::vec(proptest::prelude::any::<u8>(), HEAD_LEN)) {
            use anchor_lang::{AccountDeserialize, Discriminator};
            let mut data = PolicyAccount::DISCRIMINATOR.to_vec();
            data.extend_from_slice(&head);
            data.extend_from_slice(&[0, 0, 0]);
            let borsh = PolicyAccount::try_deserialize(&mut &data[..]).unwrap();
            proptest::prop_assert_eq!(*PolicyAccount::from_data(&data).unwrap(), borsh);
        }
    }

    #[test]
    fn updates_written_in_place_are_what_borsh_would_store() {
        let c = SpendingCounters {
            day_index: -3,
            day_spent: u64::MAX - 1,
            week_index: 1 << 40,
            week_spent: 99,
        };
        let counters = LimitCounters {
            month_index: -4,
            month_spent: u64::MAX,
            lifetime_spent: 1 << 50,
        };
        let payee = Pubkey::new_unique();
        let write = |day, index, evict| SlotWrite {
            day,
            index,
            payee,
            spent: 99,
            evict,
        };
        let updates = [None, Some(write(77, 15, false)), Some(write(78, 0, true))];
        for slot in updates {
            let u = LimitUpdate { counters, slot };
            let mut expected = account(true, true);
            let mut data = bytes(&expected);
            PolicyAccount::write_counters(&mut data, &c);
            PolicyAccount::write_limits(&mut data, &u);
            let spender = Pubkey::new_unique();
            PolicyAccount::write_retired_at(&mut data, 1_234);
            PolicyAccount::write_spender(&mut data, &spender);
            expected.store_counters(c);
            expected.store_limits(&u);
            expected.retired_at = 1_234;
            expected.spender = spender;
            assert_eq!(data, bytes(&expected), "{u:?}");
        }
        // Without limits: the head's fields, nothing after them.
        let mut expected = account(false, false);
        let mut data = bytes(&expected);
        PolicyAccount::write_counters(&mut data, &c);
        expected.store_counters(c);
        assert_eq!(data, bytes(&expected));
    }

    #[test]
    fn the_payee_view_read_in_place_is_the_engines() {
        let mut p = account(true, true);
        let day = p.payee_day.as_mut().unwrap();
        let payee = Pubkey::new_unique();
        day.slots[3] = PayeeSlot { payee, spent: 7 };
        // Slots fill in order: 0..9 hold payees of the day, 9.. are empty.
        for slot in &mut day.slots[9..] {
            *slot = PayeeSlot::default();
        }
        let day = *day;
        let data = bytes(&p);
        let other = Pubkey::new_unique();
        for key in [payee, other, day.slots[8].payee] {
            assert_eq!(
                PolicyAccount::payee_day_in(&data, &key),
                PayeeDay::of(&day.engine_slots(), day.day, &key)
            );
        }
        let at = |held, free| PayeeDay {
            day: day.day,
            held,
            free,
        };
        assert_eq!(
            PolicyAccount::payee_day_in(&data, &payee),
            at(Some((3, 7)), None)
        );
        assert_eq!(
            PolicyAccount::payee_day_in(&data, &other),
            at(None, Some(9))
        );
        // Every slot taken: neither held nor free (PayeeSlotsFull).
        let full = bytes(&account(true, true));
        assert_eq!(PolicyAccount::payee_day_in(&full, &other), at(None, None));
        // No slots: nothing.
        let none = bytes(&account(true, false));
        assert_eq!(
            PolicyAccount::payee_day_in(&none, &other),
            PayeeDay::default()
        );
    }
}
