//! policy_vault: every instruction's happy path and errors, with real transactions.

use anchor_lang::error::ErrorCode as Anchor;
use anchor_lang::{InstructionData, ToAccountMetas};
use policy_vault::errors::PolicyVaultError as E;
use policy_vault::state::{
    AcceptancePolicy, KillSwitchState, PolicyAccount, PolicyAuthority, VelocityLedger,
};
use solana_sdk::instruction::{AccountMeta, Instruction, InstructionError};
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::transaction::TransactionError;
use trust_gate_program_tests::world::{
    demo_policy, min_tier_acceptance, open_policy, pda, sdk, Agent, Attestations, World,
};
use trust_gate_program_tests::{assert_already_in_use, assert_code, fetch, funded_keypair, send};

fn code(e: E) -> u32 {
    u32::from(e)
}

fn anchor(e: Anchor) -> u32 {
    e as u32
}

fn rotate_ix(
    lead: &Keypair,
    others: &[&Keypair],
    asset: &anchor_lang::prelude::Pubkey,
    members: Vec<anchor_lang::prelude::Pubkey>,
    threshold: u8,
) -> Instruction {
    let mut accounts = policy_vault::accounts::RotateAuthority {
        member: lead.pubkey(),
        authority: pda::policy_authority(asset),
        agent_asset: *asset,
    }
    .to_account_metas(None);
    accounts.extend(
        others
            .iter()
            .map(|k| AccountMeta::new_readonly(k.pubkey(), true)),
    );
    Instruction {
        program_id: policy_vault::ID,
        accounts,
        data: policy_vault::instruction::RotateAuthority {
            asset: *asset,
            members,
            threshold,
        }
        .data(),
    }
}

pub fn set_killswitch_ix(
    lead: &Keypair,
    others: &[&Keypair],
    asset: &anchor_lang::prelude::Pubkey,
    paused: bool,
) -> Instruction {
    let mut accounts = policy_vault::accounts::SetKillSwitch {
        member: lead.pubkey(),
        authority: pda::policy_authority(asset),
        killswitch: pda::killswitch(asset),
        agent_asset: *asset,
    }
    .to_account_metas(None);
    accounts.extend(
        others
            .iter()
            .map(|k| AccountMeta::new_readonly(k.pubkey(), true)),
    );
    Instruction {
        program_id: policy_vault::ID,
        accounts,
        data: policy_vault::instruction::SetKillswitch {
            asset: *asset,
            paused,
        }
        .data(),
    }
}

/// An agent whose authority has `n` members (the owner first) and `threshold`.
async fn agent_with_members(w: &mut World, n: usize, threshold: u8) -> (Agent, Vec<Keypair>) {
    let agent = w.register_agent().await;
    let mut members = vec![agent.owner.insecure_clone()];
    for _ in 1..n {
        members.push(funded_keypair(&mut w.ctx).await);
    }
    let keys = members.iter().map(|k| k.pubkey()).collect();
    let ix = w.init_authority_ix(&agent.owner.pubkey(), &agent.asset(), keys, threshold);
    send(&mut w.ctx, &[ix], &[&agent.owner]).await.unwrap();
    (agent, members)
}

#[tokio::test]
async fn init_authority_by_the_owner() {
    let mut w = World::new().await;
    let (agent, members) = agent_with_members(&mut w, 3, 2).await;
    let a: PolicyAuthority = fetch(&mut w.ctx, &pda::policy_authority(&agent.asset()))
        .await
        .unwrap();
    assert_eq!(a.asset, agent.asset());
    assert_eq!(a.threshold, 2);
    assert_eq!(
        a.members,
        members.iter().map(|k| k.pubkey()).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn init_authority_rejects_a_stranger_squatting_the_agent() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    let stranger = funded_keypair(&mut w.ctx).await;
    let ix = w.init_authority_ix(
        &stranger.pubkey(),
        &agent.asset(),
        vec![stranger.pubkey()],
        1,
    );
    assert_code(
        send(&mut w.ctx, &[ix], &[&stranger]).await,
        code(E::NotAgentOwner),
    );
    // The real owner can still claim it.
    w.init_authority(&agent).await;
}

#[tokio::test]
async fn init_authority_validates_members_and_threshold() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    let o = agent.owner.pubkey();
    let x = solana_sdk::pubkey::Pubkey::new_unique();
    let cases = [
        (vec![], 1, E::NoMembers),
        (
            vec![o; 1]
                .into_iter()
                .chain((0..7).map(|_| solana_sdk::pubkey::Pubkey::new_unique()))
                .collect(),
            1,
            E::TooManyMembers,
        ),
        (vec![o, x, o], 1, E::DuplicateMember),
        (vec![o, x], 0, E::ThresholdOutOfRange),
        (vec![o, x], 3, E::ThresholdOutOfRange),
    ];
    for (members, threshold, err) in cases {
        let ix = w.init_authority_ix(&o, &agent.asset(), members, threshold);
        assert_code(send(&mut w.ctx, &[ix], &[&agent.owner]).await, code(err));
    }
}

