//! Who may sign a settlement for a payer agent, known before the payer's lock is taken.
//!
//! The strict gate lets a payer agent's live owner (the MPL Core asset's `BaseAssetV1.owner`)
//! or the agent wallet that owner set (the registry's AgentAccount caches the owner; the
//! wallet counts only while that cached owner is the live one) sign its settlements. Checking
//! that only on chain let anyone who signed *something* hold a victim payer's lock for a
//! preflight, delaying the victim's own settlements; so /settle judges the signer first, from
//! the same two accounts.
//!
//! The judgement is cached per payer agent, because the owner rarely changes: a cached
//! agent that accepts the signer is used as is; one that refuses it is read again (the
//! signer may be a new owner). A stale positive (the agent was sold on MPL Core directly)
//! can only let the former owner's settlement take the payer's turn once: the chain refuses
//! it (`PayerSignerMismatch`, found by the send's preflight, so no fee), and that refusal
//! evicts the entry. /verify reads both accounts in its decision's simulation and refreshes
//! the entry at no extra round trip.

use crate::bounded::BoundedMap;
use crate::reject::{Reason, Rejection};
use solana_sdk::account::Account;
use solana_sdk::pubkey::Pubkey;
use trust_gate_program_common::external::live_agent::{self, LiveAgent, Problem};

/// The agents whose signers were judged lately (at most
/// [`crate::bounded::DEFAULT_CAPACITY`]: past it the cache starts over, and a cold entry costs
/// one read).
pub type AgentCache = BoundedMap<Pubkey, LiveAgent>;

/// The payer agent `asset` from its AgentAccount (`agent`, which the registry must own) and
/// its MPL Core asset account (`asset_account`), as read; a refusal naming what is wrong.
pub fn read(
    registry: &Pubkey,
    asset: &Pubkey,
    agent: Option<&Account>,
    asset_account: Option<&Account>,
) -> Result<LiveAgent, Rejection> {
    let invalid = |what: &str| {
        Rejection::new(
            Reason::PayerAgentInvalid,
            format!("extra.gate.payerAgentAsset {asset}: {what}"),
        )
        .hint("the payer must be an agent of the registry (its MPL Core asset)")
    };
    let agent = agent
        .filter(|a| a.owner == *registry)
        .ok_or_else(|| invalid("has no AgentAccount of the registry"))?;
    let asset_account = asset_account.ok_or_else(|| invalid("the asset account does not exist"))?;
    live_agent::read(
        &agent.data,
        asset,
        &asset_account.owner,
        &asset_account.data,
    )
    .map_err(|p| match p {
        Problem::AgentAccount => invalid("its AgentAccount is not the registry's for this asset"),
        Problem::Asset => invalid("not an MPL Core asset"),
    })
}

