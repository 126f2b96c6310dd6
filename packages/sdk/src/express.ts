// Express glue (express is an optional peer dependency, ^4.21 || ^5): `mountTrustGate` adds
// the facilitator's mountable routes, POST /verify and GET /receipt/:paymentIdHashHex,
// `gateDecision` answers a payer the gate refuses before any x402 challenge is issued, and
// `paidOnce` answers a payment id once (x402's `payment-identifier`).

import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Address } from '@solana/kit';
import { apiError, createFacilitator, decisionHeaders, type Answer, type FacilitatorConfig } from './facilitator.js';
import { PAYMENT_SIGNATURE, X_GATE_APPROVAL_ID, X_PAYMENT_NETWORK } from './headers.js';
import { keepDecidedHoldback, payerAgentOf, X_GATE_DECIDED_HOLDBACK, type HeaderReader } from './x402/server.js';
import { holdbackTermsOf } from './x402/wire.js';
import { PaidOnce, type KeptAnswer } from './x402/paid-once.js';

/** Request bodies above this are refused with 413 (the facilitator's limit). */
export const BODY_LIMIT = 64 * 1024;

/** The mount's configuration: a facilitator's (see `createFacilitator`). */
export type MountConfig = FacilitatorConfig;

function send(res: Response, a: Answer): void {
  res.status(a.status).set(a.headers).json(a.body);
}

/** The raw body (up to BODY_LIMIT), or what a body parser mounted before already read. */
async function body(req: Request): Promise<Uint8Array | unknown | 'too-large'> {
  if (Buffer.isBuffer(req.body)) return new Uint8Array(req.body);
  if (req.body !== undefined && req.readableEnded) return req.body;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/** Adds POST /verify and GET /receipt/:paymentIdHashHex to `app`; nothing else. */
export function mountTrustGate(app: Express, config: MountConfig): Express {
  const facilitator = createFacilitator(config);
  app.post('/verify', async (req: Request, res: Response, next: NextFunction) => {
    try {
      const b = await body(req);
      if (b === 'too-large') return send(res, { status: 413, headers: {}, body: { error: 'payload_too_large', message: `body: more than ${BODY_LIMIT} bytes` } });
      send(res, await facilitator.verify(b));
    } catch (e) {
      next(e);
    }
  });
  app.get('/receipt/:paymentIdHashHex', async (req: Request, res: Response, next: NextFunction) => {
    try {
      send(res, await facilitator.receipt(String(req.params.paymentIdHashHex)));
    } catch (e) {
      next(e);
    }
  });
  return app;
}

export interface GateDecisionConfig {
  /** The trust-gate facilitator's URL (its POST /verify decides). */
  facilitatorUrl: string;
  payeeAgentAsset: Address;
  mint: Address;
  /** Base units. */
  amount: bigint;
  policyId: number;
  /** The payer agent of a request (default: the X-Payer-Agent header, else `defaultPayerAgent`). */
  payerAgent?: (header: HeaderReader) => string | undefined;
  defaultPayerAgent?: Address;
}

/**
 * Before a challenge: asks the facilitator whether the request's payer agent may pay, and
 * answers a Deny or RequireValidation itself (402 with the decision headers and body, no
 * challenge), as the trust-gate demo does. An Allow, or a request that carries a payment,
 * goes on to the next handler (`paymentMiddleware`). A RequireApproval (the price is above
 * the payer policy's approval threshold) goes on too, with the decision headers set
 * (X-Gate-Approval-Id: the pending approval's id), as the demo does: the payment passes once
 * the payer agent's members approve it on chain. The decision's holdback terms (the payer's
 * policy holds a share back from this payee) go to the trust-gate server scheme, which states
 * them in the request's signed challenge (`extra.gate.holdback`).
 */
export function gateDecision(config: GateDecisionConfig): RequestHandler {
  const url = `${config.facilitatorUrl.replace(/\/+$/, '')}/verify`;
  const header = X_GATE_DECIDED_HOLDBACK.toLowerCase();
  return async (req: Request, res: Response, next: NextFunction) => {
    // Only this middleware names a decision to the challenge.
    delete req.headers[header];
    if (req.get(PAYMENT_SIGNATURE) || req.get('X-PAYMENT')) return next();
    let payer: Address;
    try {
      payer = payerAgentOf(config, (n) => req.get(n));
    } catch (e) {
      return send(res, apiError(400, 'input_invalid', (e as Error).message));
    }
    let answer: globalThis.Response;
    try {
      answer = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          payerAgentAsset: payer,
          payeeAgentAsset: config.payeeAgentAsset,
          amount: config.amount.toString(),
          mint: config.mint,
          policyId: config.policyId,
        }),
      });
    } catch (e) {
      return send(res, apiError(502, 'facilitator_unavailable', `${url}: ${(e as Error).message}`));
    }
    const b = (await answer.json().catch(() => null)) as {
      decision?: Parameters<typeof decisionHeaders>[0];
      approval?: { id?: unknown };
      holdback?: unknown;
    } | null;
    // The terms the request's challenge states, kept until the request is answered.
    const handOver = (): boolean => {
      if (b?.holdback === undefined || b.holdback === null) return true;
      let terms;
      try {
        terms = holdbackTermsOf(b.holdback, 'holdback');
      } catch (e) {
        send(res, apiError(502, 'facilitator_unexpected', `the facilitator's holdback terms are not readable: ${(e as Error).message}`));
        return false;
      }
      const kept = keepDecidedHoldback({
        payerAgentAsset: payer,
        payeeAgentAsset: config.payeeAgentAsset,
        mint: config.mint,
        amount: config.amount.toString(),
        policyId: config.policyId,
        terms,
      });
      req.headers[header] = kept.token;
      res.once('close', kept.drop);
      return true;
    };
    if (answer.status === 200) return handOver() ? next() : undefined;
    if (answer.status === 402 && b?.decision) {
      const bodyId = typeof b.approval?.id === 'string' ? b.approval.id : undefined;
      const approvalId = answer.headers.get(X_GATE_APPROVAL_ID) ?? bodyId;
      const headers = decisionHeaders(b.decision, answer.headers.get(X_PAYMENT_NETWORK) ?? '', approvalId);
      if (b.decision.kind === 'RequireApproval') {
        if (!handOver()) return;
        res.set(headers);
        return next();
      }
      res.status(402).set(headers).json(b);
      return;
    }
    res.status(answer.status).json(b);
  };
}

