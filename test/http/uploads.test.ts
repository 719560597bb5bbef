// PUT <upload url>: token, expiry, content type, length and hash checked while the bytes stream in;
// nothing is kept on failure, retries work, uploads are not rate limited (CONTRACT "Uploads").

import assert from 'node:assert/strict';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import {
  assertPublished,
  blobTempFiles,
  type Files,
  manifestOf,
  publish,
  putUpload,
  reachable,
  sha256,
  storedBlobs,
} from '../helpers/publish.js';

interface UploadEntry {
  path: string;
  url: string;
  headers: { 'Content-Type': string };
}

const BYTES = 'the exact bytes of this file, 43 bytes long';
const FILE: Files = { 'a.txt': BYTES };

function assertError(res: { status: number; body: unknown }, status: number, code?: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: unknown; code: unknown; status: unknown };
  assert.equal(typeof body.error, 'string');
  assert.equal(typeof body.code, 'string');
  assert.equal(body.status, status);
  if (code) assert.equal(body.code, code);
}

function hasBlob(files: string[], hash: string): boolean {
  return files.some((f) => f.endsWith(hash));
}

describe('PUT <upload url>', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'uploader@example.com');
  });
  after(() => t.close());

  /** A pending owned site with the given files; returns its upload entries by path. */
  async function pending(files: Files = FILE, hashes = true) {
    const res = await t.api('/api/v1/publish', {
      method: 'POST',
      body: { files: manifestOf(files, { hashes }) },
      key,
    });
    assert.equal(res.status, 201, res.text);
    const entries = new Map<string, UploadEntry>(
      (res.body.upload.uploads as UploadEntry[]).map((u) => [u.path, u]),
    );
    return { slug: res.body.slug as string, versionId: res.body.upload.versionId as string, entries };
  }

  const finalize = (slug: string, versionId: string) =>
    t.api(`/api/v1/publish/${slug}/finalize`, { method: 'POST', body: { versionId }, key });

  async function assertStillMissing(slug: string, versionId: string, path: string) {
    const fin = await finalize(slug, versionId);
    assertError(fin, 400, 'INVALID_REQUEST');
    assert.ok((fin.body.missing as string[]).includes(path), `finalize lists ${path} missing: ${fin.text}`);
  }

  test('PUT <upload url> stores the bytes and answers 2xx', async () => {
    const p = await pending();
    const u = p.entries.get('a.txt')!;
    const res = await putUpload(u.url, BYTES, u.headers['Content-Type']);
    assert.equal(res.status, 200, res.text);
    assert.ok(hasBlob(await storedBlobs(t), sha256(BYTES)));
    assert.equal((await finalize(p.slug, p.versionId)).status, 200);
  });

  test('PUT <upload url> with a wrong token answers 4xx with the error body and keeps nothing', async () => {
    const bytes = 'wrong token bytes';
    const p = await pending({ 'a.txt': bytes });
    const u = p.entries.get('a.txt')!;
    const url = new URL(u.url);
    const token = url.searchParams.get('token')!;
    url.searchParams.set('token', `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`);
    const res = await putUpload(url.toString(), bytes, u.headers['Content-Type']);
    assert.ok(res.status >= 400 && res.status < 500, `status ${res.status}`);
    assertError(res, res.status);
    // A token of another file does not open this address either.
    const other = await pending({ 'b.txt': 'other' });
    const forged = new URL(u.url);
    forged.searchParams.set('token', new URL(other.entries.get('b.txt')!.url).searchParams.get('token')!);
    const res2 = await putUpload(forged.toString(), bytes, u.headers['Content-Type']);
    assert.ok(res2.status >= 400 && res2.status < 500);
    // Changing the content type in the query breaks the signature.
    const ct = new URL(u.url);
    ct.searchParams.set('ct', 'text/html');
    const res3 = await putUpload(ct.toString(), bytes, 'text/html');
    assert.ok(res3.status >= 400 && res3.status < 500);
    // Without a token.
    const bare = new URL(u.url);
    bare.searchParams.delete('token');
    const res4 = await putUpload(bare.toString(), bytes, u.headers['Content-Type']);
    assertError(res4, 400, 'INVALID_REQUEST');
    assert.ok(!hasBlob(await storedBlobs(t), sha256(bytes)));
    await assertStillMissing(p.slug, p.versionId, 'a.txt');
  });

  test('PUT <upload url> after its expiry answers 4xx and keeps nothing', async () => {
    const bytes = 'expired address bytes';
    const p = await pending({ 'a.txt': bytes });
    const u = p.entries.get('a.txt')!;
    t.clock.advance(3600 * 1000 + 1000);
    try {
      const res = await putUpload(u.url, bytes, u.headers['Content-Type']);
      assert.ok(res.status >= 400 && res.status < 500, `status ${res.status}`);
      assertError(res, res.status);
      assert.match(res.body.error, /expired/i);
      assert.ok(!hasBlob(await storedBlobs(t), sha256(bytes)));
    } finally {
      t.clock.advance(-(3600 * 1000 + 1000));
    }
    await assertStillMissing(p.slug, p.versionId, 'a.txt');
  });

  test('an expired upload address says so in a machine-readable field: 403 FORBIDDEN with reason "expired"', async () => {
    const bytes = 'expired address, reason';
    const p = await pending({ 'a.txt': bytes });
    const u = p.entries.get('a.txt')!;
    t.clock.advance(3600 * 1000 + 1000);
    try {
      const res = await putUpload(u.url, bytes, u.headers['Content-Type']);
      assertError(res, 403, 'FORBIDDEN');
      assert.equal((res.body as { reason?: unknown }).reason, 'expired');
    } finally {
      t.clock.advance(-(3600 * 1000 + 1000));
    }
    // A forged token is refused for another reason, which the client must not take for an expiry.
    const forged = new URL(u.url);
    forged.searchParams.set('token', 'x'.repeat(43));
    const res = await putUpload(forged.toString(), bytes, u.headers['Content-Type']);
    assertError(res, 403, 'FORBIDDEN');
    assert.notEqual((res.body as { reason?: unknown }).reason, 'expired');
  });

  test('PUT <upload url> just before its expiry still works', async () => {
    const p = await pending({ 'a.txt': 'late but in time' });
    const u = p.entries.get('a.txt')!;
    t.clock.advance(3600 * 1000 - 5000);
    try {
      const res = await putUpload(u.url, 'late but in time', u.headers['Content-Type']);
      assert.equal(res.status, 200, res.text);
    } finally {
      t.clock.advance(-(3600 * 1000 - 5000));
    }
  });

  test('PUT <upload url> with a wrong Content-Type answers 4xx and keeps nothing', async () => {
    const bytes = 'content type bytes';
    const p = await pending({ 'a.txt': bytes });
    const u = p.entries.get('a.txt')!;
    for (const ct of ['text/html', 'application/octet-stream', undefined]) {
      const res = await putUpload(u.url, bytes, ct);
      assert.ok(res.status >= 400 && res.status < 500, `status ${res.status} for ${ct}`);
      assertError(res, res.status, 'INVALID_REQUEST');
    }
    assert.ok(!hasBlob(await storedBlobs(t), sha256(bytes)));
    await assertStillMissing(p.slug, p.versionId, 'a.txt');
    // The same type with other spelling is the same type.
    const ok = await putUpload(u.url, bytes, 'TEXT/PLAIN');
    assert.equal(ok.status, 200, ok.text);
  });

  test('PUT <upload url> with more or fewer bytes than the manifest answers 4xx and keeps nothing; a retry works', async () => {
    const p = await pending(FILE);
    const u = p.entries.get('a.txt')!;
    const longer = `${BYTES}!`;
    const shorter = BYTES.slice(0, -1);
    for (const body of [longer, shorter]) {
      const res = await putUpload(u.url, body, u.headers['Content-Type']);
      assert.ok(res.status >= 400 && res.status < 500, `status ${res.status}`);
      assertError(res, res.status);
      assert.ok(!hasBlob(await storedBlobs(t), sha256(body)));
    }
    await assertStillMissing(p.slug, p.versionId, 'a.txt');
    const retry = await putUpload(u.url, BYTES, u.headers['Content-Type']);
    assert.equal(retry.status, 200, retry.text);
    assert.equal((await finalize(p.slug, p.versionId)).status, 200);
  });

  test('PUT <upload url> with a chunked body longer or shorter than the manifest answers 4xx and keeps nothing', async () => {
    const bytes = 'chunked length check bytes';
    const p = await pending({ 'a.txt': bytes });
    const u = p.entries.get('a.txt')!;
    for (const body of [`${bytes}xx`, bytes.slice(0, 5)]) {
      const res = await chunkedPut(u.url, [body.slice(0, 3), body.slice(3)], u.headers['Content-Type']);
      assert.ok(res.status >= 400 && res.status < 500, `status ${res.status}`);
      assertError(res, res.status);
    }
    const stored = await storedBlobs(t);
    assert.ok(!hasBlob(stored, sha256(`${bytes}xx`)) && !hasBlob(stored, sha256(bytes.slice(0, 5))));
    await assertStillMissing(p.slug, p.versionId, 'a.txt');
  });

  test('PUT <upload url> with bytes not matching the manifest hash answers 4xx and keeps nothing; a retry works', async () => {
    const p = await pending(FILE);
    const u = p.entries.get('a.txt')!;
    const wrong = BYTES.replace('exact', 'EXACT');
    assert.equal(wrong.length, BYTES.length);
    const res = await putUpload(u.url, wrong, u.headers['Content-Type']);
    assert.ok(res.status >= 400 && res.status < 500, `status ${res.status}`);
    assertError(res, res.status);
    assert.ok(!hasBlob(await storedBlobs(t), sha256(wrong)));
    await assertStillMissing(p.slug, p.versionId, 'a.txt');
    const retry = await putUpload(u.url, BYTES, u.headers['Content-Type']);
    assert.equal(retry.status, 200, retry.text);
    assert.equal((await finalize(p.slug, p.versionId)).status, 200);
  });

  for (const hashes of [false, true]) {
    test(`PUT <upload url> of the same bytes again answers 2xx; different bytes answer 409 INVALID_REQUEST (${hashes ? 'with' : 'without'} manifest hash)`, async () => {
      // Without a manifest hash, the first stored bytes fix the file.
      const p = await pending(FILE, hashes);
      const u = p.entries.get('a.txt')!;
      const ct = u.headers['Content-Type'];
      assert.equal((await putUpload(u.url, BYTES, ct)).status, 200);
      const again = await putUpload(u.url, BYTES, ct);
      assert.ok(again.status >= 200 && again.status < 300, `status ${again.status}`);
      const sameLength = BYTES.replace('exact', 'EXACT');
      assertError(await putUpload(u.url, sameLength, ct), 409, 'INVALID_REQUEST');
      assertError(await putUpload(u.url, `${BYTES} and more`, ct), 409, 'INVALID_REQUEST');
      assertError(await chunkedPut(u.url, ['short', ' body'], ct), 409, 'INVALID_REQUEST');
      assertError(await chunkedPut(u.url, [BYTES, ' and more'], ct), 409, 'INVALID_REQUEST');
      assert.ok(!hasBlob(await storedBlobs(t), sha256(sameLength)));
      const chunkedAgain = await chunkedPut(u.url, [BYTES.slice(0, 10), BYTES.slice(10)], ct);
      assert.equal(chunkedAgain.status, 200, chunkedAgain.text);
      assert.equal((await finalize(p.slug, p.versionId)).status, 200);
      const details = await t.api(`/api/v1/publish/${p.slug}`, { key });
      assert.equal(details.body.files[0].hash, sha256(BYTES), 'the first bytes stay');
    });
  }

  test('PUT <upload url> twice at once with different bytes: only the bytes that got 2xx are kept', async () => {
    const files: Files = {};
    for (let i = 0; i < 4; i++)
      files[`f${i}.bin`] = { body: Buffer.alloc(512 * 1024, i), contentType: 'application/octet-stream' };
    const p = await pending(files, false);
    const results = await Promise.all(
      [...p.entries.values()].map(async (u) => {
        const a = Buffer.alloc(512 * 1024, 0xa0);
        const b = Buffer.alloc(512 * 1024, 0xb0);
        const [ra, rb] = await Promise.all([
          putUpload(u.url, a, u.headers['Content-Type']),
          putUpload(u.url, b, u.headers['Content-Type']),
        ]);
        return { path: u.path, ra, rb, ha: sha256(a), hb: sha256(b) };
      }),
    );
    assert.equal((await finalize(p.slug, p.versionId)).status, 200);
    const details = await t.api(`/api/v1/publish/${p.slug}`, { key });
    for (const r of results) {
      const stored = details.body.files.find((f: { path: string }) => f.path === r.path).hash;
      const ok = [
        [r.ra, r.ha],
        [r.rb, r.hb],
      ].filter(([res]) => (res as { status: number }).status === 200);
      assert.ok(ok.length >= 1, 'one of them is stored');
      for (const [, hash] of ok)
        assert.equal(hash, stored, `${r.path}: a 2xx answer means these bytes are kept`);
      for (const res of [r.ra, r.rb]) if (res.status !== 200) assertError(res, 409, 'INVALID_REQUEST');
    }
  });

  test('PUT <upload url> with a chunked body (no Content-Length) works', async () => {
    const bytes = Buffer.from('chunk one|chunk two|chunk three');
    const p = await pending({ 'a.txt': bytes });
    const u = p.entries.get('a.txt')!;
    const res = await chunkedPut(
      u.url,
      [bytes.subarray(0, 10), bytes.subarray(10, 20), bytes.subarray(20)],
      u.headers['Content-Type'],
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.requestHeaders['transfer-encoding'], 'chunked');
    assert.equal(res.requestHeaders['content-length'], undefined);
    assert.equal((await finalize(p.slug, p.versionId)).status, 200);
    const details = await t.api(`/api/v1/publish/${p.slug}`, { key });
    assert.equal(details.body.files[0].hash, sha256(bytes));
  });

  test('PUT <upload url> with a ReadableStream body (duplex half) works', async () => {
    const bytes = Buffer.from('streamed through fetch');
    const p = await pending({ 'a.txt': bytes });
    const u = p.entries.get('a.txt')!;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 8));
        controller.enqueue(bytes.subarray(8));
        controller.close();
      },
    });
    const res = await fetch(reachable(u.url), {
      method: 'PUT',
      headers: { 'content-type': u.headers['Content-Type'] },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 200, await res.text());
    assert.equal((await finalize(p.slug, p.versionId)).status, 200);
  });

  test('PUT <upload url> works for paths with spaces, non-ASCII and URL-special characters', async () => {
    const files: Files = {
      'docs/a b.txt': 'space',
      'ü/ñ.txt': 'non-ascii',
      'q?x#y%z+&=.txt': 'special',
      'emoji-😀.txt': 'emoji',
      'c/d/e/f.html': '<p>deep</p>',
      'data.json': '{"a": [1, 2, 3]}',
      'form.txt': { body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
    };
    const out = await publish(t, files, { key });
    assert.equal(out.create.status, 201, out.create.text);
    for (const u of out.uploads) assert.equal(u.status, 200, `${u.path}: ${u.text}`);
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    const details = await t.api(`/api/v1/publish/${out.slug}`, { key });
    assert.deepEqual(
      details.body.files.map((f: { path: string; hash: string }) => [f.path, f.hash]).sort(),
      manifestOf(files)
        .map((f) => [f.path, f.hash])
        .sort(),
    );
  });

  test('PUT <upload url> takes a file larger than the 2 MB JSON body limit', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024 + 3, 0x5a);
    const out = await publish(
      t,
      { 'big.bin': { body: big, contentType: 'application/octet-stream' } },
      { key },
    );
    assert.equal(out.uploads[0]?.status, 200, out.uploads[0]?.text);
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    assert.ok(hasBlob(await storedBlobs(t), sha256(big)));
  });

  test('PUT <upload url> after finalize answers 400 INVALID_REQUEST', async () => {
    const p = await pending(FILE);
    const u = p.entries.get('a.txt')!;
    assert.equal((await putUpload(u.url, BYTES, u.headers['Content-Type'])).status, 200);
    assert.equal((await finalize(p.slug, p.versionId)).status, 200);
    const res = await putUpload(u.url, BYTES, u.headers['Content-Type']);
    assertError(res, 400, 'INVALID_REQUEST');
    const other = await putUpload(u.url, BYTES.replace('exact', 'EXACT'), u.headers['Content-Type']);
    assertError(other, 400, 'INVALID_REQUEST');
  });

  test('PUT <upload url> of a version replaced by an update answers 400 INVALID_REQUEST', async () => {
    const site = assertPublished(await publish(t, { 'index.html': 'v1' }, { key }));
    const first = await t.api(`/api/v1/publish/${site.slug}`, {
      method: 'PUT',
      body: { files: manifestOf({ 'index.html': 'v2' }) },
      key,
    });
    const second = await t.api(`/api/v1/publish/${site.slug}`, {
      method: 'PUT',
      body: { files: manifestOf({ 'index.html': 'v3' }) },
      key,
    });
    assert.equal(second.status, 200);
    const u = first.body.upload.uploads[0] as UploadEntry;
    assertError(await putUpload(u.url, 'v2', u.headers['Content-Type']), 400, 'INVALID_REQUEST');
  });

  test('PUT <upload url> by a client that disconnects mid-upload keeps nothing; a retry works', async () => {
    const bytes = Buffer.alloc(256 * 1024, 7);
    const p = await pending({ 'big.bin': { body: bytes, contentType: 'application/octet-stream' } });
    const u = p.entries.get('big.bin')!;
    const req = startPut(u.url, bytes.length, u.headers['Content-Type']);
    let answered = false;
    req.on('response', () => {
      answered = true;
    });
    req.write(bytes.subarray(0, 64 * 1024));
    const onDisk = (await blobTempFiles(t)) !== null;
    // On local disk, disconnect only once the server is streaming the body into its temp file.
    if (onDisk) {
      await until(async () => ((await blobTempFiles(t)) ?? []).length > 0, 'the server started a temp file');
    }
    assert.equal(answered, false, 'the server waits for the rest of the body');
    req.destroy();
    // The server notices the disconnect asynchronously: wait (bounded) until its temp file is gone.
    if (onDisk) await until(async () => ((await blobTempFiles(t)) ?? []).length === 0, 'no temp file left');
    assert.ok(!hasBlob(await storedBlobs(t), sha256(bytes)));
    await assertStillMissing(p.slug, p.versionId, 'big.bin');
    const retry = await putUpload(u.url, bytes, u.headers['Content-Type']);
    assert.equal(retry.status, 200, retry.text);
    assert.ok(hasBlob(await storedBlobs(t), sha256(bytes)));
    assert.equal((await finalize(p.slug, p.versionId)).status, 200);
  });
});

