use super::fixed::{Fields, FixedLayout};
use super::holdback::HoldbackAcceptance;
use super::policy::{attestor_list, config_error, gate_mode, unrated_treatment};
use crate::engine::{self, AcceptanceConfig, TrustRequirement, ValidationRule};
use anchor_lang::prelude::*;

/// The rules an agent applies to who may PAY it.
#[derive(AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Debug, PartialEq, Eq)]
pub struct AcceptanceParams {
    /// 0..=4.
    pub min_payer_tier: u8,
    /// Which payer tier is compared: 0 immediate, 1 confirmed.
    pub gate_mode: u8,
    /// 0..=255, 255 = off.
    pub max_payer_risk: u8,
    /// 0..=10000 bps, 0 = off.
    pub min_payer_confidence: u16,
    /// 0 Deny, 1 Allow, 2 RequireValidation.
    pub unrated_treatment: u8,
    /// sha256 of the capability namespace the payer must hold; zero = none.
    pub required_capability: [u8; 32],
    /// Up to two accepted attestors; default keys are empty slots; none = any attestor.
    pub accepted_attestors: [Pubkey; 2],
    /// The holdback this payee accepts from payers whose policy holds back a share (all
    /// zero: none; docs/holdback.md).
    pub holdback: HoldbackAcceptance,
}

impl AcceptanceParams {
    pub fn to_config(&self) -> Result<AcceptanceConfig> {
        Ok(AcceptanceConfig {
            payer: TrustRequirement {
                min_tier: self.min_payer_tier,
                gate_mode: gate_mode(self.gate_mode)?,
                max_risk: self.max_payer_risk,
                min_confidence: self.min_payer_confidence,
                unrated: unrated_treatment(self.unrated_treatment)?,
            },
            validation: ValidationRule {
                capability: self.required_capability,
                attestors: attestor_list(&self.accepted_attestors),
            },
            holdback: self.holdback.to_accepted(),
        })
    }

    pub fn validate(&self) -> Result<()> {
        engine::validate_acceptance(&self.to_config()?).map_err(config_error)
    }
}

/// The layout version `set_acceptance_policy` writes. A later version appends fields after
/// `version`; replacing the policy grows an account of an earlier one (its member paying the
/// rent), so the account at an agent's address always has one layout.
pub const ACCEPTANCE_VERSION: u8 = 1;

/// A payee's acceptance policy (one per agent, replaceable by the authority's threshold).
///
/// Offsets: 8 asset, 40 params (min tier 40, gate_mode 41, max risk 42, min confidence 43,
/// unrated 45, capability 46..78, attestors 78..142, holdback 142..212: max share 142, max
/// hold 144, arbiters 148..212), 212 updated_at, 220 bump, 221 version.
#[account]
#[derive(InitSpace, Debug)]
pub struct AcceptancePolicy {
    pub asset: Pubkey,
    pub params: AcceptanceParams,
    pub updated_at: i64,
    pub bump: u8,
    /// [`ACCEPTANCE_VERSION`] when last set.
    pub version: u8,
}

impl AcceptanceParams {
    /// The fields before `holdback`, read from `f` in Borsh's order; the holdback left at
    /// none.
    fn read_trust(f: &mut Fields) -> AcceptanceParams {
        AcceptanceParams {
            min_payer_tier: f.u8(),
            gate_mode: f.u8(),
            max_payer_risk: f.u8(),
            min_payer_confidence: f.u16(),
            unrated_treatment: f.u8(),
            required_capability: f.bytes(),
            accepted_attestors: [f.key(), f.key()],
            holdback: HoldbackAcceptance::default(),
        }
    }
}

impl AcceptancePolicy {
    /// The engine's view of the acceptance policy in `data` (an account of policy_vault),
    /// read in place; its accepted holdback only with `holdback` (what a payer policy with a
    /// holdback schedule needs), so that an evaluation without one reads 70 bytes less.
    pub fn config_in(data: &[u8], holdback: bool) -> Result<AcceptanceConfig> {
        let fields = super::fixed::fields_of::<AcceptancePolicy>(data)?;
        let f = &mut Fields::new(fields, Self::FIELDS_LEN)
            .ok_or_else(|| error!(ErrorCode::AccountDidNotDeserialize))?;
        f.key();
        let mut params = AcceptanceParams::read_trust(f);
        if holdback {
            params.holdback = HoldbackAcceptance::read_from(f);
        }
        params.to_config()
    }
}

impl FixedLayout for AcceptancePolicy {
    const FIELDS_LEN: usize = 214;

    fn read_fields(data: &[u8]) -> Option<AcceptancePolicy> {
        let f = &mut Fields::new(data, Self::FIELDS_LEN)?;
        let asset = f.key();
        let mut params = AcceptanceParams::read_trust(f);
        params.holdback = HoldbackAcceptance::read_from(f);
        Some(AcceptancePolicy {
            asset,
            params,
            updated_at: f.i64(),
            bump: f.u8(),
            version: f.u8(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::AccountSerialize;

    #[test]
    fn the_accepted_holdback_is_read_only_when_asked_for() {
        let holdback = HoldbackAcceptance {
            max_share_bps: 1_500,
            max_hold_secs: 86_400,
            arbiters: [Pubkey::new_unique(), Pubkey::default()],
        };
        let policy = AcceptancePolicy {
            asset: Pubkey::new_unique(),
            params: AcceptanceParams {
                min_payer_tier: 2,
                gate_mode: 1,
                max_payer_risk: 9,
                min_payer_confidence: 10,
                unrated_treatment: 0,
                required_capability: [3; 32],
                accepted_attestors: [Pubkey::new_unique(), Pubkey::default()],
                holdback,
            },
            updated_at: 7,
            bump: 8,
            version: ACCEPTANCE_VERSION,
        };
        let mut data = Vec::new();
        policy.try_serialize(&mut data).unwrap();
        assert_eq!(data.len(), 8 + AcceptancePolicy::INIT_SPACE);
        let with = AcceptancePolicy::config_in(&data, true).unwrap();
        assert_eq!(with, policy.params.to_config().unwrap());
        let without = AcceptancePolicy::config_in(&data, false).unwrap();
        assert_eq!(without.holdback, Default::default());
        assert_eq!(without.payer, with.payer);
        assert!(AcceptancePolicy::config_in(&data[..data.len() - 1], false).is_err());
    }
}