#[tokio::test]
async fn init_authority_needs_the_registry_agent_account() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    let other = w.register_agent().await;
    // The AgentAccount of another asset: the seeds constraint rejects it.
    let mut ix = w.init_authority_ix(
        &agent.owner.pubkey(),
        &agent.asset(),
        vec![agent.owner.pubkey()],
        1,
    );
    ix.accounts[1].pubkey = pda::agent(&other.asset());
    assert_code(
        send(&mut w.ctx, &[ix], &[&agent.owner]).await,
        anchor(Anchor::ConstraintSeeds),
    );
    // An asset that was never registered: no registry-owned account there.
    let ghost = solana_sdk::pubkey::Pubkey::new_unique();
    let ix = w.init_authority_ix(&agent.owner.pubkey(), &ghost, vec![agent.owner.pubkey()], 1);
    assert_code(
        send(&mut w.ctx, &[ix], &[&agent.owner]).await,
        code(E::AgentAccountInvalid),
    );
    // Missing signature: the owner's key is in the instruction but it did not sign.
    let mut ix = w.init_authority_ix(
        &agent.owner.pubkey(),
        &agent.asset(),
        vec![agent.owner.pubkey()],
        1,
    );
    ix.accounts[0].is_signer = false;
    ix.accounts[0].pubkey = agent.owner.pubkey();
    let payer = w.ctx.payer.insecure_clone();
    let r = trust_gate_program_tests::send_tx(&mut w.ctx, &[ix], &payer, &[]).await;
    assert_code(r, anchor(Anchor::AccountNotSigner));
}

#[tokio::test]
async fn init_authority_twice_fails() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    w.ctx.get_new_latest_blockhash().await.unwrap();
    let ix = w.init_authority_ix(
        &agent.owner.pubkey(),
        &agent.asset(),
        vec![agent.owner.pubkey()],
        1,
    );
    // The system program refuses to create an account that exists (AccountAlreadyInUse = 0).
    assert_already_in_use(send(&mut w.ctx, &[ix], &[&agent.owner]).await);
}

#[tokio::test]
async fn rotate_authority_needs_threshold_distinct_members() {
    let mut w = World::new().await;
    let (agent, m) = agent_with_members(&mut w, 3, 2).await;
    let asset = agent.asset();
    let new_members = vec![m[1].pubkey(), m[2].pubkey()];
    // One member, or the same member twice, is not two.
    let ix = rotate_ix(&m[0], &[], &asset, new_members.clone(), 1);
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0]]).await,
        code(E::InsufficientSigners),
    );
    let ix = rotate_ix(&m[0], &[&m[0]], &asset, new_members.clone(), 1);
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0]]).await,
        code(E::InsufficientSigners),
    );
    // A stranger's signature does not count.
    let stranger = funded_keypair(&mut w.ctx).await;
    let ix = rotate_ix(&m[0], &[&stranger], &asset, new_members.clone(), 1);
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0], &stranger]).await,
        code(E::InsufficientSigners),
    );
    let ix = rotate_ix(&stranger, &[&m[0], &m[1]], &asset, new_members.clone(), 1);
    assert_code(
        send(&mut w.ctx, &[ix], &[&stranger, &m[0], &m[1]]).await,
        code(E::NotAuthorityMember),
    );
    // Invalid new lists are refused like at init.
    let ix = rotate_ix(&m[0], &[&m[1]], &asset, vec![], 1);
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0], &m[1]]).await,
        code(E::NoMembers),
    );
    let ix = rotate_ix(&m[0], &[&m[1]], &asset, new_members.clone(), 1);
    send(&mut w.ctx, &[ix], &[&m[0], &m[1]]).await.unwrap();
    let a: PolicyAuthority = fetch(&mut w.ctx, &pda::policy_authority(&asset))
        .await
        .unwrap();
    assert_eq!(a.members, new_members);
    assert_eq!(a.threshold, 1);
    // The old owner is no longer a member.
    let ix = rotate_ix(&m[0], &[], &asset, vec![m[0].pubkey()], 1);
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0]]).await,
        code(E::NotAuthorityMember),
    );
}