describe('PUT <upload url> rate limits', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '3' });
  });
  after(() => t.close());

  test('PUT <upload url> carries no X-RateLimit headers and is not rate limited', async () => {
    const files: Files = {};
    for (let i = 0; i < 10; i++) files[`f${i}.txt`] = `file number ${i}`;
    const out = await publish(t, files); // create + finalize: 2 of the 3 anonymous requests
    assert.equal(out.create.status, 201);
    assert.equal(out.create.headers.get('x-ratelimit-limit'), '3');
    assert.equal(out.uploads.length, 10);
    for (const u of out.uploads) {
      assert.equal(u.status, 200, u.text);
      assert.equal(u.headers.get('x-ratelimit-limit'), null);
      assert.equal(u.headers.get('x-ratelimit-remaining'), null);
      assert.equal(u.headers.get('x-ratelimit-reset'), null);
    }
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    assert.equal(out.finalize?.headers.get('x-ratelimit-remaining'), '1', 'the uploads did not count');
    // The window is really 3: the fourth counted request is refused, uploads are not.
    assert.equal((await t.api('/api/v1/publishes')).status, 401);
    const limited = await t.api('/api/v1/publishes');
    assert.equal(limited.status, 429);
    const again = await putUpload(out.create.body.upload.uploads[0].url, 'file number 0', 'text/plain');
    assert.notEqual(again.status, 429);
    assert.equal(again.headers.get('x-ratelimit-limit'), null);
  });
});

