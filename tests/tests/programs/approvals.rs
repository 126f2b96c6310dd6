//! Approvals above a policy's threshold, executed: a payment above it is held
//! (RequireApproval; the strict gate's `ApprovalRequired`), the authority's members approve
//! its terms on chain (`approve_payment`), the same payment then passes once and closes the
//! approval to the member who paid its rent; an approval of other terms, an expired one, a
//! replayed one and one signed by fewer members than the threshold pass nothing; the kill
//! switch still stops an approved payment; an unused approval is closed by its rent payer, or
//! by anyone once expired.

use policy_vault::engine::{Decision, DenyReason};
use policy_vault::errors::PolicyVaultError as E;
use policy_vault::state::{ApprovalTerms, PaymentApproval, PolicyRules};
use solana_sdk::instruction::{AccountMeta, Instruction};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_program_tests::world::{open_policy, sdk, tier, Agent, Attestations, World};
use trust_gate_program_tests::{custom_code, fetch, payment_id, send};

const THRESHOLD: u64 = 50;

fn code(e: E) -> Option<u32> {
    Some(u32::from(e))
}

fn approval_required() -> Option<u32> {
    Some(u32::from(gate::errors::GateError::ApprovalRequired))
}

/// A payer under a policy (no kinds, no limits) whose payments above [`THRESHOLD`] need
/// approval, its authority `members` with `threshold` (the owner first), and 1 000 tokens.
async fn payer(w: &mut World, cosigners: &[&Keypair], threshold: u8) -> Agent {
    let agent = w.register_agent().await;
    w.set_stats(&agent.asset(), tier(3)).await;
    let owner = agent.owner.pubkey();
    let members = std::iter::once(owner)
        .chain(cosigners.iter().map(|k| k.pubkey()))
        .collect();
    let ix = w.init_authority_ix(&owner, &agent.asset(), members, threshold);
    send(&mut w.ctx, &[ix], &[&agent.owner]).await.unwrap();
    let create = sdk().init_policy(
        &owner,
        &cosigners.iter().map(|k| k.pubkey()).collect::<Vec<_>>(),
        &agent.asset(),
        1,
        open_policy(w.mint),
        PolicyRules::default(),
        THRESHOLD,
    );
    let mut signers = vec![&agent.owner];
    signers.extend_from_slice(cosigners);
    send(&mut w.ctx, &[create], &signers).await.unwrap();
    w.token_account(&owner, 1_000).await;
    agent
}

fn terms(w: &World, payer: &Agent, payee: &Agent, amount: u64) -> ApprovalTerms {
    ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: payee.asset(),
        mint: w.mint,
        amount,
        policy_id: 1,
    }
}

/// The owner's approval of `t` until `expires_at` (threshold 1).
async fn approve(w: &mut World, payer: &Agent, t: ApprovalTerms, expires_at: i64) -> Pubkey {
    let ix = sdk().approve_payment(&payer.owner.pubkey(), &[], t, expires_at);
    send(&mut w.ctx, &[ix], &[&payer.owner]).await.unwrap();
    sdk().pda.approval(&t)
}

/// `ix` with the approval (and, for a settlement, its rent payer) after its accounts.
fn with_approval(
    mut ix: Instruction,
    approval: &Pubkey,
    rent_payer: Option<&Pubkey>,
) -> Instruction {
    ix.accounts.push(AccountMeta::new(*approval, false));
    if let Some(r) = rent_payer {
        ix.accounts.push(AccountMeta::new(*r, false));
    }
    ix
}

/// The read-only decision of `amount`, with `approval` when given.
async fn decide(
    w: &mut World,
    payer: &Agent,
    payee: &Agent,
    amount: u64,
    approval: Option<&Pubkey>,
) -> Decision {
    let mut ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        amount,
        w.mint,
        1,
        Attestations::default(),
    );
    if let Some(a) = approval {
        ix.accounts.push(AccountMeta::new_readonly(*a, false));
    }
    w.simulate_decision(ix).await
}

/// Settles `amount`, with `approval` (and its rent payer) when given; the custom error code
/// on failure.
async fn settle(
    w: &mut World,
    payer: &Agent,
    payee: &Agent,
    amount: u64,
    approval: Option<(&Pubkey, &Pubkey)>,
) -> Result<(), Option<u32>> {
    let mut ixs = w.settlement(payer, payee, amount, payment_id()).await;
    if let Some((a, r)) = approval {
        ixs[0] = with_approval(ixs[0].clone(), a, Some(r));
    }
    w.send_settlement(payer, &ixs)
        .await
        .map_err(|e| custom_code(&e))
}

async fn lamports(w: &mut World, key: &Pubkey) -> u64 {
    w.ctx.banks_client.get_balance(*key).await.unwrap()
}

