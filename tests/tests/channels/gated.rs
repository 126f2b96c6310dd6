//! The gated open: `gate_channel_open` right before the real program's `open`, with our
//! programs and the registry's stand-in. Allowed, it counts the deposit under the payer's
//! policy and records the channel; refused for a distribution to anyone but the payee's
//! recipient, another deposit, a channel not held by the facilitator, every class of policy
//! rule (as the strict gate refuses a payment), a vault-funded policy, and any other transaction
//! layout; the exact settlement's layout is unchanged.

use gate::errors::GateError;
use policy_vault::engine::{Decision, DenyReason};
use policy_vault::state::{funding, PolicyParams, PolicyRules};
use solana_program_test::BanksClientError;
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::channels::{self, Open, Split};
use trust_gate_client::instructions::{Attestations, FeedbackArgs};
use trust_gate_client::settle::TokenProgram;
use trust_gate_program_tests::world::{demo_policy, sdk, Agent, World};
use trust_gate_program_tests::{assert_code, clock, fetch, raw_account, send};

/// Well within the demo policy's caps (per payment 5 tokens).
pub(super) const DEPOSIT: u64 = 1_000_000;

pub(super) fn copy(a: &Agent) -> Agent {
    Agent {
        owner: a.owner.insecure_clone(),
        asset: a.asset.insecure_clone(),
    }
}

pub(super) struct Setup {
    pub(super) w: World,
    pub(super) payer: Agent,
    pub(super) payee: Agent,
    /// The channels' voucher key.
    pub(super) voucher: Keypair,
    /// The next open's salt (a new channel address each time).
    salt: u64,
}

pub(super) async fn setup() -> Setup {
    let mut pt = trust_gate_localnet::native::program_test();
    trust_gate_program_tests::channels::add_to(&mut pt);
    let mut w = World::with_program_test(pt).await;
    w.advance_slots(1_000).await;
    let (payer, payee) = w.parties().await;
    // Where a distribute sends rounding dust and forfeited shares: it must exist.
    w.token_account(&channels::TREASURY_OWNER, 0).await;
    Setup {
        w,
        payer,
        payee,
        voucher: Keypair::new(),
        salt: 1,
    }
}

impl Setup {
    /// The open x402's channel schemes make: the payer agent's owner pays `deposit`, all of it
    /// to the payee's owner (its recipient), the facilitator holds the channel.
    pub(super) async fn open(&mut self, deposit: u64) -> Open {
        let payer = self.payer.owner.pubkey();
        self.open_for(&payer, deposit).await
    }

    /// [`Setup::open`] for another payer agent's `owner`.
    pub(super) async fn open_for(&mut self, owner: &Pubkey, deposit: u64) -> Open {
        self.salt += 1;
        Open {
            payer: *owner,
            rent_payer: self.w.facilitator.pubkey(),
            payee: self.w.facilitator.pubkey(),
            mint: self.w.mint,
            token_program: TokenProgram::SplToken,
            authorized_signer: self.voucher.pubkey(),
            salt: self.salt,
            deposit,
            grace_period: 3_600,
            open_slot: clock(&mut self.w.ctx).await.slot,
            splits: vec![Split {
                recipient: self.payee.owner.pubkey(),
                bps: channels::ALL_BPS,
            }],
        }
    }

    pub(super) fn gate(&self, payer: &Agent, open: &Open, deposit: u64) -> Instruction {
        sdk().gate_channel_open(
            &payer.owner.pubkey(),
            &payer.asset(),
            &self.payee.asset(),
            &self.w.facilitator.pubkey(),
            &self.w.mint,
            deposit,
            1,
            &open.channel(),
            Attestations::default(),
        )
    }

    pub(super) async fn send(
        &mut self,
        ixs: &[Instruction],
        payer: &Agent,
    ) -> Result<(), BanksClientError> {
        let facilitator = self.w.facilitator.insecure_clone();
        let owner = payer.owner.insecure_clone();
        send(&mut self.w.ctx, ixs, &[&owner, &facilitator]).await
    }
}

