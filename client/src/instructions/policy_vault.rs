//! policy_vault: authority, kill switch, policies, acceptance policy, vaults, evaluate.

use super::{with_cosigners, Builder};
use anchor_lang::prelude::Pubkey;
use anchor_lang::system_program;
use policy_vault::instructions::{EditPayeeListArgs, EvaluateArgs, InitPolicyArgs};
use policy_vault::state::{
    AcceptanceParams, ApprovalTerms, HoldbackSchedule, PolicyParams, PolicyRules,
};
use policy_vault::{accounts, instruction};
use solana_sdk::instruction::Instruction;

impl Builder {
    /// A policy_vault instruction (absent optional accounts become the configured id).
    fn vault_ix(
        &self,
        accounts: impl anchor_lang::ToAccountMetas,
        data: impl anchor_lang::InstructionData,
    ) -> Instruction {
        self.ix_with_optionals(self.ids.policy_vault, policy_vault::ID, accounts, data)
    }

    /// Creates the agent's PolicyAuthority; `owner` must be the live owner of the agent's
    /// MPL Core asset.
    pub fn init_authority(
        &self,
        owner: &Pubkey,
        asset: &Pubkey,
        members: Vec<Pubkey>,
        threshold: u8,
    ) -> Instruction {
        self.ix(
            self.ids.policy_vault,
            accounts::InitAuthority {
                agent_asset: *asset,
                owner: *owner,
                agent_account: self.pda.agent_account(asset),
                authority: self.pda.policy_authority(asset),
                system_program: system_program::ID,
            },
            instruction::InitAuthority {
                asset: *asset,
                members,
                threshold,
            },
        )
    }

    /// The asset's live owner (`owner`, who pays for the request) asks to take over the
    /// authority its previous owner created, with new members and threshold. It takes effect
    /// no sooner than the authority's take-over delay from now (`complete_take_over`), and
    /// lapses that delay later (`close_lapsed_take_over`).
    pub fn request_take_over(
        &self,
        owner: &Pubkey,
        asset: &Pubkey,
        members: Vec<Pubkey>,
        threshold: u8,
    ) -> Instruction {
        self.ix(
            self.ids.policy_vault,
            accounts::RequestTakeOver {
                owner: *owner,
                authority: self.pda.policy_authority(asset),
                authority_guard: self.pda.authority_guard(asset),
                take_over_request: self.pda.take_over_request(asset),
                agent_asset: *asset,
                system_program: system_program::ID,
            },
            instruction::RequestTakeOver {
                asset: *asset,
                members,
                threshold,
            },
        )
    }

    /// Completes a take-over whose delay has passed and which has not lapsed; anyone may send
    /// it. `rent_payer` is the request's (it gets the request's rent back). The hand-over
    /// resets the authority's guard and bumps the kill switch's authority generation.
    pub fn complete_take_over(&self, asset: &Pubkey, rent_payer: &Pubkey) -> Instruction {
        self.ix(
            self.ids.policy_vault,
            accounts::CompleteTakeOver {
                authority: self.pda.policy_authority(asset),
                take_over_request: self.pda.take_over_request(asset),
                rent_payer: *rent_payer,
                agent_asset: *asset,
                authority_guard: self.pda.authority_guard(asset),
                killswitch: self.pda.killswitch(asset),
            },
            instruction::CompleteTakeOver { asset: *asset },
        )
    }

    /// Closes a take-over request that lapsed (past its `effective_at` plus its delay);
    /// anyone may send it. `rent_payer` is the request's (it gets the request's rent back).
    pub fn close_lapsed_take_over(&self, asset: &Pubkey, rent_payer: &Pubkey) -> Instruction {
        self.ix(
            self.ids.policy_vault,
            accounts::CloseLapsedTakeOver {
                take_over_request: self.pda.take_over_request(asset),
                rent_payer: *rent_payer,
            },
            instruction::CloseLapsedTakeOver { asset: *asset },
        )
    }

