// gatePayment: the decision a real gate would make, by simulating `gate::gate_payment` with
// every account the strict gate would see. Nothing is written and no fee is paid.

import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Base64EncodedWireTransaction,
  type Instruction,
} from '@solana/kit';
import {
  accounts,
  acceptanceRule,
  agent,
  decodePolicy,
  findAttestation,
  policyPayeeList,
  policyRule,
  SYSTEM_PROGRAM,
  type Rule,
  type TrustGateRpc,
} from './chain.js';
import { decisionFromWire, type Decision } from './decision.js';
import { TransactionFailedError } from './errors.js';
import type { ProgramIds } from './ids.js';
import { Builder, type Attestations, type PaymentArgs } from './instructions.js';
import { idsOf, rpcOf, type Connection } from './rpc.js';
import { addressOf, canSign, type SignerLike } from './signer.js';

/** Unix seconds of the local clock (what expiries are compared with off chain). */
export function nowUnix(): bigint {
  return BigInt(Math.floor(Date.now() / 1000));
}

async function requiredAttestation(
  rpc: TrustGateRpc,
  ids: ProgramIds,
  subject: Address,
  rule: Rule | null,
  now: bigint,
): Promise<Address | undefined> {
  if (!rule || rule.capability.every((b) => b === 0)) return undefined;
  return (await findAttestation(rpc, ids, subject, rule.capability, rule.attestors, now)) ?? undefined;
}

/**
 * The optional accounts a real gate would see for `p`: the payee's attestation, when the
 * payer's policy requires a capability; the payer's, when the payee's acceptance policy does;
 * the payee list account the payer's policy names.
 */
export async function attestationsFor(rpc: TrustGateRpc, b: Builder, p: PaymentArgs, now = nowUnix()): Promise<Attestations> {
  const keys = [await b.pda.policy(p.payerAsset, p.policyId), await b.pda.acceptance(p.payeeAsset)];
  const [policy, acceptance] = await accounts(rpc, keys);
  const ours = (a: typeof policy) => (a && a.owner === b.ids.policyVault ? a : null);
  const payerPolicy = ours(policy);
  const payeeAcceptance = ours(acceptance);
  const decoded = payerPolicy && decodePolicy(payerPolicy.data);
  const payeeList = decoded ? policyPayeeList(decoded) : null;
  return {
    payee: await requiredAttestation(rpc, b.ids, p.payeeAsset, payerPolicy && policyRule(payerPolicy.data), now),
    payer: await requiredAttestation(rpc, b.ids, p.payerAsset, payeeAcceptance && acceptanceRule(payeeAcceptance.data), now),
    ...(payeeList ? { payeeList } : {}),
  };
}

/**
 * `gate_payment` of `p` with `att`, passing the address of the payment's approval
 * (`Pdas.approval` of its terms) as a trailing read-only account, so that the decision of an
 * approved payment above the payer policy's approval threshold is the one its settlement
 * gets (the gate skips the address while no approval is there). The Rust SDK's
 * `simulate::decision_instruction`.
 */
export async function decisionInstruction(b: Builder, p: PaymentArgs, att: Attestations = {}): Promise<Instruction> {
  const [ix, approval] = await Promise.all([b.gatePayment(p, att), b.pda.approval(p)]);
  return { ...ix, accounts: [...(ix.accounts ?? []), { address: approval, role: AccountRole.READONLY }] };
}

/** The minimum balance a simulation's fee payer needs (one signature's fee). */
const FEE_PAYER_MIN_LAMPORTS = 5000n;

/**
 * A fee payer for a signature-less simulation: the caller when it can pay the fee, else the
 * payer or payee agent's owner (registered agents' owners paid rent). Nobody is charged.
 */
async function simulationFeePayer(rpc: TrustGateRpc, ids: ProgramIds, caller: Address, p: PaymentArgs): Promise<Address> {
  const canPay = (a: Awaited<ReturnType<typeof accounts>>[number]) =>
    !!a && a.owner === SYSTEM_PROGRAM && a.lamports >= FEE_PAYER_MIN_LAMPORTS;
  if (canPay((await accounts(rpc, [caller]))[0])) return caller;
  const candidates: Address[] = [];
  for (const asset of [p.payerAsset, p.payeeAsset]) {
    try {
      candidates.push((await agent(rpc, ids, asset)).owner);
    } catch {
      // Not a registered agent: no candidate.
    }
  }
  const accs = await accounts(rpc, candidates);
  return candidates.find((_, i) => canPay(accs[i])) ?? caller;
}

/** What `gatePayment` needs: the payment, who asks, and where the chain is. */
export interface GatePaymentRequest extends Connection {
  /** Who asks: a signer (the simulation is then signed) or only a public key. */
  caller: SignerLike;
  payerAgentAsset: Address;
  payeeAgentAsset: Address;
  /** Base units of the mint. */
  amount: bigint;
  mint: Address;
  policyId: number;
}

// A placeholder lifetime for unsigned simulations: the RPC replaces it with its latest blockhash.
const ANY_BLOCKHASH = { blockhash: '11111111111111111111111111111111' as Blockhash, lastValidBlockHeight: 0n };

/**
 * The gate's decision for a payment. A simulation that yields no decision (a missing policy,
 * say) throws a `TransactionFailedError` with the program logs.
 */
export async function gatePayment(req: GatePaymentRequest): Promise<Decision> {
  if (typeof req.amount !== 'bigint') throw new TypeError('amount: a bigint of base units expected');
  const rpc = rpcOf(req);
  const b = new Builder(idsOf(req));
  const p: PaymentArgs = {
    payerAsset: req.payerAgentAsset,
    payeeAsset: req.payeeAgentAsset,
    amount: req.amount,
    mint: req.mint,
    policyId: req.policyId,
  };
  const ix = await decisionInstruction(b, p, await attestationsFor(rpc, b, p));
  const signed = canSign(req.caller);
  const feePayer = signed ? addressOf(req.caller) : await simulationFeePayer(rpc, b.ids, addressOf(req.caller), p);
  const lifetime = signed ? (await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send()).value : ANY_BLOCKHASH;
  const message = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions([ix], m),
  );
  let wire: Base64EncodedWireTransaction;
  if (signed) {
    const withSigner = setTransactionMessageFeePayerSigner(req.caller as Exclude<SignerLike, string>, message);
    wire = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(withSigner));
  } else {
    wire = getBase64EncodedWireTransaction(compileTransaction(message));
  }
  const sim = (
    await rpc
      .simulateTransaction(
        wire,
        // An unsigned transaction gets the cluster's latest blockhash.
        signed
          ? { encoding: 'base64', sigVerify: true, commitment: 'confirmed' }
          : { encoding: 'base64', replaceRecentBlockhash: true, commitment: 'confirmed' },
      )
      .send()
  ).value;
  const rd = sim.returnData;
  const data = rd ? Uint8Array.from(Buffer.from(rd.data[0], 'base64')) : new Uint8Array();
  if (!rd || data.length === 0) throw new TransactionFailedError('gate_payment simulation', sim.err, sim.logs ?? []);
  if (rd.programId !== b.ids.gate) {
    throw new Error(`decision return data: set by ${rd.programId}, expected the gate ${b.ids.gate}`);
  }
  const d = decisionFromWire(data);
  if (!d) throw new Error(`decision return data: ${data.length} bytes that are not a decision`);
  return d;
}
