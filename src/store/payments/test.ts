// The built-in test provider (PAYMENT_PROVIDER=test, the default): no money moves. A checkout is a page
// on the service (`/billing/test-checkout/<token>`) whose Pay button completes the payment through the
// same code path as a provider callback (core/billing.ts completeTestCheckout).

import { randomBytes } from 'node:crypto';
import type { CreateSubscription, PaymentProvider, ProviderSubscription } from './types.js';

export const TEST_CHECKOUT_PATH = '/billing/test-checkout/';

export class TestPaymentProvider implements PaymentProvider {
  readonly name = 'test' as const;
  readonly keyId = 'test_key_slipway';

  constructor(
    private readonly baseUrl: string,
    readonly webhookSecret: string | undefined,
  ) {}

  async createSubscription(
    _input: CreateSubscription,
  ): Promise<ProviderSubscription & { checkoutToken: string }> {
    const checkoutToken = randomBytes(24).toString('base64url');
    return {
      id: `sub_test_${randomBytes(9).toString('base64url')}`,
      status: 'created',
      shortUrl: `${this.baseUrl}${TEST_CHECKOUT_PATH}${checkoutToken}`,
      currentEnd: null,
      checkoutToken,
    };
  }

  /** Nothing to call: the caller applies the cancellation to its own record. */
  async cancelSubscription(_id: string): Promise<null> {
    return null;
  }
}
