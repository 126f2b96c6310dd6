// x402's `payment-identifier` on a resource server: a paid request is answered once per
// payment id. Framework-free; `paidOnce` (../express.ts) is its Express glue, and the Rust
// demo's `trust_gate_facilitator::paid_once` the same rules in Rust.
//
// The lookup runs before the route's payment middleware, so before anything verifies the
// payment (a resend can no longer pass verification once its payment settled). A paid request
// that carries an id is looked up by (method, path, id), bound to its payload's digest:
//
// - a new id runs the handler; its answer is kept as it was sent (status, headers with
//   PAYMENT-RESPONSE, body);
// - the same id and payload again gets that answer back, and the handler does not run; while
//   the first still runs, the resend waits for its answer (up to `waitMs`), else gets 503
//   `payment_in_progress` with Retry-After;
// - the same id with another payload is 409 `payment_identifier_conflict`;
// - without an id where the route requires one, 400 `payment_identifier_required`; a
//   malformed id is 400 `invalid_payment_identifier`.
//
// An answer that is not final (a 5xx, or a settlement still pending) is not kept: the id
// stays bound to its payload, and the next resend of that payload runs the handler again.
// A handler that never finishes (its process died) leaves its id running for `leaseMs`;
// after it, a resend runs again.

import { decodePaymentResponseHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { PAYMENT_RESPONSE } from '../headers.js';
import { TrustGateInputError } from '../errors.js';
import { declarePaymentIdentifier, paymentIdOf, payloadDigest, PAYMENT_IDENTIFIER } from './payment-identifier.js';

/** The largest answer kept (bytes of its body). */
export const MAX_KEPT_BYTES = 1 << 20;

/**
 * Where ids are kept: one process (`MemoryPaidOnceStore`), or a store the replicas share
 * (on Redis: `claim` is SET NX PX then GET, `replaceIf` a compare-and-set script). Values
 * are opaque strings.
 */
export interface PaidOnceStore {
  /** Writes `value` at `key` unless it holds one: undefined when written, else the value there. */
  claim(key: string, value: string, ttlMs: number): Promise<string | undefined>;
  /** Replaces `old` with `next` at `key`; false when it no longer held `old`. */
  replaceIf(key: string, old: string, next: string, ttlMs: number): Promise<boolean>;
}

/** Ids kept in this process. */
export class MemoryPaidOnceStore implements PaidOnceStore {
  private readonly entries = new Map<string, { value: string; until: number }>();

  async claim(key: string, value: string, ttlMs: number): Promise<string | undefined> {
    const now = Date.now();
    const held = this.entries.get(key);
    if (held && now < held.until) return held.value;
    // Expired ids go whenever the map has doubled since the last sweep: a claim costs
    // amortized O(1), and the map stays within twice its live ids.
    const size = this.entries.size;
    if ((size & (size - 1)) === 0) for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k);
    this.entries.set(key, { value, until: now + ttlMs });
    return undefined;
  }

  async replaceIf(key: string, old: string, next: string, ttlMs: number): Promise<boolean> {
    const held = this.entries.get(key);
    if (!held || Date.now() >= held.until || held.value !== old) return false;
    this.entries.set(key, { value: next, until: Date.now() + ttlMs });
    return true;
  }
}

/** An answer as it was sent. */
export interface KeptAnswer {
  status: number;
  headers: [string, string][];
  /** Base64. */
  body: string;
}

type Phase = { phase: 'running'; since: number } | { phase: 'open' } | { phase: 'done'; answer: KeptAnswer };
type Entry = { digest: string } & Phase;

/** What the lookup of a request decided. */
export type PaidOnceStep =
  /** No id (where none is required), or no payment: go on as if there were no extension. */
  | { kind: 'pass' }
  /** Answer this without running the handler. */
  | { kind: 'answer'; answer: KeptAnswer }
  /** Run the handler, then `finish` with its answer (`resumed`: seen before without a final answer). */
  | { kind: 'run'; resumed: boolean; finish(answer: KeptAnswer): Promise<void> };

export interface PaidOnceOptions {
  /** Where ids are kept; default this process. */
  store?: PaidOnceStore;
  /** How long an id is kept; at least the challenges' lifetime. Default one hour. */
  ttlSeconds?: number;
  /** Whether a paid request without an id is refused (declare `required: true` in the 402s). */
  required?: boolean;
  /** How long a resend waits for the first attempt's answer before 503; default 10 s. */
  waitMs?: number;
  /** A first attempt running longer than this is taken as lost; default 120 s. */
  leaseMs?: number;
}

/** A resource server's payment ids (see the header comment). */
export class PaidOnce {
  readonly required: boolean;
  private readonly store: PaidOnceStore;
  private readonly ttlMs: number;
  private readonly waitMs: number;
  private readonly leaseMs: number;

