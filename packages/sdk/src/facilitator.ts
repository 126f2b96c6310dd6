// The facilitator's mountable part in TypeScript: the answers of POST /verify and
// GET /receipt/:paymentIdHashHex, with the Rust facilitator's statuses, headers and bodies,
// independent of any web framework (`express.ts` mounts them).

import { createHash } from 'node:crypto';
import { address, getAddressDecoder, type Address } from '@solana/kit';
import { accounts, decodePolicy, type TrustGateRpc } from './chain.js';
import { toHex, type Decision } from './decision.js';
import { TransactionFailedError } from './errors.js';
import { getFeedbackLogDecoder } from './generated/gate/accounts/index.js';
import { holdbackViewFromLogData } from './holdback.js';
import { POLICY_VAULT_ERROR__POLICY_MINT_MISMATCH, POLICY_VAULT_ERROR__POLICY_RETIRED } from './generated/policy_vault/errors/index.js';

/** Anchor's AccountNotInitialized: a required account does not exist. */
const ACCOUNT_NOT_INITIALIZED = 3012;
import {
  DECISION_HEADERS,
  X_CAPABILITY_REQUIRED,
  X_CAPABILITY_SUBJECT,
  X_GATE_APPROVAL_ID,
  X_GATE_DECISION,
  X_PAYMENT_NETWORK,
  X_PAYMENT_REASON_CODE,
  X_PAYMENT_REASON_NAME,
  X_PAYMENT_REQUIRED,
} from './headers.js';
import type { ProgramIds } from './ids.js';
import { Builder } from './instructions.js';
import { assertAtomicityEnforced } from './errors.js';
import { idsOf, rpcOf, type Connection } from './rpc.js';
import { addressOf, type SignerLike } from './signer.js';
import { gatePayment } from './simulate.js';

/** An HTTP answer: status, headers, JSON body. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({ status, headers, body });

/** The facilitator's error envelope: `{error, message, hint?}`. */
export function apiError(status: number, code: string, message: string, hint?: string): Answer {
  return json(status, hint ? { error: code, message, hint } : { error: code, message });
}

const input = (field: string, reason: string) => apiError(400, 'input_invalid', `${field}: ${reason}`);

/** 502: the Solana JSON-RPC backend failed. */
function rpcFailure(e: unknown): Answer {
  return apiError(502, 'rpc_failure', `the Solana RPC backend failed: ${(e as Error).message}`, 'check that RPC_URL points at a running cluster or localnet');
}

/** What the mount needs: where the chain is, whose records it reads, and the network name. */
export interface FacilitatorContext {
  rpc: TrustGateRpc;
  ids: ProgramIds;
  /** The facilitator's address: the decisions' caller and the owner of the receipts it reads. */
  facilitator: Address;
  /** The network name the decision headers carry (`solana-localnet`, `solana-devnet`, ...). */
  network: string;
  /** The policy id a verify context without one gets. */
  defaultPolicyId?: number;
  /**
   * The trust-gate facilitator that verifies x402 payment requests (it authenticates the
   * challenge and checks the transaction against its own keys and lookup tables): x402 bodies
   * are forwarded to its POST /verify and its answer returned as it is.
   */
  facilitatorUrl?: string;
}

/**
 * The decision headers (X-Gate-Decision and the reason or capability, X-Payment-Network); for
 * RequireApproval, `approvalId` (the pending approval's id: the address of the payment's
 * approval, `Pdas.approval` of its terms) as X-Gate-Approval-Id.
 */