#[tokio::test]
async fn a_gated_open_counts_the_deposit_and_records_the_channel() {
    let mut s = setup().await;
    let open = s.open(DEPOSIT).await;
    let payer = copy(&s.payer);
    let gate = s.gate(&payer, &open, DEPOSIT);
    s.send(&[gate, open.instruction()], &payer).await.unwrap();

    let account = raw_account(&mut s.w.ctx, &open.channel()).await.unwrap();
    let channel = channels::Channel::decode(&account.data).unwrap();
    assert_eq!(
        (channel.deposit, channel.payee),
        (DEPOSIT, s.w.facilitator.pubkey())
    );
    // Counted like a payment of the deposit: the day's and week's spending, the velocity.
    assert_eq!(s.w.counters(&payer).await, (DEPOSIT, DEPOSIT, DEPOSIT));
    let record: gate::state::ChannelRecord =
        fetch(&mut s.w.ctx, &sdk().pda.channel_record(&open.channel()))
            .await
            .unwrap();
    let now = clock(&mut s.w.ctx).await.unix_timestamp;
    assert_eq!(
        (
            record.channel,
            record.deposit,
            record.policy_id,
            record.open_slot
        ),
        (open.channel(), DEPOSIT, 1, open.open_slot)
    );
    assert_eq!(
        (record.payer_asset, record.payee_asset, record.payer_signer),
        (payer.asset(), s.payee.asset(), payer.owner.pubkey())
    );
    assert_eq!(
        (record.facilitator, record.mint, record.authorized_signer),
        (s.w.facilitator.pubkey(), s.w.mint, open.authorized_signer)
    );
    assert_eq!(
        (record.day_index, record.week_index, record.month_index),
        (
            policy_vault::engine::time::day_index(now),
            policy_vault::engine::time::week_index(now),
            policy_vault::engine::time::month_index(now)
        )
    );
    // The same channel cannot be recorded, and so opened through the gate, twice.
    let again = s.gate(&payer, &open, DEPOSIT);
    let result = s.send(&[again, open.instruction()], &payer).await;
    assert!(result.is_err(), "a second gated open of the same channel");
}

#[tokio::test]
async fn a_gated_open_is_refused_unless_it_pays_the_payee_from_the_payer_into_the_facilitators_hands(
) {
    let mut s = setup().await;
    let payer = copy(&s.payer);
    let code = |e: GateError| u32::from(e);

    // 100 % to someone else, or split with someone else.
    for splits in [
        vec![Split {
            recipient: Keypair::new().pubkey(),
            bps: channels::ALL_BPS,
        }],
        vec![
            Split {
                recipient: s.payee.owner.pubkey(),
                bps: 5_000,
            },
            Split {
                recipient: Keypair::new().pubkey(),
                bps: 5_000,
            },
        ],
    ] {
        let open = Open {
            splits,
            ..s.open(DEPOSIT).await
        };
        let gate = s.gate(&payer, &open, DEPOSIT);
        assert_code(
            s.send(&[gate, open.instruction()], &payer).await,
            code(GateError::ChannelDistributionInvalid),
        );
    }
    // The gate evaluates another amount than the open deposits.
    let open = s.open(DEPOSIT).await;
    let gate = s.gate(&payer, &open, DEPOSIT - 1);
    assert_code(
        s.send(&[gate, open.instruction()], &payer).await,
        code(GateError::ChannelOpenMismatch),
    );
    // Someone else holds the channel (its payee and rent payer).
    let other = Keypair::new();
    trust_gate_program_tests::fund(&mut s.w.ctx, &other.pubkey(), 1_000_000_000).await;
    let open = Open {
        rent_payer: other.pubkey(),
        payee: other.pubkey(),
        ..s.open(DEPOSIT).await
    };
    let gate = s.gate(&payer, &open, DEPOSIT);
    let owner = payer.owner.insecure_clone();
    let facilitator = s.w.facilitator.insecure_clone();
    assert_code(
        send(
            &mut s.w.ctx,
            &[gate, open.instruction()],
            &[&owner, &facilitator, &other],
        )
        .await,
        code(GateError::ChannelFacilitatorMismatch),
    );
    // Above the policy's per-payment cap: denied as a payment would be (reason 2).
    let open = s.open(5_000_001).await;
    let gate = s.gate(&payer, &open, 5_000_001);
    assert_code(s.send(&[gate, open.instruction()], &payer).await, 6_002);
    // The gate alone, or followed by anything but the open and memos: an emit_feedback after
    // a channel open is no settlement either.
    let open = s.open(DEPOSIT).await;
    let gate = s.gate(&payer, &open, DEPOSIT);
    assert_code(
        s.send(std::slice::from_ref(&gate), &payer).await,
        code(GateError::ChannelBundleInvalid),
    );
    let collection = s.w.collection.pubkey();
    let feedback = sdk().emit_feedback(
        &s.w.facilitator.pubkey(),
        &collection,
        FeedbackArgs {
            payment_id_hash: [9; 32],
            payee_asset: s.payee.asset(),
            score: 100,
            value: DEPOSIT,
            value_decimals: 6,
            tag1: "x402".into(),
            tag2: String::new(),
            endpoint: String::new(),
            feedback_uri: String::new(),
        },
    );
    assert_code(
        s.send(&[gate, open.instruction(), feedback], &payer).await,
        code(GateError::ChannelBundleInvalid),
    );
    // Nothing was counted.
    assert_eq!(s.w.counters(&payer).await, (0, 0, 0));
}

