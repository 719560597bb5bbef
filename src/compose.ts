// The composition root: the one place that builds the service. Configuration -> stores (chosen by
// configuration only) -> the core services, each dependency object built once -> the site server and the
// HTTP app, each handed only what it uses. server.ts and the tests build the service here and nowhere else.

import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { type App, type AppServices, buildApp, httpServerOf } from './app.js';
import { type Config, ConfigError } from './config.js';
import {
  AnalyticsCounter,
  type AnalyticsFlusher,
  startAnalyticsFlusher,
  sweepAnalytics,
} from './core/analytics.js';
import { BODY_PACE, type BodyPace } from './core/body-pace.js';
import { CertificateIssuer, markServedFromFiles } from './core/certificates.js';
import { blockedContentCheck } from './core/operators.js';
import { secretScanCheck } from './core/scan/site-scan.js';
import { deriveKeys, loadOrCreateSecretsKey, type ServerKeys } from './core/secrets.js';
import { type SweepDeps, startSweeper } from './core/sweeper.js';
import { UPLOADS_PER_CLIENT } from './core/upload.js';
import {
  startWebhookSender,
  sweepWebhooks,
  WEBHOOK_SENDER_DEFAULTS,
  type WebhookEvents,
  type WebhookSender,
  type WebhookSenderDeps,
  type WebhookSenderOptions,
  webhookEvents,
} from './core/webhooks.js';
import { createMetrics } from './http/metrics.js';
import { createSiteServer, type SiteServerDeps } from './serve/site-server.js';
import { CertificateFileError } from './serve/tls/certificates.js';
import { createTlsFront, type TlsFront } from './serve/tls/listener.js';
import { type Clock, systemClock } from './shared/clock.js';
import { type ChangeBus, LocalChangeBus } from './shared/events.js';
import { createLogger } from './shared/logging.js';
import { type ChallengeKind, createAcmeCa } from './store/acme/client.js';
import { DiskBlobStore } from './store/blob/disk.js';
import { S3BlobStore } from './store/blob/s3.js';
import type { BlobStore } from './store/blob/types.js';
import { securePrivateDir } from './store/data-dir.js';
import { Db } from './store/db/db.js';
import {
  type AddressResolver,
  createAddressResolver,
  createDnsLookups,
  type DnsLookups,
} from './store/dns/resolve.js';
import { RedisChangeBus } from './store/events/redis.js';
import { WorkerChangeBus } from './store/events/workers.js';
import { MemoryLease } from './store/lease/memory.js';
import { RedisLease } from './store/lease/redis.js';
import type { Lease } from './store/lease/types.js';
import { WorkerLease } from './store/lease/workers.js';
import { DevMailer } from './store/mail/dev.js';
import { SmtpMailer } from './store/mail/smtp.js';
import type { Mailer } from './store/mail/types.js';
import { RazorpayProvider } from './store/payments/razorpay.js';
import { TestPaymentProvider } from './store/payments/test.js';
import type { PaymentProvider } from './store/payments/types.js';
import { MemoryRateStore } from './store/rate/memory.js';
import { RedisRateStore } from './store/rate/redis.js';
import type { RateStore } from './store/rate/types.js';
import { WorkerRateStore } from './store/rate/workers.js';
import { closeConnection, openRedis } from './store/redis.js';
import { type NodeShared, PrimaryChannel } from './store/workers.js';

/** The backing services of one node, as configuration chose them. */
export interface Stores {
  config: Config;
  clock: Clock;
  logger: Logger;
  db: Db;
  blobs: BlobStore;
  mailer: Mailer;
  rate: RateStore;
  /** Cache-invalidation events (finalize, delete, metadata, ...), across nodes with Redis. */
  changes: ChangeBus;
  /** Leases for work only one node may do at a time (the sweeper). */
  lease: Lease;
  /** Subscriptions to the Hobby plan (PAYMENT_PROVIDER). */
  payments: PaymentProvider;
  /** Hostname -> addresses for outgoing requests (DNS_SERVERS, else the system resolver). */
  resolveHost: AddressResolver;
  /** TXT/CNAME/A lookups of custom-domain verification (DNS_SERVERS, else the system's servers). */
  dns: DnsLookups;
  /** Sub-keys of SECRETS_KEY, one per purpose. */
  keys: ServerKeys;
  /** TLS session-ticket keys of the node when this process is one of its WORKERS (else the listener's own). */
  ticketKeys: Buffer | undefined;
  /** This worker's channel to the node's primary (WORKERS > 1). */
  node: { channel: PrimaryChannel } | undefined;
  close(): Promise<void>;
}

