//! The localnet's payment-channels stand-in (`trust_gate_localnet::standin::channels`) against
//! the real bytecode: each scenario is a list of steps run twice, once on a bank with the
//! stand-in at the program's id and once on a bank with the real build, with the same keys,
//! slots and clock. After every step both runs must show the same thing: success or the
//! failing instruction and its error, the channel's 256 bytes, the token balances of the
//! payer, escrow, `pay_to`, payee and treasury accounts (and whether they exist), and the
//! lamports of the rent payer and the channel. Compute units and logs are not compared.
//!
//! Each step also states what the real program is expected to answer, so a scenario pins the
//! real behaviour down as well as the stand-in's likeness to it.

use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_instruction;
use anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent;
use anchor_spl::token::spl_token;
use anchor_spl::token_2022::spl_token_2022;
use solana_program_test::ProgramTestContext;
use solana_sdk::clock::Clock;
use solana_sdk::program_pack::Pack;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::channels::{self, Distribute, Open, Split, CHANNEL_LEN};
use trust_gate_client::settle::TokenProgram;
use trust_gate_program_tests::{raw_account, send};

const DECIMALS: u8 = 6;
const PAYER_TOKENS: u64 = 1_000_000;
/// The slot the scenarios open at (the window needs slots behind it).
const OPEN_SLOT: u64 = 2_000;
/// The unix time every scenario starts at, the same in both banks.
const T0: i64 = 1_800_000_000;
const GRACE: u32 = 3_600;
/// SPL Token's `TokenError::InvalidInstruction`: the classic build's answer to `Batch`.
const CLASSIC_TOKEN_INVALID_INSTRUCTION: u32 = 12;

/// The world a scenario starts from.
#[derive(Clone, Copy)]
struct Setup {
    program: TokenProgram,
    /// Whether the treasury's token account exists.
    treasury: bool,
    /// `pay_to`'s share; the payee (the facilitator) gets the rest.
    pay_to_bps: u16,
}

const T22: Setup = Setup {
    program: TokenProgram::Token2022,
    treasury: true,
    pay_to_bps: channels::ALL_BPS,
};

/// How an `open` deviates from the good one.
#[derive(Clone, Copy, Debug)]
enum OpenVariant {
    Good,
    PayeeIsPayer,
    SlotAhead,
    SlotTooOld,
}

/// One transaction's worth of a scenario.
#[derive(Clone, Copy, Debug)]
enum Step {
    Open(OpenVariant),
    /// A voucher then `settle`; `stranger` signs it instead of the authorized signer.
    Settle {
        cumulative: u64,
        stranger: bool,
    },
    /// `settle_and_seal` by the payee, after a voucher when `Some`.
    SettleAndSeal(Option<u64>),
    TopUp(u64),
    /// The payer's `top_up` with the payer's signer flag cleared.
    TopUpUnsigned(u64),
    RequestClose,
    /// `request_close` by someone who is not the channel's payer.
    RequestCloseByStranger,
    Seal,
    Distribute,
    WithdrawPayer,
    Reclaim,
    /// `pay_to` closes its (empty) token account.
    ClosePayTo,
    /// Anyone creates the escrow early and sends it tokens from the payer.
    PrefundEscrow(u64),
    /// Lamports sent to the channel's address before it exists.
    PrefundChannel(u64),
    /// An instruction with its last account dropped (`extra` false) or one account too many.
    Count {
        ix: Target,
        extra: bool,
    },
    /// `top_up` with a 7-byte amount and no accounts: the data is refused first.
    TopUpBadData,
    /// `emit_event` called from outside, without the event authority's signature.
    EmitEventUnsigned,
    /// The clock moves to `T0 + seconds` (not a transaction).
    Time(i64),
    /// The bank moves to `OPEN_SLOT + slots` (not a transaction).
    Slot(u64),
}

/// An instruction whose account count a step gets wrong.
#[derive(Clone, Copy, Debug)]
enum Target {
    Open,
    Settle,
    TopUp,
    SettleAndSeal,
    RequestClose,
    Seal,
    Distribute,
    WithdrawPayer,
    Reclaim,
}

use trust_gate_program_tests::differential::{
    assert_alike, key, run_on, send_unique, set_clock, Engine, Expect, Scenario,
};
use Expect::{Code, Kind, Ok as Pass};