#[tokio::test]
async fn init_policy_creates_policy_ledger_and_killswitch() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let params = demo_policy(w.mint);
    w.init_policy(&agent, 7, params.clone()).await.unwrap();
    let asset = agent.asset();
    let p: PolicyAccount = fetch(&mut w.ctx, &pda::policy(&asset, 7)).await.unwrap();
    assert_eq!((p.asset, p.policy_id, &p.params), (asset, 7, &params));
    assert_eq!((p.day_spent, p.week_spent), (0, 0));
    let v: VelocityLedger = fetch(&mut w.ctx, &pda::velocity(&asset, 7)).await.unwrap();
    assert_eq!((v.asset, v.policy_id, v.cumulative), (asset, 7, 0));
    let k: KillSwitchState = fetch(&mut w.ctx, &pda::killswitch(&asset)).await.unwrap();
    assert_eq!((k.asset, k.paused), (asset, false));
    // A second policy reuses the kill switch; the same id cannot be created twice (immutable).
    w.init_policy(&agent, 8, open_policy(w.mint)).await.unwrap();
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_already_in_use(w.init_policy(&agent, 7, open_policy(w.mint)).await);
}

#[tokio::test]
async fn init_policy_validates_every_field() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let base = {
        let mut p = demo_policy(w.mint);
        p.kinds = 0x1f;
        p.required_capability = [1; 32];
        p
    };
    type Edit = fn(&mut policy_vault::state::PolicyParams);
    let cases: Vec<(Edit, E)> = vec![
        (|p| p.kinds = 0x40, E::UnknownKindBits),
        (|p| p.per_tx_cap = 0, E::SpendingCapZero),
        (|p| p.daily_cap = 0, E::SpendingCapZero),
        (|p| p.weekly_cap = 0, E::SpendingCapZero),
        (|p| p.velocity_window_secs = 0, E::VelocityWindowZero),
        (|p| p.velocity_max_in_window = 0, E::VelocityMaxZero),
        (|p| p.tier0_decay_bps = 10_001, E::DecayOutOfRange),
        (|p| p.min_counterparty_tier = 5, E::MinTierOutOfRange),
        (
            |p| p.min_counterparty_confidence = 10_001,
            E::MinConfidenceOutOfRange,
        ),
        (
            |p| p.required_capability = [0; 32],
            E::RequiredCapabilityMissing,
        ),
        (
            |p| {
                p.kinds = 0x08;
                p.required_capability = [0; 32];
                p.unrated_treatment = 2;
            },
            E::UnratedValidationWithoutCapability,
        ),
        (
            |p| p.accepted_attestors = [solana_sdk::pubkey::Pubkey::new_from_array([3; 32]); 2],
            E::DuplicateAttestor,
        ),
        (|p| p.gate_mode = 2, E::InvalidGateMode),
        (|p| p.unrated_treatment = 3, E::InvalidUnratedTreatment),
    ];
    for (i, (edit, err)) in cases.into_iter().enumerate() {
        let mut p = base.clone();
        edit(&mut p);
        assert_code(w.init_policy(&agent, 100 + i as u32, p).await, code(err));
    }
    // Overflow-sized values are valid configuration.
    let mut huge = base.clone();
    huge.per_tx_cap = u64::MAX;
    huge.daily_cap = u64::MAX;
    huge.weekly_cap = u64::MAX;
    huge.velocity_window_secs = u64::MAX;
    huge.velocity_max_in_window = u64::MAX;
    w.init_policy(&agent, 1, huge).await.unwrap();
}

#[tokio::test]
async fn init_policy_only_by_a_member() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let stranger = funded_keypair(&mut w.ctx).await;
    let ix = w.init_policy_ix(&stranger.pubkey(), &agent.asset(), 1, open_policy(w.mint));
    assert_code(
        send(&mut w.ctx, &[ix], &[&stranger]).await,
        code(E::NotAuthorityMember),
    );
    // Without an authority there is nothing to be a member of.
    let lone = w.register_agent().await;
    assert_code(
        w.init_policy(&lone, 1, open_policy(w.mint)).await,
        anchor(Anchor::AccountNotInitialized),
    );
}

