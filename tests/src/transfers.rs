//! An agent sold on MPL Core without the registry's `sync_owner`: the registry's cached owner
//! and agent wallet are then the seller's, and only the asset knows the buyer. The gate must
//! judge by the asset. One scenario, run by the programs suite on the stand-in and by the
//! `externals` suite on the real registry and MPL Core (and compared between the two).

use crate::world::{open_policy, Agent, World};
use crate::{custom_code, payment_id};
use gate::errors::GateError;
use solana_sdk::signature::{Keypair, Signer};

/// One step of the scenario: what it tried, and `Ok` or the failing custom error code.
pub type Step = (&'static str, Result<(), Option<u32>>);

/// What the scenario showed.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub steps: Vec<Step>,
    /// Token balances of the payee's seller, the seller's agent wallet and the buyer.
    pub balances: [u64; 3],
}

const AMOUNT: u64 = 1_000_000;

fn gate(e: GateError) -> Result<(), Option<u32>> {
    Err(Some(u32::from(e)))
}

/// What the gate must answer at each step.
pub fn expected() -> Vec<Step> {
    vec![
        (
            "the seller's wallet pays the payee's wallet before the sales",
            Ok(()),
        ),
        // MPL Core's NoApprovals: only the owner may transfer.
        ("a stranger transfers the payer's asset", Err(Some(26))),
        ("the payer's owner sells its asset", Ok(())),
        ("the payee's owner sells its asset", Ok(())),
        (
            "the payer's seller pays as the agent",
            gate(GateError::PayerSignerMismatch),
        ),
        (
            "the payer seller's agent wallet pays",
            gate(GateError::PayerSignerMismatch),
        ),
        (
            "the buyer pays the payee's seller",
            gate(GateError::RecipientMismatch),
        ),
        (
            "the buyer pays the payee seller's wallet",
            gate(GateError::RecipientMismatch),
        ),
        ("the buyer pays the payee's buyer", Ok(())),
    ]
}

/// Settles `AMOUNT` from `payer` (its `owner` signs) to `to`'s token account for `payee`.
async fn pay(w: &mut World, payer: &Agent, payee: &Agent, to: &Keypair) -> Result<(), Option<u32>> {
    let view = Agent {
        owner: to.insecure_clone(),
        asset: payee.asset.insecure_clone(),
    };
    w.token_account(&payer.owner.pubkey(), 10 * AMOUNT).await;
    let ixs = w.settlement(payer, &view, AMOUNT, payment_id()).await;
    w.send_settlement(payer, &ixs)
        .await
        .map_err(|e| custom_code(&e))
}

fn acting(owner: &Keypair, agent: &Agent) -> Agent {
    Agent {
        owner: owner.insecure_clone(),
        asset: agent.asset.insecure_clone(),
    }
}

pub async fn sold_agents(w: &mut World) -> Outcome {
    let mut payer = w.register_agent_with(true, false).await;
    w.init_authority(&payer).await;
    w.init_policy(&payer, 1, open_policy(w.mint)).await.unwrap();
    let mut payee = w.register_agent_with(true, false).await;
    let (payer_wallet, payee_wallet) = (Keypair::new(), Keypair::new());
    w.set_agent_wallet(&payer, &payer_wallet).await;
    w.set_agent_wallet(&payee, &payee_wallet).await;
    let payer_seller = payer.owner.insecure_clone();
    let payee_seller = payee.owner.insecure_clone();
    let (payer_buyer, payee_buyer) = (Keypair::new(), Keypair::new());
    crate::fund(&mut w.ctx, &payer_buyer.pubkey(), 1_000_000_000).await;

    let mut steps = Vec::new();
    let mut step = |what, r| steps.push((what, r));
    let r = pay(w, &acting(&payer_wallet, &payer), &payee, &payee_wallet).await;
    step(
        "the seller's wallet pays the payee's wallet before the sales",
        r,
    );
    let mut stolen = acting(&Keypair::new(), &payer);
    crate::fund(&mut w.ctx, &stolen.owner.pubkey(), 1_000_000_000).await;
    let r = w.transfer_asset(&mut stolen, Keypair::new()).await;
    step(
        "a stranger transfers the payer's asset",
        r.map_err(|e| custom_code(&e)),
    );
    let r = w
        .transfer_asset(&mut payer, payer_buyer.insecure_clone())
        .await;
    step(
        "the payer's owner sells its asset",
        r.map_err(|e| custom_code(&e)),
    );
    let r = w
        .transfer_asset(&mut payee, payee_buyer.insecure_clone())
        .await;
    step(
        "the payee's owner sells its asset",
        r.map_err(|e| custom_code(&e)),
    );

    let r = pay(w, &acting(&payer_seller, &payer), &payee, &payee_buyer).await;
    step("the payer's seller pays as the agent", r);
    let r = pay(w, &acting(&payer_wallet, &payer), &payee, &payee_buyer).await;
    step("the payer seller's agent wallet pays", r);
    let r = pay(w, &payer, &payee, &payee_seller).await;
    step("the buyer pays the payee's seller", r);
    let r = pay(w, &payer, &payee, &payee_wallet).await;
    step("the buyer pays the payee seller's wallet", r);
    let r = pay(w, &payer, &payee, &payee_buyer).await;
    step("the buyer pays the payee's buyer", r);

    let mut balances = [0; 3];
    for (b, owner) in balances
        .iter_mut()
        .zip([&payee_seller, &payee_wallet, &payee_buyer])
    {
        let account = w.token_account(&owner.pubkey(), 0).await;
        *b = w.token_balance(&account).await;
    }
    Outcome { steps, balances }
}

/// Checks what [`sold_agents`] showed: every step as [`expected`], and the payee's money
/// only where the gate let it go (once to the seller's wallet before the sale, once to the
/// buyer after).
pub fn check(o: &Outcome) {
    assert_eq!(o.steps, expected());
    assert_eq!(o.balances, [0, AMOUNT, AMOUNT]);
}
