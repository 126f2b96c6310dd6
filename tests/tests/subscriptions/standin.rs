//! The localnet's Subscriptions stand-in (`trust_gate_localnet::standin::subscriptions`)
//! against the real bytecode: each scenario is a list of steps run twice, once on a bank with
//! the stand-in at the program's id and once with the real build, with the same keys, slots
//! and clock. After every step both runs must show the same thing: success or the failing
//! instruction and its error, the authority's and the delegation's owner, lamports and bytes,
//! the user's lamports, and the user's, the receiver's and the second account's token
//! accounts (balances, delegate and delegated amount: their whole data). Compute units and
//! logs are not compared.
//!
//! Each step also states what the real program is expected to answer, so a scenario pins the
//! real behaviour down (every refusal the fixture's README lists: 103, 108, 128, 129, 130,
//! 136, 400, 407, and the slot granularity of `init_id`) as well as the stand-in's likeness.

use super::*;
use anchor_lang::solana_program::system_instruction;
use anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent;
use anchor_spl::token::spl_token;
use anchor_spl::token_2022::spl_token_2022;
use solana_program_test::ProgramTestContext;
use solana_sdk::clock::Clock;
use solana_sdk::program_pack::Pack;
use trust_gate_client::subscriptions::error as code;

const DECIMALS: u8 = 6;
const USER_TOKENS: u64 = 1_000_000;
const PER_PERIOD: u64 = 100_000;
/// The slot and unix time every scenario starts at, the same in both banks.
const SLOT0: u64 = 1_000;
const T0: i64 = 1_800_000_000;

/// One transaction's worth of a scenario, or a move of the clock.
#[derive(Clone, Copy, Debug)]
enum Step {
    InitAuthority,
    /// The authority closed and initialized again in one transaction (so in one slot).
    CloseAndInitAuthority,
    CloseAuthority,
    RevokeAuthority,
    /// A daily delegation of `PER_PERIOD` to the delegatee, nonce `nonce`, from `start`
    /// (seconds after T0, 0: when it lands) for `days`, under the authority's `init_id` as
    /// read now, or a made-up one.
    Create {
        nonce: u64,
        start: i64,
        days: i64,
        stale_init_id: bool,
    },
    /// The authority initialized and the delegation created in one transaction, with the
    /// slot it lands in as the expected `init_id`.
    InitAndCreate {
        nonce: u64,
    },
    RevokeDelegation {
        nonce: u64,
    },
    /// A pull by the delegatee (or a stranger signing in its place) of `amount`, from the
    /// user's associated account (or its second account) into the receiver's.
    Pull {
        nonce: u64,
        amount: u64,
        stranger: bool,
        second_account: bool,
    },
    /// The clock moves to `T0 + seconds`.
    Time(i64),
    /// The bank moves to `SLOT0 + slots`.
    Slot(u64),
}

use trust_gate_program_tests::differential::{
    assert_alike, key, run_on, send_unique, set_clock, Engine, Expect, Scenario,
};
use Expect::{Code, Kind, Ok as Pass};

/// What a step showed, comparable across the two runs.
#[derive(Debug, PartialEq, Eq)]
struct Observed {
    step: String,
    result: Result<(), String>,
    /// Owner, lamports and data: the authority, then the delegations of nonces 1 and 2.
    accounts: Vec<Option<(Pubkey, u64, Vec<u8>)>>,
    user_lamports: u64,
    /// The whole data of the user's associated account, its second account and the
    /// receiver's account.
    tokens: Vec<Option<Vec<u8>>>,
}

struct Bank {
    ctx: ProgramTestContext,
    program: TokenProgram,
    mint: Pubkey,
    user: Keypair,
    delegatee: Keypair,
    stranger: Keypair,
    receiver: Keypair,
    /// The user's second token account of the mint (not its associated one).
    second: Keypair,
    sent: u32,
}

async fn start(engine: Engine) -> ProgramTestContext {
    let mut pt = trust_gate_localnet::native::program_test();
    match engine {
        Engine::Real => trust_gate_program_tests::subscriptions::add_to(&mut pt),
        Engine::StandIn => trust_gate_localnet::native::add_subscriptions_standin(&mut pt),
    }
    pt.start_with_context().await
}

