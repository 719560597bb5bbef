// The site fast path on real sockets: keep-alive, pipelining, hand-off to node:http (API host, bodies,
// malformed or oversized heads) mid-connection, Connection: close and HTTP/1.0, half-closed clients,
// write backpressure, streamed files, node:http's timeouts, and server close.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { httpServerOf } from '../../../src/app.js';
import { MAX_REQUEST_HEAD_BYTES } from '../../../src/serve/exchange.js';
import { installSiteFastPath } from '../../../src/serve/http1/connection.js';
import { DiskBlobStore } from '../../../src/store/blob/disk.js';
import { S3BlobStore } from '../../../src/store/blob/s3.js';
import { connectTo, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  addPendingVersion,
  finalizeVersion,
  seedSite,
  setMetadata,
  setPassword,
  siteHost,
} from '../../helpers/seed.js';

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Reads HTTP/1.1 responses off a socket (bodies delimited by Content-Length; none for HEAD or 304). */
class ResponseReader {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  ended = false;

  constructor(readonly socket: Socket) {
    socket.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private async more(deadline: number): Promise<void> {
    if (this.ended)
      throw new Error(`connection closed; unread: ${JSON.stringify(this.buf.toString('latin1'))}`);
    const left = deadline - Date.now();
    if (left <= 0) throw new Error('timed out waiting for a response');
    await Promise.race([new Promise<void>((r) => this.waiters.push(r)), sleep(left)]);
  }

  async next(opts: { noBody?: boolean; timeoutMs?: number } = {}): Promise<Parsed> {
    const deadline = Date.now() + (opts.timeoutMs ?? 5000);
    let end = this.buf.indexOf('\r\n\r\n');
    while (end < 0) {
      await this.more(deadline);
      end = this.buf.indexOf('\r\n\r\n');
    }
    const lines = this.buf.toString('latin1', 0, end).split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = opts.noBody || status === 304 ? 0 : Number(headers['content-length'] ?? 0);
    while (this.buf.length < end + 4 + length) await this.more(deadline);
    const body = this.buf.subarray(end + 4, end + 4 + length);
    this.buf = this.buf.subarray(end + 4 + length);
    return { status, headers, body: Buffer.from(body) };
  }

  /** Resolves once the server closed the connection (rejects after `timeoutMs`). */
  async closed(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('connection still open');
      await Promise.race([new Promise<void>((r) => this.waiters.push(r)), sleep(left)]);
    }
  }

  get unread(): number {
    return this.buf.length;
  }

  /** The bytes not yet read as responses, as latin1 text. */
  text(): string {
    return this.buf.toString('latin1');
  }
}

/** Every socket a test opened: destroyed after each suite, so a failed test cannot hold the server open. */
const sockets = new Set<Socket>();

/** A connection over the test transport (plain TCP, or TLS with SLIPWAY_TEST_TRANSPORT=tls). */
async function open(port: number): Promise<{ socket: Socket; reader: ResponseReader }> {
  const socket = await connectTo(port);
  sockets.add(socket);
  return { socket, reader: new ResponseReader(socket) };
}

/** Replaces a stored blob's bytes behind the store's back (a damaged disk or bucket). */
async function overwriteBlob(t: TestApp, hash: string, bytes: Buffer): Promise<void> {
  const store = t.ctx.blobs;
  const config = t.ctx.config.blobs;
  if (store instanceof DiskBlobStore) await writeFile(store.localPath(hash), bytes);
  else if (store instanceof S3BlobStore && config.provider === 's3') {
    await store.client.send(
      new PutObjectCommand({ Bucket: config.bucket, Key: store.objectKey(hash), Body: bytes }),
    );
  } else assert.fail('unknown blob store');
}

