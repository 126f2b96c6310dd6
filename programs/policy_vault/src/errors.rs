use anchor_lang::prelude::*;

/// policy_vault errors. Codes are Anchor's 6000 + declaration index and are stable: append
/// new variants at the end.
#[error_code]
pub enum PolicyVaultError {
    // 6000..: policy fields
    #[msg("kinds: unknown bits set (allowed: 0x01 0x02 0x04 0x08 0x10)")]
    UnknownKindBits,
    #[msg("per_tx_cap, daily_cap and weekly_cap must be > 0 when Spending is enabled")]
    SpendingCapZero,
    #[msg("velocity_window_secs must be > 0 when Velocity is enabled")]
    VelocityWindowZero,
    #[msg("velocity_max_in_window must be > 0 when Velocity is enabled")]
    VelocityMaxZero,
    #[msg("tier0_decay_bps must be 0..=10000")]
    DecayOutOfRange,
    #[msg("min tier must be 0..=4")]
    MinTierOutOfRange,
    #[msg("min confidence must be 0..=10000 basis points")]
    MinConfidenceOutOfRange,
    #[msg("required_capability must be set when RequireValidation is enabled")]
    RequiredCapabilityMissing,
    #[msg("unrated_treatment RequireValidation needs a non-zero required_capability")]
    UnratedValidationWithoutCapability,
    #[msg("accepted_attestors: at most 2")]
    TooManyAttestors,
    #[msg("accepted_attestors: the two entries are the same key")]
    DuplicateAttestor,
    #[msg("gate_mode must be 0 (immediate) or 1 (confirmed)")]
    InvalidGateMode,
    #[msg("unrated_treatment must be 0 (Deny), 1 (Allow) or 2 (RequireValidation)")]
    InvalidUnratedTreatment,
    // 6013..: authority
    #[msg("members: at least one member is required")]
    NoMembers,
    #[msg("members: at most 7")]
    TooManyMembers,
    #[msg("members: duplicate key")]
    DuplicateMember,
    #[msg("threshold must be 1..=number of members")]
    ThresholdOutOfRange,
    #[msg("agent_account is not the registry's AgentAccount for this asset")]
    AgentAccountInvalid,
    #[msg("signer is not the owner of the agent's MPL Core asset")]
    NotAgentOwner,
    #[msg("signer is not a member of the policy authority")]
    NotAuthorityMember,
    #[msg("fewer distinct member signatures than the authority's threshold")]
    InsufficientSigners,
    // 6021..: evaluation
    #[msg("mint: the policy is for another mint")]
    PolicyMintMismatch,
    /// No longer returned (an attestation's stored fields are its seeds); kept so that the
    /// codes after it keep their numbers.
    #[msg("attestation is not the registry PDA for its subject, capability and attestor")]
    AttestationAddressMismatch,
    #[msg("acceptance account holds no AcceptancePolicy")]
    AcceptancePolicyInvalid,
    // 6024..: mints and retirement
    #[msg("mint must be set when Spending or Velocity is enabled, or a monthly, lifetime or per-payee cap is set: caps are counted in the mint's smallest units")]
    MintRequired,
    #[msg("mint account: missing, or not the account at the policy's mint address")]
    MintAccountMismatch,
    #[msg("mint is not an initialized mint of SPL Token or Token-2022")]
    MintInvalid,
    #[msg("mint has the Token-2022 transfer-fee extension: a transfer may deliver less than its amount")]
    MintTransferFee,
    #[msg("mint has a Token-2022 permanent delegate: a settled payment could be taken back")]
    MintPermanentDelegate,
    #[msg("the policy is retired: no payment may use it")]
    PolicyRetired,
    // 6030..: funding and vaults
    #[msg("funding must be 0 (the payer's wallet) or 1 (the agent's policy vault)")]
    InvalidFunding,
    #[msg("mint must be set when funding is 1 (vault): a vault holds one mint")]
    VaultFundingNeedsMint,
    #[msg("token_program: not the token program that owns the mint")]
    TokenProgramMismatch,
    #[msg("vault: not the agent's vault for this mint, or not a token account of it")]
    VaultAccountInvalid,
    #[msg("vault accounts (vault, payer_token, token_program) are required: the policy is funded by the agent's vault")]
    VaultAccountsMissing,
    #[msg("vault: the policy is funded by the payer's wallet; no vault may be released under it")]
    PolicyNotVaultFunded,
    #[msg("vault: its balance is below the payment's amount")]
    VaultInsufficientFunds,
    #[msg("amount must be greater than 0")]
    AmountZero,
    #[msg("mint has a Token-2022 close authority: once its supply is 0 it could be closed and re-created with a permanent delegate that empties the vault")]
    MintCloseAuthority,
    // 6039..: the third audit
    #[msg("mint has the Token-2022 Pausable extension: its authority could stop every transfer out of the vault")]
    MintPausable,
    #[msg("mint has Token-2022 DefaultAccountState(Frozen): the vault would be created frozen")]
    MintDefaultFrozen,
    #[msg("the vault-funded policy has no spender yet: the authority's threshold names one with set_vault_spender")]
    VaultSpenderNotSet,
    #[msg("payer_token does not belong to the policy's spender: only the key the threshold named may pay from the vault")]
    NotVaultSpender,
    #[msg("spender must be a key, not the default (all zero) key")]
    InvalidSpender,
    #[msg("agent_asset is not the agent's MPL Core asset")]
    AgentAssetInvalid,
    #[msg("the agent's asset has changed hands since this authority was created: until its new owner's take-over takes effect (request_take_over), the members may only pause, cancel or accept the request, or withdraw to the recovery key")]
    AuthorityStale,
    #[msg("the authority is already the live owner's: change its members with rotate_authority")]
    AuthorityCurrent,
    // 6047..: the fourth audit
    #[msg("the take-over takes effect only after its delay: complete it at its effective_at or later, or have the members accept it")]
    TakeOverNotYetEffective,
    #[msg(
        "the request's new owner no longer owns the agent's asset: the request cannot take effect"
    )]
    TakeOverStale,
    #[msg("this owner's take-over request is already pending")]
    TakeOverAlreadyRequested,
    #[msg("take_over_delay_secs must be 3600..=7776000 (one hour to 90 days)")]
    TakeOverDelayOutOfRange,
    #[msg("while the agent's asset is with another owner the members may withdraw only to the recovery key, and the authority names none")]
    RecoveryNotSet,
    #[msg("while the agent's asset is with another owner the members may withdraw only to a token account of the recovery key named before")]
    WithdrawalNotToRecovery,
    #[msg("rent_payer is not the account that paid for the request")]
    RentPayerMismatch,
    // 6054..: limit rules
    #[msg("payee_list_mode must be 0 (no list), 1 (allow list) or 2 (deny list)")]
    InvalidListMode,
    #[msg("payees / payee_list: a payee list needs payee_list_mode 1 (allow) or 2 (deny)")]
    PayeesWithoutListMode,
    #[msg("payee_list_mode: the list has no payee and no list account")]
    PayeeListEmpty,
    #[msg("payees: the same payee twice")]
    DuplicatePayee,
    #[msg("not_before and not_after must be >= 0 (0 = no bound)")]
    ValidityNegative,
    #[msg("not_before must be <= not_after")]
    ValidityInverted,
    #[msg("payee_list: not the policy's PayeeList account (its PDA [\"payee_list\", asset, policy_id])")]
    PayeeListMismatch,
    #[msg("payee_list: the policy names a payee list account, which the evaluation must be given (not the policy account in its place)")]
    PayeeListMissing,
    #[msg("the policy names no payee list account: its list is immutable")]
    PolicyHasNoPayeeList,
    #[msg("payee list: at most 256 entries")]
    PayeeListFull,
    #[msg("add / remove: at least one payee to add or remove, and no default (all zero) key")]
    PayeeListEditInvalid,
    // 6065..: approvals
    #[msg("amount: an approval is of more than 0")]
    ApprovalAmountZero,
    #[msg("expires_at: an approval expires after now and at most 7 days from now")]
    ApprovalExpiryInvalid,
    #[msg("payee_asset / mint: an approval names a payee other than the payer and a mint")]
    ApprovalTermsInvalid,
    #[msg("approval_rent_payer: not the account that paid for the approval")]
    ApprovalRentPayerMismatch,
    #[msg("the approval is still in force: only its rent payer may close it before it expires")]
    ApprovalNotExpired,
    // 6070..: the fifth audit
    #[msg("the take-over request has lapsed: it could be completed only within its delay after effective_at (close it with close_lapsed_take_over and ask again)")]
    TakeOverLapsed,
    #[msg("the take-over request has not lapsed: it closes without the members only after effective_at plus its delay")]
    TakeOverNotLapsed,
    #[msg("the mint has more than 18 decimals, more than the registry's feedback can state (value_decimals 0..=18)")]
    MintDecimalsTooLarge,
    // 6073..: the holdback
    #[msg("holdback: a share is at most 10 000 bps")]
    HoldbackShareOutOfRange,
    #[msg("holdback: a hold is at most 30 days (2 592 000 seconds)")]
    HoldbackHoldOutOfRange,
    #[msg("holdback: a share needs a hold and a hold a share (both zero: nothing held)")]
    HoldbackTermIncomplete,
    #[msg(
        "holdback.terms: a better payee tier never holds back more, or longer, than a worse one"
    )]
    HoldbackNotDecreasing,
    #[msg("holdback.terms: no term holds anything back (give no schedule instead)")]
    HoldbackScheduleEmpty,
    #[msg("holdback.arbiters: the same arbiter twice")]
    DuplicateArbiter,
}
