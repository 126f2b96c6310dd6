//! The fourth audit's on-chain findings (issue 32): each test runs the attack the audit
//! describes and fails without its fix. I-1 (the token-account reader) is a unit test of
//! `trust_gate_program_common::token_account`; the facilitator's findings are in the
//! services suite.

use gate::errors::GateError as G;
use policy_vault::errors::PolicyVaultError as V;
use policy_vault::state::{TakeOverRequest, DEFAULT_TAKE_OVER_DELAY_SECS};
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_program_tests::world::{open_policy, sdk, Agent, World};
use trust_gate_program_tests::{assert_code, fetch, funded_keypair, payment_id, raw_account, send};

fn v(e: V) -> u32 {
    u32::from(e)
}

/// An agent whose authority is two members (neither is the owner) with threshold 2, an open
/// vault holding `FUNDS` of the world's mint, and a kill switch.
pub(super) struct Guarded {
    pub(super) agent: Agent,
    pub(super) members: [Keypair; 2],
    pub(super) vault: Pubkey,
}

pub(super) const FUNDS: u64 = 7_000_000;

impl Guarded {
    pub(super) async fn new(w: &mut World) -> Guarded {
        let agent = w.register_agent().await;
        let members = [
            funded_keypair(&mut w.ctx).await,
            funded_keypair(&mut w.ctx).await,
        ];
        let ix = sdk().init_authority(
            &agent.owner.pubkey(),
            &agent.asset(),
            members.iter().map(|m| m.pubkey()).collect(),
            2,
        );
        send(&mut w.ctx, &[ix], &[&agent.owner]).await.unwrap();
        let (lead, other) = (members[0].pubkey(), members[1].pubkey());
        let setup = [
            sdk().open_vault(
                &lead,
                &[other],
                &agent.asset(),
                &w.mint,
                &anchor_spl::token::ID,
            ),
            sdk().init_killswitch(&lead, &agent.asset()),
        ];
        send(&mut w.ctx, &setup, &[&members[0], &members[1]])
            .await
            .unwrap();
        let (mint, vault) = (w.mint, sdk().pda.vault(&agent.asset(), &w.mint));
        w.deposit(&anchor_spl::token::ID, &mint, &vault, FUNDS)
            .await;
        Guarded {
            agent,
            members,
            vault,
        }
    }

    /// Both members sign `ix` (built with the first as lead and the second as co-signer).
    pub(super) async fn members_send(
        &self,
        w: &mut World,
        ix: Instruction,
    ) -> Result<(), solana_program_test::BanksClientError> {
        w.ctx.get_new_latest_blockhash().await.unwrap();
        send(&mut w.ctx, &[ix], &[&self.members[0], &self.members[1]]).await
    }

    pub(super) fn lead(&self) -> Pubkey {
        self.members[0].pubkey()
    }

    pub(super) fn cosigners(&self) -> [Pubkey; 1] {
        [self.members[1].pubkey()]
    }

    pub(super) fn withdraw(
        &self,
        w: &World,
        member: &Pubkey,
        cosigners: &[Pubkey],
        to: &Pubkey,
    ) -> Instruction {
        sdk().withdraw(
            member,
            cosigners,
            &self.agent.asset(),
            &w.mint,
            &anchor_spl::token::ID,
            to,
            FUNDS,
        )
    }
}

/// The owner's second key, funded, with a token account of the world's mint.
pub(super) async fn second_key(w: &mut World) -> (Keypair, Pubkey) {
    let key = funded_keypair(&mut w.ctx).await;
    let token = w.token_account(&key.pubkey(), 0).await;
    (key, token)
}

