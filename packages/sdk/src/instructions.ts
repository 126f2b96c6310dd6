// Instruction builders with every account derived, on top of the Codama-generated clients:
// the same accounts, order and flags as the Rust SDK's `Builder` (absent optional accounts
// become the gate's id, as Anchor expects).

import { AccountRole, address, getAddressEncoder, type Address, type Instruction, type TransactionSigner } from '@solana/kit';
import { getTransferCheckedInstruction } from '@solana-program/token';
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from '@solana-program/compute-budget';
import {
  type EmitFeedbackInstructionDataArgs,
  getArbitrateHoldbackInstruction,
  getCloseChannelRecordInstruction,
  getClosePaymentRecordsInstruction,
  getCreateArbiterSetInstruction,
  getDisputePaymentInstruction,
  getEmitFeedbackInstruction,
  getGateChannelCloseInstruction,
  getGateChannelOpenInstruction,
  getGatePaymentInstruction,
  getGatePaymentStrictInstruction,
  getGatePullInstruction,
  getOpenHoldbackEscrowInstruction,
  getRefundHoldbackInstruction,
  getRegisterAgentViaCpiInstruction,
  getReleaseHoldbackInstruction,
  getSubscribeInstruction,
  getUnsubscribeInstruction,
} from './generated/gate/instructions/index.js';
import {
  getApprovePaymentInstruction,
  getCloseApprovalInstruction,
  getEditPayeeListInstruction,
  getInitPolicyInstruction,
} from './generated/policy_vault/instructions/index.js';
import type { ChannelRecord, GatedSubscription } from './generated/gate/accounts/index.js';
import type { FeedbackDetails } from './generated/gate/types/index.js';
import type {
  HoldbackScheduleArgs,
  PolicyParamsArgs,
  PolicyRulesArgs,
} from './generated/policy_vault/types/index.js';
import { INSTRUCTIONS_SYSVAR, MPL_CORE_PROGRAM, SYSTEM_PROGRAM, type ApprovalUse, type TokenProgramId } from './chain.js';
import { channelPaymentIdHash } from './channels.js';
import { TrustGateInputError } from './errors.js';
import type { HeldPayment } from './holdback.js';
import { addressOf, signerOrNoop, type SignerLike } from './signer.js';
import {
  delegationAddress,
  delegatorToken,
  pullPaymentIdHash,
  subscriptionAuthorityAddress,
  SUBSCRIPTIONS_EVENT_AUTHORITY,
  SUBSCRIPTIONS_PROGRAM,
  type RecurringDelegation,
  type RecurringTerms,
} from './subscriptions.js';

export { MPL_CORE_PROGRAM };
import { requireProgramIds, type ProgramIds } from './ids.js';
import { Pdas, type ApprovalTerms } from './pda.js';

export { INSTRUCTIONS_SYSVAR } from './chain.js';
export type { ApprovalUse } from './chain.js';
/** The feedback a pull gives its payee (its value is the pull's amount). */
export type { FeedbackDetails };

/** `ix` with `cosigners` appended as read-only signers (the authority's further members). */
function withCosigners(ix: Instruction, cosigners: readonly TransactionSigner[]): Instruction {
  return {
    ...ix,
    accounts: [
      ...(ix.accounts ?? []),
      ...cosigners.map((signer) => ({ address: signer.address, role: AccountRole.READONLY_SIGNER, signer })),
    ],
  };
}

/**
 * The optional accounts of an evaluation (absent: undefined): the attestations, and the payee
 * list account a policy may name (read with the policy, see `attestationsFor`).
 */
export interface Attestations {
  /** About the payer (asked by the payee's AcceptancePolicy). */
  payer?: Address;
  /** About the payee (asked by the payer's policy). */
  payee?: Address;
  /** The payer policy's PayeeList, when its policy names one (else the builder passes the policy account in its slot). */
  payeeList?: Address;
}

/**
 * `ix` (a committing gate instruction: `gate_payment_strict` or `gate_channel_open`) with
 * [approval, rent payer] after its accounts, both writable and not signers (the Rust SDK's
 * `ApprovalUse::append_to`).
 */
export function appendApproval(ix: Instruction, a: ApprovalUse): Instruction {
  return {
    ...ix,
    accounts: [
      ...(ix.accounts ?? []),
      { address: a.address, role: AccountRole.WRITABLE },
      { address: a.rentPayer, role: AccountRole.WRITABLE },
    ],
  };
}

