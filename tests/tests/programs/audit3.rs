//! The third audit's findings (issue 23): each test runs the attack the audit describes and
//! fails without its fix. F-3's vault case is in `funding.rs`, beside the vault helpers.

use gate::errors::GateError as G;
use solana_sdk::instruction::AccountMeta;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::instructions::FeedbackArgs;
use trust_gate_program_tests::world::{open_policy, pda, sdk, Agent, World};
use trust_gate_program_tests::{assert_code, payment_id, send};

fn g(e: G) -> u32 {
    u32::from(e)
}

/// F-3: a payee agent whose recipient is the payer's own key (here its owner: the agent was
/// handed to the payer's owner) is paid into a second account of that key. Before the fix
/// the payment moved nothing between parties, yet was counted, logged as settled and rated.
#[tokio::test]
async fn audit3_f3_a_payment_to_the_payers_own_keys_is_refused() {
    let mut w = World::new().await;
    let (payer, _) = w.parties().await;
    let payee = w.payee(3, None).await;
    w.transfer_asset_to(&payee, &payer.owner.pubkey())
        .await
        .unwrap();
    let source = w.token_account(&payer.owner.pubkey(), 0).await;
    let destination = w.second_token_account(&payer.owner.pubkey()).await;
    let as_payee = Agent {
        owner: payer.owner.insecure_clone(),
        asset: payee.asset.insecure_clone(),
    };
    let ixs = [
        w.strict_ix(
            &payer,
            &as_payee,
            1_000_000,
            destination,
            Default::default(),
        ),
        w.transfer_ix(&source, &destination, &payer.owner.pubkey(), 1_000_000),
        w.emit_feedback_ix(payment_id(), &payee.asset(), 90, 1_000_000),
    ];
    assert_code(w.send_settlement(&payer, &ixs).await, g(G::PaymentToPayer));
    assert_eq!(w.counters(&payer).await, (0, 0, 0));

    // The agent wallet is the payer's key too: a payee paid to it is refused alike.
    let (payer, mut payee) = w.parties().await;
    let hot = Keypair::new();
    w.set_agent_wallet(&payer, &hot).await;
    w.transfer_asset_to(&payee, &hot.pubkey()).await.unwrap();
    payee.owner = hot.insecure_clone();
    let source = w.token_account(&payer.owner.pubkey(), 0).await;
    let destination = w.token_account(&hot.pubkey(), 0).await;
    let ixs = [
        w.strict_ix(&payer, &payee, 1_000_000, destination, Default::default()),
        w.transfer_ix(&source, &destination, &payer.owner.pubkey(), 1_000_000),
        w.emit_feedback_ix(payment_id(), &payee.asset(), 90, 1_000_000),
    ];
    assert_code(w.send_settlement(&payer, &ixs).await, g(G::PaymentToPayer));
}

/// F-7: the transfer carries an extra account marked as a signer (the payer's own key, which
/// signs the transaction anyway). SPL Token ignores it; a Token-2022 transfer hook would get
/// it with the payer's signature. Refused on chain, not only by our facilitator.
#[tokio::test]
async fn audit3_f7_a_signer_after_the_transfers_fourth_account_is_refused() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let mut ixs = w.settlement(&payer, &payee, 1_000_000, payment_id()).await;
    ixs[1]
        .accounts
        .push(AccountMeta::new_readonly(payer.owner.pubkey(), true));
    assert_code(
        w.send_settlement(&payer, &ixs).await,
        g(G::TransferExtraSigner),
    );
    // The same settlement without the extra signer goes through.
    ixs[1].accounts.pop();
    w.send_settlement(&payer, &ixs).await.unwrap();
}

