// Compiling a v0 transaction message exactly as the Rust SDK does (solana-message's
// `v0::Message::try_compile`), so that a settlement composed here is byte-identical to the
// Rust one: accounts sorted by their bytes within each role, lookup-table entries drained
// table by table in that order, and the same wire encoding.

import {
  getAddressEncoder,
  getBase58Encoder,
  isTransactionPartialSigner,
  type Address,
  type Instruction,
  type Transaction,
  type TransactionSigner,
} from '@solana/kit';
import type { LookupTable } from './chain.js';
import { addressOf, type SignerLike } from './signer.js';

interface KeyMeta {
  signer: boolean;
  writable: boolean;
  invoked: boolean;
}

const encoder = getAddressEncoder();
const bytesOf = (a: Address) => Uint8Array.from(encoder.encode(a));

/** Byte order of two addresses (what a Rust `BTreeMap<Pubkey, _>` iterates in). */
function compareBytes(a: Address, b: Address): number {
  const x = bytesOf(a);
  const y = bytesOf(b);
  for (let i = 0; i < 32; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

function compactU16(n: number): number[] {
  const out: number[] = [];
  let rem = n;
  for (;;) {
    let elem = rem & 0x7f;
    rem >>= 7;
    if (rem === 0) {
      out.push(elem);
      return out;
    }
    elem |= 0x80;
    out.push(elem);
  }
}

/** A compiled v0 message: its wire bytes and the addresses that must sign, in order. */
export interface CompiledMessage {
  bytes: Uint8Array;
  signers: Address[];
}

/** Compiles `ixs` paid by `feePayer` into v0 message bytes, loading what it can from `tables`. */
export function compileV0Message(
  feePayer: Address,
  ixs: readonly Instruction[],
  tables: readonly LookupTable[],
  blockhash: string,
): CompiledMessage {
  const metas = new Map<Address, KeyMeta>();
  const meta = (a: Address) => {
    let m = metas.get(a);
    if (!m) metas.set(a, (m = { signer: false, writable: false, invoked: false }));
    return m;
  };
  for (const ix of ixs) {
    meta(ix.programAddress).invoked = true;
    for (const acc of ix.accounts ?? []) {
      const m = meta(acc.address);
      m.signer ||= acc.role >= 2;
      m.writable ||= (acc.role & 1) === 1;
    }
  }
  const payer = meta(feePayer);
  payer.signer = true;
  payer.writable = true;
  const sorted = () => [...metas.keys()].sort(compareBytes);

  // Table lookups: writable then read-only non-signer, non-program keys, each table in turn.
  const lookups: { key: Address; writable: number[]; readonly: number[] }[] = [];
  const loadedWritable: Address[] = [];
  const loadedReadonly: Address[] = [];
  const drain = (table: LookupTable, want: (m: KeyMeta) => boolean) => {
    const indexes: number[] = [];
    const keys: Address[] = [];
    for (const k of sorted()) {
      const m = metas.get(k)!;
      if (k === feePayer || !want(m)) continue;
      const i = table.addresses.indexOf(k);
      if (i < 0) continue;
      if (i > 255) throw new Error(`lookup table ${table.key}: index ${i} does not fit in a u8`);
      indexes.push(i);
      keys.push(k);
      metas.delete(k);
    }
    return { indexes, keys };
  };
  for (const table of tables) {
    const w = drain(table, (m) => !m.signer && !m.invoked && m.writable);
    const r = drain(table, (m) => !m.signer && !m.invoked && !m.writable);
    if (w.indexes.length === 0 && r.indexes.length === 0) continue;
    lookups.push({ key: table.key, writable: w.indexes, readonly: r.indexes });
    loadedWritable.push(...w.keys);
    loadedReadonly.push(...r.keys);
  }

  // Static keys: the payer, then writable signers, read-only signers, writable, read-only.
  metas.delete(feePayer);
  const rest = sorted();
  const pick = (f: (m: KeyMeta) => boolean) => rest.filter((k) => f(metas.get(k)!));
  const writableSigners = [feePayer, ...pick((m) => m.signer && m.writable)];
  const readonlySigners = pick((m) => m.signer && !m.writable);
  const writable = pick((m) => !m.signer && m.writable);
  const readonly = pick((m) => !m.signer && !m.writable);
  const staticKeys = [...writableSigners, ...readonlySigners, ...writable, ...readonly];
  if (staticKeys.length + loadedWritable.length + loadedReadonly.length > 256) {
    throw new Error('transaction: more than 256 accounts');
  }
  const all = [...staticKeys, ...loadedWritable, ...loadedReadonly];
  const index = (a: Address) => all.indexOf(a);

  const out: number[] = [0x80];
  out.push(writableSigners.length + readonlySigners.length, readonlySigners.length, readonly.length);
  out.push(...compactU16(staticKeys.length));
  for (const k of staticKeys) out.push(...bytesOf(k));
  const hash = getBase58Encoder().encode(blockhash);
  if (hash.length !== 32) throw new Error(`blockhash: ${blockhash} is not 32 bytes`);
  out.push(...hash);
  out.push(...compactU16(ixs.length));
  for (const ix of ixs) {
    out.push(index(ix.programAddress));
    const accounts = ix.accounts ?? [];
    out.push(...compactU16(accounts.length), ...accounts.map((a) => index(a.address)));
    const data = ix.data ?? new Uint8Array();
    out.push(...compactU16(data.length), ...data);
  }
  out.push(...compactU16(lookups.length));
  for (const l of lookups) {
    out.push(...bytesOf(l.key));
    out.push(...compactU16(l.writable.length), ...l.writable);
    out.push(...compactU16(l.readonly.length), ...l.readonly);
  }
  return { bytes: Uint8Array.from(out), signers: [...writableSigners, ...readonlySigners] };
}

/** The signers the instructions carry (account metas with a `signer`), by address. */
export function signersOf(feePayer: SignerLike, ixs: readonly Instruction[]): Map<Address, TransactionSigner> {
  const out = new Map<Address, TransactionSigner>();
  if (typeof feePayer !== 'string') out.set(feePayer.address, feePayer);
  for (const ix of ixs) {
    for (const acc of ix.accounts ?? []) {
      const s = (acc as { signer?: TransactionSigner }).signer;
      if (s && !out.has(s.address)) out.set(s.address, s);
    }
  }
  return out;
}

/**
 * A transaction of `compiled` signed by each partial signer among `signers` (a no-op signer
 * leaves its slot empty, for its owner to fill later).
 */
export async function signCompiled(
  compiled: CompiledMessage,
  signers: Map<Address, TransactionSigner>,
  lifetime: { blockhash: string; lastValidBlockHeight: bigint },
): Promise<Transaction> {
  const signatures: Record<Address, Uint8Array | null> = {};
  for (const s of compiled.signers) signatures[s] = null;
  const unsigned = {
    messageBytes: compiled.bytes,
    signatures: { ...signatures },
    lifetimeConstraint: lifetime,
  } as unknown as Transaction;
  for (const address of compiled.signers) {
    const signer = signers.get(address);
    if (!signer) continue;
    if (!isTransactionPartialSigner(signer)) {
      throw new Error(`signer ${addressOf(signer)}: only partial signers (a KeyPairSigner, say) can sign a settlement here`);
    }
    const [dict] = await signer.signTransactions([unsigned as never]);
    for (const [k, v] of Object.entries(dict ?? {})) {
      if (k in signatures) signatures[k as Address] = v as Uint8Array;
    }
  }
  return { messageBytes: compiled.bytes, signatures, lifetimeConstraint: lifetime } as unknown as Transaction;
}