/** The payment an evaluation decides. */
export interface PaymentArgs {
  payerAsset: Address;
  payeeAsset: Address;
  amount: bigint;
  mint: Address;
  policyId: number;
}

/** The extra accounts of a vault-funded settlement. */
export interface VaultRelease {
  /** The payer signer's token account of the mint: credited by the release, debited by the transfer. */
  payerToken: Address;
  tokenProgram: TokenProgramId;
}

/** The arguments of `emit_feedback` besides the facilitator (the generated client's). */
export type FeedbackArgs = Omit<EmitFeedbackInstructionDataArgs, 'facilitator'>;

/** The feedback a channel's close gives (its value is the channel's settled amount). */
export interface ChannelFeedback {
  /** 0..=100. */
  score: number;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedbackUri: string;
}

/** What `gateChannelClose` reads of a gate `ChannelRecord` (a decoded record fits). */
export type ChannelRecordFields = Pick<ChannelRecord, 'channel' | 'payerAsset' | 'payeeAsset' | 'facilitator' | 'policyId'>;

/** A gated subscription as its delegator sets it up (`Builder.subscribe`; docs/subscriptions.md). */
export interface Subscription {
  /**
   * The payer agent's live owner or agent wallet: its associated token account pays the
   * pulls; it signs `subscribe` and pays the three rents.
   */
  delegator: SignerLike;
  payerAsset: Address;
  payeeAsset: Address;
  /** The facilitator that sends the pulls (it must have a GateAuthority). */
  facilitator: Address;
  mint: Address;
  tokenProgram: TokenProgramId;
  /** The payer's policy for the mint every pull is counted under. */
  policyId: number;
  terms: RecurringTerms;
}

/** What `gatePull` and `unsubscribe` read of a gate `GatedSubscription` (a decoded record fits). */
export type GatedSubscriptionFields = Pick<
  GatedSubscription,
  'payerAsset' | 'payeeAsset' | 'facilitator' | 'delegation' | 'delegator' | 'policyId'
>;

/** The accounts the registry's inner registration of one new asset needs. */
export interface RegistrationAccounts {
  rootConfig: Address;
  registryConfig: Address;
  agentAccount: Address;
  atomConfig: Address;
  atomStats: Address;
}

export class Builder {
  readonly pda: Pdas;
  /** Throws when a program id is the mainnet sentinel (see `requireProgramIds`). */
  constructor(readonly ids: ProgramIds) {
    requireProgramIds(ids, ['policyVault', 'gate', 'validationRegistry']);
    this.pda = new Pdas(ids);
  }

  private get gate() {
    return { programAddress: this.ids.gate };
  }

  private async evaluation(p: PaymentArgs, att: Attestations) {
    const d = this.pda;
    const [evaluateSigner, policy, velocityLedger, killswitch, payerStats, payeeStats, payeeAcceptance] = await Promise.all([
      d.evaluateSigner(),
      d.policy(p.payerAsset, p.policyId),
      d.velocity(p.payerAsset, p.policyId),
      d.killswitch(p.payerAsset),
      d.atomStats(p.payerAsset),
      d.atomStats(p.payeeAsset),
      d.acceptance(p.payeeAsset),
    ]);
    return {
      evaluateSigner,
      policy,
      velocityLedger,
      killswitch,
      payerStats,
      payeeStats,
      payeeAcceptance,
      payerAttestation: att.payer,
      payeeAttestation: att.payee,
      // Without a list the policy account stands in its slot (policy_vault ignores it).
      payeeList: att.payeeList ?? policy,
      policyVaultProgram: this.ids.policyVault,
    };
  }

  /**
   * The read-only decision (simulate it; see `gatePayment`). Simulations use
   * `decisionInstruction`, which adds the payment's approval address read-only after these
   * accounts, so that an approved payment above the approval threshold decides Allow.
   */
  async gatePayment(p: PaymentArgs, att: Attestations = {}): Promise<Instruction> {
    return getGatePaymentInstruction({ ...(await this.evaluation(p, att)), ...p }, this.gate);
  }

