//! gate: decisions, the strict gate, feedback, disputes, registration, authority, kill switch.

use super::Builder;
use crate::subscriptions::{self, RecurringDelegation, RecurringTerms};
use crate::token::TokenProgram;
use anchor_lang::prelude::Pubkey;
use anchor_lang::system_program;
pub use gate::instructions::FeedbackDetails;
use gate::instructions::{DisputePaymentArgs, EmitFeedbackArgs};
use gate::settlement::PaymentArgs;
use gate::state::{ChannelRecord, GatedSubscription};
use gate::{accounts, instruction};
use solana_sdk::instruction::{AccountMeta, Instruction};
use solana_sdk::sysvar;

/// The optional accounts of an evaluation (an absent one is `None`): the attestations, and
/// the payee list account a policy may name (read with the policy's rules, see
/// `simulate::rules`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Attestations {
    /// An attestation about the payer (asked by the payee's AcceptancePolicy).
    pub payer: Option<Pubkey>,
    /// An attestation about the payee (asked by the payer's policy).
    pub payee: Option<Pubkey>,
    /// The payer policy's PayeeList (`PolicyRules::payee_list`), when it names one; without
    /// it the builders pass the policy account in its place.
    pub payee_list: Option<Pubkey>,
}

/// A payment's approval on chain (`policy_vault::approve_payment`), passed to the gate: the
/// approval and the member who paid its rent. The settlement (or gated channel open) that
/// uses it closes it to them, so both are writable, and they come first among the gate
/// instruction's remaining accounts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ApprovalUse {
    /// The approval's address: `Pdas::approval` of the payment's terms.
    pub address: Pubkey,
    /// `PaymentApproval::rent_payer`.
    pub rent_payer: Pubkey,
}

impl ApprovalUse {
    /// `ix` (a committing gate instruction) with [approval, rent payer] after its accounts.
    pub fn append_to(&self, ix: &mut Instruction) {
        ix.accounts.extend([
            AccountMeta::new(self.address, false),
            AccountMeta::new(self.rent_payer, false),
        ]);
    }
}

/// The extra accounts of a settlement under a vault-funded policy: the strict gate releases
/// the amount from the payer's vault (derived from the payer asset and the mint) into
/// `payer_token`, which the transfer then debits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VaultRelease {
    /// The payer signer's token account of the mint: the transfer's source.
    pub payer_token: Pubkey,
    /// The mint's token program.
    pub token_program: Pubkey,
}

/// The arguments of `emit_feedback` besides the facilitator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedbackArgs {
    pub payment_id_hash: [u8; 32],
    pub payee_asset: Pubkey,
    /// 0..=100.
    pub score: u8,
    /// The paid amount in the mint's base units.
    pub value: u64,
    pub value_decimals: u8,
    pub tag1: String,
    pub tag2: String,
    pub endpoint: String,
    pub feedback_uri: String,
}

/// The accounts the registry's inner registration (`register_with_options` and the engine's
/// `initialize_stats`) needs, derived for one new asset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegistrationAccounts {
    pub root_config: Pubkey,
    pub registry_config: Pubkey,
    pub agent_account: Pubkey,
    pub atom_config: Pubkey,
    pub atom_stats: Pubkey,
}

/// A gated subscription as its delegator sets it up (`Builder::subscribe`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subscription {
    /// The payer agent's live owner or agent wallet: its associated token account pays.
    pub delegator: Pubkey,
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    /// The facilitator that sends the pulls (it must have a GateAuthority).
    pub facilitator: Pubkey,
    pub mint: Pubkey,
    pub token_program: TokenProgram,
    /// The payer's policy for the mint every pull is counted under.
    pub policy_id: u32,
    pub terms: RecurringTerms,
}

impl Builder {
    /// A gate instruction (absent optional accounts become the configured gate id).
    pub(super) fn gate_ix(
        &self,
        accounts: impl anchor_lang::ToAccountMetas,
        data: impl anchor_lang::InstructionData,
    ) -> Instruction {
        self.ix_with_optionals(self.ids.gate, gate::ID, accounts, data)
    }

    fn evaluation(
        &self,
        payer: &Pubkey,
        payee: &Pubkey,
        policy_id: u32,
        att: Attestations,
    ) -> accounts::EvaluationAccounts {
        let policy = self.pda.policy(payer, policy_id);
        accounts::EvaluationAccounts {
            evaluate_signer: self.pda.evaluate_signer(),
            policy,
            velocity_ledger: self.pda.velocity(payer, policy_id),
            killswitch: self.pda.killswitch(payer),
            payer_stats: self.pda.atom_stats(payer),
            payee_stats: self.pda.atom_stats(payee),
            payee_acceptance: self.pda.acceptance(payee),
            payer_attestation: att.payer,
            payee_attestation: att.payee,
            payee_list: att.payee_list.unwrap_or(policy),
            policy_vault_program: self.ids.policy_vault,
        }
    }