export function decisionHeaders(d: Decision, network: string, approvalId?: string): Record<string, string> {
  const h: Record<string, string> = {};
  if (d.kind === 'Allow') h[X_GATE_DECISION] = 'Allow';
  if (d.kind === 'Deny') {
    h[X_GATE_DECISION] = 'Deny';
    h[X_PAYMENT_REQUIRED] = 'denied';
    h[X_PAYMENT_REASON_CODE] = String(d.reasonCode);
    h[X_PAYMENT_REASON_NAME] = d.reasonName;
  }
  if (d.kind === 'RequireValidation') {
    h[X_GATE_DECISION] = 'RequireValidation';
    h[X_PAYMENT_REQUIRED] = 'validation';
    h[X_CAPABILITY_REQUIRED] = d.capabilityHash;
    h[X_CAPABILITY_SUBJECT] = d.subject;
  }
  if (d.kind === 'RequireApproval') {
    h[X_GATE_DECISION] = 'RequireApproval';
    h[X_PAYMENT_REQUIRED] = 'approval';
    if (approvalId) h[X_GATE_APPROVAL_ID] = approvalId;
  }
  h[X_PAYMENT_NETWORK] = network;
  return h;
}

/**
 * A payment held for an approval, as the facilitator's bodies carry it (`approval`): the
 * pending approval's id, and the record the facilitator keeps (null when it keeps none, as
 * for a verify context, which nobody signed).
 */
export interface HeldApproval {
  id: string;
  pending: unknown;
}

/**
 * A /verify answer for a decision: 200 Allow, 402 otherwise, with the decision headers; a
 * RequireApproval with `approval` carries its id (X-Gate-Approval-Id) and `approval` in the body.
 */
export function decisionAnswer(d: Decision, network: string, payer?: string, approval?: HeldApproval): Answer {
  const body: Record<string, unknown> = { isValid: d.kind === 'Allow', decision: d };
  if (d.kind === 'Deny') body.invalidReason = d.reasonName;
  if (d.kind === 'RequireValidation') body.invalidReason = 'RequireValidation';
  if (d.kind === 'RequireApproval') body.invalidReason = 'RequireApproval';
  if (payer) body.payer = payer;
  const held = d.kind === 'RequireApproval' ? approval : undefined;
  if (held) body.approval = held;
  return json(d.kind === 'Allow' ? 200 : 402, body, decisionHeaders(d, network, held?.id));
}

const CONTEXT_FIELDS = ['payerAgentAsset', 'payeeAgentAsset', 'amount', 'mint', 'policyId'];

/** A verify context, or the error answer naming the field (the Rust facilitator's messages). */
export function parseVerifyContext(
  map: Record<string, unknown>,
  defaultPolicyId?: number,
): { payer: Address; payee: Address; amount: bigint; mint: Address; policyId: number } | Answer {
  const unknown = Object.keys(map).find((k) => !CONTEXT_FIELDS.includes(k));
  if (unknown !== undefined) return input(unknown, `unknown field; a verify context has ${CONTEXT_FIELDS.join(', ')}`);
  let policyId: number;
  if ('policyId' in map) {
    const v = map.policyId;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      return input('policyId', `${JSON.stringify(v)} is not an integer 0..=4294967295`);
    }
    policyId = v;
  } else if (defaultPolicyId !== undefined) {
    policyId = defaultPolicyId;
  } else {
    return input('policyId', 'missing, and this facilitator has no default policy id');
  }
  const str = (field: string): string | Answer => {
    if (!(field in map)) return input(field, 'missing');
    const v = map[field];
    return typeof v === 'string' ? v : input(field, `must be a string, got ${JSON.stringify(v)}`);
  };
  const key = (field: string): Address | Answer => {
    const s = str(field);
    if (typeof s !== 'string') return s;
    try {
      return address(s);
    } catch {
      return input(field, `${JSON.stringify(s)} is not a base58 public key`);
    }
  };
  const payer = key('payerAgentAsset');
  if (typeof payer !== 'string') return payer;
  const payee = key('payeeAgentAsset');
  if (typeof payee !== 'string') return payee;
  const amountText = str('amount');
  if (typeof amountText !== 'string') return amountText;
  if (!/^\d+$/.test(amountText)) return input('amount', `${JSON.stringify(amountText)} is not decimal digits`);
  if (BigInt(amountText) > 0xffffffffffffffffn) return input('amount', `${JSON.stringify(amountText)} does not fit in u64`);
  const mint = key('mint');
  if (typeof mint !== 'string') return mint;
  return { payer, payee, amount: BigInt(amountText), mint, policyId };
}

