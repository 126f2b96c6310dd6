//! The holdback against the REAL registry and engine (docs/holdback.md): the tier the real
//! engine holds prices the share; a dispute's outcome is attached to the dispute's feedback by
//! the real registry's `append_response`, with the seal the registry gave that feedback.

use crate::fixtures::real_world;
use gate::holdback::HoldState;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::standin::chains;
use trust_gate_program_common::external::instructions::GiveFeedbackArgs;
use trust_gate_program_tests::holdback::{acceptance, accepts, schedule};
use trust_gate_program_tests::world::sdk;
use trust_gate_program_tests::{fund, payment_id};

const AMOUNT: u64 = 1_000_000;

#[tokio::test]
async fn holdback_on_the_real_registry_disputed_upheld_refunded_and_released() {
    let Some(mut w) = real_world().await else {
        return;
    };
    let arbiter = Keypair::new();
    let a = arbiter.pubkey();
    fund(&mut w.ctx, &a, 1_000_000_000).await;
    let judge = arbiter.insecure_clone();
    let h = w
        .held_parties(arbiter, Some(schedule(a)), 0, Some(acceptance(accepts(a))))
        .await;
    let payee = h.payee.asset();
    let [upheld, refunded, released] = [payment_id(), payment_id(), payment_id()];
    let mut held = Vec::new();
    for pay in [upheld, refunded, released] {
        let q = w
            .settle_held(&h, AMOUNT, pay)
            .await
            .unwrap()
            .expect("a quote");
        assert!(
            q.held > 0,
            "the real engine's fresh payee is held back from: {q:?}"
        );
        held.push(q.held);
    }
    assert_eq!(w.token_balance(&h.escrow).await, held.iter().sum::<u64>());

    // The dispute's feedback index and seal, as the real registry gave them.
    let agent = sdk().pda.agent_account(&payee);
    let count = |data: &[u8]| {
        trust_gate_program_common::external::agent_account::feedback_count(data).unwrap()
    };
    let before = count(
        &trust_gate_program_tests::raw_account(&mut w.ctx, &agent)
            .await
            .unwrap()
            .data,
    );
    w.dispute_held(&h, upheld).await.unwrap();
    let share = w.held_share(&upheld).await.unwrap();
    assert_eq!(share.state, HoldState::Disputed);
    assert_eq!(share.dispute_feedback_index, before);
    let dispute_feedback = GiveFeedbackArgs {
        value: 0,
        value_decimals: 0,
        score: Some(0),
        feedback_file_hash: None,
        tag1: "dispute".into(),
        tag2: String::new(),
        endpoint: String::new(),
        feedback_uri: "ipfs://dispute".into(),
    };
    assert_eq!(
        share.dispute_seal_hash,
        chains::seal_hash(&dispute_feedback)
    );

    // Upheld by the arbiter: back to the payer, answered in the real registry.
    let payer_before = w.token_balance(&h.payer_token()).await;
    let p = w.held_payment(&upheld).await;
    let ix = sdk().arbitrate_holdback(&p, true, &h.payer_token(), &[]);
    w.send(&[ix], &[&judge]).await.unwrap();
    assert_eq!(
        w.token_balance(&h.payer_token()).await,
        payer_before + held[0]
    );
    assert_eq!(w.response_count(&payee).await, 1);

    // Disputed, then refunded by the payee.
    w.dispute_held(&h, refunded).await.unwrap();
    let p = w.held_payment(&refunded).await;
    let owner = h.payee.owner.insecure_clone();
    let ix = sdk().refund_holdback(&owner.pubkey(), &p, &h.payer_token());
    w.send(&[ix], &[&owner]).await.unwrap();
    assert_eq!(
        w.held_share(&refunded).await.unwrap().state,
        HoldState::Refunded
    );
    assert_eq!(w.response_count(&payee).await, 2);

    // Undisputed: released to the payee after the hold.
    let hold_until = w.held_share(&released).await.unwrap().hold_until;
    w.set_time(hold_until).await;
    let p = w.held_payment(&released).await;
    w.send(&[sdk().release_holdback(&p, &h.destination)], &[])
        .await
        .unwrap();
    assert_eq!(
        w.held_share(&released).await.unwrap().state,
        HoldState::Released
    );
    assert_eq!(w.token_balance(&h.escrow).await, 0);
    assert_eq!(w.response_count(&payee).await, 2, "no dispute, no response");
}
