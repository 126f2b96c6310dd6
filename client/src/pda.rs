//! Derivers for every account of the three programs and of the external registry/engine.
//!
//! Seeds come from the programs' own `seeds` modules, so a seed change cannot leave the SDK
//! behind.

use crate::ids::ProgramIds;
use anchor_lang::prelude::Pubkey;
use gate::state::seeds as gate_seeds;
use policy_vault::state::seeds as pv_seeds;
use std::collections::HashMap;
use trust_gate_program_common::external::seeds as ext_seeds;
use validation_registry::state::seeds as vr_seeds;

/// PDAs under a given set of program ids.
#[derive(Clone, Copy, Debug)]
pub struct Pdas {
    pub ids: ProgramIds,
}

/// Derived addresses remembered: a derivation searches bumps (a SHA-256 and a curve check
/// each), and a facilitator derives the same few dozen addresses for every payment.
static DERIVED: std::sync::OnceLock<std::sync::RwLock<HashMap<Vec<u8>, Pubkey>>> =
    std::sync::OnceLock::new();
/// Past this many, the memory starts over (a pure function: nothing is lost but time).
const MAX_DERIVED: usize = 200_000;

fn find(seeds: &[&[u8]], program: &Pubkey) -> Pubkey {
    let mut key = Vec::with_capacity(32 + seeds.iter().map(|s| s.len() + 1).sum::<usize>());
    key.extend_from_slice(program.as_ref());
    for s in seeds {
        key.push(s.len() as u8);
        key.extend_from_slice(s);
    }
    let memory = DERIVED.get_or_init(Default::default);
    if let Some(k) = memory.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return *k;
    }
    let derived = Pubkey::find_program_address(seeds, program).0;
    let mut m = memory.write().unwrap_or_else(|e| e.into_inner());
    if m.len() >= MAX_DERIVED {
        m.clear();
    }
    m.insert(key, derived);
    derived
}

impl Pdas {
    pub fn new(ids: ProgramIds) -> Self {
        Pdas { ids }
    }

    // policy_vault

    /// `["policy_authority", asset]`
    pub fn policy_authority(&self, asset: &Pubkey) -> Pubkey {
        find(
            &[pv_seeds::POLICY_AUTHORITY, asset.as_ref()],
            &self.ids.policy_vault,
        )
    }
    /// `["policy", asset, policy_id LE]`
    pub fn policy(&self, asset: &Pubkey, policy_id: u32) -> Pubkey {
        find(
            &[pv_seeds::POLICY, asset.as_ref(), &policy_id.to_le_bytes()],
            &self.ids.policy_vault,
        )
    }
    /// `["velocity", asset, policy_id LE]`
    pub fn velocity(&self, asset: &Pubkey, policy_id: u32) -> Pubkey {
        find(
            &[pv_seeds::VELOCITY, asset.as_ref(), &policy_id.to_le_bytes()],
            &self.ids.policy_vault,
        )
    }
    /// `["payee_list", asset, policy_id u32 LE]`: a policy's editable payee list.
    pub fn payee_list(&self, asset: &Pubkey, policy_id: u32) -> Pubkey {
        find(
            &[
                pv_seeds::PAYEE_LIST,
                asset.as_ref(),
                &policy_id.to_le_bytes(),
            ],
            &self.ids.policy_vault,
        )
    }
    /// `["killswitch", asset]`
    pub fn killswitch(&self, asset: &Pubkey) -> Pubkey {
        find(
            &[pv_seeds::KILLSWITCH, asset.as_ref()],
            &self.ids.policy_vault,
        )
    }
    /// `["acceptance", asset]`
    pub fn acceptance(&self, asset: &Pubkey) -> Pubkey {
        find(
            &[pv_seeds::ACCEPTANCE, asset.as_ref()],
            &self.ids.policy_vault,
        )
    }

