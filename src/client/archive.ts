// `publish --archive`: the files of a folder as one gzip-compressed tar, streamed to the archive endpoint in
// one request (CONTRACT "Archive deploys"). The tar is written here (ustar headers, a pax record for a name
// ustar cannot hold): a file at a time through one reused buffer, so memory does not grow with the folder.

import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { ArchiveReply } from '../api/archive.js';
import { type ApiClient, NetworkError, parseAnswer, request } from './api.js';

const BLOCK = 512;
/**
 * gzip level of `publish --archive`: speed over size. Level 1 compresses about as fast as a CI runner's
 * link sends, where the default level 6 spends several times the CPU for a somewhat smaller body.
 */
export const ARCHIVE_GZIP_LEVEL = 1;
const READ_CHUNK_BYTES = 256 * 1024;

/**
 * A file to pack: its path in the site, its size (the tar header is written first) and its bytes: the file
 * on disk (`abs`), or bytes in memory, or a stream of exactly `size` bytes.
 */
export interface ArchiveFile {
  path: string;
  size: number;
  abs?: string;
  bytes?: Uint8Array;
  body?: () => AsyncIterable<Uint8Array>;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** A ustar header; `name` fits its 100 bytes (longer names go in a pax record before it). */
function header(name: Buffer, size: number, type: '0' | 'x'): Buffer {
  const block = Buffer.alloc(BLOCK);
  name.copy(block, 0, 0, Math.min(name.length, 100));
  block.write(octal(0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  // Sizes past 8 GiB - 1 do not fit 11 octal digits; the service refuses files that large anyway.
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(Math.floor(Date.now() / 1000), 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(type, 156, 'ascii');
  block.write('ustar\u000000', 257, 'latin1');
  let sum = 0;
  for (const b of block) sum += b;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** A pax `path` record: `"<len> path=<name>\n"`, where len counts itself. */
function paxPath(path: string): Buffer {
  const body = ` path=${path}\n`;
  const bytes = Buffer.byteLength(body);
  let length = bytes + 1;
  while (String(length).length + bytes !== length) length = String(length).length + bytes;
  return Buffer.from(`${length}${body}`);
}

/** The tar of `files`, as chunks; a file that changed size since it was listed fails the stream. */
export async function* tarStream(files: ArchiveFile[]): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  for (const file of files) {
    const name = Buffer.from(file.path);
    if (name.length > 100) {
      const pax = paxPath(file.path);
      yield Buffer.concat([header(Buffer.from('PaxHeader'), pax.length, 'x'), pax, padding(pax.length)]);
    }
    yield header(name, file.size, '0');
    if (file.abs === undefined) {
      let sent = 0;
      for await (const chunk of file.body ? file.body() : [file.bytes ?? new Uint8Array(0)]) {
        sent += chunk.length;
        yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
      }
      if (sent !== file.size) throw new Error(`${file.path} has ${sent} bytes, not ${file.size}`);
      yield padding(file.size);
      continue;
    }
    const handle = await open(file.abs, 'r');
    try {
      for (let sent = 0; sent < file.size; ) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, file.size - sent), sent);
        if (bytesRead === 0) throw new Error(`${file.abs} became shorter while it was archived`);
        sent += bytesRead;
        // A copy: the buffer is read into again before gzip is done with the chunk.
        yield Buffer.from(buffer.subarray(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
    yield padding(file.size);
  }
  yield Buffer.alloc(2 * BLOCK);
}

export interface ArchiveDeployOptions {
  /** A new version of this site (needs its owner's key or a deploy token); without it a new site. */
  slug?: string;
  /** Finalize options as query parameters (previews: `live=false`, `alias`). */
  query?: { live?: boolean; alias?: string };
  /** Bytes sent so far (compressed). */
  onProgress?: (sentBytes: number) => void;
}

/**
 * POSTs the gzip of tarStream(files) to the archive endpoint, chunked: one request. An early answer (a
 * refusal mid-upload) ends the upload; the answer or its error body is returned or thrown as by ApiClient.
 */
export async function deployArchive(
  client: ApiClient,
  files: ArchiveFile[],
  options: ArchiveDeployOptions = {},
): Promise<ArchiveReply> {
  const q = new URLSearchParams();
  if (options.query?.live !== undefined) q.set('live', String(options.query.live));
  if (options.query?.alias !== undefined) q.set('alias', options.query.alias);
  const path =
    options.slug === undefined
      ? '/api/v1/publish/archive'
      : `/api/v1/publish/${encodeURIComponent(options.slug)}/archive`;
  const target = new URL(`${client.server}${path}${q.size > 0 ? `?${q}` : ''}`);
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/gzip',
    'transfer-encoding': 'chunked',
  };
  if (client.apiKey) headers.authorization = `Bearer ${client.apiKey}`;
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(target, { method: 'POST', headers });
    let answered = false;
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('error', reject);
      res.once('end', () => {
        answered = true;
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        if (!req.writableFinished) req.destroy();
      });
    });
    let sent = 0;
    const counted = async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        sent += chunk.length;
        options.onProgress?.(sent);
        yield chunk;
      }
    };
    pipeline(Readable.from(tarStream(files)), createGzip({ level: ARCHIVE_GZIP_LEVEL }), counted, req).catch(
      (err: Error) => {
        // The server answered before the whole archive was sent (a refusal): the answer counts.
        if (!answered) setTimeout(() => (answered ? undefined : reject(err)), 1000);
      },
    );
    req.once('error', (err) => {
      if (!answered) setTimeout(() => (answered ? undefined : reject(err)), 1000);
    });
  }).catch((err: unknown) => {
    if (err instanceof Error && /became shorter/.test(err.message)) throw err;
    throw new NetworkError(`cannot send the archive to ${client.server} (${(err as Error).message})`, {
      cause: err,
    });
  });
  return parseAnswer<ArchiveReply>(answer, client.server);
}