/// G-1: in ONE transaction the owner moves the agent's asset to a second key it holds,
/// takes the authority over as that key alone and empties the vault (or writes itself a
/// policy). Before the fix `take_over_authority` took effect at once and the k-of-n members
/// could not stop it. Now the take-over is a request that waits for its delay: the same
/// transaction fails, whatever it tries after the request, and nothing moves.
#[tokio::test]
async fn audit4_g1_the_owner_cannot_take_the_authority_over_from_itself_in_one_transaction() {
    let mut w = World::new().await;
    let g = Guarded::new(&mut w).await;
    let (second, second_token) = second_key(&mut w).await;
    let asset = g.agent.asset();
    let owner = g.agent.owner.insecure_clone();
    let mv = trust_gate_localnet::standin::core::transfer_v1(
        &asset,
        &w.collection.pubkey(),
        &owner.pubkey(),
        &second.pubkey(),
    );
    let request = sdk().request_take_over(&second.pubkey(), &asset, vec![second.pubkey()], 1);
    let complete = sdk().complete_take_over(&asset, &second.pubkey());
    let drain = g.withdraw(&w, &second.pubkey(), &[], &second_token);
    // A policy without caps of its own, as the second key alone.
    let open = sdk().init_policy(
        &second.pubkey(),
        &[],
        &asset,
        9,
        open_policy(w.mint),
        Default::default(),
        0,
    );
    // The request goes through; its completion is what the delay refuses.
    assert_code(
        send(
            &mut w.ctx,
            &[mv.clone(), request.clone(), complete, drain.clone()],
            &[&owner, &second],
        )
        .await,
        v(V::TakeOverNotYetEffective),
    );
    // Without completing it, the second key is no member of anything.
    assert_code(
        send(
            &mut w.ctx,
            &[mv.clone(), request.clone(), drain],
            &[&owner, &second],
        )
        .await,
        v(V::NotAuthorityMember),
    );
    assert_code(
        send(&mut w.ctx, &[mv, request, open], &[&owner, &second]).await,
        v(V::AuthorityStale),
    );
    assert_eq!(w.token_balance(&g.vault).await, FUNDS);
    assert_eq!(w.token_balance(&second_token).await, 0);
}

/// G-1, within the delay: the request stands, the new owner moves nothing, and the members
/// in force protect the agent: they pause it and withdraw to the recovery key they named
/// before the request, and to nowhere else; they change no policy.
#[tokio::test]
async fn audit4_g1_within_the_delay_the_new_owner_moves_nothing_and_the_members_protect_the_agent()
{
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let recovery = funded_keypair(&mut w.ctx).await;
    let recovery_token = w.token_account(&recovery.pubkey(), 0).await;
    let guard = sdk().set_authority_guard(
        &g.lead(),
        &g.cosigners(),
        &asset,
        DEFAULT_TAKE_OVER_DELAY_SECS,
        &recovery.pubkey(),
    );
    g.members_send(&mut w, guard).await.unwrap();

    let (second, second_token) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, second.insecure_clone())
        .await
        .unwrap();
    let request = sdk().request_take_over(&second.pubkey(), &asset, vec![second.pubkey()], 1);
    send(&mut w.ctx, std::slice::from_ref(&request), &[&second])
        .await
        .unwrap();
    let pending: TakeOverRequest = fetch(&mut w.ctx, &sdk().pda.take_over_request(&asset))
        .await
        .unwrap();
    assert_eq!(
        pending.effective_at - pending.requested_at,
        i64::from(DEFAULT_TAKE_OVER_DELAY_SECS)
    );
    // Asking again does not restart the clock.
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_code(
        send(&mut w.ctx, &[request], &[&second]).await,
        v(V::TakeOverAlreadyRequested),
    );

    w.advance_time(i64::from(DEFAULT_TAKE_OVER_DELAY_SECS) - 60)
        .await;
    let complete = sdk().complete_take_over(&asset, &second.pubkey());
    assert_code(
        send(&mut w.ctx, &[complete], &[]).await,
        v(V::TakeOverNotYetEffective),
    );
    let drain = g.withdraw(&w, &second.pubkey(), &[], &second_token);
    assert_code(
        send(&mut w.ctx, &[drain], &[&second]).await,
        v(V::NotAuthorityMember),
    );

    // The members: no policy, no withdrawal but to the recovery key, the kill switch yes.
    let policy = sdk().init_policy(
        &g.lead(),
        &g.cosigners(),
        &asset,
        5,
        open_policy(w.mint),
        Default::default(),
        0,
    );
    assert_code(g.members_send(&mut w, policy).await, v(V::AuthorityStale));
    let elsewhere = w.token_account(&g.lead(), 0).await;
    let to_member = g.withdraw(&w, &g.lead(), &g.cosigners(), &elsewhere);
    assert_code(
        g.members_send(&mut w, to_member).await,
        v(V::WithdrawalNotToRecovery),
    );
    let pause = sdk().set_killswitch(&g.lead(), &g.cosigners(), &asset, true);
    g.members_send(&mut w, pause).await.unwrap();
    let to_recovery = g.withdraw(&w, &g.lead(), &g.cosigners(), &recovery_token);
    g.members_send(&mut w, to_recovery).await.unwrap();
    assert_eq!(w.token_balance(&recovery_token).await, FUNDS);
    assert_eq!(w.token_balance(&second_token).await, 0);
    assert_eq!(w.token_balance(&elsewhere).await, 0);
}

