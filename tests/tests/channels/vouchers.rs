//! Vouchers received off chain (`trust_gate_client::vouchers`) applied on the real program:
//! checked by signature alone, then redeemed four channels a transaction, the program agreeing
//! with every check the facilitator made without it.

use super::{channel, Parties};
use solana_sdk::signature::Signer;
use trust_gate_client::channels::{self, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::vouchers::{self, Refusal, Terms, Voucher, MAX_REDEEMS_PER_TRANSACTION};
use trust_gate_program_tests::{advance_slots, assert_code, clock, send};

#[tokio::test]
async fn accepted_vouchers_of_four_channels_redeem_in_one_transaction() {
    let mut ctx = trust_gate_program_tests::channels::start().await;
    advance_slots(&mut ctx, 1_000).await;
    let p = Parties::new(&mut ctx, TokenProgram::Token2022).await;
    let now = clock(&mut ctx).await.unix_timestamp;

    let mut latest = Vec::new();
    for salt in 0..MAX_REDEEMS_PER_TRANSACTION as u64 {
        let open = p.open(&mut ctx, 100_000, salt).await;
        send(&mut ctx, &[open.instruction()], &[&p.payer, &p.facilitator])
            .await
            .unwrap();
        // What the facilitator knows of the channel, and three payments of 7 000 made with
        // vouchers it checked off chain.
        let terms = Terms {
            channel: open.channel(),
            voucher_key: p.voucher_signer.pubkey(),
            cap: 100_000,
            per_payment_cap: 10_000,
        };
        let mut accepted = 0;
        let mut last = None;
        for _ in 0..3 {
            let v = Voucher::sign(&p.voucher_signer, &open.channel(), accepted + 7_000, 0);
            accepted = vouchers::check(&terms, accepted, &v, 7_000, now, false).unwrap();
            last = Some(v);
        }
        // A replay of the last one is refused off chain, as the program would refuse it.
        let replay = last.unwrap();
        assert!(matches!(
            vouchers::check(&terms, accepted, &replay, 7_000, now, false),
            Err(Refusal::WrongAmount { .. })
        ));
        latest.push((replay, p.voucher_signer.pubkey()));
    }

    let txs = vouchers::redemptions(&latest);
    assert_eq!(txs.len(), 1, "four channels, one transaction");
    send(&mut ctx, &txs[0], &[]).await.unwrap();
    for (v, _) in &latest {
        let c = channel(&mut ctx, &v.channel).await.unwrap();
        assert_eq!((c.status, c.settled), (Status::Open, 21_000));
    }
    // The program refuses the same redemption again (at the watermark, 234): the off-chain
    // refusal of a replay is the program's own rule.
    assert_code(
        send(&mut ctx, &txs[0], &[]).await,
        channels::error::VOUCHER_WATERMARK_NOT_MONOTONIC,
    );
}
