// Round trips to PostgreSQL and S3 of a create, one upload and a finalize on the scale-out set (issue 23):
// every statement and every object-store request is counted, so one that creeps back in fails here. Scale-out
// only (scripts/test.mjs): the embedded set's SQLite and disk calls are in-process, not round trips.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { S3BlobStore } from '../../src/store/blob/s3.js';
import { type ApiResponse, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type Files, manifestOf, putUpload, uploadAll } from '../helpers/publish.js';

/** A site of the manifest's largest size (MAX_MANIFEST_FILES), so finalize's per-file costs would show. */
const FILE_COUNT = 1000;

interface Trips {
  /** Statements sent to PostgreSQL (BEGIN and COMMIT included). */
  sql: string[];
  /** S3 commands sent (by name). */
  s3: string[];
}

describe('round trips of the publish flow on the scale-out set', () => {
  let t: TestApp;
  let key: string;
  let counting: Trips | null = null;
  const originalQuery = pg.Client.prototype.query;

  /** What `step` sent to PostgreSQL and S3 while it ran (nothing else runs meanwhile). */
  async function tripsOf(step: () => Promise<void>): Promise<Trips> {
    counting = { sql: [], s3: [] };
    try {
      await step();
      return counting;
    } finally {
      counting = null;
    }
  }

  before(async () => {
    // The pool's clients are pg.Client instances: every statement of the app passes through this.
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const first = args[0] as string | { text?: string };
      counting?.sql.push(typeof first === 'string' ? first : String(first.text));
      return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof originalQuery;
    // The other files go up all at once (only the counted upload and finalize run alone).
    t = await startTestApp({}, { uploadsPerClient: FILE_COUNT });
    assert.ok(t.ctx.blobs instanceof S3BlobStore, 'the scale-out set stores blobs in S3');
    t.ctx.blobs.client.middlewareStack.add(
      (next, context) => (args) => {
        counting?.s3.push(context.commandName ?? 'unknown');
        return next(args);
      },
      { step: 'initialize', name: 'countRoundTrips' },
    );
    key = await signIn(t, 'trips@example.com');
  });

  after(async () => {
    pg.Client.prototype.query = originalQuery;
    await t?.close();
  });

  test(`the create of a ${FILE_COUNT}-file site, one upload, and its finalize`, async (ctx) => {
    const files: Files = {
      'index.html': '<!doctype html><title>round trips</title><p>text the secret scan reads</p>',
      'data.bin': {
        body: Buffer.from('binary bytes the scan skips'),
        contentType: 'application/octet-stream',
      },
    };
    for (let i = 0; i < FILE_COUNT - 2; i++) files[`f/${i}.txt`] = `file ${i}`;
    let created!: ApiResponse;
    const create = await tripsOf(async () => {
      created = await t.api('/api/v1/publish', { method: 'POST', key, body: { files: manifestOf(files) } });
      assert.equal(created.status, 201, created.text);
    });
    const entries = created.body.upload.uploads as Array<{ path: string; url: string }>;
    const urlOf = (path: string) => entries.find((u) => u.path === path)!.url;

    const uploadTrips = async (path: string, contentType: string) =>
      tripsOf(async () => {
        const body = files[path] as string | { body: Buffer };
        const res = await putUpload(urlOf(path), typeof body === 'string' ? body : body.body, contentType);
        assert.equal(res.status, 200, res.text);
      });
    const text = await uploadTrips('index.html', 'text/html; charset=utf-8');
    const binary = await uploadTrips('data.bin', 'application/octet-stream');
    const retry = await uploadTrips('data.bin', 'application/octet-stream');
    const rest = Object.fromEntries(
      Object.entries(files).filter(([p]) => p !== 'index.html' && p !== 'data.bin'),
    );
    for (const res of await uploadAll({ upload: { uploads: entries.filter((u) => u.path in rest) } }, rest))
      assert.equal(res.status, 200, res.text);
    const finalize = await tripsOf(async () => {
      const res = await t.api(`/api/v1/publish/${created.body.slug}/finalize`, {
        method: 'POST',
        key,
        body: { versionId: created.body.upload.versionId },
      });
      assert.equal(res.status, 200, res.text);
    });

    for (const [name, trips] of Object.entries({ create, text, binary, retry, finalize }))
      ctx.diagnostic(
        `${name}: ${trips.sql.length} SQL [${trips.sql.map((s) => s.slice(0, 80)).join(' | ')}]; S3 [${trips.s3.join(', ')}]`,
      );
    assert.deepEqual(
      {
        create: { sql: create.sql.length, s3: create.s3 },
        text: { sql: text.sql.length, s3: text.s3 },
        binary: { sql: binary.sql.length, s3: binary.s3 },
        retry: { sql: retry.sql.length, s3: retry.s3 },
        finalize: { sql: finalize.sql.length, s3: finalize.s3 },
      },
      {
        // The last statement before COMMIT is the audit log's entry (issue 26: in the change's transaction).
        create: { sql: 11, s3: [] },
        // The address carries the manifest's size and hash: one statement records bytes and scan result.
        text: { sql: 1, s3: ['PutObjectCommand'] },
        binary: { sql: 1, s3: ['PutObjectCommand'] },
        // The statement changed nothing, so the file's row says why (here: already these bytes).
        retry: { sql: 2, s3: ['PutObjectCommand'] },
        // Reads and writes per statement, never per file; the last is site.published's queueing (webhooks:
        // one INSERT ... SELECT that inserts nothing for an account without endpoints); one statement checks
        // every file against the operators' blocked hashes, and the audit entry is written before COMMIT.
        finalize: { sql: 17, s3: [] },
      },
    );
  });

  test('an upload whose manifest entry had no hash reads the file row first: two statements', async () => {
    const files: Files = { 'index.html': '<!doctype html><title>no hash given</title>' };
    const created = await t.api('/api/v1/publish', {
      method: 'POST',
      key,
      body: { files: manifestOf(files, { hashes: false }) },
    });
    assert.equal(created.status, 201, created.text);
    const [entry] = created.body.upload.uploads as Array<{ url: string }>;
    const trips = await tripsOf(async () => {
      const res = await putUpload(entry!.url, files['index.html'] as string, 'text/html; charset=utf-8');
      assert.equal(res.status, 200, res.text);
    });
    assert.deepEqual({ sql: trips.sql.length, s3: trips.s3 }, { sql: 2, s3: ['PutObjectCommand'] });
  });
});