/// `Ok` when `signer` may act for the payer agent `asset`, else 403
/// `payer_signer_not_authorized`.
pub fn judge(asset: &Pubkey, agent: &LiveAgent, signer: &Pubkey) -> Result<(), Rejection> {
    if agent.may_sign(signer) {
        return Ok(());
    }
    let wallet = agent
        .view
        .wallet(&agent.live_owner)
        .map(|w| format!(" or its agent wallet {w}"))
        .unwrap_or_default();
    Err(Rejection::new(
        Reason::PayerSignerNotAuthorized,
        format!(
            "{signer} signed for payer agent {asset}, whose settlements only its owner {}{wallet} may sign; nothing was sent (no fee)",
            agent.live_owner
        ),
    )
    .hint("the payer agent's owner, or the agent wallet it set, signs the settlement"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_program_common::external::{agent_account, core_asset, ids};

    fn agent_data(asset: &Pubkey, owner: &Pubkey, wallet: Option<&Pubkey>) -> Vec<u8> {
        let mut d = vec![0u8; agent_account::MIN_LEN + 32];
        d[..8].copy_from_slice(&trust_gate_program_common::external::discriminators::AGENT_ACCOUNT);
        d[agent_account::OWNER..agent_account::OWNER + 32].copy_from_slice(owner.as_ref());
        d[agent_account::ASSET..agent_account::ASSET + 32].copy_from_slice(asset.as_ref());
        if let Some(w) = wallet {
            d[agent_account::AGENT_WALLET] = 1;
            d[agent_account::AGENT_WALLET + 1..agent_account::AGENT_WALLET + 33]
                .copy_from_slice(w.as_ref());
        }
        d
    }

    fn account(owner: Pubkey, data: Vec<u8>) -> Account {
        Account {
            lamports: 1,
            data,
            owner,
            executable: false,
            rent_epoch: 0,
        }
    }

    fn asset_account(live_owner: &Pubkey) -> Account {
        let mut d = vec![core_asset::KEY_ASSET_V1];
        d.extend_from_slice(live_owner.as_ref());
        account(ids::MPL_CORE, d)
    }

    #[test]
    fn the_live_owner_and_its_wallet_sign_and_nobody_else() {
        let registry = ids::AGENT_REGISTRY;
        let (asset, owner, wallet, buyer, stranger) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let agent = account(registry, agent_data(&asset, &owner, Some(&wallet)));
        // The agent as read while MPL Core names `holder` the asset's owner.
        let held_by = |holder: &Pubkey| {
            read(
                &registry,
                &asset,
                Some(&agent),
                Some(&asset_account(holder)),
            )
            .unwrap()
        };
        let a = held_by(&owner);
        assert_eq!(judge(&asset, &a, &owner), Ok(()));
        assert_eq!(judge(&asset, &a, &wallet), Ok(()));
        let no = judge(&asset, &a, &stranger).unwrap_err();
        assert_eq!(
            (no.status(), no.reason.wire()),
            (
                axum::http::StatusCode::FORBIDDEN,
                "payer_signer_not_authorized"
            )
        );
        assert!(
            no.message.contains(&owner.to_string()) && no.message.contains(&wallet.to_string())
        );
        // Sold on MPL Core directly: the cached owner is stale, so the wallet no longer counts.
        let sold = held_by(&buyer);
        assert_eq!(judge(&asset, &sold, &buyer), Ok(()));
        assert!(judge(&asset, &sold, &owner).is_err());
        assert!(judge(&asset, &sold, &wallet).is_err());
    }

    #[test]
    fn accounts_that_are_not_an_agent_are_named() {
        let registry = ids::AGENT_REGISTRY;
        let (asset, owner) = (Pubkey::new_unique(), Pubkey::new_unique());
        let agent = account(registry, agent_data(&asset, &owner, None));
        let forged = account(Pubkey::new_unique(), agent_data(&asset, &owner, None));
        let other = account(registry, agent_data(&Pubkey::new_unique(), &owner, None));
        let not_core = account(Pubkey::new_unique(), asset_account(&owner).data);
        for (a, b, why) in [
            (None, Some(asset_account(&owner)), "no AgentAccount"),
            (Some(forged), Some(asset_account(&owner)), "no AgentAccount"),
            (
                Some(other),
                Some(asset_account(&owner)),
                "not the registry's",
            ),
            (Some(agent.clone()), None, "does not exist"),
            (Some(agent), Some(not_core), "not an MPL Core asset"),
        ] {
            let e = read(&registry, &asset, a.as_ref(), b.as_ref()).unwrap_err();
            assert_eq!(e.reason, "payer_agent_invalid");
            assert!(
                e.message.starts_with("extra.gate.payerAgentAsset"),
                "{}",
                e.message
            );
            assert!(e.message.contains(why), "{}", e.message);
        }
    }

    #[test]
    fn the_cache_forgets_and_starts_over_when_full() {
        let c = AgentCache::default();
        let registry = ids::AGENT_REGISTRY;
        let (asset, owner) = (Pubkey::new_unique(), Pubkey::new_unique());
        let agent = account(registry, agent_data(&asset, &owner, None));
        let a = read(
            &registry,
            &asset,
            Some(&agent),
            Some(&asset_account(&owner)),
        )
        .unwrap();
        c.put(asset, a);
        assert_eq!(c.get(&asset), Some(a));
        c.forget(&asset);
        assert_eq!(c.get(&asset), None);
    }
}
