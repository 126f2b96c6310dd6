// The atomic settlement: [gate_payment_strict, TransferChecked, emit_feedback] in one
// transaction (optionally after a ComputeBudget unit limit and unit price, the only thing
// the strict gate allows besides the payment; a held payment has a second TransferChecked,
// of the held share to the escrow), and the `settle` / `dispute` helpers.
// `compose` builds exactly the instructions the Rust SDK's `settle::compose` builds.

import {
  AccountRole,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Address,
  type Blockhash,
  type Instruction,
  type Signature,
  type Transaction,
  type TransactionSigner,
} from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import type { Funding, LookupTable, TokenProgramId, TrustGateRpc } from './chain.js';
import { TransactionFailedError, TrustGateInputError, assertAtomicityEnforced } from './errors.js';
import {
  appendApproval,
  Builder,
  computeBudgetInstructions,
  transferChecked,
  type ApprovalUse,
  type Attestations,
  type ComputeBudget,
} from './instructions.js';
import type { HoldbackQuote } from './holdback.js';
import type { ApprovalTerms } from './pda.js';
import { compileV0Message, signCompiled, signersOf } from './message.js';
import { addressOf, signerOrNoop, type SignerLike } from './signer.js';

/** The feedback recorded with a settlement. */
export interface Feedback {
  paymentIdHash: Uint8Array;
  /** 0..=100. */
  score: number;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedbackUri: string;
}

/** Everything a settlement needs (the Rust SDK's `Settlement`). */
export interface Settlement {
  /** The facilitator: fee payer and signer of emit_feedback. */
  facilitator: SignerLike;
  /** The payer agent's owner or agent wallet: authority of the transfer. */
  payerSigner: SignerLike;
  payerAsset: Address;
  payeeAsset: Address;
  policyId: number;
  /**
   * Unix seconds: the last moment the settlement may land (the x402 challenge's expiry, its
   * `issuedAt` plus `maxTimeoutSeconds`; see `challengeDeadline`).
   */
  deadline: bigint;
  mint: Address;
  decimals: number;
  tokenProgram: TokenProgramId;
  amount: bigint;
  sourceToken: Address;
  /** The token account of the payee's recipient (agent wallet, else owner). */
  destinationToken: Address;
  /** The registry's base collection. */
  collection: Address;
  attestations: Attestations;
  feedback: Feedback;
  computeBudget?: ComputeBudget;
  /** Where the payment comes from: the policy's funding. */
  funding: Funding;
  /**
   * The payment's approval on chain, for an amount above the payer policy's approval
   * threshold (`approvalUse` finds it); the settlement closes it. It must be
   * `Pdas.approval(settlementApprovalTerms(s))`.
   */
  approval?: ApprovalUse;
  /**
   * Under a payer policy with a holdback schedule, the terms quoted for the payee's tier
   * (docs/holdback.md); absent under a policy without one.
   */
  holdback?: HoldbackQuote;
}

/** What an approval of settlement `s` approves: its payment's terms. */
export function settlementApprovalTerms(s: Pick<Settlement, 'payerAsset' | 'payeeAsset' | 'mint' | 'amount' | 'policyId'>): ApprovalTerms {
  return { payerAsset: s.payerAsset, payeeAsset: s.payeeAsset, mint: s.mint, amount: s.amount, policyId: s.policyId };
}

/**
 * Throws TrustGateInputError('approval') unless `a` is the approval of `terms`: the gate
 * would not find another one (the Rust SDK's `settle::check_approval`).
 */
export async function checkApproval(b: Builder, a: ApprovalUse, terms: ApprovalTerms): Promise<void> {
  const want = await b.pda.approval(terms);
  if (a.address !== want) {
    throw new TrustGateInputError('approval', `${a.address} is not the approval of this payment's terms (${want})`);
  }
}

/** The associated token account of `owner` for `mint` under `tokenProgram`. */
export async function associatedTokenAccount(owner: Address, mint: Address, tokenProgram: TokenProgramId): Promise<Address> {
  return (await findAssociatedTokenPda({ owner, mint, tokenProgram }))[0];
}

/**
 * The instructions of a settlement in the only order the strict gate accepts: the optional
 * compute budget, then [gate_payment_strict, TransferChecked, emit_feedback]; with
 * `s.approval`, gate_payment_strict ends with the approval and its rent payer (writable).
 * With `s.holdback`, gate_payment_strict carries its tier and, when it holds a share, the
 * transfer pays `amount - held` to the payee, a second one `held` to the escrow, and
 * emit_feedback reads [the payer's policy, the escrow, the payee's token account, the payer's
 * AgentAccount and asset] after its accounts.
 * `atomicityEnforced` must be the boolean `true` (the guard throws AtomicityNotEnforcedError).
 */
