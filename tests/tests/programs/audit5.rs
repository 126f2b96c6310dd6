//! The fifth audit's on-chain findings: each test runs what the audit describes and fails
//! without its fix. L-1: a take-over request lapses; L-2: a hand-over resets the guard; L-3:
//! a burned asset leaves the members in force protecting the agent; I-3: a hand-over voids
//! the earlier authority's approvals; L-7: mints of more than 18 decimals are refused.

use super::audit4::{second_key, Guarded, FUNDS};
use anchor_lang::solana_program::system_instruction;
use anchor_spl::token::spl_token;
use gate::errors::GateError as G;
use gate::settlement::TOKEN_PROGRAM_ID;
use policy_vault::engine::Decision;
use policy_vault::errors::PolicyVaultError as V;
use policy_vault::state::{
    ApprovalTerms, AuthorityGuard, KillSwitchState, PaymentApproval, PolicyRules, TakeOverRequest,
    DEFAULT_TAKE_OVER_DELAY_SECS,
};
use solana_sdk::account::AccountSharedData;
use solana_sdk::instruction::{AccountMeta, Instruction};
use solana_sdk::program_pack::Pack;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::channels::{self, Open, Split};
use trust_gate_client::settle::TokenProgram;
use trust_gate_program_common::external::ids;
use trust_gate_program_tests::world::{open_policy, sdk, Agent, Attestations, World};
use trust_gate_program_tests::{
    assert_code, clock, custom_code, fetch, funded_keypair, payment_id, raw_account, send,
};

fn v(e: V) -> u32 {
    u32::from(e)
}

fn g(e: G) -> u32 {
    u32::from(e)
}

async fn lamports(w: &mut World, key: &Pubkey) -> u64 {
    w.ctx.banks_client.get_balance(*key).await.unwrap()
}

async fn request_of(w: &mut World, asset: &Pubkey) -> TakeOverRequest {
    fetch(&mut w.ctx, &sdk().pda.take_over_request(asset))
        .await
        .expect("a pending take-over request")
}

/// The first second after which `r` can no longer be completed: its delay after
/// `effective_at`.
fn lapses_after(r: &TakeOverRequest) -> i64 {
    r.effective_at + (r.effective_at - r.requested_at)
}

/// `new_owner`, who holds the agent's asset, asks to take the authority over alone.
async fn request(w: &mut World, asset: &Pubkey, new_owner: &Keypair) {
    w.ctx.get_new_latest_blockhash().await.unwrap();
    let ix = sdk().request_take_over(&new_owner.pubkey(), asset, vec![new_owner.pubkey()], 1);
    send(&mut w.ctx, &[ix], &[new_owner]).await.unwrap();
}

/// A guard naming `recovery` (and a token account of it) and a delay of a week.
async fn guard_with_recovery(w: &mut World, g: &Guarded) -> (Keypair, Pubkey) {
    let recovery = funded_keypair(&mut w.ctx).await;
    let recovery_token = w.token_account(&recovery.pubkey(), 0).await;
    let ix = sdk().set_authority_guard(
        &g.lead(),
        &g.cosigners(),
        &g.agent.asset(),
        7 * 24 * 3600,
        &recovery.pubkey(),
    );
    g.members_send(w, ix).await.unwrap();
    (recovery, recovery_token)
}

// ---------------------------------------------------------------------------------------
// L-1: a take-over request lapses.
// ---------------------------------------------------------------------------------------

