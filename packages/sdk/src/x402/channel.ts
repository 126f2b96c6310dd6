// What the payer's side of x402's two channel schemes (`batch-settlement` in batch.ts, `upto`
// in upto.ts) shares: the readers of an offer's fields, the gated open's terms and the
// channel's open transaction, which both build the same way (the Rust SDK's `session` module
// builds both opens too). The public names among them are exported from batch.ts.

import { address, type Address, type Instruction, type Transaction, type TransactionSigner } from '@solana/kit';
import type { x402Client } from '@x402/core/client';
import type { PaymentPayloadContext, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import { approvalUseOf, lookupTables, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, type LookupTable, type TokenProgramId, type TrustGateRpc } from '../chain.js';
import { CHANNEL_ALL_BPS, channelOf, openInstruction, type OpenChannel } from '../channels.js';
import { TrustGateInputError } from '../errors.js';
import { programIds, type ProgramIds } from '../ids.js';
import { appendApproval, Builder, computeBudgetInstructions, type ApprovalUse, type Attestations } from '../instructions.js';
import { checkApproval, transaction, type Lifetime } from '../settle.js';
import { attestationsFor, nowUnix } from '../simulate.js';
import { networkOfCaip2 } from './prepare.js';
import { gateExtensionOf } from './wire.js';
import { paymentIdentifierClient } from './payment-identifier.js';

/** The open's compute-unit limit (a plain open measures about 40 000, a gated one about 60 000 more). */
export const OPEN_UNIT_LIMIT = 150_000;
/** The SPL Memo program (v2). */
export const MEMO_PROGRAM = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/** What both schemes' clients are made with. */
export interface ChannelClientOptions {
  /** The payer's wallet (gated: the payer agent's owner or agent wallet): signs each open. */
  signer: TransactionSigner;
  rpcUrl?: string;
  rpc?: TrustGateRpc;
  /** Program ids that differ from the network's defaults. */
  programIds?: Partial<ProgramIds>;
  /** CAIP-2 networks (patterns) to pay on; default every Solana network, `solana:*`. */
  networks?: string[];
}

/** A client's scheme: the gated variant (the default) or the stock scheme, nothing else. */
export function schemeOf(chosen: string | undefined, gated: string, stock: string): string {
  const scheme = chosen ?? gated;
  if (scheme !== gated && scheme !== stock) throw new TrustGateInputError('scheme', `${JSON.stringify(scheme)} is neither ${gated} nor ${stock}`);
  return scheme;
}

/** Registers `scheme` on `client` for each of its networks, with payment ids where a 402
 * declares them (`paymentIdentifierClient`), and returns the client. */
export function registerOn(client: x402Client, scheme: SchemeNetworkClient & { readonly networks: readonly string[] }): x402Client {
  for (const network of scheme.networks) client.register(network as `${string}:${string}`, scheme);
  return client.registerExtension(paymentIdentifierClient);
}

/** The gated variant's terms: whose policy decides the deposit. */
export interface SessionGate {
  payerAsset: Address;
  payeeAsset: Address;
  policyId: number;
  attestations?: Attestations;
  /**
   * The deposit's approval on chain, when it is above the payer policy's approval threshold
   * (`approvalUseOf` of the deposit's terms: the payer and payee assets, the mint, the
   * deposit, the policy id); the open uses it up.
   */
  approval?: ApprovalUse;
}

const U64_MAX = 0xffffffffffffffffn;

export const addressField = (field: string, s: unknown): Address => {
  try {
    return address(String(s));
  } catch {
    throw new TrustGateInputError(field, `${JSON.stringify(s)} is not a base58 address`);
  }
};

export const u64Field = (field: string, s: unknown): bigint => {
  const t = typeof s === 'bigint' ? s.toString() : typeof s === 'number' && Number.isSafeInteger(s) ? String(s) : s;
  if (typeof t !== 'string' || !/^\d+$/.test(t) || BigInt(t) > U64_MAX) {
    throw new TrustGateInputError(field, `${JSON.stringify(typeof s === 'bigint' ? s.toString() : s)} is not a u64`);
  }
  return BigInt(t);
};

export const optionalString = (o: Record<string, unknown>, k: string): string | undefined => {
  if (o[k] === undefined || o[k] === null) return undefined;
  if (typeof o[k] !== 'string') throw new TrustGateInputError(`extra.${k}`, 'a string expected');
  return o[k] as string;
};

export const requiredString = (o: Record<string, unknown>, k: string): string => {
  const v = optionalString(o, k);
  if (v === undefined) throw new TrustGateInputError(`extra.${k}`, 'missing');
  return v;
};

/** `extra.tokenProgram` as one of the two token programs. */
export function tokenProgramOf(extra: { tokenProgram: string }): TokenProgramId {
  if (extra.tokenProgram === TOKEN_PROGRAM || extra.tokenProgram === TOKEN_2022_PROGRAM) return extra.tokenProgram;
  throw new TrustGateInputError('extra.tokenProgram', `${JSON.stringify(extra.tokenProgram)} is neither SPL Token nor Token-2022`);
}

/**
 * The offer's amount, once the call is one `scheme` pays: x402 v2, the offer of that scheme, a
 * u64 within the spend cap. `zero`, when given, refuses an amount of 0 with that reason.
 */
export function offerAmount(
  scheme: string,
  x402Version: number,
  requirements: PaymentRequirements,
  context: PaymentPayloadContext | undefined,
  zero?: string,
): bigint {
  if (x402Version !== 2) throw new TrustGateInputError('x402Version', `${x402Version}: the ${scheme} scheme is x402 v2`);
  if (requirements.scheme !== scheme) throw new TrustGateInputError('scheme', `${JSON.stringify(requirements.scheme)}: this client pays ${scheme}`);
  const amount = u64Field('amount', requirements.amount);
  if (zero !== undefined && amount === 0n) throw new TrustGateInputError('amount', zero);
  const cap = context?.maxAmountPerPayment;
  if (cap !== undefined && amount > BigInt(cap)) {
    throw new TrustGateInputError('amount', `${requirements.amount} is above this client's spend cap ${cap}`);
  }
  return amount;
}

/** The offer's accounts an open is built with, read from `asset`, `payTo` and `extra.feePayer`. */
export function offerAccounts(r: PaymentRequirements, extra: { feePayer: string }): { mint: Address; payTo: Address; feePayer: Address } {
  return { mint: addressField('asset', r.asset), payTo: addressField('payTo', r.payTo), feePayer: addressField('extra.feePayer', extra.feePayer) };
}

/** The cluster's recent slot (the open's) and blockhash (the open's lifetime). */
export async function openContext(rpc: TrustGateRpc): Promise<{ slot: bigint; lifetime: Lifetime }> {
  const [slot, { value: lifetime }] = await Promise.all([
    rpc.getSlot({ commitment: 'confirmed' }).send(),
    rpc.getLatestBlockhash({ commitment: 'confirmed' }).send(),
  ]);
  return { slot, lifetime };
}

/**
 * The gated open's terms for `amount` (the deposit or the ceiling), read from the offer's
 * `extra.gate` as the trust-gate scheme's `prepare` reads a payment's, with the deposit's
 * approval on chain when the payer's policy asks for one (`approvalUseOf`).
 */
export async function gatedOpen(
  rpc: TrustGateRpc,
  r: PaymentRequirements,
  overrides: Partial<ProgramIds> | undefined,
  mint: Address,
  feePayer: Address,
  amount: bigint,
) {
  const g = gateExtensionOf(r);
  const payerAsset = addressField('extra.gate.payerAgentAsset', g.payerAgentAsset);
  const payeeAsset = addressField('extra.gate.payeeAgentAsset', g.payeeAgentAsset);
  const builder = new Builder({ ...programIds(networkOfCaip2(r.network)), ...overrides });
  const p = { payerAsset, payeeAsset, amount, mint, policyId: g.policyId };
  const [attestations, tables, approval] = await Promise.all([
    attestationsFor(rpc, builder, p, nowUnix()),
    lookupTables(rpc, feePayer),
    approvalUseOf(rpc, builder.ids, p),
  ]);
  const gate: SessionGate = { payerAsset, payeeAsset, policyId: g.policyId, attestations, ...(approval ? { approval } : {}) };
  return { builder, tables, gate };
}

/** A channel's open as both schemes build it, their terms already checked. */
export interface ChannelOpenTerms {
  /** Builds the gate's `gate_channel_open`; needed only when `gate` is set. */
  builder?: Builder;
  /** The payer's wallet, which signs the open. */
  payer: TransactionSigner;
  /** The offer's `extra.feePayer`: the transaction's fee payer, the channel's rent payer and zero-share payee. */
  feePayer: Address;
  /** The channel's voucher key. */
  voucherKey: Address;
  mint: Address;
  tokenProgram: TokenProgramId;
  /** 100 % of the distribution. */
  payTo: Address;
  deposit: bigint;
  salt: bigint;
  openSlot: bigint;
  /** The channel's grace period, seconds. */
  withdrawDelay: number;
  gate?: SessionGate;
  /** The facilitator's lookup tables, used only when gated. */
  tables?: readonly LookupTable[];
  lifetime: Lifetime;
  /** The Memos after the open, in order; an empty one is left out. */
  memos: readonly (string | undefined)[];
}

const memoInstruction = (text: string): Instruction => ({
  programAddress: MEMO_PROGRAM,
  accounts: [],
  data: new TextEncoder().encode(text),
});

/**
 * The open transaction and the channel's address: a compute-unit limit, the gate's
 * `gate_channel_open` when gated (ending with the deposit's approval and its rent payer when
 * `gate.approval` is set), the program's `open` (the fee payer as rent payer and payee,
 * 100 % to `payTo`), the Memos; a v0 transaction paid by the fee payer (loading from the
 * facilitator's tables only when gated), signed by the payer alone.
 */
export async function openChannel(t: ChannelOpenTerms): Promise<{ transaction: Transaction; channel: Address }> {
  if (t.gate && !t.builder) throw new TrustGateInputError('builder', 'a gated open needs the builder of the gate');
  const open: OpenChannel = {
    payer: t.payer,
    rentPayer: t.feePayer,
    payee: t.feePayer,
    mint: t.mint,
    tokenProgram: t.tokenProgram,
    authorizedSigner: t.voucherKey,
    salt: t.salt,
    deposit: t.deposit,
    gracePeriod: t.withdrawDelay,
    openSlot: t.openSlot,
    splits: [{ recipient: t.payTo, bps: CHANNEL_ALL_BPS }],
  };
  const channel = await channelOf(open);
  const ixs = computeBudgetInstructions({ unitLimit: OPEN_UNIT_LIMIT });
  if (t.gate) {
    const g = t.gate;
    let gate = await t.builder!.gateChannelOpen(t.payer, g.payerAsset, g.payeeAsset, t.feePayer, t.mint, t.deposit, g.policyId, channel, g.attestations);
    if (g.approval) {
      // The approval of the deposit's terms, and its rent payer, after the gate's accounts.
      await checkApproval(t.builder!, g.approval, { payerAsset: g.payerAsset, payeeAsset: g.payeeAsset, mint: t.mint, amount: t.deposit, policyId: g.policyId });
      gate = appendApproval(gate, g.approval);
    }
    ixs.push(gate);
  }
  ixs.push(await openInstruction(open));
  for (const memo of t.memos) if (memo) ixs.push(memoInstruction(memo));
  const tx = await transaction(t.feePayer, ixs, t.gate ? (t.tables ?? []) : [], t.lifetime);
  return { transaction: tx, channel };
}