/// What a step showed, comparable across the two runs.
#[derive(Debug, PartialEq, Eq)]
struct Observed {
    step: String,
    /// Ok, or the failing instruction's index and error.
    result: Result<(), String>,
    /// Owner and data of the channel account, if it exists.
    channel: Option<(Pubkey, Vec<u8>)>,
    /// Token balances (None: no token account there): payer, escrow, pay_to, payee,
    /// treasury.
    tokens: [Option<u64>; 5],
    rent_payer_lamports: u64,
    channel_lamports: u64,
}

struct World {
    ctx: ProgramTestContext,
    setup: Setup,
    mint: Pubkey,
    payer: Keypair,
    facilitator: Keypair,
    pay_to: Keypair,
    voucher_signer: Keypair,
    stranger: Keypair,
    open: Open,
    /// Makes every transaction unique (a trailing compute-unit limit), so that a step
    /// repeated on purpose is executed, not refused as already processed.
    sent: u32,
}

async fn start(engine: Engine) -> ProgramTestContext {
    let mut pt = trust_gate_localnet::native::program_test();
    match engine {
        Engine::Real => trust_gate_program_tests::channels::add_to(&mut pt),
        Engine::StandIn => trust_gate_localnet::native::add_channels_standin(&mut pt),
    }
    pt.start_with_context().await
}

impl World {
    /// The same keys, mint, balances, slot and time in either bank.
    async fn new(engine: Engine, setup: Setup) -> World {
        let mut ctx = start(engine).await;
        set_clock(&mut ctx, OPEN_SLOT, T0).await;
        let (mint, authority) = (key(1), key(2));
        let (payer, facilitator, pay_to) = (key(3), key(4), key(5));
        let (voucher_signer, stranger) = (key(6), key(7));
        let fee_payer = ctx.payer.pubkey();
        let program = setup.program.id();
        let m = mint.pubkey();
        let rent = ctx.banks_client.get_rent().await.unwrap();
        let fund = |to: &Pubkey| system_instruction::transfer(&fee_payer, to, 10_000_000_000);
        // A mint without extensions is the same 82 bytes in both token programs.
        let create_mint = system_instruction::create_account(
            &fee_payer,
            &m,
            rent.minimum_balance(spl_token::state::Mint::LEN),
            spl_token::state::Mint::LEN as u64,
            &program,
        );
        let init_mint = spl_token_2022::instruction::initialize_mint2(
            &program,
            &m,
            &authority.pubkey(),
            None,
            DECIMALS,
        )
        .unwrap();
        let ata = |owner: &Pubkey| {
            create_associated_token_account_idempotent(&fee_payer, owner, &m, &program)
        };
        let mint_to = spl_token_2022::instruction::mint_to(
            &program,
            &m,
            &setup.program.associated_account(&payer.pubkey(), &m),
            &authority.pubkey(),
            &[],
            PAYER_TOKENS,
        )
        .unwrap();
        let mut ixs = vec![
            fund(&payer.pubkey()),
            fund(&facilitator.pubkey()),
            fund(&stranger.pubkey()),
            create_mint,
            init_mint,
            ata(&payer.pubkey()),
            ata(&pay_to.pubkey()),
            ata(&facilitator.pubkey()),
            mint_to,
        ];
        if setup.treasury {
            ixs.push(ata(&channels::TREASURY_OWNER));
        }
        send(&mut ctx, &ixs, &[&mint, &authority]).await.unwrap();
        let mut splits = Vec::new();
        if setup.pay_to_bps > 0 {
            splits.push(Split {
                recipient: pay_to.pubkey(),
                bps: setup.pay_to_bps,
            });
        }
        let open = Open {
            payer: payer.pubkey(),
            rent_payer: facilitator.pubkey(),
            payee: facilitator.pubkey(),
            mint: m,
            token_program: setup.program,
            authorized_signer: voucher_signer.pubkey(),
            salt: 7,
            deposit: 500_000,
            grace_period: GRACE,
            open_slot: OPEN_SLOT,
            splits,
        };
        World {
            ctx,
            setup,
            mint: m,
            payer,
            facilitator,
            pay_to,
            voucher_signer,
            stranger,
            open,
            sent: 0,
        }
    }

    fn channel(&self) -> Pubkey {
        self.open.channel()
    }

    fn ata(&self, owner: &Pubkey) -> Pubkey {
        self.setup.program.associated_account(owner, &self.mint)
    }