#[tokio::test]
async fn a_vault_funded_policy_cannot_open_a_channel() {
    let mut s = setup().await;
    let policy = PolicyParams {
        funding: funding::VAULT,
        ..demo_policy(s.w.mint)
    };
    let payer = s.w.payer_with_policy(3, policy).await;
    s.w.token_account(&payer.owner.pubkey(), 10_000_000).await;
    let open = Open {
        payer: payer.owner.pubkey(),
        ..s.open(DEPOSIT).await
    };
    let gate = s.gate(&payer, &open, DEPOSIT);
    assert_code(
        s.send(&[gate, open.instruction()], &payer).await,
        u32::from(GateError::ChannelVaultFunded),
    );
}

/// The largest gated open the layout allows (a unit limit and price before it, two memos
/// after it) fits in one packet as a v0 transaction whose static accounts come from the
/// facilitator's lookup table; as a legacy transaction it does not.
#[tokio::test]
async fn the_largest_gated_open_fits_in_a_packet_as_v0_with_a_lookup_table() {
    use trust_gate_client::settle::ComputeBudget;
    const PACKET_LIMIT: usize = 1232;

    let mut s = setup().await;
    let payer = copy(&s.payer);
    let open = s.open(DEPOSIT).await;
    let mut bundle = ComputeBudget {
        unit_limit: Some(400_000),
        unit_price_micro_lamports: Some(5_000_000),
    }
    .instructions();
    bundle.push(s.gate(&payer, &open, DEPOSIT));
    bundle.push(open.instruction());
    for memo in [
        &b"seller memo: 32 characters long."[..],
        b"x402 binding memo of a receiver.",
    ] {
        bundle.push(Instruction::new_with_bytes(
            trust_gate_program_common::external::ids::MEMO,
            memo,
            vec![],
        ));
    }
    let facilitator = s.w.facilitator.insecure_clone();
    // Accounts every gated open of this facilitator and mint shares (programs only invoked
    // by others may come from the table; the top-level programs may not).
    let statics = vec![
        policy_vault::ID,
        anchor_lang::system_program::ID,
        solana_sdk::sysvar::instructions::ID,
        solana_sdk::sysvar::rent::ID,
        s.w.mint,
        anchor_spl::token::ID,
        anchor_spl::associated_token::ID,
        channels::event_authority(),
        sdk().pda.evaluate_signer(),
    ];
    let table = s.w.lookup_table(&facilitator, statics).await;
    let (legacy_size, tx) =
        s.w.v0_transaction(&bundle, &facilitator, &[&payer.owner], table)
            .await;
    let size = bincode::serialize(&tx).unwrap().len();
    println!("largest gated open: legacy {legacy_size} bytes, v0 + lookup table {size} bytes (limit {PACKET_LIMIT})");
    assert!(
        legacy_size > PACKET_LIMIT,
        "the reason for the table: {legacy_size}"
    );
    assert!(size <= PACKET_LIMIT, "v0 gated open is {size} bytes");
    trust_gate_program_tests::process(&mut s.w.ctx, tx)
        .await
        .unwrap();
    assert_eq!(s.w.counters(&payer).await, (DEPOSIT, DEPOSIT, DEPOSIT));
}

impl Setup {
    /// A gated open of [`DEPOSIT`] by `payer` to `payee` (100 % to its owner).
    async fn open_between(&mut self, payer: &Agent, payee: &Agent) -> Result<(), BanksClientError> {
        let open = Open {
            splits: vec![Split {
                recipient: payee.owner.pubkey(),
                bps: channels::ALL_BPS,
            }],
            ..self.open_for(&payer.owner.pubkey(), DEPOSIT).await
        };
        let gate = sdk().gate_channel_open(
            &payer.owner.pubkey(),
            &payer.asset(),
            &payee.asset(),
            &self.w.facilitator.pubkey(),
            &self.w.mint,
            DEPOSIT,
            1,
            &open.channel(),
            Attestations::default(),
        );
        self.send(&[gate, open.instruction()], payer).await
    }

