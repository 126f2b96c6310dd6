// validation_registry instruction builders with every account derived (namespaces,
// attestors, requests, responses, revocations), on top of the Codama-generated client, and
// the pieces a response may carry: the attestation message and its Ed25519 precompile check.

import { createHash } from 'node:crypto';
import { address, getAddressEncoder, signBytes, type Address, type Instruction, type KeyPairSigner, type TransactionSigner } from '@solana/kit';
import { SYSTEM_PROGRAM } from './chain.js';
import { ed25519Instruction } from './ed25519.js';
import {
  getRegisterAttestorInstruction,
  getRegisterNamespaceInstruction,
  getRequestValidationInstruction,
  getRespondToValidationInstruction,
  getRevokeValidationInstruction,
} from './generated/validation_registry/instructions/index.js';
import { requireProgramIds, type ProgramIds } from './ids.js';
import { INSTRUCTIONS_SYSVAR } from './instructions.js';
import { Pdas } from './pda.js';

export { ED25519_PROGRAM } from './ed25519.js';
/** The domain an attestor's signature over a claim starts with. */
export const ATTESTATION_MESSAGE_DOMAIN = 'trust-gate/attestation/v1';

/** sha256 of a capability namespace name: the capability hash. */
export function capabilityHash(name: string): Uint8Array {
  return Uint8Array.from(createHash('sha256').update(name, 'utf8').digest());
}

/** What an attestor vouches for in `respond_to_validation`. */
export interface Claim {
  subject: Address;
  capability: Uint8Array;
  payloadHash: Uint8Array;
  uriHash: Uint8Array;
  /** Expiry slot (the registry also stores it as unix time at 400 ms per slot). */
  expiresAtSlot: bigint;
}

/** The message an attestor's optional Ed25519 signature covers. */
export function attestationMessage(c: Claim): Uint8Array {
  const slot = Buffer.alloc(8);
  slot.writeBigUInt64LE(c.expiresAtSlot);
  return Uint8Array.from(
    Buffer.concat([
      Buffer.from(ATTESTATION_MESSAGE_DOMAIN),
      Buffer.from(getAddressEncoder().encode(c.subject)),
      c.capability,
      c.payloadHash,
      c.uriHash,
      slot,
    ]),
  );
}

/**
 * An Ed25519 precompile instruction carrying `signer`'s signature over `message` inline;
 * placed right before `respond_to_validation` it marks the attestation as signature-verified.
 */
export async function ed25519Verify(signer: KeyPairSigner, message: Uint8Array): Promise<Instruction> {
  return ed25519Instruction(signer.address, await signBytes(signer.keyPair.privateKey, message), message);
}

export class ValidationRegistryBuilder {
  readonly pda: Pdas;
  /** Throws when the validation registry's id is the mainnet sentinel. */
  constructor(readonly ids: ProgramIds) {
    requireProgramIds(ids, ['validationRegistry']);
    this.pda = new Pdas(ids);
  }

  private get program() {
    return { programAddress: this.ids.validationRegistry };
  }

  /** Registers a capability namespace; the program computes its hash from `name`. */
  async registerNamespace(registrant: TransactionSigner, name: string, version: string, schemaUri: string): Promise<Instruction> {
    const namespace = await this.pda.namespace(capabilityHash(name));
    return getRegisterNamespaceInstruction({ registrant, namespace, systemProgram: SYSTEM_PROGRAM, name, version, schemaUri }, this.program);
  }

  /** Registers the signer as an attestor. */
  async registerAttestor(attestor: TransactionSigner, displayNameUri: string): Promise<Instruction> {
    const attestorProfile = await this.pda.attestorProfile(attestor.address);
    return getRegisterAttestorInstruction({ attestor, attestorProfile, systemProgram: SYSTEM_PROGRAM, displayNameUri }, this.program);
  }

  /** Asks for an attestation of `capability` about `subject`. */
  async requestValidation(
    requester: TransactionSigner,
    subject: Address,
    capability: Uint8Array,
    claimUriHash: Uint8Array,
    deadlineSlot: bigint,
  ): Promise<Instruction> {
    const [namespace, request] = await Promise.all([
      this.pda.namespace(capability),
      this.pda.validationRequest(subject, capability, requester.address),
    ]);
    return getRequestValidationInstruction(
      { requester, namespace, request, systemProgram: SYSTEM_PROGRAM, subjectAsset: subject, capabilityHash: capability, claimUriHash, deadlineSlot },
      this.program,
    );
  }

  /** Creates or renews the attestor's attestation of `claim`. */
  async respondToValidation(attestor: TransactionSigner, claim: Claim): Promise<Instruction> {
    const [attestorProfile, namespace, attestation] = await Promise.all([
      this.pda.attestorProfile(attestor.address),
      this.pda.namespace(claim.capability),
      this.pda.attestation(claim.subject, claim.capability, attestor.address),
    ]);
    return getRespondToValidationInstruction(
      {
        attestor,
        attestorProfile,
        namespace,
        attestation,
        instructions: INSTRUCTIONS_SYSVAR,
        systemProgram: SYSTEM_PROGRAM,
        subjectAsset: claim.subject,
        capabilityHash: claim.capability,
        claimPayloadHash: claim.payloadHash,
        claimUriHash: claim.uriHash,
        expiresAtSlot: claim.expiresAtSlot,
      },
      this.program,
    );
  }

  /** Revokes the attestor's attestation about `subject`. */
  async revokeValidation(attestor: TransactionSigner, subject: Address, capability: Uint8Array, reasonHash: Uint8Array): Promise<Instruction> {
    const [attestorProfile, attestation] = await Promise.all([
      this.pda.attestorProfile(attestor.address),
      this.pda.attestation(subject, capability, attestor.address),
    ]);
    return getRevokeValidationInstruction(
      { attestor, attestorProfile, attestation, subjectAsset: subject, capabilityHash: capability, reasonHash },
      this.program,
    );
  }
}
