// Configuration: every environment variable of CONTRACT.md parsed once into one typed object. VARIABLES is
// the one table of them (name, parse, default, doc): loadConfig reads through it, and the tables of
// README.md and docs/deploy.md are checked against it (test/config-docs.test.ts). Only this module reads
// process.env; a bad value throws ConfigError naming the variable.

import { BlockList, isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { PlanLimits, PlanName } from './core/plans.js';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export type DatabaseConfig = { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string };

export type BlobConfig =
  | { provider: 'disk'; dir: string }
  | {
      provider: 's3';
      bucket: string;
      endpoint: string | undefined;
      region: string;
      accessKeyId: string | undefined;
      secretAccessKey: string | undefined;
      forcePathStyle: boolean;
      /** `WHEN_REQUIRED` keeps bodies plain (no aws-chunked framing) for stores that would keep it verbatim. */
      checksumMode: 'WHEN_REQUIRED' | 'WHEN_SUPPORTED';
    };

export type MailConfig = { transport: 'dev'; outboxFile: string } | { transport: 'smtp'; url: string };

export type PaymentConfig =
  /** `webhookSecret` (RAZORPAY_WEBHOOK_SECRET, optional here) lets signed callbacks in too. */
  | { provider: 'test'; webhookSecret: string | undefined }
  | {
      provider: 'razorpay';
      keyId: string;
      keySecret: string;
      planId: string;
      webhookSecret: string;
      apiUrl: string;
    };

/**
 * TRUST_PROXY: which hops in front of the service are proxies whose X-Forwarded-For entries are believed
 * (src/core/client-address.ts walks the header with it).
 */
export type TrustProxy =
  /** The first `hops` hops counted back from this server are proxies; 0 ignores X-Forwarded-For. */
  | { hops: number }
  /** Hops whose address is in `proxies` are proxies, wherever they stand. */
  | { proxies: BlockList };

export interface Config {
  port: number;
  host: string;
  /** `{base_url}` without a trailing slash, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** Lowercase hostname of BASE_URL (no port): requests with this Host reach the API and pages. */
  baseHost: string;
  /** `{site_domain}` as configured (may carry a port), e.g. `localhost:8080`. */
  siteDomain: string;
  /** Lowercase hostname of SITE_DOMAIN (no port): `<label>.<siteHost>` is a site or handle. */
  siteHost: string;
  /** `http` or `https`, from BASE_URL; site URLs use it too. */
  scheme: 'http' | 'https';
  dataDir: string;
  database: DatabaseConfig;
  blobs: BlobConfig;
  /** Unset = in-process rate limiter and cache invalidation. */
  redisUrl: string | undefined;
  /** REDIS_PREFIX (default `slipway:`): prefix of every Redis key and channel, so deployments can share a Redis. */
  redisPrefix: string;
  mail: MailConfig;
  mailFrom: string;
  /** Unset = the system resolver. Entries are `ip` or `ip:port`. */
  dnsServers: string[] | undefined;
  cnameTarget: string;
  /** Unset = generated once into DATA_DIR/secrets.key (see context.ts). */
  secretsKey: Buffer | undefined;
  proxyEnabled: boolean;
  proxyAllowPrivateAddresses: boolean;
  payments: PaymentConfig;
  rateLimits: { anonymous: number; free: number; hobby: number };
  /** Site-proxy calls per visitor IP and site per hour (RATE_LIMIT_PROXY); the per-site ceiling derives from it. */
  proxyRateLimit: number;
  /** Abuse reports per client IP per hour (RATE_LIMIT_REPORTS, default 10), API and form together. */
  reportRateLimit: number;
  /** ABUSE_CONTACT as a URI (`mailto:...` or `https://...`); undefined = unset. */
  abuseContact: string | undefined;
  /**
   * Sign-in per hour-aligned window, shared by the API and the web form: codes mailed to one address
   * (RATE_LIMIT_SIGNIN_EMAIL, default 5), codes asked for from one client IP (RATE_LIMIT_SIGNIN_IP,
   * default 20), codes checked from one client IP (RATE_LIMIT_SIGNIN_CHECKS, default 30).
   */
  signInLimits: { codesPerEmail: number; codesPerIp: number; checksPerIp: number };
  trustProxy: TrustProxy;
  /** ADMIN_EMAILS, lowercased: accounts with these addresses are operators (core/operators.ts). */
  adminEmails: ReadonlySet<string>;
  logLevel: string;
  /** Operator overrides of the plan table (PLAN_<PLAN>_<LIMIT> variables). */
  planOverrides: Partial<Record<PlanName, Partial<PlanLimits>>>;
  /**
   * WORKERS (default: the cores available): processes serving the API and sites on this node. 1 is one
   * process; more are a primary that supervises them (src/workers/primary.ts).
   */
  workers: number;
  /**
   * SERVE_CACHE_MB (default 256): memory bound of the site server's host, record, manifest and blob caches
   * and the fast path's memoized responses, together, for the whole node (each of WORKERS processes takes
   * its share).
   */
  serveCacheBytes: number;
  /**
   * SERVE_FAST_PATH (default true): plain GET/HEAD requests to site hosts are answered by the site fast
   * path (src/serve/http1/) instead of node:http's request objects. false sends everything through node:http.
   */
  serveFastPath: boolean;
  /** SWEEP_INTERVAL_S (default 300): how often expired sites, stale pending versions, unverified domains and unreferenced blobs are swept. */
  sweepIntervalMs: number;
  /** ANONYMOUS_GRACE_S (default 86400): how long an expired anonymous site stays (answering 410) before it is deleted. */
  anonymousGraceMs: number;
  /** AUDIT_RETENTION_DAYS (default 365): how long audit log entries are kept; the sweeper removes older ones. */
  auditRetentionDays: number;
  /** ANALYTICS_FLUSH_S (default 60): how often visit counters are written; 0 = this node counts nothing. */
  analyticsFlushMs: number;
  /** ANALYTICS_RETENTION_DAYS (default 400): how long daily counts are kept (hourly ones: 7 days). */
  analyticsRetentionDays: number;
  /** TLS_PORT and its certificates; undefined = no TLS listener (a front end such as Caddy terminates TLS). */
  tls: TlsConfig | undefined;
}

export interface TlsConfig {
  port: number;
  /** TLS_CERT_FILE and TLS_KEY_FILE (both or neither). */
  files: { cert: string; key: string } | undefined;
  /** On-demand certificates (ACME_DIRECTORY_URL), undefined = none. */
  acme: { directoryUrl: string; email: string | undefined; caFile: string | undefined } | undefined;
}

type Env = Record<string, string | undefined>;

// ---- value parsers: each throws ConfigError naming its variable ----------------------------------------

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/** More processes than this on one node is a typo, not a deployment. */
const MAX_WORKERS = 256;
/** Hop counts beyond this are a typo, not a deployment. */
const MAX_TRUSTED_HOPS = 16;

/** A whole number in `min..max`. */
const wholeNumber =
  (min = 0, max = Number.MAX_SAFE_INTEGER) =>
  (v: string, name: string): number => {
    if (!/^\d+$/.test(v)) throw new ConfigError(name, `expected a whole number, got "${v}"`);
    const n = Number(v);
    if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
    return n;
  };

function boolean(value: string, name: string): boolean {
  const v = value.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `expected true or false, got "${v}"`);
}

