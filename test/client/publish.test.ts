// src/client/publish.ts against the real app, in process: upload addresses that expire mid-publish are
// replaced (the server skips what was stored), a body that fails mid-way is retried, inline files, and
// the events a caller sees.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import mime from 'mime-types';
import { ApiClient, ApiClientError } from '../../src/client/api.js';
import {
  COMMON_CONTENT_TYPES,
  contentTypeOf,
  inlineFiles,
  isExpiredAddress,
  type LocalFile,
  type PublishEvent,
  publishFiles,
} from '../../src/client/publish.js';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { siteRequest } from '../serve/site-client.js';

/** UPLOAD_URL_TTL_S (3600 s) and a minute. */
const PAST_UPLOAD_EXPIRY_MS = 3661_000;

describe('publishFiles', () => {
  let t: TestApp;
  let client: ApiClient;

  before(async () => {
    t = await startTestApp();
    client = new ApiClient({ server: t.url, apiKey: await signIn(t, 'client@example.com') });
  });
  after(() => t.close());

  test('inline files publish anonymously; events report the plan, each upload and finalizing', async () => {
    const events: PublishEvent[] = [];
    const files = inlineFiles([
      { path: '/index.html', content: '<h1>inline</h1>' },
      {
        path: './img/dot.png',
        content: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64'),
        encoding: 'base64',
      },
    ]);
    assert.deepEqual(
      files.map((f) => [f.path, f.contentType, f.size]),
      [
        ['index.html', 'text/html; charset=utf-8', 15],
        ['img/dot.png', 'image/png', 4],
      ],
    );
    const out = await publishFiles(client.withKey(undefined), files, {
      concurrency: 1,
      onEvent: (e) => events.push(e),
    });
    assert.equal(out.anonymous, true);
    assert.match(out.claimToken ?? '', /^clm_/);
    assert.ok(out.claimUrl?.includes(out.slug));
    assert.equal(out.uploaded, 2);
    assert.equal(out.skipped, 0);
    assert.deepEqual(events[0], {
      kind: 'plan',
      uploads: 2,
      skipped: 0,
      bytes: 19,
      slug: out.slug,
      versionId: out.versionId,
    });
    assert.deepEqual(
      events.slice(1, 3).map((e) => e.kind),
      ['uploaded', 'uploaded'],
    );
    // One at a time, largest first.
    assert.equal((events[1] as { path: string }).path, 'index.html');
    assert.deepEqual(events.at(-1), { kind: 'finalizing' });
    assert.equal((await siteRequest(t, out.slug, '/')).text, '<h1>inline</h1>');
  });

  test('addresses that expire mid-publish are replaced by an update; stored files are not sent again', async () => {
    const contents = Array.from({ length: 6 }, (_, i) => randomBytes(1000 + i * 100));
    let moved = false;
    const files: LocalFile[] = inlineFiles(
      contents.map((c, i) => ({ path: `f${i}.bin`, content: c.toString('base64'), encoding: 'base64' })),
    ).map((f) => ({
      ...f,
      // The third upload (largest first: f3) finds the clock past the addresses' expiry.
      open: () => {
        if (f.path === 'f3.bin' && !moved) {
          moved = true;
          t.clock.advance(PAST_UPLOAD_EXPIRY_MS);
        }
        return f.open();
      },
    }));
    const events: PublishEvent[] = [];
    const out = await publishFiles(client, files, { concurrency: 1, onEvent: (e) => events.push(e) });
    assert.ok(moved);
    assert.equal(out.uploaded, 6, 'each file was sent once');
    assert.equal(out.skipped, 0);
    const replans = events.filter((e) => e.kind === 'retry' && /expired/.test(e.reason));
    assert.equal(replans.length, 1);
    const sent = events.flatMap((e) => (e.kind === 'uploaded' ? [e.path] : []));
    assert.deepEqual(sent.sort(), ['f0.bin', 'f1.bin', 'f2.bin', 'f3.bin', 'f4.bin', 'f5.bin']);
    const details = await client.getSite(out.slug);
    assert.equal(details.status, 'active');
    assert.equal(details.files.length, 6);
  });

  test("an expired address is recognised by the error body's reason field, not by the wording of its message", () => {
    const reworded = new ApiClientError(403, {
      error: 'This upload address is no longer valid.',
      code: 'FORBIDDEN',
      status: 403,
      reason: 'expired',
    });
    assert.equal(isExpiredAddress(reworded), true);
    const otherRefusal = new ApiClientError(403, {
      error: 'The token has expired or was forged.',
      code: 'FORBIDDEN',
      status: 403,
      reason: 'bad-token',
    });
    assert.equal(isExpiredAddress(otherRefusal), false);
  });

  test('an upload whose body fails mid-way is retried and the publish completes', async () => {
    const bytes = randomBytes(256 * 1024);
    const [file] = inlineFiles([{ path: 'big.bin', content: bytes.toString('base64'), encoding: 'base64' }]);
    let opens = 0;
    const flaky: LocalFile = {
      ...file!,
      open: () => {
        opens++;
        if (opens > 1) return bytes;
        // Half the bytes, then the read fails (a disk error, a file changed under us).
        return Readable.from(
          (async function* () {
            yield bytes.subarray(0, bytes.length / 2);
            throw new Error('read failed');
          })(),
        );
      },
    };
    const events: PublishEvent[] = [];
    const out = await publishFiles(client, [flaky], { onEvent: (e) => events.push(e) });
    assert.equal(opens, 2);
    assert.deepEqual(
      events.filter((e) => e.kind === 'retry').map((e) => [e.kind, (e as { path: string }).path]),
      [['retry', 'big.bin']],
    );
    const served = await siteRequest(t, out.slug, '/big.bin');
    assert.equal(served.body.length, bytes.length);
    assert.ok(served.body.equals(bytes));
  });

  test('a 4xx is not retried: an update based on a stale version throws VERSION_CONFLICT', async () => {
    const first = await publishFiles(client, inlineFiles([{ path: 'index.html', content: 'a' }]));
    await publishFiles(client, inlineFiles([{ path: 'index.html', content: 'b' }]), { slug: first.slug });
    await assert.rejects(
      publishFiles(client, inlineFiles([{ path: 'index.html', content: 'c' }]), {
        slug: first.slug,
        baseVersionId: first.versionId,
      }),
      (err: unknown) =>
        err instanceof ApiClientError && err.code === 'VERSION_CONFLICT' && err.status === 409,
    );
  });
});