    /// `["vault", asset, mint]`: the agent's policy vault for `mint`, a token account whose
    /// authority is its own address.
    pub fn vault(&self, asset: &Pubkey, mint: &Pubkey) -> Pubkey {
        find(
            &[pv_seeds::VAULT, asset.as_ref(), mint.as_ref()],
            &self.ids.policy_vault,
        )
    }
    /// `["authority_guard", asset]`: the take-over delay and the recovery key.
    pub fn authority_guard(&self, asset: &Pubkey) -> Pubkey {
        find(
            &[pv_seeds::AUTHORITY_GUARD, asset.as_ref()],
            &self.ids.policy_vault,
        )
    }
    /// `["take_over", asset]`: a pending take-over request.
    pub fn take_over_request(&self, asset: &Pubkey) -> Pubkey {
        find(
            &[pv_seeds::TAKE_OVER, asset.as_ref()],
            &self.ids.policy_vault,
        )
    }
    /// `["approval", payer_asset, payee_asset, mint, amount u64 LE, policy_id u32 LE]`: the
    /// approval of one payment's terms (its address is also the pending approval's id).
    pub fn approval(&self, t: &policy_vault::state::ApprovalTerms) -> Pubkey {
        find(
            &[
                pv_seeds::APPROVAL,
                t.payer_asset.as_ref(),
                t.payee_asset.as_ref(),
                t.mint.as_ref(),
                &t.amount.to_le_bytes(),
                &t.policy_id.to_le_bytes(),
            ],
            &self.ids.policy_vault,
        )
    }

    // gate

    /// `["evaluate_signer"]`: the gate's CPI signer towards policy_vault.
    pub fn evaluate_signer(&self) -> Pubkey {
        find(&[gate_seeds::EVALUATE_SIGNER], &self.ids.gate)
    }
    /// `["gate_authority", facilitator]`
    pub fn gate_authority(&self, facilitator: &Pubkey) -> Pubkey {
        find(
            &[gate_seeds::GATE_AUTHORITY, facilitator.as_ref()],
            &self.ids.gate,
        )
    }
    /// `["gated_subscription", delegation]`: the gate's record of a subscription it pulls.
    pub fn gated_subscription(&self, delegation: &Pubkey) -> Pubkey {
        find(
            &[gate_seeds::GATED_SUBSCRIPTION, delegation.as_ref()],
            &self.ids.gate,
        )
    }
    /// `["pull_delegate", payer_asset, payee_asset, facilitator]`: the delegatee of the
    /// recurring delegations the gate pulls for these parties through this facilitator.
    pub fn pull_delegate(
        &self,
        payer_asset: &Pubkey,
        payee_asset: &Pubkey,
        facilitator: &Pubkey,
    ) -> Pubkey {
        find(
            &[
                gate_seeds::PULL_DELEGATE,
                payer_asset.as_ref(),
                payee_asset.as_ref(),
                facilitator.as_ref(),
            ],
            &self.ids.gate,
        )
    }
    /// `["channel_record", channel]`: the gate's record of a payment channel it let open.
    pub fn channel_record(&self, channel: &Pubkey) -> Pubkey {
        find(
            &[gate_seeds::CHANNEL_RECORD, channel.as_ref()],
            &self.ids.gate,
        )
    }
    /// The receipt of a gated channel's close: the feedback log of
    /// `gate::channel::payment_id_hash(channel)`.
    pub fn channel_receipt(&self, facilitator: &Pubkey, channel: &Pubkey) -> Pubkey {
        self.feedback_log(facilitator, &gate::channel::payment_id_hash(channel))
    }
    /// `["feedback_log", facilitator, payment_id_hash]`
    pub fn feedback_log(&self, facilitator: &Pubkey, payment_id_hash: &[u8; 32]) -> Pubkey {
        find(
            &[
                gate_seeds::FEEDBACK_LOG,
                facilitator.as_ref(),
                payment_id_hash,
            ],
            &self.ids.gate,
        )
    }
    /// `["dispute", facilitator, payment_id_hash]`
    pub fn dispute(&self, facilitator: &Pubkey, payment_id_hash: &[u8; 32]) -> Pubkey {
        find(
            &[gate_seeds::DISPUTE, facilitator.as_ref(), payment_id_hash],
            &self.ids.gate,
        )
    }

    /// `["holdback_escrow", payee_asset, mint]`: the escrow token account a held settlement
    /// to `payee_asset` in `mint` credits (`gate::open_holdback_escrow` opens it).
    pub fn holdback_escrow(&self, payee_asset: &Pubkey, mint: &Pubkey) -> Pubkey {
        find(
            &[
                gate_seeds::HOLDBACK_ESCROW,
                payee_asset.as_ref(),
                mint.as_ref(),
            ],
            &self.ids.gate,
        )
    }
    /// `["holdback_authority"]`: the authority of every escrow, which signs its payouts.
    pub fn holdback_authority(&self) -> Pubkey {
        find(&[gate::holdback::authority::SEED], &self.ids.gate)
    }
    /// `["arbiter_set", ArbiterSet::id(threshold, members)]`: the arbiter set of these
    /// members (ascending) and threshold.
    pub fn arbiter_set(&self, threshold: u8, members: &[Pubkey]) -> Pubkey {
        let id = gate::state::ArbiterSet::id(threshold, members);
        find(&[gate_seeds::ARBITER_SET, &id], &self.ids.gate)
    }