#[tokio::test]
async fn killswitch_threshold_and_state() {
    let mut w = World::new().await;
    let (agent, m) = agent_with_members(&mut w, 3, 2).await;
    let asset = agent.asset();
    let ix = sdk().init_policy(
        &m[1].pubkey(),
        &[m[2].pubkey()],
        &asset,
        1,
        open_policy(w.mint),
        Default::default(),
        0,
    );
    send(&mut w.ctx, &[ix], &[&m[1], &m[2]]).await.unwrap();
    // Threshold 2 signed by one member: refused.
    let ix = set_killswitch_ix(&m[0], &[], &asset, true);
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0]]).await,
        code(E::InsufficientSigners),
    );
    let ix = set_killswitch_ix(&m[0], &[&m[2]], &asset, true);
    send(&mut w.ctx, &[ix], &[&m[0], &m[2]]).await.unwrap();
    let k: KillSwitchState = fetch(&mut w.ctx, &pda::killswitch(&asset)).await.unwrap();
    assert!(k.paused);
    assert_eq!(k.paused_by, m[0].pubkey());
    assert!(k.paused_at > 0);
    let ix = set_killswitch_ix(&m[1], &[&m[2]], &asset, false);
    send(&mut w.ctx, &[ix], &[&m[1], &m[2]]).await.unwrap();
    let k: KillSwitchState = fetch(&mut w.ctx, &pda::killswitch(&asset)).await.unwrap();
    assert!(!k.paused);
    assert!(k.unpaused_at >= k.paused_at);
}

#[tokio::test]
async fn init_killswitch_directly_and_twice() {
    let mut w = World::new().await;
    let agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let asset = agent.asset();
    let ix = |member: &Keypair| Instruction {
        program_id: policy_vault::ID,
        accounts: policy_vault::accounts::InitKillSwitch {
            member: member.pubkey(),
            authority: pda::policy_authority(&asset),
            killswitch: pda::killswitch(&asset),
            system_program: anchor_lang::system_program::ID,
        }
        .to_account_metas(None),
        data: policy_vault::instruction::InitKillswitch { asset }.data(),
    };
    let stranger = funded_keypair(&mut w.ctx).await;
    assert_code(
        send(&mut w.ctx, &[ix(&stranger)], &[&stranger]).await,
        code(E::NotAuthorityMember),
    );
    send(&mut w.ctx, &[ix(&agent.owner)], &[&agent.owner])
        .await
        .unwrap();
    let k: KillSwitchState = fetch(&mut w.ctx, &pda::killswitch(&asset)).await.unwrap();
    assert_eq!((k.asset, k.paused), (asset, false));
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_already_in_use(send(&mut w.ctx, &[ix(&agent.owner)], &[&agent.owner]).await);
}

#[tokio::test]
async fn acceptance_policy_create_replace_and_threshold() {
    let mut w = World::new().await;
    let (agent, m) = agent_with_members(&mut w, 2, 2).await;
    let asset = agent.asset();
    let ix = w.set_acceptance_ix(&m[0].pubkey(), &[], &asset, min_tier_acceptance(2));
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0]]).await,
        code(E::InsufficientSigners),
    );
    let ix = w.set_acceptance_ix(
        &m[0].pubkey(),
        &[m[1].pubkey()],
        &asset,
        min_tier_acceptance(2),
    );
    send(&mut w.ctx, &[ix], &[&m[0], &m[1]]).await.unwrap();
    let a: AcceptancePolicy = fetch(&mut w.ctx, &pda::acceptance(&asset)).await.unwrap();
    assert_eq!(a.params.min_payer_tier, 2);
    let ix = w.set_acceptance_ix(
        &m[1].pubkey(),
        &[m[0].pubkey()],
        &asset,
        min_tier_acceptance(4),
    );
    send(&mut w.ctx, &[ix], &[&m[0], &m[1]]).await.unwrap();
    let a: AcceptancePolicy = fetch(&mut w.ctx, &pda::acceptance(&asset)).await.unwrap();
    assert_eq!(a.params.min_payer_tier, 4);
    let mut bad = min_tier_acceptance(5);
    let ix = w.set_acceptance_ix(&m[0].pubkey(), &[m[1].pubkey()], &asset, bad.clone());
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0], &m[1]]).await,
        code(E::MinTierOutOfRange),
    );
    bad.min_payer_tier = 0;
    bad.unrated_treatment = 2;
    let ix = w.set_acceptance_ix(&m[0].pubkey(), &[m[1].pubkey()], &asset, bad);
    assert_code(
        send(&mut w.ctx, &[ix], &[&m[0], &m[1]]).await,
        code(E::UnratedValidationWithoutCapability),
    );
}