  /**
   * The committing gate: instruction one of a settlement (see `compose`). `deadline` (unix
   * seconds) is the last moment the payment may land: an x402 challenge's expiry.
   * `holdbackTier`: under a payer policy with a holdback schedule, the payee tier the terms
   * were quoted for (docs/holdback.md).
   */
  async gatePaymentStrict(
    p: PaymentArgs,
    deadline: bigint,
    payerSigner: TransactionSigner,
    destinationToken: Address,
    att: Attestations = {},
    release?: VaultRelease,
    holdbackTier?: number,
  ): Promise<Instruction> {
    const [payerAgent, payeeAgent, vault] = await Promise.all([
      this.pda.agentAccount(p.payerAsset),
      this.pda.agentAccount(p.payeeAsset),
      release ? this.pda.vault(p.payerAsset, p.mint) : undefined,
    ]);
    // The parties and the mint are accounts here, not arguments (see the gate's docs).
    return getGatePaymentStrictInstruction(
      {
        ...(await this.evaluation(p, att)),
        payerSigner,
        payerAsset: p.payerAsset,
        payerAgent,
        payeeAsset: p.payeeAsset,
        payeeAgent,
        destinationToken,
        mintAccount: p.mint,
        instructions: INSTRUCTIONS_SYSVAR,
        vault,
        payerToken: release?.payerToken,
        tokenProgram: release?.tokenProgram,
        amount: p.amount,
        policyId: p.policyId,
        deadline,
        holdbackTier: holdbackTier ?? null,
      },
      this.gate,
    );
  }

  private async feedbackTarget(payee: Address, collection: Address) {
    const [agentAccount, atomConfig, atomStats, registryCpiAuthority] = await Promise.all([
      this.pda.agentAccount(payee),
      this.pda.atomConfig(),
      this.pda.atomStats(payee),
      this.pda.registryCpiAuthority(),
    ]);
    return {
      agentAccount,
      asset: payee,
      collection,
      atomConfig,
      atomStats,
      registryCpiAuthority,
      registryProgram: this.ids.agentRegistry,
      engineProgram: this.ids.reputationEngine,
    };
  }

  /** Records feedback for a payment (only as instruction three of a settlement). */
  async emitFeedback(facilitator: TransactionSigner, collection: Address, f: FeedbackArgs): Promise<Instruction> {
    const [gateAuthority, feedbackLog] = await Promise.all([
      this.pda.gateAuthority(facilitator.address),
      this.pda.feedbackLog(facilitator.address, f.paymentIdHash),
    ]);
    return getEmitFeedbackInstruction(
      {
        facilitatorSigner: facilitator,
        gateAuthority,
        feedbackLog,
        ...(await this.feedbackTarget(f.payeeAsset, collection)),
        instructions: INSTRUCTIONS_SYSVAR,
        systemProgram: SYSTEM_PROGRAM,
        ...f,
        facilitator: facilitator.address,
      },
      this.gate,
    );
  }

  /**
   * Disputes a settled payment of `facilitator` once: the payer (the transfer's authority)
   * signs; `rentPayer` (the payer itself, or the facilitator as a service) signs and pays for
   * the record. The facilitator need not sign.
   */
  async disputePayment(
    rentPayer: TransactionSigner,
    facilitator: Address,
    payer: TransactionSigner,
    collection: Address,
    paymentIdHash: Uint8Array,
    payeeAsset: Address,
    disputeReasonHash: Uint8Array,
    feedbackUri: string,
  ): Promise<Instruction> {
    const [gateAuthority, feedbackLog, dispute] = await Promise.all([
      this.pda.gateAuthority(facilitator),
      this.pda.feedbackLog(facilitator, paymentIdHash),
      this.pda.dispute(facilitator, paymentIdHash),
    ]);
    return getDisputePaymentInstruction(
      {
        rentPayer,
        payerSigner: payer,
        gateAuthority,
        feedbackLog,
        dispute,
        ...(await this.feedbackTarget(payeeAsset, collection)),
        systemProgram: SYSTEM_PROGRAM,
        paymentIdHash,
        facilitator,
        payeeAsset,
        disputeReasonHash,
        feedbackUri,
      },
      this.gate,
    );
  }

  /**
   * Closes payment `paymentIdHash`'s records of `facilitator` (its log, and its dispute
   * record when there is one) once its deadline and dispute window have passed; nobody signs
   * but the fee payer, and the rent goes back to the facilitator and to `disputeRentPayer`
   * (the record's rent payer; the facilitator when the payment was not disputed).
   */
  async closePaymentRecords(facilitator: Address, paymentIdHash: Uint8Array, disputeRentPayer: Address = facilitator): Promise<Instruction> {
    const [feedbackLog, dispute] = await Promise.all([
      this.pda.feedbackLog(facilitator, paymentIdHash),
      this.pda.dispute(facilitator, paymentIdHash),
    ]);
    return getClosePaymentRecordsInstruction({ feedbackLog, facilitator, dispute, disputeRentPayer }, this.gate);
  }