/**
 * The custom error code of a failed simulation and the program that returned it (the first
 * "Program <id> failed: custom program error" log line is the innermost failing program).
 */
function customError(e: TransactionFailedError): { code: number; program?: string } | undefined {
  const ie = (e.err as { InstructionError?: [unknown, unknown] } | null)?.InstructionError;
  const custom = (ie?.[1] as { Custom?: number | bigint } | undefined)?.Custom;
  if (custom === undefined) return undefined;
  const failed = e.logs.map((l) => /^Program (\w+) failed: custom program error/.exec(l)).find((m) => m);
  return { code: Number(custom), program: failed?.[1] };
}

/** The decision for a verify context, or the facilitator's error answer when there is none. */
export async function decide(
  c: FacilitatorContext,
  q: { payer: Address; payee: Address; amount: bigint; mint: Address; policyId: number },
): Promise<Decision | Answer> {
  try {
    return await gatePayment({
      rpc: c.rpc,
      programIds: c.ids,
      caller: c.facilitator,
      payerAgentAsset: q.payer,
      payeeAgentAsset: q.payee,
      amount: q.amount,
      mint: q.mint,
      policyId: q.policyId,
    });
  } catch (e) {
    if (!(e instanceof TransactionFailedError)) return rpcFailure(e);
    const named = customError(e);
    if (named?.code === ACCOUNT_NOT_INITIALIZED) return missingAccount(c, q, { code: named.code, name: 'AccountNotInitialized' });
    const fromVault = named?.program === c.ids.policyVault;
    if (fromVault && named?.code === POLICY_VAULT_ERROR__POLICY_MINT_MISMATCH) return mintMismatch(c, q);
    if (fromVault && named?.code === POLICY_VAULT_ERROR__POLICY_RETIRED) {
      return apiError(
        422,
        'policy_retired',
        `policy ${q.policyId} of payer agent ${q.payer} is retired (PolicyRetired): no payment may use it`,
        'pay under another policy of the payer',
      );
    }
    return apiError(422, 'simulation_failed', e.message);
  }
}

async function missingAccount(
  c: FacilitatorContext,
  q: { payer: Address; policyId: number },
  named: { name: string; code: number },
): Promise<Answer> {
  const b = new Builder(c.ids);
  const candidates: [Address, string, string][] = [
    [await b.pda.policy(q.payer, q.policyId), `policy ${q.policyId} of payer agent ${q.payer}`, 'create it with policy_vault::init_policy (the payer\'s policy authority signs)'],
    [await b.pda.killswitch(q.payer), `kill switch of payer agent ${q.payer}`, 'create it with gate::init_killswitch or policy_vault::init_killswitch'],
    [await b.pda.velocity(q.payer, q.policyId), `velocity ledger of policy ${q.policyId} of payer agent ${q.payer}`, 'it is created with the policy by policy_vault::init_policy'],
  ];
  const accs = await accounts(c.rpc, candidates.map((x) => x[0]));
  const i = accs.findIndex((a) => !a);
  if (i >= 0) {
    const [key, what, hint] = candidates[i];
    return apiError(404, 'not_found', `no ${what}: account ${key} does not exist (Anchor ${named.code} ${named.name})`, hint);
  }
  return apiError(404, 'not_found', `an account the gate needs does not exist (Anchor ${named.code} ${named.name})`);
}

async function mintMismatch(c: FacilitatorContext, q: { payer: Address; mint: Address; policyId: number }): Promise<Answer> {
  const key = await new Builder(c.ids).pda.policy(q.payer, q.policyId);
  let policyMint = 'another mint';
  try {
    const [acc] = await accounts(c.rpc, [key]);
    const policy = acc && decodePolicy(acc.data);
    if (policy) policyMint = policy.params.mint;
  } catch {
    // Keep "another mint".
  }
  return apiError(
    422,
    'policy_mismatch',
    `mint ${q.mint} is not the mint of policy ${q.policyId} (${policyMint}); PolicyMintMismatch`,
    'pay in the policy\'s mint, or use a policy for this mint',
  );
}

