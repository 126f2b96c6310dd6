// Composing the settlement that pays one trust-gate offer: what the Rust pay client's
// `prepare` does, read from the same accounts.

import { address, type Address, type TransactionSigner } from '@solana/kit';
import {
  approvalUse,
  baseCollection,
  fundingOf,
  lookupTables,
  mint as readMint,
  ratedByEngine,
  readPolicy,
  type LookupTable,
  type TrustGateRpc,
} from '../chain.js';
import { AccountNotFoundError, TrustGateInputError } from '../errors.js';
import { GATE_EXTENSION, SCHEME_TRUST_GATE } from '../headers.js';
import { programIds, type Network, type ProgramIds } from '../ids.js';
import { Builder, type ComputeBudget } from '../instructions.js';
import { associatedTokenAccount, compose, settlementApprovalTerms, type Settlement } from '../settle.js';
import { attestationsFor, nowUnix } from '../simulate.js';
import { limitForUse, MAX_UNIT_LIMIT, measureUnits, settlementUnitLimit } from '../units.js';
import type { HoldbackQuote } from '../holdback.js';
import { challengeDeadline, gateExtensionOf, holdbackQuoteOf, paymentIdHash, type PaymentRequirements } from './wire.js';

export const CAIP2_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
export const CAIP2_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

/** The network a CAIP-2 id names (anything but devnet and mainnet is a localnet). */
export function networkOfCaip2(caip2: string): Network {
  return caip2 === CAIP2_MAINNET ? 'solana-mainnet' : caip2 === CAIP2_DEVNET ? 'solana-devnet' : 'solana-localnet';
}

/** Whether `r` is a trust-gate offer this SDK can pay. */
export function isTrustGateOffer(r: PaymentRequirements): boolean {
  return r.scheme === SCHEME_TRUST_GATE && r.extra?.[GATE_EXTENSION] !== undefined;
}

const key = (field: string, s: unknown): Address => {
  try {
    return address(String(s));
  } catch {
    throw new TrustGateInputError(field, `${JSON.stringify(s)} is not a public key`);
  }
};

/** Everything needed to pay one offer. */
export interface Prepared {
  builder: Builder;
  feePayer: Address;
  tables: LookupTable[];
  settlement: Settlement;
}

/**
 * The settlement paying `r` (a trust-gate offer) signed by `signer` (the payer agent's
 * owner or agent wallet), with `resourceUrl` as the feedback's endpoint.
 */