/// L-1, the audit's story: the buyer asks to take over, the asset comes back to the seller
/// (the request cannot apply meanwhile), and months later the buyer holds the asset again.
/// Before the fix the armed request completed at once, without any delay; now it lapsed one
/// delay after it took effect, and the members are still the agent's.
#[tokio::test]
async fn audit5_l1_a_request_armed_long_ago_does_not_complete_when_the_asset_comes_back() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let seller = g.agent.owner.insecure_clone();
    let (buyer, buyer_token) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    w.transfer_asset(&mut g.agent, seller.insecure_clone())
        .await
        .unwrap();
    w.advance_time(90 * 24 * 3600).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();

    let complete = sdk().complete_take_over(&asset, &buyer.pubkey());
    assert_code(
        send(&mut w.ctx, &[complete], &[]).await,
        v(V::TakeOverLapsed),
    );
    let drain = g.withdraw(&w, &buyer.pubkey(), &[], &buyer_token);
    assert_code(
        send(&mut w.ctx, &[drain], &[&buyer]).await,
        v(V::NotAuthorityMember),
    );
    let pause = sdk().set_killswitch(&g.lead(), &g.cosigners(), &asset, true);
    g.members_send(&mut w, pause).await.unwrap();
    let authority: policy_vault::state::PolicyAuthority =
        fetch(&mut w.ctx, &sdk().pda.policy_authority(&asset))
            .await
            .unwrap();
    assert_eq!(authority.owner, seller.pubkey());
    assert_eq!(w.token_balance(&g.vault).await, FUNDS);
}

