// The x402 client side: a `SchemeNetworkClient` of the `trust-gate` scheme for @x402/core's
// `x402Client`, so that `wrapFetchWithPayment(fetch, client)` from @x402/fetch pays a gated
// resource: it reads `extra.gate`, composes the settlement and signs as the payer; the
// facilitator co-signs as fee payer when it settles.

import type { TransactionSigner } from '@solana/kit';
import type { x402Client } from '@x402/core/client';
import type { PaymentPayloadContext, PaymentPayloadResult, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import type { TrustGateRpc } from '../chain.js';
import { TrustGateInputError } from '../errors.js';
import type { ProgramIds } from '../ids.js';
import type { ComputeBudget } from '../instructions.js';
import { rpcOf } from '../rpc.js';
import { compose, toBase64, transaction } from '../settle.js';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { PAYMENT_SIGNATURE, SCHEME_TRUST_GATE } from '../headers.js';
import { paymentIdentifierClient, paymentIdOf } from './payment-identifier.js';
import { prepare } from './prepare.js';

export interface TrustGateClientOptions {
  /** The payer agent's owner or agent wallet: signs the transfer. */
  signer: TransactionSigner;
  rpcUrl?: string;
  rpc?: TrustGateRpc;
  /** Program ids that differ from the network's defaults. */
  programIds?: Partial<ProgramIds>;
  /** CAIP-2 networks (patterns) to pay on; default every Solana network, `solana:*`. */
  networks?: string[];
  /** An optional priority fee. */
  computeBudget?: ComputeBudget;
}

export class TrustGateClientScheme implements SchemeNetworkClient {
  readonly scheme = SCHEME_TRUST_GATE;
  private readonly rpc: TrustGateRpc;
  // The resource of each offer being paid (the feedback's endpoint), filled by the
  // before-creation hook that `registerTrustGateScheme` installs: the scheme itself is
  // handed only the requirements.
  private readonly resources = new WeakMap<object, string>();

  constructor(private readonly options: TrustGateClientOptions) {
    this.rpc = rpcOf(options);
  }

  rememberResource(requirements: object, url: string | undefined): void {
    if (url) this.resources.set(requirements, url);
  }

  async createPaymentPayload(
    x402Version: number,
    requirements: PaymentRequirements,
    context?: PaymentPayloadContext,
  ): Promise<PaymentPayloadResult> {
    if (x402Version !== 2) throw new TrustGateInputError('x402Version', `${x402Version}: the trust-gate scheme is x402 v2`);
    if (!/^\d+$/.test(requirements.amount)) throw new TrustGateInputError('amount', `${JSON.stringify(requirements.amount)} is not base units`);
    const cap = context?.maxAmountPerPayment;
    if (cap !== undefined && BigInt(requirements.amount) > BigInt(cap)) {
      throw new TrustGateInputError('amount', `${requirements.amount} is above this client's spend cap ${cap}`);
    }
    const url = this.resources.get(requirements) ?? '';
    const p = await prepare(this.rpc, requirements, url, this.options.signer, this.options.programIds, this.options.computeBudget);
    const ixs = await compose(p.builder, p.settlement, true);
    const { value: lifetime } = await this.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const tx = await transaction(p.feePayer, ixs, p.tables, lifetime);
    return { x402Version: 2, payload: { transaction: toBase64(tx) } };
  }
}

/**
 * Registers the trust-gate scheme on an @x402/core `x402Client` (for every Solana network
 * unless `networks` says otherwise), with payment ids where a 402 declares them
 * (`paymentIdentifierClient`), and returns the client.
 */
export function registerTrustGateScheme(client: x402Client, options: TrustGateClientOptions): x402Client {
  const scheme = new TrustGateClientScheme(options);
  for (const network of options.networks ?? ['solana:*']) client.register(network as `${string}:${string}`, scheme);
  client.onBeforePaymentCreation(async (ctx) => {
    scheme.rememberResource(ctx.selectedRequirements, ctx.paymentRequired.resource?.url);
  });
  return client.registerExtension(paymentIdentifierClient);
}

/** How many times `resendPaid` sends a paid request again. */
export const RESENDS = 3;

/**
 * A fetch that sends a paid request (one with PAYMENT-SIGNATURE) again, the same bytes, when
 * its answer is lost (a transport error) or is a 503 with Retry-After (the first attempt of
 * its payment id still running), up to `resends` times: with a payment id, the server
 * answers the resend with the first attempt's outcome and nothing is paid twice. Give it to
 * @x402/fetch: `wrapFetchWithPayment(resendPaid(fetch), client)`. A request without a
 * payment, or a paid one without an id, is sent once.
 */
export function resendPaid(inner: typeof fetch = fetch, resends = RESENDS): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const signature = request.headers.get(PAYMENT_SIGNATURE);
    if (!signature || !carriesId(signature)) return inner(request);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= resends;
      let res: Response;
      try {
        res = await inner(request.clone());
      } catch (e) {
        if (last) throw e;
        continue;
      }
      const after = res.headers.get('retry-after');
      if (res.status !== 503 || after === null || last) return res;
      await res.body?.cancel();
      const seconds = Number(after);
      await new Promise((r) => setTimeout(r, Math.min(Number.isFinite(seconds) ? seconds : 1, 10) * 1000));
    }
  };
}

function carriesId(signature: string): boolean {
  try {
    return paymentIdOf(decodePaymentSignatureHeader(signature)) !== undefined;
  } catch {
    return false;
  }
}