    /// A payer agent of tier 3 under `policy`, its wallet holding ten deposits.
    async fn payer_under(&mut self, policy: PolicyParams) -> Agent {
        let payer = self.w.payer_with_policy(3, policy).await;
        self.w
            .token_account(&payer.owner.pubkey(), 10 * DEPOSIT)
            .await;
        payer
    }

    /// The gated open of `payer` to `payee` is refused for `reason`, as the strict gate
    /// refuses a payment (the same decision first asked of the read-only gate).
    async fn refused_for(&mut self, payer: &Agent, payee: &Agent, reason: DenyReason) {
        let decision = self
            .w
            .decide(payer, payee, DEPOSIT, Attestations::default())
            .await;
        assert_eq!(decision, Decision::Deny(reason));
        assert_code(
            self.open_between(payer, payee).await,
            reason.strict_error_code(),
        );
    }
}

/// Every class of rule the strict gate runs on a payment refuses a gated open of a deposit it
/// would not allow: the kill switch, the spending caps, the velocity window, the payer's
/// requirements of the payee, the payee's of the payer, attestations, and a policy's list.
#[tokio::test]
async fn a_gated_open_is_refused_by_every_class_of_rule() {
    use policy_vault::engine::kinds;
    use trust_gate_program_tests::world::{min_tier_acceptance, open_policy};
    let mut s = setup().await;
    let mint = s.w.mint;
    let payee = copy(&s.payee);

    // The kill switch, paused by the payer's authority.
    let payer = copy(&s.payer);
    let owner = payer.owner.insecure_clone();
    let pause = sdk().set_killswitch(&owner.pubkey(), &[], &payer.asset(), true);
    send(&mut s.w.ctx, &[pause], &[&owner]).await.unwrap();
    s.refused_for(&payer, &payee, DenyReason::KillSwitchEngaged)
        .await;

    // The daily cap and the velocity window: the second deposit of the day, of the hour.
    for (kind, reason) in [
        (kinds::SPENDING, DenyReason::SpendingDailyExceeded),
        (kinds::VELOCITY, DenyReason::VelocityWindowExceeded),
    ] {
        let payer = s
            .payer_under(PolicyParams {
                kinds: kind,
                per_tx_cap: DEPOSIT,
                daily_cap: DEPOSIT,
                weekly_cap: 10 * DEPOSIT,
                velocity_window_secs: 3_600,
                velocity_max_in_window: DEPOSIT,
                ..open_policy(mint)
            })
            .await;
        s.open_between(&payer, &payee).await.unwrap();
        s.refused_for(&payer, &payee, reason).await;
    }

    // The payer's minimum tier of its payee (3 here), and an unrated payee it wants an
    // attestation for.
    let payer = s
        .payer_under(PolicyParams {
            kinds: kinds::COUNTERPARTY_TIER,
            min_counterparty_tier: 4,
            ..open_policy(mint)
        })
        .await;
    s.refused_for(&payer, &payee, DenyReason::CounterpartyTierBelowMin)
        .await;
    let unrated = s.w.register_unrated_agent().await;
    let capability = s.w.register_namespace("kyc.tier-1.v1").await;
    let payer = s
        .payer_under(PolicyParams {
            kinds: kinds::COUNTERPARTY_TIER,
            min_counterparty_tier: 1,
            unrated_treatment: 2,
            required_capability: capability,
            ..open_policy(mint)
        })
        .await;
    assert!(matches!(
        s.w.decide(&payer, &unrated, DEPOSIT, Attestations::default())
            .await,
        Decision::RequireValidation { .. }
    ));
    assert_code(
        s.open_between(&payer, &unrated).await,
        u32::from(GateError::ValidationRequired),
    );

    // The payee's acceptance policy: a payer of tier 4 at least.
    let choosy = s.w.payee(3, Some(min_tier_acceptance(4))).await;
    let payer = s.payer_under(open_policy(mint)).await;
    let Decision::Deny(reason) =
        s.w.decide(&payer, &choosy, DEPOSIT, Attestations::default())
            .await
    else {
        panic!("the payee's acceptance policy allowed a tier-3 payer");
    };
    s.refused_for(&payer, &choosy, reason).await;

    // A policy's allow list without the payee.
    let rules = PolicyRules {
        payee_list_mode: 1,
        payees: [
            Pubkey::new_unique(),
            Pubkey::default(),
            Pubkey::default(),
            Pubkey::default(),
        ],
        ..PolicyRules::default()
    };
    let payer = s.w.payer_with_limits(3, open_policy(mint), rules).await;
    s.w.token_account(&payer.owner.pubkey(), 10 * DEPOSIT).await;
    s.refused_for(&payer, &payee, DenyReason::PayeeNotAllowed)
        .await;
}

