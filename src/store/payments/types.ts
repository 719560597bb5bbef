// The payment provider (spec "Billing"; CONTRACT "Billing"): subscriptions to the Hobby plan. Two
// implementations: `test` (built in, no money moves) and `razorpay` (its REST API).

/** A subscription as the provider reports it (Razorpay's fields, times in ms). */
export interface ProviderSubscription {
  id: string;
  /** created, authenticated, active, pending, halted, cancelled, completed, expired. */
  status: string;
  /** Where the customer pays. */
  shortUrl: string;
  /** End of the paid period; null before the first charge. */
  currentEnd: number | null;
}

export interface CreateSubscription {
  accountId: string;
  email: string;
}

export interface PaymentProvider {
  readonly name: 'test' | 'razorpay';
  /** The public key id a browser checkout uses (`paymentKeyId`). */
  readonly keyId: string;
  /** Secret of the provider's callbacks (`RAZORPAY_WEBHOOK_SECRET`); undefined = callbacks refused. */
  readonly webhookSecret: string | undefined;
  /**
   * `checkoutToken`: the secret in `shortUrl` when the link itself pays (the test provider); the caller
   * keeps only its hash, never the link.
   */
  createSubscription(input: CreateSubscription): Promise<ProviderSubscription & { checkoutToken?: string }>;
  /**
   * The checkout link of a subscription, for providers whose link carries a secret token (the test
   * provider): derived again from the id each time, so neither the link nor the token is ever stored.
   */
  checkoutLink?(subscriptionId: string): { shortUrl: string; checkoutToken: string };
  cancelSubscription(id: string): Promise<ProviderSubscription | null>;
}

/** The provider could not be reached, timed out, or refused the call; `message` is safe to show. */
export class PaymentProviderError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PaymentProviderError';
  }
}