    /// The same accounts with the policy and ledger writable (the strict gate commits).
    fn commit_evaluation(
        &self,
        payer: &Pubkey,
        payee: &Pubkey,
        policy_id: u32,
        att: Attestations,
    ) -> accounts::CommitEvaluationAccounts {
        let e = self.evaluation(payer, payee, policy_id, att);
        accounts::CommitEvaluationAccounts {
            evaluate_signer: e.evaluate_signer,
            policy: e.policy,
            velocity_ledger: e.velocity_ledger,
            killswitch: e.killswitch,
            payer_stats: e.payer_stats,
            payee_stats: e.payee_stats,
            payee_acceptance: e.payee_acceptance,
            payer_attestation: e.payer_attestation,
            payee_attestation: e.payee_attestation,
            payee_list: e.payee_list,
            policy_vault_program: e.policy_vault_program,
        }
    }

    /// The read-only decision (simulate it; see `simulate::gate_payment`). Every
    /// account is read-only: a decision locks nothing.
    pub fn gate_payment(
        &self,
        payer_asset: &Pubkey,
        payee_asset: &Pubkey,
        amount: u64,
        mint: &Pubkey,
        policy_id: u32,
        att: Attestations,
    ) -> Instruction {
        self.gate_ix(
            accounts::GatePayment {
                evaluation: self.evaluation(payer_asset, payee_asset, policy_id, att),
            },
            instruction::GatePayment {
                args: PaymentArgs {
                    payer_asset: *payer_asset,
                    payee_asset: *payee_asset,
                    amount,
                    mint: *mint,
                    policy_id,
                },
            },
        )
    }

    /// The committing gate; only valid as the first payment instruction of a settlement (see
    /// `settle::compose`). `release` for a vault-funded policy; `deadline` (unix seconds) the
    /// last moment the payment may land (an x402 challenge's expiry); `holdback_tier` under a
    /// payer policy with a holdback schedule, the payee tier its terms were quoted for.
    #[allow(clippy::too_many_arguments)]
    pub fn gate_payment_strict(
        &self,
        payer_signer: &Pubkey,
        payer_asset: &Pubkey,
        payee_asset: &Pubkey,
        amount: u64,
        mint: &Pubkey,
        policy_id: u32,
        deadline: i64,
        destination_token: &Pubkey,
        att: Attestations,
        release: Option<VaultRelease>,
        holdback_tier: Option<u8>,
    ) -> Instruction {
        self.gate_ix(
            accounts::GatePaymentStrict {
                evaluation: self.commit_evaluation(payer_asset, payee_asset, policy_id, att),
                payer_signer: *payer_signer,
                payer_asset: *payer_asset,
                payer_agent: self.pda.agent_account(payer_asset),
                payee_asset: *payee_asset,
                payee_agent: self.pda.agent_account(payee_asset),
                destination_token: *destination_token,
                mint_account: *mint,
                instructions: sysvar::instructions::ID,
                vault: release.map(|_| self.pda.vault(payer_asset, mint)),
                payer_token: release.map(|r| r.payer_token),
                token_program: release.map(|r| r.token_program),
            },
            instruction::GatePaymentStrict {
                amount,
                policy_id,
                deadline,
                holdback_tier,
            },
        )
    }

    /// The gated open of a payment channel; only valid right before the channel program's
    /// `open` of `channel` (see `channels::Open`), which must deposit `deposit` of `mint` from
    /// `payer_signer`, pay 100 % to the payee agent's recipient and be held by `facilitator`
    /// (payee and rent payer, which also pays the gate's record).
    #[allow(clippy::too_many_arguments)]
    pub fn gate_channel_open(
        &self,
        payer_signer: &Pubkey,
        payer_asset: &Pubkey,
        payee_asset: &Pubkey,
        facilitator: &Pubkey,
        mint: &Pubkey,
        deposit: u64,
        policy_id: u32,
        channel: &Pubkey,
        att: Attestations,
    ) -> Instruction {
        self.gate_ix(
            accounts::GateChannelOpen {
                evaluation: self.commit_evaluation(payer_asset, payee_asset, policy_id, att),
                payer_signer: *payer_signer,
                payer_asset: *payer_asset,
                payer_agent: self.pda.agent_account(payer_asset),
                payee_asset: *payee_asset,
                payee_agent: self.pda.agent_account(payee_asset),
                mint_account: *mint,
                facilitator: *facilitator,
                channel_record: self.pda.channel_record(channel),
                instructions: sysvar::instructions::ID,
                system_program: system_program::ID,
            },
            instruction::GateChannelOpen { deposit, policy_id },
        )
    }

