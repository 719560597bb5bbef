// The thin database handle: a Kysely instance for SQLite (better-sqlite3) or PostgreSQL (pg), the
// migration runner, a transaction helper and the one place dialect quirks live.

import { Socket } from 'node:net';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type Driver,
  Kysely,
  Migrator,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  sql,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '../../config.js';
import { LogThrottle } from '../../shared/log-throttle.js';
import { makePrivateDir, touchPrivateFile } from '../data-dir.js';
import { migrationProvider } from './migrations.js';
import type { Database } from './schema.js';

export type Executor = Kysely<Database> | Transaction<Database>;

const PG_POOL_MAX = 10;
/** Waiting for a connection, new or pooled: past this a request fails (503) instead of queueing on. */
const PG_CONNECT_TIMEOUT_MS = 5_000;
const PG_IDLE_TIMEOUT_MS = 30_000;
const PG_STATEMENT_TIMEOUT_MS = 10_000;
const PG_QUERY_TIMEOUT_MS = 12_000;
const PG_IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;
/** Longer than the pool keeps an idle client and than any statement may run: only a dead peer is this quiet. */
const PG_SOCKET_SILENCE_MS = 35_000;
/** During an outage every pooled connection fails; one log line per interval says so. */
const CONNECTION_ERROR_LOG_INTERVAL_MS = 10_000;

// The db layer hands back numbers, so core and serve never convert: PostgreSQL returns BIGINT (OID 20) as
// a string by default (SQLite's driver gives numbers); our bigints are millisecond timestamps and byte
// counts, all well inside Number.MAX_SAFE_INTEGER. Checked by test/store/db-numbers.test.ts.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * SQLite with transactions that take the write lock when they begin (`BEGIN IMMEDIATE`). Several worker
 * processes write one file (WORKERS): a deferred transaction that read and then writes after another
 * process committed fails at once with SQLITE_BUSY (its snapshot is stale; busy_timeout cannot help), where
 * an immediate one waits its turn under busy_timeout. Reads outside transactions still never wait (WAL).
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

/** Prepared SQLite statements kept per database (distinct SQL texts: `in (?, ?, ...)` lists vary in length). */
export const STATEMENT_CACHE_MAX = 256;

/**
 * better-sqlite3's database as Kysely uses it, with its prepared statements kept by SQL text (least recently
 * used dropped past `max`): Kysely's SQLite driver prepares every query it runs, and preparing cost as much
 * as running the query (issue 23: a site's first request runs four small queries, a publish a dozen).
 * Kysely runs one query at a time per connection (its mutex), and a statement still iterating is never
 * handed out again (`busy`), so a statement is never used by two queries at once.
 */
export class StatementCache implements SqliteDatabase {
  private readonly statements = new Map<string, SQLite.Statement>();
  /** Statements prepared so far (a cache hit prepares none). */
  prepared = 0;

  constructor(
    private readonly database: SQLite.Database,
    readonly max = STATEMENT_CACHE_MAX,
  ) {}

  prepare(text: string): SQLite.Statement {
    const cached = this.statements.get(text);
    if (cached !== undefined && !cached.busy) {
      // Most recently used last (Map order), so eviction takes the first key.
      this.statements.delete(text);
      this.statements.set(text, cached);
      return cached;
    }
    const statement = this.database.prepare(text);
    this.prepared++;
    if (cached === undefined) {
      if (this.statements.size >= this.max) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(text, statement);
    }
    return statement;
  }

  get size(): number {
    return this.statements.size;
  }

  close(): void {
    this.statements.clear();
    this.database.close();
  }
}

export class Db {
  private constructor(
    readonly kysely: Kysely<Database>,
    readonly dialect: 'sqlite' | 'postgres',
    /** SQLite only: the prepared-statement cache (its size and prepare count, for tests). */
    readonly statements?: StatementCache,
  ) {}

  static sqlite(file: string): Db {
    // ':memory:' (and '') is SQLite's in-memory database, not a path: touching it would leave a file
    // named ':memory:' in the working directory (one was committed to the checkout by a test run).
    if (file !== ':memory:' && file !== '') {
      makePrivateDir(dirname(file));
      // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database file's mode.
      touchPrivateFile(file);
    }
    const database = new SQLite(file);
    // WAL: readers never block the writer. synchronous=NORMAL: a committed transaction survives a
    // crash of the process (the WAL is in the OS page cache), which is the durability CONTRACT asks for.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    database.pragma('busy_timeout = 5000');
    const statements = new StatementCache(database);
    return new Db(
      new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: statements }) }),
      'sqlite',
      statements,
    );
  }

  /**
   * A pool that survives the database going away (a restart, a failover, a network cut): every pooled
   * client has an `error` listener (without one, a reset idle connection is an uncaught exception that
   * kills the process), and every wait is bounded, so a request fails with a connection error within
   * seconds instead of hanging; the API maps that to 503 (src/store/unavailable.ts). The pool replaces
   * dead clients on the next checkout, so it reconnects by itself when the database is back.
   */
  static postgres(url: string, options: { logger?: Logger } = {}): Db {
    const pool = new pg.Pool({
      connectionString: url,
      max: PG_POOL_MAX,
      connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: PG_IDLE_TIMEOUT_MS,
      keepAlive: true,
      // Server side: a statement or an open transaction cannot hold locks for ever.
      statement_timeout: PG_STATEMENT_TIMEOUT_MS,
      idle_in_transaction_session_timeout: PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      // Client side: a peer that stops answering mid-query (a dropped network path) fails the query, and
      // a socket silent for longer than any healthy use of it is closed (pg keeps a timed-out query's
      // connection otherwise, and TCP would take many minutes to notice).
      query_timeout: PG_QUERY_TIMEOUT_MS,
      stream: () => {
        const socket = new Socket();
        socket.setTimeout(PG_SOCKET_SILENCE_MS, () =>
          socket.destroy(
            Object.assign(new Error('database connection silent; closed'), { code: 'ETIMEDOUT' }),
          ),
        );
        return socket;
      },
    });
    const throttle = new LogThrottle(CONNECTION_ERROR_LOG_INTERVAL_MS);
    const onError = (err: Error) =>
      throttle.run((suppressed) =>
        options.logger?.warn(
          { err: err.message, suppressed },
          'database connection lost; the pool reconnects',
        ),
      );
    // An idle client's failure reaches the pool; a checked-out client's, between two queries of a
    // transaction, reaches only the client (pg-pool removes its own listener while a client is lent).
    pool.on('error', onError);
    pool.on('connect', (client) => client.on('error', onError));
    return new Db(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres');
  }

  static fromConfig(config: DatabaseConfig, options: { logger?: Logger } = {}): Db {
    return config.dialect === 'sqlite' ? Db.sqlite(config.file) : Db.postgres(config.url, options);
  }

  /** Applies pending migrations; on PostgreSQL under an advisory lock so nodes starting together do not race. */
  async migrate(): Promise<void> {
    const migrator = new Migrator({ db: this.kysely, provider: migrationProvider });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
  }

  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.kysely.transaction().execute(fn);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.kysely);
  }

  async close(): Promise<void> {
    await this.kysely.destroy();
  }
}

/** True when `err` is a unique-constraint violation in either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/**
 * True when the database refused text it cannot store: PostgreSQL rejects NUL characters and invalid
 * encodings (SQLSTATE 22021, 22P05), which SQLite would keep. The input was bad, not the service.
 */
export function isUnstorableText(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05';
}