const get = (host: string, path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`;

async function fastPathCount(t: TestApp, name: string): Promise<number> {
  const text = (await t.api('/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

describe('site fast path', { timeout: 60_000 }, () => {
  let t: TestApp;
  let host: string;
  let lockedHost: string;
  const page = `<!doctype html><title>Fast</title>${'<p>fast path</p>\n'.repeat(600)}`;
  const big = Buffer.alloc(700 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
  const medium = Buffer.alloc(100 * 1024, 0x61);

  before(async () => {
    t = await startTestApp();
    const { slug } = await seedSite(t.ctx, {
      files: { 'index.html': page, 'big.bin': big, 'medium.bin': medium, 'a.txt': 'A' },
    });
    host = siteHost(slug, t.port);
    const locked = await seedSite(t.ctx, { files: { 'index.html': 'secret page' } });
    await setPassword(t.ctx, locked.slug, 'hunter2');
    lockedHost = siteHost(locked.slug, t.port);
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await t.close();
  });

  test('answers keep-alive GET and HEAD itself, with the full set of headers', async () => {
    const before = await fastPathCount(t, 'slipway_site_fast_path_requests_total');
    const { socket, reader } = await open(t.port);
    socket.write(get(host, '/'));
    const first = await reader.next();
    assert.equal(first.status, 200);
    assert.equal(first.body.toString(), page);
    assert.equal(first.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(first.headers['content-length'], String(Buffer.byteLength(page)));
    assert.match(first.headers.etag!, /^"[0-9a-f]{64}"$/);
    assert.ok(first.headers['last-modified']);
    assert.ok(first.headers['cache-control']);
    assert.equal(first.headers['accept-ranges'], 'bytes');
    assert.equal(first.headers['x-content-type-options'], 'nosniff');
    assert.equal(first.headers.connection, 'keep-alive');
    assert.ok(Math.abs(Date.parse(first.headers.date!) - Date.now()) < 5000);

    socket.write(`HEAD / HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const head = await reader.next({ noBody: true });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], first.headers['content-length']);

    socket.write(get(host, '/', `If-None-Match: ${first.headers.etag}\r\n`));
    assert.equal((await reader.next()).status, 304);
    await sleep(50);
    assert.equal(reader.unread, 0, 'no bytes after a HEAD or 304 head');
    socket.destroy();
    const after = await fastPathCount(t, 'slipway_site_fast_path_requests_total');
    assert.ok(after - before >= 3, `fast path answered ${after - before} of 3`);
  });

  test('pipelined requests are answered in order, including a hand-off to the API in between', async () => {
    const { socket, reader } = await open(t.port);
    socket.write(
      get(host, '/a.txt') +
        get(host, '/missing') +
        get(`127.0.0.1:${t.port}`, '/healthz') +
        get(host, '/a.txt') +
        `HEAD /a.txt HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
    );
    const a = await reader.next();
    assert.equal(a.status, 200);
    assert.equal(a.body.toString(), 'A');
    assert.equal((await reader.next()).status, 404);
    const health = await reader.next();
    assert.equal(health.status, 200);
    assert.match(health.headers['content-type']!, /application\/json/);
    const again = await reader.next();
    assert.equal(again.status, 200);
    assert.equal(again.body.toString(), 'A');
    assert.equal((await reader.next({ noBody: true })).status, 200);
    socket.destroy();
  });

  test('a POST (password form) on a fast connection goes to node:http and the connection stays usable', async () => {
    const { socket, reader } = await open(t.port);
    socket.write(get(lockedHost, '/'));
    assert.equal((await reader.next()).status, 401);
    const form = 'password=hunter2';
    socket.write(
      `POST / HTTP/1.1\r\nHost: ${lockedHost}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${form.length}\r\n\r\n${form}`,
    );
    const posted = await reader.next();
    assert.equal(posted.status, 303);
    const cookie = posted.headers['set-cookie']!.split(';')[0]!;
    socket.write(get(lockedHost, '/', `Cookie: ${cookie}\r\n`));
    const open1 = await reader.next();
    assert.equal(open1.status, 200);
    assert.equal(open1.body.toString(), 'secret page');
    socket.destroy();
  });

  test('malformed and oversized heads get node:http answers (400, 431), never a fast-path guess', async () => {
    for (const [request, status] of [
      [`GET / HTTP/1.1\r\nHost : ${host}\r\n\r\n`, 400],
      [`GET / HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'a'.repeat(MAX_REQUEST_HEAD_BYTES)}\r\n\r\n`, 431],
      [`GET / HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc`, 400],
    ] as const) {
      const { socket, reader } = await open(t.port);
      socket.write(request);
      assert.equal((await reader.next()).status, status, request.slice(0, 60));
      await reader.closed();
      socket.destroy();
    }
  });

  test('Connection: close and HTTP/1.0 close after the response; HTTP/1.0 keep-alive stays open', async () => {
    {
      const { socket, reader } = await open(t.port);
      socket.write(get(host, '/a.txt', 'Connection: close\r\n') + get(host, '/a.txt'));
      const res = await reader.next();
      assert.equal(res.headers.connection, 'close');
      await reader.closed();
      assert.equal(reader.unread, 0, 'nothing answered after Connection: close');
      socket.destroy();
    }
    {
      const { socket, reader } = await open(t.port);
      socket.write(`GET /a.txt HTTP/1.0\r\nHost: ${host}\r\n\r\n`);
      assert.equal((await reader.next()).headers.connection, 'close');
      await reader.closed();
      socket.destroy();
    }
    {
      const { socket, reader } = await open(t.port);
      socket.write(`GET /a.txt HTTP/1.0\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
      assert.equal((await reader.next()).headers.connection, 'keep-alive');
      socket.write(`GET /a.txt HTTP/1.0\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
      assert.equal((await reader.next()).body.toString(), 'A');
      socket.destroy();
    }
  });

  test('a client that half-closes still gets every response it asked for, then the server closes', async () => {
    const { socket, reader } = await open(t.port);
    socket.end(get(host, '/a.txt') + get(host, '/'));
    assert.equal((await reader.next()).body.toString(), 'A');
    assert.equal((await reader.next()).body.toString(), page);
    await reader.closed();
  });

  test('a head split across many writes is assembled', async () => {
    const { socket, reader } = await open(t.port);
    for (const ch of get(host, '/a.txt')) {
      socket.write(ch);
      await sleep(1);
    }
    assert.equal((await reader.next()).body.toString(), 'A');
    socket.destroy();
  });

  test('a client that does not read: requests wait, and every byte arrives once it reads', async () => {
    const { socket, reader } = await open(t.port);
    socket.pause();
    const count = 60;
    socket.write(get(host, '/medium.bin').repeat(count));
    await sleep(300);
    socket.resume();
    for (let i = 0; i < count; i++) {
      const res = await reader.next({ timeoutMs: 10_000 });
      assert.equal(res.status, 200);
      assert.ok(res.body.equals(medium), `response ${i} intact`);
    }
    socket.destroy();
  });

  test('files above the memory limit are streamed; the connection is reused after; a client leaving mid-stream is harmless', async () => {
    const { socket, reader } = await open(t.port);
    socket.write(get(host, '/big.bin') + get(host, '/a.txt'));
    const res = await reader.next({ timeoutMs: 10_000 });
    assert.equal(res.status, 200);
    assert.ok(res.body.equals(big));
    assert.equal((await reader.next()).body.toString(), 'A');
    socket.destroy();

    const quitter = await open(t.port);
    quitter.socket.write(get(host, '/big.bin'));
    await new Promise((r) => quitter.socket.once('data', r));
    quitter.socket.destroy();
    const next = await open(t.port);
    next.socket.write(get(host, '/a.txt'));
    assert.equal((await next.reader.next()).body.toString(), 'A');
    next.socket.destroy();
  });

  test('a stored file shorter than its size cuts the connection instead of desynchronising it', async () => {
    const bytes = Buffer.alloc(400 * 1024, 0x5a);
    bytes.write('short-blob');
    const { slug } = await seedSite(t.ctx, { files: { 'short.bin': bytes } });
    await overwriteBlob(t, createHash('sha256').update(bytes).digest('hex'), bytes.subarray(0, 1000));
    const { socket, reader } = await open(t.port);
    socket.write(get(siteHost(slug, t.port), '/short.bin') + get(host, '/a.txt'));
    await reader.closed();
    const text = reader.text();
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.equal(text.split('HTTP/1.1 ').length - 1, 1, 'no response after the cut one');
    assert.ok(text.length < bytes.length, 'the response is visibly incomplete');
    assert.ok(t.logs.some((l) => l.includes('site file stream failed') && l.includes('1000 of 409600')));
  });

  test("node:http's headersTimeout and keepAliveTimeout apply to fast connections", async () => {
    const server = httpServerOf(t.app);
    const saved = { headers: server.headersTimeout, keepAlive: server.keepAliveTimeout };
    server.headersTimeout = 1000;
    server.keepAliveTimeout = 1000;
    try {
      const slow = await open(t.port);
      slow.socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\n`); // never finished
      const timedOut = await slow.reader.next({ timeoutMs: 5000 });
      assert.equal(timedOut.status, 408);
      await slow.reader.closed();

      const idle = await open(t.port);
      idle.socket.write(get(host, '/a.txt'));
      await idle.reader.next();
      const started = Date.now();
      await idle.reader.closed(5000);
      assert.ok(Date.now() - started >= 900, 'not closed before keepAliveTimeout');
    } finally {
      server.headersTimeout = saved.headers;
      server.keepAliveTimeout = saved.keepAlive;
    }
  });
});