  /**
   * The gated open of a payment channel; only valid right before the channel program's `open`
   * of `channel` (see `openInstruction`), which must deposit `deposit` of `mint` from
   * `payerSigner`, pay 100 % to the payee agent's recipient and be held by `facilitator`
   * (payee and rent payer, which also pays the gate's record). Either signer may be given as
   * an address when it signs elsewhere.
   */
  async gateChannelOpen(
    payerSigner: SignerLike,
    payerAsset: Address,
    payeeAsset: Address,
    facilitator: SignerLike,
    mint: Address,
    deposit: bigint,
    policyId: number,
    channel: Address,
    att: Attestations = {},
  ): Promise<Instruction> {
    const p = { payerAsset, payeeAsset, amount: deposit, mint, policyId };
    const [evaluation, payerAgent, payeeAgent, channelRecord] = await Promise.all([
      this.evaluation(p, att),
      this.pda.agentAccount(payerAsset),
      this.pda.agentAccount(payeeAsset),
      this.pda.channelRecord(channel),
    ]);
    return getGateChannelOpenInstruction(
      {
        ...evaluation,
        payerSigner: signerOrNoop(payerSigner),
        payerAsset,
        payerAgent,
        payeeAsset,
        payeeAgent,
        mintAccount: mint,
        facilitator: signerOrNoop(facilitator),
        channelRecord,
        instructions: INSTRUCTIONS_SYSVAR,
        systemProgram: SYSTEM_PROGRAM,
        deposit,
        policyId,
      },
      this.gate,
    );
  }

  /**
   * Closes a sealed channel the gate let open (its gate `ChannelRecord`, decoded with the
   * generated `getChannelRecordDecoder`): the payer's policy gets back what the channel did
   * not spend of the counted deposit; when it settled anything, the payee one feedback of
   * value = settled and its receipt at `channelPaymentIdHash(channel)`. The record's
   * facilitator signs: pass its signer as `facilitator` (it must be the record's), else its
   * signature slot is left empty.
   */
  async gateChannelClose(
    record: ChannelRecordFields,
    collection: Address,
    feedback: ChannelFeedback,
    facilitator: SignerLike = record.facilitator,
  ): Promise<Instruction> {
    if (addressOf(facilitator) !== record.facilitator) {
      throw new TrustGateInputError('facilitator', `is not the record's facilitator ${record.facilitator}`);
    }
    const f = record.facilitator;
    const [gateAuthority, channelRecord, feedbackLog, target, evaluateSigner, policy, velocityLedger] = await Promise.all([
      this.pda.gateAuthority(f),
      this.pda.channelRecord(record.channel),
      this.pda.feedbackLog(f, channelPaymentIdHash(record.channel)),
      this.feedbackTarget(record.payeeAsset, collection),
      this.pda.evaluateSigner(),
      this.pda.policy(record.payerAsset, record.policyId),
      this.pda.velocity(record.payerAsset, record.policyId),
    ]);
    return getGateChannelCloseInstruction(
      {
        facilitator: signerOrNoop(facilitator),
        gateAuthority,
        channelRecord,
        channel: record.channel,
        feedbackLog,
        ...target,
        evaluateSigner,
        policy,
        velocityLedger,
        policyVaultProgram: this.ids.policyVault,
        systemProgram: SYSTEM_PROGRAM,
        args: {
          score: feedback.score,
          tag1: feedback.tag1,
          tag2: feedback.tag2,
          endpoint: feedback.endpoint,
          feedbackUri: feedback.feedbackUri,
        },
      },
      this.gate,
    );
  }

  /**
   * Closes the record of a channel the payment-channels program already deleted (no
   * feedback, nothing given back); nobody signs, the rent goes back to `facilitator`.
   */
  async closeChannelRecord(channel: Address, facilitator: Address): Promise<Instruction> {
    return getCloseChannelRecordInstruction(
      { channelRecord: await this.pda.channelRecord(channel), facilitator, channel },
      this.gate,
    );
  }

  /** The gate's delegate of a subscription's parties and facilitator (`Pdas.pullDelegate`). */
  async subscriptionDelegate(s: Pick<Subscription, 'payerAsset' | 'payeeAsset' | 'facilitator'>): Promise<Address> {
    return this.pda.pullDelegate(s.payerAsset, s.payeeAsset, s.facilitator);
  }