/**
 * x402's `payment-identifier` on an Express app (see `PaidOnce`): mount it before the payment
 * middleware (`app.use(paidOnce(p))`, then `paymentMiddleware`), so that a resend is looked
 * up before anything verifies it, and declare the extension in the routes' 402s
 * (`extensions: p.declaration()` in @x402/express's route config). A kept answer is sent
 * back as it was (status, headers with PAYMENT-RESPONSE, body); `res.locals.paymentResumed`
 * is true on a request whose payload was seen before without a final answer.
 */
export function paidOnce(p: PaidOnce): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    let step;
    try {
      step = await p.begin(req.method, req.path, req.get(PAYMENT_SIGNATURE));
    } catch (e) {
      return next(e);
    }
    if (step.kind === 'pass') return next();
    if (step.kind === 'answer') return replay(res, step.answer);
    res.locals.paymentResumed = step.resumed;
    const finish = step.finish;
    // The answer as it leaves (after the payment middleware settled it): kept, then sent.
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (...a: unknown[]) => boolean;
    const end = res.end.bind(res) as (...a: unknown[]) => Response;
    const bytes = (chunk: unknown, encoding: unknown) =>
      Buffer.isBuffer(chunk) ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk) : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    res.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
      if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(bytes(chunk, encoding));
      return write(chunk, encoding, cb);
    }) as Response['write'];
    res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
      if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(bytes(chunk, encoding));
      const headers: [string, string][] = [];
      for (const [k, v] of Object.entries(res.getHeaders())) {
        if (v === undefined || k === 'content-length' || k === 'transfer-encoding') continue;
        for (const one of Array.isArray(v) ? v : [v]) headers.push([k, String(one)]);
      }
      const answer: KeptAnswer = { status: res.statusCode, headers, body: Buffer.concat(chunks).toString('base64') };
      void finish(answer).finally(() => end(chunk, encoding, cb));
      return res;
    }) as Response['end'];
    next();
  };
}

function replay(res: Response, a: KeptAnswer): void {
  res.status(a.status);
  for (const [k, v] of a.headers) res.append(k, v);
  res.end(Buffer.from(a.body, 'base64'));
}