    /// A voucher for the channel, signed by the authorized signer or by a stranger.
    fn voucher(&self, cumulative: u64, stranger: bool) -> Instruction {
        let signer = if stranger {
            &self.stranger
        } else {
            &self.voucher_signer
        };
        channels::voucher(signer, &self.channel(), cumulative, 0)
    }

    async fn send(&mut self, ixs: Vec<Instruction>, signers: &[&Keypair]) -> Result<(), String> {
        send_unique(&mut self.ctx, &mut self.sent, ixs, signers).await
    }
    async fn tokens(&mut self, owner: &Pubkey) -> Option<u64> {
        let address = self.ata(owner);
        let account = raw_account(&mut self.ctx, &address).await?;
        // The amount sits at the same offset in both token programs' accounts.
        Some(u64::from_le_bytes(account.data[64..72].try_into().unwrap()))
    }
}

impl Scenario for World {
    type Step = Step;
    type Observed = Observed;

    async fn run(&mut self, step: Step) -> Result<(), String> {
        let channel = self.channel();
        let (payer, facilitator) = (
            self.payer.insecure_clone(),
            self.facilitator.insecure_clone(),
        );
        let mint = self.mint;
        let program = self.setup.program;
        match step {
            Step::Open(variant) => {
                let mut open = self.open.clone();
                match variant {
                    OpenVariant::Good => {}
                    OpenVariant::PayeeIsPayer => open.payee = open.payer,
                    OpenVariant::SlotAhead => open.open_slot = OPEN_SLOT + 1,
                    OpenVariant::SlotTooOld => {
                        open.open_slot = OPEN_SLOT - channels::OPEN_SLOT_WINDOW - 1
                    }
                }
                self.send(vec![open.instruction()], &[&payer, &facilitator])
                    .await
            }
            Step::Settle {
                cumulative,
                stranger,
            } => {
                let ixs = vec![
                    self.voucher(cumulative, stranger),
                    channels::settle(&channel),
                ];
                self.send(ixs, &[]).await
            }
            Step::SettleAndSeal(voucher) => {
                let seal =
                    channels::settle_and_seal(&facilitator.pubkey(), &channel, voucher.is_some());
                let ixs = match voucher {
                    Some(cumulative) => vec![self.voucher(cumulative, false), seal],
                    None => vec![seal],
                };
                self.send(ixs, &[&facilitator]).await
            }
            Step::TopUp(amount) => {
                let ix = channels::top_up(&payer.pubkey(), &channel, &mint, program, amount);
                self.send(vec![ix], &[&payer]).await
            }
            Step::TopUpUnsigned(amount) => {
                let mut ix = channels::top_up(&payer.pubkey(), &channel, &mint, program, amount);
                ix.accounts[0].is_signer = false;
                self.send(vec![ix], &[]).await
            }
            Step::RequestClose => {
                let ix = channels::request_close(&payer.pubkey(), &channel);
                self.send(vec![ix], &[&payer]).await
            }
            Step::RequestCloseByStranger => {
                let stranger = self.stranger.insecure_clone();
                let ix = channels::request_close(&stranger.pubkey(), &channel);
                self.send(vec![ix], &[&stranger]).await
            }
            Step::Seal => self.send(vec![channels::seal(&channel)], &[]).await,
            Step::Distribute => {
                let ix = Distribute::of(&self.open).instruction();
                self.send(vec![ix], &[]).await
            }
            Step::WithdrawPayer => {
                let ix = channels::withdraw_payer(&payer.pubkey(), &channel, &mint, program);
                self.send(vec![ix], &[&payer]).await
            }
            Step::Reclaim => {
                let ix = channels::reclaim(&channel, &facilitator.pubkey());
                self.send(vec![ix], &[]).await
            }
            Step::ClosePayTo => {
                let pay_to = self.pay_to.insecure_clone();
                let ix = spl_token_2022::instruction::close_account(
                    &program.id(),
                    &self.ata(&pay_to.pubkey()),
                    &pay_to.pubkey(),
                    &pay_to.pubkey(),
                    &[],
                )
                .unwrap();
                self.send(vec![ix], &[&pay_to]).await
            }
            Step::PrefundEscrow(amount) => {
                let fee_payer = self.ctx.payer.pubkey();
                let create = create_associated_token_account_idempotent(
                    &fee_payer,
                    &channel,
                    &mint,
                    &program.id(),
                );
                let transfer = spl_token_2022::instruction::transfer_checked(
                    &program.id(),
                    &self.ata(&payer.pubkey()),
                    &mint,
                    &self.ata(&channel),
                    &payer.pubkey(),
                    &[],
                    amount,
                    DECIMALS,
                )
                .unwrap();
                self.send(vec![create, transfer], &[&payer]).await
            }
            Step::PrefundChannel(lamports) => {
                let fee_payer = self.ctx.payer.pubkey();
                let ix = system_instruction::transfer(&fee_payer, &channel, lamports);
                self.send(vec![ix], &[]).await
            }
            Step::Count { ix, extra } => {
                let mut instruction = match ix {
                    Target::Open => self.open.instruction(),
                    Target::Settle => channels::settle(&channel),
                    Target::TopUp => channels::top_up(&payer.pubkey(), &channel, &mint, program, 1),
                    Target::SettleAndSeal => {
                        channels::settle_and_seal(&facilitator.pubkey(), &channel, false)
                    }
                    Target::RequestClose => channels::request_close(&payer.pubkey(), &channel),
                    Target::Seal => channels::seal(&channel),
                    Target::Distribute => Distribute::of(&self.open).instruction(),
                    Target::WithdrawPayer => {
                        channels::withdraw_payer(&payer.pubkey(), &channel, &mint, program)
                    }
                    Target::Reclaim => channels::reclaim(&channel, &facilitator.pubkey()),
                };
                if extra {
                    instruction.accounts.push(AccountMeta::new_readonly(
                        Pubkey::new_from_array([9; 32]),
                        false,
                    ));
                } else if matches!(ix, Target::Distribute) {
                    // The recipients' accounts are a tail: drop into the fixed part.
                    instruction.accounts.truncate(10);
                } else {
                    instruction.accounts.pop();
                }
                let signers: Vec<&Keypair> = [&payer, &facilitator]
                    .into_iter()
                    .filter(|k| {
                        instruction
                            .accounts
                            .iter()
                            .any(|m| m.is_signer && m.pubkey == k.pubkey())
                    })
                    .collect();
                self.send(vec![instruction], &signers).await
            }
            Step::TopUpBadData => {
                let ix = Instruction::new_with_bytes(
                    channels::PROGRAM_ID,
                    &[3, 1, 0, 0, 0, 0, 0, 0],
                    vec![],
                );
                self.send(vec![ix], &[]).await
            }
            Step::EmitEventUnsigned => {
                let ix = Instruction::new_with_bytes(
                    channels::PROGRAM_ID,
                    &[228, 0x45, 0xa5],
                    vec![AccountMeta::new_readonly(
                        channels::event_authority(),
                        false,
                    )],
                );
                self.send(vec![ix], &[]).await
            }
            Step::Time(seconds) => {
                let slot = self
                    .ctx
                    .banks_client
                    .get_sysvar::<Clock>()
                    .await
                    .unwrap()
                    .slot;
                set_clock(&mut self.ctx, slot, T0 + seconds).await;
                Ok(())
            }
            Step::Slot(slots) => {
                let now: Clock = self.ctx.banks_client.get_sysvar().await.unwrap();
                set_clock(&mut self.ctx, OPEN_SLOT + slots, now.unix_timestamp).await;
                Ok(())
            }
        }
    }