// Issue 19 item 6: the server cuts bodies that stall past its bound (408) and refuses a client more uploads at
// once than it allows (429); both are worth another try, so a publish over a poor link or from a busy
// network still completes.
describe('publishFiles against the upload bounds', () => {
  let t: TestApp;
  let client: ApiClient;
  const STALL_MS = 1000;

  before(async () => {
    t = await startTestApp({}, { bodyPace: { stallMs: STALL_MS, minBytesPerS: 1024 }, uploadsPerClient: 1 });
    client = new ApiClient({ server: t.url, apiKey: await signIn(t, 'bounded@example.com') });
  });
  after(() => t.close());

  /** A file whose body pauses `pauseMs` half-way on the first `stalledOpens` opens. */
  function pausing(path: string, bytes: Buffer, pauseMs: number, stalledOpens = Infinity): LocalFile {
    const [file] = inlineFiles([{ path, content: bytes.toString('base64'), encoding: 'base64' }]);
    let opens = 0;
    return {
      ...file!,
      open: () =>
        ++opens > stalledOpens
          ? bytes
          : Readable.from(
              (async function* () {
                yield bytes.subarray(0, bytes.length / 2);
                await new Promise((r) => setTimeout(r, pauseMs));
                yield bytes.subarray(bytes.length / 2);
              })(),
            ),
    };
  }

  test('an upload cut off for stalling (408) is retried and the publish completes', async () => {
    const bytes = randomBytes(64 * 1024);
    const events: PublishEvent[] = [];
    const out = await publishFiles(client, [pausing('stalled.bin', bytes, STALL_MS * 2, 1)], {
      onEvent: (e) => events.push(e),
    });
    assert.equal(events.filter((e) => e.kind === 'retry').length, 1, JSON.stringify(events));
    const served = await siteRequest(t, out.slug, '/stalled.bin');
    assert.ok(served.body.equals(bytes));
  });

  test('uploads refused for being too many at once (429) are retried and the publish completes', async () => {
    const files = [1, 2, 3].map((i) => pausing(`f${i}.bin`, randomBytes(32 * 1024), 200));
    const events: PublishEvent[] = [];
    const out = await publishFiles(client, files, { concurrency: 3, onEvent: (e) => events.push(e) });
    assert.equal(out.uploaded, 3);
    assert.ok(
      events.some((e) => e.kind === 'retry' && /HTTP 429/.test(e.reason)),
      'some upload was refused and retried',
    );
  });
});

test('the built-in content types are what mime-types gives (and names past them still get theirs)', () => {
  for (const [extension, type] of Object.entries(COMMON_CONTENT_TYPES)) {
    assert.equal(type, mime.contentType(extension), extension);
    assert.equal(contentTypeOf(`dir/file${extension.toUpperCase()}`, Buffer.alloc(0)), type);
  }
  assert.equal(contentTypeOf('scene.glb', Buffer.alloc(0)), mime.contentType('.glb'));
  assert.equal(contentTypeOf('_redirects', Buffer.from('/a /b 301\n')), 'text/plain; charset=utf-8');
});