const text = (v: string): string => v;

function url(name: string, value: string, protocols: string[]): URL {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `not a valid URL: "${value}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.join(' or ')} URL, got "${parsed.protocol}"`);
  }
  return parsed;
}

/** A URL of one of `protocols`, kept as written. */
const urlOf =
  (...protocols: string[]) =>
  (v: string, name: string): string => {
    url(name, v, protocols);
    return v;
  };

function origin(v: string, name: string): URL {
  const base = url(name, v, ['http:', 'https:']);
  if (base.pathname !== '/' || base.search || base.hash) {
    throw new ConfigError(name, 'must be an origin without path, query or fragment');
  }
  return base;
}

/** A host with an optional port, as in SITE_DOMAIN (`example.com`, `localhost:8080`). */
function hostWithPort(value: string, name: string): { host: string; hostname: string } {
  const parsed = url(name, `http://${value}`, ['http:']);
  if (
    parsed.pathname !== '/' ||
    parsed.search ||
    parsed.username ||
    `${parsed.host}` !== value.toLowerCase()
  ) {
    throw new ConfigError(name, `expected a host name with an optional port, got "${value}"`);
  }
  return { host: parsed.host, hostname: parsed.hostname };
}

function mailbox(v: string, name: string): string {
  if (!/^[^\r\n]*<?[^\s@<>]+@[^\s@<>]+>?$/.test(v))
    throw new ConfigError(name, `not an email address: "${v}"`);
  return v;
}