    async fn observe(&mut self, step: Step, result: Result<(), String>) -> Observed {
        let address = self.channel();
        let account = raw_account(&mut self.ctx, &address).await;
        let owners = [
            self.payer.pubkey(),
            address,
            self.pay_to.pubkey(),
            self.facilitator.pubkey(),
            channels::TREASURY_OWNER,
        ];
        let mut tokens = [None; 5];
        for (slot, owner) in tokens.iter_mut().zip(owners) {
            *slot = self.tokens(&owner).await;
        }
        let rent_payer_lamports = raw_account(&mut self.ctx, &self.facilitator.pubkey())
            .await
            .map_or(0, |a| a.lamports);
        Observed {
            step: format!("{step:?}"),
            result,
            channel_lamports: account.as_ref().map_or(0, |a| a.lamports),
            channel: account.map(|a| (a.owner, a.data)),
            tokens,
            rent_payer_lamports,
        }
    }
}

/// The scenario on the real program and on the stand-in: every step must look the same.
async fn differential(setup: Setup, steps: &[(Step, Expect)]) -> Vec<Observed> {
    let real = run_on(World::new(Engine::Real, setup).await, Engine::Real, steps).await;
    let standin = run_on(
        World::new(Engine::StandIn, setup).await,
        Engine::StandIn,
        steps,
    )
    .await;
    assert_alike(&real, &standin);
    for r in &real {
        if let Some((_, data)) = &r.channel {
            assert!(data.is_empty() || data.len() == CHANNEL_LEN);
        }
    }
    real
}