// Issue 19 item 6: a body trickling 1 byte every 2 s held its connection for over 70 s, and one client could
// hold any number of them. The pace bound is the app's option (BODY_PACE's defaults are 30 s and 1 KiB/s).
describe('PUT <upload url> from slow or many clients', () => {
  const STALL_MS = 3000;
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp(
      { TRUST_PROXY: '1' },
      { bodyPace: { stallMs: STALL_MS, minBytesPerS: 1024 }, uploadsPerClient: 2 },
    );
    key = await signIn(t, 'slow-uploader@example.com');
  });
  after(() => t.close());

  async function pendingFile(bytes: Buffer) {
    const files: Files = { 'f.bin': { body: bytes, contentType: 'application/octet-stream' } };
    const res = await t.api('/api/v1/publish', { method: 'POST', body: { files: manifestOf(files) }, key });
    assert.equal(res.status, 201, res.text);
    const entry = res.body.upload.uploads[0] as UploadEntry;
    return { slug: res.body.slug as string, versionId: res.body.upload.versionId as string, entry };
  }

  test('a body trickling 1 byte every 2 s is cut off within the bound with 408 and the error body; nothing is kept', async () => {
    const bytes = Buffer.alloc(4096, 3);
    const p = await pendingFile(bytes);
    const put = rawPut(p.entry.url, bytes.length, 'application/octet-stream');
    const started = Date.now();
    let sent = 0;
    const trickle = setInterval(() => {
      if (!put.socket.destroyed) put.socket.write(bytes.subarray(sent, ++sent));
    }, 2000);
    put.socket.write(bytes.subarray(0, ++sent));
    try {
      const res = await put.response(STALL_MS + 7000);
      const elapsed = Date.now() - started;
      assert.ok(elapsed < STALL_MS + 2000, `answered after ${elapsed} ms`);
      assertError(res, 408, 'INVALID_REQUEST');
      assert.match(res.head, /\r\nconnection: close\r\n/i);
      assert.ok(res.closed, 'the server closed the connection');
    } finally {
      clearInterval(trickle);
      put.socket.destroy();
    }
    assert.deepEqual((await blobTempFiles(t)) ?? [], [], 'no temp file left');
    assert.ok(!hasBlob(await storedBlobs(t), sha256(bytes)));
    const retry = await putUpload(p.entry.url, bytes, 'application/octet-stream');
    assert.equal(retry.status, 200, retry.text);
  });

  test('a slow real client (10 kB/s, with a pause shorter than the bound) uploads for longer than the bound', async () => {
    const bytes = Buffer.alloc(40 * 1024, 5);
    const p = await pendingFile(bytes);
    const put = rawPut(p.entry.url, bytes.length, 'application/octet-stream');
    const started = Date.now();
    for (let at = 0; at < bytes.length; at += 1024) {
      put.socket.write(bytes.subarray(at, at + 1024));
      await sleep(at === 20 * 1024 ? STALL_MS - 1000 : 100);
    }
    const res = await put.response(10_000);
    assert.equal(res.status, 200, res.text);
    assert.ok(Date.now() - started > STALL_MS, 'the upload outlasted the stall bound');
    assert.ok(hasBlob(await storedBlobs(t), sha256(bytes)));
  });

  test('a client past its concurrent uploads gets 429 with the error body; others and later uploads go on', async () => {
    const files = await Promise.all([1, 2, 3, 4].map((i) => pendingFile(Buffer.alloc(2048, i))));
    const client = { 'x-forwarded-for': '198.51.100.20' };
    const held = files.slice(0, 2).map((f) => rawPut(f.entry.url, 2048, 'application/octet-stream', client));
    try {
      for (const h of held) h.socket.write(Buffer.alloc(10, 1));
      if ((await blobTempFiles(t)) !== null) {
        await until(async () => ((await blobTempFiles(t)) ?? []).length === 2, 'both uploads under way');
      } else await sleep(300);
      const third = rawPut(files[2]!.entry.url, 2048, 'application/octet-stream', client);
      third.socket.write(Buffer.alloc(2048, 3));
      const refused = await third.response(5000);
      assertError(refused, 429, 'RATE_LIMITED');
      assert.ok(Number(refused.header('retry-after')) > 0);
      // Another client behind the same proxy is not affected.
      const other = rawPut(files[2]!.entry.url, 2048, 'application/octet-stream', {
        'x-forwarded-for': '198.51.100.21',
      });
      other.socket.write(Buffer.alloc(2048, 3));
      assert.equal((await other.response(5000)).status, 200);
      // Once one upload ends, the client may start another.
      held[0]!.socket.write(Buffer.alloc(2048 - 10, 1));
      assert.equal((await held[0]!.response(5000)).status, 200);
      const fourth = rawPut(files[3]!.entry.url, 2048, 'application/octet-stream', client);
      fourth.socket.write(Buffer.alloc(2048, 4));
      assert.equal((await fourth.response(5000)).status, 200);
    } finally {
      for (const h of held) h.socket.destroy();
    }
  });
});

