// Program loaders: a program's IDL (an explicit one wins, else the IDL account on chain in
// Anchor's `anchor idl init` layout, else the IDL bundled with this package) and the
// validation registry's id for an RPC endpoint. The Rust SDK's `idl` module, the same way.

import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { address, createAddressWithSeed, getProgramDerivedAddress, type Address } from '@solana/kit';
import { account, type TrustGateRpc } from './chain.js';
import { gateIdl, policyVaultIdl, validationRegistryIdl } from './generated/idls.js';
import { VALIDATION_REGISTRY_PROGRAM_ADDRESS } from './generated/validation_registry/programs/index.js';
import type { ProgramIds } from './ids.js';

export type Program = 'policyVault' | 'gate' | 'validationRegistry';
/** The programs' names as their IDLs and `idl/` files spell them. */
export const PROGRAM_NAMES: Record<Program, string> = {
  policyVault: 'policy_vault',
  gate: 'gate',
  validationRegistry: 'validation_registry',
};

/** An Anchor IDL document. */
export type Idl = Record<string, unknown>;
export type IdlSource = 'explicit' | 'chain' | 'bundled';

/** The IDL generated from this repository's programs (shipped with the package). */
export function bundledIdl(program: Program): Idl {
  const idl = { policyVault: policyVaultIdl, gate: gateIdl, validationRegistry: validationRegistryIdl }[program];
  return structuredClone(idl) as Idl;
}

/** The address of a program's IDL account: createWithSeed(findProgramAddress([], id), "anchor:idl", id). */
export async function idlAddress(programId: Address): Promise<Address> {
  const [base] = await getProgramDerivedAddress({ programAddress: programId, seeds: [] });
  return createAddressWithSeed({ baseAddress: base, programAddress: programId, seed: 'anchor:idl' });
}

const IDL_ACCOUNT_DISCRIMINATOR = createHash('sha256').update('account:IdlAccount').digest().subarray(0, 8);

/** Decodes an IDL account's bytes: discriminator, authority, u32 length, zlib(JSON). */
export function decodeIdlAccount(data: Uint8Array): Idl {
  if (data.length < 44 || !IDL_ACCOUNT_DISCRIMINATOR.equals(Buffer.from(data.subarray(0, 8)))) {
    throw new Error('IDL account: not an Anchor IDL account');
  }
  const len = Buffer.from(data).readUInt32LE(40);
  if (data.length < 44 + len) throw new Error(`IDL account: declares ${len} bytes, holds ${data.length - 44}`);
  return JSON.parse(inflateSync(data.subarray(44, 44 + len)).toString('utf8')) as Idl;
}

/** No IDL could be found; `remediation` says how to publish or pass one. */
export class IdlMissingError extends Error {
  constructor(
    readonly program: string,
    readonly remediation: string,
  ) {
    super(`no IDL for ${program}: ${remediation}`);
    this.name = 'IdlMissingError';
  }
}

export interface LoadIdlOptions {
  rpc: TrustGateRpc;
  programIds: ProgramIds;
  program: Program;
  /** An explicit IDL: used as it is. */
  idl?: Idl;
  /** Fall back to the bundled IDL when the chain has none (default true). */
  allowBundled?: boolean;
}

/** Loads a program's IDL: explicit, else on chain, else bundled; throws IdlMissingError. */
export async function loadIdl(o: LoadIdlOptions): Promise<{ idl: Idl; source: IdlSource }> {
  if (o.idl) return { idl: o.idl, source: 'explicit' };
  const id = o.programIds[o.program];
  const name = PROGRAM_NAMES[o.program];
  const acc = await account(o.rpc, await idlAddress(id));
  if (acc && acc.owner === id) return { idl: decodeIdlAccount(acc.data), source: 'chain' };
  if (o.allowBundled ?? true) return { idl: bundledIdl(o.program), source: 'bundled' };
  throw new IdlMissingError(
    name,
    `publish it with \`anchor idl init --filepath idl/${name}.json ${id}\` on this cluster, or pass the IDL explicitly (the \`idl\` argument)`,
  );
}

/**
 * The validation registry's program id for an RPC endpoint: an explicit id wins; the devnet
 * default applies only to devnet and local endpoints (URLs containing `devnet`, `127.0.0.1`
 * or `localhost`); anything else throws with the remediation.
 */
export function validationRegistryId(rpcUrl: string, explicit?: Address | string): Address {
  if (explicit) return address(explicit);
  const url = rpcUrl.toLowerCase();
  if (['devnet', '127.0.0.1', 'localhost'].some((h) => url.includes(h))) return VALIDATION_REGISTRY_PROGRAM_ADDRESS;
  throw new Error(
    `no validation_registry program id for ${rpcUrl}: the default id is deployed on devnet only; set VALIDATION_REGISTRY_PROGRAM_ID (or pass the program id) for your deployment`,
  );
}
