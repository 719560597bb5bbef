// Publishing through the real HTTP API: create (or update) + uploads in parallel + finalize.

import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiResponse, TestApp } from './app.js';

/** A file's bytes, or its bytes with an explicit content type. */
export type FileSpec = string | Buffer | { body: string | Buffer; contentType: string };
export type Files = Record<string, FileSpec>;

export interface ManifestEntry {
  path: string;
  size: number;
  contentType: string;
  hash?: string;
}

export interface PublishOptions {
  /** API key; omitted = anonymous (create only). */
  key?: string;
  /** Send SHA-256 hashes in the manifest (default true). */
  hashes?: boolean;
  viewer?: Record<string, unknown>;
  /** Extra top-level body fields (e.g. baseVersionId). */
  extra?: Record<string, unknown>;
  /** Skip the finalize step. */
  finalize?: boolean;
}

export interface PublishOutcome {
  /** The create (POST) or update (PUT) response. */
  create: ApiResponse;
  uploads: UploadResponse[];
  /** Undefined when create failed or `finalize: false`. */
  finalize: ApiResponse | undefined;
  slug: string;
  versionId: string;
}

export interface UploadResponse {
  path: string;
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field.
  body: any;
  text: string;
}

export const sha256 = (buf: Buffer | string): string => createHash('sha256').update(buf).digest('hex');

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css',
  js: 'text/javascript',
  json: 'application/json',
  txt: 'text/plain',
  png: 'image/png',
  jpg: 'image/jpeg',
  svg: 'image/svg+xml',
};

export function bytesOf(spec: FileSpec): Buffer {
  const body = typeof spec === 'string' || Buffer.isBuffer(spec) ? spec : spec.body;
  return Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
}

export function contentTypeOf(path: string, spec: FileSpec): string {
  if (typeof spec === 'object' && !Buffer.isBuffer(spec)) return spec.contentType;
  const ext = path.includes('.') ? path.slice(path.lastIndexOf('.') + 1).toLowerCase() : '';
  return TYPES[ext] ?? 'text/plain';
}

export function manifestOf(files: Files, opts: { hashes?: boolean } = {}): ManifestEntry[] {
  return Object.entries(files).map(([path, spec]) => {
    const bytes = bytesOf(spec);
    const entry: ManifestEntry = { path, size: bytes.length, contentType: contentTypeOf(path, spec) };
    if (opts.hashes ?? true) entry.hash = sha256(bytes);
    return entry;
  });
}

/** An upload address as the API gave it, pointed at the IPv4 loopback the test server listens on. */
export const reachable = (url: string): string => url.replace('//localhost:', '//127.0.0.1:');

/** PUT bytes to an upload address. */
export async function putUpload(
  url: string,
  body: Buffer | string,
  contentType: string | undefined,
  path = '',
): Promise<UploadResponse> {
  const headers: Record<string, string> = {};
  if (contentType !== undefined) headers['content-type'] = contentType;
  const res = await fetch(reachable(url), { method: 'PUT', headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { path, status: res.status, headers: res.headers, body: parsed, text };
}

/** Uploads every entry of a create/update response's `upload.uploads` (in parallel). */
export function uploadAll(
  // biome-ignore lint/suspicious/noExplicitAny: the response body as parsed JSON.
  createBody: any,
  files: Files,
): Promise<UploadResponse[]> {
  const entries = (createBody?.upload?.uploads ?? []) as Array<{
    path: string;
    url: string;
    headers: Record<string, string>;
  }>;
  return Promise.all(
    entries.map((u) => {
      const spec = files[u.path];
      if (spec === undefined) throw new Error(`upload entry for unknown path ${u.path}`);
      return putUpload(u.url, bytesOf(spec), u.headers['Content-Type'], u.path);
    }),
  );
}

async function finish(
  t: TestApp,
  create: ApiResponse,
  files: Files,
  opts: PublishOptions,
): Promise<PublishOutcome> {
  const ok = create.status >= 200 && create.status < 300;
  const slug: string = ok ? create.body.slug : '';
  const versionId: string = ok ? create.body.upload.versionId : '';
  if (!ok) return { create, uploads: [], finalize: undefined, slug, versionId };
  const uploads = await uploadAll(create.body, files);
  let finalize: ApiResponse | undefined;
  if (opts.finalize ?? true) {
    finalize = await t.api(`/api/v1/publish/${slug}/finalize`, {
      method: 'POST',
      body: { versionId },
      ...(opts.key ? { key: opts.key } : {}),
    });
  }
  return { create, uploads, finalize, slug, versionId };
}

function bodyOf(files: Files, opts: PublishOptions): Record<string, unknown> {
  return {
    files: manifestOf(files, { hashes: opts.hashes ?? true }),
    ...(opts.viewer ? { viewer: opts.viewer } : {}),
    ...opts.extra,
  };
}

/** POST /api/v1/publish, upload every file, finalize. Returns every response. */
export async function publish(t: TestApp, files: Files, opts: PublishOptions = {}): Promise<PublishOutcome> {
  const create = await t.api('/api/v1/publish', {
    method: 'POST',
    body: bodyOf(files, opts),
    ...(opts.key ? { key: opts.key } : {}),
  });
  return finish(t, create, files, opts);
}

/** PUT /api/v1/publish/:slug, upload what is asked for, finalize. */
export async function update(
  t: TestApp,
  key: string,
  slug: string,
  files: Files,
  opts: Omit<PublishOptions, 'key'> = {},
): Promise<PublishOutcome> {
  const res = await t.api(`/api/v1/publish/${slug}`, { method: 'PUT', body: bodyOf(files, opts), key });
  return finish(t, res, files, { ...opts, key });
}

/** Like publish/update but throws unless every step answered 2xx (for fixtures). */
export function assertPublished(out: PublishOutcome): PublishOutcome {
  const bad = [out.create, ...out.uploads, ...(out.finalize ? [out.finalize] : [])].find(
    (r) => r.status < 200 || r.status >= 300,
  );
  if (bad) throw new Error(`publish step failed with ${bad.status}: ${bad.text}`);
  return out;
}

/**
 * What the blob store holds: on local disk every regular file under `<dataDir>/blobs` except the temp
 * folder (so a stray copy is noticed too); on other stores the hashes it lists.
 */
export async function storedBlobs(t: TestApp): Promise<string[]> {
  const blobs = t.ctx.config.blobs;
  if (blobs.provider !== 'disk') {
    const out: string[] = [];
    for await (const hash of t.ctx.blobs.list()) out.push(hash);
    return out.sort();
  }
  const out: string[] = [];
  const walk = async (dir: string, rel: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (rel === '' && e.name === 'tmp') continue;
      if (e.isDirectory()) await walk(join(dir, e.name), `${rel}${e.name}/`);
      else out.push(`${rel}${e.name}`);
    }
  };
  await walk(join(blobs.dir, 'blobs'), '');
  return out.sort();
}

/** Temp files of the local-disk blob store (null on other stores). */
export async function blobTempFiles(t: TestApp): Promise<string[] | null> {
  const blobs = t.ctx.config.blobs;
  if (blobs.provider !== 'disk') return null;
  return readdir(join(blobs.dir, 'blobs', 'tmp')).catch(() => []);
}
