// Archive deploys (CONTRACT "Archive deploys", issue 24 part 3): POST /api/v1/publish/:slug/archive and
// POST /api/v1/publish/archive through real HTTP, on both backend sets. A good archive is served byte for
// byte; every bad entry type, a corrupt or truncated archive, the limits and a secret refuse the archive
// and leave no site, no version and no live change; a client killed mid-upload leaves nothing either.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { REQUEST_TIMEOUT_MS } from '../../src/app.js';
import { BLOB_MIN_AGE_MS } from '../../src/core/sweeper.js';
import { rawRequest, signIn, startTestApp, sweepNow, type TestApp } from '../helpers/app.js';
import { sha256 } from '../helpers/publish.js';
import { siteHost } from '../helpers/seed.js';
import { fileEntries, type TarEntrySpec, tar, tgz } from '../helpers/tar.js';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomKey = (n: number) => Array.from(randomBytes(n), (b) => BASE62[b % 62]).join('');

const LONG_DIR = `${'deep-folder-name/'.repeat(8)}`;
const LONG_PATH = `${LONG_DIR}long-file-name.txt`; // 154 characters: needs pax or a GNU long name
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 255]);

/** What `tar -czf - -C site .` writes: `./` names, folder entries, a pax long name, an empty file. */
function goodArchive(index = '<!doctype html><h1>Hello from a tarball</h1>'): TarEntrySpec[] {
  return [
    { name: './', type: '5' },
    { name: './index.html', body: index },
    { name: './css/', type: '5' },
    { name: './css/site.css', body: 'body { color: teal }' },
    { name: './img/logo.png', body: PNG },
    { name: './LICENSE', body: 'MIT License, plain text without an extension' },
    { name: './blob', body: Buffer.from([0, 159, 146, 150, 0, 1]) },
    { name: './empty.txt', body: '' },
    { name: 'PaxHeader/long', pax: { path: `./${LONG_PATH}` }, body: 'reached through a pax path' },
    {
      name: 'gnu-truncated-name',
      gnuLongName: `./${LONG_DIR}gnu-long-name.js`,
      body: 'console.log("gnu long name")',
    },
  ];
}

async function deploy(
  t: TestApp,
  body: Buffer,
  opts: { slug?: string; key?: string; contentType?: string; query?: string } = {},
) {
  const path = opts.slug ? `/api/v1/publish/${opts.slug}/archive` : '/api/v1/publish/archive';
  return t.api(`${path}${opts.query ?? ''}`, {
    method: 'POST',
    body,
    headers: { 'content-type': opts.contentType ?? 'application/gzip' },
    ...(opts.key ? { key: opts.key } : {}),
  });
}

async function served(t: TestApp, slug: string, path: string) {
  return rawRequest(t.port, { host: siteHost(slug, t.port), path: `/${path}` });
}

/** The database's view of a site: its live version, its versions by status, whether it is live. */
async function siteState(t: TestApp, slug: string) {
  const db = t.ctx.db.kysely;
  const site = await db.selectFrom('sites').selectAll().where('slug', '=', slug).executeTakeFirst();
  const versions = await db
    .selectFrom('versions')
    .select(['id', 'status'])
    .where('site_slug', '=', slug)
    .execute();
  return {
    live: site?.deleted_at === null ? site.current_version_id : undefined,
    finalized: versions.filter((v) => v.status === 'finalized').length,
    pending: versions.filter((v) => v.status === 'pending').length,
  };
}

async function liveSiteCount(t: TestApp): Promise<number> {
  const rows = await t.ctx.db.kysely
    .selectFrom('sites')
    .select('slug')
    .where('deleted_at', 'is', null)
    .execute();
  return rows.length;
}

async function referencedFiles(t: TestApp): Promise<number> {
  const rows = await t.ctx.db.kysely.selectFrom('version_files').select('path').execute();
  return rows.length;
}

function assertRefused(res: { status: number; body: unknown }, status: number, code: string, entry?: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as Record<string, unknown>;
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
  if (entry !== undefined) {
    assert.equal(body.entry, entry, JSON.stringify(body));
    assert.ok((body.error as string).includes(JSON.stringify(entry)), body.error as string);
  }
}

