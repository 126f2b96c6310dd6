//! The demo resource: tier 0 and 1 are denied (6 CounterpartyTierBelowMin), tier 3 gets a
//! signed challenge, pays with the paying client and is served with a receipt.

use crate::services::{self, header};
use serde_json::Value;
use solana_sdk::signature::Signature;
use solana_sdk::signer::Signer;
use trust_gate_migrations::demo;
use trust_gate_pay::exact::{self as pay, PayOutcome};
use trust_gate_x402::{self as x402, GateExtension, PaymentRequired, SettlementResponse};

#[tokio::test]
async fn tiers_challenges_payment_and_receipt() {
    let s = services::start().await;
    let w = &s.env.world;

    // /health names the four counterparties (their funding too) and the price.
    let h: Value = s
        .http
        .get(s.d("/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(h["ok"], true);
    assert_eq!(h["price"]["amount"], demo::PRICE.to_string());
    assert_eq!(h["price"]["mint"], w.mint().to_string());
    assert_eq!(h["facilitator"], s.facilitator.url());
    let tiers: Vec<(u64, String, String)> = h["counterparties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["tier"].as_u64().unwrap(),
                c["asset"].as_str().unwrap().to_string(),
                c["funding"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(u64, String, String)> = w
        .payers
        .iter()
        .map(|p| {
            (
                u64::from(p.tier),
                p.asset().to_string(),
                p.funding.as_str().to_string(),
            )
        })
        .collect();
    assert_eq!(tiers, want);
    let funding: Vec<&str> = want.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(funding, ["wallet", "wallet", "wallet", "vault", "wallet"]);

    // Tiers 0 and 1: 402 Deny, no challenge.
    for tier in [0, 1] {
        let r = s.protected_as(&w.payer(tier).unwrap().asset()).await;
        assert_eq!(r.status(), 402);
        assert_eq!(header(&r, "X-Gate-Decision"), "Deny");
        assert_eq!(header(&r, "X-Payment-Reason-Code"), "6");
        assert_eq!(
            header(&r, "X-Payment-Reason-Name"),
            "CounterpartyTierBelowMin"
        );
        assert_eq!(header(&r, "PAYMENT-REQUIRED"), "");
        let payer = w.payer(tier).unwrap();
        let outcome = s.pay(Some(payer.asset()), &payer.owner).await;
        match outcome {
            PayOutcome::Refused {
                status,
                reason_code,
                reason_name,
                ..
            } => {
                assert_eq!((status, reason_code), (402, Some(6)));
                assert_eq!(reason_name.as_deref(), Some("CounterpartyTierBelowMin"));
            }
            other => panic!("tier {tier}: {other:?}"),
        }
    }
    let r = s
        .http
        .get(s.d("/protected"))
        .header("X-Demo-Payer-Agent", "nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    // Tier 3 (the default): a fresh signed challenge each time, in standard base64.
    let mut memos = Vec::new();
    for _ in 0..2 {
        let r = s.http.get(s.d("/protected")).send().await.unwrap();
        assert_eq!(r.status(), 402);
        assert_eq!(header(&r, "cache-control"), "no-store");
        let encoded = header(&r, "PAYMENT-REQUIRED");
        assert!(encoded
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c)));
        let pr: PaymentRequired = x402::decode_header(x402::PAYMENT_REQUIRED, &encoded).unwrap();
        assert_eq!(pr.x402_version, 2);
        let r0 = &pr.accepts[0];
        assert_eq!(
            (r0.scheme.as_str(), r0.amount.clone()),
            ("trust-gate", demo::PRICE.to_string())
        );
        assert_eq!(r0.pay_to, w.service.owner.pubkey().to_string());
        assert_eq!(r0.extra["feePayer"], w.facilitator.pubkey().to_string());
        let g = GateExtension::from_requirements(r0).unwrap();
        assert_eq!(g.payer_agent_asset, w.payer(3).unwrap().asset().to_string());
        assert!(x402::challenge_signed_by(
            &w.service_key.pubkey(),
            r0,
            &pr.resource.url,
            &g
        ));
        memos.push(r0.extra["memo"].as_str().unwrap().to_string());
    }
    assert_ne!(memos[0], memos[1], "a unique memo per challenge");

    // Paid by the paying client: 200 with X-Payment-Receipt and PAYMENT-RESPONSE.
    let payer = w.payer(3).unwrap();
    let outcome = s.pay(None, &payer.owner).await;
    let PayOutcome::Paid {
        receipt,
        payment_id_hash,
        response,
        body,
        ..
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    assert!(response.success);
    assert_eq!(response.transaction, receipt);
    assert_eq!(
        response.payer.as_deref(),
        Some(payer.owner.pubkey().to_string().as_str())
    );
    assert_eq!(body.json()["transaction"], receipt);
    let sig: Signature = receipt.parse().unwrap();
    let status = s
        .env
        .rpc
        .get_signature_statuses(&[sig])
        .await
        .unwrap()
        .value[0]
        .clone()
        .unwrap();
    assert!(status.err.is_none());
    let r = s.receipt(&payment_id_hash).await;
    assert_eq!(
        (r["exists"].as_bool(), r["settledAtomically"].as_bool()),
        (Some(true), Some(true))
    );

    // A payment the facilitator refuses: 402 with PAYMENT-RESPONSE success:false.
    let r = s.http.get(s.d("/protected")).send().await.unwrap();
    let pr: PaymentRequired =
        x402::decode_header(x402::PAYMENT_REQUIRED, &header(&r, "PAYMENT-REQUIRED")).unwrap();
    let p = pay::prepare(&s.env.rpc, &pr, &payer.owner.pubkey(), Default::default())
        .await
        .unwrap();
    let mut tx = p
        .transaction(&s.env.rpc, &p.instructions().unwrap(), &payer.owner)
        .await
        .unwrap();
    tx.signatures[1] = Signature::default();
    let payload = p.payload(&tx).unwrap();
    let r = s
        .http
        .get(s.d("/protected"))
        .header("PAYMENT-SIGNATURE", x402::encode_header(&payload).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 402);
    let failed: SettlementResponse =
        x402::decode_header(x402::PAYMENT_RESPONSE, &header(&r, "PAYMENT-RESPONSE")).unwrap();
    assert!(!failed.success);
    assert_eq!(
        failed.error_reason.as_deref(),
        Some("missing_client_signature")
    );
    assert_eq!(header(&r, "X-Payment-Receipt"), "");

    // A payment for requirements the demo never issued: a fresh challenge instead.
    let mut forged = payload.clone();
    forged.accepted.amount = "1".into();
    // (Under the paid payment's id it would be 409 before anything: another payload.)
    forged.extensions = None;
    let r = s
        .http
        .get(s.d("/protected"))
        .header("PAYMENT-SIGNATURE", x402::encode_header(&forged).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 402);
    let pr: PaymentRequired =
        x402::decode_header(x402::PAYMENT_REQUIRED, &header(&r, "PAYMENT-REQUIRED")).unwrap();
    assert_eq!(
        pr.error.as_deref(),
        Some("No matching payment requirements")
    );
    let r = s
        .http
        .get(s.d("/protected"))
        .header("PAYMENT-SIGNATURE", "***")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

/// The vault-funded demo payer: its hot key signs, the vault pays, the hot key's balance does
/// not move, and the receipt shows the vault.
#[tokio::test]
async fn the_vault_funded_payer_pays_from_its_vault() {
    let s = services::start().await;
    let w = &s.env.world;
    let payer = w.vault_payer();
    let hot = payer.hot_key.as_ref().unwrap();
    let mint = w.mint();
    let ids = trust_gate_client::ProgramIds::for_network(trust_gate_client::Network::Localnet);
    let rpc = &s.env.rpc;
    let vault_balance = || async {
        trust_gate_client::chain::vault(rpc, &ids, &payer.asset(), &mint)
            .await
            .unwrap()
            .expect("the migrations open the vault")
            .amount
    };
    let program = trust_gate_client::settle::TokenProgram::SplToken;
    let balance = |owner: solana_sdk::pubkey::Pubkey| async move {
        let ata = program.associated_account(&owner, &mint);
        let account = trust_gate_client::chain::account(rpc, &ata)
            .await
            .unwrap()
            .unwrap();
        trust_gate_migrations::steps::token_amount(&account.data).unwrap()
    };
    let (vault0, hot0, service0) = (
        vault_balance().await,
        balance(hot.pubkey()).await,
        balance(w.service.owner.pubkey()).await,
    );
    assert_eq!((vault0, hot0), (demo::PAYER_BALANCE, 0));

    let outcome = s.pay(Some(payer.asset()), hot).await;
    let PayOutcome::Paid {
        payment_id_hash,
        response,
        ..
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    assert_eq!(
        response.payer.as_deref(),
        Some(hot.pubkey().to_string().as_str())
    );
    assert_eq!(vault_balance().await, vault0 - demo::PRICE);
    assert_eq!(balance(hot.pubkey()).await, hot0);
    assert_eq!(
        balance(w.service.owner.pubkey()).await,
        service0 + demo::PRICE
    );

    let r = s.receipt(&payment_id_hash).await;
    assert_eq!(r["settledAtomically"], true);
    assert_eq!(r["payerWallet"], hot.pubkey().to_string());
    let vault = trust_gate_client::pda::Pdas::new(ids).vault(&payer.asset(), &mint);
    assert_eq!(r["payerVault"]["address"], vault.to_string());
    assert_eq!(
        r["payerVault"]["balance"],
        (vault0 - demo::PRICE).to_string()
    );
}
