//! The SDK's simulation, builders, composer and decoders on the localnet.

use crate::fixture::seeded;
use solana_sdk::signature::Signer;
use trust_gate_client::decode::{Decision, DenyReason};
use trust_gate_client::{gate_payment, Caller, PaymentQuery};
use trust_gate_migrations::demo;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_world_decisions_by_simulation_with_a_public_key_only() {
    let env = seeded().await;
    let w = &env.world;
    for (tier, expected) in [
        (0, Decision::Deny(DenyReason::CounterpartyTierBelowMin)),
        (1, Decision::Deny(DenyReason::CounterpartyTierBelowMin)),
        (3, Decision::Allow),
    ] {
        let payer = w.payer(tier).unwrap();
        let q = PaymentQuery {
            payer_asset: payer.asset(),
            payee_asset: w.service.asset(),
            amount: demo::PRICE,
            mint: w.mint(),
            policy_id: demo::POLICY_ID,
        };
        // A caller that has never held a lamport.
        let nobody = solana_sdk::pubkey::Pubkey::new_unique();
        let d = gate_payment(&env.rpc, &env.b, Caller::Pubkey(nobody), q)
            .await
            .unwrap();
        assert_eq!(d, expected, "tier {tier}");
        let d = gate_payment(&env.rpc, &env.b, Caller::Keypair(&payer.owner), q)
            .await
            .unwrap();
        assert_eq!(d, expected, "tier {tier}, signed");
    }
    let _ = w.facilitator.pubkey();
}