export async function compose(b: Builder, s: Settlement, atomicityEnforced: true): Promise<Instruction[]> {
  assertAtomicityEnforced(atomicityEnforced);
  if (typeof s.amount !== 'bigint' || s.amount <= 0n) throw new TrustGateInputError('amount', 'must be a bigint greater than 0');
  if (s.payerAsset === s.payeeAsset) {
    throw new TrustGateInputError('payeeAsset', 'is the payer agent: a settlement pays another agent');
  }
  if (s.sourceToken === s.destinationToken) {
    throw new TrustGateInputError('destinationToken', 'is the source token account: no value would move');
  }
  const h = s.holdback;
  if (h) {
    if (!Number.isInteger(h.tier) || h.tier < 0 || h.tier > 255) throw new TrustGateInputError('holdback.tier', 'must be an integer 0..=255');
    if (typeof h.held !== 'bigint' || h.held < 0n) throw new TrustGateInputError('holdback.held', 'must be a bigint of at least 0');
  }
  const payer = signerOrNoop(s.payerSigner);
  const facilitator = signerOrNoop(s.facilitator);
  const p = { payerAsset: s.payerAsset, payeeAsset: s.payeeAsset, amount: s.amount, mint: s.mint, policyId: s.policyId };
  const release = s.funding === 'vault' ? { payerToken: s.sourceToken, tokenProgram: s.tokenProgram } : undefined;
  let gate = await b.gatePaymentStrict(p, s.deadline, payer, s.destinationToken, s.attestations, release, h?.tier);
  if (s.approval) {
    await checkApproval(b, s.approval, settlementApprovalTerms(s));
    gate = appendApproval(gate, s.approval);
  }
  const held = h?.held ?? 0n;
  if (held !== 0n && held >= s.amount) {
    throw new TrustGateInputError('holdback.held', 'is not less than the amount: the payee would be paid nothing');
  }
  const transfer = (to: Address, amount: bigint) =>
    transferChecked(s.tokenProgram, s.sourceToken, s.mint, to, payer, amount, s.decimals);
  const transfers = [transfer(s.destinationToken, s.amount - held)];
  if (h && held !== 0n) transfers.push(transfer(h.escrow, held));
  let feedback = await b.emitFeedback(facilitator, s.collection, {
    ...s.feedback,
    payeeAsset: s.payeeAsset,
    value: s.amount,
    valueDecimals: s.decimals,
  });
  if (h && held !== 0n) {
    // The log records the hold and arbiter the payer's policy sets, the escrow the share
    // went to, which emit_feedback checks is the gate's, the recipient of the payee's token
    // account and the payer's keys, which never arbitrate.
    const [policy, payerAgent] = await Promise.all([b.pda.policy(s.payerAsset, s.policyId), b.pda.agentAccount(s.payerAsset)]);
    const read = (address: Address) => ({ address, role: AccountRole.READONLY });
    feedback = {
      ...feedback,
      accounts: [...(feedback.accounts ?? []), ...[policy, h.escrow, s.destinationToken, payerAgent, s.payerAsset].map(read)],
    };
  }
  return [...computeBudgetInstructions(s.computeBudget), gate, ...transfers, feedback];
}

/** The most bytes a signed transaction may have (a packet's). */
export const PACKET_LIMIT = 1232;

/** A blockhash lifetime. */
export interface Lifetime {
  blockhash: Blockhash;
  lastValidBlockHeight: bigint;
}

/**
 * A v0 transaction of `ixs` paid by `feePayer`, loading accounts from `tables`, compiled as
 * the Rust SDK compiles it (the same bytes) and signed by every real signer among the fee
 * payer and the instructions' signers; the slots of address-only signers stay empty for them
 * to fill (a payer signs, the facilitator co-signs at /settle). One that would be above
 * PACKET_LIMIT bytes signed is refused (TrustGateInputError('transaction'), with its size).
 */
export async function transaction(
  feePayer: SignerLike,
  ixs: readonly Instruction[],
  tables: readonly LookupTable[],
  lifetime: Lifetime,
): Promise<Transaction> {
  const compiled = compileV0Message(addressOf(feePayer), ixs, tables, lifetime.blockhash);
  // The signed size: a shortvec of the signatures (one byte below 128), 64 bytes each.
  const size = compiled.bytes.length + 1 + 64 * compiled.signers.length;
  if (size > PACKET_LIMIT) {
    throw new TrustGateInputError(
      'transaction',
      `${size} bytes, above the ${PACKET_LIMIT} a transaction may have (a held vault-funded settlement with an approval does not fit: docs/holdback.md)`,
    );
  }
  return signCompiled(compiled, signersOf(feePayer, ixs), lifetime);
}

