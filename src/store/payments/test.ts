// The built-in test provider (PAYMENT_PROVIDER=test, the default): no money moves. A checkout is a page
// on the service (`/billing/test-checkout/<token>`) whose Pay button completes the payment through the
// same code path as a provider callback (core/billing.ts completeTestCheckout).

import { createHmac, randomBytes } from 'node:crypto';
import type { CreateSubscription, PaymentProvider, ProviderSubscription } from './types.js';

export const TEST_CHECKOUT_PATH = '/billing/test-checkout/';

export class TestPaymentProvider implements PaymentProvider {
  readonly name = 'test' as const;
  readonly keyId = 'test_key_slipway';

  constructor(
    private readonly baseUrl: string,
    readonly webhookSecret: string | undefined,
    /** HMAC key of the checkout link tokens (a sub-key of SECRETS_KEY). */
    private readonly checkoutKey: Buffer,
  ) {}

  async createSubscription(
    _input: CreateSubscription,
  ): Promise<ProviderSubscription & { checkoutToken: string }> {
    const id = `sub_test_${randomBytes(9).toString('base64url')}`;
    return { id, status: 'created', currentEnd: null, ...this.checkoutLink(id) };
  }

  /**
   * The link that pays for the subscription: its token is HMAC-SHA256(checkoutKey, id), 256 bits no one
   * can derive without SECRETS_KEY; the service keeps only the token's hash.
   */
  checkoutLink(subscriptionId: string): { shortUrl: string; checkoutToken: string } {
    const checkoutToken = createHmac('sha256', this.checkoutKey)
      .update(`test-checkout:${subscriptionId}`)
      .digest('base64url');
    return { shortUrl: `${this.baseUrl}${TEST_CHECKOUT_PATH}${checkoutToken}`, checkoutToken };
  }

  /** Nothing to call: the caller applies the cancellation to its own record. */
  async cancelSubscription(_id: string): Promise<null> {
    return null;
  }
}
