// Backend sets for the serving bench. `embedded`: the defaults (SQLite + disk blobs + in-process rate).
// `scaleout`: a throwaway PostgreSQL database on 127.0.0.1:5432, s3rver (test/helpers/s3.ts) and Redis on
// 127.0.0.1:6379 under a unique key prefix; release() drops the database, stops s3rver, deletes the keys.

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { startS3rver } from '../../test/helpers/s3.js';
import { run } from './serve-tools.js';

export type BackendName = 'embedded' | 'scaleout';

export interface Backend {
  name: BackendName;
  /** Environment of the service for this backend set. */
  env: Record<string, string>;
  /** Human summary (which stores). */
  summary: string;
  release(): Promise<void>;
}

const PG_ADMIN = { host: '127.0.0.1', user: 'postgres' };
const PG_BASE_URL = 'postgres://postgres@127.0.0.1:5432';
const REDIS_URL = 'redis://127.0.0.1:6379';
const TMPFS = '/dev/shm';

export function embeddedBackend(): Backend {
  return {
    name: 'embedded',
    env: {},
    summary: 'SQLite + disk blobs + in-process rate limiter',
    release: async () => {},
  };
}

async function psql(sql: string): Promise<void> {
  const res = await run('psql', [
    '-h',
    PG_ADMIN.host,
    '-U',
    PG_ADMIN.user,
    '-d',
    'postgres',
    '-v',
    'ON_ERROR_STOP=1',
    '-c',
    sql,
  ]);
  if (res.code !== 0) throw new Error(`psql -c "${sql}" failed: ${res.out.trim()}`);
}

export async function scaleoutBackend(): Promise<Backend> {
  const id = randomBytes(6).toString('hex');
  const database = `slipway_bench_${id}`;
  const redisPrefix = `slipway-bench-${id}:`;
  const released: Array<() => Promise<void>> = [];
  const release = async () => {
    for (const step of released.reverse()) {
      try {
        await step();
      } catch (err) {
        process.stderr.write(`cleanup: ${(err as Error).message}\n`);
      }
    }
    released.length = 0;
  };
  try {
    await psql(`create database ${database}`);
    released.push(() => psql(`drop database if exists ${database} with (force)`));
    // The stand-in's objects live in memory (tmpfs) when the machine has one: a real object store keeps
    // them on its own machines, so s3rver's file writes on ours are no cost of the service. (On this
    // 2-core machine they cost s3rver 4-7 ms of CPU per PutObject on disk, 2 ms on tmpfs.)
    // BENCH_S3RVER_DIR overrides the place (e.g. /tmp to measure with s3rver on disk).
    const s3root = process.env.BENCH_S3RVER_DIR ?? (existsSync(TMPFS) ? TMPFS : undefined);
    const s3 = await startS3rver(s3root === undefined ? {} : { root: s3root });
    released.push(() => s3.close());
    released.push(() => deleteRedisKeys(redisPrefix));
    return {
      name: 'scaleout',
      env: {
        DATABASE_URL: `${PG_BASE_URL}/${database}`,
        S3_BUCKET: s3.bucket,
        S3_ENDPOINT: s3.endpoint,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: s3.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        S3_FORCE_PATH_STYLE: 'true',
        REDIS_URL,
        REDIS_PREFIX: redisPrefix,
      },
      summary: `PostgreSQL (${database}) + s3rver (objects in ${s3root ?? 'the temp dir'}) + Redis (prefix ${redisPrefix})`,
      release,
    };
  } catch (err) {
    await release();
    throw err;
  }
}

async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
