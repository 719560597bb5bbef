// A tiny publish client for benches and crash tests: JSON API calls, upload PUTs (Buffer or streamed
// body) over one keep-alive agent, bounded-parallel upload of a plan, and site fetches by Host header.

import { createHash, randomBytes } from 'node:crypto';
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface ManifestFile {
  path: string;
  size: number;
  contentType: string;
  hash: string;
}

export interface LocalFile extends ManifestFile {
  bytes: Buffer;
}

export interface UploadEntry {
  path: string;
  url: string;
  headers: { 'Content-Type': string };
}

export interface PublishReply {
  slug: string;
  siteUrl: string;
  upload: { versionId: string; uploads: UploadEntry[]; skipped: Array<{ path: string }> };
}

export interface SiteDetails {
  slug: string;
  status: string;
  versionId: string;
  files: ManifestFile[];
  [field: string]: unknown;
}

export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface JsonResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are inspected field by field by the callers.
  body: any;
  text: string;
}

export type RequestBody = Buffer | string | AsyncIterable<Uint8Array>;

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A local file of `size` random bytes with its manifest entry. */
export function randomFile(path: string, size: number, contentType = 'application/octet-stream'): LocalFile {
  const bytes = randomBytes(size);
  return { path, size, contentType, hash: sha256(bytes), bytes };
}

export const manifestOf = (files: LocalFile[]): ManifestFile[] =>
  files.map(({ path, size, contentType, hash }) => ({ path, size, contentType, hash }));

/** Shorter than the service's keepAliveTimeout (node:http's default, 5 s). */
const IDLE_SOCKET_MS = 4_000;

export class Client {
  readonly agent: Agent;

  constructor(
    /** `http://127.0.0.1:<port>` */
    readonly base: string,
    readonly key?: string,
    agent?: Agent,
  ) {
    // Idle sockets close before the server's 5 s keepAliveTimeout does, so a pause between rounds (the
    // other backend's turn) never hands a request a socket the server is closing.
    this.agent = agent ?? new Agent({ keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_MS });
  }

  withKey(key: string | undefined): Client {
    return new Client(this.base, key, this.agent);
  }

  /** An upload or finalize URL from a response (host `localhost`) rewritten onto `base`. */
  local(url: string): string {
    const u = new URL(url);
    return `${this.base}${u.pathname}${u.search}`;
  }

  /** One HTTP request; the body is written whole (Buffer/string) or streamed (async iterable). */
  raw(
    method: string,
    url: string,
    headers: Record<string, string | number> = {},
    body?: RequestBody,
  ): Promise<HttpResult> {
    const whole = body === undefined || typeof body === 'string' || Buffer.isBuffer(body);
    const attempt = (mayRetry: boolean) =>
      new Promise<HttpResult>((resolve, reject) => {
        const req = request(url, { method, headers, agent: this.agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', reject);
        });
        req.on('error', (err: NodeJS.ErrnoException) => {
          // A kept-alive socket the server closed as the request went out (its timers run on time, ours
          // late on a loaded machine): the server never read the request, so sending it again is safe
          // (node:http's documented retry). Seen as "socket hang up" under load 7-14.
          if (mayRetry && req.reusedSocket && err.code === 'ECONNRESET') attempt(false).then(resolve, reject);
          else reject(err);
        });
        if (whole) req.end(body);
        else pipeline(Readable.from(body as AsyncIterable<Uint8Array>), req).catch(reject);
      });
    return attempt(whole);
  }

  async api(method: string, path: string, body?: unknown): Promise<JsonResult> {
    const headers: Record<string, string> = {};
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    let payload: string | undefined;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await this.raw(method, `${this.base}${path}`, headers, payload);
    const text = res.body.toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, text };
  }

  private async expect(status: number, res: JsonResult, what: string): Promise<JsonResult> {
    if (res.status !== status)
      throw new Error(`${what} answered ${res.status} (expected ${status}): ${res.text}`);
    return res;
  }

  async create(files: ManifestFile[]): Promise<PublishReply> {
    return (
      await this.expect(201, await this.api('POST', '/api/v1/publish', { files }), 'POST /api/v1/publish')
    ).body;
  }

  async update(slug: string, files: ManifestFile[]): Promise<PublishReply> {
    const res = await this.api('PUT', `/api/v1/publish/${slug}`, { files });
    return (await this.expect(200, res, `PUT /api/v1/publish/${slug}`)).body;
  }

  finalize(slug: string, versionId: string): Promise<JsonResult> {
    return this.api('POST', `/api/v1/publish/${slug}/finalize`, { versionId });
  }

  async details(slug: string): Promise<SiteDetails> {
    return (
      await this.expect(200, await this.api('GET', `/api/v1/publish/${slug}`), `GET /api/v1/publish/${slug}`)
    ).body;
  }

  /** PUT one upload address (rewritten onto `base`). */
  async put(entry: UploadEntry, body: RequestBody, size: number): Promise<JsonResult> {
    const res = await this.raw(
      'PUT',
      this.local(entry.url),
      { 'content-type': entry.headers['Content-Type'], 'content-length': size },
      body,
    );
    const text = res.body.toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, text };
  }

  /**
   * Uploads every entry with at most `parallel` requests in flight. `stop()` true stops starting new
   * ones. Returns per path the status (or the network error) of the attempts that were made.
   */
  async uploadAll(
    entries: UploadEntry[],
    bytesOf: (path: string) => Buffer,
    parallel: number,
    options: { stop?: () => boolean; onDone?: (path: string, status: number) => void } = {},
  ): Promise<Map<string, number | Error>> {
    const results = new Map<string, number | Error>();
    let next = 0;
    const worker = async () => {
      while (next < entries.length && !options.stop?.()) {
        const entry = entries[next++]!;
        const bytes = bytesOf(entry.path);
        try {
          const res = await this.put(entry, bytes, bytes.length);
          results.set(entry.path, res.status);
          options.onDone?.(entry.path, res.status);
        } catch (err) {
          results.set(entry.path, err as Error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, entries.length) }, worker));
    return results;
  }

  /** GET a path of a site through the site host `<slug>.localhost:<port>`. */
  site(slug: string, path: string): Promise<HttpResult> {
    const port = new URL(this.base).port;
    return this.raw('GET', `${this.base}${path}`, { host: `${slug}.localhost:${port}` });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface FirstByte {
  status: number;
  /** TCP connect, in ms. */
  connectMs: number;
  /** From writing the request to the first byte of the response, in ms. */
  firstByteMs: number;
}

/**
 * `GET <path>` with `Host: <host>` over a fresh connection to `base` (no agent, no keep-alive): how long the
 * connect took and how long the first response byte took after the request was written. The response is
 * read to its end (or 10 s) so the server is idle when this resolves.
 */
export function timeToFirstByte(base: string, host: string, path = '/'): Promise<FirstByte> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let sent = 0;
    let first = 0;
    let head = '';
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      sent = performance.now();
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer from ${host} within 10 s`)));
    socket.on('data', (chunk: Buffer) => {
      if (first === 0) first = performance.now();
      if (head.length < 64) head += chunk.toString('latin1', 0, 64);
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      if (first === 0) reject(new Error(`${host} closed the connection without answering`));
      else resolve({ status, connectMs: sent - t0, firstByteMs: first - sent });
    });
  });
}