/// G-1: the members in force cancel a pending take-over; its rent goes back to whoever paid
/// it, and it can no longer take effect.
#[tokio::test]
async fn audit4_g1_the_members_cancel_a_pending_take_over() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let (second, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, second.insecure_clone())
        .await
        .unwrap();
    let request = sdk().request_take_over(&second.pubkey(), &asset, vec![second.pubkey()], 1);
    send(&mut w.ctx, &[request], &[&second]).await.unwrap();
    let address = sdk().pda.take_over_request(&asset);
    let before = w
        .ctx
        .banks_client
        .get_balance(second.pubkey())
        .await
        .unwrap();
    let rent = w.ctx.banks_client.get_balance(address).await.unwrap();
    assert!(rent > 0);

    // One member alone is not the threshold.
    let alone = sdk().cancel_take_over(&g.lead(), &[], &asset, &second.pubkey());
    assert_code(
        send(&mut w.ctx, &[alone], &[&g.members[0]]).await,
        v(V::InsufficientSigners),
    );
    let cancel = sdk().cancel_take_over(&g.lead(), &g.cosigners(), &asset, &second.pubkey());
    g.members_send(&mut w, cancel).await.unwrap();
    assert!(raw_account(&mut w.ctx, &address).await.is_none());
    assert_eq!(
        w.ctx
            .banks_client
            .get_balance(second.pubkey())
            .await
            .unwrap(),
        before + rent
    );
    w.advance_time(i64::from(DEFAULT_TAKE_OVER_DELAY_SECS) + 1)
        .await;
    let complete = sdk().complete_take_over(&asset, &second.pubkey());
    assert_code(
        send(&mut w.ctx, &[complete], &[]).await,
        u32::from(anchor_lang::error::ErrorCode::AccountNotInitialized),
    );
    // The members are still the agent's.
    let pause = sdk().set_killswitch(&g.lead(), &g.cosigners(), &asset, true);
    g.members_send(&mut w, pause).await.unwrap();
}

/// G-1, a genuine sale: once the delay has passed, anyone completes the buyer's take-over;
/// the buyer's members hold the authority, the vault included, and the seller's are gone.
/// The members may also accept a sale at once.
#[tokio::test]
async fn audit4_g1_a_buyer_holds_control_after_the_delay() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let (buyer, buyer_token) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, buyer.insecure_clone())
        .await
        .unwrap();
    let request = sdk().request_take_over(&buyer.pubkey(), &asset, vec![buyer.pubkey()], 1);
    send(&mut w.ctx, &[request], &[&buyer]).await.unwrap();
    w.advance_time(i64::from(DEFAULT_TAKE_OVER_DELAY_SECS))
        .await;
    // A third party (the test's fee payer, neither party) sends the completion; the request's
    // rent goes to the buyer, who paid it.
    let complete = sdk().complete_take_over(&asset, &buyer.pubkey());
    send(&mut w.ctx, &[complete], &[]).await.unwrap();
    assert!(
        raw_account(&mut w.ctx, &sdk().pda.take_over_request(&asset))
            .await
            .is_none()
    );

    let seller_pause = sdk().set_killswitch(&g.lead(), &g.cosigners(), &asset, true);
    assert_code(
        g.members_send(&mut w, seller_pause).await,
        v(V::NotAuthorityMember),
    );
    let withdraw = g.withdraw(&w, &buyer.pubkey(), &[], &buyer_token);
    send(&mut w.ctx, &[withdraw], &[&buyer]).await.unwrap();
    assert_eq!(w.token_balance(&buyer_token).await, FUNDS);

    // Another sale, which the (buyer's) members accept at once.
    let (next, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, next.insecure_clone())
        .await
        .unwrap();
    let request = sdk().request_take_over(&next.pubkey(), &asset, vec![next.pubkey()], 1);
    send(&mut w.ctx, &[request], &[&next]).await.unwrap();
    let accept = sdk().accept_take_over(&buyer.pubkey(), &[], &asset, &next.pubkey());
    send(&mut w.ctx, &[accept], &[&buyer]).await.unwrap();
    let policy = sdk().init_policy(
        &next.pubkey(),
        &[],
        &asset,
        3,
        open_policy(w.mint),
        Default::default(),
        0,
    );
    send(&mut w.ctx, &[policy], &[&next]).await.unwrap();
}