describe('site fast path: response memo', { timeout: 60_000 }, () => {
  let t: TestApp;
  const css = 'body { color: #123456; }\n'.repeat(300);
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await t.close();
  });

  const hits = () => fastPathCount(t, 'slipway_site_fast_path_memo_hits_total');

  test('a repeated GET is answered from the memo with the same bytes and headers', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'memo me', 'style.css': css } });
    const host = siteHost(slug, t.port);
    const { socket, reader } = await open(t.port);
    socket.write(get(host, '/'));
    const first = await reader.next();
    const before = await hits();
    socket.write(get(host, '/'));
    const second = await reader.next();
    assert.equal((await hits()) - before, 1);
    assert.equal(second.status, 200);
    assert.equal(second.body.toString(), 'memo me');
    const { date: _d1, ...h1 } = first.headers;
    const { date: _d2, ...h2 } = second.headers;
    assert.deepEqual(h2, h1);
    assert.ok(second.headers.date);
    // The query plays no part in a file's response: cache-busting queries share the entry.
    socket.write(get(host, '/?v=1') + get(host, '/?v=2'));
    assert.equal((await reader.next()).body.toString(), 'memo me');
    assert.equal((await reader.next()).body.toString(), 'memo me');
    assert.equal((await hits()) - before, 3);
    socket.destroy();
  });

  test('a memoized answer keeps nothing of the request that made it (its key is a copy)', async () => {
    // The key is made of slices of the request head's text: stored as made, each entry kept the whole head
    // alive (issue 23: ~400 bytes a site with wrk's heads, several KB with a browser's cookies).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'x', 'style.css': css } });
    const host = siteHost(slug, t.port);
    const { socket, reader } = await open(t.port);
    const N = 200;
    const pad = `X-Pad: ${'p'.repeat(12_000)}\r\n`;
    const memoBytes = async () =>
      Number(/^slipway_site_fast_path_memo_bytes (\d+)/m.exec((await t.api('/metrics')).text)?.[1]);
    const storedBefore = await memoBytes();
    gc();
    const before = process.memoryUsage().heapUsed;
    // N entries: one response under N Accept-Encoding values (each is its own key).
    for (let i = 0; i < N; i++) {
      socket.write(get(host, '/', `Accept-Encoding: identity, x-${i}\r\n${pad}`));
      assert.equal((await reader.next()).status, 200);
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    assert.ok((await memoBytes()) - storedBefore > N * 100, 'every answer was memoized');
    // Measured: ~0.6 MB with the copy (the site's state and ~1.6 KB an entry), ~3.1 MB with the heads kept.
    assert.ok(grown < N * 7_500, `heap grew ${grown} bytes for ${N} entries (their 12 KB heads kept?)`);
    socket.destroy();
  });

  test('Accept-Encoding is part of the key: br, gzip and identity stay apart', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'x', 'style.css': css } });
    const host = siteHost(slug, t.port);
    const { socket, reader } = await open(t.port);
    for (let i = 0; i < 2; i++) {
      socket.write(get(host, '/style.css', 'Accept-Encoding: br\r\n'));
      assert.equal((await reader.next()).headers['content-encoding'], 'br');
      socket.write(get(host, '/style.css', 'Accept-Encoding: gzip\r\n'));
      assert.equal((await reader.next()).headers['content-encoding'], 'gzip');
      socket.write(get(host, '/style.css'));
      const plain = await reader.next();
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.body.toString(), css);
    }
    socket.destroy();
  });

  test('a finalize, a password or an expiry ends memoized answers at once', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'version one' } });
    const host = siteHost(slug, t.port);
    const { socket, reader } = await open(t.port);
    const page = async () => {
      socket.write(get(host, '/'));
      return reader.next();
    };
    await page();
    assert.equal((await page()).body.toString(), 'version one');

    const v2 = await addPendingVersion(t.ctx, slug, { 'index.html': 'version two' });
    assert.equal((await page()).body.toString(), 'version one', 'pending is never served');
    await finalizeVersion(t.ctx, slug, v2);
    assert.equal((await page()).body.toString(), 'version two');
    assert.equal((await page()).body.toString(), 'version two');

    await setMetadata(t.ctx, slug, { expiresAt: t.clock.now() + 60_000 });
    assert.equal((await page()).status, 200);
    assert.equal((await page()).status, 200);
    t.clock.advance(61_000);
    assert.equal((await page()).status, 410, 'expiry needs no event');

    await setMetadata(t.ctx, slug, { expiresAt: null });
    assert.equal((await page()).status, 200);
    await setPassword(t.ctx, slug, 'pw');
    assert.equal((await page()).status, 401);
    socket.destroy();
  });

  test("a change to one site ends its memoized answers, not other sites'", async () => {
    const a = await seedSite(t.ctx, { files: { 'index.html': 'a one' } });
    const b = await seedSite(t.ctx, { files: { 'index.html': 'b one' } });
    const { socket, reader } = await open(t.port);
    const page = async (slug: string) => {
      socket.write(get(siteHost(slug, t.port), '/'));
      return (await reader.next()).body.toString();
    };
    for (const slug of [a.slug, b.slug, a.slug, b.slug]) await page(slug);
    const v2 = await addPendingVersion(t.ctx, a.slug, { 'index.html': 'a two' });
    await finalizeVersion(t.ctx, a.slug, v2);
    const before = await hits();
    assert.equal(await page(b.slug), 'b one');
    assert.equal((await hits()) - before, 1, "b's answer outlives a's publish");
    assert.equal(await page(a.slug), 'a two');
    assert.equal((await hits()) - before, 1, "a's answer ended with its publish");
    assert.equal(await page(a.slug), 'a two');
    assert.equal((await hits()) - before, 2, 'and is memoized again');
    await setPassword(t.ctx, b.slug, 'pw');
    socket.write(get(siteHost(b.slug, t.port), '/'));
    assert.equal((await reader.next()).status, 401);
    socket.destroy();
  });

  test('Range, conditionals and cookies bypass the memo', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': '0123456789' } });
    const host = siteHost(slug, t.port);
    const { socket, reader } = await open(t.port);
    socket.write(get(host, '/') + get(host, '/'));
    const full = await reader.next();
    await reader.next();
    socket.write(get(host, '/', 'Range: bytes=2-4\r\n'));
    const part = await reader.next();
    assert.equal(part.status, 206);
    assert.equal(part.body.toString(), '234');
    socket.write(get(host, '/', `If-None-Match: ${full.headers.etag}\r\n`));
    assert.equal((await reader.next()).status, 304);
    socket.write(get(host, '/', `If-Modified-Since: ${full.headers['last-modified']}\r\n`));
    assert.equal((await reader.next()).status, 304);
    socket.destroy();
  });
});