export interface ComposeOptions {
  clock?: Clock;
  /** Where structured logs go (default stdout); tests capture them. */
  logStream?: Writable;
  /** Replaces the database (tests isolate PostgreSQL runs in their own schema). */
  db?: Db;
  /** Receives dev-mailer lines instead of stdout. */
  devMailWrite?: (line: string) => void;
  /** Extra CA certificates for the site proxy (tests' HTTPS upstream; processes use NODE_EXTRA_CA_CERTS). */
  proxyCa?: string;
  /** Replaces BODY_PACE: socket timers run on real time, which the movable clock cannot shorten. */
  bodyPace?: BodyPace;
  /** Replaces UPLOADS_PER_CLIENT (uploads one client may have under way on this node). */
  uploadsPerClient?: number;
  /** Which ACME challenge is answered first (tests exercise TLS-ALPN-01; default HTTP-01). */
  acmeChallengePriority?: ChallengeKind[];
  /** How often the certificate files are polled (default 2 s). */
  tlsWatchIntervalMs?: number;
  /** How long a handshake waits for a certificate being ordered (default HANDSHAKE_WAIT_MS). */
  tlsHandshakeWaitMs?: number;
  /**
   * Webhook deliveries in tests: a CA for the test receiver, addresses the filter lets through although
   * they are not public (a loopback receiver; there is deliberately no configuration variable for this),
   * and shorter timeouts, backoff and polling.
   */
  webhooks?: { ca?: string; allowAddresses?: string[]; sender?: Partial<WebhookSenderOptions> };
  /**
   * This process is one of the node's WORKERS (src/workers/primary.ts forked it): the rate counters,
   * leases and the change fan-out live in the primary, which has migrated the database already.
   */
  worker?: boolean;
}

/** The app's services, plus what the site server and the sweeper use. */
export interface Services extends AppServices {
  site: SiteServerDeps;
  sweep: SweepDeps;
  /** The webhook sender's dependencies (it runs on the node holding the `webhooks` lease). */
  webhookSender: WebhookSenderDeps;
}

/** A built service: its stores, the core services, the HTTP app (not yet listening) and its background work. */
export interface Service {
  stores: Stores;
  services: Services;
  app: App;
  /** Starts the sweeper (expiry, stale versions, domains, blob GC) every SWEEP_INTERVAL_S. */
  startSweeper(): { stop(): Promise<void> };
  /** Starts the webhook sender (deliveries go out from the node holding its lease). */
  startWebhooks(): WebhookSender;
  /** The TLS listener (TLS_PORT), not yet listening; undefined without TLS_PORT. */
  tls: TlsFront | undefined;
  /** Certificates on demand (ACME_DIRECTORY_URL); undefined without. */
  certificates: CertificateIssuer | undefined;
  /** Visitor analytics' flusher of this process (undefined with ANALYTICS_FLUSH_S=0). */
  analytics: AnalyticsFlusher | undefined;
  /** Tells the node's primary that this worker listens (nothing for a single process). */
  listening(): void;
  /** Closes the app, then the stores. */
  close(): Promise<void>;
}

