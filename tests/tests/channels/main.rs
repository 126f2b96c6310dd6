//! Solana's payment-channels program, its REAL bytecode (`../shared/fixtures/payment-channels`),
//! driven by the client SDK's builders (`trust_gate_client::channels`): a channel's whole life
//! in SPL Token and in Token-2022, and the voucher rules the facilitator will lean on; channels
//! through the gate, opened (`gated`) and closed (`close`); and the localnet's stand-in of the
//! program against the real one, scenario by scenario (`standin`). A missing build fails the
//! suite with one line naming it.
//!
//! The bank's SPL Token is solana-program-test's classic build; the program pays two or more SPL
//! Token parties at once with the newer build's (p-token's) `Batch` instruction, which the
//! classic build refuses. The SPL Token test pins that divergence down.

mod close;
mod gated;
mod standin;
mod vouchers;

use anchor_lang::solana_program::system_instruction;
use anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent;
use anchor_spl::token::spl_token;
use anchor_spl::token_2022::spl_token_2022;
use solana_program_test::ProgramTestContext;
use solana_sdk::program_pack::Pack;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::channels::{self, Channel, Distribute, Open, Split, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_program_tests::{
    advance_slots, advance_time, assert_code, clock, funded_keypair, raw_account, send,
};

const DECIMALS: u8 = 6;
/// SPL Token's `TokenError::InvalidInstruction`.
const CLASSIC_TOKEN_INVALID_INSTRUCTION: u32 = 12;
const PAYER_TOKENS: u64 = 1_000_000;

/// A mint of `program`, a payer holding [`PAYER_TOKENS`], a facilitator (the channel's rent
/// payer and zero-share payee, as the x402 schemes have it), the payee's recipient `pay_to`
/// with its token account, the voucher signer, and the treasury's token account.
struct Parties {
    program: TokenProgram,
    mint: solana_sdk::pubkey::Pubkey,
    payer: Keypair,
    facilitator: Keypair,
    pay_to: Keypair,
    voucher_signer: Keypair,
}

impl Parties {
    async fn new(ctx: &mut ProgramTestContext, program: TokenProgram) -> Parties {
        let mint = Keypair::new();
        let authority = Keypair::new();
        let payer = funded_keypair(ctx).await;
        let facilitator = funded_keypair(ctx).await;
        let pay_to = Keypair::new();
        let fee_payer = ctx.payer.pubkey();
        let rent = ctx.banks_client.get_rent().await.unwrap();
        // A mint without extensions is the same 82 bytes in both token programs, and
        // Token-2022's instruction builders take either program's id.
        let create_mint = system_instruction::create_account(
            &fee_payer,
            &mint.pubkey(),
            rent.minimum_balance(spl_token::state::Mint::LEN),
            spl_token::state::Mint::LEN as u64,
            &program.id(),
        );
        let init_mint = spl_token_2022::instruction::initialize_mint2(
            &program.id(),
            &mint.pubkey(),
            &authority.pubkey(),
            None,
            DECIMALS,
        )
        .unwrap();
        let m = mint.pubkey();
        let ata = |owner: &solana_sdk::pubkey::Pubkey| {
            create_associated_token_account_idempotent(&fee_payer, owner, &m, &program.id())
        };
        let mint_to = spl_token_2022::instruction::mint_to(
            &program.id(),
            &m,
            &program.associated_account(&payer.pubkey(), &m),
            &authority.pubkey(),
            &[],
            PAYER_TOKENS,
        )
        .unwrap();
        send(
            ctx,
            &[
                create_mint,
                init_mint,
                ata(&payer.pubkey()),
                ata(&pay_to.pubkey()),
                ata(&channels::TREASURY_OWNER),
                mint_to,
            ],
            &[&mint, &authority],
        )
        .await
        .unwrap();
        Parties {
            program,
            mint: m,
            payer,
            facilitator,
            pay_to,
            voucher_signer: Keypair::new(),
        }
    }

    /// An open of `deposit` paying all of it to `pay_to`, at the current slot.
    async fn open(&self, ctx: &mut ProgramTestContext, deposit: u64, salt: u64) -> Open {
        Open {
            payer: self.payer.pubkey(),
            rent_payer: self.facilitator.pubkey(),
            payee: self.facilitator.pubkey(),
            mint: self.mint,
            token_program: self.program,
            authorized_signer: self.voucher_signer.pubkey(),
            salt,
            deposit,
            grace_period: 3_600,
            open_slot: clock(ctx).await.slot,
            splits: vec![Split {
                recipient: self.pay_to.pubkey(),
                bps: channels::ALL_BPS,
            }],
        }
    }

    async fn tokens(
        &self,
        ctx: &mut ProgramTestContext,
        owner: &solana_sdk::pubkey::Pubkey,
    ) -> u64 {
        let address = self.program.associated_account(owner, &self.mint);
        match raw_account(ctx, &address).await {
            // The amount sits at the same offset in both token programs' accounts.
            Some(a) => u64::from_le_bytes(a.data[64..72].try_into().unwrap()),
            None => 0,
        }
    }
}

async fn channel(
    ctx: &mut ProgramTestContext,
    address: &solana_sdk::pubkey::Pubkey,
) -> Option<Channel> {
    let account = raw_account(ctx, address).await?;
    assert_eq!(account.owner, channels::PROGRAM_ID);
    Some(Channel::decode(&account.data).expect("a version-1 channel"))
}

async fn lamports(ctx: &mut ProgramTestContext, address: &solana_sdk::pubkey::Pubkey) -> u64 {
    raw_account(ctx, address).await.map_or(0, |a| a.lamports)
}

/// Open, two vouchers (one settled by anyone, the last sealed by the payee), distribute,
/// reclaim: the recipient gets what was settled, the payer the rest of the deposit, the rent
/// payer every lamport of rent back. In SPL Token the payer withdraws its refund before the
/// distribute (see below).
async fn whole_life(program: TokenProgram) {
    let mut ctx = trust_gate_program_tests::channels::start().await;
    advance_slots(&mut ctx, 1_000).await;
    let p = Parties::new(&mut ctx, program).await;
    let open = p.open(&mut ctx, 500_000, 7).await;
    let address = open.channel();
    let facilitator_before = lamports(&mut ctx, &p.facilitator.pubkey()).await;

    send(&mut ctx, &[open.instruction()], &[&p.payer, &p.facilitator])
        .await
        .unwrap();
    let c = channel(&mut ctx, &address).await.unwrap();
    assert_eq!(
        (c.status, c.deposit, c.settled, c.open_slot),
        (Status::Open, 500_000, 0, open.open_slot)
    );
    assert_eq!(
        (c.payer, c.payee, c.rent_payer, c.authorized_signer, c.mint),
        (
            p.payer.pubkey(),
            p.facilitator.pubkey(),
            p.facilitator.pubkey(),
            p.voucher_signer.pubkey(),
            p.mint
        )
    );
    assert_eq!(
        c.distribution_hash,
        channels::distribution_hash(&open.splits)
    );
    assert_eq!(p.tokens(&mut ctx, &address).await, 500_000, "escrowed");
    assert_eq!(
        p.tokens(&mut ctx, &p.payer.pubkey()).await,
        PAYER_TOKENS - 500_000
    );
    let rent_locked = facilitator_before - lamports(&mut ctx, &p.facilitator.pubkey()).await;
    assert!(
        rent_locked > 4_000_000,
        "the channel's and the escrow's rent: {rent_locked}"
    );

    // Anyone settles a voucher (the test's fee payer here).
    let v = channels::voucher(&p.voucher_signer, &address, 120_000, 0);
    send(&mut ctx, &[v, channels::settle(&address)], &[])
        .await
        .unwrap();
    assert_eq!(channel(&mut ctx, &address).await.unwrap().settled, 120_000);

    // The payee seals with the last voucher.
    let v = channels::voucher(&p.voucher_signer, &address, 300_000, 0);
    let seal = channels::settle_and_seal(&p.facilitator.pubkey(), &address, true);
    send(&mut ctx, &[v, seal], &[&p.facilitator]).await.unwrap();
    let c = channel(&mut ctx, &address).await.unwrap();
    assert_eq!((c.status, c.settled), (Status::Sealed, 300_000));

    // Anyone distributes: 300 000 to pay_to, 200 000 back to the payer, the escrow closed.
    let distribute = Distribute::of(&open).instruction();
    if program == TokenProgram::SplToken {
        // The program pays two or more SPL Token parties with one `Batch` instruction of the
        // token program's newer build (p-token, mainnet's). This bank's SPL Token is the
        // classic build, which does not know it (InvalidInstruction, 12): here the payer
        // first takes its refund itself, and the distribute pays one party.
        assert_code(
            send(&mut ctx, std::slice::from_ref(&distribute), &[]).await,
            CLASSIC_TOKEN_INVALID_INSTRUCTION,
        );
        let withdraw = channels::withdraw_payer(&p.payer.pubkey(), &address, &p.mint, program);
        send(&mut ctx, &[withdraw], &[&p.payer]).await.unwrap();
    }
    send(&mut ctx, &[distribute], &[]).await.unwrap();
    assert_eq!(p.tokens(&mut ctx, &p.pay_to.pubkey()).await, 300_000);
    assert_eq!(
        p.tokens(&mut ctx, &p.payer.pubkey()).await,
        PAYER_TOKENS - 300_000
    );
    assert!(
        raw_account(&mut ctx, &open.escrow()).await.is_none(),
        "escrow closed"
    );
    assert_eq!(
        channel(&mut ctx, &address).await.unwrap().status,
        Status::Distributed
    );

    // The rest of the rent comes back once the open slot is old.
    let early = channels::reclaim(&address, &p.facilitator.pubkey());
    assert_code(
        send(&mut ctx, &[early], &[]).await,
        channels::error::CHANNEL_CLOSE_TOO_EARLY,
    );
    advance_slots(&mut ctx, channels::OPEN_SLOT_WINDOW + 1).await;
    let reclaim = channels::reclaim(&address, &p.facilitator.pubkey());
    send(&mut ctx, &[reclaim], &[]).await.unwrap();
    assert!(
        raw_account(&mut ctx, &address).await.is_none(),
        "channel closed"
    );
    assert_eq!(
        lamports(&mut ctx, &p.facilitator.pubkey()).await,
        facilitator_before,
        "every lamport of rent back (the fees were the test payer's)"
    );
}

#[tokio::test]
async fn a_channel_lives_its_whole_life_in_token_2022() {
    whole_life(TokenProgram::Token2022).await;
}

#[tokio::test]
async fn a_channel_lives_its_whole_life_in_spl_token() {
    whole_life(TokenProgram::SplToken).await;
}

/// The voucher rules the facilitator's checks mirror: a voucher is refused above the deposit,
/// at or below the watermark, and from another signer; a top-up raises the deposit, and the
/// cap with it; after the payer asks to close, only the payee can settle.
#[tokio::test]
async fn vouchers_are_capped_by_the_deposit_and_the_watermark() {
    let mut ctx = trust_gate_program_tests::channels::start().await;
    advance_slots(&mut ctx, 1_000).await;
    let p = Parties::new(&mut ctx, TokenProgram::Token2022).await;
    let open = p.open(&mut ctx, 100_000, 1).await;
    let address = open.channel();
    send(&mut ctx, &[open.instruction()], &[&p.payer, &p.facilitator])
        .await
        .unwrap();
    let settle = |signer: &Keypair, amount: u64| {
        [
            channels::voucher(signer, &address, amount, 0),
            channels::settle(&address),
        ]
    };
    assert_code(
        send(&mut ctx, &settle(&p.voucher_signer, 100_001), &[]).await,
        channels::error::VOUCHER_OVER_DEPOSIT,
    );
    assert_code(
        send(&mut ctx, &settle(&Keypair::new(), 50_000), &[]).await,
        channels::error::VOUCHER_SIGNER_MISMATCH,
    );
    send(&mut ctx, &settle(&p.voucher_signer, 50_000), &[])
        .await
        .unwrap();
    assert_code(
        send(&mut ctx, &settle(&p.voucher_signer, 50_000), &[]).await,
        channels::error::VOUCHER_WATERMARK_NOT_MONOTONIC,
    );

    // A top-up needs only the payer, and raises what a voucher may reach on chain.
    let top_up = channels::top_up(&p.payer.pubkey(), &address, &p.mint, p.program, 20_000);
    send(&mut ctx, &[top_up], &[&p.payer]).await.unwrap();
    assert_eq!(channel(&mut ctx, &address).await.unwrap().deposit, 120_000);
    send(&mut ctx, &settle(&p.voucher_signer, 110_000), &[])
        .await
        .unwrap();

    // The payer asks to close: settling is refused, the payee may still seal with a voucher
    // during the grace period, and anyone may seal once it is over.
    let close = channels::request_close(&p.payer.pubkey(), &address);
    send(&mut ctx, &[close], &[&p.payer]).await.unwrap();
    assert_eq!(
        channel(&mut ctx, &address).await.unwrap().status,
        Status::Closing
    );
    assert_code(
        send(&mut ctx, &settle(&p.voucher_signer, 115_000), &[]).await,
        channels::error::INVALID_CHANNEL_STATUS,
    );
    advance_time(&mut ctx, 3_601).await;
    send(&mut ctx, &[channels::seal(&address)], &[])
        .await
        .unwrap();
    let c = channel(&mut ctx, &address).await.unwrap();
    assert_eq!((c.status, c.settled), (Status::Sealed, 110_000));
    // The payer takes the unsettled rest back itself.
    let withdraw = channels::withdraw_payer(&p.payer.pubkey(), &address, &p.mint, p.program);
    send(&mut ctx, &[withdraw], &[&p.payer]).await.unwrap();
    assert_eq!(
        p.tokens(&mut ctx, &p.payer.pubkey()).await,
        PAYER_TOKENS - 110_000
    );
}