    /// Closes a sealed channel the gate let open (its `gate::state::ChannelRecord`, read
    /// with `decode::account`): the payer's policy gets back what the channel did not
    /// spend of the counted deposit; when it settled anything, the payee one feedback of
    /// value = settled (`feedback.value` and `value_decimals` are ignored: the gate reads
    /// them from the channel and the record) and its receipt at
    /// `gate::channel::payment_id_hash(channel)`. The record's facilitator signs.
    pub fn gate_channel_close(
        &self,
        record: &ChannelRecord,
        collection: &Pubkey,
        feedback: FeedbackDetails,
    ) -> Instruction {
        let facilitator = &record.facilitator;
        let payment_id_hash = gate::channel::payment_id_hash(&record.channel);
        self.gate_ix(
            accounts::GateChannelClose {
                facilitator: *facilitator,
                gate_authority: self.pda.gate_authority(facilitator),
                channel_record: self.pda.channel_record(&record.channel),
                channel: record.channel,
                feedback_log: self.pda.feedback_log(facilitator, &payment_id_hash),
                target: self.feedback_target(&record.payee_asset, collection),
                release: accounts::ReleaseAccounts {
                    evaluate_signer: self.pda.evaluate_signer(),
                    policy: self.pda.policy(&record.payer_asset, record.policy_id),
                    velocity_ledger: self.pda.velocity(&record.payer_asset, record.policy_id),
                    policy_vault_program: self.ids.policy_vault,
                },
                system_program: system_program::ID,
            },
            instruction::GateChannelClose { args: feedback },
        )
    }

    /// Closes the record of a channel the payment-channels program already deleted (no
    /// feedback, nothing given back); nobody signs, the rent goes back to `facilitator`.
    pub fn close_channel_record(&self, channel: &Pubkey, facilitator: &Pubkey) -> Instruction {
        self.gate_ix(
            accounts::CloseChannelRecord {
                channel_record: self.pda.channel_record(channel),
                facilitator: *facilitator,
                channel: *channel,
            },
            instruction::CloseChannelRecord {},
        )
    }

    /// `subscribe`: the delegator's SubscriptionAuthority for the mint initialized (or
    /// refreshed), the recurring delegation of `s.terms` to the gate's delegate, and the
    /// gate's record of it, in one instruction the delegator signs (it pays the three rents).
    pub fn subscribe(&self, s: &Subscription) -> Instruction {
        let delegation = self.subscription_delegation(s);
        self.gate_ix(
            accounts::Subscribe {
                delegator: s.delegator,
                payer_asset: s.payer_asset,
                payer_agent: self.pda.agent_account(&s.payer_asset),
                payee_asset: s.payee_asset,
                payee_agent: self.pda.agent_account(&s.payee_asset),
                policy: self.pda.policy(&s.payer_asset, s.policy_id),
                facilitator: s.facilitator,
                gate_authority: self.pda.gate_authority(&s.facilitator),
                mint_account: s.mint,
                delegator_token: s.token_program.associated_account(&s.delegator, &s.mint),
                subscription_authority: subscriptions::subscription_authority(
                    &s.delegator,
                    &s.mint,
                ),
                delegation,
                delegate: self.subscription_delegate(s),
                gated_subscription: self.pda.gated_subscription(&delegation),
                token_program: s.token_program.id(),
                subscriptions_program: subscriptions::PROGRAM_ID,
                system_program: system_program::ID,
            },
            instruction::Subscribe {
                policy_id: s.policy_id,
                terms: s.terms,
            },
        )
    }

    /// The gate's delegate of a subscription's parties and facilitator.
    pub fn subscription_delegate(&self, s: &Subscription) -> Pubkey {
        self.pda
            .pull_delegate(&s.payer_asset, &s.payee_asset, &s.facilitator)
    }

    /// The recurring delegation `subscribe` creates for `s`.
    pub fn subscription_delegation(&self, s: &Subscription) -> Pubkey {
        subscriptions::delegation(
            &s.delegator,
            &s.mint,
            &self.subscription_delegate(s),
            s.terms.nonce,
        )
    }