/// G-1: the delay and the recovery key are the threshold's, set only while the authority is
/// current (a pending hand-over cannot shorten its own wait or redirect the recovery), within
/// one hour and 90 days; a request waits the delay in force when it is made, and a request
/// whose new owner no longer owns the asset cannot take effect.
#[tokio::test]
async fn audit4_g1_the_guard_is_the_thresholds_and_a_stale_request_never_applies() {
    let mut w = World::new().await;
    let mut g = Guarded::new(&mut w).await;
    let asset = g.agent.asset();
    let none = Pubkey::default();
    for bad in [0, 3_599, 90 * 24 * 3600 + 1] {
        let ix = sdk().set_authority_guard(&g.lead(), &g.cosigners(), &asset, bad, &none);
        assert_code(
            g.members_send(&mut w, ix).await,
            v(V::TakeOverDelayOutOfRange),
        );
    }
    let alone = sdk().set_authority_guard(&g.lead(), &[], &asset, 7_200, &none);
    assert_code(
        send(&mut w.ctx, &[alone], &[&g.members[0]]).await,
        v(V::InsufficientSigners),
    );
    let two_hours = sdk().set_authority_guard(&g.lead(), &g.cosigners(), &asset, 7_200, &none);
    g.members_send(&mut w, two_hours).await.unwrap();

    let (first, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, first.insecure_clone())
        .await
        .unwrap();
    let longer = sdk().set_authority_guard(&g.lead(), &g.cosigners(), &asset, 86_400, &none);
    assert_code(g.members_send(&mut w, longer).await, v(V::AuthorityStale));
    let request = sdk().request_take_over(&first.pubkey(), &asset, vec![first.pubkey()], 1);
    send(&mut w.ctx, &[request], &[&first]).await.unwrap();

    // The asset moves on before the request takes effect: the first request cannot apply,
    // and the next owner's replaces it (its rent still owed to the first).
    let (next, _) = second_key(&mut w).await;
    w.transfer_asset(&mut g.agent, next.insecure_clone())
        .await
        .unwrap();
    w.advance_time(7_200).await;
    let stale = sdk().complete_take_over(&asset, &first.pubkey());
    assert_code(send(&mut w.ctx, &[stale], &[]).await, v(V::TakeOverStale));
    let request = sdk().request_take_over(&next.pubkey(), &asset, vec![next.pubkey()], 1);
    send(&mut w.ctx, &[request], &[&next]).await.unwrap();
    let pending: TakeOverRequest = fetch(&mut w.ctx, &sdk().pda.take_over_request(&asset))
        .await
        .unwrap();
    assert_eq!(
        (pending.new_owner, pending.rent_payer),
        (next.pubkey(), first.pubkey())
    );
    w.advance_time(7_200).await;
    let wrong_payer = sdk().complete_take_over(&asset, &next.pubkey());
    assert_code(
        send(&mut w.ctx, &[wrong_payer], &[]).await,
        v(V::RentPayerMismatch),
    );
    let complete = sdk().complete_take_over(&asset, &first.pubkey());
    send(&mut w.ctx, &[complete], &[]).await.unwrap();
    let policy = sdk().init_policy(
        &next.pubkey(),
        &[],
        &asset,
        3,
        open_policy(w.mint),
        Default::default(),
        0,
    );
    send(&mut w.ctx, &[policy], &[&next]).await.unwrap();
}

/// G-3: anyone with a facilitator authority of their own could make "settled" feedback
/// from a 1-unit transfer claiming a value of 10^12 (the registry records the value as
/// given). Now the feedback's value and decimals must be the transfer's amount and the
/// mint's decimals.
#[tokio::test]
async fn audit4_g3_feedback_claims_only_the_value_that_moved() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let pay = payment_id();
    let mut ixs = w.settlement(&payer, &payee, 1, pay).await;
    ixs[2] = w.emit_feedback_ix(pay, &payee.asset(), 100, 1_000_000_000_000);
    assert_code(
        w.send_settlement(&payer, &ixs).await,
        u32::from(G::FeedbackValueMismatch),
    );
    // The right value in other units is refused too.
    let mut args = gate::instructions::EmitFeedbackArgs {
        payment_id_hash: pay,
        facilitator: w.facilitator.pubkey(),
        payee_asset: payee.asset(),
        score: 100,
        value: 1,
        value_decimals: 0,
        tag1: String::new(),
        tag2: String::new(),
        endpoint: String::new(),
        feedback_uri: String::new(),
    };
    let data = |args: &gate::instructions::EmitFeedbackArgs| {
        anchor_lang::InstructionData::data(&gate::instruction::EmitFeedback { args: args.clone() })
    };
    ixs[2].data = data(&args);
    assert_code(
        w.send_settlement(&payer, &ixs).await,
        u32::from(G::FeedbackValueMismatch),
    );
    args.value_decimals = trust_gate_program_tests::world::DECIMALS;
    ixs[2].data = data(&args);
    w.send_settlement(&payer, &ixs).await.unwrap();
    assert_eq!(w.counters(&payer).await.2, 1);
}