describe('site fast path: server close and SERVE_FAST_PATH=false', { timeout: 30_000 }, () => {
  test('close ends idle fast connections at once', async () => {
    const t = await startTestApp();
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'hi' } });
    const { socket, reader } = await open(t.port);
    socket.write(get(siteHost(slug, t.port), '/'));
    assert.equal((await reader.next()).status, 200);
    const started = Date.now();
    await t.close();
    await reader.closed(1000);
    assert.ok(Date.now() - started < 1000, `close took ${Date.now() - started} ms`);
  });

  test('a server whose connections are wired differently is left to node:http untouched', () => {
    const server = createServer();
    const extra = () => {};
    server.on('connection', extra);
    const fastPath = installSiteFastPath(server, {
      isSiteHost: () => true,
      handle: () => assert.fail('not installed'),
      generation: () => 0,
      unchangedSince: () => true,
      now: () => 0,
      countResponse: () => {},
    });
    assert.equal(fastPath, null);
    assert.equal(server.listeners('connection').length, 2);
    assert.ok(server.listeners('connection').includes(extra));
  });

  test('with SERVE_FAST_PATH=false a short stored file cuts the connection too', async () => {
    const t = await startTestApp({ SERVE_FAST_PATH: 'false' });
    try {
      const bytes = Buffer.alloc(400 * 1024, 0x5b);
      const { slug } = await seedSite(t.ctx, { files: { 'short.bin': bytes, 'a.txt': 'A' } });
      await overwriteBlob(t, createHash('sha256').update(bytes).digest('hex'), bytes.subarray(0, 1000));
      const { socket, reader } = await open(t.port);
      socket.write(get(siteHost(slug, t.port), '/short.bin') + get(siteHost(slug, t.port), '/a.txt'));
      await reader.closed();
      assert.equal(reader.text().split('HTTP/1.1 ').length - 1, 1, 'no response after the cut one');
      assert.ok(t.logs.some((l) => l.includes('site file stream failed') && l.includes('1000 of 409600')));
    } finally {
      await t.close();
    }
  });

  test('with SERVE_FAST_PATH=false node:http serves sites the same way', async () => {
    const t = await startTestApp({ SERVE_FAST_PATH: 'false' });
    try {
      const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'hi' } });
      const { socket, reader } = await open(t.port);
      socket.write(get(siteHost(slug, t.port), '/') + get(siteHost(slug, t.port), '/'));
      for (let i = 0; i < 2; i++) {
        const res = await reader.next();
        assert.equal(res.status, 200);
        assert.equal(res.body.toString(), 'hi');
      }
      socket.destroy();
      const metrics = (await t.api('/metrics')).text;
      assert.ok(!metrics.includes('slipway_site_fast_path_requests_total'));
    } finally {
      await t.close();
    }
  });
});
