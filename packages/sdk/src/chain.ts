// Reading the chain over JSON-RPC: accounts, the registry's base collection and agent
// accounts, mints, the facilitator's lookup tables, and attestation lookup: what the Rust
// SDK's `chain` module reads, the same way.

import { createHash } from 'node:crypto';
import {
  address,
  isSome,
  getAddressDecoder,
  getBase58Decoder,
  type Address,
  type Base64EncodedBytes,
  type Rpc,
  type SolanaRpcApi,
} from '@solana/kit';
import {
  getPaymentApprovalDecoder,
  getPaymentApprovalSize,
  getPolicyAccountDecoder,
  PAYMENT_APPROVAL_DISCRIMINATOR,
  POLICY_ACCOUNT_DISCRIMINATOR,
  type PaymentApproval,
  type PolicyAccount,
} from './generated/policy_vault/accounts/index.js';
import type { PolicyRules } from './generated/policy_vault/types/index.js';
import {
  getValidationAttestationDecoder,
  getValidationAttestationSize,
  VALIDATION_ATTESTATION_DISCRIMINATOR,
  type ValidationAttestation,
} from './generated/validation_registry/accounts/index.js';
import { AccountNotFoundError, TrustGateInputError } from './errors.js';
import type { ProgramIds } from './ids.js';
import { Pdas, type ApprovalTerms } from './pda.js';

export type TrustGateRpc = Rpc<SolanaRpcApi>;

export const SYSTEM_PROGRAM = address('11111111111111111111111111111111');
export const INSTRUCTIONS_SYSVAR = address('Sysvar1nstructions1111111111111111111111111');
export const TOKEN_PROGRAM = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const TOKEN_2022_PROGRAM = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
export const LOOKUP_TABLE_PROGRAM = address('AddressLookupTab1e1111111111111111111111111');

/** An account as read: owner, lamports and data bytes. */
export interface RawAccount {
  owner: Address;
  lamports: bigint;
  data: Uint8Array;
}

const addressDecoder = getAddressDecoder();
const keyAt = (data: Uint8Array, offset: number): Address => addressDecoder.decode(data.subarray(offset, offset + 32));
const fromBase64 = (b: string) => Uint8Array.from(Buffer.from(b, 'base64'));

/** Several accounts in `getMultipleAccounts` calls of at most 100 (the RPC's limit). */
export async function accounts(rpc: TrustGateRpc, keys: readonly Address[]): Promise<(RawAccount | null)[]> {
  const out: (RawAccount | null)[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    const { value } = await rpc
      .getMultipleAccounts(keys.slice(i, i + 100), { encoding: 'base64', commitment: 'confirmed' })
      .send();
    for (const a of value) {
      out.push(a ? { owner: a.owner, lamports: BigInt(a.lamports), data: fromBase64(a.data[0]) } : null);
    }
  }
  return out;
}

export async function account(rpc: TrustGateRpc, key: Address): Promise<RawAccount | null> {
  return (await accounts(rpc, [key]))[0];
}

async function requiredAccount(rpc: TrustGateRpc, key: Address, what: string): Promise<RawAccount> {
  const a = await account(rpc, key);
  if (!a) throw new AccountNotFoundError(what, key);
  return a;
}

/** The registry's base collection, from its RootConfig (data 8..40). */
export async function baseCollection(rpc: TrustGateRpc, ids: ProgramIds): Promise<Address> {
  const root = await new Pdas(ids).rootConfig();
  const acc = await requiredAccount(rpc, root, 'registry RootConfig');
  if (acc.data.length < 40) throw new Error(`registry RootConfig: ${acc.data.length} bytes, expected at least 40`);
  return keyAt(acc.data, 8);
}

/** The registry's AgentAccount fields trust-gate uses (the registry's byte layout). */
export interface AgentView {
  collection: Address;
  owner: Address;
  asset: Address;
  reputationEnabled: boolean;
  agentWallet: Address | null;
}

/** Offsets of the external registry's AgentAccount (as `programs/common`'s `agent_account`). */
const AGENT = { discriminator: [241, 119, 69, 140, 233, 9, 112, 50], collection: 8, owner: 72, asset: 104, reputationEnabled: 137, agentWallet: 138 };