    /// `gate_pull` of `amount` from the subscription `record` whose delegation reads
    /// `delegation` now (its period's state names the pull's receipt), into `destination`
    /// (a token account of the payee agent's recipient). The record's facilitator signs and
    /// pays the receipt's rent. A pull above the policy's approval threshold takes its
    /// approval (`ApprovalUse::append_to`).
    #[allow(clippy::too_many_arguments)]
    pub fn gate_pull(
        &self,
        record: &GatedSubscription,
        delegation: &RecurringDelegation,
        destination: &Pubkey,
        token_program: TokenProgram,
        collection: &Pubkey,
        amount: u64,
        feedback: FeedbackDetails,
        att: Attestations,
    ) -> Instruction {
        let facilitator = &record.facilitator;
        let payment_id_hash = gate::subscription::payment_id_hash(&record.delegation, delegation);
        self.gate_ix(
            accounts::GatePull {
                evaluation: self.commit_evaluation(
                    &record.payer_asset,
                    &record.payee_asset,
                    record.policy_id,
                    att,
                ),
                facilitator: *facilitator,
                gate_authority: self.pda.gate_authority(facilitator),
                gated_subscription: self.pda.gated_subscription(&record.delegation),
                payer_asset: record.payer_asset,
                payer_agent: self.pda.agent_account(&record.payer_asset),
                mint_account: delegation.mint,
                destination_token: *destination,
                delegation: record.delegation,
                subscription_authority: delegation.subscription_authority,
                delegator_token: token_program
                    .associated_account(&delegation.delegator, &delegation.mint),
                token_program: token_program.id(),
                delegate: delegation.delegatee,
                event_authority: subscriptions::EVENT_AUTHORITY,
                subscriptions_program: subscriptions::PROGRAM_ID,
                feedback_log: self.pda.feedback_log(facilitator, &payment_id_hash),
                target: self.feedback_target(&record.payee_asset, collection),
                system_program: system_program::ID,
            },
            instruction::GatePull { amount, feedback },
        )
    }

    /// `unsubscribe`: the record's delegation revoked (when still open) and the record
    /// closed, both rents back to its delegator, which signs.
    pub fn unsubscribe(&self, record: &GatedSubscription) -> Instruction {
        self.gate_ix(
            accounts::Unsubscribe {
                delegator: record.delegator,
                gated_subscription: self.pda.gated_subscription(&record.delegation),
                delegation: record.delegation,
                subscriptions_program: subscriptions::PROGRAM_ID,
            },
            instruction::Unsubscribe {},
        )
    }

    fn feedback_target(&self, payee: &Pubkey, collection: &Pubkey) -> accounts::FeedbackTarget {
        accounts::FeedbackTarget {
            agent_account: self.pda.agent_account(payee),
            asset: *payee,
            collection: *collection,
            atom_config: self.pda.atom_config(),
            atom_stats: self.pda.atom_stats(payee),
            registry_cpi_authority: self.pda.registry_cpi_authority(),
            registry_program: self.ids.agent_registry,
            engine_program: self.ids.reputation_engine,
        }
    }

    /// Records feedback for a payment (settled only as instruction 2 of a settlement).
    /// `collection` is the registry's base collection (see `chain::base_collection`).
    pub fn emit_feedback(
        &self,
        facilitator: &Pubkey,
        collection: &Pubkey,
        args: FeedbackArgs,
    ) -> Instruction {
        self.gate_ix(
            accounts::EmitFeedback {
                facilitator_signer: *facilitator,
                gate_authority: self.pda.gate_authority(facilitator),
                feedback_log: self.pda.feedback_log(facilitator, &args.payment_id_hash),
                target: self.feedback_target(&args.payee_asset, collection),
                instructions: sysvar::instructions::ID,
                system_program: system_program::ID,
            },
            instruction::EmitFeedback {
                args: EmitFeedbackArgs {
                    payment_id_hash: args.payment_id_hash,
                    facilitator: *facilitator,
                    payee_asset: args.payee_asset,
                    score: args.score,
                    value: args.value,
                    value_decimals: args.value_decimals,
                    tag1: args.tag1,
                    tag2: args.tag2,
                    endpoint: args.endpoint,
                    feedback_uri: args.feedback_uri,
                },
            },
        )
    }

