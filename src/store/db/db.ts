// The thin database handle: a Kysely instance for SQLite (better-sqlite3) or PostgreSQL (pg), the
// migration runner, a transaction helper and the one place dialect quirks live.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../../config.js';
import { migrationProvider } from './migrations.js';
import type { Database } from './schema.js';

export type Executor = Kysely<Database> | Transaction<Database>;

// PostgreSQL returns BIGINT (OID 20) as a string by default; our bigints are millisecond timestamps
// and byte counts, all well inside Number.MAX_SAFE_INTEGER.
pg.types.setTypeParser(20, (v) => Number(v));

export class Db {
  private constructor(
    readonly kysely: Kysely<Database>,
    readonly dialect: 'sqlite' | 'postgres',
  ) {}

  static sqlite(file: string): Db {
    mkdirSync(dirname(file), { recursive: true });
    const database = new SQLite(file);
    // WAL: readers never block the writer. synchronous=NORMAL: a committed transaction survives a
    // crash of the process (the WAL is in the OS page cache), which is the durability CONTRACT asks for.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    database.pragma('busy_timeout = 5000');
    return new Db(new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), 'sqlite');
  }

  static postgres(url: string): Db {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    return new Db(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres');
  }

  static fromConfig(config: DatabaseConfig): Db {
    return config.dialect === 'sqlite' ? Db.sqlite(config.file) : Db.postgres(config.url);
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