/// Token balances in [`Observed::tokens`].
const PAYER: usize = 0;
const ESCROW: usize = 1;
const PAY_TO: usize = 2;
const TREASURY: usize = 4;

fn settle(cumulative: u64) -> Step {
    Step::Settle {
        cumulative,
        stranger: false,
    }
}

#[tokio::test]
async fn standin_lives_a_whole_life_in_token_2022() {
    let seen = differential(
        T22,
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (settle(120_000), Pass),
            (Step::TopUp(20_000), Pass),
            (Step::Time(100), Pass),
            (Step::SettleAndSeal(Some(300_000)), Pass),
            (Step::TopUp(1), Code(2)),
            (Step::Distribute, Pass),
            (Step::Distribute, Code(2400)),
            (Step::Reclaim, Code(2414)),
            (Step::Slot(channels::OPEN_SLOT_WINDOW + 1), Pass),
            (Step::Reclaim, Pass),
        ],
    )
    .await;
    let distributed = &seen[6];
    assert_eq!(distributed.tokens[PAY_TO], Some(300_000));
    assert_eq!(distributed.tokens[PAYER], Some(PAYER_TOKENS - 300_000));
    assert_eq!(distributed.tokens[ESCROW], None, "the escrow is closed");
    let last = seen.last().unwrap();
    assert!(last.channel.is_none(), "reclaimed");
}

#[tokio::test]
async fn standin_deallocates_at_a_late_sealed_distribute() {
    differential(
        T22,
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (Step::SettleAndSeal(Some(250_000)), Pass),
            (Step::Slot(channels::OPEN_SLOT_WINDOW + 1), Pass),
            (Step::Distribute, Pass),
            (Step::Reclaim, Kind("InvalidAccountOwner")),
        ],
    )
    .await;
}

#[tokio::test]
async fn standin_closes_with_a_grace_period() {
    differential(
        T22,
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (settle(50_000), Pass),
            (Step::Time(10), Pass),
            (Step::RequestClose, Pass),
            (settle(60_000), Code(2)),
            (Step::TopUp(5), Code(2)),
            (Step::Seal, Code(2201)),
            (Step::Time(10 + i64::from(GRACE) - 1), Pass),
            (Step::SettleAndSeal(Some(70_000)), Pass),
            (Step::Seal, Code(2)),
            (Step::Distribute, Pass),
        ],
    )
    .await;
}

#[tokio::test]
async fn standin_seals_after_the_grace_period_and_refunds_once() {
    differential(
        T22,
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (settle(40_000), Pass),
            (Step::RequestClose, Pass),
            (Step::Time(i64::from(GRACE)), Pass),
            (Step::SettleAndSeal(None), Code(2)),
            (Step::Seal, Pass),
            (Step::WithdrawPayer, Pass),
            (Step::WithdrawPayer, Code(2300)),
            (Step::Distribute, Pass),
            (Step::WithdrawPayer, Code(2)),
        ],
    )
    .await;
}

#[tokio::test]
async fn standin_distributes_an_open_channel_once_per_settlement() {
    differential(
        T22,
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (settle(100_000), Pass),
            (Step::Distribute, Pass),
            (Step::Distribute, Code(2408)),
            (settle(100_003), Pass),
            (Step::Distribute, Pass),
        ],
    )
    .await;
}

#[tokio::test]
async fn standin_refuses_vouchers_as_the_real_program() {
    differential(
        T22,
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (settle(500_001), Code(235)),
            (
                Step::Settle {
                    cumulative: 10_000,
                    stranger: true,
                },
                Code(237),
            ),
            (settle(50_000), Pass),
            (settle(40_000), Code(234)),
            (settle(50_000), Code(234)),
            (Step::TopUp(10_000), Pass),
            (settle(505_000), Pass),
        ],
    )
    .await;
}

#[tokio::test]
async fn standin_requires_a_treasury_account() {
    differential(
        Setup {
            treasury: false,
            ..T22
        },
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (settle(10_000), Pass),
            (Step::Distribute, Code(2402)),
        ],
    )
    .await;
}

