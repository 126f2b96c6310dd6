// The Ed25519 precompile instruction: a signature the runtime checks before the transaction
// runs, read by the instruction after it through the instructions sysvar (an attestation's
// response, a payment channel's voucher).

import { address, getAddressEncoder, type Address, type Instruction, type ReadonlyUint8Array } from '@solana/kit';
import { TrustGateInputError } from './errors.js';

export const ED25519_PROGRAM = address('Ed25519SigVerify111111111111111111111111111');

/**
 * The precompile instruction checking `signature` (64 bytes) by `signer` over `message`, all
 * three inline (one signature; offsets into its own data, instruction index 0xffff).
 */
export function ed25519Instruction(signer: Address, signature: ReadonlyUint8Array, message: ReadonlyUint8Array): Instruction {
  if (signature.length !== 64) throw new TrustGateInputError('signature', `64 bytes expected, got ${signature.length}`);
  const header = 2 + 14;
  const pubkeyAt = header;
  const signatureAt = pubkeyAt + 32;
  const messageAt = signatureAt + 64;
  const data = new Uint8Array(messageAt + message.length);
  data.set([1, 0]);
  const view = new DataView(data.buffer);
  [signatureAt, 0xffff, pubkeyAt, 0xffff, messageAt, message.length, 0xffff].forEach((v, i) => view.setUint16(2 + i * 2, v, true));
  data.set(getAddressEncoder().encode(signer), pubkeyAt);
  data.set(signature, signatureAt);
  data.set(message, messageAt);
  return { programAddress: ED25519_PROGRAM, accounts: [], data };
}
