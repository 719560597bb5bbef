// Table row types for Kysely. Timestamps are integer milliseconds since the epoch (portable across
// SQLite INTEGER and PostgreSQL BIGINT); booleans are 0/1 integers for the same reason.

import type { Generated } from 'kysely';

export interface AccountTable {
  id: string;
  /** Lowercased, trimmed. */
  email: string;
  plan: 'free' | 'hobby';
  handle: string | null;
  /** SHA-256 hex of the current API key; null until the first sign-in completes. */
  api_key_hash: string | null;
  /**
   * A `hobby` plan whose subscription stopped renewing (pending, halted, cancelled, completed) runs
   * until this time (ms), then the account is `free` (core/billing.ts effectivePlan); null = no end.
   */
  plan_until: Generated<number | null>;
  /** Set by an operator (migration 015): its keys, tokens and sessions answer 401, its sites 403. */
  suspended_at: Generated<number | null>;
  suspended_reason: Generated<string | null>;
  /** Live sites owned (kept by tables/site.ts in the transaction of every change that moves it). */
  site_count: Generated<number>;
  /** Bytes of the current versions of those sites (CONTRACT "Account"), kept the same way. */
  stored_bytes: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** At most one live sign-in code per email: requesting a new code replaces the old one. */
export interface LoginCodeTable {
  email: string;
  /** HMAC-SHA256 (keyed by the server secret) of email and code; the code itself is never stored. */
  code_hash: string;
  expires_at: number;
  /** Wrong guesses so far; the code is dead at MAX_CODE_ATTEMPTS. */
  attempts: number;
  created_at: number;
}

export interface SiteTable {
  slug: string;
  owner_id: string | null;
  current_version_id: string | null;
  title: string | null;
  description: string | null;
  og_image_path: string | null;
  /** scrypt hash `scrypt$<salt b64>$<hash b64>`; null = not protected. */
  password_hash: string | null;
  expires_at: number | null;
  /** SHA-256 hex of the claim token of an anonymous site; null once claimed or for owned sites. */
  claim_token_hash: string | null;
  created_at: number;
  updated_at: number;
  /** Tombstone: a deleted site keeps its row so the slug is never reissued. */
  deleted_at: number | null;
  /** Taken down by an operator (migration 015): every host of the site answers 451; content is kept. */
  takedown_at: number | null;
  takedown_reason: string | null;
  /** 1 = the owner switched visitor counting off (issue 25). */
  analytics_off: number;
}

export interface VersionTable {
  id: string;
  site_slug: string;
  status: 'pending' | 'finalized' | 'abandoned';
  created_at: number;
  finalized_at: number | null;
  /** Upload addresses of this version stop working at this time. */
  upload_expires_at: number;
  file_count: number;
  total_size: number;
  /**
   * The version's label (shared/version-label.ts, derived from `id`): its preview host is
   * `<slug>--<label>.<site domain>`. Written by insertVersion; migration 011 filled older rows.
   */
  label: Generated<string | null>;
}

export interface VersionFileTable {
  version_id: string;
  path: string;
  size: number;
  content_type: string;
  /** Hash given in the manifest, if any. */
  expected_hash: string | null;
  /** Hash of the stored bytes; null until uploaded (or skipped by dedup). */
  hash: string | null;
}

/** Index of the blob store: one row per stored content hash (lets dedup and GC avoid listing the store). */
export interface BlobTable {
  hash: string;
  size: number;
  created_at: number;
}

/** A blob's secret-scan result, kept per scanner version (blobs are immutable, so it never goes stale). */
export interface BlobScanTable {
  hash: string;
  scanner_version: string;
  /** JSON array of findings ({type, line, variableName, proxyHosts}); never the secret itself. */
  findings: string;
  scanned_at: number;
}

/** A site variable, encrypted with AES-256-GCM (core/variables.ts); the value is never stored in clear. */
export interface SiteVariableTable {
  site_slug: string;
  name: string;
  /** Which server key encrypted it (a fingerprint of the key), so keys can be rotated. */
  key_id: string;
  /** base64 of nonce (12 bytes) + ciphertext + GCM tag (16 bytes). */
  ciphertext: string;
  created_at: number;
  updated_at: number;
}

/** A hostname the site proxy may reach for this site. */
export interface SiteProxyHostTable {
  site_slug: string;
  /** Lowercase ASCII (IDN as punycode). */
  hostname: string;
  created_at: number;
  updated_at: number;
}

/** A subscription at the payment provider (spec "Subscription"), as its newest applied event left it. */
export interface SubscriptionTable {
  /** The provider's id (`sub_...`). */
  id: string;
  account_id: string;
  provider: 'test' | 'razorpay';
  /** created, authenticated, active, pending, halted, cancelled, completed, expired. */
  status: string;
  /** The provider's checkout page (`short_url`); '' for the test provider, whose link holds a secret token. */
  short_url: string;
  /** End of the paid period (ms), from the provider; null before the first charge. */
  current_end: number | null;
  /** `created_at` (ms) of the newest provider event applied: an older one never undoes it. */
  event_at: number;
  /**
   * Test provider: SHA-256 hex of the checkout link's token (the token itself is never stored). It stays
   * after the payment: the link is spent once the subscription is no longer `created`/`authenticated`.
   */
  checkout_token_hash: string | null;
  created_at: number;
  updated_at: number;
}

/** Provider events already applied (webhook replays change nothing). */
export interface BillingEventTable {
  id: string;
  received_at: number;
}

/**
 * An account's entry of a custom domain (spec "Custom domain"). Key: domain + account; several accounts
 * may hold a domain `pending`, at most one entry per domain is `active` (the one DNS proved).
 */
export interface DomainTable {
  /** Lowercase ASCII (IDN as punycode). */
  domain: string;
  account_id: string;
  status: 'pending' | 'active';
  /** The TXT record's value is `service-verify=<token>`. */
  token: string;
  created_at: number;
  verified_at: number | null;
  /** When the TLS front end first asked for a certificate for it (GET /internal/tls-ask), or the service first served its own. */
  tls_requested_at: number | null;
  /** The last failure to obtain its certificate on demand (null once one is served). */
  tls_error: string | null;
}

/** A certificate obtained on demand over ACME, and the state of its (re)issuance. */
export interface TlsCertificateTable {
  /** The DNS name it is for (lowercase ASCII). */
  name: string;
  /** PEM chain, leaf first (null until the first issuance succeeds). */
  cert_pem: string | null;
  /** The private key, sealed with the `tls-keys` sub-key of SECRETS_KEY. */
  key_sealed: string | null;
  not_after: number | null;
  issued_at: number | null;
  last_error: string | null;
  /** Failures in a row (the backoff's exponent); 0 after a success. */
  failures: number;
  /** No new order before this time (backoff after a failure). */
  next_attempt_at: number | null;
  updated_at: number;
}

/** A pending ACME challenge: `http-01` (id = its token, value = key authorization) or `tls-alpn-01` (id = `alpn:<name>`, value = its certificate). */
export interface AcmeChallengeTable {
  id: string;
  name: string;
  kind: 'http-01' | 'tls-alpn-01';
  value: string;
  key_pem: string | null;
  created_at: number;
}

export interface AcmeAccountTable {
  directory_url: string;
  key_sealed: string;
  created_at: number;
}

/** A site mounted at a location of its owner's handle (`domain` = '') or of one of their domains. */
export interface LinkTable {
  id: string;
  account_id: string;
  site_slug: string;
  domain: string;
  /** `/` or `/a/b` (no trailing slash). */
  location: string;
  created_at: number;
}

/** A browser session of the web pages; the cookie's token is never stored, only its SHA-256. */
/** One recorded change (core/audit.ts): who, from where, when, what. Never a secret or a variable value. */
export interface AuditTable {
  /**
   * `aud_<ms, 15 digits><the process's count of that ms, 8 hex><random>`: sorts by time (and by recording
   * within a process), so it doubles as the page cursor.
   */
  id: string;
  /** The account whose things changed; null for an operator action on no account (a block). */
  account_id: string | null;
  at: number;
  actor_kind: 'key' | 'session' | 'token' | 'operator' | 'system';
  /** Key or session fingerprint, deploy token id, operator account id; null for the system. */
  actor_id: string | null;
  /** The client address (src/core/client-address.ts); null for the system. */
  ip: string | null;
  action: string;
  target: string;
  /** JSON object. */
  details: string;
}

export interface SessionTable {
  token_hash: string;
  account_id: string;
  created_at: number;
  expires_at: number;
}

/** A named alias of a site (`<slug>--<name>.<site domain>`) pointing at one of its finalized versions. */
export interface SiteAliasTable {
  site_slug: string;
  /** 1-30 of a-z0-9-, starting with a letter (core/aliases.ts). */
  name: string;
  version_id: string;
  created_at: number;
  updated_at: number;
}

/** A deploy token (issue 24): may publish one site of its owner; the token itself is never stored. */
export interface DeployTokenTable {
  /** `dtk_...`, what the owner revokes it by. */
  id: string;
  site_slug: string;
  /** The site's owner when it was created (a token is only honoured while it still owns the site). */
  account_id: string;
  name: string;
  /** SHA-256 hex of the token. */
  token_hash: string;
  created_at: number;
  expires_at: number;
  /** When a request last authenticated with it (kept to the minute); null = never used. */
  last_used_at: number | null;
}

/** An operator's block (core/operators.ts): what it names is refused at sign-in, anonymous publish or finalize. */
export interface BlockTable {
  id: string;
  kind: 'email' | 'email_domain' | 'ip' | 'hash';
  /** Normalised: lowercased address or domain, an address or CIDR range, 64 lowercase hex digits. */
  value: string;
  reason: string;
  /** The operator's account id; null = written by the system. */
  created_by: string | null;
  created_at: number;
}

/** A webhook endpoint of an account (CONTRACT "Webhooks"); its secret is sealed, never stored in clear. */
export interface WebhookEndpointTable {
  /** `whk_...` */
  id: string;
  account_id: string;
  /** One site's events only; null = every site of the account (and its domains). */
  site_slug: string | null;
  url: string;
  /** JSON array of event names. */
  events: string;
  /** Which server key sealed the secret (a fingerprint of the key). */
  key_id: string;
  /** The `whsec_...` secret, AES-256-GCM sealed with the `webhooks` sub-key of SECRETS_KEY. */
  secret_sealed: string;
  created_at: number;
}

/** One event for one endpoint: the queue the sender works through, and the delivery log the owner reads. */
export interface WebhookDeliveryTable {
  /** `msg_...`: the `webhook-id` header, the same on every attempt (the receiver's idempotency key). */
  id: string;
  endpoint_id: string;
  event: string;
  /** The JSON body as sent: {type, timestamp, data}. */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: Generated<number>;
  /** When the next attempt is due (pending); while one is under way, when it may be taken over. */
  next_attempt_at: number | null;
  /** No attempt starts after this (24 h after it was queued or redelivered): the delivery then fails. */
  give_up_at: number;
  last_status_code: number | null;
  /** Why the last attempt failed, in a few words (never the receiver's body). */
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
  updated_at: number;
}

/** A `site.expiring` already queued for this site and expiry time (never twice). */
export interface WebhookExpiryNoticeTable {
  site_slug: string;
  expires_at: number;
  created_at: number;
}

/** An abuse report (issue 26): sent by anyone through POST /api/v1/reports or the /report form. */
export interface ReportTable {
  id: string;
  /** The reported address as sent (an http(s) URL on a site host or an active custom domain). */
  url: string;
  /** Its lowercase host. */
  host: string;
  /** The site the host names, when it names one (null: a handle or custom-domain host). */
  site_slug: string | null;
  category: 'phishing' | 'malware' | 'spam' | 'copyright' | 'other';
  details: string;
  contact: string | null;
  /** The reporter's client address (the rate limit's subject), for the operators. */
  reporter_ip: string;
  /** `open` until an operator acts on it. */
  status: 'open' | 'closed';
  created_at: number;
}

/** Visit counts of a site for one hour or one UTC day (core/analytics.ts). */
export interface AnalyticsCountTable {
  slug: string;
  granularity: 'hour' | 'day';
  /** Epoch ms of the hour or day's start. */
  start: number;
  page_views: number;
  bytes: number;
  not_found: number;
  bots: number;
  status_1xx: number;
  status_2xx: number;
  status_3xx: number;
  status_4xx: number;
  status_5xx: number;
  /** Estimate of `sketch` (so lists need not decode sketches). */
  visitors: number;
  /** HyperLogLog registers of the visitor hashes (core/hll.ts); null = no page view yet. */
  sketch: string | null;
}

/** Page views by path, by referrer host, and 404s by path, of a site's UTC day. */
export interface AnalyticsKeyTable {
  slug: string;
  day: number;
  kind: string;
  key: string;
  count: number;
}

/** The salt of visitor hashes of the current UTC day (deleted once the day is over). */
export interface AnalyticsSaltTable {
  day: number;
  salt: string;
}

export interface Database {
  analytics_counts: AnalyticsCountTable;
  analytics_keys: AnalyticsKeyTable;
  analytics_salts: AnalyticsSaltTable;
  accounts: AccountTable;
  login_codes: LoginCodeTable;
  sites: SiteTable;
  versions: VersionTable;
  version_files: VersionFileTable;
  blobs: BlobTable;
  blob_scans: BlobScanTable;
  site_variables: SiteVariableTable;
  site_proxy_hosts: SiteProxyHostTable;
  subscriptions: SubscriptionTable;
  billing_events: BillingEventTable;
  domains: DomainTable;
  links: LinkTable;
  sessions: SessionTable;
  site_aliases: SiteAliasTable;
  deploy_tokens: DeployTokenTable;
  tls_certificates: TlsCertificateTable;
  acme_challenges: AcmeChallengeTable;
  acme_accounts: AcmeAccountTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_expiry_notices: WebhookExpiryNoticeTable;
  audit_log: AuditTable;
  reports: ReportTable;
  blocks: BlockTable;
  /** Kysely's own bookkeeping lives in kysely_migration; listed here only for raw checks. */
  _meta?: { key: Generated<string> };
}