impl Bank {
    /// The same keys, mint, balances, slot and time in either bank.
    async fn new(engine: Engine, program: TokenProgram) -> Bank {
        let mut ctx = start(engine).await;
        set_clock(&mut ctx, SLOT0, T0).await;
        let (mint, authority) = (key(1), key(2));
        let (user, delegatee, stranger, receiver, second) =
            (key(3), key(4), key(5), key(6), key(7));
        let fee_payer = ctx.payer.pubkey();
        let id = program.id();
        let m = mint.pubkey();
        let rent = ctx.banks_client.get_rent().await.unwrap();
        let fund = |to: &Pubkey| system_instruction::transfer(&fee_payer, to, 10_000_000_000);
        // A mint without extensions is the same 82 bytes in both token programs.
        let create_mint = system_instruction::create_account(
            &fee_payer,
            &m,
            rent.minimum_balance(spl_token::state::Mint::LEN),
            spl_token::state::Mint::LEN as u64,
            &id,
        );
        let init_mint = spl_token_2022::instruction::initialize_mint2(
            &id,
            &m,
            &authority.pubkey(),
            None,
            DECIMALS,
        )
        .unwrap();
        let ata =
            |owner: &Pubkey| create_associated_token_account_idempotent(&fee_payer, owner, &m, &id);
        let create_second = system_instruction::create_account(
            &fee_payer,
            &second.pubkey(),
            rent.minimum_balance(spl_token::state::Account::LEN),
            spl_token::state::Account::LEN as u64,
            &id,
        );
        let init_second = spl_token_2022::instruction::initialize_account3(
            &id,
            &second.pubkey(),
            &m,
            &user.pubkey(),
        )
        .unwrap();
        let mint_to = |to: &Pubkey| {
            spl_token_2022::instruction::mint_to(&id, &m, to, &authority.pubkey(), &[], USER_TOKENS)
                .unwrap()
        };
        let ixs = vec![
            fund(&user.pubkey()),
            fund(&delegatee.pubkey()),
            fund(&stranger.pubkey()),
            create_mint,
            init_mint,
            ata(&user.pubkey()),
            ata(&receiver.pubkey()),
            create_second,
            init_second,
            mint_to(&program.associated_account(&user.pubkey(), &m)),
            mint_to(&second.pubkey()),
        ];
        send(&mut ctx, &ixs, &[&mint, &authority, &second])
            .await
            .unwrap();
        Bank {
            ctx,
            program,
            mint: m,
            user,
            delegatee,
            stranger,
            receiver,
            second,
            sent: 0,
        }
    }

    fn delegation(&self, nonce: u64) -> Pubkey {
        subscriptions::delegation(
            &self.user.pubkey(),
            &self.mint,
            &self.delegatee.pubkey(),
            nonce,
        )
    }

    fn authority(&self) -> Pubkey {
        subscriptions::subscription_authority(&self.user.pubkey(), &self.mint)
    }

    async fn init_id(&mut self) -> i64 {
        let address = self.authority();
        match raw_account(&mut self.ctx, &address).await {
            Some(a) => subscriptions::SubscriptionAuthority::read(&a.data).map_or(0, |s| s.init_id),
            None => 0,
        }
    }

    async fn now(&mut self) -> Clock {
        self.ctx.banks_client.get_sysvar().await.unwrap()
    }

    fn terms(nonce: u64, start: i64, days: i64) -> RecurringTerms {
        RecurringTerms {
            nonce,
            amount_per_period: PER_PERIOD,
            period_length_s: DAY,
            start_ts: if start == 0 { 0 } else { T0 + start },
            expiry_ts: T0 + days * DAY as i64,
        }
    }

    /// Sends `ixs` with a unique trailing unit limit (a step repeated on purpose is executed,
    /// not refused as already processed).
    async fn send(&mut self, ixs: Vec<Instruction>, signers: &[&Keypair]) -> Result<(), String> {
        send_unique(&mut self.ctx, &mut self.sent, ixs, signers).await
    }
}

impl Scenario for Bank {
    type Step = Step;
    type Observed = Observed;