/** Base64 of a transaction's wire bytes (the x402 payload's `transaction`). */
export function toBase64(tx: Transaction): string {
  return getBase64EncodedWireTransaction(tx);
}

/**
 * Sends a fully signed transaction (with preflight) and polls its status until `confirmed`,
 * backing off from 50 ms, for at most `timeoutMs` (JSON-RPC only: no subscriptions needed).
 * A failed transaction throws TransactionFailedError with the program logs.
 */
export async function sendAndConfirm(rpc: TrustGateRpc, tx: Transaction, timeoutMs = 60_000): Promise<Signature> {
  const signature = getSignatureFromTransaction(tx as never);
  try {
    await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
  } catch (e) {
    // A preflight failure carries the simulation's error and logs.
    const data = (e as { context?: { logs?: string[] }; cause?: unknown }).context;
    throw new TransactionFailedError('sendTransaction', (e as Error).message, data?.logs ?? []);
  }
  const deadline = Date.now() + timeoutMs;
  for (let wait = 50; Date.now() < deadline; wait = Math.min(wait * 2, 1000)) {
    const [status] = (await rpc.getSignatureStatuses([signature]).send()).value;
    if (status?.err) throw new TransactionFailedError(`transaction ${signature}`, status.err, []);
    if (status && (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized')) return signature;
    await new Promise((r) => setTimeout(r, wait));
  }
  throw new Error(`transaction ${signature}: not confirmed within ${timeoutMs} ms; check it before sending again`);
}

/** What `settle` needs besides the settlement. */
export interface SettleOptions {
  rpc: TrustGateRpc;
  builder: Builder;
  settlement: Settlement & { payerSigner: TransactionSigner; facilitator: TransactionSigner };
  tables?: readonly LookupTable[];
  /** Must be the boolean `true`. */
  atomicityEnforced: true;
}

/** Settles holding both keys: composes, signs as payer and facilitator, sends, confirms. */
export async function settle(o: SettleOptions): Promise<Signature> {
  const ixs = await compose(o.builder, o.settlement, o.atomicityEnforced);
  const { value: lifetime } = await o.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  return sendAndConfirm(o.rpc, await transaction(o.settlement.facilitator, ixs, o.tables ?? [], lifetime));
}

/** A dispute of a settled payment. */
export interface Dispute {
  /** The registry's base collection. */
  collection: Address;
  paymentIdHash: Uint8Array;
  payeeAsset: Address;
  /** sha256 of the reason text (or any 32-byte reference). */
  reasonHash: Uint8Array;
  feedbackUri: string;
}

/**
 * The dispute transaction: `dispute_payment` paid by `facilitator` and signed by `payer`,
 * the wallet that authorized the settlement's transfer (only it may dispute). With an
 * address-only facilitator its slot stays empty: send the base64 to the facilitator's
 * `POST /dispute`, which checks it, co-signs and sends it.
 */
export async function dispute(
  b: Builder,
  facilitator: SignerLike,
  payer: TransactionSigner,
  d: Dispute,
  lifetime: Lifetime,
): Promise<Transaction> {
  const ix = await disputeInstruction(b, signerOrNoop(facilitator), addressOf(facilitator), payer, d);
  return transaction(facilitator, [ix], [], lifetime);
}

/**
 * The dispute transaction without the facilitator: `payer` signs and pays for the
 * transaction and the record. For when the facilitator will not co-sign (its signature is not
 * needed; its `POST /dispute` only saves the payer the fee and the rent).
 */
export async function disputeAlone(
  b: Builder,
  facilitator: Address,
  payer: TransactionSigner,
  d: Dispute,
  lifetime: Lifetime,
): Promise<Transaction> {
  const ix = await disputeInstruction(b, payer, facilitator, payer, d);
  return transaction(payer, [ix], [], lifetime);
}

/** `dispute_payment` of `d`, a payment of `facilitator`, signed by `payer`; `rentPayer` pays for the record. */
function disputeInstruction(
  b: Builder,
  rentPayer: TransactionSigner,
  facilitator: Address,
  payer: TransactionSigner,
  d: Dispute,
): Promise<Instruction> {
  return b.disputePayment(rentPayer, facilitator, payer, d.collection, d.paymentIdHash, d.payeeAsset, d.reasonHash, d.feedbackUri);
}