/// The exact settlement's rule is unchanged: its strict gate still wants exactly
/// [gate_payment_strict, TransferChecked, emit_feedback], so a channel open cannot ride on a
/// settlement, and a settlement alone still lands.
#[tokio::test]
async fn a_settlement_stays_exactly_its_three_instructions() {
    let mut s = setup().await;
    let payer = copy(&s.payer);
    let payee = copy(&s.payee);
    let settlement =
        s.w.settlement(
            &payer,
            &payee,
            1_000,
            trust_gate_program_tests::payment_id(),
        )
        .await;
    let open = s.open(DEPOSIT).await;
    let gate = s.gate(&payer, &open, DEPOSIT);
    let mut ixs = settlement.to_vec();
    ixs.extend([gate, open.instruction()]);
    assert_code(
        s.send(&ixs, &payer).await,
        u32::from(GateError::SettlementLayoutInvalid),
    );
    let owner = payer.owner.insecure_clone();
    let facilitator = s.w.facilitator.insecure_clone();
    send(&mut s.w.ctx, &settlement, &[&owner, &facilitator])
        .await
        .unwrap();
    assert_eq!(s.w.counters(&payer).await, (1_000, 1_000, 1_000));
}

/// A deposit above the payer policy's approval threshold needs the members' approval of its
/// terms, as a payment does: refused by name without it, opened once with it (the approval
/// closed back to the member who paid its rent), refused again after.
#[tokio::test]
async fn a_deposit_above_the_approval_threshold_opens_once_with_its_approval() {
    use gate::errors::GateError;
    use policy_vault::state::ApprovalTerms;
    use solana_sdk::instruction::AccountMeta;
    use trust_gate_program_tests::world::{open_policy, tier};
    let mut s = setup().await;
    let payee = copy(&s.payee);
    let payer = s.w.register_agent().await;
    s.w.set_stats(&payer.asset(), tier(3)).await;
    s.w.init_authority(&payer).await;
    let mint = s.w.mint;
    s.w.init_policy_with_limits_approved(
        &payer,
        1,
        open_policy(mint),
        PolicyRules::default(),
        DEPOSIT / 2,
    )
    .await
    .unwrap();
    s.w.token_account(&payer.owner.pubkey(), 10 * DEPOSIT).await;
    let required = u32::from(GateError::ApprovalRequired);
    assert_eq!(
        s.w.decide(&payer, &payee, DEPOSIT, Attestations::default())
            .await,
        Decision::RequireApproval
    );
    assert_code(s.open_between(&payer, &payee).await, required);

    let owner = payer.owner.insecure_clone();
    let terms = ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: payee.asset(),
        mint,
        amount: DEPOSIT,
        policy_id: 1,
    };
    let ix = sdk().approve_payment(&owner.pubkey(), &[], terms, s.w.now + 600);
    send(&mut s.w.ctx, &[ix], &[&owner]).await.unwrap();
    let approval = sdk().pda.approval(&terms);
    let open = Open {
        splits: vec![Split {
            recipient: payee.owner.pubkey(),
            bps: channels::ALL_BPS,
        }],
        ..s.open_for(&owner.pubkey(), DEPOSIT).await
    };
    let mut gate = sdk().gate_channel_open(
        &owner.pubkey(),
        &payer.asset(),
        &payee.asset(),
        &s.w.facilitator.pubkey(),
        &mint,
        DEPOSIT,
        1,
        &open.channel(),
        Attestations::default(),
    );
    gate.accounts.push(AccountMeta::new(approval, false));
    gate.accounts.push(AccountMeta::new(owner.pubkey(), false));
    s.send(&[gate, open.instruction()], &payer).await.unwrap();
    assert!(
        raw_account(&mut s.w.ctx, &approval).await.is_none(),
        "used up"
    );
    assert!(raw_account(&mut s.w.ctx, &open.channel()).await.is_some());
    // Counted as the deposit, as any gated open.
    let policy: policy_vault::state::PolicyAccount =
        fetch(&mut s.w.ctx, &sdk().pda.policy(&payer.asset(), 1))
            .await
            .unwrap();
    assert_eq!(policy.day_spent, DEPOSIT);
    assert_code(s.open_between(&payer, &payee).await, required);
}
