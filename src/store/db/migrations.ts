// Versioned schema migrations, kept in code so they ship inside dist/ and run the same on SQLite and
// PostgreSQL. Only portable column types: text, integer, bigint. Never edit a released migration.

import { createHash } from 'node:crypto';
import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';
import { versionLabel } from '../../shared/preview-names.js';

const migrations: Record<string, Migration> = {
  '001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free'))
        .addColumn('handle', 'text', (c) => c.unique())
        .addColumn('api_key_hash', 'text', (c) => c.unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('login_codes')
        .addColumn('email', 'text', (c) => c.primaryKey())
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('sites')
        .addColumn('slug', 'text', (c) => c.primaryKey())
        .addColumn('owner_id', 'text', (c) => c.references('accounts.id'))
        .addColumn('current_version_id', 'text')
        .addColumn('title', 'text')
        .addColumn('description', 'text')
        .addColumn('og_image_path', 'text')
        .addColumn('password_hash', 'text')
        .addColumn('expires_at', 'bigint')
        .addColumn('claim_token_hash', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('sites_owner_idx')
        .on('sites')
        .columns(['owner_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('versions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('site_slug', 'text', (c) => c.notNull().references('sites.slug'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('finalized_at', 'bigint')
        .addColumn('upload_expires_at', 'bigint', (c) => c.notNull())
        .addColumn('file_count', 'integer', (c) => c.notNull())
        .addColumn('total_size', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('versions_site_idx')
        .on('versions')
        .columns(['site_slug', 'created_at'])
        .execute();

      await db.schema
        .createTable('version_files')
        .addColumn('version_id', 'text', (c) => c.notNull().references('versions.id').onDelete('cascade'))
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('content_type', 'text', (c) => c.notNull())
        .addColumn('expected_hash', 'text')
        .addColumn('hash', 'text')
        .addPrimaryKeyConstraint('version_files_pk', ['version_id', 'path'])
        .execute();
      await db.schema.createIndex('version_files_hash_idx').on('version_files').column('hash').execute();
      await db.schema
        .createIndex('version_files_expected_hash_idx')
        .on('version_files')
        .column('expected_hash')
        .execute();

      await db.schema
        .createTable('blobs')
        .addColumn('hash', 'text', (c) => c.primaryKey())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  /**
   * Usage counters on the account (issue 9: a create counted and summed every owned site, so publishing
   * slowed as an account grew). Filled from the sites as they are; tables/site.ts keeps them from then on.
   */
  '002_account_usage_counters': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('accounts')
        .addColumn('site_count', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('accounts')
        .addColumn('stored_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`
        update accounts set
          site_count = (select count(*) from sites s where s.owner_id = accounts.id and s.deleted_at is null),
          stored_bytes = (select coalesce(sum(v.total_size), 0) from sites s
                          join versions v on v.id = s.current_version_id
                          where s.owner_id = accounts.id and s.deleted_at is null)
      `.execute(db);
    },
  },
  /**
   * Issue 10: the secret scan's results per blob and scanner version (a blob is scanned once, ever), and
   * each site's encrypted variables and proxy host allowlist.
   */
  '003_scan_variables_proxy_hosts': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('blob_scans')
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('scanner_version', 'text', (c) => c.notNull())
        .addColumn('findings', 'text', (c) => c.notNull())
        .addColumn('scanned_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('blob_scans_pk', ['hash', 'scanner_version'])
        .execute();

      await db.schema
        .createTable('site_variables')
        .addColumn('site_slug', 'text', (c) => c.notNull().references('sites.slug'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('ciphertext', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('site_variables_pk', ['site_slug', 'name'])
        .execute();

      await db.schema
        .createTable('site_proxy_hosts')
        .addColumn('site_slug', 'text', (c) => c.notNull().references('sites.slug'))
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('site_proxy_hosts_pk', ['site_slug', 'hostname'])
        .execute();
    },
  },
  /**
   * Issue 11: billing. A subscription row per provider subscription, the ids of the provider events
   * already applied (replays change nothing), and how long a Hobby plan still runs after its
   * subscription stopped renewing (`plan_until`).
   */
  '004_billing': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('accounts').addColumn('plan_until', 'bigint').execute();

      await db.schema
        .createTable('subscriptions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('short_url', 'text', (c) => c.notNull())
        .addColumn('current_end', 'bigint')
        .addColumn('event_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('checkout_token_hash', 'text', (c) => c.unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('subscriptions_account_idx')
        .on('subscriptions')
        .columns(['account_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('billing_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  /**
   * Issue 12: custom domains (verified by DNS) and links mounting sites on a handle or a domain. The
   * handle itself is `accounts.handle` (unique since 001).
   */
  '005_domains_links': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('domains')
        .addColumn('domain', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('verified_at', 'bigint')
        .addColumn('tls_requested_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('domains_account_idx')
        .on('domains')
        .columns(['account_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('links')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('site_slug', 'text', (c) => c.notNull().references('sites.slug'))
        // '' = the account's handle (whatever it is called now), else a domain of the account.
        .addColumn('domain', 'text', (c) => c.notNull())
        .addColumn('location', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('links_target_location_uq', ['account_id', 'domain', 'location'])
        .execute();
      await db.schema.createIndex('links_site_idx').on('links').column('site_slug').execute();
      await db.schema.createIndex('links_domain_idx').on('links').column('domain').execute();
    },
  },
  /** Issue 14: browser sessions of the web pages (the cookie holds a random token; only its hash is stored). */
  '006_sessions': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_account_idx').on('sessions').column('account_id').execute();
    },
  },
  /**
   * Issue 19: a domain is no longer one row. Several accounts may hold it pending (DNS decides who owns
   * it), each account at most once; at most one entry per domain is active, which the partial unique
   * index enforces (two verifies at once cannot both win). SQLite cannot change a primary key in place,
   * so the table is rebuilt (same on PostgreSQL, for one path).
   */
  '007_domain_claims': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('domains_new')
        .addColumn('domain', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('verified_at', 'bigint')
        .addColumn('tls_requested_at', 'bigint')
        .addPrimaryKeyConstraint('domains_pk', ['domain', 'account_id'])
        .execute();
      await sql`
        insert into domains_new (domain, account_id, status, token, created_at, verified_at, tls_requested_at)
        select domain, account_id, status, token, created_at, verified_at, tls_requested_at from domains
      `.execute(db);
      await db.schema.dropTable('domains').execute();
      await db.schema.alterTable('domains_new').renameTo('domains').execute();
      await db.schema
        .createIndex('domains_account_idx')
        .on('domains')
        .columns(['account_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('domains_active_uq')
        .on('domains')
        .column('domain')
        .unique()
        .where(sql.ref('status'), '=', 'active')
        .execute();
    },
  },
  /**
   * Issue 19: the test checkout link's token (it pays for the account) was kept in clear in `short_url`.
   * Only its SHA-256 stays, also after the payment (a used link then still says so); the link is not kept.
   */
  '008_checkout_token_at_rest': {
    async up(db: Kysely<unknown>) {
      const rows = await sql<{ id: string; short_url: string; checkout_token_hash: string | null }>`
        select id, short_url, checkout_token_hash from subscriptions where provider = 'test'
      `.execute(db);
      for (const row of rows.rows) {
        const token = row.short_url.slice(row.short_url.lastIndexOf('/') + 1);
        const hash =
          row.checkout_token_hash ?? (token === '' ? null : createHash('sha256').update(token).digest('hex'));
        await sql`update subscriptions set short_url = '', checkout_token_hash = ${hash}
          where id = ${row.id}`.execute(db);
      }
    },
  },
  /**
   * Issue 22: TLS terminated by the service. Certificates obtained on demand over ACME (keys sealed with
   * a sub-key of SECRETS_KEY), with the state of their issuance (last error, backoff); the pending
   * challenges any node answers; the ACME account key per directory; a custom domain's last TLS error.
   */
  '009_tls_certificates': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tls_certificates')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('cert_pem', 'text')
        .addColumn('key_sealed', 'text')
        .addColumn('not_after', 'bigint')
        .addColumn('issued_at', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('tls_certificates_not_after_idx')
        .on('tls_certificates')
        .column('not_after')
        .execute();
      await db.schema
        .createTable('acme_challenges')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('key_pem', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('acme_accounts')
        .addColumn('directory_url', 'text', (c) => c.primaryKey())
        .addColumn('key_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('domains').addColumn('tls_error', 'text').execute();
    },
  },
  /**
   * Issue 23 (100,000 sites on one node): the sweeper's look-ups of stale pending versions and expired
   * anonymous sites scanned every version and every anonymous site, at start and every sweep (on SQLite,
   * holding the event loop meanwhile). Each now reads an index range.
   */
  '010_sweeper_indexes': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('versions_status_upload_expires_idx')
        .on('versions')
        .columns(['status', 'upload_expires_at'])
        .execute();
      // Anonymous sites (owner_id null) by expiry: the range that has run out, not every anonymous site.
      await db.schema
        .createIndex('sites_owner_expires_idx')
        .on('sites')
        .columns(['owner_id', 'expires_at'])
        .execute();
    },
  },
  /**
   * Issue 24: previews and aliases. Every version gets its label (the name of its preview host), looked up
   * by site and label; older versions get theirs here, from their ids. A site's aliases point at its
   * versions by name.
   */
  '011_previews': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('versions').addColumn('label', 'text').execute();
      for (;;) {
        const rows = await sql<{ id: string }>`
          select id from versions where label is null limit 500
        `.execute(db);
        if (rows.rows.length === 0) break;
        for (const { id } of rows.rows) {
          await sql`update versions set label = ${versionLabel(id)} where id = ${id}`.execute(db);
        }
      }
      await db.schema
        .createIndex('versions_site_label_idx')
        .on('versions')
        .columns(['site_slug', 'label'])
        .execute();
      await db.schema
        .createTable('site_aliases')
        .addColumn('site_slug', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('version_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('site_aliases_pk', ['site_slug', 'name'])
        .execute();
    },
  },
  /**
   * Issue 24: deploy tokens, each for one site of its owner (CI). Only the token's SHA-256 is stored; a
   * deleted site's tokens go with it (tombstoneSite). `last_used_at` is written at most once a minute.
   */
  '012_deploy_tokens': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('deploy_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('site_slug', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('deploy_tokens_site_idx')
        .on('deploy_tokens')
        .columns(['site_slug', 'created_at'])
        .execute();
    },
  },
  /**
   * Issue 24 (signed deploy webhooks): an account's endpoints (the signing secret sealed with a sub-key of
   * SECRETS_KEY), the queue of deliveries (one row per event and endpoint; the sender of one node polls the
   * due ones), and the expiry warnings already queued (one per site and expiry time).
   */
  '013_webhooks': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('site_slug', 'text')
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhook_endpoints_account_idx')
        .on('webhook_endpoints')
        .columns(['account_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint')
        .addColumn('give_up_at', 'bigint', (c) => c.notNull())
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('delivered_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      // The sender's look-up: pending rows by due time.
      await db.schema
        .createIndex('webhook_deliveries_due_idx')
        .on('webhook_deliveries')
        .columns(['status', 'next_attempt_at'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_endpoint_idx')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('webhook_expiry_notices')
        .addColumn('site_slug', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_expiry_notices_pk', ['site_slug', 'expires_at'])
        .execute();
    },
  },
  /** Issue 25: visit counts per site (hour and day rows with a visitor sketch), top keys per day, the day's salt. */
  '014_analytics': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('analytics_counts')
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('granularity', 'text', (c) => c.notNull())
        .addColumn('start', 'bigint', (c) => c.notNull())
        .addColumn('page_views', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('not_found', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('bots', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('status_1xx', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('status_2xx', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('status_3xx', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('status_4xx', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('status_5xx', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('visitors', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('sketch', 'text')
        .addPrimaryKeyConstraint('analytics_counts_pk', ['slug', 'granularity', 'start'])
        .execute();
      // Retention deletes by age across sites.
      await db.schema
        .createIndex('analytics_counts_start_idx')
        .on('analytics_counts')
        .columns(['granularity', 'start'])
        .execute();
      await db.schema
        .createTable('analytics_keys')
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('day', 'bigint', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('analytics_keys_pk', ['slug', 'day', 'kind', 'key'])
        .execute();
      await db.schema.createIndex('analytics_keys_day_idx').on('analytics_keys').column('day').execute();
      await db.schema
        .createTable('analytics_salts')
        .addColumn('day', 'bigint', (c) => c.primaryKey())
        .addColumn('salt', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .alterTable('sites')
        .addColumn('analytics_off', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  /**
   * Issue 26 (operators): a site taken down by an operator (reason and time; its content is kept until an
   * operator deletes the site), an account suspended (reason and time), and the blocklists (sign-in
   * addresses and domains, anonymous publishers' addresses and ranges, file hashes).
   */
  '015_operators': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('sites').addColumn('takedown_reason', 'text').execute();
      await db.schema.alterTable('sites').addColumn('takedown_at', 'bigint').execute();
      await db.schema.alterTable('accounts').addColumn('suspended_reason', 'text').execute();
      await db.schema.alterTable('accounts').addColumn('suspended_at', 'bigint').execute();
      await db.schema
        .createTable('blocks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // One row per kind and value; the finalize check joins version_files.hash on it.
      await db.schema
        .createIndex('blocks_kind_value_idx')
        .on('blocks')
        .columns(['kind', 'value'])
        .unique()
        .execute();
    },
  },
  /**
   * Issue 26 (the audit log): one row per change to an account's things and per operator action, written
   * in the change's transaction (core/audit.ts). Read per account newest first; pruned by time.
   */
  '016_audit': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text')
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('actor_kind', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('ip', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('audit_log_account_idx')
        .on('audit_log')
        .columns(['account_id', 'id'])
        .execute();
      await db.schema.createIndex('audit_log_at_idx').on('audit_log').column('at').execute();
    },
  },
  /** Issue 26: abuse reports, newest first per status for the operators' list. */
  '017_reports': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('reports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('host', 'text', (c) => c.notNull())
        .addColumn('site_slug', 'text')
        .addColumn('category', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('contact', 'text')
        .addColumn('reporter_ip', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('reports_status_idx')
        .on('reports')
        .columns(['status', 'created_at'])
        .execute();
    },
  },
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
