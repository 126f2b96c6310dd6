//! The whole product on the REAL registry, engine and MPL Core: the localnet as `trust-gate up
//! --external-programs DIR` starts it (their SBF builds at their program ids, initialized by
//! their own instructions), the demo world seeded through their instructions (the tiers
//! written with the localnet-only `localnet_setAccount`: the real engine raises them only over
//! weeks), then the demo's answers for tiers 0, 1 and 3 and a payment by the paying client
//! that `trust-gate pay` runs, whose feedback the real registry records.

use crate::fixture;
use crate::services::{self, header, Services};
use solana_sdk::signature::Signature;
use trust_gate_client::ids::external;
use trust_gate_client::units;
use trust_gate_facilitator::Config;
use trust_gate_localnet::LocalnetConfig;
use trust_gate_pay::exact::PayOutcome;

/// The services on a localnet running the real programs (payment-channels among them), with
/// the facilitator's configuration edited; `None` (skipped, said once) without the fixtures.
pub(crate) async fn real(edit: impl FnOnce(&mut Config)) -> Option<Services> {
    let real = trust_gate_program_tests::externals::or_skip()?;
    assert!(
        real.channels.is_some(),
        "the payment-channels build is beside the registry's fixtures"
    );
    let config = LocalnetConfig {
        externals: Some(real),
        ..LocalnetConfig::ephemeral()
    };
    Some(services::start_on_with(fixture::seeded_with(config).await, edit).await)
}

#[tokio::test]
async fn up_with_the_real_registry_pays_the_demo_through_it() {
    let Some(s) = real(|_| {}).await else {
        return;
    };
    let w = &s.env.world;
    // The registry and engine at their ids are the real, upgradeable programs.
    for id in [
        external::DEVNET_AGENT_REGISTRY,
        external::DEVNET_REPUTATION_ENGINE,
    ] {
        let program = s.env.rpc.get_account(&id).await.unwrap();
        assert_eq!(
            program.owner.to_string(),
            "BPFLoaderUpgradeab1e11111111111111111111111"
        );
    }

    // Tiers 0 and 1 are refused by the service's acceptance policy; tier 3 is challenged.
    for tier in [0, 1] {
        let r = s.protected_as(&w.payer(tier).unwrap().asset()).await;
        assert_eq!(r.status(), 402);
        assert_eq!(header(&r, "X-Gate-Decision"), "Deny");
        assert_eq!(header(&r, "X-Payment-Reason-Code"), "6");
    }
    let payer = w.payer(3).unwrap();
    let outcome = s.pay(None, &payer.owner).await;
    let PayOutcome::Paid { receipt, .. } = outcome else {
        panic!("{outcome:?}")
    };

    // One transaction, in which the real registry took the feedback.
    let sig: Signature = receipt.parse().unwrap();
    let (meta, _) = crate::settle::landed(&s, &sig).await;
    assert!(meta.err.is_none());
    let logs: Vec<String> = Option::from(meta.log_messages).unwrap();
    let registry = external::DEVNET_AGENT_REGISTRY.to_string();
    let feedback = logs.windows(2).any(|l| {
        l[0].starts_with(&format!("Program {registry} invoke"))
            && l[1] == "Program log: Instruction: GiveFeedback"
    });
    assert!(feedback, "the real registry's GiveFeedback: {logs:#?}");
    // And the real engine rated the service, which has stats.
    let engine = external::DEVNET_REPUTATION_ENGINE.to_string();
    assert!(
        logs.windows(2)
            .any(|l| l[0].starts_with(&format!("Program {engine} invoke"))
                && l[1] == "Program log: Instruction: UpdateStats"),
        "{logs:#?}"
    );
}

/// The facilitator's close of a channel uses at most four fifths of the unit limit it asks
/// for, on the real registry and engine (the bump searches the keys fix vary it by 1 500 a
/// try), plain and gated: an `upto` claim of the demo's metered route, three of each, printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_close_fits_its_unit_limit() {
    let Some(s) = real(|_| {}).await else {
        return;
    };
    let engine = external::DEVNET_REPUTATION_ENGINE.to_string();
    for gated in [false, true] {
        let limit = units::channel_close(gated);
        for _ in 0..3 {
            let paid = crate::paid_once::paying_at(&s, s.d("/metered?units=2"), gated)
                .upto()
                .await
                .unwrap();
            let sig: Signature = paid.transaction().unwrap().parse().unwrap();
            let (meta, _) = crate::settle::landed(&s, &sig).await;
            let used: u64 = Option::from(meta.compute_units_consumed).unwrap();
            let logs: Vec<String> = Option::from(meta.log_messages).unwrap();
            let rated = logs
                .iter()
                .any(|l| l.starts_with(&format!("Program {engine} invoke")));
            assert_eq!(
                rated, gated,
                "the engine rates the payee of a gated close only"
            );
            println!("channel close, gated {gated}: {used} units of {limit}");
            assert!(
                used <= u64::from(limit) * 4 / 5,
                "gated {gated}: {used} units leave less than a fifth of {limit}"
            );
        }
    }
}
