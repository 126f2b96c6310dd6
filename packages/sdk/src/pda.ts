// Derivers for every account of the three programs and of the external registry and
// engine: the same seeds as the programs' `seeds` modules and the Rust SDK's `Pdas`.

import { createHash } from 'node:crypto';
import {
  getAddressEncoder,
  getProgramDerivedAddress,
  getU32Encoder,
  getU64Encoder,
  type Address,
  type ReadonlyUint8Array,
} from '@solana/kit';
import type { ProgramIds } from './ids.js';

/** What an approval binds: one payment's terms (policy_vault's `ApprovalTerms`). */
export interface ApprovalTerms {
  payerAsset: Address;
  payeeAsset: Address;
  mint: Address;
  amount: bigint;
  policyId: number;
}

const text = (s: string) => new TextEncoder().encode(s);
const key = (a: Address) => getAddressEncoder().encode(a);

/** Seed prefixes, as the programs define them. */
export const SEEDS = {
  policyAuthority: 'policy_authority',
  policy: 'policy',
  velocity: 'velocity',
  killswitch: 'killswitch',
  acceptance: 'acceptance',
  vault: 'vault',
  payeeList: 'payee_list',
  authorityGuard: 'authority_guard',
  takeOver: 'take_over',
  approval: 'approval',
  evaluateSigner: 'evaluate_signer',
  gateAuthority: 'gate_authority',
  feedbackLog: 'feedback_log',
  channelRecord: 'channel_record',
  dispute: 'dispute',
  holdbackEscrow: 'holdback_escrow',
  holdbackAuthority: 'holdback_authority',
  arbiterSet: 'arbiter_set',
  gatedSubscription: 'gated_subscription',
  pullDelegate: 'pull_delegate',
  capability: 'capability',
  attestor: 'attestor',
  request: 'request',
  attestation: 'attestation',
  rootConfig: 'root_config',
  registryConfig: 'registry_config',
  agent: 'agent',
  atomCpiAuthority: 'atom_cpi_authority',
  atomConfig: 'atom_config',
  atomStats: 'atom_stats',
} as const;

function bytes32(what: string, b: ReadonlyUint8Array): ReadonlyUint8Array {
  if (b.length !== 32) throw new Error(`${what}: 32 bytes expected, got ${b.length}`);
  return b;
}

/** The seed that names an arbiter set: sha256 of the threshold byte and the members in order
 * (the gate's `ArbiterSet::id`). */
export function arbiterSetId(threshold: number, members: readonly Address[]): Uint8Array {
  if (!Number.isInteger(threshold) || threshold < 0 || threshold > 255) {
    throw new Error(`threshold: a u8 expected, got ${threshold}`);
  }
  const h = createHash('sha256').update(Uint8Array.of(threshold));
  for (const m of members) h.update(Uint8Array.from(key(m)));
  return Uint8Array.from(h.digest());
}

/** PDAs under a set of program ids. Each method resolves to the address only (and rejects a
 * malformed seed, naming it). */
export class Pdas {
  constructor(readonly ids: ProgramIds) {}

  private async find(program: Address, seeds: ReadonlyUint8Array[]): Promise<Address> {
    const [pda] = await getProgramDerivedAddress({ programAddress: program, seeds });
    return pda;
  }

  // policy_vault

  /** `["policy_authority", asset]` */
  async policyAuthority(asset: Address) {
    return this.find(this.ids.policyVault, [text(SEEDS.policyAuthority), key(asset)]);
  }
  /** `["policy", asset, policy_id u32 LE]` */
  async policy(asset: Address, policyId: number) {
    return this.find(this.ids.policyVault, [text(SEEDS.policy), key(asset), getU32Encoder().encode(policyId)]);
  }
  /** `["velocity", asset, policy_id u32 LE]` */
  async velocity(asset: Address, policyId: number) {
    return this.find(this.ids.policyVault, [text(SEEDS.velocity), key(asset), getU32Encoder().encode(policyId)]);
  }
  /** `["payee_list", asset, policy_id u32 LE]`: a policy's payee list account. */
  async payeeList(asset: Address, policyId: number) {
    return this.find(this.ids.policyVault, [text(SEEDS.payeeList), key(asset), getU32Encoder().encode(policyId)]);
  }
  /** `["killswitch", asset]` */
  async killswitch(asset: Address) {
    return this.find(this.ids.policyVault, [text(SEEDS.killswitch), key(asset)]);
  }
  /** `["acceptance", asset]` */
  async acceptance(asset: Address) {
    return this.find(this.ids.policyVault, [text(SEEDS.acceptance), key(asset)]);
  }
  /** `["vault", asset, mint]`: the agent's policy vault for `mint` (a token account that is its own authority). */
  async vault(asset: Address, mint: Address) {
    return this.find(this.ids.policyVault, [text(SEEDS.vault), key(asset), key(mint)]);
  }
  /** `["authority_guard", asset]`: the take-over delay and the recovery key of the agent's authority. */
  async authorityGuard(asset: Address) {
    return this.find(this.ids.policyVault, [text(SEEDS.authorityGuard), key(asset)]);
  }
  /** `["take_over", asset]`: a pending take-over of the agent's authority. */
  async takeOverRequest(asset: Address) {
    return this.find(this.ids.policyVault, [text(SEEDS.takeOver), key(asset)]);
  }
  /**
   * `["approval", payer_asset, payee_asset, mint, amount u64 LE, policy_id u32 LE]`: the
   * approval of one payment's terms.
   */
  async approval(t: ApprovalTerms) {
    return this.find(this.ids.policyVault, [
      text(SEEDS.approval),
      key(t.payerAsset),
      key(t.payeeAsset),
      key(t.mint),
      getU64Encoder().encode(t.amount),
      getU32Encoder().encode(t.policyId),
    ]);
  }