#[tokio::test]
async fn an_approval_passes_one_payment_above_the_threshold_and_is_used_up() {
    let mut w = World::new().await;
    let payer = payer(&mut w, &[], 1).await;
    let payee = w.payee(3, None).await;
    let owner = payer.owner.pubkey();
    // At the threshold: no approval asked.
    assert_eq!(
        decide(&mut w, &payer, &payee, THRESHOLD, None).await,
        Decision::Allow
    );
    assert_eq!(
        settle(&mut w, &payer, &payee, THRESHOLD, None).await,
        Ok(())
    );
    // Above it: held, and the strict gate refuses it by name.
    assert_eq!(
        decide(&mut w, &payer, &payee, 60, None).await,
        Decision::RequireApproval
    );
    assert_eq!(
        settle(&mut w, &payer, &payee, 60, None).await,
        Err(approval_required())
    );

    let before = lamports(&mut w, &owner).await;
    let expires_at = w.now + 600;
    let t = terms(&w, &payer, &payee, 60);
    let approval = approve(&mut w, &payer, t, expires_at).await;
    let stored: PaymentApproval = fetch(&mut w.ctx, &approval).await.unwrap();
    assert_eq!(stored.terms(), t);
    assert_eq!(
        (stored.expires_at, stored.rent_payer, stored.signers),
        (expires_at, owner, 1)
    );
    let rent = lamports(&mut w, &approval).await;
    assert_eq!(
        lamports(&mut w, &owner).await,
        before - rent,
        "the member paid its rent"
    );
    // A second approval of the same terms while it stands: refused.
    let again = sdk().approve_payment(&owner, &[], t, expires_at);
    assert!(send(&mut w.ctx, &[again], &[&payer.owner]).await.is_err());

    assert_eq!(
        decide(&mut w, &payer, &payee, 60, Some(&approval)).await,
        Decision::Allow
    );
    // Without its rent payer the settlement cannot close it: refused.
    let mut ixs = w.settlement(&payer, &payee, 60, payment_id()).await;
    ixs[0] = with_approval(ixs[0].clone(), &approval, None);
    let err = w.send_settlement(&payer, &ixs).await.unwrap_err();
    assert_eq!(custom_code(&err), code(E::ApprovalRentPayerMismatch));
    // Another account as its rent payer: refused.
    let stranger = Pubkey::new_unique();
    assert_eq!(
        settle(&mut w, &payer, &payee, 60, Some((&approval, &stranger))).await,
        Err(code(E::ApprovalRentPayerMismatch))
    );
    // With both: paid, the approval closed, its rent back with the member.
    assert_eq!(
        settle(&mut w, &payer, &payee, 60, Some((&approval, &owner))).await,
        Ok(())
    );
    assert_eq!(lamports(&mut w, &approval).await, 0);
    assert_eq!(lamports(&mut w, &owner).await, before);
    // Replayed: nothing approves it any more.
    assert_eq!(
        settle(&mut w, &payer, &payee, 60, Some((&approval, &owner))).await,
        Err(approval_required())
    );
    // A payment at or below the threshold passing an approval leaves it alone.
    let small_terms = terms(&w, &payer, &payee, 40);
    let small = approve(&mut w, &payer, small_terms, expires_at).await;
    assert_eq!(
        settle(&mut w, &payer, &payee, 40, Some((&small, &owner))).await,
        Ok(())
    );
    assert!(lamports(&mut w, &small).await > 0, "not needed, not used");
}

#[tokio::test]
async fn an_approval_of_other_terms_or_expired_passes_nothing() {
    let mut w = World::new().await;
    let payer = payer(&mut w, &[], 1).await;
    let payee = w.payee(3, None).await;
    let other_payee = w.payee(3, None).await;
    let owner = payer.owner.pubkey();
    let expires_at = w.now + 600;
    let t = terms(&w, &payer, &payee, 60);
    let others = [
        ApprovalTerms {
            payee_asset: other_payee.asset(),
            ..t
        },
        ApprovalTerms { amount: 61, ..t },
        ApprovalTerms {
            mint: Pubkey::new_unique(),
            ..t
        },
        ApprovalTerms { policy_id: 2, ..t },
    ];
    for other in others {
        let approval = approve(&mut w, &payer, other, expires_at).await;
        assert_eq!(
            decide(&mut w, &payer, &payee, 60, Some(&approval)).await,
            Decision::RequireApproval,
            "{other:?}"
        );
        assert_eq!(
            settle(&mut w, &payer, &payee, 60, Some((&approval, &owner))).await,
            Err(approval_required()),
            "{other:?}"
        );
    }
    // Expired: in force up to its last second, then nothing.
    let deadline = w.now + 100;
    let approval = approve(&mut w, &payer, t, deadline).await;
    w.set_time(deadline + 1).await;
    assert_eq!(
        decide(&mut w, &payer, &payee, 60, Some(&approval)).await,
        Decision::RequireApproval
    );
    assert_eq!(
        settle(&mut w, &payer, &payee, 60, Some((&approval, &owner))).await,
        Err(approval_required())
    );
    // Anyone may now close it; its rent goes back to the member.
    let before = lamports(&mut w, &owner).await;
    let rent = lamports(&mut w, &approval).await;
    let sweeper = Keypair::new();
    let wrong = sdk().close_approval(&sweeper.pubkey(), &approval, &sweeper.pubkey());
    let err = send(&mut w.ctx, &[wrong], &[&sweeper]).await.unwrap_err();
    assert_eq!(custom_code(&err), code(E::ApprovalRentPayerMismatch));
    let close = sdk().close_approval(&sweeper.pubkey(), &approval, &owner);
    send(&mut w.ctx, &[close], &[&sweeper]).await.unwrap();
    assert_eq!(lamports(&mut w, &owner).await, before + rent);
    assert_eq!(lamports(&mut w, &approval).await, 0);
}