/** Parses an AgentAccount; null when the bytes are not one. */
export function readAgent(data: Uint8Array): AgentView | null {
  if (data.length < AGENT.agentWallet + 1 || !AGENT.discriminator.every((b, i) => data[i] === b)) return null;
  const tag = data[AGENT.agentWallet];
  if (tag > 1 || (tag === 1 && data.length < AGENT.agentWallet + 33)) return null;
  return {
    collection: keyAt(data, AGENT.collection),
    owner: keyAt(data, AGENT.owner),
    asset: keyAt(data, AGENT.asset),
    reputationEnabled: data[AGENT.reputationEnabled] !== 0,
    agentWallet: tag === 1 ? keyAt(data, AGENT.agentWallet + 1) : null,
  };
}

/** The registry's view of an agent. */
export async function agent(rpc: TrustGateRpc, ids: ProgramIds, asset: Address): Promise<AgentView> {
  const key = await new Pdas(ids).agentAccount(asset);
  const acc = await requiredAccount(rpc, key, 'registry AgentAccount');
  if (acc.owner !== ids.agentRegistry) throw new Error(`registry AgentAccount ${key}: owned by ${acc.owner}, not the registry`);
  const view = readAgent(acc.data);
  if (!view) throw new Error(`registry AgentAccount ${key}: not an AgentAccount`);
  return view;
}

/** Whether the engine rates `asset`: the agent is reputation-enabled and its stats exist
 * (engine-owned, with data), as the Rust SDK's `chain::rated_by_engine`. */
export async function ratedByEngine(rpc: TrustGateRpc, ids: ProgramIds, asset: Address): Promise<boolean> {
  const p = new Pdas(ids);
  const [agentAcc, stats] = await accounts(rpc, [await p.agentAccount(asset), await p.atomStats(asset)]);
  const enabled = agentAcc ? (readAgent(agentAcc.data)?.reputationEnabled ?? false) : false;
  return enabled && !!stats && stats.owner === ids.reputationEngine && stats.data.length > 0;
}

/** MPL Core, which owns the agents' assets (same id on every cluster). */
export const MPL_CORE_PROGRAM = address('CoREENxT6tW1HoK8ypY1SxRMZTcVPm7R94rH4PZNhX7d');

/**
 * The live owner in an MPL Core asset account (`BaseAssetV1.owner`, bytes 1..33), as the gate
 * reads it; null unless MPL Core owns the account and it is an asset (key byte 1).
 */
export function readAssetOwner(acc: RawAccount): Address | null {
  if (acc.owner !== MPL_CORE_PROGRAM || acc.data.length < 33 || acc.data[0] !== 1) return null;
  return keyAt(acc.data, 1);
}

/** The live owner of an agent's MPL Core asset (the registry's AgentAccount only caches it). */
export async function assetOwner(rpc: TrustGateRpc, asset: Address): Promise<Address> {
  const acc = await requiredAccount(rpc, asset, 'MPL Core asset');
  const owner = readAssetOwner(acc);
  if (!owner) throw new Error(`MPL Core asset ${asset}: not an MPL Core asset (owned by ${acc.owner})`);
  return owner;
}

/**
 * Where payments to an agent go, as the gate decides: the agent wallet while the owner who set
 * it still owns the asset (the registry's cached owner is the live one), else the live owner.
 * After a sale on MPL Core without the registry's `sync_owner`, the wallet is the seller's.
 */
export function recipientOf(a: AgentView, liveOwner: Address): Address {
  return a.agentWallet !== null && a.owner === liveOwner ? a.agentWallet : liveOwner;
}

export type TokenProgramId = typeof TOKEN_PROGRAM | typeof TOKEN_2022_PROGRAM;

/** A mint's token program and decimals; null when it does not exist. */
export async function mint(
  rpc: TrustGateRpc,
  field: string,
  key: Address,
): Promise<{ tokenProgram: TokenProgramId; decimals: number; transferHook: Address | null } | null> {
  const acc = await account(rpc, key);
  if (!acc) return null;
  if (acc.owner !== TOKEN_PROGRAM && acc.owner !== TOKEN_2022_PROGRAM) {
    throw new TrustGateInputError(field, `owned by ${acc.owner}, which is neither SPL Token nor Token-2022`);
  }
  // `decimals` is byte 44 of a mint in both token programs.
  if (acc.data.length <= 44) throw new TrustGateInputError(field, `${key} is not a mint`);
  return { tokenProgram: acc.owner as TokenProgramId, decimals: acc.data[44], transferHook: transferHookProgram(acc) };
}