/// F-4: a GateAuthority is anyone's to create, and before the fix `emit_feedback` on its own
/// rated any agent as the gate's PDA, which the registry cannot tell from a paying client:
/// the payee's own owner could rate its agent, and several authorities could push its tier.
/// Now feedback only ends a settlement of the same payee.
#[tokio::test]
async fn audit3_f4_feedback_outside_a_settlement_is_refused() {
    let mut w = World::new().await;
    let payee = w.payee(3, None).await;
    // The payee's own owner, as a facilitator of its own.
    let owner = payee.owner.insecure_clone();
    let ixs = [
        sdk().init_gate_authority(&owner.pubkey()),
        sdk().emit_feedback(
            &owner.pubkey(),
            &w.collection.pubkey(),
            FeedbackArgs {
                payment_id_hash: payment_id(),
                payee_asset: payee.asset(),
                score: 100,
                value: 1,
                value_decimals: 6,
                tag1: "x402".into(),
                tag2: String::new(),
                endpoint: String::new(),
                feedback_uri: String::new(),
            },
        ),
    ];
    assert_code(
        send(&mut w.ctx, &ixs, &[&owner]).await,
        g(G::FeedbackNotSettled),
    );
    // The world's facilitator alone, for any payee: refused alike.
    let ix = w.emit_feedback_ix(payment_id(), &payee.asset(), 100, 1);
    let facilitator = w.facilitator.insecure_clone();
    assert_code(
        send(&mut w.ctx, &[ix], &[&facilitator]).await,
        g(G::FeedbackNotSettled),
    );
}

/// F-4, through a settlement: two agents of one owner, each with its own agent wallet. The
/// payer's wallet pays the payee's wallet: no key is both the payer's and the payee's
/// recipient (F-3 lets it pass), but the owner would rate its own agent. Refused.
#[tokio::test]
async fn audit3_f4_agents_of_one_owner_cannot_pay_and_rate_each_other() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let owner = payer.owner.insecure_clone();
    w.transfer_asset_to(&payee, &owner.pubkey()).await.unwrap();
    let payee = Agent {
        owner: owner.insecure_clone(),
        asset: payee.asset.insecure_clone(),
    };
    let (payer_wallet, payee_wallet) = (Keypair::new(), Keypair::new());
    w.set_agent_wallet(&payer, &payer_wallet).await;
    w.set_agent_wallet(&payee, &payee_wallet).await;
    let as_wallet = Agent {
        owner: payer_wallet.insecure_clone(),
        asset: payer.asset.insecure_clone(),
    };
    let to_wallet = Agent {
        owner: payee_wallet.insecure_clone(),
        asset: payee.asset.insecure_clone(),
    };
    w.token_account(&payer_wallet.pubkey(), 10_000_000).await;
    let ixs = w
        .settlement(&as_wallet, &to_wallet, 1_000_000, payment_id())
        .await;
    assert_code(w.send_settlement(&as_wallet, &ixs).await, g(G::SelfDealing));
    assert_eq!(w.counters(&payer).await, (0, 0, 0));
}

/// F-5: the facilitator had to co-sign every dispute, so it could veto disputes of payments it
/// settled. Now the payer disputes alone, paying for the record; a stranger still cannot.
#[tokio::test]
async fn audit3_f5_the_payer_disputes_without_the_facilitator() {
    let mut w = World::new().await;
    let (payer, payee) = w.parties().await;
    let pay = payment_id();
    let ixs = w.settlement(&payer, &payee, 1_000_000, pay).await;
    w.send_settlement(&payer, &ixs).await.unwrap();
    let f = w.facilitator.pubkey();
    let alone = |who: &Keypair| {
        sdk().dispute_payment(
            &who.pubkey(),
            &f,
            &who.pubkey(),
            &w.collection.pubkey(),
            pay,
            &payee.asset(),
            [7; 32],
            String::new(),
        )
    };
    let stranger = trust_gate_program_tests::funded_keypair(&mut w.ctx).await;
    let ix = alone(&stranger);
    assert_code(
        trust_gate_program_tests::send_tx(&mut w.ctx, &[ix], &stranger, &[]).await,
        g(G::NotPaymentPayer),
    );
    let ix = alone(&payer.owner);
    let before = w.ctx.banks_client.get_balance(f).await.unwrap();
    trust_gate_program_tests::send_tx(&mut w.ctx, &[ix], &payer.owner, &[])
        .await
        .unwrap();
    let record: gate::state::DisputeRecord =
        trust_gate_program_tests::fetch(&mut w.ctx, &pda::dispute(&f, &pay))
            .await
            .unwrap();
    assert_eq!(record.disputed_by, payer.owner.pubkey());
    // The facilitator neither signed nor paid.
    assert_eq!(w.ctx.banks_client.get_balance(f).await.unwrap(), before);
}

fn v(e: policy_vault::errors::PolicyVaultError) -> u32 {
    u32::from(e)
}

