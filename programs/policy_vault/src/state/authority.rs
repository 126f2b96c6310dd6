use anchor_lang::prelude::*;
use trust_gate_program_common::external::core_asset;

pub const MAX_MEMBERS: usize = 7;

/// Who may configure an agent's policies: `threshold` of `members` must sign every change
/// (rotation, kill switch, policy creation and retirement, acceptance policy, vault opening,
/// withdrawal, spender, the take-over guard); any one member may create the kill switch,
/// which starts unpaused.
///
/// It is the authority of the asset's owner who created it (or took it over). Once the asset
/// belongs to someone else (a sale on MPL Core) or was burned, its members keep only what
/// protects the agent until a take-over takes effect (see [`crate::state::take_over`]): the
/// kill switch, cancelling or accepting the request, a withdrawal to the recovery key, the
/// approval of a payment. Everything else fails with `AuthorityStale`.
///
/// Offsets: 8 asset, 40 threshold, 41 bump, 42 owner, 74 members (Borsh Vec, at most 7; the
/// account is allocated for 7 so rotation never reallocates).
#[account]
#[derive(InitSpace, Debug)]
pub struct PolicyAuthority {
    /// The agent asset this authority governs.
    pub asset: Pubkey,
    pub threshold: u8,
    pub bump: u8,
    /// The asset's owner when the authority was created or taken over: the authority acts
    /// only while the asset's live owner is still this key.
    pub owner: Pubkey,
    #[max_len(MAX_MEMBERS)]
    pub members: Vec<Pubkey>,
}

impl PolicyAuthority {
    pub fn is_member(&self, key: &Pubkey) -> bool {
        self.members.contains(key)
    }

    /// Requires the authority to be current (`agent_asset` is the agent's MPL Core asset and
    /// its live owner is still [`Self::owner`]), `lead` to be a member and `threshold`
    /// distinct members among the signers `lead` and `others`; returns how many signed.
    pub fn require_threshold(
        &self,
        agent_asset: &AccountInfo,
        lead: &Pubkey,
        others: &[AccountInfo],
    ) -> Result<u8> {
        require!(
            self.is_current(agent_asset)?,
            crate::errors::PolicyVaultError::AuthorityStale
        );
        self.require_signers(lead, others)
    }

    /// The threshold of the members in force: the authority's own until a take-over takes
    /// effect, whoever owns the asset now. Returns how many signed and whether the authority
    /// is current; the caller allows a stale authority only what protects the agent.
    pub fn require_threshold_in_force(
        &self,
        agent_asset: &AccountInfo,
        lead: &Pubkey,
        others: &[AccountInfo],
    ) -> Result<(u8, bool)> {
        let current = self.is_current(agent_asset)?;
        Ok((self.require_signers(lead, others)?, current))
    }

    /// Whether the live owner of `agent_asset` (which must be the agent's MPL Core asset) is
    /// still [`Self::owner`]. A burned asset has no owner: the authority is then not current,
    /// and its members keep what protects the agent.
    pub fn is_current(&self, agent_asset: &AccountInfo) -> Result<bool> {
        Ok(live_owner_unless_burned(agent_asset, &self.asset)? == Some(self.owner))
    }

    /// `lead` a member and `threshold` distinct members among the signers `lead` and
    /// `others`; returns how many signed.
    fn require_signers(&self, lead: &Pubkey, others: &[AccountInfo]) -> Result<u8> {
        use crate::errors::PolicyVaultError as E;
        require!(self.is_member(lead), E::NotAuthorityMember);
        let signers = self.count_member_signers(lead, others);
        require!(
            signers >= usize::from(self.threshold),
            E::InsufficientSigners
        );
        // At most MAX_MEMBERS distinct members can count.
        Ok(signers as u8)
    }

    /// Counts distinct members among the signers `lead` and `others` (non-signers and
    /// non-members are ignored, duplicates count once).
    pub fn count_member_signers(&self, lead: &Pubkey, others: &[AccountInfo]) -> usize {
        let mut seen: Vec<Pubkey> = Vec::with_capacity(MAX_MEMBERS);
        let candidates =
            std::iter::once(*lead).chain(others.iter().filter(|a| a.is_signer).map(|a| *a.key));
        for key in candidates {
            if self.is_member(&key) && !seen.contains(&key) {
                seen.push(key);
            }
        }
        seen.len()
    }
}

/// The live owner of `asset` from its MPL Core account `info` (the registry's AgentAccount
/// only caches it).
pub fn live_owner(info: &AccountInfo, asset: &Pubkey) -> Result<Pubkey> {
    live_owner_unless_burned(info, asset)?
        .ok_or_else(|| error!(crate::errors::PolicyVaultError::AgentAssetInvalid))
}

/// As [`live_owner`], `None` when the asset was burned (see `core_asset::is_burned`): an
/// owner burning the asset must not leave the members in force unable to protect the agent.
pub fn live_owner_unless_burned(info: &AccountInfo, asset: &Pubkey) -> Result<Option<Pubkey>> {
    use crate::errors::PolicyVaultError as E;
    require_keys_eq!(*info.key, *asset, E::AgentAssetInvalid);
    let data = info.try_borrow_data()?;
    match core_asset::owner(info.owner, &data) {
        Some(owner) => Ok(Some(owner)),
        None if core_asset::is_burned(info.owner, &data) => Ok(None),
        None => err!(E::AgentAssetInvalid),
    }
}

/// Validates a member list and threshold (used by init and rotation).
pub fn validate_members(members: &[Pubkey], threshold: u8) -> Result<()> {
    use crate::errors::PolicyVaultError as E;
    require!(!members.is_empty(), E::NoMembers);
    require!(members.len() <= MAX_MEMBERS, E::TooManyMembers);
    for (i, m) in members.iter().enumerate() {
        require!(!members[..i].contains(m), E::DuplicateMember);
    }
    require!(
        threshold >= 1 && usize::from(threshold) <= members.len(),
        E::ThresholdOutOfRange
    );
    Ok(())
}