/**
 * The program a Token-2022 mint's transfers call (its TransferHook extension, type 14: an
 * authority, then the program, all zeros for none), else null; as the Rust SDK's
 * `token_mint::transfer_hook_program`.
 */
export function transferHookProgram(acc: RawAccount): Address | null {
  if (acc.owner !== TOKEN_2022_PROGRAM || acc.data.length <= 166 || acc.data[165] !== 1) return null;
  const d = acc.data;
  for (let at = 166; at + 4 <= d.length; ) {
    const kind = d[at] | (d[at + 1] << 8);
    const len = d[at + 2] | (d[at + 3] << 8);
    if (kind === 0 || at + 4 + len > d.length) return null;
    if (kind === 14 && len >= 64) {
      const program = d.subarray(at + 4 + 32, at + 4 + 64);
      return program.some((b) => b !== 0) ? keyAt(d, at + 4 + 32) : null;
    }
    at += 4 + len;
  }
  return null;
}

export type Funding = 'wallet' | 'vault';

/** A spending policy (`["policy", asset, policy_id]`), as decoded. */
export type Policy = PolicyAccount;

/** Decodes a policy account; null when `data` is not one. */
export function decodePolicy(data: Uint8Array): Policy | null {
  if (!sameBytes(data.subarray(0, 8), POLICY_ACCOUNT_DISCRIMINATOR)) return null;
  return getPolicyAccountDecoder().decode(data);
}

/** The limit rules of `p` (lists, window, monthly, lifetime, per-payee), or null when it sets none. */
export function policyRules(p: Policy): PolicyRules | null {
  return isSome(p.limits) ? p.limits.value.rules : null;
}

/** The payee list account `p` names, or null. */
export function policyPayeeList(p: Policy): Address | null {
  const list = policyRules(p)?.payeeList;
  return list && list !== SYSTEM_PROGRAM ? list : null;
}

/** Where payments under `p` come from: its `params.funding`. */
export function fundingOf(p: Policy): Funding {
  return p.params.funding === 1 ? 'vault' : 'wallet';
}

/** The amount above which a payment under `p` needs an approval (0: none). */
export function approvalThresholdOf(p: Policy): bigint {
  return p.approvalThreshold;
}

/** Whether a payment of `amount` under `p` needs an approval on chain (threshold set and exceeded). */
export function needsApproval(p: Policy, amount: bigint): boolean {
  const threshold = approvalThresholdOf(p);
  return threshold !== 0n && amount > threshold;
}

/**
 * Policy `policyId` of `asset`; null when the account does not exist
 * (throws when it holds something else), as the Rust SDK's `chain::policy`.
 */
export async function readPolicy(rpc: TrustGateRpc, ids: ProgramIds, asset: Address, policyId: number): Promise<Policy | null> {
  const key = await new Pdas(ids).policy(asset, policyId);
  const acc = await account(rpc, key);
  if (!acc) return null;
  const p = decodePolicy(acc.data);
  if (!p) throw new Error(`PolicyAccount ${key}: not a policy account`);
  return p;
}

/** The funding policy `policyId` of `asset` declares; throws when the policy does not exist. */
export async function policyFunding(rpc: TrustGateRpc, ids: ProgramIds, asset: Address, policyId: number): Promise<Funding> {
  const key = await new Pdas(ids).policy(asset, policyId);
  const acc = await requiredAccount(rpc, key, 'PolicyAccount');
  const p = decodePolicy(acc.data);
  if (!p) throw new AccountNotFoundError('PolicyAccount', key);
  return fundingOf(p);
}

/**
 * Decodes a PaymentApproval account (policy_vault's approval of one payment's terms: offsets
 * 8 payer asset, 40 payee asset, 72 mint, 104 amount, 112 policy id, 116 expiresAt, 124
 * approvedAt, 132 rentPayer, 164 signers, 165 bump, 166 authorityGeneration); null when `data`
 * is not one.
 */
