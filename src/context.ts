// Composition of the stores a running service uses, chosen by configuration only.

import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { BODY_PACE, type BodyPace } from './core/body-pace.js';
import { deriveKeys, loadOrCreateSecretsKey, type ServerKeys } from './core/secrets.js';
import { UPLOADS_PER_CLIENT } from './core/upload.js';
import { createLogger } from './http/logging.js';
import { type Clock, systemClock } from './shared/clock.js';
import { type ChangeBus, LocalChangeBus } from './shared/events.js';
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
import { MemoryLease } from './store/lease/memory.js';
import { RedisLease } from './store/lease/redis.js';
import type { Lease } from './store/lease/types.js';
import { DevMailer } from './store/mail/dev.js';
import { SmtpMailer } from './store/mail/smtp.js';
import type { Mailer } from './store/mail/types.js';
import { RazorpayProvider } from './store/payments/razorpay.js';
import { TestPaymentProvider } from './store/payments/test.js';
import type { PaymentProvider } from './store/payments/types.js';
import { MemoryRateStore } from './store/rate/memory.js';
import { RedisRateStore } from './store/rate/redis.js';
import type { RateStore } from './store/rate/types.js';
import { closeConnection, openRedis } from './store/redis.js';

export interface AppContext {
  config: Config;
  clock: Clock;
  logger: Logger;
  db: Db;
  blobs: BlobStore;
  mailer: Mailer;
  rate: RateStore;
  keys: ServerKeys;
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
  /** CA certificates (PEM) the site proxy trusts instead of Node's store (tests); unset = Node's store. */
  proxyCa: string | undefined;
  /** How slowly request bodies may arrive (BODY_PACE; tests shorten it). */
  bodyPace: BodyPace;
  /** Uploads one client may have under way at once on this node (UPLOADS_PER_CLIENT; tests lower it). */
  uploadsPerClient: number;
  close(): Promise<void>;
}

export interface ContextOptions {
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
  /** Replaces UPLOADS_PER_CLIENT. */
  uploadsPerClient?: number;
}

export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const clock = options.clock ?? systemClock;
  const logger = createLogger(config.logLevel, options.logStream);
  if (usesDataDir(config)) {
    const changes = securePrivateDir(config.dataDir);
    if (changes.length > 0) {
      logger.warn(
        { dataDir: config.dataDir, tightened: changes },
        'DATA_DIR was readable by others: permissions tightened to 0700 (directories) and 0600 (files)',
      );
    }
  }
  const keys = deriveKeys(config.secretsKey ?? loadOrCreateSecretsKey(config.dataDir));

  const db = options.db ?? Db.fromConfig(config.database, { logger });
  await db.migrate();

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
    ? await connectRedis(config.redisUrl, config.redisPrefix, logger)
    : undefined;
  const rate: RateStore = shared?.rate ?? new MemoryRateStore(clock);
  const changes: ChangeBus = shared?.changes ?? new LocalChangeBus();
  const lease: Lease = shared?.lease ?? new MemoryLease({ clock });

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
    proxyCa: options.proxyCa,
    bodyPace: options.bodyPace ?? BODY_PACE,
    uploadsPerClient: options.uploadsPerClient ?? UPLOADS_PER_CLIENT,
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

/** The Redis-backed shared stores; a Redis that cannot be reached stops start-up. */
async function connectRedis(url: string, prefix: string, logger: Logger) {
  const redis = openRedis(url, { name: 'slipway', logger });
  try {
    await redis.connect();
    const changes = await RedisChangeBus.create(url, { prefix, logger });
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