/** POST /verify with a verify context body (already read as bytes or parsed JSON). */
export async function verifyAnswer(c: FacilitatorContext, body: Uint8Array | unknown): Promise<Answer> {
  let v: unknown = body;
  if (body instanceof Uint8Array) {
    try {
      v = JSON.parse(Buffer.from(body).toString('utf8'));
    } catch (e) {
      return input('body', `not JSON: ${(e as Error).message}`);
    }
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return input('body', 'must be a JSON object');
  const map = v as Record<string, unknown>;
  if ('paymentPayload' in map || 'x402Version' in map) {
    if (!c.facilitatorUrl) {
      return apiError(
        400,
        'input_invalid',
        'paymentPayload: x402 payment requests are verified by the trust-gate facilitator, and this mount has no facilitatorUrl',
        'set facilitatorUrl in the mount config, or post a verify context: payerAgentAsset, payeeAgentAsset, amount, mint, policyId',
      );
    }
    return forward(c.facilitatorUrl, map);
  }
  const q = parseVerifyContext(map, c.defaultPolicyId);
  if ('status' in q) return q;
  const d = await decide(c, q);
  if ('status' in d) return d;
  // Nobody signed a context: the approval's id is told, nothing is kept (as the facilitator).
  const approval =
    d.kind === 'RequireApproval'
      ? { id: await new Builder(c.ids).pda.approval({ payerAsset: q.payer, payeeAsset: q.payee, mint: q.mint, amount: q.amount, policyId: q.policyId }), pending: null }
      : undefined;
  return decisionAnswer(d, c.network, undefined, approval);
}

/** The facilitator's answer to an x402 /verify request, passed through. */
async function forward(facilitatorUrl: string, body: unknown): Promise<Answer> {
  return passThrough(facilitatorUrl, '/verify', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The facilitator's answer at `path` (its status, decision headers and body), passed through. */
async function passThrough(facilitatorUrl: string, path: string, init?: RequestInit): Promise<Answer> {
  const url = `${facilitatorUrl.replace(/\/+$/, '')}${path}`;
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (e) {
    return apiError(502, 'facilitator_unavailable', `${url}: ${(e as Error).message}`);
  }
  const headers: Record<string, string> = {};
  for (const h of DECISION_HEADERS) {
    const v = res.headers.get(h);
    if (v !== null) headers[h] = v;
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: passed on as text.
  }
  return json(res.status, parsed, headers);
}

/** A payment's dispute as its receipt shows it (the Rust SDK's `receipts::Disputed`). */
export interface ReceiptDispute {
  /** The dispute feedback's score: always 0 (tag `dispute`). */
  score: number;
  /** The payer's wallet that signed the dispute. */
  disputedBy: Address;
  /** The dispute's reason hash, hex (`trust-gate dispute --reason TEXT`: the text's sha256). */
  reasonHash: string;
  /** Unix seconds: when the dispute landed. */
  createdAt: number;
}

/** The gate's DisputeRecord discriminator (the IDL does not list the account). */
const DISPUTE_RECORD_DISCRIMINATOR = createHash('sha256').update('account:DisputeRecord').digest().subarray(0, 8);

/**
 * A DisputeRecord's data as the receipt shows it (`programs/gate/src/state/dispute.rs`:
 * reason_hash 72..104, disputed_by 104..136, created_at 168..176); null for anything else.
 */
export function receiptDispute(data: Uint8Array): ReceiptDispute | null {
  if (data.length < 176 || !DISPUTE_RECORD_DISCRIMINATOR.every((x, i) => data[i] === x)) return null;
  const b = Buffer.from(data);
  return {
    score: 0,
    disputedBy: getAddressDecoder().decode(b.subarray(104, 136)),
    reasonHash: toHex(b.subarray(72, 104)),
    createdAt: Number(b.readBigInt64LE(168)),
  };
}

/**
 * GET /receipt/:paymentIdHashHex: the payment's live records (its FeedbackLog and, when
 * disputed, its DisputeRecord: `score` is the settlement's feedback, `dispute` the dispute's). The mount keeps no records of its own, so `transaction` and `payer`
 * are null while the log exists; once it is gone (closed, or never written) the facilitator
 * at `facilitatorUrl`, which keeps records and reads the chain's history, answers, passed
 * through; without one, `exists: false`.
 */
export async function receiptAnswer(c: FacilitatorContext, hashHex: string): Promise<Answer> {
  const field = 'paymentIdHashHex';
  if (hashHex.length !== 64) return input(field, `must be 64 hex characters, got ${hashHex.length}`);
  if (!/^[0-9a-fA-F]{64}$/.test(hashHex)) return input(field, 'is not hex');
  const hash = Uint8Array.from(Buffer.from(hashHex, 'hex'));
  const b = new Builder(c.ids);
  const logKey = await b.pda.feedbackLog(c.facilitator, hash);
  const disputeKey = await b.pda.dispute(c.facilitator, hash);
  const [logAcc, dispute] = await accounts(c.rpc, [logKey, disputeKey]);
  if (!logAcc || logAcc.owner !== c.ids.gate) {
    if (c.facilitatorUrl) return passThrough(c.facilitatorUrl, `/receipt/${toHex(hash)}`);
    return json(200, { paymentIdHash: toHex(hash), exists: false });
  }
  const log = getFeedbackLogDecoder().decode(logAcc.data);
  const record = dispute !== null && dispute.owner === c.ids.gate ? dispute : null;
  return json(200, {
    paymentIdHash: toHex(hash),
    exists: true,
    closed: false,
    facilitator: log.facilitator,
    score: log.score,
    value: log.amount.toString(),
    valueDecimals: log.valueDecimals,
    mint: log.mint,
    payee: log.payeeAsset,
    payer: null,
    payerWallet: log.payerWallet,
    emittedAtSlot: Number(log.slot),
    createdAt: Number(log.createdAt),
    deadline: Number(log.deadline),
    transaction: null,
    dispute: record ? receiptDispute(record.data) : null,
    holdback: holdbackViewFromLogData(logAcc.data),
    settledAtomically: true,
    disputed: record !== null,
    payerVault: null,
    feedbackLog: logKey,
  });
}

/** What a facilitator (the mountable part) is made of. */
export interface FacilitatorConfig extends Connection {
  /** The facilitator whose decisions and receipts these are (a signer or its address). */
  facilitator: SignerLike;
  /** The network name of the decision headers (default: `network`, else `solana-devnet`). */
  networkName?: string;
  defaultPolicyId?: number;
  /** The trust-gate facilitator x402 payment requests are forwarded to. */
  facilitatorUrl?: string;
  /** Must be the boolean `true` (AtomicityNotEnforcedError otherwise). */
  atomicityEnforced: true;
}

/** The facilitator's mountable part: POST /verify and GET /receipt answers, framework-free. */
export interface Facilitator {
  readonly context: FacilitatorContext;
  verify(body: Uint8Array | unknown): Promise<Answer>;
  receipt(paymentIdHashHex: string): Promise<Answer>;
}

/** A facilitator from its configuration (the atomicity guard runs first). */
export function createFacilitator(config: FacilitatorConfig): Facilitator {
  assertAtomicityEnforced(config.atomicityEnforced);
  const context: FacilitatorContext = {
    rpc: rpcOf(config),
    ids: idsOf(config),
    facilitator: addressOf(config.facilitator),
    network: config.networkName ?? config.network ?? 'solana-devnet',
    defaultPolicyId: config.defaultPolicyId,
    facilitatorUrl: config.facilitatorUrl,
  };
  // A read that fails is the RPC backend's failure: 502, as the facilitator answers it.
  const guard = async (f: () => Promise<Answer>): Promise<Answer> => {
    try {
      return await f();
    } catch (e) {
      return rpcFailure(e);
    }
  };
  return {
    context,
    verify: (body) => guard(() => verifyAnswer(context, body)),
    receipt: (hash) => guard(() => receiptAnswer(context, hash)),
  };
}