export async function prepare(
  rpc: TrustGateRpc,
  r: PaymentRequirements,
  resourceUrl: string,
  signer: TransactionSigner,
  overrides: Partial<ProgramIds> = {},
  computeBudget: ComputeBudget = {},
): Promise<Prepared> {
  if (!isTrustGateOffer(r)) throw new TrustGateInputError('scheme', `not a ${SCHEME_TRUST_GATE} offer with extra.gate`);
  const gate = gateExtensionOf(r);
  const feePayer = key('extra.feePayer', r.extra?.feePayer ?? '');
  const memo = r.extra?.memo;
  if (typeof memo !== 'string' || !memo) throw new TrustGateInputError('extra.memo', 'missing');
  const mintKey = key('asset', r.asset);
  const payTo = key('payTo', r.payTo);
  if (!/^\d+$/.test(r.amount) || BigInt(r.amount) > 0xffffffffffffffffn) {
    throw new TrustGateInputError('amount', `${JSON.stringify(r.amount)} is not a u64`);
  }
  const amount = BigInt(r.amount);
  const payerAsset = key('extra.gate.payerAgentAsset', gate.payerAgentAsset);
  const payeeAsset = key('extra.gate.payeeAgentAsset', gate.payeeAgentAsset);
  const builder = new Builder({ ...programIds(networkOfCaip2(r.network)), ...overrides });
  const m = await readMint(rpc, 'asset', mintKey);
  if (!m) throw new TrustGateInputError('asset', `${mintKey} does not exist on this cluster`);
  const p = { payerAsset, payeeAsset, amount, mint: mintKey, policyId: gate.policyId };
  const [attestations, policy, collection, tables, sourceToken, destinationToken] = await Promise.all([
    attestationsFor(rpc, builder, p, nowUnix()),
    readPolicy(rpc, builder.ids, payerAsset, gate.policyId),
    baseCollection(rpc, builder.ids),
    lookupTables(rpc, feePayer),
    associatedTokenAccount(signer.address, mintKey, m.tokenProgram),
    associatedTokenAccount(payTo, mintKey, m.tokenProgram),
  ]);
  // The payer's policy, read once: its funding, and whether this amount needs an approval.
  if (!policy) throw new AccountNotFoundError('PolicyAccount', await builder.pda.policy(payerAsset, gate.policyId));
  // A vault-funded policy pays from the agent's vault through the signer's token account.
  const funding = fundingOf(policy);
  // Above the policy's approval threshold, the approval its members made on chain.
  const approval = await approvalUse(rpc, builder.ids, policy, settlementApprovalTerms(p));
  // The challenge's holdback terms: the strict gate holds the settlement to the terms of the
  // payee's tier now, so a challenge cannot hold back more than the payer's policy says; the
  // share may only go to the payee's escrow.
  let holdback: HoldbackQuote | undefined;
  if (gate.holdback) {
    const q = holdbackQuoteOf(gate.holdback, 'extra.gate.holdback');
    const escrow = await builder.pda.holdbackEscrow(payeeAsset, mintKey);
    if (q.escrow !== escrow) {
      throw new TrustGateInputError('extra.gate.holdback.escrow', `${q.escrow} is not the payee's escrow ${escrow}`);
    }
    if (q.held >= amount) {
      throw new TrustGateInputError('extra.gate.holdback.held', `${q.held} is not below the amount ${amount}`);
    }
    holdback = q;
  }
  const settlement: Settlement = {
    facilitator: feePayer,
    payerSigner: signer,
    ...p,
    // The challenge's expiry: the facilitator co-signs no other deadline.
    deadline: challengeDeadline(r),
    decimals: m.decimals,
    tokenProgram: m.tokenProgram,
    sourceToken,
    destinationToken,
    collection,
    attestations,
    feedback: {
      paymentIdHash: paymentIdHash(memo),
      score: 100,
      tag1: 'x402',
      tag2: '',
      // The Rust client keeps the first 250 characters (Unicode scalar values).
      endpoint: Array.from(resourceUrl).slice(0, 250).join(''),
      feedbackUri: '',
    },
    computeBudget: { ...computeBudget },
    funding,
    ...(approval ? { approval } : {}),
    ...(holdback ? { holdback } : {}),
  };
  // A unit limit just above what the settlement uses, not the 600 000 the scheduler
  // reserves for three instructions without one, unless the caller set one: measured by
  // simulating the settlement (units.ts), else, when the simulation fails (the facilitator
  // will then name why), from the measured shape; none for a mint with a transfer hook, whose
  // program's cost the SDK cannot know.
  if (settlement.computeBudget!.unitLimit === undefined && m.transferHook === null) {
    settlement.computeBudget!.unitLimit = MAX_UNIT_LIMIT;
    let limit: number;
    try {
      const ixs = await compose(builder, settlement, true);
      limit = limitForUse(await measureUnits(rpc, feePayer, ixs, tables));
    } catch {
      const payeeRated = await ratedByEngine(rpc, builder.ids, payeeAsset);
      limit = await settlementUnitLimit(
        {
          funding,
          tokenProgram: m.tokenProgram,
          payeeRated,
          held: (settlement.holdback?.held ?? 0n) !== 0n,
          payerAsset,
          payeeAsset,
          facilitator: feePayer,
          paymentIdHash: settlement.feedback.paymentIdHash,
        },
        builder.ids,
      );
    }
    settlement.computeBudget!.unitLimit = limit;
  }
  // Fail here, not at the facilitator, when the inputs cannot make a settlement.
  await compose(builder, settlement, true);
  return { builder, feePayer, tables, settlement };
}