export async function composeService(config: Config, options: ComposeOptions = {}): Promise<Service> {
  const stores = await openStores(config, options);
  try {
    const events = webhookEvents(stores);
    const certificates = certificateIssuer(stores, options, events);
    const services = coreServices(stores, options, certificates, events);
    const node = stores.node;
    const metrics = createMetrics(node && (() => node.channel.request<string>({ op: 'metrics' })));
    node?.channel.onCollect(() => metrics.registry.getMetricsAsJSON());
    // SERVE_CACHE_MB bounds all serving memory of the node, each worker its share (the fast path's response
    // memo included: one eviction order over it and the catalog, see SiteCatalog.responses).
    const cacheBytes = Math.floor(config.serveCacheBytes / (options.worker ? config.workers : 1));
    // Visitor analytics: this process counts in memory and flushes its counts every ANALYTICS_FLUSH_S and on
    // close (each worker of WORKERS is a node of its own; the database merges them).
    const analytics = config.analyticsFlushMs > 0 ? new AnalyticsCounter(stores.clock) : undefined;
    if (analytics !== undefined) services.site.analytics = analytics;
    const siteServer = createSiteServer(services.site, metrics.registry, cacheBytes);
    const app = await buildApp(services, { siteServer, metrics });
    let tls: TlsFront | undefined;
    try {
      tls =
        config.tls === undefined
          ? undefined
          : createTlsFront({
              httpServer: httpServerOf(app),
              ...(stores.ticketKeys ? { ticketKeys: stores.ticketKeys } : {}),
              files: config.tls.files,
              onDemand: certificates,
              servedFromFiles: (name) => markServedFromFiles({ ...stores, events }, name),
              // A host, a site (its `<slug>.` host) or an account's plan changed, or a certificate was
              // stored: what is cached for it is looked up again (whether it may have one, and which).
              subscribeDropped: (drop) =>
                stores.changes.subscribe((change) => {
                  if (change.kind === 'host') drop(change.host);
                  else if (change.kind === 'site') drop(`${change.slug}.${config.siteHost}`);
                  else drop(null);
                }),
              logger: stores.logger,
              now: () => stores.clock.now(),
              ...(options.tlsWatchIntervalMs ? { watchIntervalMs: options.tlsWatchIntervalMs } : {}),
            });
    } catch (err) {
      await app.close();
      if (err instanceof CertificateFileError)
        throw new ConfigError(err.variable, err.message.slice(err.variable.length + 2));
      throw err;
    }
    const flusher =
      analytics === undefined
        ? undefined
        : startAnalyticsFlusher(
            { db: stores.db, clock: stores.clock, logger: stores.logger },
            analytics,
            config.analyticsFlushMs,
          );
    return {
      stores,
      services,
      app,
      tls,
      analytics: flusher,
      certificates,
      startSweeper: () => startSweeper(services.sweep, config.sweepIntervalMs),
      startWebhooks: () => startWebhookSender(services.webhookSender),
      listening: () => stores.node?.channel.ready(),
      async close() {
        // Stop taking TLS connections first; the ones handed over close with the app.
        const tlsClosed = tls?.close();
        await app.close();
        await tlsClosed;
        // Every answer is sent: what was counted since the last flush is written before the stores close.
        await flusher?.stop();
        await stores.close();
      },
    };
  } catch (err) {
    await stores.close();
    throw err;
  }
}

/** Every core dependency object, built once from the stores: the API's routes and the dashboard share them. */
/** Certificates on demand when ACME_DIRECTORY_URL is set (with TLS_PORT). */
function certificateIssuer(
  stores: Stores,
  options: ComposeOptions,
  events: WebhookEvents,
): CertificateIssuer | undefined {
  const acme = stores.config.tls?.acme;
  if (acme === undefined) return undefined;
  return new CertificateIssuer({
    db: stores.db,
    clock: stores.clock,
    config: stores.config,
    changes: stores.changes,
    lease: stores.lease,
    logger: stores.logger,
    sealKey: stores.keys.tlsKeys,
    events,
    directoryUrl: acme.directoryUrl,
    ...(options.tlsHandshakeWaitMs ? { handshakeWaitMs: options.tlsHandshakeWaitMs } : {}),
    ca: createAcmeCa({
      ...acme,
      ...(options.acmeChallengePriority ? { challengePriority: options.acmeChallengePriority } : {}),
    }),
  });
}