export function decodePaymentApproval(data: Uint8Array): PaymentApproval | null {
  if (data.length < getPaymentApprovalSize() || !sameBytes(data.subarray(0, 8), PAYMENT_APPROVAL_DISCRIMINATOR)) return null;
  return getPaymentApprovalDecoder().decode(data);
}

/**
 * The approval of a payment of `terms` (`approvePayment`) with its address; null when no
 * member has approved those terms (or the payment used it). Throws when the address holds
 * something that is not an approval (the Rust SDK's `chain::approval`).
 */
export async function readApproval(
  rpc: TrustGateRpc,
  ids: ProgramIds,
  terms: ApprovalTerms,
): Promise<{ address: Address; approval: PaymentApproval } | null> {
  const key = await new Pdas(ids).approval(terms);
  const acc = await account(rpc, key);
  if (!acc) return null;
  const approval = decodePaymentApproval(acc.data);
  if (!approval) throw new Error(`PaymentApproval ${key}: not a PaymentApproval account`);
  return { address: key, approval };
}

/**
 * A payment's approval on chain (`policy_vault::approve_payment`), passed to the gate: the
 * approval and the member who paid its rent (`PaymentApproval.rentPayer`). The settlement (or
 * gated channel open) that uses it closes it to them, so both are writable, and they come
 * first among the gate instruction's remaining accounts (the Rust SDK's `ApprovalUse`).
 */
export interface ApprovalUse {
  /** The approval's address: `Pdas.approval` of the payment's terms. */
  address: Address;
  /** `PaymentApproval.rentPayer`. */
  rentPayer: Address;
}

/**
 * What a payment of `terms` under `policy` passes to the gate for its approval: the approval
 * on chain when the amount is above the policy's approval threshold and a member approved it
 * (expired or not: the gate judges), else null (nothing is read when none is needed). The
 * Rust SDK's `chain::approval_use`.
 */
export async function approvalUse(rpc: TrustGateRpc, ids: ProgramIds, policy: Policy, terms: ApprovalTerms): Promise<ApprovalUse | null> {
  if (!needsApproval(policy, terms.amount)) return null;
  const found = await readApproval(rpc, ids, terms);
  return found ? { address: found.address, rentPayer: found.approval.rentPayer } : null;
}

/**
 * `approvalUse` after reading the payer's policy (null when it does not exist: the gate then
 * denies the payment anyway). The Rust SDK's `chain::approval_use_of`.
 */
export async function approvalUseOf(rpc: TrustGateRpc, ids: ProgramIds, terms: ApprovalTerms): Promise<ApprovalUse | null> {
  const policy = await readPolicy(rpc, ids, terms.payerAsset, terms.policyId);
  return policy ? approvalUse(rpc, ids, policy, terms) : null;
}

/** A validation rule: the capability (zero = none) and up to two attestors (default = empty). */
export interface Rule {
  capability: Uint8Array;
  attestors: Address[];
}

const sameBytes = (a: Uint8Array, b: ArrayLike<number>) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The rule a policy sets for the payee. */
export function policyRule(data: Uint8Array): Rule | null {
  const policy = decodePolicy(data);
  if (!policy) return null;
  const p = policy.params;
  return { capability: Uint8Array.from(p.requiredCapability), attestors: p.acceptedAttestors };
}

/**
 * The rule an AcceptancePolicy sets for the payer. The account is created by a handler, so the
 * IDL has no layout for it; the offsets are the ones documented on the Rust struct
 * (`programs/policy_vault/src/state/acceptance.rs`): capability 46..78, attestors 78..142.
 */
const ACCEPTANCE_DISCRIMINATOR = createHash('sha256').update('account:AcceptancePolicy').digest().subarray(0, 8);
export function acceptanceRule(data: Uint8Array): Rule | null {
  if (data.length < 142 || !sameBytes(data.subarray(0, 8), ACCEPTANCE_DISCRIMINATOR)) return null;
  return { capability: data.slice(46, 78), attestors: [keyAt(data, 78), keyAt(data, 110)] };
}

function isExpired(a: ValidationAttestation, now: bigint): boolean {
  return a.expiresAt !== 0n && now >= a.expiresAt;
}

/**
 * The best attestation of `capability` about `subject`: from `attestors` when the rule names
 * them (their PDAs), else any attestor's (a `getProgramAccounts` scan). A valid one (not
 * revoked, not expired at `now`) is preferred; otherwise any, so that the gate reports why.
 */