    // validation_registry

    /// `["capability", sha256(name)]`
    pub fn namespace(&self, capability_hash: &[u8; 32]) -> Pubkey {
        find(
            &[vr_seeds::CAPABILITY, capability_hash],
            &self.ids.validation_registry,
        )
    }
    /// `["attestor", attestor]`
    pub fn attestor_profile(&self, attestor: &Pubkey) -> Pubkey {
        find(
            &[vr_seeds::ATTESTOR, attestor.as_ref()],
            &self.ids.validation_registry,
        )
    }
    /// `["request", subject, capability_hash, requester]`
    pub fn validation_request(
        &self,
        subject: &Pubkey,
        capability_hash: &[u8; 32],
        requester: &Pubkey,
    ) -> Pubkey {
        find(
            &[
                vr_seeds::REQUEST,
                subject.as_ref(),
                capability_hash,
                requester.as_ref(),
            ],
            &self.ids.validation_registry,
        )
    }
    /// `["attestation", subject, capability_hash, attestor]`
    pub fn attestation(
        &self,
        subject: &Pubkey,
        capability_hash: &[u8; 32],
        attestor: &Pubkey,
    ) -> Pubkey {
        find(
            &[
                vr_seeds::ATTESTATION,
                subject.as_ref(),
                capability_hash,
                attestor.as_ref(),
            ],
            &self.ids.validation_registry,
        )
    }

    // external registry and engine

    /// Registry `["root_config"]` (its data holds the base collection at 8..40).
    pub fn root_config(&self) -> Pubkey {
        find(&[ext_seeds::ROOT_CONFIG], &self.ids.agent_registry)
    }
    /// Registry `["registry_config", collection]`
    pub fn registry_config(&self, collection: &Pubkey) -> Pubkey {
        find(
            &[ext_seeds::REGISTRY_CONFIG, collection.as_ref()],
            &self.ids.agent_registry,
        )
    }
    /// Registry `["agent", asset]`
    pub fn agent_account(&self, asset: &Pubkey) -> Pubkey {
        find(
            &[ext_seeds::AGENT, asset.as_ref()],
            &self.ids.agent_registry,
        )
    }
    /// Registry `["atom_cpi_authority"]`
    pub fn registry_cpi_authority(&self) -> Pubkey {
        find(&[ext_seeds::ATOM_CPI_AUTHORITY], &self.ids.agent_registry)
    }
    /// Engine `["atom_config"]`
    pub fn atom_config(&self) -> Pubkey {
        find(&[ext_seeds::ATOM_CONFIG], &self.ids.reputation_engine)
    }
    /// Engine `["atom_stats", asset]`
    pub fn atom_stats(&self, asset: &Pubkey) -> Pubkey {
        find(
            &[ext_seeds::ATOM_STATS, asset.as_ref()],
            &self.ids.reputation_engine,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::Network;
    use trust_gate_program_common::external as ext;

    #[test]
    fn external_pdas_agree_with_the_programs() {
        let p = Pdas::new(ProgramIds::for_network(Network::Devnet));
        let asset = Pubkey::new_unique();
        assert_eq!(p.atom_stats(&asset), ext::atom_stats_pda(&asset).0);
        assert_eq!(p.agent_account(&asset), ext::agent_account_pda(&asset).0);
        assert_eq!(p.root_config(), ext::root_config_pda().0);
        assert_eq!(p.atom_config(), ext::atom_config_pda().0);
        assert_eq!(
            p.registry_cpi_authority(),
            ext::registry_cpi_authority_pda().0
        );
    }

    #[test]
    fn overridden_ids_move_the_pdas() {
        let ids = ProgramIds::for_network(Network::Devnet);
        let mut other = ids;
        other.policy_vault = Pubkey::new_unique();
        let asset = Pubkey::new_unique();
        assert_ne!(
            Pdas::new(ids).policy(&asset, 1),
            Pdas::new(other).policy(&asset, 1)
        );
    }
}