    /// Disputes a settled payment of `facilitator` (once): `payer` (the settlement's transfer
    /// authority) signs; `rent_payer` (the payer itself, or the facilitator as a service)
    /// signs and pays for the record. The facilitator need not sign.
    #[allow(clippy::too_many_arguments)]
    pub fn dispute_payment(
        &self,
        rent_payer: &Pubkey,
        facilitator: &Pubkey,
        payer: &Pubkey,
        collection: &Pubkey,
        payment_id_hash: [u8; 32],
        payee_asset: &Pubkey,
        dispute_reason_hash: [u8; 32],
        feedback_uri: String,
    ) -> Instruction {
        self.gate_ix(
            accounts::DisputePayment {
                rent_payer: *rent_payer,
                payer_signer: *payer,
                gate_authority: self.pda.gate_authority(facilitator),
                feedback_log: self.pda.feedback_log(facilitator, &payment_id_hash),
                dispute: self.pda.dispute(facilitator, &payment_id_hash),
                target: self.feedback_target(payee_asset, collection),
                system_program: system_program::ID,
            },
            instruction::DisputePayment {
                args: DisputePaymentArgs {
                    payment_id_hash,
                    facilitator: *facilitator,
                    payee_asset: *payee_asset,
                    dispute_reason_hash,
                    feedback_uri,
                },
            },
        )
    }

    /// Closes payment `payment_id_hash`'s records of `facilitator` (its log, and its dispute
    /// record when there is one) once closable; nobody signs, and the rent goes back to the
    /// facilitator and to `dispute_rent_payer` (the record's rent payer; pass the
    /// facilitator when the payment was not disputed).
    pub fn close_payment_records(
        &self,
        facilitator: &Pubkey,
        payment_id_hash: &[u8; 32],
        dispute_rent_payer: &Pubkey,
    ) -> Instruction {
        self.gate_ix(
            accounts::ClosePaymentRecords {
                feedback_log: self.pda.feedback_log(facilitator, payment_id_hash),
                facilitator: *facilitator,
                dispute: self.pda.dispute(facilitator, payment_id_hash),
                dispute_rent_payer: *dispute_rent_payer,
            },
            instruction::ClosePaymentRecords {},
        )
    }

    /// The accounts the registry's inner registration of `asset` needs.
    pub fn registration_accounts(
        &self,
        collection: &Pubkey,
        asset: &Pubkey,
    ) -> RegistrationAccounts {
        RegistrationAccounts {
            root_config: self.pda.root_config(),
            registry_config: self.pda.registry_config(collection),
            agent_account: self.pda.agent_account(asset),
            atom_config: self.pda.atom_config(),
            atom_stats: self.pda.atom_stats(asset),
        }
    }

    /// Registers a reputation-enabled agent through the gate; `owner` and the fresh `asset`
    /// keypair sign.
    pub fn register_agent_via_cpi(
        &self,
        owner: &Pubkey,
        asset: &Pubkey,
        collection: &Pubkey,
        metadata_uri: String,
    ) -> Instruction {
        let r = self.registration_accounts(collection, asset);
        self.gate_ix(
            accounts::RegisterAgentViaCpi {
                owner: *owner,
                asset: *asset,
                agent_account: r.agent_account,
                root_config: r.root_config,
                registry_config: r.registry_config,
                collection: *collection,
                atom_config: r.atom_config,
                atom_stats: r.atom_stats,
                mpl_core_program: self.ids.mpl_core,
                registry_program: self.ids.agent_registry,
                engine_program: self.ids.reputation_engine,
                system_program: system_program::ID,
            },
            instruction::RegisterAgentViaCpi { metadata_uri },
        )
    }

    /// Creates the facilitator's GateAuthority (the facilitator signs).
    pub fn init_gate_authority(&self, facilitator: &Pubkey) -> Instruction {
        self.gate_ix(
            accounts::InitAuthority {
                facilitator_signer: *facilitator,
                gate_authority: self.pda.gate_authority(facilitator),
                system_program: system_program::ID,
            },
            instruction::InitAuthority {
                facilitator: *facilitator,
            },
        )
    }

    /// Creates an agent's kill switch through the gate (a member of its authority signs).
    pub fn init_killswitch(&self, member: &Pubkey, asset: &Pubkey) -> Instruction {
        self.gate_ix(
            accounts::InitKillSwitch {
                member: *member,
                authority: self.pda.policy_authority(asset),
                killswitch: self.pda.killswitch(asset),
                policy_vault_program: self.ids.policy_vault,
                system_program: system_program::ID,
            },
            instruction::InitKillswitch { asset: *asset },
        )
    }
}
