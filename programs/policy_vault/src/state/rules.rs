//! A policy's limit rules (validity window, payee list, monthly, lifetime and per-payee
//! caps): their fields and the checks that need only them.

use super::fixed::Fields;
use crate::engine::{LimitRules, ListMode};
use crate::errors::PolicyVaultError;
use anchor_lang::prelude::*;
use trust_gate_program_common::keys;

/// Payees a policy can list inline, without a list account.
pub const INLINE_PAYEES: usize = 4;

/// The limits a policy may add to its [`super::PolicyParams`], as given to `init_policy` and
/// stored, immutable, in the [`super::PolicyAccount`]'s `limits` section (absent when all are
/// off). Zero turns a bound or a cap off.
#[derive(
    AnchorSerialize, AnchorDeserialize, InitSpace, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub struct PolicyRules {
    /// 0 no list, 1 allow list (only the listed payees), 2 deny list (all but them).
    pub payee_list_mode: u8,
    /// Payee agents (assets) listed inline; default keys are empty slots.
    pub payees: [Pubkey; INLINE_PAYEES],
    /// The policy's [`super::PayeeList`] account (`["payee_list", asset, policy_id]`), whose
    /// entries the authority's threshold may edit, listed together with `payees`; the
    /// default key = none (the list is `payees` alone, immutable).
    pub payee_list: Pubkey,
    /// Unix seconds: no payment before this second (0 = no bound).
    pub not_before: i64,
    /// Unix seconds: no payment after this second, itself included (0 = no bound).
    pub not_after: i64,
    /// Per calendar month (UTC), in the mint's smallest units (0 = off).
    pub monthly_cap: u64,
    /// Over the policy's whole life (0 = off).
    pub lifetime_cap: u64,
    /// To any one payee per UTC day (0 = off); counted in the policy's
    /// [`PAYEE_SLOTS`] slots: a further payee that day is denied `PayeeSlotsFull`.
    pub payee_daily_cap: u64,
}

impl PolicyRules {
    /// Bytes of the rules in an account.
    pub const LEN: usize = 201;

    /// The rules at `f` as Borsh would deserialize them (see [`super::fixed`]).
    pub(crate) fn read_from(f: &mut Fields) -> PolicyRules {
        PolicyRules {
            payee_list_mode: f.u8(),
            payees: [f.key(), f.key(), f.key(), f.key()],
            payee_list: f.key(),
            not_before: f.i64(),
            not_after: f.i64(),
            monthly_cap: f.u64(),
            lifetime_cap: f.u64(),
            payee_daily_cap: f.u64(),
        }
    }

    pub fn list_mode(&self) -> Result<ListMode> {
        ListMode::from_u8(self.payee_list_mode)
            .ok_or_else(|| error!(PolicyVaultError::InvalidListMode))
    }

    /// The engine's view (the list's membership is found by the caller).
    pub fn to_extended(&self) -> Result<LimitRules> {
        Ok(LimitRules {
            list_mode: self.list_mode()?,
            not_before: self.not_before,
            not_after: self.not_after,
            monthly_cap: self.monthly_cap,
            lifetime_cap: self.lifetime_cap,
            payee_daily_cap: self.payee_daily_cap,
        })
    }

    pub fn has_list_account(&self) -> bool {
        self.payee_list != Pubkey::default()
    }

    pub fn inline_payees(&self) -> impl Iterator<Item = &Pubkey> {
        self.payees.iter().filter(|k| !keys::is_zero(k.as_array()))
    }

    /// Whether `payee` is listed inline (the default key, an empty slot, never is).
    pub fn lists_inline(&self, payee: &Pubkey) -> bool {
        let payee = payee.as_array();
        !keys::is_zero(payee) && self.payees.iter().any(|k| keys::eq(k.as_array(), payee))
    }

    /// The list's fields (the window and caps are checked with the engine's validation):
    /// a list needs a mode and a mode needs a list; no payee twice.
    pub fn validate_list(&self) -> Result<()> {
        let mode = self.list_mode()?;
        let listed = self.inline_payees().count();
        let has_list = listed > 0 || self.has_list_account();
        require!(
            mode != ListMode::Off || !has_list,
            PolicyVaultError::PayeesWithoutListMode
        );
        require!(
            mode == ListMode::Off || has_list,
            PolicyVaultError::PayeeListEmpty
        );
        let inline: Vec<&Pubkey> = self.inline_payees().collect();
        for (i, k) in inline.iter().enumerate() {
            require!(!inline[..i].contains(k), PolicyVaultError::DuplicatePayee);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_fields() {
        let k = Pubkey::new_unique();
        let mut r = PolicyRules::default();
        assert!(r.validate_list().is_ok());
        r.payees[2] = k;
        assert!(r.validate_list().is_err(), "a list without a mode");
        r.payee_list_mode = 2;
        assert!(r.validate_list().is_ok());
        r.payees[3] = k;
        assert!(r.validate_list().is_err(), "twice");
        r.payees = [Pubkey::default(); INLINE_PAYEES];
        assert!(r.validate_list().is_err(), "a mode without a list");
        r.payee_list = k;
        assert!(r.validate_list().is_ok());
        r.payee_list_mode = 3;
        assert!(r.validate_list().is_err());
    }
}