#[tokio::test]
async fn standin_redirects_a_closed_recipient_account_to_the_treasury() {
    let seen = differential(
        Setup {
            pay_to_bps: 6_000,
            ..T22
        },
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (Step::ClosePayTo, Pass),
            (settle(100_001), Pass),
            (Step::Distribute, Pass),
            (Step::SettleAndSeal(Some(200_003)), Pass),
            (Step::Distribute, Pass),
        ],
    )
    .await;
    // 60 % of 100 001 (floored) forfeited at the open distribute, then the rest of 60 % of
    // 200 003 and the final sweep.
    assert_eq!(seen[3].tokens[PAY_TO], None);
    assert_eq!(seen[3].tokens[TREASURY], Some(60_000));
    assert!(seen[5].tokens[TREASURY] > Some(120_000));
}

#[tokio::test]
async fn standin_sweeps_prefunded_escrow_tokens_to_the_treasury() {
    let seen = differential(
        T22,
        &[
            (Step::PrefundChannel(1_000_000), Pass),
            (Step::PrefundEscrow(1_234), Pass),
            (Step::Open(OpenVariant::Good), Pass),
            (Step::SettleAndSeal(Some(100_000)), Pass),
            (Step::Distribute, Pass),
        ],
    )
    .await;
    assert_eq!(seen[4].tokens[TREASURY], Some(1_234), "the prefund, swept");
    assert_eq!(seen[4].tokens[PAY_TO], Some(100_000));
}

#[tokio::test]
async fn standin_checks_signers_and_parties() {
    differential(
        T22,
        &[
            (Step::Open(OpenVariant::PayeeIsPayer), Code(2001)),
            (Step::Open(OpenVariant::SlotAhead), Code(2003)),
            (Step::Open(OpenVariant::SlotTooOld), Code(2003)),
            (Step::Open(OpenVariant::Good), Pass),
            (Step::TopUpUnsigned(10), Code(1)),
            (Step::RequestCloseByStranger, Code(5)),
            (Step::WithdrawPayer, Code(2)),
            (Step::Open(OpenVariant::Good), Code(0)),
        ],
    )
    .await;
}

/// One SPL Token payout (everything settled, the payee's share empty): no batch.
#[tokio::test]
async fn standin_pays_one_spl_token_party() {
    differential(
        Setup {
            program: TokenProgram::SplToken,
            ..T22
        },
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (Step::SettleAndSeal(Some(500_000)), Pass),
            (Step::Distribute, Pass),
        ],
    )
    .await;
}

/// Two SPL Token payouts (`pay_to` and the payer's refund): the real program's `Batch`,
/// which the bank's classic SPL Token refuses; the stand-in sends the same and fails the
/// same way. The payer's own withdrawal leaves one payout, which goes through.
#[tokio::test]
async fn standin_batches_two_spl_token_payouts_as_the_real_program() {
    differential(
        Setup {
            program: TokenProgram::SplToken,
            ..T22
        },
        &[
            (Step::Open(OpenVariant::Good), Pass),
            (Step::SettleAndSeal(Some(300_000)), Pass),
            (Step::Distribute, Code(CLASSIC_TOKEN_INVALID_INSTRUCTION)),
            (Step::WithdrawPayer, Pass),
            (Step::Distribute, Pass),
        ],
    )
    .await;
}

/// Short and long account lists: `open`, `settle`, `seal`, `distribute` and `reclaim` answer
/// the runtime's NotEnoughAccountKeys, the others the program's own 9; data is parsed first.
#[tokio::test]
async fn standin_counts_accounts_as_the_real_program() {
    let count = |ix: Target, extra: bool| Step::Count { ix, extra };
    let runtime = Kind("NotEnoughAccountKeys");
    differential(
        T22,
        &[
            (Step::TopUpBadData, Kind("InvalidInstructionData")),
            (count(Target::Open, false), runtime),
            (count(Target::Open, true), runtime),
            (Step::Open(OpenVariant::Good), Pass),
            (count(Target::Settle, false), runtime),
            (count(Target::Settle, true), runtime),
            (count(Target::TopUp, false), Code(9)),
            (count(Target::TopUp, true), Code(9)),
            (count(Target::SettleAndSeal, false), Code(9)),
            (count(Target::RequestClose, true), Code(9)),
            (count(Target::Seal, true), runtime),
            (count(Target::Distribute, false), runtime),
            (count(Target::Distribute, true), Code(2409)),
            (count(Target::WithdrawPayer, false), Code(9)),
            (count(Target::Reclaim, true), runtime),
            (Step::EmitEventUnsigned, Code(1)),
        ],
    )
    .await;
}