function coreServices(
  stores: Stores,
  options: ComposeOptions,
  certificates: CertificateIssuer | undefined,
  events: WebhookEvents,
): Services {
  const { config, db, clock, changes, keys, logger, blobs, rate } = stores;
  const allowAddresses = new Set(options.webhooks?.allowAddresses ?? []);
  const bodyPace = options.bodyPace ?? BODY_PACE;
  const publish = {
    db,
    blobs,
    clock,
    config,
    uploadKey: keys.uploadToken,
    changes,
    finalizeChecks: [secretScanCheck({ db, blobs, clock, config }), blockedContentCheck(db)],
    events,
  };
  const secrets = { db, clock, variablesKey: keys.variables };
  return {
    config,
    logger,
    clock,
    health: { db, blobs, logger },
    rateLimit: { db, clock, rate, limits: config.rateLimits },
    signIn: {
      db,
      mailer: stores.mailer,
      clock,
      codeKey: keys.loginCode,
      serviceName: 'Slipway',
      rate,
      limits: config.signInLimits,
    },
    sessions: { db, clock, csrfKey: keys.csrf, config },
    account: { db, planOverrides: config.planOverrides },
    publish,
    uploads: { ...publish, uploadsPerClient: options.uploadsPerClient ?? UPLOADS_PER_CLIENT },
    secrets,
    proxy: { ...secrets, config, rate, resolve: stores.resolveHost, ca: options.proxyCa },
    hosts: { db, clock, config, changes, dns: stores.dns, events },
    webhooks: { db, clock, config, webhookKey: keys.webhooks, allowAddresses },
    reports: { db, clock, config, rate, mailer: stores.mailer, logger },
    webhookSender: {
      db,
      clock,
      logger,
      lease: stores.lease,
      webhookKey: keys.webhooks,
      resolve: stores.resolveHost,
      options: { ...WEBHOOK_SENDER_DEFAULTS, ...options.webhooks?.sender },
      allowAddresses,
      ...(options.webhooks?.ca ? { ca: options.webhooks.ca } : {}),
    },
    billing: {
      db,
      clock,
      config,
      payments: stores.payments,
      changes,
      logger,
      portalKey: keys.billingPortal,
    },
    bodyPace,
    operators: { db, clock, changes, config },
    ...(certificates
      ? { acme: { httpChallenge: (token: string) => certificates.httpChallenge(token) } }
      : {}),
    site: { db, blobs, logger, clock, changes, rate, siteCookieKey: keys.siteCookie, bodyPace, config },
    sweep: {
      db,
      blobs,
      clock,
      changes,
      logger,
      anonymousGraceMs: config.anonymousGraceMs,
      auditRetentionDays: config.auditRetentionDays,
      lease: stores.lease,
      ...(certificates ? { renewCertificates: () => certificates.renewDue() } : {}),
      sweepWebhooks: () => sweepWebhooks({ db, clock, config }),
      sweepAnalytics: () => sweepAnalytics(db, clock.now(), config.analyticsRetentionDays),
    },
  };
}

/**
 * What a node does once before its WORKERS start, so they do not race for it: DATA_DIR's permissions, the
 * generated secrets key, the database's migrations.
 */
export async function prepareNode(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  secureDataDir(config, logger);
  if (config.secretsKey === undefined) loadOrCreateSecretsKey(config.dataDir);
  const db = Db.fromConfig(config.database, { logger });
  try {
    await db.migrate();
  } finally {
    await db.close();
  }
}

function secureDataDir(config: Config, logger: Logger): void {
  if (!usesDataDir(config)) return;
  const changes = securePrivateDir(config.dataDir);
  if (changes.length > 0) {
    logger.warn(
      { dataDir: config.dataDir, tightened: changes },
      'DATA_DIR was readable by others: permissions tightened to 0700 (directories) and 0600 (files)',
    );
  }
}

