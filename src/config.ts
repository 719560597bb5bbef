// Configuration: every environment variable of CONTRACT.md parsed once into one typed object.
// Only this module reads process.env; a bad value throws ConfigError naming the variable.

import { BlockList, isIP } from 'node:net';
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
  /**
   * Sign-in per hour-aligned window, shared by the API and the web form: codes mailed to one address
   * (RATE_LIMIT_SIGNIN_EMAIL, default 5), codes asked for from one client IP (RATE_LIMIT_SIGNIN_IP,
   * default 20), codes checked from one client IP (RATE_LIMIT_SIGNIN_CHECKS, default 30).
   */
  signInLimits: { codesPerEmail: number; codesPerIp: number; checksPerIp: number };
  trustProxy: TrustProxy;
  logLevel: string;
  /** Operator overrides of the plan table (PLAN_<PLAN>_<LIMIT> variables). */
  planOverrides: Partial<Record<PlanName, Partial<PlanLimits>>>;
  /** SERVE_CACHE_MB (default 256): memory bound of the site server's record, manifest and blob caches. */
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
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = str(env, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw new ConfigError(name, `expected a whole number, got "${v}"`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = str(env, name)?.toLowerCase();
  if (v === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `expected true or false, got "${v}"`);
}

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

/** A host with an optional port, as in SITE_DOMAIN (`example.com`, `localhost:8080`). */
function hostWithPort(name: string, value: string): { host: string; hostname: string } {
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

function planOverrides(env: Env): Config['planOverrides'] {
  const fields: Array<[string, keyof PlanLimits]> = [
    ['MAX_SITES', 'maxSites'],
    ['MAX_STORAGE_BYTES', 'maxStorageBytes'],
    ['MAX_FILE_SIZE_BYTES', 'maxFileSizeBytes'],
    ['MAX_CUSTOM_DOMAINS', 'maxCustomDomains'],
  ];
  const out: Config['planOverrides'] = {};
  for (const plan of ['free', 'hobby'] as const) {
    for (const [suffix, field] of fields) {
      const name = `PLAN_${plan.toUpperCase()}_${suffix}`;
      if (str(env, name) === undefined) continue;
      out[plan] = { ...out[plan], [field]: int(env, name, 0, 0) };
    }
  }
  return out;
}

function parseSecretsKey(env: Env): Buffer | undefined {
  const v = str(env, 'SECRETS_KEY');
  if (v === undefined) return undefined;
  const key = Buffer.from(v, 'base64');
  if (key.length !== 32)
    throw new ConfigError('SECRETS_KEY', `must be 32 bytes in base64, got ${key.length} bytes`);
  return key;
}

function parseDnsServers(env: Env): string[] | undefined {
  const v = str(env, 'DNS_SERVERS');
  if (v === undefined) return undefined;
  const servers = v.split(',').map((s) => s.trim());
  for (const s of servers) {
    // ip, ip:port, [ipv6]:port or bare ipv6
    const ok =
      /^(\d{1,3}(\.\d{1,3}){3})(:\d{1,5})?$/.test(s) ||
      /^\[[0-9a-f:.]+\](:\d{1,5})?$/i.test(s) ||
      /^[0-9a-f:]+$/i.test(s);
    if (!ok) throw new ConfigError('DNS_SERVERS', `expected a comma list of ip or ip:port, got "${s}"`);
  }
  return servers;
}

/** Hop counts beyond this are a typo, not a deployment. */
const MAX_TRUSTED_HOPS = 16;

function parseTrustProxy(env: Env): TrustProxy {
  const v = str(env, 'TRUST_PROXY')?.toLowerCase();
  if (v === undefined || ['false', 'no', 'off'].includes(v)) return { hops: 0 };
  if (['true', 'yes', 'on'].includes(v)) return { hops: 1 };
  if (/^\d+$/.test(v)) return { hops: int(env, 'TRUST_PROXY', 0, 0, MAX_TRUSTED_HOPS) };
  const proxies = new BlockList();
  for (const entry of v.split(',').map((e) => e.trim())) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const maxPrefix = family === 4 ? 32 : 128;
    const bits = prefix === undefined ? maxPrefix : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (family === 0 || extra !== undefined || bits < 0 || bits > maxPrefix) {
      throw new ConfigError(
        'TRUST_PROXY',
        `expected true, false, a number of trusted hops, or the proxies' IP addresses or CIDRs separated by commas; got "${entry}"`,
      );
    }
    // Trusting every address would let any client write its own address again.
    if (bits === 0) throw new ConfigError('TRUST_PROXY', `"${entry}" would trust every address as a proxy`);
    proxies.addSubnet(address, bits, family === 4 ? 'ipv4' : 'ipv6');
  }
  return { proxies };
}

function parseBlobs(env: Env, dataDir: string): BlobConfig {
  const bucket = str(env, 'S3_BUCKET');
  if (bucket === undefined) {
    for (const name of ['S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) {
      if (str(env, name) !== undefined) throw new ConfigError('S3_BUCKET', `must be set when ${name} is set`);
    }
    return { provider: 'disk', dir: dataDir };
  }
  const endpoint = str(env, 'S3_ENDPOINT');
  if (endpoint !== undefined) url('S3_ENDPOINT', endpoint, ['http:', 'https:']);
  const accessKeyId = str(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = str(env, 'S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(
      'S3_SECRET_ACCESS_KEY',
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together',
    );
  }
  const checksum = (str(env, 'S3_CHECKSUM') ?? 'WHEN_REQUIRED').toUpperCase();
  if (checksum !== 'WHEN_REQUIRED' && checksum !== 'WHEN_SUPPORTED') {
    throw new ConfigError('S3_CHECKSUM', `expected WHEN_REQUIRED or WHEN_SUPPORTED, got "${checksum}"`);
  }
  return {
    provider: 's3',
    bucket,
    endpoint,
    region: str(env, 'S3_REGION') ?? 'us-east-1',
    accessKeyId,
    secretAccessKey,
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
    checksumMode: checksum,
  };
}

function parsePayments(env: Env): PaymentConfig {
  const provider = str(env, 'PAYMENT_PROVIDER') ?? 'test';
  if (provider === 'test') return { provider: 'test', webhookSecret: str(env, 'RAZORPAY_WEBHOOK_SECRET') };
  if (provider !== 'razorpay') {
    throw new ConfigError('PAYMENT_PROVIDER', `expected test or razorpay, got "${provider}"`);
  }
  const need = (name: string) => {
    const v = str(env, name);
    if (v === undefined) throw new ConfigError(name, 'required when PAYMENT_PROVIDER=razorpay');
    return v;
  };
  const apiUrl = str(env, 'RAZORPAY_API_URL') ?? 'https://api.razorpay.com';
  url('RAZORPAY_API_URL', apiUrl, ['http:', 'https:']);
  return {
    provider: 'razorpay',
    keyId: need('RAZORPAY_KEY_ID'),
    keySecret: need('RAZORPAY_KEY_SECRET'),
    planId: need('RAZORPAY_PLAN_ID'),
    webhookSecret: need('RAZORPAY_WEBHOOK_SECRET'),
    apiUrl: apiUrl.replace(/\/+$/, ''),
  };
}

/** Parses the environment; throws ConfigError on the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 8080, 0, 65535);
  const host = str(env, 'HOST') ?? '127.0.0.1';

  const base = url('BASE_URL', str(env, 'BASE_URL') ?? `http://localhost:${port}`, ['http:', 'https:']);
  if (base.pathname !== '/' || base.search || base.hash) {
    throw new ConfigError('BASE_URL', 'must be an origin without path, query or fragment');
  }
  const site = hostWithPort('SITE_DOMAIN', str(env, 'SITE_DOMAIN') ?? `localhost:${port}`);

  const dataDir = resolve(str(env, 'DATA_DIR') ?? './data');
  const dbUrl = str(env, 'DATABASE_URL');
  let database: DatabaseConfig = { dialect: 'sqlite', file: resolve(dataDir, 'slipway.db') };
  if (dbUrl !== undefined) {
    url('DATABASE_URL', dbUrl, ['postgres:', 'postgresql:']);
    database = { dialect: 'postgres', url: dbUrl };
  }

  const redisUrl = str(env, 'REDIS_URL');
  if (redisUrl !== undefined) url('REDIS_URL', redisUrl, ['redis:', 'rediss:']);

  const smtpUrl = str(env, 'SMTP_URL');
  if (smtpUrl !== undefined) url('SMTP_URL', smtpUrl, ['smtp:', 'smtps:']);
  const mail: MailConfig =
    smtpUrl === undefined
      ? { transport: 'dev', outboxFile: resolve(dataDir, 'outbox.log') }
      : { transport: 'smtp', url: smtpUrl };

  const mailFrom = str(env, 'MAIL_FROM') ?? `Slipway <no-reply@${site.hostname}>`;
  if (!/^[^\r\n]*<?[^\s@<>]+@[^\s@<>]+>?$/.test(mailFrom)) {
    throw new ConfigError('MAIL_FROM', `not an email address: "${mailFrom}"`);
  }

  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const cnameTarget = str(env, 'CNAME_TARGET') ?? site.hostname;

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
    blobs: parseBlobs(env, dataDir),
    redisUrl,
    redisPrefix: str(env, 'REDIS_PREFIX') ?? 'slipway:',
    mail,
    mailFrom,
    dnsServers: parseDnsServers(env),
    cnameTarget: cnameTarget.toLowerCase(),
    secretsKey: parseSecretsKey(env),
    proxyEnabled: bool(env, 'PROXY_ENABLED', false),
    proxyAllowPrivateAddresses: bool(env, 'PROXY_ALLOW_PRIVATE_ADDRESSES', false),
    payments: parsePayments(env),
    rateLimits: {
      anonymous: int(env, 'RATE_LIMIT_ANONYMOUS', 5, 1),
      free: int(env, 'RATE_LIMIT_FREE', 60, 1),
      hobby: int(env, 'RATE_LIMIT_HOBBY', 200, 1),
    },
    signInLimits: {
      codesPerEmail: int(env, 'RATE_LIMIT_SIGNIN_EMAIL', 5, 1),
      codesPerIp: int(env, 'RATE_LIMIT_SIGNIN_IP', 20, 1),
      checksPerIp: int(env, 'RATE_LIMIT_SIGNIN_CHECKS', 30, 1),
    },
    trustProxy: parseTrustProxy(env),
    logLevel,
    planOverrides: planOverrides(env),
    serveCacheBytes: int(env, 'SERVE_CACHE_MB', 256, 1, 1 << 20) * 1024 * 1024,
    serveFastPath: bool(env, 'SERVE_FAST_PATH', true),
    sweepIntervalMs: int(env, 'SWEEP_INTERVAL_S', 300, 1) * 1000,
    anonymousGraceMs: int(env, 'ANONYMOUS_GRACE_S', 86_400, 0) * 1000,
  };
}