/** ABUSE_CONTACT: an email address, a `mailto:` or an https URL; kept as a URI for security.txt. */
function abuseContact(v: string, name: string): string {
  if (/^https:\/\/[^\s<>"]+$/.test(v)) return new URL(v).href;
  const email = v.replace(/^mailto:/i, '');
  if (!/^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(email))
    throw new ConfigError(name, `not an email address or https URL: "${v}"`);
  return `mailto:${email}`;
}

function logLevel(value: string, name: string): string {
  const v = value.toLowerCase();
  if (!LOG_LEVELS.includes(v)) {
    throw new ConfigError(name, `expected one of ${LOG_LEVELS.join(', ')}, got "${v}"`);
  }
  return v;
}

function secretsKey(v: string, name: string): Buffer {
  const key = Buffer.from(v, 'base64');
  if (key.length !== 32) throw new ConfigError(name, `must be 32 bytes in base64, got ${key.length} bytes`);
  return key;
}

function dnsServers(v: string, name: string): string[] {
  const servers = v.split(',').map((s) => s.trim());
  for (const s of servers) {
    // ip, ip:port, [ipv6]:port or bare ipv6
    const ok =
      /^(\d{1,3}(\.\d{1,3}){3})(:\d{1,5})?$/.test(s) ||
      /^\[[0-9a-f:.]+\](:\d{1,5})?$/i.test(s) ||
      /^[0-9a-f:]+$/i.test(s);
    if (!ok) throw new ConfigError(name, `expected a comma list of ip or ip:port, got "${s}"`);
  }
  return servers;
}

/** ADMIN_EMAILS: a comma list of addresses, lowercased (sign-in stores addresses lowercased). */
function adminEmails(v: string, name: string): ReadonlySet<string> {
  const out = new Set<string>();
  for (const part of v.split(',')) {
    const email = part.trim().toLowerCase();
    if (email === '') continue;
    if (!/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/.test(email)) {
      throw new ConfigError(name, `expected a comma list of email addresses, got "${part.trim()}"`);
    }
    out.add(email);
  }
  return out;
}

function trustProxy(value: string, name: string): TrustProxy {
  const v = value.toLowerCase();
  if (['false', 'no', 'off'].includes(v)) return { hops: 0 };
  if (['true', 'yes', 'on'].includes(v)) return { hops: 1 };
  if (/^\d+$/.test(v)) return { hops: wholeNumber(0, MAX_TRUSTED_HOPS)(v, name) };
  const proxies = new BlockList();
  for (const entry of v.split(',').map((e) => e.trim())) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const maxPrefix = family === 4 ? 32 : 128;
    const bits = prefix === undefined ? maxPrefix : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (family === 0 || extra !== undefined || bits < 0 || bits > maxPrefix) {
      throw new ConfigError(
        name,
        `expected true, false, a number of trusted hops, or the proxies' IP addresses or CIDRs separated by commas; got "${entry}"`,
      );
    }
    // Trusting every address would let any client write its own address again.
    if (bits === 0) throw new ConfigError(name, `"${entry}" would trust every address as a proxy`);
    proxies.addSubnet(address, bits, family === 4 ? 'ipv4' : 'ipv6');
  }
  return { proxies };
}

function checksumMode(value: string, name: string): 'WHEN_REQUIRED' | 'WHEN_SUPPORTED' {
  const v = value.toUpperCase();
  if (v !== 'WHEN_REQUIRED' && v !== 'WHEN_SUPPORTED') {
    throw new ConfigError(name, `expected WHEN_REQUIRED or WHEN_SUPPORTED, got "${v}"`);
  }
  return v;
}

function paymentProvider(v: string, name: string): PaymentConfig['provider'] {
  if (v !== 'test' && v !== 'razorpay') throw new ConfigError(name, `expected test or razorpay, got "${v}"`);
  return v;
}

// ---- the table ---------------------------------------------------------------------------------------

/** Plan limits an operator may override, by the suffix of their variable (`PLAN_FREE_MAX_SITES`). */
const PLAN_LIMIT_SUFFIXES = {
  MAX_SITES: 'maxSites',
  MAX_STORAGE_BYTES: 'maxStorageBytes',
  MAX_FILE_SIZE_BYTES: 'maxFileSizeBytes',
  MAX_CUSTOM_DOMAINS: 'maxCustomDomains',
} as const satisfies Record<string, keyof PlanLimits>;
type PlanVariable = `PLAN_${Uppercase<PlanName>}_${keyof typeof PLAN_LIMIT_SUFFIXES}`;

/** What each variable holds once read (set, or its default). */
type Values = {
  PORT: number;
  HOST: string;
  BASE_URL: URL;
  SITE_DOMAIN: { host: string; hostname: string };
  DATA_DIR: string;
  DATABASE_URL: string | undefined;
  S3_BUCKET: string | undefined;
  S3_ENDPOINT: string | undefined;
  S3_REGION: string;
  S3_ACCESS_KEY_ID: string | undefined;
  S3_SECRET_ACCESS_KEY: string | undefined;
  S3_FORCE_PATH_STYLE: boolean;
  S3_CHECKSUM: 'WHEN_REQUIRED' | 'WHEN_SUPPORTED';
  REDIS_URL: string | undefined;
  REDIS_PREFIX: string;
  SMTP_URL: string | undefined;
  MAIL_FROM: string;
  DNS_SERVERS: string[] | undefined;
  CNAME_TARGET: string;
  SECRETS_KEY: Buffer | undefined;
  PROXY_ENABLED: boolean;
  PROXY_ALLOW_PRIVATE_ADDRESSES: boolean;
  PAYMENT_PROVIDER: PaymentConfig['provider'];
  RAZORPAY_KEY_ID: string | undefined;
  RAZORPAY_KEY_SECRET: string | undefined;
  RAZORPAY_PLAN_ID: string | undefined;
  RAZORPAY_WEBHOOK_SECRET: string | undefined;
  RAZORPAY_API_URL: string;
  RATE_LIMIT_ANONYMOUS: number;
  RATE_LIMIT_FREE: number;
  RATE_LIMIT_HOBBY: number;
  RATE_LIMIT_SIGNIN_EMAIL: number;
  RATE_LIMIT_SIGNIN_IP: number;
  RATE_LIMIT_SIGNIN_CHECKS: number;
  RATE_LIMIT_PROXY: number;
  RATE_LIMIT_REPORTS: number;
  ABUSE_CONTACT: string | undefined;
  TRUST_PROXY: TrustProxy;
  ADMIN_EMAILS: ReadonlySet<string>;
  LOG_LEVEL: string;
  WORKERS: number;
  SERVE_CACHE_MB: number;
  SERVE_FAST_PATH: boolean;
  SWEEP_INTERVAL_S: number;
  ANONYMOUS_GRACE_S: number;
  AUDIT_RETENTION_DAYS: number;
  ANALYTICS_FLUSH_S: number;
  ANALYTICS_RETENTION_DAYS: number;
  TLS_PORT: number | undefined;
  TLS_CERT_FILE: string | undefined;
  TLS_KEY_FILE: string | undefined;
  ACME_DIRECTORY_URL: string | undefined;
  ACME_EMAIL: string | undefined;
  ACME_CA_FILE: string | undefined;
} & Record<PlanVariable, number | undefined>;

export type VariableName = keyof Values;
type Read = <N extends VariableName>(name: N) => Values[N];

/** A default that follows from variables read before it (BASE_URL from PORT, ...). */
class Derived<T> {
  constructor(readonly from: (read: Read) => T) {}
}

export interface Variable<T> {
  /** A set value (trimmed, not empty) to what the service uses; throws ConfigError naming `name`. */
  parse(value: string, name: string): T;
  /** The value when the variable is unset or empty. */
  default: T | Derived<T>;
  /** The default as the docs write it; a constant default writes itself (`8080`). */
  shown?: string;
  /** What it means: its row of the README's table. */
  doc?: string;
  /** Documented in the row of this variable (one meaning shared by a group) instead of a row of its own. */
  with?: VariableName;
  /** Its example in docs/deploy.md's table of what every node of the scale-out set is given. */
  scaleOut?: string;
}

const derived = <T>(from: (read: Read) => T) => new Derived(from);

/** Every environment variable the service reads, in the order the docs list them. */
export const VARIABLES: { readonly [N in VariableName]: Variable<Values[N]> } = {
  PORT: { parse: wholeNumber(0, 65535), default: 8080, doc: 'listen port (API, pages and sites share it)' },
  HOST: { parse: text, default: '127.0.0.1', doc: 'listen address' },
  BASE_URL: {
    parse: origin,
    default: derived((read) => new URL(`http://localhost:${read('PORT')}`)),
    shown: '`http://localhost:$PORT`',
    doc: "the service's address; its host serves the API and pages",
  },
  SITE_DOMAIN: {
    parse: hostWithPort,
    default: derived((read) => hostWithPort(`localhost:${read('PORT')}`, 'SITE_DOMAIN')),
    shown: '`localhost:$PORT`',
    doc: "sites are `<slug>.$SITE_DOMAIN`; URLs use `BASE_URL`'s scheme",
  },
  TLS_PORT: {
    parse: wholeNumber(0, 65535),
    default: undefined,
    shown: 'no TLS',
    doc:
      'port on which the service terminates TLS itself (API, pages, sites, custom domains); `PORT` then ' +
      'answers ACME challenges and, with an `https` `BASE_URL`, redirects to https',
  },
  TLS_CERT_FILE: {
    parse: (v) => resolve(v),
    default: undefined,
    shown: 'unset',
    doc:
      'PEM certificate chain and key (both or neither) served for the names the certificate covers, ' +
      'e.g. `*.SITE_DOMAIN` and the `BASE_URL` host; reloaded when the files change',
  },
  TLS_KEY_FILE: { parse: (v) => resolve(v), default: undefined, shown: 'unset', with: 'TLS_CERT_FILE' },
  ACME_DIRECTORY_URL: {
    parse: urlOf('https:', 'http:'),
    default: undefined,
    shown: 'no on-demand certificates',
    doc:
      "ACME directory (e.g. Let's Encrypt's `https://acme-v02.api.letsencrypt.org/directory`) from which " +
      'names the files do not cover get a certificate on their first handshake (with `TLS_PORT`)',
  },
  ACME_EMAIL: {
    parse: mailbox,
    default: undefined,
    shown: 'none',
    doc: 'contact address of the ACME account (expiry notices)',
  },
  ACME_CA_FILE: {
    parse: (v) => resolve(v),
    default: undefined,
    shown: 'system CAs',
    doc: 'extra PEM CA trusted for the ACME directory connection (a private or test CA such as Pebble)',
  },
  DATA_DIR: {
    parse: (v) => resolve(v),
    default: derived(() => resolve('./data')),
    shown: '`./data`',
    doc:
      "SQLite database, blobs, generated `secrets.key`, dev `outbox.log`; private to the service's user " +
      '(0700, files 0600; a looser one is tightened at start-up)',
  },
  DATABASE_URL: {
    parse: urlOf('postgres:', 'postgresql:'),
    default: undefined,
    shown: 'SQLite in `DATA_DIR`',
    doc: '`postgres://...` switches metadata to PostgreSQL',
    scaleOut: '`postgres://slipway:secret@db.internal:5432/slipway`',
  },
  S3_BUCKET: {
    parse: text,
    default: undefined,
    shown: 'local disk',
    doc: 'S3-compatible blob storage (AWS S3, Cloudflare R2, MinIO, Ceph): the bucket',
    scaleOut: '`slipway-blobs`',
  },
  S3_ENDPOINT: {
    parse: urlOf('http:', 'https:'),
    default: undefined,
    shown: "the provider's",
    doc: "the store's address (unset: AWS S3 of `S3_REGION`)",
    scaleOut: '`https://<account>.r2.cloudflarestorage.com`, `http://minio.internal:9000`',
  },
  S3_REGION: {
    parse: text,
    default: 'us-east-1',
    doc: "the bucket's region",
    scaleOut: '`auto` (R2) or `us-east-1`',
  },
  S3_ACCESS_KEY_ID: {
    parse: text,
    default: undefined,
    shown: "the SDK's default provider chain",
    doc: "the bucket's credentials (both or neither)",
    scaleOut: "the bucket's credentials (or the instance's default provider chain)",
  },
  S3_SECRET_ACCESS_KEY: {
    parse: text,
    default: undefined,
    shown: "the SDK's default provider chain",
    with: 'S3_ACCESS_KEY_ID',
  },
  S3_FORCE_PATH_STYLE: {
    parse: boolean,
    default: false,
    doc: '`true`: `<endpoint>/<bucket>/key` addresses instead of `<bucket>.<endpoint>` (MinIO, Ceph)',
    scaleOut: '`true` for MinIO and Ceph',
  },
  S3_CHECKSUM: {
    parse: checksumMode,
    default: 'WHEN_REQUIRED',
    doc:
      '`WHEN_REQUIRED`: plain bodies; `WHEN_SUPPORTED`: the SDK checksums every request (some ' +
      'S3-compatible stores keep its `aws-chunked` framing verbatim)',
    scaleOut:
      '`WHEN_REQUIRED` (default): plain bodies; some S3-compatible stores keep `aws-chunked` framing verbatim',
  },
  REDIS_URL: {
    parse: urlOf('redis:', 'rediss:'),
    default: undefined,
    shown: 'in-process',
    doc: 'shared rate-limit counters, cache invalidation and the sweeper lease',
    scaleOut: '`redis://redis.internal:6379`',
  },
  REDIS_PREFIX: {
    parse: text,
    default: 'slipway:',
    doc: 'prefix of every Redis key and channel',
    scaleOut: '`slipway:`',
  },
  SMTP_URL: {
    parse: urlOf('smtp:', 'smtps:'),
    default: undefined,
    shown: 'dev mailer',
    doc: '`smtp://user:pass@host:port` or `smtps://` for sign-in mail',
  },
  MAIL_FROM: {
    parse: mailbox,
    default: derived((read) => `Slipway <no-reply@${read('SITE_DOMAIN').hostname}>`),
    shown: '`Slipway <no-reply@$SITE_DOMAIN host>`',
    doc: 'sender address',
  },
  DNS_SERVERS: {
    parse: dnsServers,
    default: undefined,
    shown: 'system resolver',
    doc: "`ip` or `ip:port` list for custom-domain verification and the site proxy's lookups",
  },
  CNAME_TARGET: {
    parse: (v) => v.toLowerCase(),
    default: derived((read) => read('SITE_DOMAIN').hostname),
    shown: 'host of `SITE_DOMAIN`',
    doc: 'CNAME target custom domains must point at',
  },
  SECRETS_KEY: {
    parse: secretsKey,
    default: undefined,
    shown: 'generated once into `DATA_DIR`',
    doc: '32 bytes, base64 (unset: generated into `DATA_DIR/secrets.key`, 0600); several nodes must share it',
    scaleOut: 'the same 32-byte base64 key on every node (`openssl rand -base64 32`)',
  },
  PROXY_ENABLED: {
    parse: boolean,
    default: false,
    doc: '`false`: `POST /api/v1/proxy/:slug` answers 403 and forwards nothing',
  },
  PROXY_ALLOW_PRIVATE_ADDRESSES: {
    parse: boolean,
    default: false,
    doc: 'test-only: lets the proxy reach loopback, private and link-local addresses',
  },
  PAYMENT_PROVIDER: {
    parse: paymentProvider,
    default: 'test',
    doc:
      '`test` (a checkout page on this service, no money moves) or `razorpay` (then the `RAZORPAY_*` ' +
      'credentials are required)',
  },
  RAZORPAY_KEY_ID: {
    parse: text,
    default: undefined,
    shown: '',
    doc:
      'provider credentials, required with `razorpay`. The callback `POST /api/billing/webhook` needs ' +
      '`RAZORPAY_WEBHOOK_SECRET` (with `test` too, if set)',
  },
  RAZORPAY_KEY_SECRET: { parse: text, default: undefined, shown: '', with: 'RAZORPAY_KEY_ID' },
  RAZORPAY_PLAN_ID: { parse: text, default: undefined, shown: '', with: 'RAZORPAY_KEY_ID' },
  RAZORPAY_WEBHOOK_SECRET: { parse: text, default: undefined, shown: '', with: 'RAZORPAY_KEY_ID' },
  RAZORPAY_API_URL: {
    parse: (v, name) => urlOf('http:', 'https:')(v, name).replace(/\/+$/, ''),
    default: 'https://api.razorpay.com',
    doc: 'base URL of the provider API without `/v1` (tests point it at a local stand-in)',
  },
  RATE_LIMIT_ANONYMOUS: {
    parse: wholeNumber(1),
    default: 5,
    doc: 'requests per hour-aligned window: anonymous (per IP), Free and Hobby (per account)',
  },
  RATE_LIMIT_FREE: { parse: wholeNumber(1), default: 60, with: 'RATE_LIMIT_ANONYMOUS' },
  RATE_LIMIT_HOBBY: { parse: wholeNumber(1), default: 200, with: 'RATE_LIMIT_ANONYMOUS' },
  RATE_LIMIT_SIGNIN_EMAIL: {
    parse: wholeNumber(1),
    default: 5,
    doc:
      'sign-in per hour-aligned window, shared by the API and the web form: codes mailed to one address, ' +
      'codes asked for from one client IP, codes checked from one client IP (each code also has its own 5 ' +
      'tries); past them 429 `RATE_LIMITED`',
  },
  RATE_LIMIT_SIGNIN_IP: { parse: wholeNumber(1), default: 20, with: 'RATE_LIMIT_SIGNIN_EMAIL' },
  RATE_LIMIT_SIGNIN_CHECKS: { parse: wholeNumber(1), default: 30, with: 'RATE_LIMIT_SIGNIN_EMAIL' },
  RATE_LIMIT_PROXY: {
    parse: wholeNumber(1),
    default: 300,
    doc:
      'site-proxy calls per visitor IP and site per hour-aligned window, outside the API windows; each site ' +
      'also has a ceiling per window of 10x this (owner anonymous or Free) or 100x (Hobby) for all its visitors',
  },
  RATE_LIMIT_REPORTS: {
    parse: wholeNumber(1),
    default: 10,
    doc: 'abuse reports (`POST /api/v1/reports` and the `/report` form together) per client IP per hour-aligned window',
  },
  ABUSE_CONTACT: {
    parse: abuseContact,
    default: undefined,
    shown: 'unset',
    doc: 'address (email or https URL) shown on the landing page, the report page and `/.well-known/security.txt`',
  },
  TRUST_PROXY: {
    parse: trustProxy,
    default: derived(() => ({ hops: 0 })),
    shown: '`false`',
    doc:
      "behind Caddy/nginx: a number of trusted hops (`true` = 1) or the trusted proxies' addresses/CIDRs, " +
      'comma-separated; the client address is the rightmost `X-Forwarded-For` entry not added by a trusted ' +
      'proxy (`docs/deploy.md`). Per-client limits count IPv6 clients by their /64',
    scaleOut:
      "the addresses of whatever connects to the nodes (the load balancer, or each node's Caddy: " +
      '`127.0.0.1`), e.g. `10.0.0.0/24` (see "Client addresses")',
  },
  ADMIN_EMAILS: {
    parse: adminEmails,
    default: derived(() => new Set<string>()),
    shown: 'unset',
    doc:
      'comma list: accounts signed in with these addresses are operators (the `/admin` pages, `/api/admin/` ' +
      'with their key, `slipway admin`; `docs/admin.md`); abuse reports are mailed to them. Compared lowercased',
  },
  LOG_LEVEL: { parse: logLevel, default: 'info', doc: 'pino level' },
  WORKERS: {
    parse: wholeNumber(1, MAX_WORKERS),
    default: derived(() => Math.min(availableParallelism(), MAX_WORKERS)),
    shown: 'cores available',
    doc: 'processes serving the API and sites on this node (`1` = one process)',
  },
  SERVE_CACHE_MB: {
    parse: wholeNumber(1, 1 << 20),
    default: 256,
    doc: "memory bound of the site server's caches and memoized responses, for the node (each of `WORKERS` takes its share)",
  },
  SERVE_FAST_PATH: {
    parse: boolean,
    default: true,
    doc:
      'plain GET/HEAD to site hosts answered by the site fast path (`src/serve/http1/`); `false` sends every ' +
      'request through node:http',
  },
  SWEEP_INTERVAL_S: {
    parse: wholeNumber(1),
    default: 300,
    doc: 'how often expiry, stale pending versions, custom domains left unverified for 7 days and blob GC run',
  },
  ANONYMOUS_GRACE_S: {
    parse: wholeNumber(0),
    default: 86_400,
    doc: 'how long an expired anonymous site answers 410 before it is deleted',
  },
  AUDIT_RETENTION_DAYS: {
    parse: wholeNumber(1),
    default: 365,
    doc: 'days an audit log entry is kept (`docs/audit.md`); the sweeper removes older ones',
  },
  ANALYTICS_FLUSH_S: {
    parse: wholeNumber(0),
    default: 60,
    doc:
      'how often each node writes its visit counters; how long daily counts are kept (`ANALYTICS_FLUSH_S=0`: ' +
      'this node counts no visits, see docs/analytics.md)',
  },
  ANALYTICS_RETENTION_DAYS: { parse: wholeNumber(1, 100_000), default: 400, with: 'ANALYTICS_FLUSH_S' },
  ...planVariables(),
};

/** PLAN_<PLAN>_<LIMIT>: operator overrides of the plan table, documented in one row. */
function planVariables(): Record<PlanVariable, Variable<number | undefined>> {
  const out: Partial<Record<PlanVariable, Variable<number | undefined>>> = {};
  let first: PlanVariable | undefined;
  for (const plan of ['FREE', 'HOBBY'] as const) {
    for (const suffix of Object.keys(PLAN_LIMIT_SUFFIXES) as Array<keyof typeof PLAN_LIMIT_SUFFIXES>) {
      const name: PlanVariable = `PLAN_${plan}_${suffix}`;
      out[name] =
        first === undefined
          ? {
              parse: wholeNumber(0),
              default: undefined,
              shown: 'plan table',
              doc: 'operator overrides of plan limits (`src/core/plans.ts`)',
            }
          : { parse: wholeNumber(0), default: undefined, shown: 'plan table', with: first };
      first ??= name;
    }
  }
  return out as Record<PlanVariable, Variable<number | undefined>>;
}

/** A variable's value as set (trimmed), or undefined when it is unset or blank. */
function setValue(env: Env, name: VariableName): string | undefined {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
}

/** Reads variables through the table: a set value parsed, else the default (derived ones computed). */
function reader(env: Env): Read {
  const read: Read = (name) => {
    const spec = VARIABLES[name];
    const value = setValue(env, name);
    if (value !== undefined) return spec.parse(value, name);
    return spec.default instanceof Derived ? spec.default.from(read) : spec.default;
  };
  return read;
}

/** The default of a variable as the docs write it. */
export function shownDefault(spec: Variable<unknown>): string {
  if (spec.shown !== undefined) return spec.shown;
  return `\`${String(spec.default)}\``;
}

// ---- groups of variables with rules between them ----------------------------------------------------

function parseBlobs(env: Env, read: Read, dataDir: string): BlobConfig {
  const bucket = read('S3_BUCKET');
  if (bucket === undefined) {
    for (const name of ['S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const) {
      if (setValue(env, name) !== undefined) {
        throw new ConfigError('S3_BUCKET', `must be set when ${name} is set`);
      }
    }
    return { provider: 'disk', dir: dataDir };
  }
  const endpoint = read('S3_ENDPOINT');
  const accessKeyId = read('S3_ACCESS_KEY_ID');
  const secretAccessKey = read('S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(
      'S3_SECRET_ACCESS_KEY',
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together',
    );
  }
  const checksum = read('S3_CHECKSUM');
  return {
    provider: 's3',
    bucket,
    endpoint,
    region: read('S3_REGION'),
    accessKeyId,
    secretAccessKey,
    forcePathStyle: read('S3_FORCE_PATH_STYLE'),
    checksumMode: checksum,
  };
}

function parsePayments(read: Read): PaymentConfig {
  if (read('PAYMENT_PROVIDER') === 'test')
    return { provider: 'test', webhookSecret: read('RAZORPAY_WEBHOOK_SECRET') };
  const need = (
    name: 'RAZORPAY_KEY_ID' | 'RAZORPAY_KEY_SECRET' | 'RAZORPAY_PLAN_ID' | 'RAZORPAY_WEBHOOK_SECRET',
  ) => {
    const v = read(name);
    if (v === undefined) throw new ConfigError(name, 'required when PAYMENT_PROVIDER=razorpay');
    return v;
  };
  const apiUrl = read('RAZORPAY_API_URL');
  return {
    provider: 'razorpay',
    keyId: need('RAZORPAY_KEY_ID'),
    keySecret: need('RAZORPAY_KEY_SECRET'),
    planId: need('RAZORPAY_PLAN_ID'),
    webhookSecret: need('RAZORPAY_WEBHOOK_SECRET'),
    apiUrl,
  };
}

function planOverrides(read: Read): Config['planOverrides'] {
  const out: Config['planOverrides'] = {};
  for (const plan of ['free', 'hobby'] as const) {
    for (const [suffix, field] of Object.entries(PLAN_LIMIT_SUFFIXES)) {
      const value = read(`PLAN_${plan.toUpperCase()}_${suffix}` as PlanVariable);
      if (value !== undefined) out[plan] = { ...out[plan], [field]: value };
    }
  }
  return out;
}

/** Parses the environment; throws ConfigError on the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const read = reader(env);
  const port = read('PORT');
  const host = read('HOST');
  const base = read('BASE_URL');
  const site = read('SITE_DOMAIN');
  const dataDir = read('DATA_DIR');
  const dbUrl = read('DATABASE_URL');
  const database: DatabaseConfig =
    dbUrl === undefined
      ? { dialect: 'sqlite', file: resolve(dataDir, 'slipway.db') }
      : { dialect: 'postgres', url: dbUrl };
  const redisUrl = read('REDIS_URL');
  const smtpUrl = read('SMTP_URL');
  const mail: MailConfig =
    smtpUrl === undefined
      ? { transport: 'dev', outboxFile: resolve(dataDir, 'outbox.log') }
      : { transport: 'smtp', url: smtpUrl };
  const mailFrom = read('MAIL_FROM');
  const logLevel = read('LOG_LEVEL');
  const cnameTarget = read('CNAME_TARGET');

  return {
    port,
    host,
    baseUrl: base.origin,
    baseHost: base.hostname,
    siteDomain: site.host,
    siteHost: site.hostname,
    scheme: base.protocol === 'https:' ? 'https' : 'http',
    dataDir,
    database,
    blobs: parseBlobs(env, read, dataDir),
    redisUrl,
    redisPrefix: read('REDIS_PREFIX'),
    mail,
    mailFrom,
    dnsServers: read('DNS_SERVERS'),
    cnameTarget,
    secretsKey: read('SECRETS_KEY'),
    proxyEnabled: read('PROXY_ENABLED'),
    proxyAllowPrivateAddresses: read('PROXY_ALLOW_PRIVATE_ADDRESSES'),
    payments: parsePayments(read),
    rateLimits: {
      anonymous: read('RATE_LIMIT_ANONYMOUS'),
      free: read('RATE_LIMIT_FREE'),
      hobby: read('RATE_LIMIT_HOBBY'),
    },
    proxyRateLimit: read('RATE_LIMIT_PROXY'),
    reportRateLimit: read('RATE_LIMIT_REPORTS'),
    abuseContact: read('ABUSE_CONTACT'),
    signInLimits: {
      codesPerEmail: read('RATE_LIMIT_SIGNIN_EMAIL'),
      codesPerIp: read('RATE_LIMIT_SIGNIN_IP'),
      checksPerIp: read('RATE_LIMIT_SIGNIN_CHECKS'),
    },
    trustProxy: read('TRUST_PROXY'),
    adminEmails: read('ADMIN_EMAILS'),
    logLevel,
    planOverrides: planOverrides(read),
    workers: read('WORKERS'),
    serveCacheBytes: read('SERVE_CACHE_MB') * 1024 * 1024,
    serveFastPath: read('SERVE_FAST_PATH'),
    sweepIntervalMs: read('SWEEP_INTERVAL_S') * 1000,
    anonymousGraceMs: read('ANONYMOUS_GRACE_S') * 1000,
    auditRetentionDays: read('AUDIT_RETENTION_DAYS'),
    analyticsFlushMs: read('ANALYTICS_FLUSH_S') * 1000,
    analyticsRetentionDays: read('ANALYTICS_RETENTION_DAYS'),
    tls: parseTls(read),
  };
}

function parseTls(read: Read): TlsConfig | undefined {
  const port = read('TLS_PORT');
  const cert = read('TLS_CERT_FILE');
  const key = read('TLS_KEY_FILE');
  const directoryUrl = read('ACME_DIRECTORY_URL');
  if ((cert === undefined) !== (key === undefined)) {
    throw new ConfigError(
      cert === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE',
      'TLS_CERT_FILE and TLS_KEY_FILE must be set together',
    );
  }
  if (port === undefined) {
    if (cert !== undefined) throw new ConfigError('TLS_PORT', 'must be set when TLS_CERT_FILE is set');
    if (directoryUrl !== undefined)
      throw new ConfigError('TLS_PORT', 'must be set when ACME_DIRECTORY_URL is set');
    return undefined;
  }
  return {
    port,
    files: cert !== undefined && key !== undefined ? { cert, key } : undefined,
    acme:
      directoryUrl === undefined
        ? undefined
        : { directoryUrl, email: read('ACME_EMAIL'), caFile: read('ACME_CA_FILE') },
  };
}
