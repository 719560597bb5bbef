// Razorpay subscriptions over its REST API (https://razorpay.com/docs/api/payments/subscriptions/):
// Basic auth of key id and secret, JSON bodies, times in Unix seconds. The official `razorpay` package
// fixes its base URL to api.razorpay.com (tests need a local stand-in), so this is `fetch` with a timeout.

import type { CreateSubscription, PaymentProvider, ProviderSubscription } from './types.js';
import { PaymentProviderError } from './types.js';

/** A provider call that has not answered in this long fails (the API answers 500 INTERNAL_ERROR). */
export const PROVIDER_TIMEOUT_MS = 10_000;
/** Monthly charges a subscription may make (Razorpay requires a count): ten years. */
const TOTAL_COUNT = 120;

export interface RazorpayOptions {
  keyId: string;
  keySecret: string;
  planId: string;
  webhookSecret: string;
  /** Base URL without `/v1` (RAZORPAY_API_URL). */
  apiUrl: string;
}

interface RazorpaySubscription {
  id: string;
  status: string;
  short_url?: string | null;
  current_end?: number | null;
}

export class RazorpayProvider implements PaymentProvider {
  readonly name = 'razorpay' as const;
  readonly keyId: string;
  readonly webhookSecret: string;
  private readonly authorization: string;

  constructor(private readonly options: RazorpayOptions) {
    this.keyId = options.keyId;
    this.webhookSecret = options.webhookSecret;
    this.authorization = `Basic ${Buffer.from(`${options.keyId}:${options.keySecret}`).toString('base64')}`;
  }

  async createSubscription(input: CreateSubscription): Promise<ProviderSubscription> {
    const entity = await this.call('POST', '/v1/subscriptions', {
      plan_id: this.options.planId,
      total_count: TOTAL_COUNT,
      quantity: 1,
      customer_notify: 1,
      notes: { account_id: input.accountId, email: input.email },
    });
    return toSubscription(entity);
  }

  async getSubscription(id: string): Promise<ProviderSubscription> {
    return toSubscription(await this.call('GET', `/v1/subscriptions/${encodeURIComponent(id)}`));
  }

  /** Cancels now (not at the cycle end): the plan still runs until the paid period's end (decisions.md). */
  async cancelSubscription(id: string): Promise<ProviderSubscription> {
    const entity = await this.call('POST', `/v1/subscriptions/${encodeURIComponent(id)}/cancel`, {
      cancel_at_cycle_end: 0,
    });
    return toSubscription(entity);
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<RazorpaySubscription> {
    let res: Response;
    try {
      res = await fetch(`${this.options.apiUrl}${path}`, {
        method,
        headers: {
          authorization: this.authorization,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
      });
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      throw new PaymentProviderError(
        timedOut
          ? `The payment provider did not answer within ${PROVIDER_TIMEOUT_MS / 1000} s; try again shortly.`
          : 'The payment provider could not be reached; try again shortly.',
        { cause: err },
      );
    }
    let json: unknown;
    try {
      json = await res.json();
    } catch (err) {
      throw new PaymentProviderError(`The payment provider answered HTTP ${res.status} without JSON.`, {
        cause: err,
      });
    }
    if (!res.ok) {
      const description = (json as { error?: { description?: unknown } })?.error?.description;
      throw new PaymentProviderError(
        `The payment provider refused the request (HTTP ${res.status}${typeof description === 'string' ? `: ${description.slice(0, 200)}` : ''}).`,
      );
    }
    const entity = json as Partial<RazorpaySubscription>;
    if (typeof entity.id !== 'string' || typeof entity.status !== 'string') {
      throw new PaymentProviderError('The payment provider answered with an unexpected body.');
    }
    return entity as RazorpaySubscription;
  }
}

function toSubscription(entity: RazorpaySubscription): ProviderSubscription {
  return {
    id: entity.id,
    status: entity.status,
    shortUrl: entity.short_url ?? '',
    currentEnd: typeof entity.current_end === 'number' ? entity.current_end * 1000 : null,
  };
}