#[tokio::test]
async fn approving_takes_the_threshold_and_valid_terms_and_an_unused_approval_comes_back() {
    let mut w = World::new().await;
    let second = Keypair::new();
    let payer = payer(&mut w, &[&second], 2).await;
    let payee = w.payee(3, None).await;
    let owner = payer.owner.pubkey();
    let t = terms(&w, &payer, &payee, 60);
    let expires_at = w.now + 600;
    // One member of two: refused.
    let alone = sdk().approve_payment(&owner, &[], t, expires_at);
    let err = send(&mut w.ctx, &[alone], &[&payer.owner])
        .await
        .unwrap_err();
    assert_eq!(custom_code(&err), code(E::InsufficientSigners));
    // A stranger: refused.
    let stranger = trust_gate_program_tests::funded_keypair(&mut w.ctx).await;
    let ix = sdk().approve_payment(&stranger.pubkey(), &[], t, expires_at);
    let err = send(&mut w.ctx, &[ix], &[&stranger]).await.unwrap_err();
    assert_eq!(custom_code(&err), code(E::NotAuthorityMember));
    // Terms and expiry checked, each named.
    let bad = [
        (
            ApprovalTerms { amount: 0, ..t },
            expires_at,
            E::ApprovalAmountZero,
        ),
        (
            ApprovalTerms {
                payee_asset: payer.asset(),
                ..t
            },
            expires_at,
            E::ApprovalTermsInvalid,
        ),
        (t, w.now, E::ApprovalExpiryInvalid),
        (t, w.now + 7 * 24 * 3600 + 1, E::ApprovalExpiryInvalid),
    ];
    for (terms, expires_at, expected) in bad {
        let ix = sdk().approve_payment(&owner, &[second.pubkey()], terms, expires_at);
        let err = send(&mut w.ctx, &[ix], &[&payer.owner, &second])
            .await
            .unwrap_err();
        assert_eq!(custom_code(&err), code(expected), "{terms:?} {expires_at}");
    }
    // Both members: approved, and the payment passes.
    let ix = sdk().approve_payment(&owner, &[second.pubkey()], t, expires_at);
    send(&mut w.ctx, &[ix], &[&payer.owner, &second])
        .await
        .unwrap();
    let approval = sdk().pda.approval(&t);
    let stored: PaymentApproval = fetch(&mut w.ctx, &approval).await.unwrap();
    assert_eq!(stored.signers, 2);
    // The other member cannot withdraw it before it expires; the one who paid for it can.
    let early = sdk().close_approval(&second.pubkey(), &approval, &owner);
    let err = send(&mut w.ctx, &[early], &[&second]).await.unwrap_err();
    assert_eq!(custom_code(&err), code(E::ApprovalNotExpired));
    let before = lamports(&mut w, &owner).await;
    let rent = lamports(&mut w, &approval).await;
    let withdraw = sdk().close_approval(&owner, &approval, &owner);
    send(&mut w.ctx, &[withdraw], &[&payer.owner])
        .await
        .unwrap();
    assert_eq!(lamports(&mut w, &owner).await, before + rent);
    assert_eq!(
        settle(&mut w, &payer, &payee, 60, Some((&approval, &owner))).await,
        Err(approval_required())
    );
}

#[tokio::test]
async fn the_kill_switch_stops_an_approved_payment_and_leaves_its_approval() {
    let mut w = World::new().await;
    let payer = payer(&mut w, &[], 1).await;
    let payee = w.payee(3, None).await;
    let owner = payer.owner.pubkey();
    let t = terms(&w, &payer, &payee, 60);
    let expires_at = w.now + 600;
    let approval = approve(&mut w, &payer, t, expires_at).await;
    let pause = sdk().set_killswitch(&owner, &[], &payer.asset(), true);
    send(&mut w.ctx, &[pause], &[&payer.owner]).await.unwrap();
    assert_eq!(
        decide(&mut w, &payer, &payee, 60, Some(&approval)).await,
        Decision::Deny(DenyReason::KillSwitchEngaged)
    );
    assert_eq!(
        settle(&mut w, &payer, &payee, 60, Some((&approval, &owner))).await,
        Err(Some(DenyReason::KillSwitchEngaged.strict_error_code()))
    );
    assert!(lamports(&mut w, &approval).await > 0, "still pending");
    let resume = sdk().set_killswitch(&owner, &[], &payer.asset(), false);
    send(&mut w.ctx, &[resume], &[&payer.owner]).await.unwrap();
    assert_eq!(
        settle(&mut w, &payer, &payee, 60, Some((&approval, &owner))).await,
        Ok(())
    );
    assert_eq!(lamports(&mut w, &approval).await, 0);
}