describe('archive deploys', () => {
  let t: TestApp;
  let key: string;
  let slug: string;

  before(async () => {
    t = await startTestApp({ PLAN_FREE_MAX_FILE_SIZE_BYTES: String(64 * 1024) });
    key = await signIn(t, 'archive@example.com');
  });
  after(() => t.close());

  test('a good archive: one request publishes it; files served with their bytes and types', async () => {
    const res = await deploy(t, tgz(goodArchive()), { key });
    assert.equal(res.status, 201, res.text);
    const b = res.body;
    slug = b.slug;
    assert.equal(b.status, 'active');
    assert.equal(b.siteUrl, `http://${slug}.localhost:${t.port}/`);
    assert.match(b.versionId, /^ver_/);
    assert.deepEqual(b.warnings, []);
    // Seven files with content: folders and the empty file are left out; all of them new.
    assert.equal(b.uploaded, 7);
    assert.equal(b.skipped, 0);
    assert.equal(b.anonymous, undefined, 'a key makes an owned site');
    assert.equal(b.claimToken, undefined);

    const expect: Array<[string, string | Buffer, string]> = [
      ['index.html', '<!doctype html><h1>Hello from a tarball</h1>', 'text/html; charset=utf-8'],
      ['css/site.css', 'body { color: teal }', 'text/css; charset=utf-8'],
      ['img/logo.png', PNG, 'image/png'],
      ['LICENSE', 'MIT License, plain text without an extension', 'text/plain; charset=utf-8'],
      ['blob', Buffer.from([0, 159, 146, 150, 0, 1]), 'application/octet-stream'],
      [LONG_PATH, 'reached through a pax path', 'text/plain; charset=utf-8'],
      [`${LONG_DIR}gnu-long-name.js`, 'console.log("gnu long name")', 'text/javascript; charset=utf-8'],
    ];
    for (const [path, bytes, type] of expect) {
      const got = await served(t, slug, path);
      assert.equal(got.status, 200, path);
      assert.deepEqual(got.body, Buffer.from(bytes), path);
      assert.equal(got.headers['content-type'], type, path);
    }
    assert.equal((await served(t, slug, 'empty.txt')).status, 404, 'the empty file is not published');
    const details = await t.api(`/api/v1/publish/${slug}`, { key });
    assert.equal(details.body.files.length, 7);
    const index = details.body.files.find((f: { path: string }) => f.path === 'index.html');
    assert.equal(index.hash, sha256('<!doctype html><h1>Hello from a tarball</h1>'));
  });

  test('a second deploy dedups against the site: only the changed file is new', async () => {
    const res = await deploy(t, tgz(goodArchive('<h1>Changed</h1>')), { slug, key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.uploaded, 1);
    assert.equal(res.body.skipped, 6);
    assert.equal((await served(t, slug, '')).body.toString(), '<h1>Changed</h1>');
    assert.equal((await siteState(t, slug)).finalized, 2);
  });

  test('live=false&alias=: a preview deploy leaves the live site as it was and serves at its own hosts', async () => {
    const before = await siteState(t, slug);
    const res = await deploy(t, tgz(goodArchive('<h1>Preview from CI</h1>')), {
      slug,
      key,
      query: '?live=false&alias=pr-7',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.live, false);
    assert.match(res.body.previewUrl, new RegExp(`^http://${slug}--[a-z0-9]+\\.localhost:${t.port}/$`));
    assert.equal((await siteState(t, slug)).live, before.live, 'the live version did not move');
    assert.equal((await served(t, slug, '')).body.toString(), '<h1>Changed</h1>');
    const previewHost = new URL(res.body.previewUrl).host;
    for (const host of [previewHost, siteHost(`${slug}--pr-7`, t.port)]) {
      const page = await rawRequest(t.port, { host, path: '/' });
      assert.equal(page.status, 200, host);
      assert.equal(page.body.toString(), '<h1>Preview from CI</h1>', host);
      assert.equal(page.headers['x-robots-tag'], 'noindex', host);
    }
  });

  test('a deploy token of the site deploys it by archive; of another site, or anonymously, 403', async () => {
    // Sites of their own: the tests after this one expect the suite's site as it was.
    const mine = (await deploy(t, tgz(fileEntries({ 'index.html': 'mine' })), { key })).body.slug as string;
    const other = await deploy(t, tgz(fileEntries({ 'index.html': 'other' })), { key });
    assert.equal(other.status, 201, other.text);
    const created = await t.api(`/api/v1/publish/${mine}/tokens`, {
      method: 'POST',
      key,
      body: { name: 'ci' },
    });
    assert.equal(created.status, 201, created.text);
    const token = created.body.token as string;
    const own = await deploy(t, tgz(fileEntries({ 'index.html': 'from CI' })), { slug: mine, key: token });
    assert.equal(own.status, 200, own.text);
    assert.equal((await served(t, mine, '')).body.toString(), 'from CI');
    for (const target of [other.body.slug as string, undefined]) {
      const refused = await deploy(t, tgz(fileEntries({ 'index.html': 'not yours' })), {
        ...(target ? { slug: target } : {}),
        key: token,
      });
      assertRefused(refused, 403, 'FORBIDDEN');
    }
    assert.equal((await served(t, other.body.slug, '')).body.toString(), 'other');
  });

  test('a deploy token revoked while its archive is on the way publishes nothing (revoke stops it at once)', async () => {
    const mine = (await deploy(t, tgz(fileEntries({ 'index.html': 'before' })), { key })).body.slug as string;
    const created = await t.api(`/api/v1/publish/${mine}/tokens`, {
      method: 'POST',
      key,
      body: { name: 'leak' },
    });
    const gz = tgz(fileEntries({ 'index.html': 'defaced', 'pad.bin': randomBytes(8192) }));
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: t.port,
        method: 'POST',
        path: `/api/v1/publish/${mine}/archive`,
        headers: {
          'content-type': 'application/gzip',
          'transfer-encoding': 'chunked',
          authorization: `Bearer ${created.body.token}`,
        },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
      });
      req.write(gz.subarray(0, gz.length / 2));
      // The owner revokes the token while the rest of the archive is still on its way.
      void new Promise((r) => setTimeout(r, 100))
        .then(() => t.api(`/api/v1/publish/${mine}/tokens/${created.body.id}`, { method: 'DELETE', key }))
        .then((revoked) => {
          assert.equal(revoked.status, 200, revoked.text);
          req.end(gz.subarray(gz.length / 2));
        });
    });
    const res = await answer;
    assert.equal(res.status, 401, res.body);
    assert.equal(JSON.parse(res.body).code, 'UNAUTHORIZED');
    assert.equal((await served(t, mine, '')).body.toString(), 'before');
    assert.equal((await siteState(t, mine)).pending, 0, 'no version left behind');
  });

  test('an archive of plain names (no ./), a GNU-format header and a trailing record padding', async () => {
    const bytes = Buffer.concat([
      tar(fileEntries({ 'index.html': 'plain', 'a/b.txt': 'bee' })),
      Buffer.alloc(8192),
    ]);
    const res = await deploy(t, gzipSync(bytes));
    assert.equal(res.status, 201, res.text);
    assert.equal((await served(t, res.body.slug, 'a/b.txt')).body.toString(), 'bee');
  });

  const badEntries: Array<[string, TarEntrySpec[], number, string, string]> = [
    [
      'a symbolic link',
      [{ name: './link', type: '2', linkname: '/etc/passwd' }],
      400,
      'INVALID_REQUEST',
      './link',
    ],
    [
      'a hard link',
      [{ name: './hard', type: '1', linkname: './index.html' }],
      400,
      'INVALID_REQUEST',
      './hard',
    ],
    ['a character device', [{ name: './tty', type: '3' }], 400, 'INVALID_REQUEST', './tty'],
    ['a block device', [{ name: './sda', type: '4' }], 400, 'INVALID_REQUEST', './sda'],
    ['a FIFO', [{ name: './pipe', type: '6' }], 400, 'INVALID_REQUEST', './pipe'],
    ['an unknown entry type', [{ name: './volume', type: 'V' }], 400, 'INVALID_REQUEST', './volume'],
    ['an absolute path', [{ name: '/etc/cron.d/x', body: 'x' }], 400, 'INVALID_PATH', '/etc/cron.d/x'],
    [
      'a .. segment',
      [{ name: './a/../../escape.html', body: 'x' }],
      400,
      'INVALID_PATH',
      './a/../../escape.html',
    ],
    ['a .. folder', [{ name: '../', type: '5' }], 400, 'INVALID_PATH', '../'],
    [
      'a pax path with ..',
      [{ name: 'x', pax: { path: '../up.html' }, body: 'x' }],
      400,
      'INVALID_PATH',
      '../up.html',
    ],
    ['an empty segment', [{ name: './a//b.html', body: 'x' }], 400, 'INVALID_PATH', './a//b.html'],
    ['a backslash', [{ name: './a\\b.html', body: 'x' }], 400, 'INVALID_PATH', './a\\b.html'],
    ['a control character', [{ name: './a\u0001.html', body: 'x' }], 400, 'INVALID_PATH', './a\u0001.html'],
    [
      'a duplicate path',
      [
        { name: './dup.html', body: 'one' },
        { name: 'dup.html', body: 'two' },
      ],
      400,
      'INVALID_PATH',
      'dup.html',
    ],
  ];
  for (const [what, entries, status, code, entry] of badEntries) {
    test(`${what} refuses the whole archive (${status}) and changes nothing`, async () => {
      const before = await siteState(t, slug);
      const sites = await liveSiteCount(t);
      // Good files before and after the bad entry: their bytes are stored, then left unreferenced.
      const archive = tgz([
        { name: './index.html', body: `<h1>${what}</h1>` },
        ...entries,
        { name: './after.html', body: 'after' },
      ]);
      assertRefused(await deploy(t, archive, { slug, key }), status, code, entry);
      assertRefused(await deploy(t, archive), status, code, entry);
      assert.deepEqual(await siteState(t, slug), before, 'no new version, no live change');
      assert.equal(await liveSiteCount(t), sites, 'no anonymous site');
      assert.equal((await served(t, slug, '')).body.toString(), '<h1>Changed</h1>');
    });
  }

  const badArchives: Array<[string, () => Buffer]> = [
    ['not gzip at all', () => Buffer.from('this is not a gzip stream at all, just text')],
    [
      'a corrupt gzip stream',
      () => {
        const gz = tgz(fileEntries({ 'index.html': 'x'.repeat(5000) }));
        gz.fill(0x55, 20, 40);
        return gz;
      },
    ],
    [
      'a gzip cut short',
      () => {
        const gz = tgz(fileEntries({ 'index.html': randomBytes(20_000).toString('hex') }));
        return gz.subarray(0, Math.floor(gz.length / 2));
      },
    ],
    ['a tar without its end blocks', () => tgz(fileEntries({ 'index.html': 'x' }), { end: false })],
    [
      'a tar cut inside a file',
      () => gzipSync(tar(fileEntries({ 'index.html': 'x'.repeat(3000) })).subarray(0, 1500)),
    ],
    [
      'a header with a bad checksum',
      () => {
        const bytes = tar(fileEntries({ 'index.html': 'x' }));
        bytes[0] = 'j'.charCodeAt(0);
        return gzipSync(bytes);
      },
    ],
    ['a pax record over 64 KiB', () => tgz([{ name: 'x', pax: { path: 'a'.repeat(70_000) }, body: 'x' }])],
    [
      'more than 10,000 entries (folders cost no storage but are bounded too)',
      () =>
        tgz([
          ...Array.from({ length: 10_001 }, (_, i) => ({ name: `./d${i}/`, type: '5' })),
          { name: './index.html', body: 'x' },
        ]),
    ],
    [
      'a pax record that lies about its length',
      () => {
        const bytes = tar([{ name: 'x', pax: { path: 'ok.html' }, body: 'x' }]);
        bytes.write('99', 512, 'ascii');
        return gzipSync(bytes);
      },
    ],
  ];
  for (const [what, make] of badArchives) {
    test(`${what}: 400 and nothing changes`, async () => {
      const before = await siteState(t, slug);
      const sites = await liveSiteCount(t);
      assertRefused(await deploy(t, make(), { slug, key }), 400, 'INVALID_REQUEST');
      assertRefused(await deploy(t, make()), 400, 'INVALID_REQUEST');
      assert.deepEqual(await siteState(t, slug), before);
      assert.equal(await liveSiteCount(t), sites);
    });
  }

  test('limits: more than 1000 files, a file over the plan limit, an archive with no content', async () => {
    const before = await siteState(t, slug);
    const many = Array.from({ length: 1001 }, (_, i) => ({ name: `./f${i}.txt`, body: `${i}` }));
    const tooMany = await deploy(t, tgz(many), { slug, key });
    assertRefused(tooMany, 400, 'INVALID_REQUEST', './f1000.txt');
    assert.match(tooMany.body.error, /more than 1000 files/);

    const big = tgz([
      { name: './index.html', body: 'ok' },
      { name: './big.bin', body: randomBytes(64 * 1024 + 1) },
    ]);
    assertRefused(await deploy(t, big, { slug, key }), 413, 'FILE_TOO_LARGE', './big.bin');

    const empty = await deploy(
      t,
      tgz([
        { name: './', type: '5' },
        { name: './e.txt', body: '' },
      ]),
      { slug, key },
    );
    assertRefused(empty, 400, 'INVALID_REQUEST');
    assert.deepEqual(await siteState(t, slug), before);
  });

  test('a body over the archive limit is refused by its Content-Length before it is read', async () => {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: t.port,
          method: 'POST',
          path: '/api/v1/publish/archive',
          headers: { 'content-type': 'application/gzip', 'content-length': String(10 * 1024 ** 3) },
        },
        (r) => {
          let text = '';
          r.on('data', (c) => (text += c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write(randomBytes(1024));
      // The answer comes without the other 10 GB: end the test's side once it is in.
      setTimeout(() => req.destroy(), 2000).unref();
    });
    assert.equal(res.status, 413, res.body);
    assert.equal(JSON.parse(res.body).code, 'INVALID_REQUEST');
  });

  test('a long archive upload is not cut by node:http after 300 s: requests may take an hour', () => {
    // Bodies are bounded by the pace rule; node's default requestTimeout (300 s) cut a 200 MB archive on a
    // link under 0.7 MB/s.
    assert.equal(t.app.server.requestTimeout, REQUEST_TIMEOUT_MS);
    assert.ok(REQUEST_TIMEOUT_MS >= 3_600_000);
  });

  test('a failure after the finalize committed does not take the published version down again', async () => {
    const mine = (await deploy(t, tgz(fileEntries({ 'index.html': 'one' })), { key })).body.slug as string;
    // A change listener that fails once (the finalize has committed when the change is announced).
    const stop = t.ctx.changes.subscribe((change) => {
      if (change.kind !== 'site') return;
      stop();
      throw new Error('listener failed');
    });
    const res = await deploy(t, tgz(fileEntries({ 'index.html': 'two' })), { slug: mine, key });
    stop();
    assert.equal(res.status, 500, res.text);
    // The version is live (its finalize committed): it must still have its files.
    const page = await served(t, mine, '');
    assert.equal(page.status, 200);
    assert.equal(page.body.toString(), 'two');
  });

  test('an alias on an anonymous archive is refused before the archive is read', async () => {
    const rows = async () => (await t.ctx.db.kysely.selectFrom('sites').select('slug').execute()).length;
    const before = await rows();
    const archive = tgz(fileEntries({ 'index.html': 'x' }));
    const anonymous = await deploy(t, archive, { query: '?alias=pr-1' });
    assertRefused(anonymous, 400, 'INVALID_REQUEST');
    assert.match(anonymous.body.error, /claim/);
    assert.equal(await rows(), before, 'no site was made (and tombstoned) for the refusal');
  });

  test('a secret in a file: the finalize refusal, no live change, no anonymous site', async () => {
    const before = await siteState(t, slug);
    const sites = await liveSiteCount(t);
    const leaky = tgz([
      { name: './index.html', body: '<h1>leak</h1>' },
      { name: './app.js', body: `const stripe = Stripe("sk_live_${randomKey(32)}");\n` },
    ]);
    const owned = await deploy(t, leaky, { slug, key });
    assertRefused(owned, 400, 'SECRET_DETECTED');
    assert.equal(owned.body.detectedSecrets[0].path, 'app.js');
    assert.deepEqual(
      await siteState(t, slug),
      before,
      'the pending version is abandoned, the live one stays',
    );
    assertRefused(await deploy(t, leaky), 400, 'SECRET_DETECTED');
    assert.equal(await liveSiteCount(t), sites, 'the anonymous site it made is gone');
  });

  test('anonymous archive deploy: the create fields, an anonymous site', async () => {
    const res = await deploy(t, tgz(fileEntries({ 'index.html': '<h1>anon</h1>' }, './')));
    assert.equal(res.status, 201, res.text);
    const b = res.body;
    assert.equal(b.anonymous, true);
    assert.match(b.claimToken, /^clm_/);
    assert.equal(b.claimUrl, `http://localhost:${t.port}/claim?slug=${b.slug}&token=${b.claimToken}`);
    assert.ok(Date.parse(b.expiresAt) > t.clock.now());
    assert.equal(typeof b.warning, 'string');
    assert.equal(b.uploaded, 1);
    assert.equal(b.skipped, 0);
    assert.equal(b.status, 'active');
    assert.equal((await served(t, b.slug, '')).body.toString(), '<h1>anon</h1>');
    // Another account's site cannot be deployed to, nor without a key.
    assertRefused(
      await deploy(t, tgz(fileEntries({ 'x.html': 'x' })), { slug: b.slug, key }),
      404,
      'NOT_FOUND',
    );
    assertRefused(await deploy(t, tgz(fileEntries({ 'x.html': 'x' })), { slug }), 401, 'UNAUTHORIZED');
  });

  test('wrong or missing content type: 415 with the error body; an empty body: 400', async () => {
    const archive = tgz(fileEntries({ 'index.html': 'x' }));
    for (const contentType of ['application/json', 'application/x-tar', 'text/plain']) {
      assertRefused(await deploy(t, archive, { slug, key, contentType }), 415, 'INVALID_REQUEST');
    }
    assertRefused(await deploy(t, Buffer.alloc(0), { slug, key }), 400, 'INVALID_REQUEST');
    assertRefused(
      await deploy(t, archive, { slug, key, query: '?alias=Not_An_Alias' }),
      400,
      'INVALID_REQUEST',
    );
    const ok = await deploy(t, archive, { slug, key, contentType: 'application/x-gzip; foo=bar' });
    assert.equal(ok.status, 200, ok.text);
  });

  test('a client killed mid-upload leaves no site, no version and no stored file', async () => {
    const sites = await liveSiteCount(t);
    const refs = await referencedFiles(t);
    const versions = await t.ctx.db.kysely.selectFrom('versions').select('id').execute();
    const blobRows = async () => (await t.ctx.db.kysely.selectFrom('blobs').select('hash').execute()).length;
    const storedBlobs = async () => {
      let n = 0;
      for await (const _ of t.ctx.blobs.list()) n++;
      return n;
    };
    // The disk store's temp files (a file's bytes on their way in); the S3 store has none here.
    const tmpDir = join(t.dataDir, 'blobs', 'tmp');
    const tmpFiles = async () => (await readdir(tmpDir).catch(() => [])).length;
    const blobsBefore = await blobRows();
    const storedBefore = await storedBlobs();
    // 40 files of 32 KB random bytes (incompressible), sent slowly; killed after some are written.
    const entries = Array.from({ length: 40 }, (_, i) => ({
      name: `./f${i}.bin`,
      body: randomBytes(32 * 1024),
    }));
    const gz = tgz(entries);
    await new Promise<void>((resolve) => {
      const req = request({
        host: '127.0.0.1',
        port: t.port,
        method: 'POST',
        path: '/api/v1/publish/archive',
        headers: { 'content-type': 'application/gzip', 'transfer-encoding': 'chunked' },
      });
      req.on('error', () => resolve());
      let sent = 0;
      const step = async () => {
        while (sent < gz.length / 2) {
          req.write(gz.subarray(sent, sent + 16 * 1024));
          sent += 16 * 1024;
          await new Promise((r) => setTimeout(r, 5));
        }
        // Some files are written by now (as temp files of one batch on disk, as objects on S3): wait until
        // they show, then kill the client.
        for (let i = 0; i < 200 && (await tmpFiles()) + (await storedBlobs()) - storedBefore < 3; i++)
          await new Promise((r) => setTimeout(r, 10));
        req.destroy();
        resolve();
      };
      void step();
    });
    const writtenByKilled = (await tmpFiles()) + (await storedBlobs()) - storedBefore;
    assert.ok(writtenByKilled >= 3, `files written before the kill: ${writtenByKilled}`);
    // Give the server time to see the connection go, then nothing must be visible or referenced.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await liveSiteCount(t), sites);
    assert.equal(await referencedFiles(t), refs);
    assert.equal(
      (await t.ctx.db.kysely.selectFrom('versions').select('id').execute()).length,
      versions.length,
    );
    // No temp file is left behind; where a file was stored (S3: each object as it arrives), it is indexed,
    // and unreferenced, the collector takes it once it is older than the grace period.
    assert.equal(await tmpFiles(), 0);
    const indexedByKilled = (await blobRows()) - blobsBefore;
    assert.equal(indexedByKilled, (await storedBlobs()) - storedBefore);
    t.clock.advance(BLOB_MIN_AGE_MS + 60_000);
    const report = await sweepNow(t);
    assert.ok(report.blobsDeleted >= indexedByKilled, `collected ${report.blobsDeleted}`);
    assert.equal(await storedBlobs(), storedBefore - (report.blobsDeleted - indexedByKilled));
    // Live sites still serve (the collector took only unreferenced blobs).
    assert.equal((await served(t, slug, '')).status, 200);
  });
});