    async fn run(&mut self, step: Step) -> Result<(), String> {
        let (user, delegatee, stranger) = (
            self.user.insecure_clone(),
            self.delegatee.insecure_clone(),
            self.stranger.insecure_clone(),
        );
        let (u, m, program) = (user.pubkey(), self.mint, self.program);
        match step {
            Step::InitAuthority => {
                let ix = subscriptions::init_subscription_authority(&u, &m, program);
                self.send(vec![ix], &[&user]).await
            }
            Step::CloseAndInitAuthority => {
                let ixs = vec![
                    subscriptions::close_subscription_authority(&u, &m),
                    subscriptions::init_subscription_authority(&u, &m, program),
                ];
                self.send(ixs, &[&user]).await
            }
            Step::CloseAuthority => {
                let ix = subscriptions::close_subscription_authority(&u, &m);
                self.send(vec![ix], &[&user]).await
            }
            Step::RevokeAuthority => {
                let ix = subscriptions::revoke_subscription_authority(&u, &m, program);
                self.send(vec![ix], &[&user]).await
            }
            Step::Create {
                nonce,
                start,
                days,
                stale_init_id,
            } => {
                let init_id = self.init_id().await + i64::from(stale_init_id);
                let terms = Self::terms(nonce, start, days);
                let ix = subscriptions::create_recurring_delegation(
                    &u,
                    &m,
                    &delegatee.pubkey(),
                    &terms,
                    init_id,
                );
                self.send(vec![ix], &[&user]).await
            }
            Step::InitAndCreate { nonce } => {
                // A bank's slot stands still between transactions: the one it lands in.
                let slot = self.now().await.slot as i64;
                let ixs = vec![
                    subscriptions::init_subscription_authority(&u, &m, program),
                    subscriptions::create_recurring_delegation(
                        &u,
                        &m,
                        &delegatee.pubkey(),
                        &Self::terms(nonce, 0, 30),
                        slot,
                    ),
                ];
                self.send(ixs, &[&user]).await
            }
            Step::RevokeDelegation { nonce } => {
                let ix = subscriptions::revoke_delegation(&u, &self.delegation(nonce));
                self.send(vec![ix], &[&user]).await
            }
            Step::Pull {
                nonce,
                amount,
                stranger: by_stranger,
                second_account,
            } => {
                let address = self.delegation(nonce);
                // Built from the delegation's fields as created (it may be gone by now).
                let d = RecurringDelegation {
                    delegator: u,
                    delegatee: delegatee.pubkey(),
                    payer: u,
                    init_id: 0,
                    subscription_authority: self.authority(),
                    mint: m,
                    current_period_start_ts: 0,
                    period_length_s: DAY,
                    expiry_ts: 0,
                    amount_per_period: PER_PERIOD,
                    amount_pulled_in_period: 0,
                };
                let receiver = program.associated_account(&self.receiver.pubkey(), &m);
                let mut ix =
                    subscriptions::transfer_recurring(&address, &d, &receiver, program, amount);
                let signer = if by_stranger { &stranger } else { &delegatee };
                ix.accounts[6].pubkey = signer.pubkey();
                if second_account {
                    ix.accounts[2].pubkey = self.second.pubkey();
                }
                self.send(vec![ix], &[signer]).await
            }
            Step::Time(seconds) => {
                let slot = self.now().await.slot;
                set_clock(&mut self.ctx, slot, T0 + seconds).await;
                Ok(())
            }
            Step::Slot(slots) => {
                let now = self.now().await;
                set_clock(&mut self.ctx, SLOT0 + slots, now.unix_timestamp).await;
                Ok(())
            }
        }
    }

    async fn observe(&mut self, step: Step, result: Result<(), String>) -> Observed {
        let mut accounts = Vec::new();
        for address in [self.authority(), self.delegation(1), self.delegation(2)] {
            let account = raw_account(&mut self.ctx, &address).await;
            accounts.push(account.map(|a| (a.owner, a.lamports, a.data)));
        }
        let mut tokens = Vec::new();
        for address in [
            self.program
                .associated_account(&self.user.pubkey(), &self.mint),
            self.second.pubkey(),
            self.program
                .associated_account(&self.receiver.pubkey(), &self.mint),
        ] {
            tokens.push(raw_account(&mut self.ctx, &address).await.map(|a| a.data));
        }
        let user = self.user.pubkey();
        Observed {
            step: format!("{step:?}"),
            result,
            accounts,
            user_lamports: raw_account(&mut self.ctx, &user)
                .await
                .map_or(0, |a| a.lamports),
            tokens,
        }
    }
}

/// The scenario on the real program and on the stand-in: every step must look the same.
async fn differential(program: TokenProgram, steps: &[(Step, Expect)]) {
    let real = run_on(Bank::new(Engine::Real, program).await, Engine::Real, steps).await;
    let standin = run_on(
        Bank::new(Engine::StandIn, program).await,
        Engine::StandIn,
        steps,
    )
    .await;
    assert_alike(&real, &standin);
}

const fn pull(nonce: u64, amount: u64) -> Step {
    Step::Pull {
        nonce,
        amount,
        stranger: false,
        second_account: false,
    }
}

const fn create(nonce: u64, start: i64, days: i64) -> Step {
    Step::Create {
        nonce,
        start,
        days,
        stale_init_id: false,
    }
}

