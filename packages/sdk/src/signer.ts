// Who acts: a @solana/kit transaction signer, or only a public key for read-only and
// simulation flows (nothing is signed then).

import { createNoopSigner, isTransactionSigner, type Address, type TransactionSigner } from '@solana/kit';

/** A signer, or an address when the flow signs nothing (decisions, composing for others). */
export type SignerLike = TransactionSigner | Address;

export function addressOf(s: SignerLike): Address {
  return typeof s === 'string' ? s : s.address;
}

/** A real signer when one was given, else a signer that leaves its signature slot empty. */
export function signerOrNoop(s: SignerLike): TransactionSigner {
  return typeof s !== 'string' && isTransactionSigner(s) ? s : createNoopSigner(addressOf(s));
}

/** Whether `s` can sign. */
export function canSign(s: SignerLike): s is TransactionSigner {
  return typeof s !== 'string' && isTransactionSigner(s);
}