export async function findAttestation(
  rpc: TrustGateRpc,
  ids: ProgramIds,
  subject: Address,
  capability: Uint8Array,
  attestors: readonly Address[],
  now: bigint,
): Promise<Address | null> {
  const named = attestors.filter((a) => a !== SYSTEM_PROGRAM);
  let found: [Address, ValidationAttestation][] = [];
  if (named.length === 0) {
    found = await attestationsAbout(rpc, ids, subject, capability);
  } else {
    const pdas = new Pdas(ids);
    const keys = await Promise.all(named.map((a) => pdas.attestation(subject, capability, a)));
    const accs = await accounts(rpc, keys);
    keys.forEach((k, i) => {
      const acc = accs[i];
      if (acc && acc.owner === ids.validationRegistry && sameBytes(acc.data.subarray(0, 8), VALIDATION_ATTESTATION_DISCRIMINATOR)) {
        found.push([k, getValidationAttestationDecoder().decode(acc.data)]);
      }
    });
  }
  const valid = found.find(([, a]) => !a.revoked && !isExpired(a, now)) ?? found[0];
  return valid ? valid[0] : null;
}

/** Every attestation about `subject` (of `capability` when given). */
export async function attestationsAbout(
  rpc: TrustGateRpc,
  ids: ProgramIds,
  subject: Address,
  capability?: Uint8Array,
): Promise<[Address, ValidationAttestation][]> {
  const b58 = getBase58Decoder();
  // memcmp bytes in base58 (an address is its own base58).
  const memcmp = (offset: number, bytes: Uint8Array | Address) => ({
    memcmp: {
      offset: BigInt(offset),
      bytes: (typeof bytes === 'string' ? bytes : b58.decode(bytes)) as never,
      encoding: 'base58' as const,
    },
  });
  const filters = [
    { dataSize: BigInt(getValidationAttestationSize()) },
    memcmp(0, VALIDATION_ATTESTATION_DISCRIMINATOR),
    memcmp(8, subject),
    ...(capability ? [memcmp(40, capability)] : []),
  ];
  const raw = await rpc
    .getProgramAccounts(ids.validationRegistry, { encoding: 'base64', filters, commitment: 'confirmed' })
    .send();
  const out: [Address, ValidationAttestation][] = [];
  for (const { pubkey, account: a } of raw) {
    try {
      out.push([pubkey, getValidationAttestationDecoder().decode(fromBase64((a.data as [Base64EncodedBytes, string])[0]))]);
    } catch {
      // Not an attestation after all: skipped, as the Rust SDK does.
    }
  }
  return out;
}

/** An address lookup table: its key and the addresses it holds. */
export interface LookupTable {
  key: Address;
  addresses: Address[];
}

/**
 * The active address lookup tables whose authority is `authority` (a facilitator's), by
 * `getProgramAccounts` with a memcmp on the authority. A table's 56-byte header: type u32,
 * deactivation slot u64, last extended slot u64, start index u8, authority option tag u8,
 * authority 32 bytes, padding 2; the addresses follow.
 */
export async function lookupTables(rpc: TrustGateRpc, authority: Address): Promise<LookupTable[]> {
  const b58 = getBase58Decoder();
  const raw = await rpc
    .getProgramAccounts(LOOKUP_TABLE_PROGRAM, {
      encoding: 'base64',
      commitment: 'confirmed',
      filters: [
        { memcmp: { offset: 21n, bytes: b58.decode(Uint8Array.of(1)) as never, encoding: 'base58' } },
        { memcmp: { offset: 22n, bytes: authority as never, encoding: 'base58' } },
      ],
    })
    .send();
  const out: LookupTable[] = [];
  for (const { pubkey, account: a } of raw) {
    const data = fromBase64((a.data as [Base64EncodedBytes, string])[0]);
    if (data.length < 56 || (data.length - 56) % 32 !== 0) continue;
    const deactivation = new DataView(data.buffer, data.byteOffset).getBigUint64(4, true);
    if (deactivation !== 0xffffffffffffffffn) continue;
    const addresses: Address[] = [];
    for (let o = 56; o < data.length; o += 32) addresses.push(keyAt(data, o));
    out.push({ key: pubkey, addresses });
  }
  return out;
}
