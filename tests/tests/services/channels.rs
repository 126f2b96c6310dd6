//! Payment channels on the localnet `trust-gate up` runs (the payment-channels stand-in), over
//! JSON-RPC: a channel opened through the gate by a demo payer to the demo service, closed by
//! the facilitator in one transaction, and the facilitator's crank returning its rent once
//! its open slot is old; the record of a channel someone else deleted first closed by the
//! crank too.

use crate::fixture::Env;
use crate::services::{self, Services};
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::channels::{self, Channel, Distribute, Open, Split, Status};
use trust_gate_client::instructions::{Attestations, FeedbackDetails};
use trust_gate_client::settle::{self, TokenProgram};
use trust_gate_client::{chain, ClientError};
use trust_gate_migrations::demo;

const DEPOSIT: u64 = 1_000_000;
/// Past a channel's slot window (1 500 slots of 400 ms).
const PAST_THE_WINDOW_SECS: u64 = 605;

/// Sends `ixs` as a v0 transaction with the facilitator's lookup tables, paid by the faucet.
async fn send(env: &Env, ixs: &[Instruction], signers: &[&Keypair]) -> Result<(), ClientError> {
    let tables = chain::lookup_tables(&env.rpc, &env.world.facilitator.pubkey()).await?;
    let blockhash = env.rpc.get_latest_blockhash().await?;
    let mut all = vec![env.localnet.faucet()];
    all.extend_from_slice(signers);
    let tx = settle::transaction(
        &env.localnet.faucet().pubkey(),
        ixs,
        &tables,
        blockhash,
        &all,
    )?;
    settle::send(&env.rpc, &tx).await.map(|_| ())
}

/// A demo payer's channel of [`DEPOSIT`] to the demo service, held by the facilitator and
/// opened through the gate.
async fn gated_open(s: &Services, voucher: &Keypair, salt: u64) -> Open {
    let env = &s.env;
    let w = &env.world;
    let payer = w.payer(3).unwrap();
    let open = Open {
        payer: payer.signer().pubkey(),
        rent_payer: w.facilitator.pubkey(),
        payee: w.facilitator.pubkey(),
        mint: w.mint(),
        token_program: TokenProgram::SplToken,
        authorized_signer: voucher.pubkey(),
        salt,
        deposit: DEPOSIT,
        grace_period: 3_600,
        open_slot: env.rpc.get_slot().await.unwrap(),
        splits: vec![Split {
            recipient: w.service.owner.pubkey(),
            bps: channels::ALL_BPS,
        }],
    };
    let gate = env.b.gate_channel_open(
        &payer.signer().pubkey(),
        &payer.asset.pubkey(),
        &w.service.asset.pubkey(),
        &w.facilitator.pubkey(),
        &w.mint(),
        DEPOSIT,
        demo::POLICY_ID,
        &open.channel(),
        Attestations::default(),
    );
    send(
        env,
        &[gate, open.instruction()],
        &[payer.signer(), &w.facilitator],
    )
    .await
    .unwrap();
    open
}

async fn channel(env: &Env, address: &Pubkey) -> Option<Channel> {
    let account = chain::account(&env.rpc, address).await.unwrap()?;
    assert_eq!(account.owner, channels::PROGRAM_ID);
    Channel::decode(&account.data)
}

fn seal(env: &Env, voucher: &Keypair, open: &Open) -> Vec<Instruction> {
    let f = env.world.facilitator.pubkey();
    vec![
        channels::voucher(voucher, &open.channel(), DEPOSIT, 0),
        channels::settle_and_seal(&f, &open.channel(), true),
    ]
}

#[tokio::test]
async fn the_crank_returns_a_gated_channels_rent_once_its_open_slot_is_old() {
    let s = services::start().await;
    let env = &s.env;
    let f = env.world.facilitator.insecure_clone();
    let voucher = Keypair::new();
    let open = gated_open(&s, &voucher, 1).await;
    let address = open.channel();
    assert_eq!(channel(env, &address).await.unwrap().status, Status::Open);

    // The facilitator's close: the last voucher, the seal, the gate's close and the
    // distribute in one transaction.
    let record = env.b.pda.channel_record(&address);
    let record: gate::state::ChannelRecord = trust_gate_client::decode::account(
        "channel record",
        &chain::account(&env.rpc, &record)
            .await
            .unwrap()
            .unwrap()
            .data,
    )
    .unwrap();
    let mut ixs = seal(env, &voucher, &open);
    ixs.push(env.b.gate_channel_close(
        &record,
        &env.collection,
        FeedbackDetails {
            score: 90,
            tag1: "x402".into(),
            ..FeedbackDetails::default()
        },
    ));
    ixs.push(Distribute::of(&open).instruction());
    send(env, &ixs, &[&f]).await.unwrap();
    let c = channel(env, &address).await.unwrap();
    assert_eq!((c.status, c.settled), (Status::Distributed, DEPOSIT));

    // Inside its slot window the channel waits.
    let crank = &s.facilitator.facilitator;
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(
        (round.channels_waiting, round.channels_reclaimed),
        (1, 0),
        "{round:?}"
    );

    env.localnet.warp(PAST_THE_WINDOW_SECS).await.unwrap();
    let rent = env.rpc.get_balance(&address).await.unwrap();
    let before = env.rpc.get_balance(&f.pubkey()).await.unwrap();
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(
        (round.channels_reclaimed, round.transactions, round.lamports),
        (1, 1, rent),
        "{round:?}"
    );
    assert!(channel(env, &address).await.is_none(), "reclaimed");
    // The rent back, less the reclaim's one signature.
    assert_eq!(
        env.rpc.get_balance(&f.pubkey()).await.unwrap(),
        before + rent - 5_000
    );
    // Nothing left for the next round.
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(
        (
            round.channels_reclaimed,
            round.channels_waiting,
            round.transactions
        ),
        (0, 0, 0)
    );
}

#[tokio::test]
async fn the_crank_closes_the_record_of_a_channel_someone_else_deleted() {
    let s = services::start().await;
    let env = &s.env;
    let f = env.world.facilitator.insecure_clone();
    let voucher = Keypair::new();
    let open = gated_open(&s, &voucher, 2).await;
    let address = open.channel();
    let record = env.b.pda.channel_record(&address);

    // Sealed, but the facilitator's close never came (the crank would finish it); before it
    // does, anyone distributes once the slot window has passed: the program deletes the
    // channel, and its settled amount with it.
    send(env, &seal(env, &voucher, &open), &[&f]).await.unwrap();
    let crank = &s.facilitator.facilitator;
    env.localnet.warp(PAST_THE_WINDOW_SECS).await.unwrap();
    send(env, &[Distribute::of(&open).instruction()], &[])
        .await
        .unwrap();
    assert!(chain::account(&env.rpc, &address).await.unwrap().is_none());

    let rent = env.rpc.get_balance(&record).await.unwrap();
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(
        (round.channel_records_closed, round.lamports),
        (1, rent),
        "{round:?}"
    );
    assert!(chain::account(&env.rpc, &record).await.unwrap().is_none());
}