/// A delegation's life: pulls within the period, its cap (400), a stranger as delegatee
/// (130), a zero amount (129), the next period; the authority revoked (103), initialized
/// again in a later slot (136); the delegation revoked and the authority closed, every rent
/// back.
fn life() -> Vec<(Step, Expect)> {
    vec![
        (Step::InitAuthority, Pass),
        // Again: only the approval is refreshed.
        (Step::InitAuthority, Pass),
        (
            Step::Create {
                nonce: 1,
                start: 0,
                days: 30,
                stale_init_id: true,
            },
            Code(code::STALE_SUBSCRIPTION_AUTHORITY),
        ),
        (create(1, 0, 30), Pass),
        (create(1, 0, 30), Code(code::DELEGATION_ALREADY_EXISTS)),
        (pull(1, 60_000), Pass),
        (pull(1, 50_000), Code(code::AMOUNT_EXCEEDS_PERIOD_LIMIT)),
        (
            Step::Pull {
                nonce: 1,
                amount: 10_000,
                stranger: true,
                second_account: false,
            },
            Code(code::UNAUTHORIZED),
        ),
        (pull(1, 0), Code(code::INVALID_AMOUNT)),
        (pull(1, 40_000), Pass),
        (Step::Time(DAY as i64), Pass),
        (pull(1, PER_PERIOD), Pass),
        (Step::RevokeAuthority, Pass),
        (
            pull(1, 10_000),
            Code(code::INVALID_SUBSCRIPTION_AUTHORITY_PDA),
        ),
        (Step::Slot(5), Pass),
        (Step::InitAuthority, Pass),
        // The period is used up: that refusal (400) would come first.
        (pull(1, 10_000), Code(code::AMOUNT_EXCEEDS_PERIOD_LIMIT)),
        (Step::Time(2 * DAY as i64), Pass),
        (pull(1, 10_000), Code(code::STALE_SUBSCRIPTION_AUTHORITY)),
        (Step::RevokeDelegation { nonce: 1 }, Pass),
        (pull(1, 10_000), Kind("InvalidAccountOwner")),
        (Step::CloseAuthority, Pass),
        (Step::CloseAuthority, Kind("InvalidAccountOwner")),
    ]
}

#[tokio::test]
async fn the_standin_lives_a_delegation_as_the_real_program_in_spl_token() {
    differential(TokenProgram::SplToken, &life()).await;
}

#[tokio::test]
async fn the_standin_lives_a_delegation_as_the_real_program_in_token_2022() {
    differential(TokenProgram::Token2022, &life()).await;
}

/// Time: a delegation not started (407), expired (128), and the last period before an
/// expiry billed; a pull from another account than the delegator's associated one (108).
#[tokio::test]
async fn the_standin_keeps_the_real_programs_time_and_account_rules() {
    let steps = vec![
        (Step::InitAuthority, Pass),
        (create(1, DAY as i64, 3), Pass),
        (pull(1, 1_000), Code(code::DELEGATION_NOT_STARTED)),
        (Step::Time(DAY as i64), Pass),
        (pull(1, 1_000), Pass),
        (
            Step::Pull {
                nonce: 1,
                amount: 1_000,
                stranger: false,
                second_account: true,
            },
            Code(code::INVALID_ASSOCIATED_TOKEN_ACCOUNT),
        ),
        // The last period that starts before the expiry (day 2 to 3) is billed whole.
        (Step::Time(2 * DAY as i64 + 10), Pass),
        (pull(1, PER_PERIOD), Pass),
        (Step::Time(3 * DAY as i64 + 1), Pass),
        (pull(1, 1), Code(code::DELEGATION_EXPIRED)),
        // Creating: a start in the past, at or after the expiry.
        (create(2, -(DAY as i64), 30), Code(code::START_IN_PAST)),
        (
            create(2, 40 * DAY as i64, 30),
            Code(code::START_AFTER_EXPIRY),
        ),
    ];
    differential(TokenProgram::SplToken, &steps).await;
}

/// `init_id` is the slot: an authority closed and initialized again in one slot keeps its
/// delegations (the program's own caution), one initialized again in a later slot stales
/// them; the authority and a delegation made in one transaction, with the slot it lands in.
#[tokio::test]
async fn the_standin_keeps_init_id_to_the_slot() {
    let steps = vec![
        (Step::InitAndCreate { nonce: 1 }, Pass),
        (pull(1, 1_000), Pass),
        (Step::CloseAndInitAuthority, Pass),
        (pull(1, 1_000), Pass),
        (Step::Slot(3), Pass),
        (Step::CloseAndInitAuthority, Pass),
        (pull(1, 1_000), Code(code::STALE_SUBSCRIPTION_AUTHORITY)),
        (create(2, 0, 30), Pass),
        (pull(2, 1_000), Pass),
    ];
    differential(TokenProgram::Token2022, &steps).await;
}