/// L-1: a request completes from `effective_at` up to its delay after it, the last second
/// included, and not one second later (completion or the members' acceptance).
#[tokio::test]
async fn audit5_l1_a_request_completes_only_within_its_delay_after_it_takes_effect() {
    let mut w = World::new().await;
    // On time: completed at the last second of its window.
    let mut on_time = Guarded::new(&mut w).await;
    let asset = on_time.agent.asset();
    let (buyer, _) = second_key(&mut w).await;
    w.transfer_asset(&mut on_time.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    let r = request_of(&mut w, &asset).await;
    assert_eq!(
        r.effective_at - r.requested_at,
        i64::from(DEFAULT_TAKE_OVER_DELAY_SECS)
    );
    w.set_time(lapses_after(&r)).await;
    let complete = sdk().complete_take_over(&asset, &buyer.pubkey());
    send(&mut w.ctx, &[complete], &[]).await.unwrap();
    let authority: policy_vault::state::PolicyAuthority =
        fetch(&mut w.ctx, &sdk().pda.policy_authority(&asset))
            .await
            .unwrap();
    assert_eq!(authority.owner, buyer.pubkey());

    // Late by one second: neither completed nor accepted.
    let mut late = Guarded::new(&mut w).await;
    let asset = late.agent.asset();
    let (buyer, _) = second_key(&mut w).await;
    w.transfer_asset(&mut late.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    let r = request_of(&mut w, &asset).await;
    w.set_time(lapses_after(&r) + 1).await;
    let complete = sdk().complete_take_over(&asset, &buyer.pubkey());
    assert_code(
        send(&mut w.ctx, &[complete], &[]).await,
        v(V::TakeOverLapsed),
    );
    let accept = sdk().accept_take_over(&late.lead(), &late.cosigners(), &asset, &buyer.pubkey());
    assert_code(
        late.members_send(&mut w, accept).await,
        v(V::TakeOverLapsed),
    );
    assert!(
        raw_account(&mut w.ctx, &sdk().pda.take_over_request(&asset))
            .await
            .is_some()
    );
}

/// L-1: once lapsed, anyone closes the request (no signature but the fee payer's) and its
/// rent goes to whoever paid it; not before, and not to anyone else. The new owner may then
/// ask again, and waits a whole delay again.
#[tokio::test]
async fn audit5_l1_anyone_closes_a_lapsed_request_to_its_rent_payer() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let (buyer, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    let address = sdk().pda.take_over_request(&asset);
    let r = request_of(&mut w, &asset).await;
    let rent = lamports(&mut w, &address).await;
    assert!(rent > 0);

    w.set_time(lapses_after(&r)).await;
    let close = sdk().close_lapsed_take_over(&asset, &buyer.pubkey());
    assert_code(
        send(&mut w.ctx, std::slice::from_ref(&close), &[]).await,
        v(V::TakeOverNotLapsed),
    );
    w.set_time(lapses_after(&r) + 1).await;
    let stranger = Keypair::new().pubkey();
    let wrong = sdk().close_lapsed_take_over(&asset, &stranger);
    assert_code(
        send(&mut w.ctx, &[wrong], &[]).await,
        v(V::RentPayerMismatch),
    );
    let before = lamports(&mut w, &buyer.pubkey()).await;
    send(&mut w.ctx, &[close], &[]).await.unwrap();
    assert!(raw_account(&mut w.ctx, &address).await.is_none());
    assert_eq!(lamports(&mut w, &buyer.pubkey()).await, before + rent);

    request(&mut w, &asset, &buyer).await;
    let again = request_of(&mut w, &asset).await;
    let now = clock(&mut w.ctx).await.unix_timestamp;
    assert_eq!(
        (again.requested_at, again.effective_at),
        (now, now + i64::from(DEFAULT_TAKE_OVER_DELAY_SECS))
    );
}

/// L-1: the new owner whose request lapsed asks again without closing it first: the lapsed
/// request is replaced (before the fix: `TakeOverAlreadyRequested`, for good), its rent still
/// owed to whoever paid it.
#[tokio::test]
async fn audit5_l1_the_new_owner_asks_again_after_its_request_lapsed() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let (buyer, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    let r = request_of(&mut w, &asset).await;
    w.set_time(lapses_after(&r) + 1).await;
    request(&mut w, &asset, &buyer).await;
    let again = request_of(&mut w, &asset).await;
    let now = clock(&mut w.ctx).await.unix_timestamp;
    assert_eq!(again.requested_at, now);
    assert_eq!(again.rent_payer, buyer.pubkey());
    // A fresh delay: not completed before it.
    let complete = sdk().complete_take_over(&asset, &buyer.pubkey());
    assert_code(
        send(&mut w.ctx, &[complete], &[]).await,
        v(V::TakeOverNotYetEffective),
    );
}

// ---------------------------------------------------------------------------------------
// L-2: a hand-over resets the guard.
// ---------------------------------------------------------------------------------------

async fn guard_of(w: &mut World, asset: &Pubkey) -> AuthorityGuard {
    fetch(&mut w.ctx, &sdk().pda.authority_guard(asset))
        .await
        .expect("the authority's guard")
}

/// What a hand-over leaves for the next one: the default delay and no recovery key. The
/// seller's recovery key is no way into the buyer's vault: while the asset is with a third
/// owner, the buyer's members may withdraw only to a recovery key they name themselves.
async fn assert_guard_reset(w: &mut World, asset: &Pubkey, buyer: &Keypair, g: &mut Guarded) {
    let guard = guard_of(w, asset).await;
    assert_eq!(
        (guard.take_over_delay_secs, guard.recovery),
        (DEFAULT_TAKE_OVER_DELAY_SECS, Pubkey::default())
    );
    let (third, _) = second_key(w).await;
    w.transfer_asset(&mut g.agent, third.insecure_clone())
        .await
        .unwrap();
    request(w, asset, &third).await;
    let r = request_of(w, asset).await;
    assert_eq!(
        r.effective_at - r.requested_at,
        i64::from(DEFAULT_TAKE_OVER_DELAY_SECS)
    );
    let buyer_token = w.token_account(&buyer.pubkey(), 0).await;
    let withdraw = g.withdraw(w, &buyer.pubkey(), &[], &buyer_token);
    assert_code(
        send(&mut w.ctx, &[withdraw], &[buyer]).await,
        v(V::RecoveryNotSet),
    );
}

/// L-2: the seller's guard (a week's delay, its recovery key) survived a completed take-over
/// before the fix; now the completion resets it.
#[tokio::test]
async fn audit5_l2_a_completed_take_over_resets_the_delay_and_clears_the_recovery_key() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let (recovery, _) = guard_with_recovery(&mut w, &g).await;
    assert_eq!(guard_of(&mut w, &asset).await.recovery, recovery.pubkey());
    let (buyer, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    let r = request_of(&mut w, &asset).await;
    assert_eq!(r.effective_at - r.requested_at, 7 * 24 * 3600);
    w.set_time(r.effective_at).await;
    let complete = sdk().complete_take_over(&asset, &buyer.pubkey());
    send(&mut w.ctx, &[complete], &[]).await.unwrap();
    assert_guard_reset(&mut w, &asset, &buyer, &mut g).await;
}

/// L-2: the same when the seller's members accept the sale at once.
#[tokio::test]
async fn audit5_l2_an_accepted_take_over_resets_the_delay_and_clears_the_recovery_key() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    guard_with_recovery(&mut w, &g).await;
    let (buyer, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    let accept = sdk().accept_take_over(&g.lead(), &g.cosigners(), &asset, &buyer.pubkey());
    g.members_send(&mut w, accept).await.unwrap();
    assert_guard_reset(&mut w, &asset, &buyer, &mut g).await;
}

// ---------------------------------------------------------------------------------------
// L-3: a burned asset.
// ---------------------------------------------------------------------------------------

/// MPL Core's `BurnV1` (tag 12, no compression proof) of `asset` in `collection`, signed by
/// its owner, who pays.
fn burn_v1(asset: &Pubkey, collection: &Pubkey, owner: &Pubkey) -> Instruction {
    let absent = AccountMeta::new_readonly(ids::MPL_CORE, false);
    Instruction {
        program_id: ids::MPL_CORE,
        accounts: vec![
            AccountMeta::new(*asset, false),
            AccountMeta::new(*collection, false),
            AccountMeta::new(*owner, true),
            absent.clone(),
            absent.clone(),
            absent,
        ],
        data: vec![12, 0],
    }
}

/// What the members in force can still do for an agent whose asset is gone: pause it, cancel
/// the pending request, withdraw the vault to the recovery key (and nowhere else); nothing
/// that needs a current authority, and the request can never take effect.
async fn assert_members_protect_a_burned_agent(
    w: &mut World,
    g: &Guarded,
    buyer: &Keypair,
    recovery_token: &Pubkey,
) {
    let asset = g.agent.asset();
    let pause = sdk().set_killswitch(&g.lead(), &g.cosigners(), &asset, true);
    g.members_send(w, pause).await.unwrap();
    let ks: KillSwitchState = fetch(&mut w.ctx, &sdk().pda.killswitch(&asset))
        .await
        .unwrap();
    assert!(ks.paused);

    let r = request_of(w, &asset).await;
    w.set_time(r.effective_at).await;
    let complete = sdk().complete_take_over(&asset, &buyer.pubkey());
    assert_code(
        send(&mut w.ctx, &[complete], &[]).await,
        v(V::TakeOverStale),
    );
    let cancel = sdk().cancel_take_over(&g.lead(), &g.cosigners(), &asset, &buyer.pubkey());
    g.members_send(w, cancel).await.unwrap();
    assert!(
        raw_account(&mut w.ctx, &sdk().pda.take_over_request(&asset))
            .await
            .is_none()
    );

    let policy = sdk().init_policy(
        &g.lead(),
        &g.cosigners(),
        &asset,
        5,
        open_policy(w.mint),
        PolicyRules::default(),
        0,
    );
    assert_code(g.members_send(w, policy).await, v(V::AuthorityStale));
    let elsewhere = w.token_account(&g.lead(), 0).await;
    let to_member = g.withdraw(w, &g.lead(), &g.cosigners(), &elsewhere);
    assert_code(
        g.members_send(w, to_member).await,
        v(V::WithdrawalNotToRecovery),
    );
    let to_recovery = g.withdraw(w, &g.lead(), &g.cosigners(), recovery_token);
    g.members_send(w, to_recovery).await.unwrap();
    assert_eq!(w.token_balance(recovery_token).await, FUNDS);
    assert_eq!(w.token_balance(&g.vault).await, 0);
    assert_eq!(w.token_balance(&elsewhere).await, 0);
}

/// L-3, on the real MPL Core: the buyer asks to take over and burns the asset, which leaves
/// a 1-byte account MPL Core owns. Before the fix every reading of the live owner failed
/// (`AgentAssetInvalid`), so the members could neither pause, cancel nor withdraw: the vault
/// was frozen for good. Now a burned asset makes the authority not current, no more.
#[tokio::test]
async fn audit5_l3_members_protect_an_agent_whose_asset_was_burned_on_real_mpl_core() {
    let Some(externals) = trust_gate_program_tests::externals::or_skip() else {
        return;
    };
    let mut w = World::on_real(&externals).await;
    assert!(w.is_real());
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let (_, recovery_token) = guard_with_recovery(&mut w, &g).await;
    let (buyer, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;

    let burn = burn_v1(&asset, &w.collection.pubkey(), &buyer.pubkey());
    send(&mut w.ctx, &[burn], &[&buyer]).await.unwrap();
    let burned = raw_account(&mut w.ctx, &asset).await.unwrap();
    assert_eq!(
        (burned.owner, burned.data.as_slice()),
        (ids::MPL_CORE, &[0u8][..])
    );

    assert_members_protect_a_burned_agent(&mut w, &g, &buyer, &recovery_token).await;
}

/// L-3: the same when the asset's address holds an empty account of the system program (an
/// asset closed outright).
#[tokio::test]
async fn audit5_l3_members_protect_an_agent_whose_asset_account_is_empty() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let (_, recovery_token) = guard_with_recovery(&mut w, &g).await;
    let (buyer, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    w.ctx.set_account(
        &asset,
        &AccountSharedData::new(0, 0, &anchor_lang::system_program::ID),
    );
    assert_members_protect_a_burned_agent(&mut w, &g, &buyer, &recovery_token).await;
}

// ---------------------------------------------------------------------------------------
// I-3: a hand-over voids the earlier authority's approvals.
// ---------------------------------------------------------------------------------------

const APPROVAL_THRESHOLD: u64 = 50;

/// I-3: the seller approves a payment above its policy's approval threshold, sells the
/// agent, and its members accept the buyer's take-over. Before the fix the seller's approval
/// still passed the payment for up to a week; now the hand-over voided it: the decision and
/// the settlement ask for an approval again, the approval stands unused, nothing moves. The
/// buyer's own approval of the same terms then passes.
#[tokio::test]
async fn audit5_i3_a_hand_over_voids_the_approvals_given_before_it() {
    let mut w = World::new().await;
    let mut payer = w
        .payer_with_limits_approved(
            3,
            open_policy(w.mint),
            PolicyRules::default(),
            APPROVAL_THRESHOLD,
        )
        .await;
    let payee = w.payee(3, None).await;
    let asset = payer.asset();
    let seller = payer.owner.insecure_clone();
    let terms = ApprovalTerms {
        payer_asset: asset,
        payee_asset: payee.asset(),
        mint: w.mint,
        amount: APPROVAL_THRESHOLD + 10,
        policy_id: 1,
    };
    let approve = sdk().approve_payment(&seller.pubkey(), &[], terms, w.now + 6 * 24 * 3600);
    send(&mut w.ctx, &[approve], &[&seller]).await.unwrap();
    let approval = sdk().pda.approval(&terms);
    assert_eq!(
        decide_with(&mut w, &payer, &payee, terms.amount, &approval).await,
        Decision::Allow
    );

    let buyer = funded_keypair(&mut w.ctx).await;
    w.transfer_asset(&mut payer, buyer.insecure_clone())
        .await
        .unwrap();
    request(&mut w, &asset, &buyer).await;
    let accept = sdk().accept_take_over(&seller.pubkey(), &[], &asset, &buyer.pubkey());
    send(&mut w.ctx, &[accept], &[&seller]).await.unwrap();
    let buyer_token = w.token_account(&buyer.pubkey(), 1_000).await;

    assert_eq!(
        decide_with(&mut w, &payer, &payee, terms.amount, &approval).await,
        Decision::RequireApproval
    );
    assert_eq!(
        settle_with(
            &mut w,
            &payer,
            &payee,
            terms.amount,
            &approval,
            &seller.pubkey()
        )
        .await,
        Err(Some(g(G::ApprovalRequired)))
    );
    let stale: PaymentApproval = fetch(&mut w.ctx, &approval).await.unwrap();
    assert_eq!(stale.terms(), terms);
    let payee_token = w.token_account(&payee.owner.pubkey(), 0).await;
    assert_eq!(w.token_balance(&buyer_token).await, 1_000);
    assert_eq!(w.token_balance(&payee_token).await, 0);

    // The seller's member takes its rent back; the buyer approves the same terms.
    let close = sdk().close_approval(&seller.pubkey(), &approval, &seller.pubkey());
    send(&mut w.ctx, &[close], &[&seller]).await.unwrap();
    let approve = sdk().approve_payment(&buyer.pubkey(), &[], terms, w.now + 6 * 24 * 3600);
    send(&mut w.ctx, &[approve], &[&buyer]).await.unwrap();
    settle_with(
        &mut w,
        &payer,
        &payee,
        terms.amount,
        &approval,
        &buyer.pubkey(),
    )
    .await
    .unwrap();
    assert!(raw_account(&mut w.ctx, &approval).await.is_none());
    assert_eq!(w.token_balance(&buyer_token).await, 1_000 - terms.amount);
    assert_eq!(w.token_balance(&payee_token).await, terms.amount);
}

/// The read-only decision of `amount` with `approval`.
async fn decide_with(
    w: &mut World,
    payer: &Agent,
    payee: &Agent,
    amount: u64,
    approval: &Pubkey,
) -> Decision {
    let mut ix = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        amount,
        w.mint,
        1,
        Attestations::default(),
    );
    ix.accounts
        .push(AccountMeta::new_readonly(*approval, false));
    w.simulate_decision(ix).await
}

/// Settles `amount` with `approval` and its rent payer; the custom error code on failure.
async fn settle_with(
    w: &mut World,
    payer: &Agent,
    payee: &Agent,
    amount: u64,
    approval: &Pubkey,
    rent_payer: &Pubkey,
) -> Result<(), Option<u32>> {
    let mut ixs = w.settlement(payer, payee, amount, payment_id()).await;
    ixs[0].accounts.push(AccountMeta::new(*approval, false));
    ixs[0].accounts.push(AccountMeta::new(*rent_payer, false));
    w.send_settlement(payer, &ixs)
        .await
        .map_err(|e| custom_code(&e))
}

// ---------------------------------------------------------------------------------------
// L-7: mints of more than 18 decimals.
// ---------------------------------------------------------------------------------------

/// A new SPL Token mint of `decimals`, minted by the world's mint authority.
async fn mint_of(w: &mut World, decimals: u8) -> Pubkey {
    let mint = Keypair::new();
    let payer = w.ctx.payer.pubkey();
    let rent = w.ctx.banks_client.get_rent().await.unwrap();
    let ixs = [
        system_instruction::create_account(
            &payer,
            &mint.pubkey(),
            rent.minimum_balance(spl_token::state::Mint::LEN),
            spl_token::state::Mint::LEN as u64,
            &TOKEN_PROGRAM_ID,
        ),
        spl_token::instruction::initialize_mint2(
            &TOKEN_PROGRAM_ID,
            &mint.pubkey(),
            &w.mint_authority.pubkey(),
            None,
            decimals,
        )
        .unwrap(),
    ];
    send(&mut w.ctx, &ixs, &[&mint]).await.unwrap();
    mint.pubkey()
}

/// L-7: a policy and a vault naming a mint of 19 decimals are refused by name;
/// 18 decimals are fine.
#[tokio::test]
async fn audit5_l7_a_policy_or_a_vault_refuses_a_mint_of_more_than_18_decimals() {
    let mut w = World::new().await;
    let g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let (eighteen, nineteen) = (mint_of(&mut w, 18).await, mint_of(&mut w, 19).await);

    let policy = sdk().init_policy(
        &g.lead(),
        &g.cosigners(),
        &asset,
        7,
        open_policy(nineteen),
        PolicyRules::default(),
        0,
    );
    assert_code(
        g.members_send(&mut w, policy).await,
        v(V::MintDecimalsTooLarge),
    );
    let vault = sdk().open_vault(
        &g.lead(),
        &g.cosigners(),
        &asset,
        &nineteen,
        &TOKEN_PROGRAM_ID,
    );
    assert_code(
        g.members_send(&mut w, vault).await,
        v(V::MintDecimalsTooLarge),
    );
    assert!(raw_account(&mut w.ctx, &sdk().pda.vault(&asset, &nineteen))
        .await
        .is_none());
    assert!(raw_account(&mut w.ctx, &sdk().pda.policy(&asset, 7))
        .await
        .is_none());

    let policy = sdk().init_policy(
        &g.lead(),
        &g.cosigners(),
        &asset,
        7,
        open_policy(eighteen),
        PolicyRules::default(),
        0,
    );
    g.members_send(&mut w, policy).await.unwrap();
    let vault = sdk().open_vault(
        &g.lead(),
        &g.cosigners(),
        &asset,
        &eighteen,
        &TOKEN_PROGRAM_ID,
    );
    g.members_send(&mut w, vault).await.unwrap();
}

/// L-7: a gated channel open in a mint of 19 decimals, under a policy for any mint, is
/// refused by name (before the fix it opened a channel whose close through the gate always
/// failed: its feedback cannot state more than 18 decimals); in 18 decimals it opens.
#[tokio::test]
async fn audit5_l7_a_gated_channel_refuses_a_mint_of_more_than_18_decimals() {
    let mut pt = trust_gate_localnet::native::program_test();
    trust_gate_program_tests::channels::add_to(&mut pt);
    let mut w = World::with_program_test(pt).await;
    w.advance_slots(1_000).await;
    let payer = w.payer_with_policy(3, open_policy(Pubkey::default())).await;
    let payee = w.payee(3, None).await;
    w.token_account(&channels::TREASURY_OWNER, 0).await;
    let deposit = 1_000_000;
    let cases = [(19, Some(g(G::MintDecimalsTooLarge))), (18, None)];
    for (salt, (decimals, expected)) in (1..).zip(cases) {
        let mint = mint_of(&mut w, decimals).await;
        let owner = payer.owner.pubkey();
        w.associated_account(&TOKEN_PROGRAM_ID, &mint, &owner, 10 * deposit)
            .await;
        w.associated_account(&TOKEN_PROGRAM_ID, &mint, &channels::TREASURY_OWNER, 0)
            .await;
        let open = Open {
            payer: owner,
            rent_payer: w.facilitator.pubkey(),
            payee: w.facilitator.pubkey(),
            mint,
            token_program: TokenProgram::SplToken,
            authorized_signer: Keypair::new().pubkey(),
            salt,
            deposit,
            grace_period: 3_600,
            open_slot: clock(&mut w.ctx).await.slot,
            splits: vec![Split {
                recipient: payee.owner.pubkey(),
                bps: channels::ALL_BPS,
            }],
        };
        let gate = sdk().gate_channel_open(
            &owner,
            &payer.asset(),
            &payee.asset(),
            &w.facilitator.pubkey(),
            &mint,
            deposit,
            1,
            &open.channel(),
            Attestations::default(),
        );
        let facilitator = w.facilitator.insecure_clone();
        let result = send(
            &mut w.ctx,
            &[gate, open.instruction()],
            &[&payer.owner, &facilitator],
        )
        .await;
        let opened = raw_account(&mut w.ctx, &open.channel()).await.is_some();
        match expected {
            Some(code) => {
                assert_code(result, code);
                assert!(!opened);
            }
            None => {
                result.unwrap();
                assert!(opened);
            }
        }
    }
}