interface RawAnswer {
  status: number;
  head: string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON body.
  body: any;
  text: string;
  /** The server closed the connection after the answer. */
  closed: boolean;
  header(name: string): string | undefined;
}

/**
 * A PUT over a raw socket (`Connection: close`) whose body the caller writes byte by byte; `response(ms)`
 * is the answer once the server closes the connection, failing if none came within `ms`.
 */
function rawPut(url: string, announced: number, contentType: string, headers: Record<string, string> = {}) {
  const target = new URL(reachable(url));
  const socket = connect(Number(target.port), target.hostname);
  socket.on('error', () => {});
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(
    `PUT ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: ${contentType}\r\n` +
      `Content-Length: ${announced}\r\nConnection: close\r\n${extra}\r\n`,
  );
  const received: Buffer[] = [];
  socket.on('data', (c: Buffer) => received.push(c));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    async response(ms: number): Promise<RawAnswer> {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), ms);
      });
      const outcome = await Promise.race([ended, timedOut]);
      clearTimeout(timer);
      const raw = Buffer.concat(received).toString('latin1');
      if (outcome === 'timeout' && raw === '') assert.fail(`no answer within ${ms} ms`);
      const split = raw.indexOf('\r\n\r\n');
      const head = raw.slice(0, split + 2);
      const text = Buffer.from(raw.slice(split + 4), 'latin1').toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return {
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
        head,
        body,
        text,
        closed: outcome !== 'timeout',
        header: (name) => new RegExp(`\r\n${name}: ([^\r]*)\r\n`, 'i').exec(head)?.[1],
      };
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** PUT with `transfer-encoding: chunked` (no Content-Length) through node:http. */
function chunkedPut(
  url: string,
  chunks: Array<Buffer | string>,
  contentType: string,
): Promise<{
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON body.
  body: any;
  text: string;
  requestHeaders: Record<string, unknown>;
}> {
  const target = new URL(reachable(url));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: 'PUT',
        headers: { 'content-type': contentType, 'transfer-encoding': 'chunked' },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({
            status: res.statusCode ?? 0,
            body,
            text,
            requestHeaders: { ...req.getHeaders() },
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

/** A PUT announcing `announced` bytes whose body the caller writes (or abandons). */
function startPut(url: string, announced: number, contentType: string): ClientRequest {
  const target = new URL(reachable(url));
  const req = httpRequest({
    host: target.hostname,
    port: target.port,
    path: target.pathname + target.search,
    method: 'PUT',
    headers: { 'content-type': contentType, 'content-length': String(announced) },
  });
  req.on('error', () => {}); // the disconnect is the point
  return req;
}

/** Polls `check` (no fixed sleeps) until it holds; fails after 5 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