  /** The recurring delegation `subscribe` creates for `s`. */
  async subscriptionDelegation(s: Subscription): Promise<Address> {
    return delegationAddress(addressOf(s.delegator), s.mint, await this.subscriptionDelegate(s), s.terms.nonce);
  }

  /**
   * `subscribe`: the delegator's SubscriptionAuthority for the mint initialized (or
   * refreshed), the recurring delegation of `s.terms` to the gate's delegate, and the gate's
   * record of it, in one instruction the delegator signs (it pays the three rents). Pass its
   * signer as `s.delegator`, else its signature slot is left empty.
   */
  async subscribe(s: Subscription): Promise<Instruction> {
    const delegator = addressOf(s.delegator);
    const [delegate, delegation, payerAgent, payeeAgent, policy, gateAuthority, token, subscriptionAuthority] = await Promise.all([
      this.subscriptionDelegate(s),
      this.subscriptionDelegation(s),
      this.pda.agentAccount(s.payerAsset),
      this.pda.agentAccount(s.payeeAsset),
      this.pda.policy(s.payerAsset, s.policyId),
      this.pda.gateAuthority(s.facilitator),
      delegatorToken(delegator, s.mint, s.tokenProgram),
      subscriptionAuthorityAddress(delegator, s.mint),
    ]);
    return getSubscribeInstruction(
      {
        delegator: signerOrNoop(s.delegator),
        payerAsset: s.payerAsset,
        payerAgent,
        payeeAsset: s.payeeAsset,
        payeeAgent,
        policy,
        facilitator: s.facilitator,
        gateAuthority,
        mintAccount: s.mint,
        delegatorToken: token,
        subscriptionAuthority,
        delegation,
        delegate,
        gatedSubscription: await this.pda.gatedSubscription(delegation),
        tokenProgram: s.tokenProgram,
        subscriptionsProgram: SUBSCRIPTIONS_PROGRAM,
        systemProgram: SYSTEM_PROGRAM,
        policyId: s.policyId,
        nonce: s.terms.nonce,
        amountPerPeriod: s.terms.amountPerPeriod,
        periodLengthS: s.terms.periodLengthS,
        startTs: s.terms.startTs,
        expiryTs: s.terms.expiryTs,
      },
      this.gate,
    );
  }

  /**
   * `gate_pull` of `amount` from the subscription `record` whose delegation reads
   * `delegation` now (`decodeRecurringDelegation`: its period's state names the pull's
   * receipt, `pullPaymentIdHash`), into `destination` (a token account of the payee agent's
   * recipient); `tokenProgram` is the mint's. The record's facilitator signs and pays the
   * receipt's rent: pass its signer as `facilitator` (it must be the record's), else its
   * signature slot is left empty. A pull above the policy's approval threshold takes its
   * approval (`appendApproval`).
   */
  async gatePull(
    record: GatedSubscriptionFields,
    delegation: RecurringDelegation,
    destination: Address,
    tokenProgram: TokenProgramId,
    collection: Address,
    amount: bigint,
    feedback: FeedbackDetails,
    att: Attestations = {},
    facilitator: SignerLike = record.facilitator,
  ): Promise<Instruction> {
    if (addressOf(facilitator) !== record.facilitator) {
      throw new TrustGateInputError('facilitator', `is not the record's facilitator ${record.facilitator}`);
    }
    const f = record.facilitator;
    const p = { payerAsset: record.payerAsset, payeeAsset: record.payeeAsset, amount, mint: delegation.mint, policyId: record.policyId };
    const [evaluation, gateAuthority, gatedSubscription, payerAgent, token, feedbackLog, target] = await Promise.all([
      this.evaluation(p, att),
      this.pda.gateAuthority(f),
      this.pda.gatedSubscription(record.delegation),
      this.pda.agentAccount(record.payerAsset),
      delegatorToken(delegation.delegator, delegation.mint, tokenProgram),
      this.pda.feedbackLog(f, pullPaymentIdHash(record.delegation, delegation)),
      this.feedbackTarget(record.payeeAsset, collection),
    ]);
    return getGatePullInstruction(
      {
        ...evaluation,
        facilitator: signerOrNoop(facilitator),
        gateAuthority,
        gatedSubscription,
        payerAsset: record.payerAsset,
        payerAgent,
        mintAccount: delegation.mint,
        destinationToken: destination,
        delegation: record.delegation,
        subscriptionAuthority: delegation.subscriptionAuthority,
        delegatorToken: token,
        tokenProgram,
        delegate: delegation.delegatee,
        eventAuthority: SUBSCRIPTIONS_EVENT_AUTHORITY,
        subscriptionsProgram: SUBSCRIPTIONS_PROGRAM,
        feedbackLog,
        ...target,
        systemProgram: SYSTEM_PROGRAM,
        amount,
        feedback,
      },
      this.gate,
    );
  }