  // gate

  /** `["evaluate_signer"]`: the gate's CPI signer towards policy_vault. */
  async evaluateSigner() {
    return this.find(this.ids.gate, [text(SEEDS.evaluateSigner)]);
  }
  /** `["gate_authority", facilitator]` */
  async gateAuthority(facilitator: Address) {
    return this.find(this.ids.gate, [text(SEEDS.gateAuthority), key(facilitator)]);
  }
  /** `["feedback_log", facilitator, payment_id_hash]` */
  async feedbackLog(facilitator: Address, paymentIdHash: ReadonlyUint8Array) {
    return this.find(this.ids.gate, [text(SEEDS.feedbackLog), key(facilitator), bytes32('paymentIdHash', paymentIdHash)]);
  }
  /** `["channel_record", channel]`: the gate's record of a payment channel it let open. */
  async channelRecord(channel: Address) {
    return this.find(this.ids.gate, [text(SEEDS.channelRecord), key(channel)]);
  }
  /** `["dispute", facilitator, payment_id_hash]` */
  async dispute(facilitator: Address, paymentIdHash: ReadonlyUint8Array) {
    return this.find(this.ids.gate, [text(SEEDS.dispute), key(facilitator), bytes32('paymentIdHash', paymentIdHash)]);
  }

  /**
   * `["holdback_escrow", payee_asset, mint]`: the escrow token account a held settlement to
   * `payeeAsset` in `mint` credits (`Builder.openHoldbackEscrow` opens it).
   */
  async holdbackEscrow(payeeAsset: Address, mint: Address) {
    return this.find(this.ids.gate, [text(SEEDS.holdbackEscrow), key(payeeAsset), key(mint)]);
  }
  /** `["holdback_authority"]`: the authority of every escrow, which signs its payouts. */
  async holdbackAuthority() {
    return this.find(this.ids.gate, [text(SEEDS.holdbackAuthority)]);
  }
  /**
   * `["arbiter_set", sha256(threshold u8, members)]`: the arbiter set of these members (in
   * the ascending order of their bytes, as `create_arbiter_set` takes them) and threshold.
   */
  async arbiterSet(threshold: number, members: readonly Address[]) {
    return this.find(this.ids.gate, [text(SEEDS.arbiterSet), arbiterSetId(threshold, members)]);
  }

  /** `["gated_subscription", delegation]`: the gate's record of a subscription it pulls. */
  async gatedSubscription(delegation: Address) {
    return this.find(this.ids.gate, [text(SEEDS.gatedSubscription), key(delegation)]);
  }
  /**
   * `["pull_delegate", payer_asset, payee_asset, facilitator]`: the delegatee of the recurring
   * delegations the gate pulls for these parties through this facilitator.
   */
  async pullDelegate(payerAsset: Address, payeeAsset: Address, facilitator: Address) {
    return this.find(this.ids.gate, [text(SEEDS.pullDelegate), key(payerAsset), key(payeeAsset), key(facilitator)]);
  }

  // validation_registry

  /** `["capability", sha256(name)]` */
  async namespace(capabilityHash: ReadonlyUint8Array) {
    return this.find(this.ids.validationRegistry, [text(SEEDS.capability), bytes32('capabilityHash', capabilityHash)]);
  }
  /** `["attestor", attestor]` */
  async attestorProfile(attestor: Address) {
    return this.find(this.ids.validationRegistry, [text(SEEDS.attestor), key(attestor)]);
  }
  /** `["request", subject, capability_hash, requester]` */
  async validationRequest(subject: Address, capabilityHash: ReadonlyUint8Array, requester: Address) {
    return this.find(this.ids.validationRegistry, [
      text(SEEDS.request),
      key(subject),
      bytes32('capabilityHash', capabilityHash),
      key(requester),
    ]);
  }
  /** `["attestation", subject, capability_hash, attestor]` */
  async attestation(subject: Address, capabilityHash: ReadonlyUint8Array, attestor: Address) {
    return this.find(this.ids.validationRegistry, [
      text(SEEDS.attestation),
      key(subject),
      bytes32('capabilityHash', capabilityHash),
      key(attestor),
    ]);
  }

  // the external registry and engine

  /** Registry `["root_config"]` (its data holds the base collection at 8..40). */
  async rootConfig() {
    return this.find(this.ids.agentRegistry, [text(SEEDS.rootConfig)]);
  }
  /** Registry `["registry_config", collection]` */
  async registryConfig(collection: Address) {
    return this.find(this.ids.agentRegistry, [text(SEEDS.registryConfig), key(collection)]);
  }
  /** Registry `["agent", asset]` */
  async agentAccount(asset: Address) {
    return this.find(this.ids.agentRegistry, [text(SEEDS.agent), key(asset)]);
  }
  /** Registry `["atom_cpi_authority"]` */
  async registryCpiAuthority() {
    return this.find(this.ids.agentRegistry, [text(SEEDS.atomCpiAuthority)]);
  }
  /** Engine `["atom_config"]` */
  async atomConfig() {
    return this.find(this.ids.reputationEngine, [text(SEEDS.atomConfig)]);
  }
  /** Engine `["atom_stats", asset]` */
  async atomStats(asset: Address) {
    return this.find(this.ids.reputationEngine, [text(SEEDS.atomStats), key(asset)]);
  }
}