/// F-2: the agent (its MPL Core asset) is sold. Before the fix the seller's authority kept
/// its withdraw, kill-switch and policy rights, so deposits made after the sale could be
/// withdrawn by the seller. Now the seller's members keep only what protects the agent until
/// the buyer's take-over takes effect (audit 4's G-1: a withdrawal only to the recovery key
/// they named, here none), and then the buyer governs it, vault and funds included.
#[tokio::test]
async fn audit3_f2_a_sold_agents_authority_passes_to_its_buyer() {
    use policy_vault::errors::PolicyVaultError as V;
    let mut w = World::new().await;
    let mut agent = w.register_agent().await;
    w.init_authority(&agent).await;
    let seller = agent.owner.insecure_clone();
    let (mint, program) = (w.mint, anchor_spl::token::ID);
    let setup = [
        sdk().open_vault(&seller.pubkey(), &[], &agent.asset(), &mint, &program),
        sdk().init_killswitch(&seller.pubkey(), &agent.asset()),
    ];
    send(&mut w.ctx, &setup, &[&seller]).await.unwrap();
    let vault = sdk().pda.vault(&agent.asset(), &mint);
    let buyer = trust_gate_program_tests::funded_keypair(&mut w.ctx).await;
    w.transfer_asset(&mut agent, buyer.insecure_clone())
        .await
        .unwrap();
    // A deposit after the sale.
    w.deposit(&program, &mint, &vault, 5_000_000).await;

    let seller_token = w.token_account(&seller.pubkey(), 0).await;
    let withdraw = |who: &Keypair, to: &solana_sdk::pubkey::Pubkey| {
        sdk().withdraw(
            &who.pubkey(),
            &[],
            &agent.asset(),
            &mint,
            &program,
            to,
            5_000_000,
        )
    };
    assert_code(
        send(&mut w.ctx, &[withdraw(&seller, &seller_token)], &[&seller]).await,
        v(V::RecoveryNotSet),
    );
    // The seller's members keep the kill switch until the take-over takes effect, but no
    // policy rights.
    let pause = sdk().set_killswitch(&seller.pubkey(), &[], &agent.asset(), true);
    send(&mut w.ctx, &[pause], &[&seller]).await.unwrap();
    let policy = w.init_policy_ix(&seller.pubkey(), &agent.asset(), 9, open_policy(mint));
    assert_code(
        send(&mut w.ctx, &[policy], &[&seller]).await,
        v(V::AuthorityStale),
    );
    // The seller cannot take it over; the buyer cannot act before it does.
    let take = |who: &Keypair| {
        sdk().request_take_over(&who.pubkey(), &agent.asset(), vec![who.pubkey()], 1)
    };
    assert_code(
        send(&mut w.ctx, &[take(&seller)], &[&seller]).await,
        v(V::NotAgentOwner),
    );
    let buyer_token = w.token_account(&buyer.pubkey(), 0).await;
    assert_code(
        send(&mut w.ctx, &[withdraw(&buyer, &buyer_token)], &[&buyer]).await,
        v(V::NotAuthorityMember),
    );
    send(&mut w.ctx, &[take(&buyer)], &[&buyer]).await.unwrap();
    w.advance_time(i64::from(policy_vault::state::DEFAULT_TAKE_OVER_DELAY_SECS))
        .await;
    let complete = sdk().complete_take_over(&agent.asset(), &buyer.pubkey());
    send(&mut w.ctx, &[complete], &[]).await.unwrap();
    w.ctx.get_new_latest_blockhash().await.unwrap();
    assert_code(
        send(&mut w.ctx, &[take(&buyer)], &[&buyer]).await,
        v(V::AuthorityCurrent),
    );
    // The vault and its funds are the buyer's to govern now; the seller's members are gone.
    let resume = sdk().set_killswitch(&seller.pubkey(), &[], &agent.asset(), false);
    assert_code(
        send(&mut w.ctx, &[resume], &[&seller]).await,
        v(V::NotAuthorityMember),
    );
    send(&mut w.ctx, &[withdraw(&buyer, &buyer_token)], &[&buyer])
        .await
        .unwrap();
    assert_eq!(w.token_balance(&buyer_token).await, 5_000_000);
    assert_eq!(w.token_balance(&seller_token).await, 0);
}