  constructor(options: PaidOnceOptions = {}) {
    const ttl = options.ttlSeconds ?? 3600;
    if (!Number.isFinite(ttl) || ttl <= 0) throw new TrustGateInputError('ttlSeconds', `${ttl}: a positive number of seconds`);
    this.store = options.store ?? new MemoryPaidOnceStore();
    this.ttlMs = ttl * 1000;
    this.required = options.required ?? false;
    this.waitMs = options.waitMs ?? 10_000;
    this.leaseMs = options.leaseMs ?? 120_000;
  }

  /** The 402s' declaration, for `extensions` (`{ "payment-identifier": … }`). */
  declaration(): Record<string, unknown> {
    return { [PAYMENT_IDENTIFIER]: declarePaymentIdentifier(this.required) };
  }

  /** Looks up a request by its method, path and PAYMENT-SIGNATURE header (if any). */
  async begin(method: string, path: string, paymentSignature: string | undefined): Promise<PaidOnceStep> {
    if (!paymentSignature) return { kind: 'pass' };
    let payload: unknown;
    try {
      payload = decodePaymentSignatureHeader(paymentSignature);
    } catch {
      return { kind: 'pass' }; // Malformed: the payment middleware refuses it by name.
    }
    let id: string | undefined;
    try {
      id = paymentIdOf(payload);
    } catch (e) {
      return { kind: 'answer', answer: refusal(400, 'invalid_payment_identifier', (e as Error).message) };
    }
    if (id === undefined) {
      if (!this.required) return { kind: 'pass' };
      return {
        kind: 'answer',
        answer: refusal(400, 'payment_identifier_required', `extensions["${PAYMENT_IDENTIFIER}"].info.id: this route requires a payment id`),
      };
    }
    const key = `paid-once:${method} ${path}:${id}`;
    const digest = payloadDigest(payload);
    let started: { resumed: boolean; running: string } | KeptAnswer;
    try {
      started = await this.lookup(key, digest);
    } catch (e) {
      return { kind: 'answer', answer: refusal(503, 'payment_identifier_store_unavailable', `${(e as Error).message}; nothing was settled`) };
    }
    if ('status' in started) return { kind: 'answer', answer: started };
    const { resumed, running } = started;
    return {
      kind: 'run',
      resumed,
      finish: async (answer) => {
        // A larger answer is sent but not kept: the id stays open for a resend.
        const kept = isFinal(answer) && Buffer.byteLength(answer.body, 'base64') <= MAX_KEPT_BYTES;
        const next: Entry = kept ? { digest, phase: 'done', answer } : { digest, phase: 'open' };
        // A store that fails here leaves the id running until its lease ends: a resend then
        // runs again, as after a lost process.
        await this.store.replaceIf(key, running, JSON.stringify(next), this.ttlMs).catch(() => false);
      },
    };
  }

  private async lookup(key: string, digest: string): Promise<{ resumed: boolean; running: string } | KeptAnswer> {
    const started = Date.now();
    let pause = 10;
    for (;;) {
      const running = JSON.stringify({ digest, phase: 'running', since: Date.now() } satisfies Entry);
      const held = await this.store.claim(key, running, this.ttlMs);
      if (held === undefined) return { resumed: false, running };
      const entry = JSON.parse(held) as Entry;
      if (entry.digest !== digest) {
        return refusal(409, 'payment_identifier_conflict', `extensions["${PAYMENT_IDENTIFIER}"].info.id: this id was used with another payment`);
      }
      if (entry.phase === 'done') return entry.answer;
      const lost = entry.phase === 'open' || Date.now() - entry.since > this.leaseMs;
      if (lost) {
        if (await this.store.replaceIf(key, held, running, this.ttlMs)) return { resumed: true, running };
        continue;
      }
      if (Date.now() - started >= this.waitMs) {
        const r = refusal(503, 'payment_in_progress', 'the first request with this payment id is still running: send the same payment again shortly');
        r.headers.push(['retry-after', '1']);
        return r;
      }
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 200);
    }
  }
}

/** Whether an answer is the payment's last word: not a 5xx, not a settlement still pending. */
function isFinal(answer: KeptAnswer): boolean {
  if (answer.status >= 500) return false;
  const header = answer.headers.find(([k]) => k.toLowerCase() === PAYMENT_RESPONSE.toLowerCase())?.[1];
  if (!header) return true;
  try {
    return (decodePaymentResponseHeader(header) as { errorReason?: string }).errorReason !== 'settlement_pending';
  } catch {
    return true;
  }
}

function refusal(status: number, error: string, message: string): KeptAnswer {
  return {
    status,
    headers: [['content-type', 'application/json']],
    body: Buffer.from(JSON.stringify({ error, message })).toString('base64'),
  };
}