  /**
   * `unsubscribe`: the record's delegation revoked (when still open) and the record closed,
   * both rents back to its delegator, which signs: pass its signer as `delegator` (it must be
   * the record's), else its signature slot is left empty.
   */
  async unsubscribe(record: Pick<GatedSubscriptionFields, 'delegation' | 'delegator'>, delegator: SignerLike = record.delegator): Promise<Instruction> {
    if (addressOf(delegator) !== record.delegator) {
      throw new TrustGateInputError('delegator', `is not the record's delegator ${record.delegator}`);
    }
    return getUnsubscribeInstruction(
      {
        delegator: signerOrNoop(delegator),
        gatedSubscription: await this.pda.gatedSubscription(record.delegation),
        delegation: record.delegation,
        subscriptionsProgram: SUBSCRIPTIONS_PROGRAM,
      },
      this.gate,
    );
  }

  /**
   * Opens the escrow of `payeeAsset` in `mint` (`Pdas.holdbackEscrow`) under `tokenProgram`
   * (the mint's owner); `payer` pays its rent and signs.
   */
  async openHoldbackEscrow(payer: SignerLike, payeeAsset: Address, mint: Address, tokenProgram: Address): Promise<Instruction> {
    return getOpenHoldbackEscrowInstruction(
      {
        payer: signerOrNoop(payer),
        escrow: await this.pda.holdbackEscrow(payeeAsset, mint),
        mintAccount: mint,
        tokenProgram,
        systemProgram: SYSTEM_PROGRAM,
        payeeAsset,
        mint,
      },
      this.gate,
    );
  }

  /** The accounts of a move of `p`'s held share to `to`: the registry's only when the move
   * ends a dispute (it answers the dispute's feedback). */
  private async heldPayout(p: HeldPayment, to: Address) {
    const [feedbackLog, holdbackAuthority, agentAccount, gateAuthority] = await Promise.all([
      this.pda.feedbackLog(p.facilitator, p.paymentIdHash),
      this.pda.holdbackAuthority(),
      this.pda.agentAccount(p.payeeAsset),
      p.disputed ? this.pda.gateAuthority(p.facilitator) : undefined,
    ]);
    return {
      feedbackLog,
      escrow: p.escrow,
      to,
      mint: p.mint,
      holdbackAuthority,
      tokenProgram: p.tokenProgram,
      agentAccount,
      payeeAsset: p.payeeAsset,
      gateAuthority,
      registryProgram: p.disputed ? this.ids.agentRegistry : undefined,
    };
  }

  /**
   * Releases `p`'s held share (`heldPaymentFromLogData`) to `to`, a token account of the mint
   * owned by its recipient (after the hold, or an undecided arbitration). Nobody signs but
   * the fee payer.
   */
  async releaseHoldback(p: HeldPayment, to: Address): Promise<Instruction> {
    return getReleaseHoldbackInstruction(await this.heldPayout(p, to), this.gate);
  }

  /**
   * The payee's refund of `p`'s held share to `to`, a token account of the mint owned by the
   * payer's wallet; `payeeSigner` (the payee's live owner or agent wallet) signs.
   */
  async refundHoldback(payeeSigner: SignerLike, p: HeldPayment, to: Address): Promise<Instruction> {
    return getRefundHoldbackInstruction({ payeeSigner: signerOrNoop(payeeSigner), ...(await this.heldPayout(p, to)) }, this.gate);
  }