    /// The members in force cancel a pending take-over; `member` and `cosigners` reach the
    /// threshold. `rent_payer` is the request's.
    pub fn cancel_take_over(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        rent_payer: &Pubkey,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::CancelTakeOver {
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    take_over_request: self.pda.take_over_request(asset),
                    rent_payer: *rent_payer,
                    agent_asset: *asset,
                },
                instruction::CancelTakeOver { asset: *asset },
            ),
            cosigners,
        )
    }

    /// The members in force accept a pending take-over at once; `member` and `cosigners`
    /// reach the threshold. `rent_payer` is the request's.
    pub fn accept_take_over(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        rent_payer: &Pubkey,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::AcceptTakeOver {
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    take_over_request: self.pda.take_over_request(asset),
                    rent_payer: *rent_payer,
                    agent_asset: *asset,
                    authority_guard: self.pda.authority_guard(asset),
                    killswitch: self.pda.killswitch(asset),
                },
                instruction::AcceptTakeOver { asset: *asset },
            ),
            cosigners,
        )
    }

    /// Sets the take-over delay (seconds) and the recovery key (`Pubkey::default()`: none);
    /// `member` (who pays for the guard the first time) and `cosigners` reach the threshold.
    pub fn set_authority_guard(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        take_over_delay_secs: u32,
        recovery: &Pubkey,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::SetAuthorityGuard {
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    authority_guard: self.pda.authority_guard(asset),
                    agent_asset: *asset,
                    system_program: system_program::ID,
                },
                instruction::SetAuthorityGuard {
                    asset: *asset,
                    take_over_delay_secs,
                    recovery: *recovery,
                },
            ),
            cosigners,
        )
    }

    /// Replaces the authority's members and threshold; `member` and `cosigners` sign.
    pub fn rotate_authority(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        members: Vec<Pubkey>,
        threshold: u8,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::RotateAuthority {
                    agent_asset: *asset,
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                },
                instruction::RotateAuthority {
                    asset: *asset,
                    members,
                    threshold,
                },
            ),
            cosigners,
        )
    }

    /// Creates the agent's kill switch directly in policy_vault (a member signs).
    pub fn init_killswitch_direct(&self, member: &Pubkey, asset: &Pubkey) -> Instruction {
        self.ix(
            self.ids.policy_vault,
            accounts::InitKillSwitch {
                member: *member,
                authority: self.pda.policy_authority(asset),
                killswitch: self.pda.killswitch(asset),
                system_program: system_program::ID,
            },
            instruction::InitKillswitch { asset: *asset },
        )
    }

    /// Engages or releases the kill switch; `member` and `cosigners` reach the threshold.
    pub fn set_killswitch(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        paused: bool,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::SetKillSwitch {
                    agent_asset: *asset,
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    killswitch: self.pda.killswitch(asset),
                },
                instruction::SetKillswitch {
                    asset: *asset,
                    paused,
                },
            ),
            cosigners,
        )
    }

    /// Approves one payment of exactly `terms` until `expires_at`; `member` (who pays the
    /// approval's rent, back when the payment uses it) and `cosigners` reach the threshold
    /// of the payer's authority in force. The payer's kill switch must exist: the approval
    /// counts only until the authority's next hand-over.
    pub fn approve_payment(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        terms: ApprovalTerms,
        expires_at: i64,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::ApprovePayment {
                    member: *member,
                    authority: self.pda.policy_authority(&terms.payer_asset),
                    agent_asset: terms.payer_asset,
                    killswitch: self.pda.killswitch(&terms.payer_asset),
                    approval: self.pda.approval(&terms),
                    system_program: system_program::ID,
                },
                instruction::ApprovePayment { terms, expires_at },
            ),
            cosigners,
        )
    }

    /// Closes an unused approval to `rent_payer` (signed by it, or by `closer` once expired).
    pub fn close_approval(
        &self,
        closer: &Pubkey,
        approval: &Pubkey,
        rent_payer: &Pubkey,
    ) -> Instruction {
        self.ix(
            self.ids.policy_vault,
            accounts::CloseApproval {
                closer: *closer,
                approval: *approval,
                rent_payer: *rent_payer,
            },
            instruction::CloseApproval {},
        )
    }

    /// Creates policy `policy_id` (immutable): its core `params`, its limit `rules`
    /// (`PolicyRules::default()`: none) and `approval_threshold` (0: none). When
    /// `rules.payee_list` is set it must be [`PdaDeriver::payee_list`] of this policy (see
    /// [`Builder::payee_list_rules`]); the list account is created empty.
    // One argument per instruction argument and signer, as the other builders.
    #[allow(clippy::too_many_arguments)]
    pub fn init_policy(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        policy_id: u32,
        params: PolicyParams,
        rules: PolicyRules,
        approval_threshold: u64,
    ) -> Instruction {
        self.init_policy_with_holdback(
            member,
            cosigners,
            asset,
            policy_id,
            params,
            rules,
            approval_threshold,
            None,
        )
    }

    /// [`Builder::init_policy`] with a holdback schedule: the share of each payment held back
    /// from a payee of each tier, and for how long (docs/holdback.md).
    #[allow(clippy::too_many_arguments)]
    pub fn init_policy_with_holdback(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        policy_id: u32,
        params: PolicyParams,
        rules: PolicyRules,
        approval_threshold: u64,
        holdback: Option<HoldbackSchedule>,
    ) -> Instruction {
        let mint = (params.mint != Pubkey::default()).then_some(params.mint);
        let payee_list = rules.has_list_account().then_some(rules.payee_list);
        with_cosigners(
            self.vault_ix(
                accounts::InitPolicy {
                    agent_asset: *asset,
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    policy: self.pda.policy(asset, policy_id),
                    velocity: self.pda.velocity(asset, policy_id),
                    killswitch: self.pda.killswitch(asset),
                    mint,
                    payee_list,
                    system_program: system_program::ID,
                },
                instruction::InitPolicy {
                    args: InitPolicyArgs {
                        asset: *asset,
                        policy_id,
                        params,
                        // No limits: one byte on the wire rather than the rules' 201.
                        rules: (rules != PolicyRules::default()).then_some(rules),
                        approval_threshold,
                        holdback,
                    },
                },
            ),
            cosigners,
        )
    }

    /// `rules` naming the payee list account of `asset`'s policy `policy_id`.
    pub fn payee_list_rules(
        &self,
        asset: &Pubkey,
        policy_id: u32,
        rules: PolicyRules,
    ) -> PolicyRules {
        PolicyRules {
            payee_list: self.pda.payee_list(asset, policy_id),
            ..rules
        }
    }

    /// Adds and removes payees of a policy's list account; `member` (who pays for growth
    /// and receives freed rent) and `cosigners` reach the authority's threshold.
    pub fn edit_payee_list(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        policy_id: u32,
        add: Vec<Pubkey>,
        remove: Vec<Pubkey>,
    ) -> Instruction {
        with_cosigners(
            self.vault_ix(
                accounts::EditPayeeList {
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    policy: self.pda.policy(asset, policy_id),
                    payee_list: self.pda.payee_list(asset, policy_id),
                    system_program: system_program::ID,
                    agent_asset: *asset,
                },
                instruction::EditPayeeList {
                    args: EditPayeeListArgs {
                        asset: *asset,
                        policy_id,
                        add,
                        remove,
                    },
                },
            ),
            cosigners,
        )
    }

    /// Opens the agent's vault for `mint` (owned by `token_program`); `member` (who pays the
    /// rent) and `cosigners` reach the authority's threshold.
    pub fn open_vault(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        mint: &Pubkey,
        token_program: &Pubkey,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::OpenVault {
                    agent_asset: *asset,
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    vault: self.pda.vault(asset, mint),
                    mint_account: *mint,
                    token_program: *token_program,
                    system_program: system_program::ID,
                },
                instruction::OpenVault {
                    asset: *asset,
                    mint: *mint,
                },
            ),
            cosigners,
        )
    }

    /// Moves `amount` out of the agent's vault for `mint` to `destination` (any token
    /// account of the mint); `member` and `cosigners` reach the authority's threshold.
    #[allow(clippy::too_many_arguments)]
    pub fn withdraw(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        mint: &Pubkey,
        token_program: &Pubkey,
        destination: &Pubkey,
        amount: u64,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::Withdraw {
                    agent_asset: *asset,
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    vault: self.pda.vault(asset, mint),
                    mint_account: *mint,
                    destination: *destination,
                    token_program: *token_program,
                    authority_guard: self.pda.authority_guard(asset),
                },
                instruction::Withdraw {
                    asset: *asset,
                    mint: *mint,
                    amount,
                },
            ),
            cosigners,
        )
    }

    /// Retires policy `policy_id` for good; `member` and `cosigners` reach the threshold.
    pub fn retire_policy(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        policy_id: u32,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::RetirePolicy {
                    agent_asset: *asset,
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    policy: self.pda.policy(asset, policy_id),
                },
                instruction::RetirePolicy {
                    asset: *asset,
                    policy_id,
                },
            ),
            cosigners,
        )
    }

    /// Names `spender`, the one key that may pay from the vault under vault-funded policy
    /// `policy_id`; `member` and `cosigners` reach the threshold.
    pub fn set_vault_spender(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        policy_id: u32,
        spender: &Pubkey,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::SetVaultSpender {
                    agent_asset: *asset,
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    policy: self.pda.policy(asset, policy_id),
                },
                instruction::SetVaultSpender {
                    asset: *asset,
                    policy_id,
                    spender: *spender,
                },
            ),
            cosigners,
        )
    }

    /// Creates or replaces the agent's AcceptancePolicy (what it asks of its payers).
    pub fn set_acceptance_policy(
        &self,
        member: &Pubkey,
        cosigners: &[Pubkey],
        asset: &Pubkey,
        params: AcceptanceParams,
    ) -> Instruction {
        with_cosigners(
            self.ix(
                self.ids.policy_vault,
                accounts::SetAcceptancePolicy {
                    agent_asset: *asset,
                    member: *member,
                    authority: self.pda.policy_authority(asset),
                    acceptance: self.pda.acceptance(asset),
                    system_program: system_program::ID,
                },
                instruction::SetAcceptancePolicy {
                    asset: *asset,
                    params,
                },
            ),
            cosigners,
        )
    }

    /// policy_vault's `evaluate` (or, with `commit`, `evaluate_and_commit`). Both are
    /// CPI-only: sent directly they fail, because `gate_signer` must be the gate's
    /// `["evaluate_signer"]` PDA signing through the gate. Use [`Builder::gate_payment`]; this
    /// exists for completeness and for tests of that rule.
    pub fn evaluate(
        &self,
        gate_signer: &Pubkey,
        args: EvaluateArgs,
        attestations: super::Attestations,
        commit: bool,
    ) -> Instruction {
        let (payer, payee, id) = (args.payer_asset, args.payee_asset, args.policy_id);
        let policy = self.pda.policy(&payer, id);
        let read_only = accounts::Evaluate {
            gate_signer: *gate_signer,
            policy,
            velocity_ledger: self.pda.velocity(&payer, id),
            killswitch: self.pda.killswitch(&payer),
            payer_stats: self.pda.atom_stats(&payer),
            payee_stats: self.pda.atom_stats(&payee),
            payee_acceptance: self.pda.acceptance(&payee),
            payer_attestation: attestations.payer,
            payee_attestation: attestations.payee,
            payee_list: attestations.payee_list.unwrap_or(policy),
        };
        if !commit {
            return self.vault_ix(read_only, instruction::Evaluate { args });
        }
        let r = read_only;
        self.vault_ix(
            accounts::EvaluateAndCommit {
                gate_signer: r.gate_signer,
                policy: r.policy,
                velocity_ledger: r.velocity_ledger,
                killswitch: r.killswitch,
                payer_stats: r.payer_stats,
                payee_stats: r.payee_stats,
                payee_acceptance: r.payee_acceptance,
                payer_attestation: r.payer_attestation,
                payee_attestation: r.payee_attestation,
                payee_list: r.payee_list,
            },
            instruction::EvaluateAndCommit { args },
        )
    }
}
