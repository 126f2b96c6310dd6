// The SDK's errors: every one names the field or the step that failed.

/** Bad input: `field` names what was wrong. */
export class TrustGateInputError extends Error {
  readonly field: string;
  constructor(field: string, reason: string) {
    super(`${field}: ${reason}`);
    this.name = 'TrustGateInputError';
    this.field = field;
  }
}

/** An account the call needs does not exist (`what` names it). */
export class AccountNotFoundError extends Error {
  readonly what: string;
  readonly address: string;
  constructor(what: string, address: string) {
    super(`${what} ${address} does not exist`);
    this.name = 'AccountNotFoundError';
    this.what = what;
    this.address = address;
  }
}

/** A simulation or transaction failed; `logs` holds the program logs (summarized). */
export class TransactionFailedError extends Error {
  readonly err: unknown;
  readonly logs: string[];
  constructor(what: string, err: unknown, logs: readonly string[]) {
    super(`${what} failed: ${JSON.stringify(err, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}${logs.length ? `\n${summarizeLogs(logs, 400)}` : ''}`);
    this.name = 'TransactionFailedError';
    this.err = err;
    this.logs = [...logs];
  }
}

/**
 * The last program log lines that fit in `limit` characters, joined by " | ", without the
 * "success" and "consumed" lines (as the Rust SDK's `summarize_logs`).
 */
export function summarizeLogs(logs: readonly string[], limit: number): string {
  const interesting = logs.filter((l) => !l.endsWith(' success') && !l.includes(' consumed '));
  const out: string[] = [];
  let len = 0;
  for (const line of [...interesting].reverse()) {
    if (len + line.length + 3 > limit && out.length) break;
    len += line.length + 3;
    out.push(line);
  }
  const s = out.reverse().join(' | ').slice(0, limit);
  return s || '(no logs)';
}

/**
 * Configuration tried to turn atomic settlement off, or spelled "on" as anything but the
 * boolean `true`. trust-gate never settles a payment outside one transaction of
 * [gate_payment_strict, TransferChecked, emit_feedback].
 */
export class AtomicityNotEnforcedError extends Error {
  /** What the configuration held, as JSON. */
  readonly got: string;
  constructor(got: unknown) {
    const shown = got === undefined ? 'undefined' : JSON.stringify(got);
    super(
      `atomicityEnforced must be the boolean true, got ${shown}: trust-gate never settles a payment outside one transaction of [gate_payment_strict, TransferChecked, emit_feedback]`,
    );
    this.name = 'AtomicityNotEnforcedError';
    this.got = shown;
  }
}

/** The atomicity guard: returns `true` for the boolean `true` and throws for anything else. */
export function assertAtomicityEnforced(value: unknown): true {
  if (value !== true) throw new AtomicityNotEnforcedError(value);
  return true;
}