  /**
   * The arbiter's decision on `p`'s disputed held share, paid to `to`: upheld, a token
   * account of the mint owned by the payer's wallet; rejected, one owned by the share's
   * recipient. A key arbiter signs itself (pass its signer as `arbiter`; it must be the
   * log's); for an arbiter set, pass the signing members in `members` (they sign).
   */
  async arbitrateHoldback(
    p: HeldPayment,
    uphold: boolean,
    to: Address,
    members: readonly SignerLike[] = [],
    arbiter: SignerLike = p.arbiter,
  ): Promise<Instruction> {
    if (addressOf(arbiter) !== p.arbiter) {
      throw new TrustGateInputError('arbiter', `is not the held payment's arbiter ${p.arbiter}`);
    }
    const ix = getArbitrateHoldbackInstruction({ arbiter: p.arbiter, ...(await this.heldPayout(p, to)), uphold }, this.gate);
    const [first, ...rest] = ix.accounts;
    const arbiterMeta = members.length === 0 ? { address: p.arbiter, role: AccountRole.READONLY_SIGNER, signer: signerOrNoop(arbiter) } : first;
    return {
      ...ix,
      accounts: [
        arbiterMeta,
        ...rest,
        ...members.map((m) => ({ address: addressOf(m), role: AccountRole.READONLY_SIGNER, signer: signerOrNoop(m) })),
      ],
    };
  }

  /**
   * Creates the arbiter set of `members` (sorted here, by their bytes) deciding by
   * `threshold`; `payer` pays its rent and signs. Its address is `Pdas.arbiterSet` of the
   * sorted members.
   */
  async createArbiterSet(payer: SignerLike, threshold: number, members: readonly Address[]): Promise<Instruction> {
    const sorted = sortAddresses(members);
    return getCreateArbiterSetInstruction(
      {
        payer: signerOrNoop(payer),
        arbiterSet: await this.pda.arbiterSet(threshold, sorted),
        systemProgram: SYSTEM_PROGRAM,
        threshold,
        members: sorted,
      },
      this.gate,
    );
  }

  private get policyVault() {
    return { programAddress: this.ids.policyVault };
  }

  private async policyAccounts(asset: Address, policyId: number) {
    const [authority, policy, velocity, killswitch] = await Promise.all([
      this.pda.policyAuthority(asset),
      this.pda.policy(asset, policyId),
      this.pda.velocity(asset, policyId),
      this.pda.killswitch(asset),
    ]);
    return { authority, policy, velocity, killswitch, systemProgram: SYSTEM_PROGRAM, agentAsset: asset };
  }

  /**
   * Creates policy `policyId` (immutable) with its velocity ledger, and the kill switch when
   * missing; `member` (who pays) and `cosigners` reach the authority's threshold. `params` are
   * its core rules (the mint account is passed when `params.mint` names one); `rules` its
   * limits (null, the default: none), a validity window, a payee allow or deny list,
   * monthly, lifetime and per-payee daily caps. When `rules.payeeList` names the list account
   * it must be `pda.payeeList` of this policy (see `payeeListRules`); the list is created
   * empty. A payment of more than `approvalThreshold` (0, the default: none) needs the
   * members' approval of its terms. `holdback` (null, the default: none) is its holdback
   * schedule (docs/holdback.md).
   */
  async initPolicy(
    member: TransactionSigner,
    cosigners: readonly TransactionSigner[],
    asset: Address,
    policyId: number,
    params: PolicyParamsArgs,
    rules: PolicyRulesArgs | null = null,
    approvalThreshold: bigint | number = 0n,
    holdback: HoldbackScheduleArgs | null = null,
  ): Promise<Instruction> {
    const mint = params.mint === SYSTEM_PROGRAM ? undefined : params.mint;
    const payeeList = !rules || rules.payeeList === SYSTEM_PROGRAM ? undefined : rules.payeeList;
    const ix = getInitPolicyInstruction(
      {
        member,
        ...(await this.policyAccounts(asset, policyId)),
        mint,
        payeeList,
        asset,
        policyId,
        params,
        rules,
        approvalThreshold,
        holdback,
      },
      this.policyVault,
    );
    return withCosigners(ix, cosigners);
  }

  /**
   * Approves one payment of exactly `terms` until `expiresAt` (unix seconds, at most a week
   * ahead); `member` (who pays the approval's rent, back when the payment uses it) and
   * `cosigners` reach the threshold of the payer's authority in force.
   */
  async approvePayment(
    member: TransactionSigner,
    cosigners: readonly TransactionSigner[],
    terms: ApprovalTerms,
    expiresAt: bigint,
  ): Promise<Instruction> {
    const [authority, approval, killswitch] = await Promise.all([
      this.pda.policyAuthority(terms.payerAsset),
      this.pda.approval(terms),
      this.pda.killswitch(terms.payerAsset),
    ]);
    const ix = getApprovePaymentInstruction(
      { member, authority, agentAsset: terms.payerAsset, approval, killswitch, ...terms, expiresAt },
      this.policyVault,
    );
    return withCosigners(ix, cosigners);
  }