/// An acceptance policy carries its layout's version, and replacing one written by an earlier,
/// shorter layout grows the account (its member paying the rent), so later fields need no
/// second account type. Here the earlier layout is the current one without its version byte.
#[tokio::test]
async fn an_acceptance_policy_of_a_shorter_layout_grows_when_replaced() {
    use policy_vault::state::ACCEPTANCE_VERSION;
    let mut w = World::new().await;
    let (agent, m) = agent_with_members(&mut w, 1, 1).await;
    let asset = agent.asset();
    let address = pda::acceptance(&asset);
    let ix = w.set_acceptance_ix(&m[0].pubkey(), &[], &asset, min_tier_acceptance(2));
    send(&mut w.ctx, &[ix], &[&m[0]]).await.unwrap();
    let a: AcceptancePolicy = fetch(&mut w.ctx, &address).await.unwrap();
    assert_eq!(a.version, ACCEPTANCE_VERSION);
    let rent = w.ctx.banks_client.get_rent().await.unwrap();
    let mut older = trust_gate_program_tests::raw_account(&mut w.ctx, &address)
        .await
        .unwrap();
    let full = older.data.len();
    assert_eq!(full, 222);
    older.data.truncate(full - 1);
    older.lamports = rent.minimum_balance(full - 1);
    w.ctx.set_account(&address, &older.into());
    let ix = w.set_acceptance_ix(&m[0].pubkey(), &[], &asset, min_tier_acceptance(3));
    send(&mut w.ctx, &[ix], &[&m[0]]).await.unwrap();
    let grown = trust_gate_program_tests::raw_account(&mut w.ctx, &address)
        .await
        .unwrap();
    assert_eq!(
        (grown.data.len(), grown.lamports),
        (full, rent.minimum_balance(full))
    );
    let a: AcceptancePolicy = fetch(&mut w.ctx, &address).await.unwrap();
    assert_eq!(
        (a.params.min_payer_tier, a.version),
        (3, ACCEPTANCE_VERSION)
    );
}

/// The gate passes its evaluate signer through to policy_vault without checking its address
/// (policy_vault does): any other account in its place would have to sign the call, and the
/// gate can sign only for its own PDA.
#[tokio::test]
async fn the_gate_evaluates_only_as_its_own_evaluate_signer() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    let stranger = funded_keypair(&mut w.ctx).await;
    let mut ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        1,
        w.mint,
        1,
        Attestations::default(),
    );
    assert_eq!(ix.accounts[0].pubkey, pda::evaluate_signer());
    // Unsigned: the call would escalate its signer privilege.
    ix.accounts[0].pubkey = stranger.pubkey();
    let err = send(&mut w.ctx, std::slice::from_ref(&ix), &[])
        .await
        .unwrap_err()
        .unwrap();
    // Natively the test runtime's call stub panics where the VM returns the error.
    let expected = match trust_gate_localnet::Programs::from_env() {
        trust_gate_localnet::Programs::Native => InstructionError::ProgramFailedToComplete,
        _ => InstructionError::PrivilegeEscalation,
    };
    assert_eq!(err, TransactionError::InstructionError(0, expected));
    // Signed by the stranger: policy_vault refuses any signer but the gate's PDA.
    ix.accounts[0].is_signer = true;
    assert_code(
        send(&mut w.ctx, &[ix], &[&stranger]).await,
        anchor(Anchor::ConstraintAddress),
    );
}

#[tokio::test]
async fn evaluate_cannot_be_called_by_a_stranger() {
    let mut w = World::new().await;
    let payer = w.payer_with_policy(3, demo_policy(w.mint)).await;
    let payee = w.payee(3, None).await;
    let stranger = funded_keypair(&mut w.ctx).await;
    let args = policy_vault::instructions::EvaluateArgs {
        payer_asset: payer.asset(),
        payee_asset: payee.asset(),
        amount: 1,
        mint: w.mint,
        policy_id: 1,
    };
    // Both the read-only evaluation and the committing one.
    for commit in [false, true] {
        // The signer is compared with the gate's PDA address, a compile-time constant.
        let ix = sdk().evaluate(&stranger.pubkey(), args, Attestations::default(), commit);
        assert_code(
            send(&mut w.ctx, &[ix], &[&stranger]).await,
            anchor(Anchor::ConstraintAddress),
        );
        // The gate's signer PDA without its signature (nobody but the gate can sign for it).
        let mut ix = sdk().evaluate(
            &pda::evaluate_signer(),
            args,
            Attestations::default(),
            commit,
        );
        ix.accounts[0].is_signer = false;
        assert_code(
            send(&mut w.ctx, &[ix], &[]).await,
            anchor(Anchor::AccountNotSigner),
        );
    }
    let v: VelocityLedger = fetch(&mut w.ctx, &pda::velocity(&payer.asset(), 1))
        .await
        .unwrap();
    assert_eq!(v.cumulative, 0);
}

#[test]
fn gate_program_id_constant_matches_the_gate() {
    assert_eq!(policy_vault::state::seeds::GATE_PROGRAM_ID, gate::ID);
}