/** Opens every store configuration names; a backend that cannot be reached stops start-up. */
export async function openStores(config: Config, options: ComposeOptions = {}): Promise<Stores> {
  const clock = options.clock ?? systemClock;
  const nodeLogger = createLogger(config.logLevel, options.logStream);
  // Each of a node's workers tags its lines with its pid: which one answered, which one failed.
  const logger = options.worker ? nodeLogger.child({ pid: process.pid }) : nodeLogger;
  if (!options.worker) secureDataDir(config, logger);
  const keys = deriveKeys(config.secretsKey ?? loadOrCreateSecretsKey(config.dataDir));

  const node = options.worker ? await joinNode() : undefined;
  const db = options.db ?? Db.fromConfig(config.database, { logger });
  if (!node) await db.migrate();

  const blobStore =
    config.blobs.provider === 's3'
      ? new S3BlobStore(config.blobs, { clock })
      : new DiskBlobStore(config.blobs.dir, { clock });
  await blobStore.init();
  const blobs: BlobStore = blobStore;

  const mailer: Mailer =
    config.mail.transport === 'smtp'
      ? new SmtpMailer(config.mail.url, config.mailFrom)
      : new DevMailer(config.mail.outboxFile, config.mailFrom, options.devMailWrite);

  const shared = config.redisUrl
    ? await connectRedis(config.redisUrl, config.redisPrefix, logger, node?.shared.nodeId)
    : undefined;
  // One process: its memory. Workers of one node: the primary's (exact across them), unless Redis shares
  // counters and leases across nodes; changes reach the node's workers through the primary either way.
  const rate: RateStore =
    shared?.rate ?? (node ? new WorkerRateStore(node.channel) : new MemoryRateStore(clock));
  const changes: ChangeBus = node
    ? new WorkerChangeBus(node.channel, shared?.changes, logger)
    : (shared?.changes ?? new LocalChangeBus());
  const lease: Lease = shared?.lease ?? (node ? new WorkerLease(node.channel) : new MemoryLease({ clock }));

  return {
    config,
    clock,
    logger,
    db,
    blobs,
    mailer,
    rate,
    keys,
    changes,
    lease,
    payments:
      config.payments.provider === 'razorpay'
        ? new RazorpayProvider(config.payments)
        : new TestPaymentProvider(config.baseUrl, config.payments.webhookSecret, keys.testCheckout),
    resolveHost: createAddressResolver(config.dnsServers),
    dns: createDnsLookups(config.dnsServers),
    ticketKeys: node ? Buffer.from(node.shared.ticketKeys, 'hex') : undefined,
    node,
    async close() {
      await Promise.allSettled([
        mailer.close(),
        rate.close(),
        lease.close(),
        changes.close(),
        blobs.close?.(),
      ]);
      if (shared) await closeConnection(shared.redis);
      await db.close();
    },
  };
}

/** Whether anything lives in DATA_DIR: the generated key, SQLite, disk blobs or the dev outbox. */
function usesDataDir(config: Config): boolean {
  return (
    config.secretsKey === undefined ||
    config.database.dialect === 'sqlite' ||
    config.blobs.provider === 'disk' ||
    config.mail.transport === 'dev'
  );
}

/** This worker's channel to the node's primary, and what the node's workers share. */
async function joinNode(): Promise<{ channel: PrimaryChannel; shared: NodeShared }> {
  const channel = new PrimaryChannel();
  return { channel, shared: await channel.request<NodeShared>({ op: 'node' }) };
}

/** The Redis-backed shared stores; a Redis that cannot be reached stops start-up. */
async function connectRedis(url: string, prefix: string, logger: Logger, nodeId: string | undefined) {
  const redis = openRedis(url, { name: 'slipway', logger });
  try {
    await redis.connect();
    const changes = await RedisChangeBus.create(url, { prefix, logger, ...(nodeId ? { nodeId } : {}) });
    return {
      redis,
      changes,
      rate: new RedisRateStore(redis, { prefix }),
      lease: new RedisLease(redis, { prefix }),
    };
  } catch (err) {
    redis.disconnect();
    throw err;
  }
}