  /** Closes an unused approval to `rentPayer` (signed by it, or by `closer` once expired). */
  closeApproval(closer: TransactionSigner, approval: Address, rentPayer: Address): Instruction {
    return getCloseApprovalInstruction({ closer, approval, rentPayer }, this.policyVault);
  }

  /** `rules` naming the payee list account of `asset`'s policy `policyId`. */
  async payeeListRules(asset: Address, policyId: number, rules: PolicyRulesArgs): Promise<PolicyRulesArgs> {
    return { ...rules, payeeList: await this.pda.payeeList(asset, policyId) };
  }

  /**
   * Adds and removes payees of a policy's list account; `member` (who pays for its growth
   * and receives the rent its shrinking frees) and `cosigners` reach the threshold.
   */
  async editPayeeList(
    member: TransactionSigner,
    cosigners: readonly TransactionSigner[],
    asset: Address,
    policyId: number,
    add: readonly Address[],
    remove: readonly Address[],
  ): Promise<Instruction> {
    const [authority, policy, payeeList] = await Promise.all([
      this.pda.policyAuthority(asset),
      this.pda.policy(asset, policyId),
      this.pda.payeeList(asset, policyId),
    ]);
    const ix = getEditPayeeListInstruction(
      {
        member,
        authority,
        policy,
        payeeList,
        systemProgram: SYSTEM_PROGRAM,
        agentAsset: asset,
        asset,
        policyId,
        add: [...add],
        remove: [...remove],
      },
      this.policyVault,
    );
    return withCosigners(ix, cosigners);
  }

  /** The four accounts (and the asset's stats) the registry's inner registration of `asset` needs. */
  async registrationAccounts(collection: Address, asset: Address): Promise<RegistrationAccounts> {
    const [rootConfig, registryConfig, agentAccount, atomConfig, atomStats] = await Promise.all([
      this.pda.rootConfig(),
      this.pda.registryConfig(collection),
      this.pda.agentAccount(asset),
      this.pda.atomConfig(),
      this.pda.atomStats(asset),
    ]);
    return { rootConfig, registryConfig, agentAccount, atomConfig, atomStats };
  }

  /** Registers a reputation-enabled agent through the gate; `owner` and the fresh `asset` sign. */
  async registerAgentViaCpi(
    owner: TransactionSigner,
    asset: TransactionSigner,
    collection: Address,
    metadataUri: string,
  ): Promise<Instruction> {
    const r = await this.registrationAccounts(collection, asset.address);
    return getRegisterAgentViaCpiInstruction(
      {
        owner,
        asset,
        ...r,
        collection,
        mplCoreProgram: MPL_CORE_PROGRAM,
        registryProgram: this.ids.agentRegistry,
        engineProgram: this.ids.reputationEngine,
        systemProgram: SYSTEM_PROGRAM,
        metadataUri,
      },
      this.gate,
    );
  }
}

/** `addresses` in the ascending order of their 32 bytes (a Pubkey's order), not of their
 * base58 text. */
export function sortAddresses(addresses: readonly Address[]): Address[] {
  const enc = getAddressEncoder();
  const keyed = addresses.map((a) => ({ a, b: enc.encode(a) }));
  keyed.sort((x, y) => {
    for (let i = 0; i < 32; i++) if (x.b[i] !== y.b[i]) return x.b[i] - y.b[i];
    return 0;
  });
  return keyed.map((k) => k.a);
}

/** TransferChecked of either token program (both encode it the same way). */
export function transferChecked(
  tokenProgram: TokenProgramId,
  source: Address,
  mint: Address,
  destination: Address,
  authority: TransactionSigner,
  amount: bigint,
  decimals: number,
): Instruction {
  return getTransferCheckedInstruction(
    { source, mint, destination, authority, amount, decimals },
    { programAddress: tokenProgram },
  );
}

/** The optional ComputeBudget prefix of a settlement: unit limit first, then unit price. */
export interface ComputeBudget {
  unitLimit?: number;
  unitPriceMicroLamports?: bigint;
}

export function computeBudgetInstructions(b: ComputeBudget = {}): Instruction[] {
  const out: Instruction[] = [];
  if (b.unitLimit !== undefined) out.push(getSetComputeUnitLimitInstruction({ units: b.unitLimit }));
  if (b.unitPriceMicroLamports !== undefined) {
    out.push(getSetComputeUnitPriceInstruction({ microLamports: b.unitPriceMicroLamports }));
  }
  return out;
}
